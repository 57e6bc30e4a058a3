/*
 * dma32-demo: a bus-master PCI device with a limited DMA address width
 *
 * The device runs a ring of descriptors in guest memory (FILL, CHECKSUM,
 * COPY) and can only address 2^dma-bits bytes of data and 2^ring-bits
 * bytes of ring.  A transfer whose range reaches past the limit is not
 * performed at all: the descriptor completes with an address-fault status,
 * the faulting address is latched and an error interrupt is raised.  With
 * overflow=truncate the device instead drops the upper address bits, as
 * broken hardware does.
 *
 * The register ABI lives in dma32-demo-regs.h, shared with the Linux
 * driver.  The specification is docs/specs/dma32-demo.rst.
 *
 * PCI ID: 1af4:10f3 lies in 1af4:10f0..10ff, which docs/specs/pci-ids.txt
 * leaves to experimental use without registration and which "must get
 * official ID" before an upstream merge.  Upstream, the device would need
 * a QEMU-specific 1b36:00xx ID (registered in docs/specs/pci-ids.txt and
 * include/hw/pci/pci.h, as pci-testdev's 1b36:0005 is), its spec in
 * docs/specs/index.rst's toctree and a MAINTAINERS entry.
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/main-loop.h"
#include "qemu/crc32c.h"
#include "qapi/error.h"
#include "qapi/util.h"
#include "qapi/visitor.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "sysemu/dma.h"
#include "sysemu/runstate.h"
#include "trace.h"
#include "hw/misc/dma32-demo-regs.h"

#define TYPE_DMA32_DEMO "dma32-demo"
OBJECT_DECLARE_SIMPLE_TYPE(DMA32DemoState, DMA32_DEMO)

/* The descriptor layout of the header, as the device reads and writes it */
QEMU_BUILD_BUG_ON(sizeof(struct dma32_demo_desc) != DMA32_DEMO_DESC_SIZE);
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, op) != 0);
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, len) != 4);
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, src) != 8);
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, dst) != 16);
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, seed) != 24);
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, status) !=
                  DMA32_DEMO_DESC_STATUS_OFF);
/* the write-back: result and fault_addr, 12 bytes after the status word */
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, result) !=
                  DMA32_DEMO_DESC_STATUS_OFF + 4);
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, fault_addr) !=
                  DMA32_DEMO_DESC_STATUS_OFF + 8);
QEMU_BUILD_BUG_ON(offsetof(struct dma32_demo_desc, reserved) != 48);

/* Descriptors the device accepts in one ring (FAULT_INFO index is 16 bit) */
#define DMA32_DEMO_MAX_RING_ENTRIES     4096

/*
 * Work done by one bottom-half run before it yields to the main loop, so
 * that a run holds the BQL for a bounded time: at most 64 descriptors and
 * a budget of 64 Mi units of cost, a unit being about the host's time to
 * copy one byte from RAM to RAM (a whole run: a 64 MiB memmove, a few
 * ms).  Each byte costs what moving it takes, as qemu-device/bench-copy
 * measures it against COPY: COPY between RAM, in place (memmove) 1; FILL
 * into RAM, in place 2; CHECKSUM of RAM, in place (util/crc32c's table
 * loop) 64; a byte through the bounce buffer (MMIO, IOMMU misses, which
 * the memory core dispatches in accesses of at most 8 bytes) 256, plus 64
 * for a CHECKSUM: one run bounces at most 256 KiB.
 * A descriptor larger than what is left stops where the budget ends and
 * resumes in the next run.  A descriptor that fails before it moves a
 * byte costs nothing: the 64 descriptors bound those.
 */
#define DMA32_DEMO_BH_MAX_DESCS         64
#define DMA32_DEMO_BH_BUDGET            (64 * MiB)
#define DMA32_DEMO_COST_COPY            1
#define DMA32_DEMO_COST_FILL            2
#define DMA32_DEMO_COST_CRC             64
#define DMA32_DEMO_COST_BOUNCE          256
/* the most a byte costs: a run goes on while that much is left */
#define DMA32_DEMO_COST_MAX     (DMA32_DEMO_COST_BOUNCE + DMA32_DEMO_COST_CRC)

/* Bounce buffer for memory that cannot be mapped (MMIO, IOMMU misses) */
#define DMA32_DEMO_BOUNCE_SIZE          (64 * KiB)

enum {
    DMA32_DEMO_CNT_COMPLETED,
    DMA32_DEMO_CNT_BYTES_READ,
    DMA32_DEMO_CNT_BYTES_WRITTEN,
    DMA32_DEMO_CNT_ADDR_FAULTS,
    DMA32_DEMO_CNT_BUS_ERRORS,
    DMA32_DEMO_CNT_INVALID,
};

enum {
    DMA32_DEMO_OVERFLOW_FAULT,
    DMA32_DEMO_OVERFLOW_TRUNCATE,
};

struct DMA32DemoState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    QEMUBH *bh;
    VMChangeStateEntry *vmse;
    bool busy;                  /* reentrancy guard (DMA/MSI into our BAR) */
    /*
     * Bumped by reset and unrealize.  A DMA or MSI write of the bottom
     * half can reach a register that resets the device or unplugs it (a
     * bridge's Secondary Bus Reset, a root port's Slot Control), so the
     * bottom half compares it after each access and stops when it moved.
     */
    uint32_t gen;
    /*
     * Set by unrealize.  The object outlives it while a FlatView still
     * holds the BAR: another bus master's access that was dispatched
     * through such a stale view (its own write unplugged us, through our
     * MSI) reaches our MMIO callbacks after config space and the bus are
     * gone.  They answer with a decode error, as an absent target does.
     */
    bool unrealized;

    /* Properties */
    uint8_t dma_bits;
    uint8_t ring_bits;
    int overflow;
    uint64_t max_xfer;

    /* Guest visible state (migrated) */
    uint32_t ctrl;
    uint32_t int_status;
    uint32_t int_mask;
    uint64_t ring_base;
    uint32_t ring_size;
    uint32_t head;
    uint32_t tail;
    bool halted;
    bool stalled;
    bool inject_bus_error;
    uint64_t fault_addr;
    uint32_t fault_info;
    uint64_t cnt[DMA32_DEMO_NR_COUNTERS];
    uint64_t cnt_snap[DMA32_DEMO_NR_COUNTERS];

    /*
     * The descriptor at HEAD while it is under way, which may take several
     * bottom-half runs (migrated in a subsection while active)
     */
    bool cur_active;
    uint32_t cur_op;
    uint32_t cur_len;
    uint64_t cur_src;
    uint64_t cur_dst;
    uint64_t cur_seed;
    uint64_t cur_off;           /* bytes done */
    uint32_t cur_crc;           /* CHECKSUM so far, not inverted */

    /*
     * Bounce buffer for memory that cannot be mapped (MMIO, IOMMU misses).
     * Part of the state, not a separate allocation: a DMA write that
     * unplugs the device is still reading it when unrealize runs, and the
     * bottom half holds a reference to the state across its run.
     */
    uint8_t bounce[DMA32_DEMO_BOUNCE_SIZE];
};

