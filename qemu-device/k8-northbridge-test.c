/*
 * QTest for the k8-northbridge device and its GART
 *
 * "-M q35 -m 6G -nodefaults": RAM at [0, 2 GiB) and [4 GiB, 8 GiB). The
 * northbridge sits at 00:18.0 and 00:18.3; a dma32-demo device at 00:04.0
 * is the bus master whose DMA the GART translates. The test programs the
 * GART as Linux's aperture_64.c and amd_gart_64.c do (aperture control and
 * base, table base, PTEs in guest memory, InvGart), aims the device's
 * FILL, CHECKSUM and COPY at the aperture and looks where the data went.
 *
 * Environment:
 *   K8NB_FUZZ_OPS=N    register /k8-northbridge/random (otherwise only
 *                      under -m slow, with 20000) with N operations
 *   K8NB_FUZZ_SEED=X   its seed (default fixed)
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/crc32c.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "qapi/qmp/qdict.h"
#include "hw/pci/pci_ids.h"
#include "hw/pci/pci_regs.h"
#include "hw/misc/dma32-demo-regs.h"
#include "hw/misc/k8-northbridge-regs.h"

#define GiB_ (1ULL << 30)
#define MiB_ (1ULL << 20)
#define KiB_ (1ULL << 10)
#define PAGE K8NB_PAGE_SIZE

#define DEV_DEVFN           QPCI_DEVFN(4, 0)
#define NB_DEVFN            QPCI_DEVFN(K8NB_SLOT, 0)
#define MISC_DEVFN          QPCI_DEVFN(K8NB_SLOT, K8NB_MISC_FUNC)
#define RING_ADDR           0x00100000ULL
#define TABLE               0x00200000ULL   /* a 64 MiB aperture's GATT */
#define BIG_TABLE           0x10000000ULL   /* up to 2 MiB: 2 GiB apertures */
#define BUF_A               0x01000000ULL
#define APER                0x78000000ULL   /* where Linux put it, 64 MiB */
#define APER_ORDER          1
#define HIGH                0x100000000ULL
#define TGT                 (HIGH + 0x23400000ULL) /* targets above 4 GiB */
#define RING_ENTRIES        64
#define WAIT_SECONDS        60

typedef struct Dev {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *pdev;
    QPCIDevice *nb;
    QPCIDevice *misc;
    QPCIBar bar;
    uint32_t tail;
} Dev;

typedef struct Done {
    uint32_t status;
    uint32_t result;
    uint64_t fault_addr;
} Done;

/* The dma32-demo device */

static uint32_t rd(Dev *d, uint32_t reg)
{
    return qpci_io_readl(d->pdev, d->bar, reg);
}

static void wr(Dev *d, uint32_t reg, uint32_t val)
{
    qpci_io_writel(d->pdev, d->bar, reg, val);
}

static uint64_t rd64(Dev *d, uint32_t reg)
{
    uint64_t lo = rd(d, reg);

    return lo | (uint64_t)rd(d, reg + 4) << 32;
}

