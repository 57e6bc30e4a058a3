/*
 * QTest for the dma32-demo PCI device, part of dma32-demo-test
 *
 * The randomized loop (the device fuzzer).
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "dma32-demo-test.h"

/*
 * Randomized register and descriptor operations (the device fuzzer)
 *
 * Each run starts QEMU with the device in one place: on the root bus,
 * behind a pcie-root-port, behind a conventional pci-bridge, or behind a
 * translating VT-d.  Descriptors aim at the whole guest-physical map:
 * RAM below and above 4 GiB, the 2 GiB, 4 GiB and 2^64 edges, MMCONFIG,
 * the PCI hole with the device's own BAR, the IOAPIC, HPET, the LAPIC/MSI
 * window, the BIOS ROM and random 64-bit addresses.  After every
 * operation one qtest read takes all the registers at once, and the
 * fuzzer checks them against what the operation did (see fuzz_check),
 * and the guard regions in RAM (dma32-demo-test-guard.c) are checked to
 * be unchanged.
 */
typedef enum FuzzPlace {
    FUZZ_ROOT_BUS,
    FUZZ_ROOT_PORT,
    FUZZ_PCI_BRIDGE,
    FUZZ_IOMMU,
} FuzzPlace;

#define IOAPIC_BASE         0xfec00000ULL
#define HPET_BASE           0xfed00000ULL
#define LAPIC_BASE          0xfee00000ULL
#define BIOS_BASE           0xfffc0000ULL
#define MMCFG_SIZE          0x10000000ULL
#define SNAP_SIZE           0xd8
/* FuzzStep.wrote's bit for a register */
#define FUZZ_BIT(reg)       (1ULL << ((reg) / 4))
/* ID to FEATURES */
#define FUZZ_IDENT_REGS     (DMA32_DEMO_REG_FEATURES / 4 + 1)

typedef struct Fuzz {
    Dev *d;
    Port *port;                 /* behind a bridge, else NULL */
    FuzzPlace place;
    bool iommu_mapped;          /* FUZZ_IOMMU: what the IOMMU maps */
    uint8_t msi_cap;
    uint64_t abort_base;        /* bus errors when PCI_STATUS was cleared */
    uint32_t max_xfer;
    uint32_t ident[FUZZ_IDENT_REGS];    /* the read-only block at first */
    Guards guards;              /* RAM no transfer may touch */
    uint32_t snap[SNAP_SIZE / 4];
} Fuzz;

/* What one operation did, for the checks after it */
typedef struct FuzzStep {
    bool cleared;               /* counters may have dropped */
    bool acked;                 /* INT_STATUS bits may have dropped */
    bool reset;                 /* CTRL.RESET */
    bool reprogrammed;          /* ring base or size written (last) */
    bool doorbell;              /* a doorbell was the last write */
    uint32_t doorbell_val;
    int ctrl;                   /* last CTRL.ENABLE written, or -1 */
    bool mmio_write;
    uint64_t wrote;             /* bit reg / 4 of each register written */
} FuzzStep;

static uint32_t snap_reg(const uint32_t *snap, uint32_t reg)
{
    return snap[reg / 4];
}

static uint64_t snap_cnt(const uint32_t *snap, unsigned i)
{
    uint32_t reg = DMA32_DEMO_REG_CNT_COMPLETED + i * 8;

    return snap[reg / 4] | (uint64_t)snap[reg / 4 + 1] << 32;
}

/*
 * All registers in one qtest round trip: the memory core splits the read
 * into 8-byte accesses, which the device takes low word first, so that
 * every counter is read as a consistent snapshot.
 */
static void fuzz_snapshot(Fuzz *f, uint32_t *snap)
{
    uint8_t raw[SNAP_SIZE];
    unsigned i;

    qtest_memread(f->d->qts, f->d->bar.addr, raw, sizeof(raw));
    for (i = 0; i < SNAP_SIZE / 4; i++) {
        snap[i] = ldl_le_p(raw + i * 4);
    }
}

static bool ring_valid(uint64_t base, uint32_t size)
{
    return size && size <= 4096 && !(size & (size - 1)) && !(base & 63);
}

static void fuzz_fail(Fuzz *f, uint64_t n, const char *what)
{
    g_test_message("fuzz: operation %" PRIu64 ": %s; STATUS 0x%x HEAD %u "
                   "TAIL %u RING_SIZE %u FAULT_INFO 0x%x INT_STATUS 0x%x",
                   n, what, snap_reg(f->snap, DMA32_DEMO_REG_STATUS),
                   snap_reg(f->snap, DMA32_DEMO_REG_RING_HEAD),
                   snap_reg(f->snap, DMA32_DEMO_REG_RING_TAIL),
                   snap_reg(f->snap, DMA32_DEMO_REG_RING_SIZE),
                   snap_reg(f->snap, DMA32_DEMO_REG_FAULT_INFO),
                   snap_reg(f->snap, DMA32_DEMO_REG_INT_STATUS));
    g_assert_not_reached();
}