/* Result of one descriptor */
typedef struct DMA32DemoDone {
    uint32_t status;
    uint32_t result;
    uint32_t source;            /* DMA32_DEMO_FAULT_SRC_* on error */
    uint64_t fault_addr;
    uint32_t gen;               /* DMA32DemoState.gen when it started */
    bool gone;                  /* reset or unplugged under it: abandon */
} DMA32DemoDone;

static const char *const dma32_demo_counter_names[DMA32_DEMO_NR_COUNTERS] = {
    [DMA32_DEMO_CNT_COMPLETED] = "descs-completed",
    [DMA32_DEMO_CNT_BYTES_READ] = "bytes-read",
    [DMA32_DEMO_CNT_BYTES_WRITTEN] = "bytes-written",
    [DMA32_DEMO_CNT_ADDR_FAULTS] = "addr-faults",
    [DMA32_DEMO_CNT_BUS_ERRORS] = "bus-errors",
    [DMA32_DEMO_CNT_INVALID] = "invalid-descs",
};

/*
 * CRC-32C of @len bytes continuing @crc, not inverted: util/crc32c's
 * crc32c() returns the final (inverted) value, and takes an unsigned int
 * length.
 */
static uint32_t dma32_demo_crc32c(uint32_t crc, const uint8_t *buf,
                                  uint64_t len)
{
    while (len) {
        unsigned int n = MIN(len, 1u << 30);

        crc = ~crc32c(crc, buf, n);
        buf += n;
        len -= n;
    }
    return crc;
}

/* FILL pattern for bytes [off, off + len) of a buffer */
static void dma32_demo_pattern(uint8_t *buf, uint64_t seed, uint64_t off,
                               uint64_t len)
{
    while (len && (off & 7)) {
        *buf++ = dma32_demo_pattern_word(seed, off / 8) >> ((off & 7) * 8);
        off++;
        len--;
    }
    while (len >= 8) {
        stq_le_p(buf, dma32_demo_pattern_word(seed, off / 8));
        buf += 8;
        off += 8;
        len -= 8;
    }
    if (len) {
        uint64_t w = dma32_demo_pattern_word(seed, off / 8);

        while (len--) {
            *buf++ = w;
            w >>= 8;
        }
    }
}

/* Address checks */

static uint64_t dma32_demo_mask(unsigned bits)
{
    return bits >= 64 ? UINT64_MAX : (1ULL << bits) - 1;
}

/* Does [addr, addr + len) lie below 2^bits, without wrapping past 2^64? */
static bool dma32_demo_range_ok(uint64_t addr, uint64_t len, unsigned bits)
{
    uint64_t last;

    if (!len) {
        return true;
    }
    last = addr + (len - 1);
    if (last < addr) {
        return false;
    }
    return (last & ~dma32_demo_mask(bits)) == 0;
}

/*
 * Bus address and length of the next piece of [addr, addr + len): with
 * overflow=truncate the upper bits are dropped and a piece never crosses
 * 2^bits, so a range that reaches past the limit wraps to 0 byte by byte.
 */
static uint64_t dma32_demo_piece(DMA32DemoState *s, uint64_t addr,
                                 uint64_t len, unsigned bits, uint64_t *bus)
{
    uint64_t mask = dma32_demo_mask(bits);
    uint64_t room;

    if (s->overflow == DMA32_DEMO_OVERFLOW_FAULT) {
        *bus = addr;
        return len;
    }
    *bus = addr & mask;
    room = mask - *bus;         /* bytes after the first one */
    return room >= len - 1 ? len : room + 1;
}

/* Interrupts */

static void dma32_demo_update_irq(DMA32DemoState *s, uint32_t new_causes)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    bool msi = msi_enabled(pdev);

    if (new_causes & s->int_mask) {
        trace_dma32_demo_irq(s->int_status, s->int_mask, msi);
    }
    /* With MSI, INTx stays low and each new unmasked cause is a message */
    pci_set_irq(pdev, !msi && (s->int_status & s->int_mask));
    if (msi && (new_causes & s->int_mask)) {
        msi_notify(pdev, 0);
    }
}

static void dma32_demo_raise(DMA32DemoState *s, uint32_t causes)
{
    uint32_t new_causes = causes & ~s->int_status;

    s->int_status |= causes;
    dma32_demo_update_irq(s, new_causes);
}

/* Faults */

static void dma32_demo_latch_fault(DMA32DemoState *s, uint32_t status,
                                   uint32_t source, uint32_t idx,
                                   uint64_t addr)
{
    static const char *const what[] = {
        [DMA32_DEMO_ST_ADDR_FAULT] = "address fault",
        [DMA32_DEMO_ST_BUS_ERROR] = "bus error",
        [DMA32_DEMO_ST_INVALID] = "invalid descriptor or ring",
    };

    trace_dma32_demo_fault(status, source, idx, addr);
    qemu_log_mask(LOG_GUEST_ERROR, "%s: %s, source %u, index %u, "
                  "address 0x%" PRIx64 "\n", TYPE_DMA32_DEMO,
                  status < ARRAY_SIZE(what) && what[status] ?
                  what[status] : "error", source, idx, addr);
    s->fault_addr = addr;
    s->fault_info = (status & 0xff) | (source & 0xff) << 8 |
                    (idx & 0xffff) << 16;
    switch (status) {
    case DMA32_DEMO_ST_ADDR_FAULT:
        s->cnt[DMA32_DEMO_CNT_ADDR_FAULTS]++;
        break;
    case DMA32_DEMO_ST_BUS_ERROR:
        s->cnt[DMA32_DEMO_CNT_BUS_ERRORS]++;
        break;
    default:
        s->cnt[DMA32_DEMO_CNT_INVALID]++;
        break;
    }
}

/* A ring error halts the ring until it is reprogrammed or reset */
static void dma32_demo_ring_error(DMA32DemoState *s, uint32_t status,
                                  uint64_t addr)
{
    dma32_demo_latch_fault(s, status, DMA32_DEMO_FAULT_SRC_RING, s->head,
                           addr);
    s->halted = true;
    dma32_demo_raise(s, DMA32_DEMO_INT_ERROR);
}

/* Data movement */

/*
 * Did the access just made reset or unrealize the device?  Then the
 * descriptor is abandoned: no further access, no completion, no interrupt.
 */
static bool dma32_demo_stale(DMA32DemoState *s, DMA32DemoDone *d)
{
    if (s->gen != d->gen) {
        d->gone = true;
    }
    return d->gone;
}

/*
 * One side of a piece of a transfer: the source, which the device reads,
 * or the destination, which it writes
 */
typedef struct DMA32DemoPiece {
    uint64_t bus;               /* bus address */
    bool is_write;              /* the destination */
    AddressSpace *as;           /* to access; any IOMMU already applied */
    hwaddr addr;                /* in @as */
    uint64_t len;               /* inside one memory region section */
    bool direct;                /* RAM: map it and work in place */
    void *ptr;                  /* where it is mapped, or NULL */
} DMA32DemoPiece;

static DMADirection dma32_demo_dir(DMA32DemoPiece *pc)
{
    return pc->is_write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE;
}

