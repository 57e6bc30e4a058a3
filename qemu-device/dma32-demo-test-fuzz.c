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
 * behind a pcie-root-port, behind a conventional pci-bridge, behind a
 * translating VT-d with page tables in RAM, or on the root bus next to a
 * second dma32-demo whose BAR each one's DMA and MSI reach (FUZZ_PAIR).
 * Descriptors aim at the whole guest-physical map:
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
    FUZZ_PAIR,
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
/*
 * FUZZ_PAIR: the second device at 05.0, its BAR right after the first's
 * (so that one qtest read takes both devices' registers at once, with no
 * bottom half in between), its ring in the first's ring area
 */
#define PAIR_DEVFN          QPCI_DEVFN(5, 0)
#define PAIR_RING           (RING_ADDR + 0x8000)
/* FUZZ_IOMMU: 2 MiB of IOVA that translate to the middle of BUF_A */
#define VTD_ALIAS_IOVA      0x40000000ULL
#define VTD_ALIAS_GPA       (BUF_A + 4 * MiB_)

/* One device of the run */
typedef struct FuzzDev {
    Dev *d;
    uint64_t ring;              /* where the fuzzer keeps its ring */
    uint8_t msi_cap;
    uint64_t abort_base;        /* bus errors when PCI_STATUS was cleared */
    uint32_t max_xfer;
    uint32_t ident[FUZZ_IDENT_REGS];    /* the read-only block at first */
    uint32_t snap[SNAP_SIZE / 4];
    uint32_t old[SNAP_SIZE / 4];        /* the snapshot before */
    /* for the VT-d checks */
    uint64_t msi_addr[3];       /* the MSI address, and the two before */
    bool master;                /* PCI_COMMAND.MASTER */
    uint64_t inject_op;         /* INJECT.BUS_ERROR maybe pending since */
    uint64_t errs_before;       /* bus errors in the snapshot before last */
    bool cleared_before;        /* counters cleared in the last operation */
    uint64_t vtd_want;          /* the operation that wants a VT-d record */
} FuzzDev;