static void ring_start(Dev *d)
{
    wr(d, DMA32_DEMO_REG_RING_BASE_LO, (uint32_t)RING_ADDR);
    wr(d, DMA32_DEMO_REG_RING_BASE_HI, RING_ADDR >> 32);
    wr(d, DMA32_DEMO_REG_RING_SIZE, RING_ENTRIES);
    wr(d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
    d->tail = 0;
}

static void dev_setup(Dev *d)
{
    d->bus = qpci_new_pc(d->qts, NULL);
    d->pdev = qpci_device_find(d->bus, DEV_DEVFN);
    d->nb = qpci_device_find(d->bus, NB_DEVFN);
    d->misc = qpci_device_find(d->bus, MISC_DEVFN);
    g_assert(d->pdev && d->nb && d->misc);
    qpci_device_enable(d->pdev);
    d->bar = qpci_iomap(d->pdev, 0, NULL);
    ring_start(d);
}

static void dev_teardown(Dev *d)
{
    g_free(d->pdev);
    g_free(d->nb);
    g_free(d->misc);
    qpci_free_pc(d->bus);
}

/* Firmware directories, as dma32-demo-test.c finds them */
static char **firmware_dirs(void)
{
    const char *env = g_getenv("DMA32_DEMO_FIRMWARE_PATH");
    g_auto(GStrv) dirs = g_strsplit(env ? env :
                                    "/usr/share/seabios:/usr/share/qemu",
                                    ":", -1);
    GPtrArray *out = g_ptr_array_new();
    char **p;

    for (p = dirs; *p; p++) {
        if (**p && g_file_test(*p, G_FILE_TEST_IS_DIR)) {
            g_ptr_array_add(out, g_strdup("-L"));
            g_ptr_array_add(out, g_strdup(*p));
        }
    }
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

/*
 * q35 with 6 GiB, the northbridge and a dma32-demo (@props); with
 * @nb_last the northbridge comes after the device on the command line.
 */
static Dev *dev_start_with(const char *props, bool nb_last)
{
    Dev *d = g_new0(Dev, 1);
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    const char *nb = "-device k8-northbridge";

    d->qts = qtest_initf("%s -M q35 -m 6G -nodefaults %s "
                         "-device dma32-demo,id=d0,addr=04.0%s%s %s",
                         fw_args, nb_last ? "" : nb, props ? "," : "",
                         props ? props : "", nb_last ? nb : "");
    dev_setup(d);
    return d;
}

static Dev *dev_start(const char *props)
{
    return dev_start_with(props, false);
}

static void dev_stop(Dev *d)
{
    dev_teardown(d);
    qtest_quit(d->qts);
    g_free(d);
}

/* Run one descriptor and wait for it */
static Done run1(Dev *d, uint32_t op, uint32_t len, uint64_t src,
                 uint64_t dst, uint64_t seed)
{
    uint64_t at = RING_ADDR + (uint64_t)d->tail * DMA32_DEMO_DESC_SIZE;
    gint64 deadline = g_get_monotonic_time() + WAIT_SECONDS * G_USEC_PER_SEC;
    uint8_t raw[DMA32_DEMO_DESC_SIZE] = { 0 };
    Done done;

    stl_le_p(raw + 0, op);
    stl_le_p(raw + 4, len);
    stq_le_p(raw + 8, src);
    stq_le_p(raw + 16, dst);
    stq_le_p(raw + 24, seed);
    qtest_memwrite(d->qts, at, raw, sizeof(raw));
    d->tail = (d->tail + 1) % RING_ENTRIES;
    wr(d, DMA32_DEMO_REG_DOORBELL, d->tail);
    while (rd(d, DMA32_DEMO_REG_RING_HEAD) != d->tail) {
        g_assert(!(rd(d, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_HALTED));
        g_assert(g_get_monotonic_time() < deadline);
    }
    qtest_memread(d->qts, at + DMA32_DEMO_DESC_STATUS_OFF, raw, 16);
    done.status = ldl_le_p(raw);
    done.result = ldl_le_p(raw + 4);
    done.fault_addr = ldq_le_p(raw + 8);
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_ALL);
    return done;
}

static void fill_ok(Dev *d, uint64_t dst, uint32_t len, uint64_t seed)
{
    g_assert_cmpuint(run1(d, DMA32_DEMO_OP_FILL, len, 0, dst, seed).status,
                     ==, DMA32_DEMO_ST_OK);
}

/* Byte @off.. of the FILL pattern of @seed */
static void pattern(uint8_t *buf, uint64_t seed, uint64_t off, uint64_t len)
{
    uint64_t i;

    for (i = off; i < off + len; i++) {
        buf[i - off] = dma32_demo_pattern_word(seed, i / 8) >> ((i % 8) * 8);
    }
}

/* @len bytes at @addr are bytes @off.. of the pattern of @seed */
static void check_pattern(Dev *d, uint64_t addr, uint64_t off, uint64_t len,
                          uint64_t seed)
{
    g_autofree uint8_t *want = g_malloc(len);
    g_autofree uint8_t *got = g_malloc(len);

    pattern(want, seed, off, len);
    qtest_memread(d->qts, addr, got, len);
    if (memcmp(want, got, len)) {
        g_test_message("0x%" PRIx64 ": not bytes %" PRIu64 "..+%" PRIu64
                       " of pattern %" PRIu64, addr, off, len, seed);
        g_assert_not_reached();
    }
}

static void canary_set(Dev *d, uint64_t addr, uint64_t len)
{
    qtest_memset(d->qts, addr, 0xa5, len);
}

static void canary_check(Dev *d, uint64_t addr, uint64_t len)
{
    g_autofree uint8_t *got = g_malloc(len);
    uint64_t i;

    qtest_memread(d->qts, addr, got, len);
    for (i = 0; i < len; i++) {
        if (got[i] != 0xa5) {
            g_test_message("canary at 0x%" PRIx64 " overwritten", addr + i);
            g_assert_cmphex(got[i], ==, 0xa5);
        }
    }
}

/* A bus error at @addr: descriptor, latched fault, PCI_STATUS */
static void check_bus_error(Dev *d, Done done, uint64_t addr,
                            uint32_t source)
{
    uint32_t info = rd(d, DMA32_DEMO_REG_FAULT_INFO);
    uint16_t st = qpci_config_readw(d->pdev, PCI_STATUS);

    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, addr);
    g_assert_cmphex(rd64(d, DMA32_DEMO_REG_FAULT_ADDR_LO), ==, addr);
    g_assert_cmpuint(DMA32_DEMO_FAULT_STATUS(info), ==,
                     DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmpuint(DMA32_DEMO_FAULT_SOURCE(info), ==, source);
    /* the IOMMU refused the access: a received target abort */
    g_assert(st & PCI_STATUS_REC_TARGET_ABORT);
    qpci_config_writew(d->pdev, PCI_STATUS, st);
}

/* The GART */

static uint32_t nb_rd(Dev *d, uint32_t reg)
{
    return qpci_config_readl(d->misc, reg);
}

static void nb_wr(Dev *d, uint32_t reg, uint32_t val)
{
    qpci_config_writel(d->misc, reg, val);
}

/* InvGart as amd_flush_garts() does it: write 1, wait for it to read 0 */
static void gart_flush(Dev *d)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_SECONDS * G_USEC_PER_SEC;

    nb_wr(d, K8NB_CACHE_CTL, nb_rd(d, K8NB_CACHE_CTL) |
          K8NB_CACHE_CTL_INVGART);
    while (nb_rd(d, K8NB_CACHE_CTL) & K8NB_CACHE_CTL_INVGART) {
        g_assert(g_get_monotonic_time() < deadline);
    }
}

/* Aperture and table as gart_iommu_hole_init() and init_amd_gatt() do */
static void gart_program(Dev *d, uint64_t base, uint32_t order,
                         uint64_t table)
{
    nb_wr(d, K8NB_APER_CTL, order << K8NB_APER_CTL_SIZE_SHIFT);
    nb_wr(d, K8NB_APER_BASE, base >> K8NB_APER_BASE_SHIFT);
    nb_wr(d, K8NB_TABLE_BASE, (table >> 12) << 4);
    nb_wr(d, K8NB_APER_CTL, (order << K8NB_APER_CTL_SIZE_SHIFT) |
          K8NB_APER_CTL_GARTEN | K8NB_APER_CTL_DISTLBWALKPRB);
    gart_flush(d);
}

static void pte_set(Dev *d, uint64_t table, uint32_t page, uint32_t pte)
{
    qtest_writel(d->qts, table + 4ULL * page, pte);
}

static void map(Dev *d, uint64_t table, uint32_t page, uint64_t addr)
{
    pte_set(d, table, page,
            k8nb_pte_encode(addr, K8NB_PTE_VALID | K8NB_PTE_COHERENT));
}

static Dev *gart_start(void)
{
    Dev *d = dev_start(NULL);

    gart_program(d, APER, APER_ORDER, TABLE);
    return d;
}

/* Tests */

static void test_ids(void)
{
    static const struct {
        uint32_t reg, bits;
    } regs[] = {
        { K8NB_APER_CTL, K8NB_APER_CTL_BITS },
        { K8NB_APER_BASE, K8NB_APER_BASE_BITS },
        { K8NB_TABLE_BASE, K8NB_TABLE_BASE_BITS },
        /* InvGart reads 0 once its flush is done */
        { K8NB_CACHE_CTL, K8NB_CACHE_CTL_PTEERR },
    };
    Dev *d = dev_start(NULL);
    QPCIDevice *f;
    unsigned i;

    g_assert_cmphex(qpci_config_readw(d->nb, PCI_VENDOR_ID), ==,
                    K8NB_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(d->nb, PCI_DEVICE_ID), ==,
                    K8NB_HT_DEVICE_ID);
    g_assert_cmphex(qpci_config_readw(d->misc, PCI_VENDOR_ID), ==,
                    K8NB_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(d->misc, PCI_DEVICE_ID), ==,
                    K8NB_MISC_DEVICE_ID);
    g_assert_cmphex(qpci_config_readw(d->nb, PCI_CLASS_DEVICE), ==,
                    PCI_CLASS_BRIDGE_HOST);
    g_assert_cmphex(qpci_config_readw(d->misc, PCI_CLASS_DEVICE), ==,
                    PCI_CLASS_BRIDGE_HOST);
    /* function 0 says multifunction: Linux scans functions 1..7 */
    g_assert(qpci_config_readb(d->nb, PCI_HEADER_TYPE) &
             0x80);
    for (i = 1; i < 8; i++) {
        if (i == K8NB_MISC_FUNC) {
            continue;
        }
        f = qpci_device_find(d->bus, QPCI_DEVFN(K8NB_SLOT, i));
        g_assert(!f);
    }

    for (i = 0; i < ARRAY_SIZE(regs); i++) {
        g_assert_cmphex(nb_rd(d, regs[i].reg), ==, 0);
        nb_wr(d, regs[i].reg, 0xffffffff);
        g_assert_cmphex(nb_rd(d, regs[i].reg), ==, regs[i].bits);
        nb_wr(d, regs[i].reg, 0);
        g_assert_cmphex(nb_rd(d, regs[i].reg), ==, 0);
    }
    /* byte writes reach the same bits */
    qpci_config_writeb(d->misc, K8NB_APER_CTL, 0xff);
    g_assert_cmphex(nb_rd(d, K8NB_APER_CTL), ==, K8NB_APER_CTL_BITS);
    qpci_config_writeb(d->misc, K8NB_APER_BASE + 1, 0xff);
    g_assert_cmphex(nb_rd(d, K8NB_APER_BASE), ==, 0x7f00);
    /* function 0 has no GART registers */
    qpci_config_writel(d->nb, K8NB_APER_CTL, 0xffffffff);
    g_assert_cmphex(qpci_config_readl(d->nb, K8NB_APER_CTL), ==, 0);
    dev_stop(d);
}

/*
 * Four aperture pages mapped, in reverse order, to pages above 4 GiB:
 * FILL, CHECKSUM and COPY through them, page by page; the RAM under the
 * aperture untouched; addresses outside the aperture unchanged. The
 * northbridge comes after the device on the command line: QEMU makes
 * every cold-plugged device's bus-master address space at machine done.
 */
static void test_translate(void)
{
    Dev *d = dev_start_with(NULL, true);
    uint8_t buf[4 * PAGE];
    uint32_t i, last = (uint32_t)(k8nb_aper_size(APER_ORDER) / PAGE) - 1;
    uint64_t end = APER + k8nb_aper_size(APER_ORDER);
    Done done;

    gart_program(d, APER, APER_ORDER, TABLE);
    for (i = 0; i < 4; i++) {
        map(d, TABLE, i, TGT + (3 - i) * PAGE);
    }
    canary_set(d, TGT, 4 * PAGE);
    canary_set(d, APER, 4 * PAGE);
    gart_flush(d);

    fill_ok(d, APER, 4 * PAGE, 11);
    for (i = 0; i < 4; i++) {
        check_pattern(d, TGT + (3 - i) * PAGE, i * PAGE, PAGE, 11);
    }
    canary_check(d, APER, 4 * PAGE);

    /* a read through the aperture: the device's CRC of the pattern */
    pattern(buf, 11, 0, sizeof(buf));
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, sizeof(buf), APER, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, crc32c(0xffffffff, buf, sizeof(buf)));

    /* from the aperture to an address outside it, which passes unchanged */
    canary_set(d, BUF_A, 5 * PAGE);
    done = run1(d, DMA32_DEMO_OP_COPY, 3 * PAGE, APER + PAGE, BUF_A + PAGE, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A + PAGE, PAGE, 3 * PAGE, 11);
    canary_check(d, BUF_A, PAGE);
    canary_check(d, BUF_A + 4 * PAGE, PAGE);

    /* just below and just past the aperture: RAM, untranslated */
    fill_ok(d, APER - PAGE, PAGE, 12);
    check_pattern(d, APER - PAGE, 0, PAGE, 12);
    fill_ok(d, end, PAGE, 13);
    check_pattern(d, end, 0, PAGE, 13);

    /*
     * one transfer from below the aperture into it: RAM untranslated up
     * to the aperture's base, then page 0's target; the RAM under the
     * aperture untouched (the untranslated piece below must stop at it)
     */
    canary_set(d, APER, 4 * PAGE);
    fill_ok(d, APER - PAGE, 2 * PAGE, 16);
    check_pattern(d, APER - PAGE, 0, PAGE, 16);
    check_pattern(d, TGT + 3 * PAGE, PAGE, PAGE, 16);
    canary_check(d, APER, 4 * PAGE);

    /* one transfer across the aperture's end: its last page, then RAM */
    map(d, TABLE, last, TGT + 8 * PAGE);
    gart_flush(d);
    fill_ok(d, end - PAGE, 2 * PAGE, 14);
    check_pattern(d, TGT + 8 * PAGE, 0, PAGE, 14);
    check_pattern(d, end, PAGE, PAGE, 14);

    /* address bits 39:32 of a PTE: a page at 7 GiB */
    map(d, TABLE, 4, 7 * GiB_ + 0x5000);
    gart_flush(d);
    fill_ok(d, APER + 4 * PAGE + 0x100, 0x200, 15);
    check_pattern(d, 7 * GiB_ + 0x5100, 0, 0x200, 15);

    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_BUS_ERRORS), ==, 0);
    g_assert_cmphex(nb_rd(d, K8NB_CACHE_CTL), ==, 0);
    dev_stop(d);
}