/*
 * Resolve the piece at @pc->bus, at most @len bytes, for reading or
 * writing: clamp it to the memory region section it starts in, and to
 * the IOMMU page, translating it at most once (an IOMMU records a fault
 * for every failed translation, so a failing piece must not be translated
 * twice).  A hole, or a translation the IOMMU refuses, is a bus error at
 * @pc->bus, with nothing accessed.  A translation is DMA too: an IOMMU
 * may write a fault record and send an interrupt while it translates, and
 * that write may reset or unplug the device.  Then @d->gone is set and
 * the caller must stop without touching anything, even to report the
 * error.
 */
static MemTxResult dma32_demo_resolve(DMA32DemoState *s, DMA32DemoDone *d,
                                      uint64_t len, DMA32DemoPiece *pc)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    hwaddr addr = pc->bus;
    bool is_write = pc->is_write;
    bool translated = false;

    for (;;) {
        MemoryRegionSection sec;
        IOMMUMemoryRegion *iommu;
        IOMMUTLBEntry e;
        uint64_t off;

        sec = memory_region_find(as->root, addr, len);
        if (!sec.mr) {
            return MEMTX_DECODE_ERROR;
        }
        iommu = memory_region_get_iommu(sec.mr);
        pc->direct = memory_access_is_direct(sec.mr, is_write);
        memory_region_unref(sec.mr);
        if (sec.offset_within_address_space != addr) {
            /* a hole first, then the section found */
            return MEMTX_DECODE_ERROR;
        }
        len = MIN(len, int128_get64(sec.size));
        if (!iommu) {
            break;
        }
        if (translated) {
            /* the IOMMU's output is another IOMMU: not a DMA target */
            return MEMTX_DECODE_ERROR;
        }
        e = address_space_get_iotlb_entry(as, addr, is_write,
                                          MEMTXATTRS_UNSPECIFIED);
        if (dma32_demo_stale(s, d)) {
            return MEMTX_ERROR;
        }
        if (!(e.perm & (is_write ? IOMMU_WO : IOMMU_RO))) {
            return MEMTX_ERROR;
        }
        off = addr & e.addr_mask;
        if (e.addr_mask - off < len - 1) {
            len = e.addr_mask - off + 1;
        }
        as = e.target_as;
        addr = (e.translated_addr & ~e.addr_mask) | off;
        translated = true;
    }
    pc->as = as;
    pc->addr = addr;
    pc->len = len;
    return MEMTX_OK;
}

/*
 * Map the first *@len bytes of a direct piece, and cut *@len to what
 * mapped; false if nothing did (then the caller bounces)
 */
static bool dma32_demo_map(DMA32DemoPiece *pc, uint64_t *len)
{
    dma_addr_t l = *len;

    if (!pc->direct) {
        return false;
    }
    pc->ptr = dma_memory_map(pc->as, pc->addr, &l, dma32_demo_dir(pc),
                             MEMTXATTRS_UNSPECIFIED);
    if (pc->ptr && !l) {
        dma_memory_unmap(pc->as, pc->ptr, l, dma32_demo_dir(pc), 0);
        pc->ptr = NULL;
    }
    if (pc->ptr) {
        pc->len = *len = l;
    }
    return pc->ptr;
}

/* Unmap a piece if it is mapped, @done bytes of it accessed */
static void dma32_demo_unmap(DMA32DemoPiece *pc, uint64_t done)
{
    if (pc->ptr) {
        dma_memory_unmap(pc->as, pc->ptr, pc->len, dma32_demo_dir(pc), done);
        pc->ptr = NULL;
    }
}

/*
 * Record a failed bus access in PCI_STATUS as a bus master does: nothing
 * decoded the address (a hole) is a received master abort; a target that
 * refused it (our own BAR, an IOMMU, an injected error) a received target
 * abort.  The bits are write-1-to-clear, kept by CTRL.RESET and cleared by
 * PCI reset.
 */
static void dma32_demo_pci_abort(DMA32DemoState *s, MemTxResult r)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    pci_word_test_and_set_mask(pdev->config + PCI_STATUS,
                               r & MEMTX_DECODE_ERROR ?
                               PCI_STATUS_REC_MASTER_ABORT :
                               PCI_STATUS_REC_TARGET_ABORT);
}

/*
 * After resolving or accessing a piece with result @r: may the descriptor
 * go on?  Not if the device went away under the access (@d->gone), nor
 * after a failure, which is a bus error at the piece's bus address (in
 * @d).
 */
static bool dma32_demo_access_ok(DMA32DemoState *s, DMA32DemoDone *d,
                                 MemTxResult r, DMA32DemoPiece *pc)
{
    if (d->gone) {
        return false;
    }
    if (r != MEMTX_OK) {
        dma32_demo_pci_abort(s, r);
        d->status = DMA32_DEMO_ST_BUS_ERROR;
        d->source = pc->is_write ? DMA32_DEMO_FAULT_SRC_DST :
                                   DMA32_DEMO_FAULT_SRC_SRC;
        d->fault_addr = pc->bus;
        return false;
    }
    return true;
}

/* Count @n bytes moved to or from a piece */
static void dma32_demo_moved(DMA32DemoState *s, DMA32DemoPiece *pc,
                             uint64_t n)
{
    s->cnt[pc->is_write ? DMA32_DEMO_CNT_BYTES_WRITTEN :
                          DMA32_DEMO_CNT_BYTES_READ] += n;
}

/*
 * Bounced access to the first @n bytes of a piece: the source into the
 * bounce buffer, or the bounce buffer to the destination.  False when the
 * descriptor stops there (dma32_demo_access_ok()).
 */
static bool dma32_demo_bounce(DMA32DemoState *s, DMA32DemoDone *d,
                              DMA32DemoPiece *pc, uint64_t n)
{
    MemTxResult r;

    trace_dma32_demo_dma(pc->bus, n, pc->is_write, 0);
    r = dma_memory_rw(pc->as, pc->addr, s->bounce, n, dma32_demo_dir(pc),
                      MEMTXATTRS_UNSPECIFIED);
    /* The access may have reset or unplugged the device */
    dma32_demo_stale(s, d);
    if (!dma32_demo_access_ok(s, d, r, pc)) {
        return false;
    }
    dma32_demo_moved(s, pc, n);
    return true;
}

/*
 * What an operation does to @n bytes of a piece at @off in the descriptor,
 * after its source is read and before its destination is written: @src
 * and @dst are mapped RAM, or both the bounce buffer.
 */
static void dma32_demo_work(DMA32DemoState *s, uint8_t *dst,
                            const uint8_t *src, uint64_t off, uint64_t n)
{
    switch (s->cur_op) {
    case DMA32_DEMO_OP_FILL:
        /* Device -> memory: the pattern */
        dma32_demo_pattern(dst, s->cur_seed, off, n);
        break;
    case DMA32_DEMO_OP_CHECKSUM:
        /* Memory -> device: CRC-32C, kept in cur_crc between runs */
        s->cur_crc = dma32_demo_crc32c(s->cur_crc, src, n);
        break;
    default:
        /*
         * Memory -> memory, in ascending order (overlap gives unspecified
         * data); bounced, the read left the bytes where the write takes
         * them from
         */
        if (dst != src) {
            memmove(dst, src, n);
        }
        break;
    }
}