typedef struct Fuzz {
    FuzzDev dev[2];
    unsigned ndev;              /* 2 for FUZZ_PAIR */
    Port *port;                 /* behind a bridge, else NULL */
    FuzzPlace place;
    Vtd vtd;                    /* FUZZ_IOMMU: what the IOMMU maps */
    Guards guards;              /* RAM no transfer may touch */
    uint64_t peer_checks;       /* checks that took the peer's DMA in */
    uint64_t peer_writes;       /* ... and found a register it changed */
    uint64_t vtd_faults;        /* VT-d fault records checked */
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
    bool config;                /* its config space was written */
    bool peer;                  /* the peer's DMA may have written it */
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
 * every counter is read as a consistent snapshot.  FUZZ_PAIR reads both
 * BARs at once (the unknown registers between them read as 0), so that
 * both snapshots are of the same moment.
 */
static void fuzz_snapshot(Fuzz *f)
{
    uint8_t raw[DMA32_DEMO_BAR0_SIZE + SNAP_SIZE];
    unsigned i, j;

    if (f->ndev > 1) {
        /* base64 (b64read) costs QEMU a fraction of hex for 4 KiB */
        qtest_bufread(f->dev[0].d->qts, f->dev[0].d->bar.addr, raw,
                      DMA32_DEMO_BAR0_SIZE + SNAP_SIZE);
    } else {
        qtest_memread(f->dev[0].d->qts, f->dev[0].d->bar.addr, raw,
                      SNAP_SIZE);
    }
    for (j = 0; j < f->ndev; j++) {
        for (i = 0; i < SNAP_SIZE / 4; i++) {
            f->dev[j].snap[i] = ldl_le_p(raw + j * DMA32_DEMO_BAR0_SIZE +
                                         i * 4);
        }
    }
}

/* Registers that change only when written (or by CTRL.RESET) */
static const uint32_t sw_regs[] = {
    DMA32_DEMO_REG_CTRL, DMA32_DEMO_REG_INT_MASK,
    DMA32_DEMO_REG_RING_BASE_LO, DMA32_DEMO_REG_RING_BASE_HI,
    DMA32_DEMO_REG_RING_SIZE,
};

static bool ring_valid(uint64_t base, uint32_t size)
{
    return size && size <= 4096 && !(size & (size - 1)) && !(base & 63);
}

static void fuzz_fail(FuzzDev *x, uint64_t n, const char *what)
{
    g_test_message("fuzz: operation %" PRIu64 ": %s; device at 0x%" PRIx64
                   ": STATUS 0x%x HEAD %u TAIL %u RING_SIZE %u FAULT_INFO "
                   "0x%x FAULT_ADDR 0x%x%08x INT_STATUS 0x%x", n, what,
                   x->d->bar.addr,
                   snap_reg(x->snap, DMA32_DEMO_REG_STATUS),
                   snap_reg(x->snap, DMA32_DEMO_REG_RING_HEAD),
                   snap_reg(x->snap, DMA32_DEMO_REG_RING_TAIL),
                   snap_reg(x->snap, DMA32_DEMO_REG_RING_SIZE),
                   snap_reg(x->snap, DMA32_DEMO_REG_FAULT_INFO),
                   snap_reg(x->snap, DMA32_DEMO_REG_FAULT_ADDR_HI),
                   snap_reg(x->snap, DMA32_DEMO_REG_FAULT_ADDR_LO),
                   snap_reg(x->snap, DMA32_DEMO_REG_INT_STATUS));
    g_assert_not_reached();
}

#define FUZZ_CHECK(x, n, cond) \
    do { \
        if (!(cond)) { \
            fuzz_fail(x, n, #cond); \
        } \
    } while (0)

/*
 * A bus error since PCI_STATUS was last cleared left a received-abort bit
 * there.  The bottom half runs between any two qtest commands, so the
 * count to compare with is read after clearing the bits again (the next
 * operation's checks then span the clearing too, which writes no
 * register).
 */
static void fuzz_check_abort(FuzzDev *x, uint64_t n)
{
    const uint16_t abort = PCI_STATUS_REC_MASTER_ABORT |
                           PCI_STATUS_REC_TARGET_ABORT;
    uint16_t ps;

    ps = qpci_config_readw(x->d->pdev, PCI_STATUS);
    if (!(ps & abort)) {
        fuzz_fail(x, n, "a bus error without an abort in PCI_STATUS");
    }
    qpci_config_writew(x->d->pdev, PCI_STATUS, abort);
    x->abort_base = rd64(x->d, DMA32_DEMO_REG_CNT_BUS_ERRORS);
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
 * FUZZ_PAIR: where the peer's DMA or MSI may have reached the device
 * (@st->peer), its registers count as written by it: everything written
 * may have changed, counters and INT_STATUS may have been cleared, the
 * ring reprogrammed or the device reset, and what the fuzzer wrote may
 * have been overwritten after it.
 */
static void fuzz_check(FuzzDev *x, uint64_t n, const FuzzStep *st_in)
{
    FuzzStep eff = *st_in, *st = &eff;
    const uint32_t *s = x->snap, *old = x->old;
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
    bool peer = st->peer;
    bool rewound = st->reset || st->reprogrammed || peer;
    uint64_t delta[DMA32_DEMO_NR_COUNTERS];
    uint64_t faults = 0;
    unsigned i;

    if (peer) {
        st->wrote = UINT64_MAX;
        st->cleared = st->acked = true;
    }
    FUZZ_CHECK(x, n, snap_reg(s, DMA32_DEMO_REG_ID) == DMA32_DEMO_ID_MAGIC);
    FUZZ_CHECK(x, n, !(ctrl & ~DMA32_DEMO_CTRL_ENABLE));
    FUZZ_CHECK(x, n, !(ist & ~DMA32_DEMO_INT_ALL));
    FUZZ_CHECK(x, n, !(snap_reg(s, DMA32_DEMO_REG_INT_MASK) &
                       ~DMA32_DEMO_INT_ALL));
    FUZZ_CHECK(x, n, !(status & ~(DMA32_DEMO_STATUS_ENABLED |
                                  DMA32_DEMO_STATUS_BUSY |
                                  DMA32_DEMO_STATUS_HALTED)));
    FUZZ_CHECK(x, n, !(status & DMA32_DEMO_STATUS_ENABLED) == !ctrl);
    FUZZ_CHECK(x, n, !(status & DMA32_DEMO_STATUS_BUSY) == (head == tail));
    if (ring_valid(base, size)) {
        FUZZ_CHECK(x, n, head < size && tail < size);
    } else {
        FUZZ_CHECK(x, n, head == 0 && tail == 0);
    }
    FUZZ_CHECK(x, n, DMA32_DEMO_FAULT_STATUS(info) <= DMA32_DEMO_ST_INVALID &&
               DMA32_DEMO_FAULT_STATUS(info) != DMA32_DEMO_ST_OK &&
               DMA32_DEMO_FAULT_SOURCE(info) <= DMA32_DEMO_FAULT_SRC_DST);
    FUZZ_CHECK(x, n, !halted ||
               DMA32_DEMO_FAULT_SOURCE(info) == DMA32_DEMO_FAULT_SRC_RING);
    if (st->ctrl >= 0 && !peer) {
        FUZZ_CHECK(x, n, ctrl == st->ctrl);
    }
    for (i = 0; i < FUZZ_IDENT_REGS; i++) {
        FUZZ_CHECK(x, n, s[i] == x->ident[i]);
    }
    if (!st->reset) {
        for (i = 0; i < ARRAY_SIZE(sw_regs); i++) {
            FUZZ_CHECK(x, n, (st->wrote & FUZZ_BIT(sw_regs[i])) ||
                       snap_reg(s, sw_regs[i]) == snap_reg(old, sw_regs[i]));
        }
        FUZZ_CHECK(x, n, st->reprogrammed || tail == old_tail ||
                   (st->wrote & FUZZ_BIT(DMA32_DEMO_REG_DOORBELL)));
    }

    if (st->reset && !peer) {
        FUZZ_CHECK(x, n, size == 0 && base == 0 && info == 0 && ist == 0 &&
                   !halted && snap_reg(s, DMA32_DEMO_REG_INT_MASK) == 0);
        for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
            FUZZ_CHECK(x, n, snap_cnt(s, i) == 0);
        }
    }
    if (st->reprogrammed && !st->reset && !peer) {
        FUZZ_CHECK(x, n, head == 0 && tail == 0 && !halted);
    }
    if (st->doorbell && !rewound) {
        if (old_status & DMA32_DEMO_STATUS_HALTED) {
            FUZZ_CHECK(x, n, halted && tail == old_tail);
        } else {
            FUZZ_CHECK(x, n, tail == st->doorbell_val ||
                       (halted && tail == old_tail));
        }
    }
    if (!rewound) {
        if (old_status & DMA32_DEMO_STATUS_HALTED) {
            FUZZ_CHECK(x, n, halted && head == old_head);
        }
        if (!(old_status & DMA32_DEMO_STATUS_ENABLED) && st->ctrl != 1) {
            FUZZ_CHECK(x, n, head == old_head);
        }
    }
    if (!st->acked) {
        FUZZ_CHECK(x, n, !(snap_reg(old, DMA32_DEMO_REG_INT_STATUS) & ~ist));
    }
    if (st->cleared) {
        x->abort_base = MIN(x->abort_base, snap_cnt(s, 4));
        return;
    }
    for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
        FUZZ_CHECK(x, n, snap_cnt(s, i) >= snap_cnt(old, i));
        delta[i] = snap_cnt(s, i) - snap_cnt(old, i);
    }
    faults = delta[3] + delta[4] + delta[5];
    if (!st->acked) {
        FUZZ_CHECK(x, n, !delta[0] || (ist & DMA32_DEMO_INT_DONE));
        FUZZ_CHECK(x, n, !faults || (ist & DMA32_DEMO_INT_ERROR));
    }
    if (!rewound && head != old_head) {
        FUZZ_CHECK(x, n, delta[0] + faults > 0);
    }
    if (snap_cnt(s, 4) > x->abort_base) {
        fuzz_check_abort(x, n);
    }
}

/*
 * A ring base that would put any of the largest ring's descriptors on a
 * guard is the fuzzer's ring instead (both halves written).
 */
static bool fuzz_ring_clear(Fuzz *f, FuzzDev *x, FuzzStep *st,
                            uint32_t reg, uint32_t val)
{
    uint64_t lo = snap_reg(x->snap, DMA32_DEMO_REG_RING_BASE_LO);
    uint64_t hi = snap_reg(x->snap, DMA32_DEMO_REG_RING_BASE_HI);
    uint32_t len = snap_reg(x->snap, DMA32_DEMO_REG_MAX_RING) *
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
    wr(x->d, DMA32_DEMO_REG_RING_BASE_LO, (uint32_t)x->ring);
    wr(x->d, DMA32_DEMO_REG_RING_BASE_HI, x->ring >> 32);
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
        fuzz_fail(&f->dev[0], n, "a guard region in RAM changed");
    }
}