/*
 * The TLB keeps a translation until InvGart: a driver that rewrites a PTE
 * and forgets to flush has the device write the old page.
 */
static void test_flush(void)
{
    Dev *d = gart_start();
    uint64_t a = TGT, b = TGT + 16 * PAGE;

    map(d, TABLE, 0, a);
    gart_flush(d);
    fill_ok(d, APER, PAGE, 21);
    check_pattern(d, a, 0, PAGE, 21);

    /* remapped, not flushed: the stale translation is used */
    map(d, TABLE, 0, b);
    canary_set(d, b, PAGE);
    fill_ok(d, APER, PAGE, 22);
    check_pattern(d, a, 0, PAGE, 22);
    canary_check(d, b, PAGE);

    /* flushed: the new one */
    nb_wr(d, K8NB_CACHE_CTL, K8NB_CACHE_CTL_INVGART);
    g_assert_cmphex(nb_rd(d, K8NB_CACHE_CTL), ==, 0);
    fill_ok(d, APER, PAGE, 23);
    check_pattern(d, b, 0, PAGE, 23);
    check_pattern(d, a, 0, PAGE, 22);
    dev_stop(d);
}

/*
 * The TLB is direct mapped with 16 entries: aperture pages 0 and 16 share
 * its slot 0, and its tag tells them apart.  Both mapped to different
 * pages: each access goes to its own page, with no flush between them
 * (a TLB that ignored its tag would send page 16's write to page 0's
 * target).  Page 16's walk evicts page 0's entry: page 0's PTE changed
 * without a flush is then read afresh, while page 16's stays cached.
 */