/* A byte's cost by operation: in place, and through the bounce buffer */
static const unsigned dma32_demo_cost[][2] = {
    [DMA32_DEMO_OP_FILL] = { DMA32_DEMO_COST_FILL, DMA32_DEMO_COST_BOUNCE },
    [DMA32_DEMO_OP_CHECKSUM] = { DMA32_DEMO_COST_CRC, DMA32_DEMO_COST_MAX },
    [DMA32_DEMO_OP_COPY] = { DMA32_DEMO_COST_COPY, DMA32_DEMO_COST_BOUNCE },
};

/*
 * Continue the current descriptor from cur_off, piece by piece, until it
 * is done, an access fails (the error in @d), the device went away under
 * an access (@d->gone), or *@budget runs out: then cur_off says where the
 * next bottom-half run resumes.  The sides of a piece are its source
 * (pc[0], which CHECKSUM and COPY read) and its destination (pc[1], which
 * FILL and COPY write).  A piece is what each side used reaches within
 * one memory region section and IOMMU page, and what the budget pays for.
 * Every side is resolved before anything moves; then the piece is read,
 * worked on and written, in place when every side maps (RAM), else
 * through the bounce buffer.
 */
static void dma32_demo_execute(DMA32DemoState *s, uint64_t *budget,
                               DMA32DemoDone *d)
{
    const uint64_t start[2] = { s->cur_src, s->cur_dst };
    const bool uses[2] = { s->cur_op != DMA32_DEMO_OP_FILL,
                           s->cur_op != DMA32_DEMO_OP_CHECKSUM };
    const unsigned *cost = dma32_demo_cost[s->cur_op];

    while (s->cur_off < s->cur_len && *budget >= DMA32_DEMO_COST_MAX) {
        uint64_t off = s->cur_off, n = s->cur_len - off;
        DMA32DemoPiece pc[2] = { { .is_write = false }, { .is_write = true } };
        bool direct = true;
        MemTxResult r;
        int i;

        for (i = 0; i < 2; i++) {
            if (uses[i]) {
                n = dma32_demo_piece(s, start[i] + off, n, s->dma_bits,
                                     &pc[i].bus);
            }
        }
        n = MIN(n, *budget / cost[0]);
        /* an injected bus error fails the piece's first side */
        r = s->inject_bus_error ? MEMTX_ERROR : MEMTX_OK;
        s->inject_bus_error = false;
        for (i = 0; i < 2; i++) {
            if (!uses[i]) {
                continue;
            }
            if (r == MEMTX_OK) {
                r = dma32_demo_resolve(s, d, n, &pc[i]);
            }
            if (!dma32_demo_access_ok(s, d, r, &pc[i])) {
                return;
            }
            n = pc[i].len;      /* the next side covers the same bytes */
        }
        for (i = 0; i < 2 && direct; i++) {
            direct = !uses[i] || dma32_demo_map(&pc[i], &n);
        }

        if (direct) {
            dma32_demo_work(s, pc[1].ptr, pc[0].ptr, off, n);
            *budget -= n * cost[0];
        } else {
            /* the source may have mapped: nothing was read through it */
            dma32_demo_unmap(&pc[0], 0);
            n = MIN(MIN(n, DMA32_DEMO_BOUNCE_SIZE), *budget / cost[1]);
            if (uses[0] && !dma32_demo_bounce(s, d, &pc[0], n)) {
                return;
            }
            dma32_demo_work(s, s->bounce, s->bounce, off, n);
            if (uses[1] && !dma32_demo_bounce(s, d, &pc[1], n)) {
                return;
            }
            *budget -= n * cost[1];
        }
        for (i = 0; i < 2; i++) {
            if (pc[i].ptr) {
                trace_dma32_demo_dma(pc[i].bus, n, pc[i].is_write, 1);
                dma32_demo_unmap(&pc[i], n);
                dma32_demo_moved(s, &pc[i], n);
            }
        }
        s->cur_off += n;
    }
}

/*
 * Check the current descriptor's source and destination, those its
 * operation uses, against dma-bits before touching anything: the first
 * out of range is an address fault (in @d)
 */
static bool dma32_demo_check_data(DMA32DemoState *s, DMA32DemoDone *d)
{
    bool src_ok = s->cur_op == DMA32_DEMO_OP_FILL ||
                  dma32_demo_range_ok(s->cur_src, s->cur_len, s->dma_bits);
    bool dst_ok = s->cur_op == DMA32_DEMO_OP_CHECKSUM ||
                  dma32_demo_range_ok(s->cur_dst, s->cur_len, s->dma_bits);

    if (s->overflow == DMA32_DEMO_OVERFLOW_TRUNCATE || (src_ok && dst_ok)) {
        return true;
    }
    d->status = DMA32_DEMO_ST_ADDR_FAULT;
    d->source = src_ok ? DMA32_DEMO_FAULT_SRC_DST : DMA32_DEMO_FAULT_SRC_SRC;
    d->fault_addr = src_ok ? s->cur_dst : s->cur_src;
    return false;
}

/* Ring */

static bool dma32_demo_ring_programmed(DMA32DemoState *s)
{
    return s->ring_size && s->ring_size <= DMA32_DEMO_MAX_RING_ENTRIES &&
           is_power_of_2(s->ring_size) &&
           !(s->ring_base & (DMA32_DEMO_DESC_SIZE - 1));
}

static bool dma32_demo_can_run(DMA32DemoState *s)
{
    return (s->ctrl & DMA32_DEMO_CTRL_ENABLE) && !s->halted &&
           !s->stalled && s->head != s->tail && runstate_is_running();
}

static uint64_t dma32_demo_desc_bus(DMA32DemoState *s, uint64_t *addr)
{
    uint64_t bus;

    *addr = s->ring_base + (uint64_t)s->head * DMA32_DEMO_DESC_SIZE;
    dma32_demo_piece(s, *addr, DMA32_DEMO_DESC_SIZE, s->ring_bits, &bus);
    return bus;
}

/*
 * Fetch and check the descriptor at HEAD (@addr, at @bus on the bus).  A
 * well-formed one in range becomes the current descriptor (cur_active); a
 * malformed or out-of-range one leaves its error in @d, to be completed at
 * once.  False when the ring halted, or when the device was reset or
 * unplugged by the fetch.
 */
static bool dma32_demo_fetch(DMA32DemoState *s, uint64_t addr, uint64_t bus,
                             DMA32DemoDone *d)
{
    uint8_t raw[DMA32_DEMO_DESC_SIZE];
    MemTxResult r;

    if (s->overflow == DMA32_DEMO_OVERFLOW_FAULT &&
        !dma32_demo_range_ok(addr, DMA32_DEMO_DESC_SIZE, s->ring_bits)) {
        dma32_demo_ring_error(s, DMA32_DEMO_ST_ADDR_FAULT, addr);
        return false;
    }
    r = pci_dma_read(PCI_DEVICE(s), bus, raw, sizeof(raw));
    if (dma32_demo_stale(s, d)) {
        return false;
    }
    if (r != MEMTX_OK) {
        dma32_demo_pci_abort(s, r);
        dma32_demo_ring_error(s, DMA32_DEMO_ST_BUS_ERROR, bus);
        return false;
    }

    /* cur_* mean nothing until cur_active is set */
    s->cur_op = ldl_le_p(raw + offsetof(struct dma32_demo_desc, op));
    s->cur_len = ldl_le_p(raw + offsetof(struct dma32_demo_desc, len));
    s->cur_src = ldq_le_p(raw + offsetof(struct dma32_demo_desc, src));
    s->cur_dst = ldq_le_p(raw + offsetof(struct dma32_demo_desc, dst));
    s->cur_seed = ldq_le_p(raw + offsetof(struct dma32_demo_desc, seed));
    s->cur_off = 0;
    s->cur_crc = ~0u;
    trace_dma32_demo_desc(s->head, s->cur_op, s->cur_len, s->cur_src,
                          s->cur_dst);

    if (s->cur_op < DMA32_DEMO_OP_FILL || s->cur_op > DMA32_DEMO_OP_COPY ||
        !s->cur_len || s->cur_len > s->max_xfer ||
        ldq_le_p(raw + offsetof(struct dma32_demo_desc, reserved)) ||
        ldq_le_p(raw + offsetof(struct dma32_demo_desc, reserved) + 8)) {
        d->status = DMA32_DEMO_ST_INVALID;
        d->source = DMA32_DEMO_FAULT_SRC_RING;
        d->fault_addr = addr;
        return true;
    }
    s->cur_active = dma32_demo_check_data(s, d);
    return true;
}