#define FUZZ_CHECK(f, n, cond) \
    do { \
        if (!(cond)) { \
            fuzz_fail(f, n, #cond); \
        } \
    } while (0)

/*
 * A bus error since PCI_STATUS was last cleared left a received-abort bit
 * there.  The bottom half runs between any two qtest commands, so the
 * count to compare with is taken after clearing the bits again.
 */
static void fuzz_check_abort(Fuzz *f, uint64_t n)
{
    const uint16_t abort = PCI_STATUS_REC_MASTER_ABORT |
                           PCI_STATUS_REC_TARGET_ABORT;
    uint16_t ps;

    ps = qpci_config_readw(f->d->pdev, PCI_STATUS);
    if (!(ps & abort)) {
        fuzz_fail(f, n, "a bus error without an abort in PCI_STATUS");
    }
    qpci_config_writew(f->d->pdev, PCI_STATUS, abort);
    fuzz_snapshot(f, f->snap);
    f->abort_base = snap_cnt(f->snap, 4);
}

/*
 * The invariants, after every operation, against the registers before it
 * (@old) and what the operation wrote (@st):
 *  - the device answers at its BAR; registers hold only defined bits;
 *  - STATUS.ENABLED is CTRL.ENABLE, STATUS.BUSY is HEAD != TAIL;
 *  - HEAD and TAIL lie inside a valid ring, and are 0 without one;
 *  - a HALTED ring has a ring fault latched, stays halted and does not
 *    move until it is reprogrammed or reset;
 *  - HEAD does not move while the device is disabled;
 *  - counters never drop, INT_STATUS bits never clear, unless the
 *    operation cleared or acknowledged them; a completed descriptor
 *    raised DONE, a fault ERROR, and HEAD moved only with a counter;
 *  - right after a reset everything is idle; right after ring
 *    programming HEAD = TAIL = 0 and nothing is halted; a doorbell sets
 *    TAIL or halts the ring (or is ignored on a halted one);
 *  - a bus error set a received-abort bit in PCI_STATUS;
 *  - the read-only block (ID to FEATURES) keeps its first values; CTRL,
 *    INT_MASK, RING_BASE and RING_SIZE change only when written (or
 *    reset), RING_TAIL only by a doorbell, ring programming or reset.
 */
static void fuzz_check(Fuzz *f, uint64_t n, const uint32_t *old,
                       const FuzzStep *st)
{
    const uint32_t *s = f->snap;
    uint32_t ctrl = snap_reg(s, DMA32_DEMO_REG_CTRL);
    uint32_t status = snap_reg(s, DMA32_DEMO_REG_STATUS);
    uint32_t ist = snap_reg(s, DMA32_DEMO_REG_INT_STATUS);
    uint32_t size = snap_reg(s, DMA32_DEMO_REG_RING_SIZE);
    uint32_t head = snap_reg(s, DMA32_DEMO_REG_RING_HEAD);
    uint32_t tail = snap_reg(s, DMA32_DEMO_REG_RING_TAIL);
    uint32_t info = snap_reg(s, DMA32_DEMO_REG_FAULT_INFO);
    uint64_t base = snap_reg(s, DMA32_DEMO_REG_RING_BASE_LO) |
                    (uint64_t)snap_reg(s, DMA32_DEMO_REG_RING_BASE_HI) << 32;
    uint32_t old_status = snap_reg(old, DMA32_DEMO_REG_STATUS);
    uint32_t old_head = snap_reg(old, DMA32_DEMO_REG_RING_HEAD);
    uint32_t old_tail = snap_reg(old, DMA32_DEMO_REG_RING_TAIL);
    bool halted = status & DMA32_DEMO_STATUS_HALTED;
    bool rewound = st->reset || st->reprogrammed;
    uint64_t delta[DMA32_DEMO_NR_COUNTERS];
    uint64_t faults = 0;
    unsigned i;

    FUZZ_CHECK(f, n, snap_reg(s, DMA32_DEMO_REG_ID) == DMA32_DEMO_ID_MAGIC);
    FUZZ_CHECK(f, n, !(ctrl & ~DMA32_DEMO_CTRL_ENABLE));
    FUZZ_CHECK(f, n, !(ist & ~DMA32_DEMO_INT_ALL));
    FUZZ_CHECK(f, n, !(snap_reg(s, DMA32_DEMO_REG_INT_MASK) &
                       ~DMA32_DEMO_INT_ALL));
    FUZZ_CHECK(f, n, !(status & ~(DMA32_DEMO_STATUS_ENABLED |
                                  DMA32_DEMO_STATUS_BUSY |
                                  DMA32_DEMO_STATUS_HALTED)));
    FUZZ_CHECK(f, n, !(status & DMA32_DEMO_STATUS_ENABLED) == !ctrl);
    FUZZ_CHECK(f, n, !(status & DMA32_DEMO_STATUS_BUSY) == (head == tail));
    if (ring_valid(base, size)) {
        FUZZ_CHECK(f, n, head < size && tail < size);
    } else {
        FUZZ_CHECK(f, n, head == 0 && tail == 0);
    }
    FUZZ_CHECK(f, n, DMA32_DEMO_FAULT_STATUS(info) <= DMA32_DEMO_ST_INVALID &&
               DMA32_DEMO_FAULT_STATUS(info) != DMA32_DEMO_ST_OK &&
               DMA32_DEMO_FAULT_SOURCE(info) <= DMA32_DEMO_FAULT_SRC_DST);
    FUZZ_CHECK(f, n, !halted ||
               DMA32_DEMO_FAULT_SOURCE(info) == DMA32_DEMO_FAULT_SRC_RING);
    if (st->ctrl >= 0) {
        FUZZ_CHECK(f, n, ctrl == st->ctrl);
    }
    for (i = 0; i < FUZZ_IDENT_REGS; i++) {
        FUZZ_CHECK(f, n, s[i] == f->ident[i]);
    }
    if (!st->reset) {
        static const uint32_t sw_regs[] = {
            DMA32_DEMO_REG_CTRL, DMA32_DEMO_REG_INT_MASK,
            DMA32_DEMO_REG_RING_BASE_LO, DMA32_DEMO_REG_RING_BASE_HI,
            DMA32_DEMO_REG_RING_SIZE,
        };

        for (i = 0; i < ARRAY_SIZE(sw_regs); i++) {
            FUZZ_CHECK(f, n, (st->wrote & FUZZ_BIT(sw_regs[i])) ||
                       snap_reg(s, sw_regs[i]) == snap_reg(old, sw_regs[i]));
        }
        FUZZ_CHECK(f, n, st->reprogrammed || tail == old_tail ||
                   (st->wrote & FUZZ_BIT(DMA32_DEMO_REG_DOORBELL)));
    }

    if (st->reset) {
        FUZZ_CHECK(f, n, size == 0 && base == 0 && info == 0 && ist == 0 &&
                   !halted && snap_reg(s, DMA32_DEMO_REG_INT_MASK) == 0);
        for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
            FUZZ_CHECK(f, n, snap_cnt(s, i) == 0);
        }
    }
    if (st->reprogrammed && !st->reset) {
        FUZZ_CHECK(f, n, head == 0 && tail == 0 && !halted);
    }
    if (st->doorbell && !rewound) {
        if (old_status & DMA32_DEMO_STATUS_HALTED) {
            FUZZ_CHECK(f, n, halted && tail == old_tail);
        } else {
            FUZZ_CHECK(f, n, tail == st->doorbell_val ||
                       (halted && tail == old_tail));
        }
    }
    if (!rewound) {
        if (old_status & DMA32_DEMO_STATUS_HALTED) {
            FUZZ_CHECK(f, n, halted && head == old_head);
        }
        if (!(old_status & DMA32_DEMO_STATUS_ENABLED) && st->ctrl != 1) {
            FUZZ_CHECK(f, n, head == old_head);
        }
    }
    if (!st->acked) {
        FUZZ_CHECK(f, n, !(snap_reg(old, DMA32_DEMO_REG_INT_STATUS) & ~ist));
    }
    if (st->cleared) {
        f->abort_base = MIN(f->abort_base, snap_cnt(s, 4));
        return;
    }
    for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
        FUZZ_CHECK(f, n, snap_cnt(s, i) >= snap_cnt(old, i));
        delta[i] = snap_cnt(s, i) - snap_cnt(old, i);
    }
    faults = delta[3] + delta[4] + delta[5];
    if (!st->acked) {
        FUZZ_CHECK(f, n, !delta[0] || (ist & DMA32_DEMO_INT_DONE));
        FUZZ_CHECK(f, n, !faults || (ist & DMA32_DEMO_INT_ERROR));
    }
    if (!rewound && head != old_head) {
        FUZZ_CHECK(f, n, delta[0] + faults > 0);
    }
    if (snap_cnt(s, 4) > f->abort_base) {
        fuzz_check_abort(f, n);
    }
}