static void test_tlb_tags(void)
{
    Dev *d = gart_start();
    uint64_t a = TGT, b = TGT + PAGE, c = TGT + 2 * PAGE;

    map(d, TABLE, 0, a);
    map(d, TABLE, 16, b);
    gart_flush(d);
    canary_set(d, TGT, 4 * PAGE);
    fill_ok(d, APER, PAGE, 81);
    fill_ok(d, APER + 16 * PAGE, PAGE, 82);
    check_pattern(d, a, 0, PAGE, 81);
    check_pattern(d, b, 0, PAGE, 82);

    /* page 0 was evicted by page 16: its new PTE is walked */
    map(d, TABLE, 0, c);
    map(d, TABLE, 16, TGT + 3 * PAGE);
    fill_ok(d, APER + 16 * PAGE, PAGE, 83);
    check_pattern(d, b, 0, PAGE, 83);
    fill_ok(d, APER, PAGE, 84);
    check_pattern(d, c, 0, PAGE, 84);
    check_pattern(d, a, 0, PAGE, 81);
    canary_check(d, TGT + 3 * PAGE, PAGE);
    dev_stop(d);
}

/*
 * An aperture base not aligned to the aperture's size: the bits below the
 * size are ignored (and the write logged as a guest error), so a 64 MiB
 * aperture programmed at APER + 32 MiB is at APER.  The register reads
 * back as written.
 */