/*
 * Run the descriptor at HEAD within *@budget, fetching it first unless it
 * is already under way.  Returns 1 when it completed (written back, HEAD
 * advanced), 0 when the budget ran out in the middle of it (its progress
 * stays in cur_*), and -1 when the ring halted or the device was reset or
 * unplugged by one of the descriptor's own accesses (then nothing more is
 * done: the state belongs to reset, or to unrealize).
 */
static int dma32_demo_process_one(DMA32DemoState *s, uint64_t *budget)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t wb[DMA32_DEMO_DESC_SIZE];
    DMA32DemoDone d = { .status = DMA32_DEMO_ST_OK, .gen = s->gen };
    uint32_t idx = s->head;
    uint64_t addr, bus;
    MemTxResult r;

    bus = dma32_demo_desc_bus(s, &addr);
    if (!s->cur_active && !dma32_demo_fetch(s, addr, bus, &d)) {
        return -1;
    }
    if (s->cur_active) {
        dma32_demo_execute(s, budget, &d);
        if (d.gone) {
            return -1;
        }
        if (d.status == DMA32_DEMO_ST_OK && s->cur_off < s->cur_len) {
            return 0;
        }
        if (d.status == DMA32_DEMO_ST_OK &&
            s->cur_op == DMA32_DEMO_OP_CHECKSUM) {
            d.result = ~s->cur_crc;
        }
        s->cur_active = false;
    }

    if (d.status != DMA32_DEMO_ST_OK) {
        dma32_demo_latch_fault(s, d.status, d.source, idx, d.fault_addr);
    }

    /* Write back result and fault address first, then the status word */
    stl_le_p(wb, d.result);
    stq_le_p(wb + 4, d.status == DMA32_DEMO_ST_OK ? 0 : d.fault_addr);
    r = pci_dma_write(pdev, bus + DMA32_DEMO_DESC_STATUS_OFF + 4, wb, 12);
    if (dma32_demo_stale(s, &d)) {
        return -1;
    }
    if (r == MEMTX_OK) {
        stl_le_p(wb, d.status);
        r = pci_dma_write(pdev, bus + DMA32_DEMO_DESC_STATUS_OFF, wb, 4);
        if (dma32_demo_stale(s, &d)) {
            return -1;
        }
    }
    if (r != MEMTX_OK) {
        dma32_demo_pci_abort(s, r);
        dma32_demo_ring_error(s, DMA32_DEMO_ST_BUS_ERROR, bus);
        return -1;
    }
    trace_dma32_demo_desc_done(idx, d.status, d.result);

    if (d.status == DMA32_DEMO_ST_OK) {
        s->cnt[DMA32_DEMO_CNT_COMPLETED]++;
    }
    s->head = (s->head + 1) & (s->ring_size - 1);
    /* An MSI is a DMA write too, and may land anywhere */
    dma32_demo_raise(s, DMA32_DEMO_INT_DONE |
                     (d.status == DMA32_DEMO_ST_OK ? 0 : DMA32_DEMO_INT_ERROR));
    if (dma32_demo_stale(s, &d)) {
        return -1;
    }
    return 1;
}

static void dma32_demo_bh(void *opaque)
{
    DMA32DemoState *s = opaque;
    uint32_t gen = s->gen;
    uint32_t descs = 0;
    uint64_t budget = DMA32_DEMO_BH_BUDGET;
    bool again = false;

    if (s->busy) {
        qemu_bh_schedule(s->bh);
        return;
    }
    /*
     * Unrealize may run inside one of our accesses; the state it would
     * free must outlive this run.  After it (or a reset), s->gen differs
     * and the loop stops without touching the bottom half or config space.
     */
    object_ref(OBJECT(s));
    s->busy = true;
    while (s->gen == gen && dma32_demo_can_run(s)) {
        int ret;

        if (descs >= DMA32_DEMO_BH_MAX_DESCS ||
            budget < DMA32_DEMO_COST_MAX) {
            /* Yield to the main loop and continue in the next run */
            again = true;
            qemu_bh_schedule(s->bh);
            break;
        }
        ret = dma32_demo_process_one(s, &budget);
        if (ret < 0) {
            break;
        }
        descs += ret;
    }
    s->busy = false;
    trace_dma32_demo_bh(descs, DMA32_DEMO_BH_BUDGET - budget, again);
    object_unref(OBJECT(s));
}

static void dma32_demo_kick(DMA32DemoState *s)
{
    if (s->bh && dma32_demo_can_run(s)) {
        qemu_bh_schedule(s->bh);
    }
}

static void dma32_demo_doorbell(DMA32DemoState *s, uint32_t val)
{
    trace_dma32_demo_doorbell(val, s->head);
    if (s->halted) {
        qemu_log_mask(LOG_GUEST_ERROR, "%s: doorbell while halted, "
                      "reprogram the ring\n", TYPE_DMA32_DEMO);
        return;
    }
    if (!dma32_demo_ring_programmed(s) || val >= s->ring_size) {
        dma32_demo_ring_error(s, DMA32_DEMO_ST_INVALID, s->ring_base);
        return;
    }
    if (s->overflow == DMA32_DEMO_OVERFLOW_FAULT &&
        !dma32_demo_range_ok(s->ring_base,
                             (uint64_t)s->ring_size * DMA32_DEMO_DESC_SIZE,
                             s->ring_bits)) {
        dma32_demo_ring_error(s, DMA32_DEMO_ST_ADDR_FAULT, s->ring_base);
        return;
    }
    s->tail = val;
    dma32_demo_kick(s);
}

static void dma32_demo_ring_reprogrammed(DMA32DemoState *s)
{
    s->head = 0;
    s->tail = 0;
    s->halted = false;
    /* a descriptor under way is abandoned with its ring */
    s->cur_active = false;
}

/* Registers */

/*
 * A reset with descriptors queued: trace the one at HEAD as memory holds
 * it now (op 0, length 0: the driver cleared its ring before it stopped
 * the engine).  Reads guest memory only when the event is on.
 */