/* A register write, noted in @st */
static void fuzz_wr(Fuzz *f, FuzzDev *x, FuzzStep *st, uint32_t reg,
                    uint32_t val)
{
    if ((reg != DMA32_DEMO_REG_RING_BASE_LO &&
         reg != DMA32_DEMO_REG_RING_BASE_HI) ||
        !fuzz_ring_clear(f, x, st, reg, val)) {
        wr(x->d, reg, val);
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
    case DMA32_DEMO_REG_INJECT:
        if (val & DMA32_DEMO_INJECT_BUS_ERROR) {
            x->inject_op = UINT64_MAX;
        }
        break;
    }
}

/*
 * An address anywhere in the guest-physical map.  Config space writes go
 * only to functions that do not exist (bus 2 and up): a write into the
 * device's own or its bridge's config space moves the BAR, or unplugs or
 * resets the device, which the unplug-in-copy and bus-reset-in-copy cases
 * cover one at a time.  FUZZ_PAIR aims a quarter of its addresses at
 * either device's registers, and the BAR case at either device, and
 * behind the IOMMU the last case goes at times to the window that
 * translates elsewhere.
 */
static uint64_t pick_addr(GRand *r, Fuzz *f, FuzzDev *x, bool write)
{
    Dev *d = x->d;

    if (f->ndev > 1 && !g_rand_int_range(r, 0, 4)) {
        d = f->dev[g_rand_int_range(r, 0, 2)].d;
        return d->bar.addr + g_rand_int_range(r, 0, SNAP_SIZE);
    }
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
        if (f->ndev > 1) {
            d = f->dev[g_rand_int_range(r, 0, 2)].d;
            if (g_rand_int_range(r, 0, 2)) {
                return d->bar.addr + g_rand_int_range(r, 0, SNAP_SIZE);
            }
        }
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
    case 18:
        if (f->place == FUZZ_IOMMU && g_rand_int_range(r, 0, 2)) {
            return VTD_ALIAS_IOVA + g_rand_int_range(r, 0, 2 * MiB_ + 4096);
        }
        /* fall through */
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

static uint32_t pick_reg_value(GRand *r, Fuzz *f, FuzzDev *x, uint32_t reg)
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
        return g_rand_int_range(r, 0, 4) ? (uint32_t)x->ring :
               (uint32_t)pick_addr(r, f, x, true);
    case DMA32_DEMO_REG_RING_BASE_HI:
        return g_rand_int_range(r, 0, 4) ? 0 :
               pick_addr(r, f, x, true) >> 32;
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
 * 2 MiB, 16 MiB above 4 GiB), of single pages of the BAR, MMCONFIG (the
 * first read-only), IOAPIC and HPET, and VTD_ALIAS_IOVA's 2 MiB onto the
 * middle of BUF_A (no guard there); everything else faults in the IOMMU.
 */