static void test_unaligned_base(void)
{
    Dev *d = gart_start();
    uint64_t odd = APER + 32 * MiB_;

    map(d, TABLE, 0, TGT);
    map(d, TABLE, 8192, TGT + PAGE);    /* where page 0 of odd would be */
    nb_wr(d, K8NB_APER_BASE, odd >> K8NB_APER_BASE_SHIFT);
    g_assert_cmphex(nb_rd(d, K8NB_APER_BASE), ==,
                    odd >> K8NB_APER_BASE_SHIFT);
    gart_flush(d);
    canary_set(d, APER + 64 * MiB_, PAGE);
    fill_ok(d, APER, PAGE, 91);
    check_pattern(d, TGT, 0, PAGE, 91);
    fill_ok(d, odd, PAGE, 92);
    check_pattern(d, TGT + PAGE, 0, PAGE, 92);
    /* past the aligned aperture: RAM, untranslated */
    fill_ok(d, APER + 64 * MiB_, PAGE, 93);
    check_pattern(d, APER + 64 * MiB_, 0, PAGE, 93);
    dev_stop(d);
}

/*
 * An invalid PTE: the access fails, the device reports a bus error at the
 * aperture address, GartPteErr is set. The TLB keeps the invalid entry:
 * a driver that then writes a valid PTE and forgets the flush still gets
 * the bus error, until InvGart.
 */
static void test_forgotten_flush(void)
{
    Dev *d = gart_start();
    uint64_t at = APER + 5 * PAGE;
    Done done;

    canary_set(d, TGT, PAGE);
    done = run1(d, DMA32_DEMO_OP_FILL, PAGE, 0, at, 31);
    check_bus_error(d, done, at, DMA32_DEMO_FAULT_SRC_DST);
    g_assert_cmphex(nb_rd(d, K8NB_CACHE_CTL), ==, K8NB_CACHE_CTL_PTEERR);
    nb_wr(d, K8NB_CACHE_CTL, 0);

    map(d, TABLE, 5, TGT);
    done = run1(d, DMA32_DEMO_OP_FILL, PAGE, 0, at, 32);
    check_bus_error(d, done, at, DMA32_DEMO_FAULT_SRC_DST);
    g_assert_cmphex(nb_rd(d, K8NB_CACHE_CTL), ==, K8NB_CACHE_CTL_PTEERR);
    canary_check(d, TGT, PAGE);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_BUS_ERRORS), ==, 2);

    /* the flush writes GartPteErr back as 0 (amd_flush_garts' word) */
    nb_wr(d, K8NB_CACHE_CTL, K8NB_CACHE_CTL_INVGART);
    g_assert_cmphex(nb_rd(d, K8NB_CACHE_CTL), ==, 0);
    fill_ok(d, at, PAGE, 33);
    check_pattern(d, TGT, 0, PAGE, 33);
    dev_stop(d);
}

/*
 * Invalid PTEs in the middle of a transfer, under a read, in a table the
 * bus cannot read, and a PTE aimed at no memory: each a clean bus error,
 * nothing written past it.
 */
static void test_invalid_pte(void)
{
    Dev *d = gart_start();
    Done done;

    map(d, TABLE, 0, TGT);
    map(d, TABLE, 1, TGT + PAGE);
    pte_set(d, TABLE, 2, k8nb_pte_encode(TGT + 2 * PAGE, K8NB_PTE_COHERENT));
    map(d, TABLE, 3, TGT + 3 * PAGE);
    gart_flush(d);
    canary_set(d, TGT + 2 * PAGE, 2 * PAGE);

    /* a write: pages 0 and 1 done, the fault at page 2 */
    done = run1(d, DMA32_DEMO_OP_FILL, 4 * PAGE, 0, APER, 41);
    check_bus_error(d, done, APER + 2 * PAGE, DMA32_DEMO_FAULT_SRC_DST);
    check_pattern(d, TGT, 0, 2 * PAGE, 41);
    canary_check(d, TGT + 2 * PAGE, 2 * PAGE);
    g_assert(nb_rd(d, K8NB_CACHE_CTL) & K8NB_CACHE_CTL_PTEERR);
    nb_wr(d, K8NB_CACHE_CTL, 0);

    /* a read */
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, PAGE, APER + 2 * PAGE + 8, 0, 0);
    check_bus_error(d, done, APER + 2 * PAGE + 8, DMA32_DEMO_FAULT_SRC_SRC);
    g_assert(nb_rd(d, K8NB_CACHE_CTL) & K8NB_CACHE_CTL_PTEERR);

    /* a PTE aimed past the end of RAM, at 1 TiB - 4 KiB */
    map(d, TABLE, 6, K8NB_PTE_ADDR_MAX - PAGE);
    gart_flush(d);
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, APER + 6 * PAGE, 42);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, APER + 6 * PAGE);

    /* a table where nothing answers (at 1 TiB - 1 MiB): every PTE invalid */
    nb_wr(d, K8NB_CACHE_CTL, 0);
    nb_wr(d, K8NB_TABLE_BASE, ((K8NB_PTE_ADDR_MAX - MiB_) >> 12) << 4);
    gart_flush(d);
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, APER, 43);
    check_bus_error(d, done, APER, DMA32_DEMO_FAULT_SRC_DST);
    g_assert(nb_rd(d, K8NB_CACHE_CTL) & K8NB_CACHE_CTL_PTEERR);

    /*
     * and the GART works again with its table back, without a flush: the
     * aborted walk cached nothing
     */
    nb_wr(d, K8NB_TABLE_BASE, (TABLE >> 12) << 4);
    fill_ok(d, APER, PAGE, 44);
    check_pattern(d, TGT, 0, PAGE, 44);
    dev_stop(d);
}

/*
 * Every aperture size, 32 MiB (order 0) to 2 GiB (order 6), ending at
 * 4 GiB: its first and last page translated, 4 GiB (one past the end)
 * unchanged; the reserved order 7, GartEn clear and DisGartIo set
 * translate nothing. The device has dma-bits=64 to reach 4 GiB.
 */