static void dma32_demo_trace_reset_pending(DMA32DemoState *s)
{
    uint8_t raw[DMA32_DEMO_DESC_SIZE];
    uint64_t addr, bus;

    if (!trace_event_get_state_backends(TRACE_DMA32_DEMO_RESET_PENDING) ||
        !dma32_demo_ring_programmed(s) || s->head == s->tail) {
        return;
    }
    bus = dma32_demo_desc_bus(s, &addr);
    if (pci_dma_read(PCI_DEVICE(s), bus, raw, sizeof(raw)) != MEMTX_OK) {
        memset(raw, 0xff, sizeof(raw));
    }
    trace_dma32_demo_reset_pending(s->head, s->tail,
        ldl_le_p(raw + offsetof(struct dma32_demo_desc, op)),
        ldl_le_p(raw + offsetof(struct dma32_demo_desc, len)));
}

static void dma32_demo_reset_state(DMA32DemoState *s)
{
    trace_dma32_demo_reset();
    s->gen++;
    if (s->bh) {
        qemu_bh_cancel(s->bh);
    }
    s->ctrl = 0;
    s->int_status = 0;
    s->int_mask = 0;
    s->ring_base = 0;
    s->ring_size = 0;
    dma32_demo_ring_reprogrammed(s);
    s->stalled = false;
    s->inject_bus_error = false;
    s->fault_addr = 0;
    s->fault_info = 0;
    memset(s->cnt, 0, sizeof(s->cnt));
    memset(s->cnt_snap, 0, sizeof(s->cnt_snap));
    s->cur_op = s->cur_len = s->cur_crc = 0;
    s->cur_src = s->cur_dst = s->cur_seed = s->cur_off = 0;
    pci_set_irq(PCI_DEVICE(s), 0);
}

/*
 * DMA or MSI from the device into its own BAR (while it is busy with a
 * descriptor or a register write) is refused with a bus error: the
 * descriptor that tried it completes with BUS_ERROR.
 */
static MemTxResult dma32_demo_mmio_read(void *opaque, hwaddr addr,
                                        uint64_t *data, unsigned size,
                                        MemTxAttrs attrs)
{
    DMA32DemoState *s = opaque;
    uint64_t val = 0;

    if (s->unrealized) {
        qemu_log_mask(LOG_GUEST_ERROR, "%s: read at 0x%" HWADDR_PRIx
                      " after unplug refused\n", TYPE_DMA32_DEMO, addr);
        *data = UINT64_MAX;
        return MEMTX_DECODE_ERROR;
    }
    if (s->busy) {
        qemu_log_mask(LOG_GUEST_ERROR, "%s: reentrant read at 0x%" HWADDR_PRIx
                      " refused\n", TYPE_DMA32_DEMO, addr);
        *data = 0;
        return MEMTX_ERROR;
    }

    switch (addr) {
    case DMA32_DEMO_REG_ID:
        val = DMA32_DEMO_ID_MAGIC;
        break;
    case DMA32_DEMO_REG_VERSION:
        val = DMA32_DEMO_VERSION_MAJOR << 16 | DMA32_DEMO_VERSION_MINOR;
        break;
    case DMA32_DEMO_REG_DMA_BITS:
        val = s->dma_bits;
        break;
    case DMA32_DEMO_REG_RING_BITS:
        val = s->ring_bits;
        break;
    case DMA32_DEMO_REG_MAX_XFER:
        val = s->max_xfer;
        break;
    case DMA32_DEMO_REG_MAX_RING:
        val = DMA32_DEMO_MAX_RING_ENTRIES;
        break;
    case DMA32_DEMO_REG_FEATURES:
        val = s->overflow == DMA32_DEMO_OVERFLOW_TRUNCATE ?
              DMA32_DEMO_FEAT_TRUNCATE : 0;
        break;
    case DMA32_DEMO_REG_CTRL:
        val = s->ctrl;
        break;
    case DMA32_DEMO_REG_STATUS:
        val = (s->ctrl & DMA32_DEMO_CTRL_ENABLE ?
               DMA32_DEMO_STATUS_ENABLED : 0) |
              (s->head != s->tail ? DMA32_DEMO_STATUS_BUSY : 0) |
              (s->halted ? DMA32_DEMO_STATUS_HALTED : 0);
        break;
    case DMA32_DEMO_REG_INT_STATUS:
        val = s->int_status;
        break;
    case DMA32_DEMO_REG_INT_MASK:
        val = s->int_mask;
        break;
    case DMA32_DEMO_REG_RING_BASE_LO:
        val = (uint32_t)s->ring_base;
        break;
    case DMA32_DEMO_REG_RING_BASE_HI:
        val = s->ring_base >> 32;
        break;
    case DMA32_DEMO_REG_RING_SIZE:
        val = s->ring_size;
        break;
    case DMA32_DEMO_REG_RING_HEAD:
        val = s->head;
        break;
    case DMA32_DEMO_REG_RING_TAIL:
        val = s->tail;
        break;
    case DMA32_DEMO_REG_FAULT_ADDR_LO:
        val = (uint32_t)s->fault_addr;
        break;
    case DMA32_DEMO_REG_FAULT_ADDR_HI:
        val = s->fault_addr >> 32;
        break;
    case DMA32_DEMO_REG_FAULT_INFO:
        val = s->fault_info;
        break;
    case DMA32_DEMO_REG_CNT_COMPLETED ...
         DMA32_DEMO_REG_CNT_COMPLETED + DMA32_DEMO_NR_COUNTERS * 8 - 1: {
        unsigned i = (addr - DMA32_DEMO_REG_CNT_COMPLETED) / 8;

        if (!(addr & 4)) {
            s->cnt_snap[i] = s->cnt[i];
            val = (uint32_t)s->cnt_snap[i];
        } else {
            val = s->cnt_snap[i] >> 32;
        }
        break;
    }
    case DMA32_DEMO_REG_INT_ACK:
    case DMA32_DEMO_REG_DOORBELL:
    case DMA32_DEMO_REG_CNT_CLEAR:
    case DMA32_DEMO_REG_INJECT:
        /* write only */
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "%s: read of unknown register 0x%"
                      HWADDR_PRIx "\n", TYPE_DMA32_DEMO, addr);
        break;
    }
    trace_dma32_demo_mmio_read(addr, val);
    *data = val;
    return MEMTX_OK;
}