/*
 * A ring base that would put any of the largest ring's descriptors on a
 * guard is the fuzzer's ring instead (both halves written).
 */
static bool fuzz_ring_clear(Fuzz *f, FuzzStep *st, uint32_t reg,
                            uint32_t val)
{
    uint64_t lo = snap_reg(f->snap, DMA32_DEMO_REG_RING_BASE_LO);
    uint64_t hi = snap_reg(f->snap, DMA32_DEMO_REG_RING_BASE_HI);
    uint32_t len = snap_reg(f->snap, DMA32_DEMO_REG_MAX_RING) *
                   DMA32_DEMO_DESC_SIZE;
    uint64_t base;

    if (reg == DMA32_DEMO_REG_RING_BASE_LO) {
        lo = val;
    } else {
        hi = val;
    }
    base = hi << 32 | lo;
    if (!guards_clear(&f->guards, &base, &len)) {
        return false;
    }
    wr(f->d, DMA32_DEMO_REG_RING_BASE_LO, (uint32_t)RING_ADDR);
    wr(f->d, DMA32_DEMO_REG_RING_BASE_HI, RING_ADDR >> 32);
    st->wrote |= FUZZ_BIT(DMA32_DEMO_REG_RING_BASE_LO) |
                 FUZZ_BIT(DMA32_DEMO_REG_RING_BASE_HI);
    return true;
}