static void test_apertures(void)
{
    Dev *d = dev_start("dma-bits=64");
    uint32_t order, pages;
    uint64_t size, base;

    for (order = 0; order <= K8NB_APER_ORDER_MAX; order++) {
        size = k8nb_aper_size(order);
        base = 4 * GiB_ - size;
        pages = size / PAGE;
        g_test_message("aperture %" PRIu64 " MiB at 0x%" PRIx64,
                       (uint64_t)(size / MiB_), base);
        qtest_memset(d->qts, BIG_TABLE, 0, pages * 4ULL);
        map(d, BIG_TABLE, 0, TGT + 2 * order * PAGE);
        map(d, BIG_TABLE, pages - 1, TGT + (2 * order + 1) * PAGE);
        gart_program(d, base, order, BIG_TABLE);
        g_assert_cmphex(nb_rd(d, K8NB_APER_CTL) & K8NB_APER_CTL_SIZE_MASK,
                        ==, order << K8NB_APER_CTL_SIZE_SHIFT);

        fill_ok(d, base, PAGE, 100 + order);
        check_pattern(d, TGT + 2 * order * PAGE, 0, PAGE, 100 + order);
        fill_ok(d, base + size - PAGE, PAGE, 200 + order);
        check_pattern(d, TGT + (2 * order + 1) * PAGE, 0, PAGE, 200 + order);
        fill_ok(d, 4 * GiB_, PAGE, 300 + order);
        check_pattern(d, 4 * GiB_, 0, PAGE, 300 + order);
        if (base == 2 * GiB_) {
            /* below a 2 GiB aperture there is RAM */
            fill_ok(d, base - PAGE, PAGE, 400);
            check_pattern(d, base - PAGE, 0, PAGE, 400);
        }
        /* page 1 was never mapped */
        g_assert_cmpuint(run1(d, DMA32_DEMO_OP_FILL, 64, 0, base + PAGE,
                              1).status, ==, DMA32_DEMO_ST_BUS_ERROR);
    }

    /* translating nothing: the aperture's addresses reach RAM unchanged */
    gart_program(d, APER, APER_ORDER, TABLE);
    map(d, TABLE, 0, TGT);
    gart_flush(d);
    nb_wr(d, K8NB_APER_CTL, 7 << K8NB_APER_CTL_SIZE_SHIFT |
          K8NB_APER_CTL_GARTEN);
    fill_ok(d, APER, PAGE, 501);
    check_pattern(d, APER, 0, PAGE, 501);
    nb_wr(d, K8NB_APER_CTL, APER_ORDER << K8NB_APER_CTL_SIZE_SHIFT);
    fill_ok(d, APER, PAGE, 502);
    check_pattern(d, APER, 0, PAGE, 502);
    nb_wr(d, K8NB_APER_CTL, APER_ORDER << K8NB_APER_CTL_SIZE_SHIFT |
          K8NB_APER_CTL_GARTEN | K8NB_APER_CTL_DISGARTIO);
    fill_ok(d, APER, PAGE, 503);
    check_pattern(d, APER, 0, PAGE, 503);
    /* and GartEn again: translated */
    nb_wr(d, K8NB_APER_CTL, APER_ORDER << K8NB_APER_CTL_SIZE_SHIFT |
          K8NB_APER_CTL_GARTEN);
    fill_ok(d, APER, PAGE, 504);
    check_pattern(d, TGT, 0, PAGE, 504);
    check_pattern(d, APER, 0, PAGE, 503);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_BUS_ERRORS), ==,
                     K8NB_APER_ORDER_MAX + 1);
    dev_stop(d);
}

/*
 * System reset: the registers go back to 0 and the TLB is empty (a PTE
 * changed without a flush before the reset is read afresh after it).
 */
static void test_reset(void)
{
    Dev *d = gart_start();
    QDict *rsp;

    map(d, TABLE, 0, TGT);
    gart_flush(d);
    fill_ok(d, APER, PAGE, 51);
    check_pattern(d, TGT, 0, PAGE, 51);
    map(d, TABLE, 0, TGT + PAGE);
    nb_wr(d, K8NB_CACHE_CTL, K8NB_CACHE_CTL_PTEERR);

    rsp = qtest_qmp(d->qts, "{'execute': 'system_reset'}");
    qobject_unref(rsp);
    qtest_qmp_eventwait(d->qts, "RESET");
    dev_teardown(d);
    dev_setup(d);
    g_assert_cmphex(nb_rd(d, K8NB_APER_CTL), ==, 0);
    g_assert_cmphex(nb_rd(d, K8NB_APER_BASE), ==, 0);
    g_assert_cmphex(nb_rd(d, K8NB_TABLE_BASE), ==, 0);
    g_assert_cmphex(nb_rd(d, K8NB_CACHE_CTL), ==, 0);

    /* off after reset: aperture addresses are RAM */
    fill_ok(d, APER, PAGE, 52);
    check_pattern(d, APER, 0, PAGE, 52);
    /* programmed again without InvGart: the new PTE, nothing cached */
    nb_wr(d, K8NB_APER_BASE, APER >> K8NB_APER_BASE_SHIFT);
    nb_wr(d, K8NB_TABLE_BASE, (TABLE >> 12) << 4);
    nb_wr(d, K8NB_APER_CTL, APER_ORDER << K8NB_APER_CTL_SIZE_SHIFT |
          K8NB_APER_CTL_GARTEN);
    fill_ok(d, APER, PAGE, 53);
    check_pattern(d, TGT + PAGE, 0, PAGE, 53);
    check_pattern(d, TGT, 0, PAGE, 51);
    dev_stop(d);
}