static MemTxResult dma32_demo_mmio_write(void *opaque, hwaddr addr,
                                         uint64_t val, unsigned size,
                                         MemTxAttrs attrs)
{
    DMA32DemoState *s = opaque;
    uint32_t gen = s->gen;
    uint32_t old;

    if (s->unrealized) {
        qemu_log_mask(LOG_GUEST_ERROR, "%s: write at 0x%" HWADDR_PRIx
                      " after unplug refused\n", TYPE_DMA32_DEMO, addr);
        return MEMTX_DECODE_ERROR;
    }
    if (s->busy) {
        qemu_log_mask(LOG_GUEST_ERROR, "%s: reentrant write at 0x%"
                      HWADDR_PRIx " refused\n", TYPE_DMA32_DEMO, addr);
        return MEMTX_ERROR;
    }
    trace_dma32_demo_mmio_write(addr, val);
    s->busy = true;

    switch (addr) {
    case DMA32_DEMO_REG_CTRL:
        if (val & DMA32_DEMO_CTRL_RESET) {
            dma32_demo_trace_reset_pending(s);
            dma32_demo_reset_state(s);
            break;
        }
        s->ctrl = val & DMA32_DEMO_CTRL_ENABLE;
        break;
    case DMA32_DEMO_REG_INT_MASK:
        old = s->int_mask;
        s->int_mask = val & DMA32_DEMO_INT_ALL;
        /* Unmasking a pending cause is a new cause for MSI */
        dma32_demo_update_irq(s, s->int_status & s->int_mask & ~old);
        break;
    case DMA32_DEMO_REG_INT_ACK:
        s->int_status &= ~val;
        dma32_demo_update_irq(s, 0);
        break;
    case DMA32_DEMO_REG_RING_BASE_LO:
        s->ring_base = deposit64(s->ring_base, 0, 32, val);
        dma32_demo_ring_reprogrammed(s);
        break;
    case DMA32_DEMO_REG_RING_BASE_HI:
        s->ring_base = deposit64(s->ring_base, 32, 32, val);
        dma32_demo_ring_reprogrammed(s);
        break;
    case DMA32_DEMO_REG_RING_SIZE:
        s->ring_size = val;
        dma32_demo_ring_reprogrammed(s);
        break;
    case DMA32_DEMO_REG_DOORBELL:
        dma32_demo_doorbell(s, val);
        break;
    case DMA32_DEMO_REG_CNT_CLEAR:
        if (val & 1) {
            memset(s->cnt, 0, sizeof(s->cnt));
            memset(s->cnt_snap, 0, sizeof(s->cnt_snap));
        }
        break;
    case DMA32_DEMO_REG_INJECT:
        if (val & DMA32_DEMO_INJECT_BUS_ERROR) {
            s->inject_bus_error = true;
        }
        if (val & DMA32_DEMO_INJECT_STALL) {
            s->stalled = true;
        }
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "%s: write of 0x%" PRIx64
                      " to read-only or unknown register 0x%" HWADDR_PRIx
                      "\n", TYPE_DMA32_DEMO, val, addr);
        break;
    }

    s->busy = false;
    /* Not after a reset, or an unplug by our own MSI */
    if (s->gen == gen) {
        dma32_demo_kick(s);
    }
    return MEMTX_OK;
}

static const MemoryRegionOps dma32_demo_mmio_ops = {
    .read_with_attrs = dma32_demo_mmio_read,
    .write_with_attrs = dma32_demo_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        /* 64-bit accesses are split low word first: counters stay atomic */
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* Life cycle */

static void dma32_demo_config_write(PCIDevice *pdev, uint32_t addr,
                                    uint32_t val, int len)
{
    DMA32DemoState *s = DMA32_DEMO(pdev);

    pci_default_write_config(pdev, addr, val, len);
    /* MSI on/off changes where the interrupt goes */
    dma32_demo_update_irq(s, 0);
}

static void dma32_demo_vm_state_change(void *opaque, bool running,
                                       RunState state)
{
    DMA32DemoState *s = opaque;

    if (running) {
        dma32_demo_kick(s);
    }
}

static void dma32_demo_realize(PCIDevice *pdev, Error **errp)
{
    DMA32DemoState *s = DMA32_DEMO(pdev);
    Error *err = NULL;
    int ret;

    if (s->dma_bits < 24 || s->dma_bits > 64) {
        error_setg(errp, "dma-bits must be between 24 and 64, not %u",
                   s->dma_bits);
        return;
    }
    if (s->ring_bits < 24 || s->ring_bits > 64) {
        error_setg(errp, "ring-bits must be between 24 and 64, not %u",
                   s->ring_bits);
        return;
    }
    if (s->max_xfer < 1 || s->max_xfer > UINT32_MAX) {
        error_setg(errp, "max-xfer must be between 1 and 4294967295, "
                   "not %" PRIu64, s->max_xfer);
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, 1);
    ret = msi_init(pdev, 0, 1, true, false, &err);
    if (ret == -ENOTSUP) {
        /* No MSI on this machine: INTx only */
        error_free(err);
    } else if (ret) {
        error_propagate(errp, err);
        return;
    }

    memory_region_init_io(&s->mmio, OBJECT(s), &dma32_demo_mmio_ops, s,
                          "dma32-demo-mmio", DMA32_DEMO_BAR0_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->mmio);

    s->bh = qemu_bh_new(dma32_demo_bh, s);
    s->vmse = qdev_add_vm_change_state_handler(DEVICE(s),
                                               dma32_demo_vm_state_change, s);
}

static void dma32_demo_exit(PCIDevice *pdev)
{
    DMA32DemoState *s = DMA32_DEMO(pdev);

    /* Tell a bottom half that is running (we may be inside its DMA) */
    s->gen++;
    /* and close the BAR to accesses still dispatched through old views */
    s->unrealized = true;
    qemu_del_vm_change_state_handler(s->vmse);
    qemu_bh_delete(s->bh);
    s->bh = NULL;
    msi_uninit(pdev);
}

/* System reset and the parent bus's reset: the hold phase of Resettable */
static void dma32_demo_reset_hold(Object *obj)
{
    dma32_demo_reset_state(DMA32_DEMO(obj));
}

static void dma32_demo_instance_init(Object *obj)
{
    DMA32DemoState *s = DMA32_DEMO(obj);
    unsigned i;

    /* Counters, read-only, e.g. qom-get /machine/peripheral/ID bytes-read */
    for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
        object_property_add_uint64_ptr(obj, dma32_demo_counter_names[i],
                                       &s->cnt[i], OBJ_PROP_FLAG_READ);
    }
}

/* No descriptor under way unless the stream has its subsection */
static int dma32_demo_pre_load(void *opaque)
{
    DMA32DemoState *s = opaque;

    s->cur_active = false;
    return 0;
}

static int dma32_demo_post_load(void *opaque, int version_id)
{
    DMA32DemoState *s = opaque;
    DMA32DemoDone d;

    /* Registers from the stream hold only their defined bits */
    s->ctrl &= DMA32_DEMO_CTRL_ENABLE;
    s->int_status &= DMA32_DEMO_INT_ALL;
    s->int_mask &= DMA32_DEMO_INT_ALL;
    /* Indices from the stream must stay inside a valid ring */
    if (dma32_demo_ring_programmed(s)) {
        s->head &= s->ring_size - 1;
        s->tail &= s->ring_size - 1;
    } else {
        s->head = s->tail = 0;
    }
    /*
     * A descriptor under way (the subsection) belongs to a programmed ring,
     * is well formed and not yet done.  HEAD == TAIL is allowed: a doorbell
     * that took TAIL back to HEAD pauses the descriptor, it does not end it.
     */
    if (s->cur_active &&
        (!dma32_demo_ring_programmed(s) || s->cur_op < DMA32_DEMO_OP_FILL ||
         s->cur_op > DMA32_DEMO_OP_COPY || !s->cur_len ||
         s->cur_len > s->max_xfer || s->cur_off >= s->cur_len)) {
        error_report("%s: descriptor under way is inconsistent: op %u, "
                     "%" PRIu64 " of %u bytes done, ring size %u",
                     TYPE_DMA32_DEMO, s->cur_op, s->cur_off, s->cur_len,
                     s->ring_size);
        return -EINVAL;
    }
    /*
     * A doorbell's and a fetch's checks are not made again for the work
     * queued: a stream that puts it out of the device's reach is refused, or
     * data or a completion would go past 2^dma-bits or 2^ring-bits.
     */
    if (s->overflow == DMA32_DEMO_OVERFLOW_FAULT &&
        (s->cur_active || s->head != s->tail) &&
        !dma32_demo_range_ok(s->ring_base,
                             (uint64_t)s->ring_size * DMA32_DEMO_DESC_SIZE,
                             s->ring_bits)) {
        error_report("%s: ring at 0x%" PRIx64 " of %u descriptors with work "
                     "in it reaches past ring-bits %u", TYPE_DMA32_DEMO,
                     s->ring_base, s->ring_size, s->ring_bits);
        return -EINVAL;
    }
    if (s->cur_active && !dma32_demo_check_data(s, &d)) {
        error_report("%s: descriptor under way (op %u, source 0x%" PRIx64
                     ", destination 0x%" PRIx64 ", %u bytes) reaches past "
                     "dma-bits %u", TYPE_DMA32_DEMO, s->cur_op, s->cur_src,
                     s->cur_dst, s->cur_len, s->dma_bits);
        return -EINVAL;
    }
    /* The bottom half is not migrated: the vm state change kicks it */
    return 0;
}