/*
 * The guards, every GUARD_EVERY operations and at the end: reading them
 * takes a qtest round trip each, which after every operation would make
 * the loop five times slower.  A guard does not heal, so a later check
 * still catches a stray write, in the last GUARD_EVERY operations.
 */
#define GUARD_EVERY         64

static void fuzz_check_guards(Fuzz *f, uint64_t n)
{
    int g = guards_check(&f->guards);

    if (g >= 0) {
        g_test_message("fuzz: guard at 0x%" PRIx64 " changed in operations "
                       "%" PRIu64 " to %" PRIu64, guard_addr(g),
                       n - MIN(n, GUARD_EVERY) + 1, n);
        fuzz_fail(f, n, "a guard region in RAM changed");
    }
}

/* A register write, noted in @st */
static void fuzz_wr(Fuzz *f, FuzzStep *st, uint32_t reg, uint32_t val)
{
    if ((reg != DMA32_DEMO_REG_RING_BASE_LO &&
         reg != DMA32_DEMO_REG_RING_BASE_HI) || !fuzz_ring_clear(f, st, reg, val)) {
        wr(f->d, reg, val);
    }
    st->mmio_write = true;
    if (reg < 64 * 4) {
        st->wrote |= FUZZ_BIT(reg);
    }
    switch (reg) {
    case DMA32_DEMO_REG_CTRL:
        if (val & DMA32_DEMO_CTRL_RESET) {
            st->reset = st->cleared = st->acked = true;
            st->reprogrammed = st->doorbell = false;
            st->ctrl = 0;
        } else {
            st->ctrl = val & DMA32_DEMO_CTRL_ENABLE;
        }
        break;
    case DMA32_DEMO_REG_INT_ACK:
        st->acked = true;
        break;
    case DMA32_DEMO_REG_RING_BASE_LO:
    case DMA32_DEMO_REG_RING_BASE_HI:
    case DMA32_DEMO_REG_RING_SIZE:
        st->reprogrammed = true;
        st->doorbell = false;
        break;
    case DMA32_DEMO_REG_DOORBELL:
        st->doorbell = true;
        st->doorbell_val = val;
        st->reprogrammed = false;
        break;
    case DMA32_DEMO_REG_CNT_CLEAR:
        st->cleared |= val & 1;
        break;
    }
}

/*
 * An address anywhere in the guest-physical map.  Config space writes go
 * only to functions that do not exist (bus 2 and up): a write into the
 * device's own or its bridge's config space moves the BAR, or unplugs or
 * resets the device, which the unplug-in-copy and bus-reset-in-copy cases
 * cover one at a time.
 */
static uint64_t pick_addr(GRand *r, Fuzz *f, bool write)
{
    Dev *d = f->d;

    switch (g_rand_int_range(r, 0, 20)) {
    case 0:
    case 1:
        return BUF_A + g_rand_int_range(r, 0, 16 * MiB_);
    case 2:
        return 2 * GiB_ - g_rand_int_range(r, 0, 64 * KiB_);
    case 3:
        return HIGH - g_rand_int_range(r, 0, 64 * KiB_);
    case 4:
        return HIGH + g_rand_int_range(r, 0, 16 * MiB_);
    case 5:
        return -(uint64_t)g_rand_int_range(r, 1, 64 * KiB_);
    case 6:
        return d->bar.addr + g_rand_int_range(r, 0, 0x1000);
    case 7:
        return RING_ADDR + g_rand_int_range(r, 0, 64 * KiB_);
    case 8:
        return MSI_ADDR;
    case 9:
        return (uint64_t)g_rand_int(r) << 32 | g_rand_int(r);
    case 10:
        /* RAM below the PCI hole */
        return g_rand_int(r) % MMCFG_BASE;
    case 11:
        if (write) {
            return MMCFG_BASE + (2 << 20) +
                   g_rand_int_range(r, 0, MMCFG_SIZE - (2 << 20));
        }
        return MMCFG_BASE + g_rand_int_range(r, 0, MMCFG_SIZE);
    case 12:
        /* the PCI hole: the BAR, and unassigned space around it */
        return 0xc0000000ULL + g_rand_int_range(r, 0, 0x3ec00000);
    case 13:
        return IOAPIC_BASE + g_rand_int_range(r, 0, 0x1100);
    case 14:
        return HPET_BASE + g_rand_int_range(r, 0, 0x1100);
    case 15:
        return LAPIC_BASE + g_rand_int_range(r, 0, 0x100000);
    case 16:
        return BIOS_BASE + g_rand_int_range(r, 0, 0x40000);
    case 17:
        /* RAM above 4 GiB, to its end at 8 GiB and past it */
        return HIGH + g_rand_int_range(r, 0, 0x7fffffff) * 2ULL;
    default:
        return BUF_B + g_rand_int_range(r, 0, 16 * MiB_);
    }
}