/* A device behind a pcie-root-port is translated too */
static void test_behind_root_port(void)
{
    Dev *d = g_new0(Dev, 1);
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    QPCIDevice *rp;

    d->qts = qtest_initf("%s -M q35 -m 6G -nodefaults -device k8-northbridge "
                         "-global ICH9-LPC."
                         "acpi-pci-hotplug-with-bridge-support=off "
                         "-device pcie-root-port,id=rp,chassis=1,addr=04.0 "
                         "-device dma32-demo,id=d0,bus=rp,addr=00.0", fw_args);
    d->bus = qpci_new_pc(d->qts, NULL);
    /* the root port's bus numbers and windows, as firmware sets them */
    rp = qpci_device_find(d->bus, QPCI_DEVFN(4, 0));
    g_assert(rp);
    qpci_config_writeb(rp, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(rp, PCI_SECONDARY_BUS, 1);
    qpci_config_writeb(rp, PCI_SUBORDINATE_BUS, 1);
    qpci_config_writew(rp, PCI_MEMORY_BASE, 0xe000);
    qpci_config_writew(rp, PCI_MEMORY_LIMIT, 0xe0f0);
    qpci_config_writew(rp, PCI_PREF_MEMORY_BASE, 0xfff0);
    qpci_config_writew(rp, PCI_PREF_MEMORY_LIMIT, 0);
    qpci_config_writew(rp, PCI_COMMAND, PCI_COMMAND_MEMORY |
                       PCI_COMMAND_MASTER);
    /* bus 1, device 0: the bus number rides in bits 15:8 of devfn */
    d->pdev = qpci_device_find(d->bus, 1 << 8 | QPCI_DEVFN(0, 0));
    d->nb = qpci_device_find(d->bus, NB_DEVFN);
    d->misc = qpci_device_find(d->bus, MISC_DEVFN);
    g_assert(d->pdev && d->nb && d->misc);
    qpci_device_enable(d->pdev);
    d->bar = qpci_iomap(d->pdev, 0, NULL);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_ID), ==, DMA32_DEMO_ID_MAGIC);
    ring_start(d);

    gart_program(d, APER, APER_ORDER, TABLE);
    map(d, TABLE, 9, TGT + 5 * PAGE);
    gart_flush(d);
    fill_ok(d, APER + 9 * PAGE, PAGE, 61);
    check_pattern(d, TGT + 5 * PAGE, 0, PAGE, 61);
    g_free(rp);
    dev_stop(d);
}

/*
 * Configurations QEMU refuses with one line: the northbridge not at
 * function 0, off the root bus, twice, or with another IOMMU before or
 * after it; its function 3 alone; and hot plug.
 */
static void expect_refused(const char *devices, const char *want)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *cmd = NULL;
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    g_autoptr(GError) gerr = NULL;
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    int wstatus;

    g_assert(qemu);
    cmd = g_strdup_printf("timeout 60 %s %s -M q35 -accel qtest -display none "
                          "-nodefaults -S %s", qemu, fw_args, devices);
    g_assert(g_spawn_command_line_sync(cmd, &out, &err, &wstatus, &gerr));
    g_assert(WIFEXITED(wstatus));
    if (WEXITSTATUS(wstatus) != 1 || !strstr(err, want)) {
        g_test_message("%s: exit %d: %s", devices, WEXITSTATUS(wstatus), err);
        g_assert_not_reached();
    }
}

static void test_refused(void)
{
    Dev *d;
    QDict *rsp;

    expect_refused("-device k8-northbridge,addr=18.3",
                   "must be function 0");
    expect_refused("-device k8-northbridge,multifunction=off",
                   "multifunction device");
    expect_refused("-device pcie-root-port,id=rp,chassis=1 "
                   "-device k8-northbridge,bus=rp", "must be on the root bus");
    expect_refused("-device k8-northbridge "
                   "-device k8-northbridge,addr=19.0",
                   "already has an IOMMU");
    expect_refused("-device intel-iommu -device k8-northbridge",
                   "already has an IOMMU");
    expect_refused("-device k8-northbridge -device intel-iommu",
                   "another IOMMU took over");
    expect_refused("-device k8-northbridge-misc", "pluggable device type");

    d = dev_start(NULL);
    rsp = qtest_qmp(d->qts, "{'execute': 'device_add', 'arguments': "
                    "{'driver': 'k8-northbridge', 'addr': '19.0'}}");
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    dev_stop(d);
}

/* Does the aperture translate @addr, as the model decodes the registers? */
static bool aperture_covers(Dev *d, uint64_t addr)
{
    uint32_t ctl = nb_rd(d, K8NB_APER_CTL);
    uint32_t order = (ctl & K8NB_APER_CTL_SIZE_MASK) >>
                     K8NB_APER_CTL_SIZE_SHIFT;
    uint64_t size, base;

    if (!(ctl & K8NB_APER_CTL_GARTEN) || (ctl & K8NB_APER_CTL_DISGARTIO) ||
        order > K8NB_APER_ORDER_MAX) {
        return false;
    }
    size = k8nb_aper_size(order);
    base = ((uint64_t)(nb_rd(d, K8NB_APER_BASE) & K8NB_APER_BASE_BITS) <<
            K8NB_APER_BASE_SHIFT) & ~(size - 1);
    return addr >= base && addr - base < size;
}