static void fuzz_iommu_setup(Fuzz *f)
{
    const unsigned rw = VTD_PTE_R | VTD_PTE_W;
    Vtd *v = &f->vtd;
    uint64_t a;
    unsigned i;

    vtd_init(v, f->dev[0].d->qts, VTD_TABLES, 0x100000, DEV_DEVFN);
    vtd_map(v, 0, 0, 2 * MiB_, rw);
    vtd_map(v, BUF_A, BUF_A, 16 * MiB_, rw);
    vtd_map(v, BUF_B, BUF_B, 14 * MiB_, rw);
    vtd_map(v, BUF_B + 14 * MiB_, BUF_B + 14 * MiB_, 2 * MiB_, VTD_PTE_R);
    vtd_map(v, HIGH, HIGH, 16 * MiB_, rw);
    vtd_map(v, VTD_ALIAS_IOVA, VTD_ALIAS_GPA, 2 * MiB_, rw);
    vtd_map(v, f->dev[0].d->bar.addr, f->dev[0].d->bar.addr, 4096, rw);
    vtd_map(v, MMCFG_BASE + (2 << 20), MMCFG_BASE + (2 << 20), 4096, rw);
    vtd_map(v, MMCFG_BASE, MMCFG_BASE, 4096, VTD_PTE_R);
    vtd_map(v, IOAPIC_BASE, IOAPIC_BASE, 4096, rw);
    vtd_map(v, HPET_BASE, HPET_BASE, 4096, rw);
    for (i = 0; i < NR_GUARDS; i++) {
        a = guard_addr(i);
        g_assert(a + GUARD_SIZE <= VTD_ALIAS_GPA ||
                 a >= VTD_ALIAS_GPA + 2 * MiB_);
    }
    vtd_enable(v);
}

/*
 * FUZZ_IOMMU, after every operation and before the snapshot: a fault the
 * IOMMU recorded (its one fault recording register; cleared when read, so
 * that the next fault is recorded too, and a fault between reading and
 * clearing is one of the same requester, which VT-d folds into the one
 * pending) is the device's (00:04.0), of a kind that translation raises
 * (no read or no write permission, beyond the 39-bit width) and on a page
 * that really lacks that permission; no fault overflowed.
 */
typedef struct VtdRecord {
    bool seen;
    bool read;
    uint64_t page;
} VtdRecord;

static void fuzz_vtd_read(Fuzz *f, FuzzDev *x, uint64_t n, VtdRecord *rec)
{
    QTestState *qts = x->d->qts;
    uint32_t fsts = qtest_readl(qts, VTD_BASE + VTD_FSTS);
    uint64_t hi;
    unsigned fr, perm;

    FUZZ_CHECK(x, n, !(fsts & VTD_FSTS_PFO));
    rec->seen = fsts & VTD_FSTS_PPF;
    if (!rec->seen) {
        return;
    }
    rec->page = qtest_readq(qts, VTD_BASE + VTD_FRCD);
    hi = qtest_readq(qts, VTD_BASE + VTD_FRCD + 8);
    rec->read = hi & VTD_FRCD_T;
    fr = VTD_FRCD_FR(hi);
    perm = vtd_perm(&f->vtd, rec->page);
    FUZZ_CHECK(x, n, hi & VTD_FRCD_F);
    FUZZ_CHECK(x, n, VTD_FRCD_SID(hi) == DEV_DEVFN);
    FUZZ_CHECK(x, n, fr == (rec->read ? VTD_FR_READ : VTD_FR_WRITE) ||
               (fr == VTD_FR_BEYOND_MGAW && rec->page >> 39));
    FUZZ_CHECK(x, n, !(perm & (rec->read ? VTD_PTE_R : VTD_PTE_W)));
    /* F is write-1-to-clear; PPF follows it */
    qtest_writel(qts, VTD_BASE + VTD_FRCD + 12, 1u << 31);
    f->vtd_faults++;
}