static uint32_t pick_len(GRand *r)
{
    unsigned x;

    x = g_rand_int_range(r, 0, 8192);
    if (x < 64) {
        return 0;
    } else if (x < 128) {
        return g_rand_int(r);
    } else if (x < 129) {
        return 64 * MiB_ + g_rand_int_range(r, 0, 2);
    } else if (x < 140) {
        return g_rand_int_range(r, 1, 4 * MiB_);
    }
    return g_rand_int_range(r, 1, 8 * KiB_);
}

static uint32_t pick_reg(GRand *r)
{
    static const uint32_t regs[] = {
        DMA32_DEMO_REG_CTRL, DMA32_DEMO_REG_INT_MASK, DMA32_DEMO_REG_INT_ACK,
        DMA32_DEMO_REG_RING_BASE_LO, DMA32_DEMO_REG_RING_BASE_HI,
        DMA32_DEMO_REG_RING_SIZE, DMA32_DEMO_REG_DOORBELL,
        DMA32_DEMO_REG_CNT_CLEAR, DMA32_DEMO_REG_INJECT,
        DMA32_DEMO_REG_STATUS, DMA32_DEMO_REG_RING_HEAD,
        DMA32_DEMO_REG_CNT_COMPLETED, DMA32_DEMO_REG_FAULT_INFO,
    };

    if (g_rand_int_range(r, 0, 8) == 0) {
        return g_rand_int_range(r, 0, 0x1000) & ~3u;
    }
    return regs[g_rand_int_range(r, 0, ARRAY_SIZE(regs))];
}

static uint32_t pick_reg_value(GRand *r, Fuzz *f, uint32_t reg)
{
    switch (reg) {
    case DMA32_DEMO_REG_CTRL:
        /* reset seldom, so that work gets done */
        return g_rand_int_range(r, 0, 200) ? g_rand_int_range(r, 0, 2) :
               g_rand_int(r);
    case DMA32_DEMO_REG_CNT_CLEAR:
        return g_rand_int_range(r, 0, 16) ? 0 : g_rand_int(r);
    case DMA32_DEMO_REG_RING_SIZE:
        return g_rand_int_range(r, 0, 10) ?
               1u << g_rand_int_range(r, 0, 14) : g_rand_int(r);
    case DMA32_DEMO_REG_RING_BASE_LO:
        /* the device writes completions into its ring */
        return g_rand_int_range(r, 0, 4) ? (uint32_t)RING_ADDR :
               (uint32_t)pick_addr(r, f, true);
    case DMA32_DEMO_REG_RING_BASE_HI:
        return g_rand_int_range(r, 0, 4) ? 0 : pick_addr(r, f, true) >> 32;
    case DMA32_DEMO_REG_DOORBELL:
        return g_rand_int_range(r, 0, 8) ? g_rand_int_range(r, 0, 64) :
               g_rand_int(r);
    case DMA32_DEMO_REG_INJECT:
        /* STALL lasts until reset: keep it rare */
        return g_rand_int_range(r, 0, 16) ? DMA32_DEMO_INJECT_BUS_ERROR :
               g_rand_int(r);
    default:
        return g_rand_int_range(r, 0, 2) ? g_rand_int_range(r, 0, 4) :
               g_rand_int(r);
    }
}

/*
 * FUZZ_IOMMU: a 39-bit identity map of the fuzzer's RAM (the first 2 MiB
 * with the ring and the MSI target, BUF_A, BUF_B read-only in its last
 * 2 MiB, 16 MiB above 4 GiB) and of single pages of the BAR, MMCONFIG,
 * IOAPIC and HPET; everything else faults in the IOMMU.
 */
static void fuzz_iommu_map_page(QTestState *qts, uint64_t l2[8],
                                uint64_t *next, uint64_t addr, bool ro)
{
    uint64_t l3 = VTD_TABLES + 0x2000;
    unsigned gi = addr >> 30;
    uint64_t l2e, l1;

    g_assert_cmpuint(gi, <, 8);
    if (!l2[gi]) {
        l2[gi] = *next;
        *next += 0x1000;
        qtest_writeq(qts, l3 + gi * 8, l2[gi] | 3);
    }
    l2e = l2[gi] + ((addr >> 21) & 511) * 8;
    l1 = qtest_readq(qts, l2e) & ~0xfffULL;
    if (!l1) {
        l1 = *next;
        *next += 0x1000;
        qtest_writeq(qts, l2e, l1 | 3);
    }
    qtest_writeq(qts, l1 + ((addr >> 12) & 511) * 8,
                 (addr & ~0xfffULL) | (ro ? 1 : 3));
}