/*
 * Random programming of the GART and random DMA through it: any register
 * value, PTEs aimed anywhere (RAM, holes, MMIO, the table itself, the
 * aperture), the table anywhere. QEMU must not crash, every descriptor
 * completes OK or with a bus or address error, and the GART still works
 * at the end.
 */
static void test_random(void)
{
    const char *env = g_getenv("K8NB_FUZZ_OPS");
    const char *seed_env = g_getenv("K8NB_FUZZ_SEED");
    uint64_t ops = env ? g_ascii_strtoull(env, NULL, 10) : 20000;
    guint32 seed = seed_env ? g_ascii_strtoull(seed_env, NULL, 0) : 20261205;
    static const uint64_t targets[] = {
        0, TGT, APER, TABLE, RING_ADDR, 0x7ffff000ULL, 0xb0000000ULL,
        0xfec00000ULL, 0xfed00000ULL, 0xfee00000ULL, 0xfffff000ULL,
        HIGH, 8 * GiB_ - PAGE, 8 * GiB_, K8NB_PTE_ADDR_MAX - PAGE,
    };
    static const uint32_t regs[] = {
        K8NB_APER_CTL, K8NB_APER_BASE, K8NB_TABLE_BASE, K8NB_CACHE_CTL,
    };
    g_autoptr(GRand) r = g_rand_new_with_seed(seed);
    Dev *d = gart_start();
    uint64_t n, bad = 0;
    gint64 t0 = g_get_monotonic_time();

    g_test_message("%" PRIu64 " operations, seed %u", ops, seed);
    for (n = 0; n < ops; n++) {
        uint32_t what = g_rand_int_range(r, 0, 100);
        uint64_t t = targets[g_rand_int_range(r, 0, ARRAY_SIZE(targets))];
        uint32_t page = g_rand_int_range(r, 0, 64);
        Done done;

        if (what < 30) {
            t += (uint64_t)g_rand_int_range(r, 0, 16) * PAGE;
            pte_set(d, TABLE, page, g_rand_int_range(r, 0, 4) ?
                    k8nb_pte_encode(t, g_rand_int_range(r, 0, 4)) :
                    g_rand_int(r));
        } else if (what < 40) {
            uint32_t reg = regs[g_rand_int_range(r, 0, ARRAY_SIZE(regs))];

            nb_wr(d, reg, g_rand_int_range(r, 0, 4) ? g_rand_int(r) :
                  nb_rd(d, reg) ^ (1u << g_rand_int_range(r, 0, 32)));
        } else if (what < 45) {
            /* back to a sane aperture now and then */
            gart_program(d, APER, g_rand_int_range(r, 0, 7), TABLE);
        } else if (what < 50) {
            gart_flush(d);
        } else if (aperture_covers(d, RING_ADDR)) {
            /*
             * the device's ring in the aperture halts it at the first
             * fetch (the base is aligned down to the size, so a random
             * one often lands at 0): a sane aperture instead
             */
            gart_program(d, APER, g_rand_int_range(r, 0, 7), TABLE);
        } else {
            uint32_t op = g_rand_int_range(r, DMA32_DEMO_OP_FILL,
                                           DMA32_DEMO_OP_COPY + 1);
            uint64_t a = APER + (uint64_t)page * PAGE +
                         g_rand_int_range(r, 0, PAGE);
            uint32_t len = g_rand_int_range(r, 1, 5 * PAGE);

            done = run1(d, op, len, g_rand_boolean(r) ? a : BUF_A, a,
                        g_rand_int(r));
            g_assert(done.status == DMA32_DEMO_ST_OK ||
                     done.status == DMA32_DEMO_ST_BUS_ERROR ||
                     done.status == DMA32_DEMO_ST_ADDR_FAULT);
            bad += done.status != DMA32_DEMO_ST_OK;
            g_assert_cmphex(nb_rd(d, K8NB_CACHE_CTL) &
                            ~K8NB_CACHE_CTL_BITS, ==, 0);
        }
    }
    g_test_message("%" PRIu64 " operations (%" PRIu64 " descriptors failed) "
                   "in %.1f s", ops, bad,
                   (g_get_monotonic_time() - t0) / 1e6);
    /* QEMU answers, and the GART works after being programmed again */
    nb_wr(d, K8NB_CACHE_CTL, 0);
    gart_program(d, APER, APER_ORDER, TABLE);
    map(d, TABLE, 0, TGT);
    gart_flush(d);
    fill_ok(d, APER, PAGE, 71);
    check_pattern(d, TGT, 0, PAGE, 71);
    dev_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/k8-northbridge/ids", test_ids);
    qtest_add_func("/k8-northbridge/translate", test_translate);
    qtest_add_func("/k8-northbridge/flush", test_flush);
    qtest_add_func("/k8-northbridge/tlb-tags", test_tlb_tags);
    qtest_add_func("/k8-northbridge/unaligned-base", test_unaligned_base);
    qtest_add_func("/k8-northbridge/forgotten-flush", test_forgotten_flush);
    qtest_add_func("/k8-northbridge/invalid-pte", test_invalid_pte);
    qtest_add_func("/k8-northbridge/apertures", test_apertures);
    qtest_add_func("/k8-northbridge/reset", test_reset);
    qtest_add_func("/k8-northbridge/behind-root-port", test_behind_root_port);
    qtest_add_func("/k8-northbridge/refused", test_refused);
    if (g_test_slow() || g_getenv("K8NB_FUZZ_OPS")) {
        qtest_add_func("/k8-northbridge/random", test_random);
    }
    return g_test_run();
}