static bool dma32_demo_cur_needed(void *opaque)
{
    DMA32DemoState *s = opaque;

    return s->cur_active;
}

/* Sent only while active: that it arrived says so */
static int dma32_demo_cur_post_load(void *opaque, int version_id)
{
    DMA32DemoState *s = opaque;

    s->cur_active = true;
    return 0;
}

/* The descriptor under way, when the VM stopped between two of its runs */
static const VMStateDescription vmstate_dma32_demo_cur = {
    .name = TYPE_DMA32_DEMO "/descriptor",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dma32_demo_cur_needed,
    .post_load = dma32_demo_cur_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32(cur_op, DMA32DemoState),
        VMSTATE_UINT32(cur_len, DMA32DemoState),
        VMSTATE_UINT64(cur_src, DMA32DemoState),
        VMSTATE_UINT64(cur_dst, DMA32DemoState),
        VMSTATE_UINT64(cur_seed, DMA32DemoState),
        VMSTATE_UINT64(cur_off, DMA32DemoState),
        VMSTATE_UINT32(cur_crc, DMA32DemoState),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_dma32_demo = {
    .name = TYPE_DMA32_DEMO,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = dma32_demo_pre_load,
    .post_load = dma32_demo_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_UINT8_EQUAL(dma_bits, DMA32DemoState,
                            "dma-bits differs between source and destination"),
        VMSTATE_UINT8_EQUAL(ring_bits, DMA32DemoState,
                            "ring-bits differs between source and destination"),
        VMSTATE_INT32_EQUAL(overflow, DMA32DemoState,
                            "overflow differs between source and destination"),
        VMSTATE_UINT64_EQUAL(max_xfer, DMA32DemoState,
                             "max-xfer differs between source and destination"),
        VMSTATE_PCI_DEVICE(parent_obj, DMA32DemoState),
        VMSTATE_UINT32(ctrl, DMA32DemoState),
        VMSTATE_UINT32(int_status, DMA32DemoState),
        VMSTATE_UINT32(int_mask, DMA32DemoState),
        VMSTATE_UINT64(ring_base, DMA32DemoState),
        VMSTATE_UINT32(ring_size, DMA32DemoState),
        VMSTATE_UINT32(head, DMA32DemoState),
        VMSTATE_UINT32(tail, DMA32DemoState),
        VMSTATE_BOOL(halted, DMA32DemoState),
        VMSTATE_BOOL(stalled, DMA32DemoState),
        VMSTATE_BOOL(inject_bus_error, DMA32DemoState),
        VMSTATE_UINT64(fault_addr, DMA32DemoState),
        VMSTATE_UINT32(fault_info, DMA32DemoState),
        VMSTATE_UINT64_ARRAY(cnt, DMA32DemoState, DMA32_DEMO_NR_COUNTERS),
        VMSTATE_UINT64_ARRAY(cnt_snap, DMA32DemoState,
                             DMA32_DEMO_NR_COUNTERS),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * []) {
        &vmstate_dma32_demo_cur,
        NULL
    }
};

/* overflow=fault|truncate */
static const char *const dma32_demo_overflow_names[] = {
    [DMA32_DEMO_OVERFLOW_FAULT] = "fault",
    [DMA32_DEMO_OVERFLOW_TRUNCATE] = "truncate",
};

static const QEnumLookup dma32_demo_overflow_lookup = {
    .array = dma32_demo_overflow_names,
    .size = ARRAY_SIZE(dma32_demo_overflow_names),
};

/* get and set: an output visitor reads the field, an input one writes it */
static void dma32_demo_visit_overflow(Object *obj, Visitor *v,
                                      const char *name, void *opaque,
                                      Error **errp)
{
    int *ptr = object_field_prop_ptr(obj, opaque);

    visit_type_enum(v, name, ptr, &dma32_demo_overflow_lookup, errp);
}

static void dma32_demo_overflow_default(ObjectProperty *op,
                                        const Property *prop)
{
    object_property_set_default_str(op,
        qapi_enum_lookup(&dma32_demo_overflow_lookup, prop->defval.i));
}

static const PropertyInfo dma32_demo_prop_overflow = {
    .name = "DMA32DemoOverflow",
    .description = "what an out-of-range address does: fault/truncate",
    .enum_table = &dma32_demo_overflow_lookup,
    .get = dma32_demo_visit_overflow,
    .set = dma32_demo_visit_overflow,
    .set_default_value = dma32_demo_overflow_default,
};

static Property dma32_demo_properties[] = {
    DEFINE_PROP_UINT8("dma-bits", DMA32DemoState, dma_bits, 32),
    DEFINE_PROP_UINT8("ring-bits", DMA32DemoState, ring_bits, 32),
    DEFINE_PROP_SIGNED("overflow", DMA32DemoState, overflow,
                       DMA32_DEMO_OVERFLOW_FAULT, dma32_demo_prop_overflow,
                       int),
    DEFINE_PROP_SIZE("max-xfer", DMA32DemoState, max_xfer, 64 * MiB),
    DEFINE_PROP_END_OF_LIST(),
};

static void dma32_demo_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = dma32_demo_realize;
    k->exit = dma32_demo_exit;
    k->config_write = dma32_demo_config_write;
    k->vendor_id = DMA32_DEMO_VENDOR_ID;
    k->device_id = DMA32_DEMO_DEVICE_ID;
    k->revision = DMA32_DEMO_REVISION;
    k->class_id = PCI_CLASS_OTHERS;
    dc->desc = "DMA engine with a limited address width (dma32-demo)";
    rc->phases.hold = dma32_demo_reset_hold;
    dc->vmsd = &vmstate_dma32_demo;
    device_class_set_props(dc, dma32_demo_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo dma32_demo_info = {
    .name = TYPE_DMA32_DEMO,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(DMA32DemoState),
    .instance_init = dma32_demo_instance_init,
    .class_init = dma32_demo_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void dma32_demo_register_types(void)
{
    type_register_static(&dma32_demo_info);
}

type_init(dma32_demo_register_types)