static void fuzz_iommu_map_2m(QTestState *qts, uint64_t l2[8],
                              uint64_t *next, uint64_t addr, bool ro)
{
    g_autofree uint64_t *l1 = g_new(uint64_t, 512);
    uint64_t l1_addr;
    unsigned i;

    /* the table's first entry through the page helper, the rest at once */
    fuzz_iommu_map_page(qts, l2, next, addr, ro);
    l1_addr = qtest_readq(qts, l2[addr >> 30] + ((addr >> 21) & 511) * 8) &
              ~0xfffULL;
    for (i = 0; i < 512; i++) {
        l1[i] = cpu_to_le64((addr + i * 4096ULL) | (ro ? 1 : 3));
    }
    qtest_memwrite(qts, l1_addr, l1, 4096);
}

static void fuzz_iommu_setup(Fuzz *f)
{
    QTestState *qts = f->d->qts;
    uint64_t root = VTD_TABLES, ctx = root + 0x1000, l3 = root + 0x2000;
    uint64_t next = root + 0x3000;
    uint64_t l2[8] = { 0 };
    uint64_t a;

    qtest_memset(qts, root, 0, 0x100000);
    qtest_writeq(qts, root, ctx | 1);                   /* bus 0 */
    qtest_writeq(qts, ctx + DEV_DEVFN * 16, l3 | 1);
    qtest_writeq(qts, ctx + DEV_DEVFN * 16 + 8, 1 | 1 << 8); /* 39 bit */
    fuzz_iommu_map_2m(qts, l2, &next, 0, false);
    for (a = 0; a < 16 * MiB_; a += 2 * MiB_) {
        fuzz_iommu_map_2m(qts, l2, &next, BUF_A + a, false);
        fuzz_iommu_map_2m(qts, l2, &next, BUF_B + a,
                          a == 14 * MiB_);
        fuzz_iommu_map_2m(qts, l2, &next, HIGH + a, false);
    }
    fuzz_iommu_map_page(qts, l2, &next, f->d->bar.addr, false);
    fuzz_iommu_map_page(qts, l2, &next, MMCFG_BASE + (2 << 20), false);
    fuzz_iommu_map_page(qts, l2, &next, MMCFG_BASE, true);
    fuzz_iommu_map_page(qts, l2, &next, IOAPIC_BASE, false);
    fuzz_iommu_map_page(qts, l2, &next, HPET_BASE, false);
    g_assert_cmphex(next, <=, root + 0x100000);
    qtest_writeq(qts, VTD_BASE + VTD_RTADDR, root);
    qtest_writel(qts, VTD_BASE + VTD_GCMD, VTD_GCMD_SRTP);
    qtest_writel(qts, VTD_BASE + VTD_GCMD, VTD_GCMD_TE);
    g_assert(qtest_readl(qts, VTD_BASE + VTD_GSTS) & VTD_GCMD_TE);
}

static void fuzz_start(Fuzz *f, FuzzPlace place, const char *props,
                       guint32 seed)
{
    uint64_t mask;

    memset(f, 0, sizeof(*f));
    f->place = place;
    switch (place) {
    case FUZZ_ROOT_PORT:
        f->port = bridge_start("pcie-root-port,chassis=1", props);
        f->d = f->port->d;
        break;
    case FUZZ_PCI_BRIDGE:
        f->port = bridge_start("pci-bridge,chassis_nr=1,shpc=off", props);
        f->d = f->port->d;
        break;
    case FUZZ_IOMMU:
        f->d = dev_start_with("-device intel-iommu", props);
        mmcfg_enable(f->d);
        fuzz_iommu_setup(f);
        break;
    default:
        f->d = dev_start(props);
        mmcfg_enable(f->d);
        break;
    }
    f->msi_cap = qpci_find_capability(f->d->pdev, PCI_CAP_ID_MSI, 0);
    f->max_xfer = rd(f->d, DMA32_DEMO_REG_MAX_XFER);
    mask = UINT64_MAX;
    if (rd(f->d, DMA32_DEMO_REG_FEATURES) & DMA32_DEMO_FEAT_TRUNCATE) {
        /* one mask serves descriptors and ring */
        g_assert_cmpuint(rd(f->d, DMA32_DEMO_REG_DMA_BITS), ==,
                         rd(f->d, DMA32_DEMO_REG_RING_BITS));
        mask = (1ULL << rd(f->d, DMA32_DEMO_REG_DMA_BITS)) - 1;
    }
    guards_fill(&f->guards, f->d->qts, mask, seed ^ 0x9a4d);
}