/*
 * ... and after the snapshot: the device saw the recorded fault as a bus
 * error since the snapshot before the last (the fault came after the
 * clearing before, which came after that snapshot), or it was the
 * device's MSI write (to an address set in those operations or before).
 * Conversely, when the device's latest fault is a bus error of this
 * operation at a page without the permission the access needed (read for
 * a source, write for a destination, any for the ring), VT-d recorded a
 * fault, seen now or (when it came after the read) at the next operation:
 * unless bus mastering changed (with it off nothing reaches the IOMMU),
 * an injected bus error may be the one reported, or the address is in the
 * interrupt window (0xfeexxxxx), which VT-d does not translate.
 */
static void fuzz_check_vtd(Fuzz *f, FuzzDev *x, uint64_t n,
                           const FuzzStep *st, const VtdRecord *rec)
{
    uint32_t info = snap_reg(x->snap, DMA32_DEMO_REG_FAULT_INFO);
    uint64_t errs = snap_cnt(x->snap, 4), old_errs = snap_cnt(x->old, 4);
    bool new_errs = st->cleared ? errs > 0 : errs > old_errs;
    bool moved = snap_cnt(x->snap, 1) != snap_cnt(x->old, 1) ||
                 snap_cnt(x->snap, 2) != snap_cnt(x->old, 2);
    unsigned i;

    if (rec->seen) {
        bool msi = false;

        for (i = 0; i < ARRAY_SIZE(x->msi_addr); i++) {
            msi |= !rec->read && rec->page == (x->msi_addr[i] & ~0xfffULL);
        }
        FUZZ_CHECK(x, n, st->cleared || x->cleared_before ||
                   errs > x->errs_before || msi);
    } else if (x->vtd_want) {
        fuzz_fail(x, x->vtd_want, "a bus error where VT-d denies access, "
                  "but no fault recorded");
    }
    x->vtd_want = 0;
    if (new_errs && !st->cleared && !st->config && x->master &&
        !x->inject_op &&
        DMA32_DEMO_FAULT_STATUS(info) == DMA32_DEMO_ST_BUS_ERROR) {
        uint64_t addr = snap_reg(x->snap, DMA32_DEMO_REG_FAULT_ADDR_LO) |
            (uint64_t)snap_reg(x->snap, DMA32_DEMO_REG_FAULT_ADDR_HI) << 32;
        unsigned perm = vtd_perm(&f->vtd, addr);
        bool denied;

        switch (DMA32_DEMO_FAULT_SOURCE(info)) {
        case DMA32_DEMO_FAULT_SRC_SRC:
            denied = !(perm & VTD_PTE_R);
            break;
        case DMA32_DEMO_FAULT_SRC_DST:
            denied = !(perm & VTD_PTE_W);
            break;
        default:
            /* the ring: a fetch or a write-back */
            denied = !perm;
            break;
        }
        /* VT-d takes the interrupt window aside, untranslated */
        if (denied && !rec->seen && (addr & ~0xfffffULL) != LAPIC_BASE) {
            x->vtd_want = n;
        }
    }
    x->errs_before = old_errs;
    x->cleared_before = st->cleared;
    /*
     * A pending injected bus error goes to the next data access: after a
     * later operation that moved data or had a bus error it is gone.
     */
    if (x->inject_op == UINT64_MAX) {
        x->inject_op = n;
    } else if (x->inject_op && x->inject_op < n && !st->cleared &&
               (moved || (new_errs &&
                DMA32_DEMO_FAULT_SOURCE(info) >= DMA32_DEMO_FAULT_SRC_SRC))) {
        x->inject_op = 0;
    }
}

static void fuzz_dev_init(FuzzDev *x, Dev *d, uint64_t ring)
{
    x->d = d;
    x->ring = ring;
    x->msi_cap = qpci_find_capability(d->pdev, PCI_CAP_ID_MSI, 0);
    x->max_xfer = rd(d, DMA32_DEMO_REG_MAX_XFER);
    x->master = true;
}

static void fuzz_start(Fuzz *f, FuzzPlace place, const char *props,
                       guint32 seed)
{
    Dev *d;
    uint64_t mask;

    memset(f, 0, sizeof(*f));
    f->place = place;
    f->ndev = 1;
    switch (place) {
    case FUZZ_ROOT_PORT:
        f->port = bridge_start("pcie-root-port,chassis=1", props);
        d = f->port->d;
        break;
    case FUZZ_PCI_BRIDGE:
        f->port = bridge_start("pci-bridge,chassis_nr=1,shpc=off", props);
        d = f->port->d;
        break;
    case FUZZ_IOMMU:
        d = dev_start_with("-device intel-iommu", props);
        mmcfg_enable(d);
        break;
    case FUZZ_PAIR:
        d = dev_start_with("-device dma32-demo,id=d1,addr=05.0", props);
        mmcfg_enable(d);
        fuzz_dev_init(&f->dev[1], dev_other(d, PAIR_DEVFN,
                                            d->bar.addr + DMA32_DEMO_BAR0_SIZE),
                      PAIR_RING);
        f->ndev = 2;
        break;
    default:
        d = dev_start(props);
        mmcfg_enable(d);
        break;
    }
    fuzz_dev_init(&f->dev[0], d, RING_ADDR);
    if (place == FUZZ_IOMMU) {
        fuzz_iommu_setup(f);
    }
    mask = UINT64_MAX;
    if (rd(d, DMA32_DEMO_REG_FEATURES) & DMA32_DEMO_FEAT_TRUNCATE) {
        /* one mask serves descriptors and ring */
        g_assert_cmpuint(rd(d, DMA32_DEMO_REG_DMA_BITS), ==,
                         rd(d, DMA32_DEMO_REG_RING_BITS));
        mask = (1ULL << rd(d, DMA32_DEMO_REG_DMA_BITS)) - 1;
    }
    guards_fill(&f->guards, d->qts, mask, seed ^ 0x9a4d);
}

static void fuzz_stop(Fuzz *f)
{
    if (f->ndev > 1) {
        dev_other_free(f->dev[1].d);
    }
    if (f->place == FUZZ_IOMMU) {
        vtd_free(&f->vtd);
    }
    if (f->port) {
        port_stop(f->port);
    } else {
        dev_stop(f->dev[0].d);
    }
}

static const char *const fuzz_place_names[] = {
    [FUZZ_ROOT_BUS] = "root bus",
    [FUZZ_ROOT_PORT] = "behind pcie-root-port",
    [FUZZ_PCI_BRIDGE] = "behind pci-bridge",
    [FUZZ_IOMMU] = "behind translating intel-iommu",
    [FUZZ_PAIR] = "root bus, two devices",
};

/* FUZZ_PAIR: one of them changed, not by the fuzzer: the peer's doing */
static bool fuzz_peer_wrote(const FuzzDev *x, const FuzzStep *st)
{
    unsigned i;

    if (st->reset) {
        return false;
    }
    for (i = 0; i < ARRAY_SIZE(sw_regs); i++) {
        if (!(st->wrote & FUZZ_BIT(sw_regs[i])) &&
            snap_reg(x->snap, sw_regs[i]) != snap_reg(x->old, sw_regs[i])) {
            return true;
        }
    }
    return false;
}

static bool snap_running(const uint32_t *snap)
{
    uint32_t status = snap_reg(snap, DMA32_DEMO_REG_STATUS);

    return (status & DMA32_DEMO_STATUS_ENABLED) &&
           (status & DMA32_DEMO_STATUS_BUSY) &&
           !(status & DMA32_DEMO_STATUS_HALTED);
}

/*
 * FUZZ_PAIR: may the device have done DMA or sent an MSI in this
 * operation (which may have written the peer's registers)?  Only when
 * the fuzzer wrote its registers or config space, when it had work before
 * or after, or when the engine left a trace: HEAD, INT_STATUS, the fault
 * registers or a counter changed.  Both snapshots are of one moment, so
 * that a run between them shows in one or the other.
 */
static bool fuzz_active(const FuzzDev *x, const FuzzStep *st)
{
    static const uint32_t traces[] = {
        DMA32_DEMO_REG_RING_HEAD, DMA32_DEMO_REG_INT_STATUS,
        DMA32_DEMO_REG_FAULT_ADDR_LO, DMA32_DEMO_REG_FAULT_ADDR_HI,
        DMA32_DEMO_REG_FAULT_INFO,
    };
    unsigned i;

    if (st->mmio_write || st->config ||
        snap_running(x->old) || snap_running(x->snap)) {
        return true;
    }
    for (i = 0; i < ARRAY_SIZE(traces); i++) {
        if (snap_reg(x->snap, traces[i]) != snap_reg(x->old, traces[i])) {
            return true;
        }
    }
    for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
        if (snap_cnt(x->snap, i) != snap_cnt(x->old, i)) {
            return true;
        }
    }
    return false;
}