static void fuzz_stop(Fuzz *f)
{
    if (f->port) {
        port_stop(f->port);
    } else {
        dev_stop(f->d);
    }
}

static const char *const fuzz_place_names[] = {
    [FUZZ_ROOT_BUS] = "root bus",
    [FUZZ_ROOT_PORT] = "behind pcie-root-port",
    [FUZZ_PCI_BRIDGE] = "behind pci-bridge",
    [FUZZ_IOMMU] = "behind translating intel-iommu",
};

static uint64_t fuzz_run(FuzzPlace place, const char *props, guint32 seed,
                         uint64_t ops, uint64_t secs)
{
    gint64 t0 = g_get_monotonic_time();
    gint64 end = t0 + secs * G_USEC_PER_SEC;
    uint64_t seen[DMA32_DEMO_NR_COUNTERS] = { 0 };
    uint32_t old[SNAP_SIZE / 4];
    uint64_t n = 0;
    Fuzz fz, *f = &fz;
    Dev *d;
    GRand *r;
    Done done;
    unsigned i;

    fuzz_start(f, place, props, seed);
    d = f->d;
    r = g_rand_new_with_seed(seed);
    g_test_message("randomized loop on dma32-demo,%s %s: seed 0x%x, %"
                   PRIu64 " ops, %" PRIu64 " s", props ? props : "",
                   fuzz_place_names[place], seed, ops, secs);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    fuzz_snapshot(f, f->snap);
    memcpy(f->ident, f->snap, sizeof(f->ident));
    while (n < ops || (secs && g_get_monotonic_time() < end)) {
        unsigned what;
        FuzzStep st = { .ctrl = -1 };

        what = g_rand_int_range(r, 0, 100);
        if (what < 35) {
            Desc x;

            /* one draw after the other: a seed gives one sequence */
            x.op = g_rand_int_range(r, 0, 16) ?
                   g_rand_int_range(r, 1, 4) : g_rand_int(r);
            x.len = pick_len(r);
            x.src = pick_addr(r, f, false);
            x.dst = pick_addr(r, f, true);
            x.seed = g_rand_int(r);
            x.reserved0 = g_rand_int_range(r, 0, 32) ? 0 : 1;
            if (!g_rand_int_range(r, 0, 4)) {
                x.dst = guards_aim(r, x.len);
            }
            if (x.len <= f->max_xfer) {
                guards_clear(&f->guards, &x.dst, &x.len);
            }
            d->ring = RING_ADDR;
            desc_write(d, g_rand_int_range(r, 0, 64), &x);
        } else if (what < 55) {
            fuzz_wr(f, &st, DMA32_DEMO_REG_DOORBELL,
                    g_rand_int_range(r, 0, 8) ?
                    g_rand_int_range(r, 0, 64) : g_rand_int(r));
        } else if (what < 70) {
            uint32_t reg;

            reg = pick_reg(r);
            fuzz_wr(f, &st, reg, pick_reg_value(r, f, reg));
        } else if (what < 90) {
            rd(d, pick_reg(r));
        } else if (what < 93) {
            /* recover: reprogram the ring (clears HALTED), enable */
            uint32_t size = 1u << g_rand_int_range(r, 1, 7);

            fuzz_wr(f, &st, DMA32_DEMO_REG_RING_BASE_LO, (uint32_t)RING_ADDR);
            fuzz_wr(f, &st, DMA32_DEMO_REG_RING_BASE_HI, RING_ADDR >> 32);
            fuzz_wr(f, &st, DMA32_DEMO_REG_RING_SIZE, size);
            fuzz_wr(f, &st, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
            d->ring_size = size;
        } else if (what < 94 && !g_rand_int_range(r, 0, 8)) {
            fuzz_wr(f, &st, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
            fuzz_wr(f, &st, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
        } else if (what < 96) {
            /*
             * MSI on/off with random data, aimed at RAM, at the device's
             * own BAR, at MMCONFIG where no function exists (bus 2 on) or
             * at the LAPIC window (there with fixed delivery and a random
             * vector: INIT, SMI or NMI would be the CPU's business, not
             * the device's)
             */
            uint32_t data = g_rand_int(r) & 0xffff;
            uint64_t a;

            switch (g_rand_int_range(r, 0, 4)) {
            case 0:
                a = MSI_ADDR;
                break;
            case 1:
                a = d->bar.addr + (g_rand_int_range(r, 0, SNAP_SIZE) & ~3);
                break;
            case 2:
                a = MMCFG_BASE + (2 << 20) +
                    (g_rand_int_range(r, 0, MMCFG_SIZE - (2 << 20)) & ~3);
                break;
            default:
                a = LAPIC_BASE;
                data &= 0xff;
                break;
            }
            qpci_config_writel(d->pdev, f->msi_cap + PCI_MSI_ADDRESS_LO, a);
            qpci_config_writel(d->pdev, f->msi_cap + PCI_MSI_ADDRESS_HI, 0);
            qpci_config_writew(d->pdev, f->msi_cap + PCI_MSI_DATA_64, data);
            qpci_config_writew(d->pdev, f->msi_cap + PCI_MSI_FLAGS,
                               g_rand_int_range(r, 0, 2));
        } else if (what < 97) {
            qpci_config_writew(d->pdev, PCI_COMMAND,
                               PCI_COMMAND_MEMORY |
                               (g_rand_int_range(r, 0, 4) ?
                                PCI_COMMAND_MASTER : 0));
        } else {
            qtest_readl(d->qts, RING_ADDR + g_rand_int_range(r, 0, 64) * 64 +
                        DMA32_DEMO_DESC_STATUS_OFF);
        }
        n++;
        memcpy(old, f->snap, sizeof(old));
        fuzz_snapshot(f, f->snap);
        fuzz_check(f, n, old, &st);
        if (n % GUARD_EVERY == 0) {
            fuzz_check_guards(f, n);
        }
        for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
            uint64_t v = snap_cnt(f->snap, i), o = snap_cnt(old, i);

            seen[i] += v >= o ? v - o : v;
        }
    }
    fuzz_check_guards(f, n);
    g_test_message("randomized loop: %" PRIu64 " ops done in %.1f s, "
                   "%.0f ops/s; %" PRIu64 " descriptors completed, %"
                   PRIu64 " bytes read, %" PRIu64 " written, %" PRIu64
                   " address faults, %" PRIu64 " bus errors, %" PRIu64
                   " invalid", n, (g_get_monotonic_time() - t0) / 1e6,
                   n / ((g_get_monotonic_time() - t0) / 1e6),
                   seen[0], seen[1], seen[2], seen[3], seen[4], seen[5]);

    /* QEMU is alive and the device still works after a reset */
    qpci_config_writew(d->pdev, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    qpci_config_writew(d->pdev, f->msi_cap + PCI_MSI_FLAGS, 0);
    wr(d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
    check_idle(d);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 4096, 0, BUF_A, 77);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, 4096, 77);
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'query-status'}"));
    g_rand_free(r);
    fuzz_stop(f);
    return n;
}

/*
 * DMA32_DEMO_FUZZ_OPS operations (100000 under -m slow) with a fixed
 * seed, split over the places the device can sit in and two
 * configurations: the default device on the root bus, a truncating 31-bit
 * one (every access lands in RAM), the default behind a pcie-root-port, a
 * 64-bit one behind a pci-bridge, and the default behind a translating
 * VT-d.  The DMA32_DEMO_FUZZ_* variables set length, time and seed (see
 * the file header).
 */
static void test_random(void)
{
    static const struct {
        FuzzPlace place;
        const char *props;
        unsigned share;         /* in percent */
    } runs[] = {
        { FUZZ_ROOT_BUS, NULL, 25 },
        { FUZZ_ROOT_BUS, "overflow=truncate,dma-bits=31,ring-bits=31", 15 },
        { FUZZ_ROOT_PORT, NULL, 20 },
        { FUZZ_PCI_BRIDGE, "dma-bits=64", 20 },
        { FUZZ_IOMMU, NULL, 20 },
    };
    const char *env_ops = g_getenv("DMA32_DEMO_FUZZ_OPS");
    const char *env_secs = g_getenv("DMA32_DEMO_FUZZ_SECONDS");
    const char *env_seed = g_getenv("DMA32_DEMO_FUZZ_SEED");
    uint64_t ops = env_ops ? g_ascii_strtoull(env_ops, NULL, 0) : 100000;
    uint64_t secs = env_secs ? g_ascii_strtoull(env_secs, NULL, 0) : 0;
    guint32 seed = env_seed ? g_ascii_strtoull(env_seed, NULL, 0) : 0xd3a32;
    gint64 t0 = g_get_monotonic_time();
    uint64_t n = 0;
    double s;
    unsigned i;

    for (i = 0; i < ARRAY_SIZE(runs); i++) {
        n += fuzz_run(runs[i].place, runs[i].props, seed + i,
                      (ops * runs[i].share + 99) / 100,
                      (secs * runs[i].share + 99) / 100);
    }
    s = (g_get_monotonic_time() - t0) / 1e6;
    g_test_message("randomized loop: %" PRIu64 " operations in total in "
                   "%.1f s, %.0f ops/s", n, s, n / s);
}

void dma32_demo_add_fuzz_tests(void)
{
    /* the fuzz suite runs it with its own DMA32_DEMO_FUZZ_OPS */
    if (g_test_slow() || g_getenv("DMA32_DEMO_FUZZ_OPS")) {
        qtest_add_func("/dma32-demo/random", test_random);
    }
}