/* One random operation on device @x, noted in @st */
static void fuzz_op(GRand *r, Fuzz *f, FuzzDev *x, FuzzStep *st)
{
    Dev *d = x->d;
    unsigned what = g_rand_int_range(r, 0, 100);

    if (what < 35) {
        Desc ds;

        /* one draw after the other: a seed gives one sequence */
        ds.op = g_rand_int_range(r, 0, 16) ?
                g_rand_int_range(r, 1, 4) : g_rand_int(r);
        ds.len = pick_len(r);
        ds.src = pick_addr(r, f, x, false);
        ds.dst = pick_addr(r, f, x, true);
        ds.seed = g_rand_int(r);
        ds.reserved0 = g_rand_int_range(r, 0, 32) ? 0 : 1;
        if (!g_rand_int_range(r, 0, 4)) {
            ds.dst = guards_aim(r, ds.len);
        }
        if (ds.len <= x->max_xfer) {
            guards_clear(&f->guards, &ds.dst, &ds.len);
        }
        d->ring = x->ring;
        desc_write(d, g_rand_int_range(r, 0, 64), &ds);
    } else if (what < 55) {
        fuzz_wr(f, x, st, DMA32_DEMO_REG_DOORBELL,
                g_rand_int_range(r, 0, 8) ?
                g_rand_int_range(r, 0, 64) : g_rand_int(r));
    } else if (what < 70) {
        uint32_t reg;

        reg = pick_reg(r);
        fuzz_wr(f, x, st, reg, pick_reg_value(r, f, x, reg));
    } else if (what < 90) {
        rd(d, pick_reg(r));
    } else if (what < 93) {
        /* recover: reprogram the ring (clears HALTED), enable */
        uint32_t size = 1u << g_rand_int_range(r, 1, 7);

        fuzz_wr(f, x, st, DMA32_DEMO_REG_RING_BASE_LO, (uint32_t)x->ring);
        fuzz_wr(f, x, st, DMA32_DEMO_REG_RING_BASE_HI, x->ring >> 32);
        fuzz_wr(f, x, st, DMA32_DEMO_REG_RING_SIZE, size);
        fuzz_wr(f, x, st, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
        d->ring_size = size;
    } else if (what < 94 && !g_rand_int_range(r, 0, 8)) {
        fuzz_wr(f, x, st, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
        fuzz_wr(f, x, st, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
    } else if (what < 96) {
        /*
         * MSI on/off with random data, aimed at RAM, at a device's BAR
         * (FUZZ_PAIR: either one's), at MMCONFIG where no function exists
         * (bus 2 on) or at the LAPIC window (there with fixed delivery and
         * a random vector: INIT, SMI or NMI would be the CPU's business,
         * not the device's)
         */
        uint32_t data = g_rand_int(r) & 0xffff;
        Dev *to;
        uint64_t a;

        switch (g_rand_int_range(r, 0, 4)) {
        case 0:
            a = MSI_ADDR;
            break;
        case 1:
            to = f->dev[f->ndev > 1 ? g_rand_int_range(r, 0, 2) : 0].d;
            a = to->bar.addr + (g_rand_int_range(r, 0, SNAP_SIZE) & ~3);
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
        qpci_config_writel(d->pdev, x->msi_cap + PCI_MSI_ADDRESS_LO, a);
        qpci_config_writel(d->pdev, x->msi_cap + PCI_MSI_ADDRESS_HI, 0);
        qpci_config_writew(d->pdev, x->msi_cap + PCI_MSI_DATA_64, data);
        qpci_config_writew(d->pdev, x->msi_cap + PCI_MSI_FLAGS,
                           g_rand_int_range(r, 0, 2));
        x->msi_addr[2] = x->msi_addr[1];
        x->msi_addr[1] = x->msi_addr[0];
        x->msi_addr[0] = a;
        st->config = true;
    } else if (what < 97) {
        x->master = g_rand_int_range(r, 0, 4);
        qpci_config_writew(d->pdev, PCI_COMMAND, PCI_COMMAND_MEMORY |
                           (x->master ? PCI_COMMAND_MASTER : 0));
        st->config = true;
    } else {
        qtest_readl(d->qts, x->ring + g_rand_int_range(r, 0, 64) * 64 +
                    DMA32_DEMO_DESC_STATUS_OFF);
    }
}

static uint64_t fuzz_run(FuzzPlace place, const char *props, guint32 seed,
                         uint64_t ops, uint64_t secs)
{
    gint64 t0 = g_get_monotonic_time();
    gint64 end = t0 + secs * G_USEC_PER_SEC;
    uint64_t seen[DMA32_DEMO_NR_COUNTERS] = { 0 };
    uint64_t n = 0;
    Fuzz fz, *f = &fz;
    FuzzDev *x;
    GRand *r;
    Done done;
    unsigned i, j;

    fuzz_start(f, place, props, seed);
    r = g_rand_new_with_seed(seed);
    g_test_message("randomized loop on dma32-demo,%s %s: seed 0x%x, %"
                   PRIu64 " ops, %" PRIu64 " s", props ? props : "",
                   fuzz_place_names[place], seed, ops, secs);
    for (j = 0; j < f->ndev; j++) {
        x = &f->dev[j];
        ring_start(x->d, x->ring, RING_ENTRIES);
    }
    fuzz_snapshot(f);
    for (j = 0; j < f->ndev; j++) {
        x = &f->dev[j];
        memcpy(x->ident, x->snap, sizeof(x->ident));
    }
    while (n < ops || (secs && g_get_monotonic_time() < end)) {
        FuzzStep st[2] = { { .ctrl = -1 }, { .ctrl = -1 } };
        VtdRecord rec = { 0 };
        unsigned who = f->ndev > 1 ? g_rand_int_range(r, 0, 2) : 0;

        fuzz_op(r, f, &f->dev[who], &st[who]);
        n++;
        if (place == FUZZ_IOMMU) {
            fuzz_vtd_read(f, &f->dev[0], n, &rec);
        }
        for (j = 0; j < f->ndev; j++) {
            memcpy(f->dev[j].old, f->dev[j].snap, sizeof(f->dev[j].old));
        }
        fuzz_snapshot(f);
        if (f->ndev > 1) {
            st[0].peer = fuzz_active(&f->dev[1], &st[1]);
            st[1].peer = fuzz_active(&f->dev[0], &st[0]);
            f->peer_checks += st[0].peer + st[1].peer;
            for (j = 0; j < 2; j++) {
                f->peer_writes += st[j].peer &&
                                  fuzz_peer_wrote(&f->dev[j], &st[j]);
            }
        }
        for (j = 0; j < f->ndev; j++) {
            x = &f->dev[j];
            fuzz_check(x, n, &st[j]);
            if (place == FUZZ_IOMMU) {
                fuzz_check_vtd(f, x, n, &st[j], &rec);
            }
            for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
                uint64_t v = snap_cnt(x->snap, i), o = snap_cnt(x->old, i);

                seen[i] += v >= o ? v - o : v;
            }
        }
        if (n % GUARD_EVERY == 0) {
            fuzz_check_guards(f, n);
        }
    }
    fuzz_check_guards(f, n);
    g_test_message("randomized loop: %" PRIu64 " ops done in %.1f s, "
                   "%.0f ops/s; %" PRIu64 " descriptors completed, %"
                   PRIu64 " bytes read, %" PRIu64 " written, %" PRIu64
                   " address faults, %" PRIu64 " bus errors, %" PRIu64
                   " invalid; %" PRIu64 " checks with the peer's DMA (%"
                   PRIu64 " found a register it wrote), %" PRIu64
                   " VT-d fault records", n,
                   (g_get_monotonic_time() - t0) / 1e6,
                   n / ((g_get_monotonic_time() - t0) / 1e6),
                   seen[0], seen[1], seen[2], seen[3], seen[4], seen[5],
                   f->peer_checks, f->peer_writes, f->vtd_faults);

    /*
     * QEMU is alive and the devices still work after a reset.  Bus
     * mastering goes off first, so that no device's DMA or MSI reaches
     * the other after its reset.
     */
    for (j = 0; j < f->ndev; j++) {
        qpci_config_writew(f->dev[j].d->pdev, PCI_COMMAND,
                           PCI_COMMAND_MEMORY);
    }
    for (j = 0; j < f->ndev; j++) {
        x = &f->dev[j];
        qpci_config_writew(x->d->pdev, x->msi_cap + PCI_MSI_FLAGS, 0);
        wr(x->d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
    }
    for (j = 0; j < f->ndev; j++) {
        x = &f->dev[j];
        qpci_config_writew(x->d->pdev, PCI_COMMAND,
                           PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
        check_idle(x->d);
        ring_start(x->d, x->ring, RING_ENTRIES);
        done = run1(x->d, DMA32_DEMO_OP_FILL, 4096, 0, BUF_A + j * 4096,
                    77 + j);
        g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
        check_pattern(x->d, BUF_A + j * 4096, 4096, 77 + j);
    }
    qobject_unref(qtest_qmp(f->dev[0].d->qts,
                            "{'execute': 'query-status'}"));
    g_rand_free(r);
    fuzz_stop(f);
    return n;
}

/*
 * DMA32_DEMO_FUZZ_OPS operations (100000 under -m slow) with a fixed
 * seed, split over the places the device can sit in and two
 * configurations: the default device on the root bus, a truncating 31-bit
 * one (every access lands in RAM), the default behind a pcie-root-port, a
 * 64-bit one behind a pci-bridge, the default behind a translating
 * VT-d, and two default devices on the root bus that DMA into each
 * other's registers.  The DMA32_DEMO_FUZZ_* variables set length, time
 * and seed (see the file header).
 */
static void test_random(void)
{
    static const struct {
        FuzzPlace place;
        const char *props;
        unsigned share;         /* in percent */
    } runs[] = {
        { FUZZ_ROOT_BUS, NULL, 25 },
        { FUZZ_ROOT_BUS, "overflow=truncate,dma-bits=31,ring-bits=31", 10 },
        { FUZZ_ROOT_PORT, NULL, 15 },
        { FUZZ_PCI_BRIDGE, "dma-bits=64", 15 },
        { FUZZ_IOMMU, NULL, 20 },
        { FUZZ_PAIR, NULL, 15 },
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
