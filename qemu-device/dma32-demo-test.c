/*
 * QTest for the dma32-demo PCI device
 *
 * Runs on "-M q35 -m 6G": RAM is at [0, 2 GiB) and [4 GiB, 8 GiB).  The
 * libqos allocator never returns memory above 4 GiB, so this test places
 * its rings and buffers at fixed addresses and writes them directly with
 * qtest_memwrite.
 *
 * Environment:
 *   DMA32_DEMO_FUZZ_OPS=N      register /dma32-demo/random (otherwise only
 *                              under -m slow, with 100000) with N operations
 *   DMA32_DEMO_FUZZ_SECONDS=S  keep the randomized loop going for S seconds
 *   DMA32_DEMO_FUZZ_SEED=X     seed of the randomized loop (default fixed)
 *   DMA32_DEMO_BENCH=1         add /dma32-demo/bench: 64 MiB COPY against
 *                              host memcpy, prints one JSON line
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/crc32c.h"
#include "qemu/madvise.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "qapi/qmp/qdict.h"
#include "qapi/qmp/qnum.h"
#include "hw/pci/pci_regs.h"
#include "hw/misc/dma32-demo-regs.h"

#define GiB_ (1ULL << 30)
#define MiB_ (1ULL << 20)
#define KiB_ (1ULL << 10)

#define DEV_DEVFN           QPCI_DEVFN(4, 0)
#define RING_ADDR           0x00100000ULL
#define MSI_ADDR            0x00080000ULL
#define MSI_DATA            0x4d53
#define BUF_A               0x01000000ULL
#define BUF_B               0x05000000ULL
#define HIGH                0x100000000ULL
#define RING_ENTRIES        64
#define WAIT_SECONDS        60

typedef struct Dev {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *pdev;
    QPCIBar bar;
    uint64_t ring;
    uint32_t ring_size;
    uint32_t tail;
} Dev;

typedef struct Desc {
    uint32_t op;
    uint32_t len;
    uint64_t src;
    uint64_t dst;
    uint64_t seed;
    uint64_t reserved0;
} Desc;

typedef struct Done {
    uint32_t status;
    uint32_t result;
    uint64_t fault_addr;
} Done;

/* Helpers */

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
    uint64_t lo;

    lo = rd(d, reg);
    return lo | (uint64_t)rd(d, reg + 4) << 32;
}

static void dev_setup(Dev *d)
{
    d->bus = qpci_new_pc(d->qts, NULL);
    d->pdev = qpci_device_find(d->bus, DEV_DEVFN);
    g_assert(d->pdev);
    qpci_device_enable(d->pdev);
    d->bar = qpci_iomap(d->pdev, 0, NULL);
}

static void dev_teardown(Dev *d)
{
    g_free(d->pdev);
    qpci_free_pc(d->bus);
    d->pdev = NULL;
    d->bus = NULL;
}

/*
 * A QEMU run from its build directory looks for firmware relative to the
 * binary (qemu-bundle/), where a Debian-configured tree has none: add the
 * firmware directories with -L.  DMA32_DEMO_FIRMWARE_PATH overrides them.
 */
static char **firmware_dirs(void)
{
    const char *env = g_getenv("DMA32_DEMO_FIRMWARE_PATH");
    char **dirs = g_strsplit(env ? env : "/usr/share/seabios:/usr/share/qemu",
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
    g_strfreev(dirs);
    return (char **)g_ptr_array_free(out, FALSE);
}

static Dev *dev_start_with(const char *extra, const char *props)
{
    Dev *d = g_new0(Dev, 1);
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);

    d->qts = qtest_initf("%s -M q35 -m 6G -nodefaults %s "
                         "-device dma32-demo,id=d0,addr=04.0%s%s",
                         fw_args, extra, props ? "," : "",
                         props ? props : "");
    dev_setup(d);
    return d;
}

static Dev *dev_start(const char *props)
{
    return dev_start_with("", props);
}

static void dev_stop(Dev *d)
{
    dev_teardown(d);
    qtest_quit(d->qts);
    g_free(d);
}

static void ring_program(Dev *d, uint64_t base, uint32_t size)
{
    wr(d, DMA32_DEMO_REG_RING_BASE_LO, (uint32_t)base);
    wr(d, DMA32_DEMO_REG_RING_BASE_HI, base >> 32);
    wr(d, DMA32_DEMO_REG_RING_SIZE, size);
    d->ring = base;
    d->ring_size = size;
    d->tail = 0;
}

static void ring_start(Dev *d, uint64_t base, uint32_t size)
{
    ring_program(d, base, size);
    wr(d, DMA32_DEMO_REG_INT_MASK, DMA32_DEMO_INT_ALL);
    wr(d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
}

static uint64_t desc_addr(Dev *d, uint32_t idx)
{
    return d->ring + (uint64_t)idx * DMA32_DEMO_DESC_SIZE;
}

static void desc_write(Dev *d, uint32_t idx, const Desc *x)
{
    uint8_t raw[DMA32_DEMO_DESC_SIZE] = { 0 };

    stl_le_p(raw + 0, x->op);
    stl_le_p(raw + 4, x->len);
    stq_le_p(raw + 8, x->src);
    stq_le_p(raw + 16, x->dst);
    stq_le_p(raw + 24, x->seed);
    stl_le_p(raw + 32, DMA32_DEMO_ST_PENDING);
    stq_le_p(raw + 48, x->reserved0);
    qtest_memwrite(d->qts, desc_addr(d, idx), raw, sizeof(raw));
}

static void desc_read(Dev *d, uint32_t idx, Done *done)
{
    uint8_t raw[16];

    qtest_memread(d->qts, desc_addr(d, idx) + DMA32_DEMO_DESC_STATUS_OFF,
                  raw, sizeof(raw));
    done->status = ldl_le_p(raw);
    done->result = ldl_le_p(raw + 4);
    done->fault_addr = ldq_le_p(raw + 8);
}

/* Wait until HEAD reaches @head or the ring halts; return STATUS */
static uint32_t wait_head(Dev *d, uint32_t head)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_SECONDS * G_USEC_PER_SEC;
    uint32_t st;

    for (;;) {
        st = rd(d, DMA32_DEMO_REG_STATUS);
        if (rd(d, DMA32_DEMO_REG_RING_HEAD) == head ||
            (st & DMA32_DEMO_STATUS_HALTED)) {
            return st;
        }
        g_assert(g_get_monotonic_time() < deadline);
    }
}

/* Submit descriptors at the tail, ring the doorbell and wait for them */
static uint32_t submit(Dev *d, const Desc *x, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        desc_write(d, d->tail, &x[i]);
        d->tail = (d->tail + 1) & (d->ring_size - 1);
    }
    wr(d, DMA32_DEMO_REG_DOORBELL, d->tail);
    return wait_head(d, d->tail);
}

/* Run one descriptor, return its completion */
static Done run1(Dev *d, uint32_t op, uint32_t len, uint64_t src,
                 uint64_t dst, uint64_t seed)
{
    Desc x = { .op = op, .len = len, .src = src, .dst = dst, .seed = seed };
    uint32_t idx = d->tail;
    uint32_t st;
    Done done;

    st = submit(d, &x, 1);
    g_assert_cmphex(st & DMA32_DEMO_STATUS_HALTED, ==, 0);
    desc_read(d, idx, &done);
    return done;
}

static void pattern(uint8_t *buf, uint64_t seed, uint64_t len)
{
    uint64_t i;

    for (i = 0; i < len; i++) {
        buf[i] = dma32_demo_pattern_word(seed, i / 8) >> ((i % 8) * 8);
    }
}

static uint32_t crc32c_std(const void *buf, size_t len)
{
    return crc32c(0xffffffff, buf, len);
}

static void check_pattern(Dev *d, uint64_t addr, uint64_t len, uint64_t seed)
{
    g_autofree uint8_t *want = g_malloc(len);
    g_autofree uint8_t *got = g_malloc(len);

    pattern(want, seed, len);
    qtest_memread(d->qts, addr, got, len);
    g_assert(memcmp(want, got, len) == 0);
}

/* Canaries: fill a region with a known byte and check it stayed so */
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

static void check_fault(Dev *d, uint32_t status, uint32_t source,
                        uint32_t idx, uint64_t addr)
{
    uint32_t info;

    info = rd(d, DMA32_DEMO_REG_FAULT_INFO);
    g_assert_cmphex(rd64(d, DMA32_DEMO_REG_FAULT_ADDR_LO), ==, addr);
    g_assert_cmpuint(DMA32_DEMO_FAULT_STATUS(info), ==, status);
    g_assert_cmpuint(DMA32_DEMO_FAULT_SOURCE(info), ==, source);
    g_assert_cmpuint(DMA32_DEMO_FAULT_INDEX(info), ==, idx);
}

static void check_counters(Dev *d, uint64_t completed, uint64_t rd_bytes,
                           uint64_t wr_bytes, uint64_t faults,
                           uint64_t bus_errors, uint64_t invalid)
{
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_COMPLETED), ==, completed);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_BYTES_READ), ==, rd_bytes);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_BYTES_WRITTEN), ==, wr_bytes);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_ADDR_FAULTS), ==, faults);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_BUS_ERRORS), ==, bus_errors);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_INVALID), ==, invalid);
}

/* An address fault: status, descriptor fault_addr, latched registers */
static void expect_addr_fault(Dev *d, Done done, uint32_t idx,
                              uint32_t source, uint64_t addr)
{
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_ADDR_FAULT);
    g_assert_cmphex(done.fault_addr, ==, addr);
    check_fault(d, DMA32_DEMO_ST_ADDR_FAULT, source, idx, addr);
    g_assert(rd(d, DMA32_DEMO_REG_INT_STATUS) & DMA32_DEMO_INT_ERROR);
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_ALL);
}

/* Tests */

static void test_ids(void)
{
    Dev *d;

    d = dev_start(NULL);
    g_assert_cmphex(qpci_config_readw(d->pdev, PCI_VENDOR_ID), ==,
                    DMA32_DEMO_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(d->pdev, PCI_DEVICE_ID), ==,
                    DMA32_DEMO_DEVICE_ID);
    g_assert_cmphex(qpci_config_readb(d->pdev, PCI_REVISION_ID), ==,
                    DMA32_DEMO_REVISION);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_ID), ==, DMA32_DEMO_ID_MAGIC);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_VERSION), ==,
                    DMA32_DEMO_VERSION_MAJOR << 16 | DMA32_DEMO_VERSION_MINOR);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_DMA_BITS), ==, 32);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_BITS), ==, 32);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_MAX_XFER), ==, 64 * MiB_);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_MAX_RING), >=, RING_ENTRIES);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_FEATURES), ==, 0);
    g_assert(qpci_find_capability(d->pdev, PCI_CAP_ID_MSI, 0));
    g_assert_cmpuint(qpci_config_readb(d->pdev, PCI_INTERRUPT_PIN), ==, 1);
    /* all state idle */
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_STATUS), ==, 0);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==, 0);
    dev_stop(d);

    d = dev_start("dma-bits=40,ring-bits=36,max-xfer=1M,overflow=truncate");
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_DMA_BITS), ==, 40);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_BITS), ==, 36);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_MAX_XFER), ==, MiB_);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_FEATURES), ==,
                    DMA32_DEMO_FEAT_TRUNCATE);
    dev_stop(d);
}

/*
 * Invalid properties fail with a clear message, no abort: device_add into
 * a hot-pluggable root port of one QEMU, which then takes a valid one.
 */
static void test_bad_props(void)
{
    static const struct {
        const char *prop;
        const char *val;
        const char *msg;
    } cases[] = {
        { "dma-bits", "23", "dma-bits must be between 24 and 64" },
        { "dma-bits", "65", "dma-bits must be between 24 and 64" },
        { "ring-bits", "0", "ring-bits must be between 24 and 64" },
        { "ring-bits", "200", "ring-bits must be between 24 and 64" },
        { "max-xfer", "0", "max-xfer must be between" },
        { "max-xfer", "8G", "max-xfer must be between" },
        { "overflow", "wrap", "overflow" },
    };
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    QTestState *qts;
    QDict *rsp;
    unsigned i;

    qts = qtest_initf("%s -M q35 -nodefaults "
                      "-device pcie-root-port,id=rp,chassis=1", fw_args);
    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        const char *desc;

        rsp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                        "{'driver': 'dma32-demo', 'bus': 'rp', %s: %s}}",
                        cases[i].prop, cases[i].val);
        g_assert(qdict_haskey(rsp, "error"));
        desc = qdict_get_str(qdict_get_qdict(rsp, "error"), "desc");
        if (!strstr(desc, cases[i].msg)) {
            g_test_message("%s=%s: %s", cases[i].prop, cases[i].val, desc);
            g_assert_not_reached();
        }
        qobject_unref(rsp);
    }
    rsp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                    "{'driver': 'dma32-demo', 'bus': 'rp', 'id': 'ok', "
                    "'dma-bits': '40'}}");
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    qtest_quit(qts);
}

static void test_fill(void)
{
    Dev *d;
    uint64_t dst = BUF_A + 3;
    uint64_t len = MiB_ + 5;
    Done done;

    d = dev_start(NULL);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    canary_set(d, dst - 64, 64);
    canary_set(d, dst + len, 64);
    done = run1(d, DMA32_DEMO_OP_FILL, len, 0, dst, 0x1234);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.fault_addr, ==, 0);
    check_pattern(d, dst, len, 0x1234);
    canary_check(d, dst - 64, 64);
    canary_check(d, dst + len, 64);

    /* a different seed gives different data; tiny and odd lengths */
    done = run1(d, DMA32_DEMO_OP_FILL, 1, 0, BUF_B + 7, 99);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_B + 7, 1, 99);
    done = run1(d, DMA32_DEMO_OP_FILL, 13, 0, BUF_B + 1, 98);
    check_pattern(d, BUF_B + 1, 13, 98);
    check_counters(d, 3, 0, len + 1 + 13, 0, 0, 0);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 3);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==, DMA32_DEMO_INT_DONE);
    dev_stop(d);
}

static void test_checksum(void)
{
    Dev *d;
    const uint64_t len = 3 * MiB_ + 11;
    g_autofree uint8_t *buf = g_malloc(len);
    uint64_t i;
    Done done;

    d = dev_start(NULL);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    qtest_memwrite(d->qts, BUF_A, "123456789", 9);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 9, BUF_A, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, 0xe3069283);

    for (i = 0; i < len; i++) {
        buf[i] = i * 7 + (i >> 11);
    }
    qtest_memwrite(d->qts, BUF_B + 1, buf, len);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, len, BUF_B + 1, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, crc32c_std(buf, len));
    /* the checksum of a FILL matches the pattern */
    done = run1(d, DMA32_DEMO_OP_FILL, 4097, 0, BUF_A, 5);
    pattern(buf, 5, 4097);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 4097, BUF_A, 0, 0);
    g_assert_cmphex(done.result, ==, crc32c_std(buf, 4097));
    check_counters(d, 4, 9 + len + 4097, 4097, 0, 0, 0);
    dev_stop(d);
}

static void test_copy(void)
{
    Dev *d;
    const uint64_t len = 2 * MiB_ + 3;
    g_autofree uint8_t *buf = g_malloc(len);
    g_autofree uint8_t *got = g_malloc(len);
    uint64_t i;
    Done done;

    d = dev_start(NULL);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    for (i = 0; i < len; i++) {
        buf[i] = i ^ (i >> 9);
    }
    qtest_memwrite(d->qts, BUF_A + 5, buf, len);
    canary_set(d, BUF_B - 16, 16);
    canary_set(d, BUF_B + len, 16);
    done = run1(d, DMA32_DEMO_OP_COPY, len, BUF_A + 5, BUF_B, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    qtest_memread(d->qts, BUF_B, got, len);
    g_assert(memcmp(buf, got, len) == 0);
    canary_check(d, BUF_B - 16, 16);
    canary_check(d, BUF_B + len, 16);
    check_counters(d, 1, len, len, 0, 0, 0);
    dev_stop(d);
}

/* Several descriptors in one doorbell, ring wrap-around */
static void test_batch(void)
{
    Dev *d;
    Desc x[7];
    unsigned i, round;

    d = dev_start(NULL);
    ring_start(d, RING_ADDR, 8);
    for (round = 0; round < 5; round++) {
        for (i = 0; i < ARRAY_SIZE(x); i++) {
            x[i] = (Desc) {
                .op = DMA32_DEMO_OP_FILL, .len = 100 + i,
                .dst = BUF_A + i * 4096, .seed = round * 10 + i,
            };
        }
        g_assert_cmphex(submit(d, x, ARRAY_SIZE(x)) &
                        DMA32_DEMO_STATUS_HALTED, ==, 0);
        for (i = 0; i < ARRAY_SIZE(x); i++) {
            check_pattern(d, BUF_A + i * 4096, 100 + i, round * 10 + i);
        }
    }
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, (5 * 7) % 8);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_COMPLETED), ==, 35);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_STATUS), ==,
                    DMA32_DEMO_STATUS_ENABLED);
    dev_stop(d);
}

/*
 * Default dma-bits=32: ranges reaching past 4 GiB fault with not a byte
 * moved; the range that ends exactly at 4 GiB is in range.
 */
static void test_fault_4g(void)
{
    Dev *d;
    g_autofree uint8_t *rom = g_malloc(8192);
    g_autofree uint8_t *rom2 = g_malloc(8192);
    uint64_t faults = 0;
    uint32_t idx;
    Done done;

    d = dev_start(NULL);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    /* [4G - 4K, 4G + 4K): firmware ROM below, RAM (canaries) above */
    canary_set(d, HIGH, 2 * 4096);
    qtest_memread(d->qts, HIGH - 8192, rom, 8192);
    qtest_memwrite(d->qts, BUF_A, rom, 8192);

    idx = d->tail;
    done = run1(d, DMA32_DEMO_OP_FILL, 8192, 0, HIGH - 4096, 1);
    expect_addr_fault(d, done, idx, DMA32_DEMO_FAULT_SRC_DST, HIGH - 4096);
    faults++;

    idx = d->tail;
    done = run1(d, DMA32_DEMO_OP_COPY, 8192, BUF_A, HIGH - 4096, 0);
    expect_addr_fault(d, done, idx, DMA32_DEMO_FAULT_SRC_DST, HIGH - 4096);
    faults++;

    /* one byte past the limit is enough */
    idx = d->tail;
    done = run1(d, DMA32_DEMO_OP_FILL, 4097, 0, HIGH - 4096, 1);
    expect_addr_fault(d, done, idx, DMA32_DEMO_FAULT_SRC_DST, HIGH - 4096);
    faults++;

    idx = d->tail;
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 4097, HIGH - 4096, 0, 0);
    expect_addr_fault(d, done, idx, DMA32_DEMO_FAULT_SRC_SRC, HIGH - 4096);
    g_assert_cmphex(done.result, ==, 0);
    faults++;

    /* COPY from above 4 GiB: source faults, destination untouched */
    canary_set(d, BUF_B, 4096);
    idx = d->tail;
    done = run1(d, DMA32_DEMO_OP_COPY, 4096, HIGH, BUF_B, 0);
    expect_addr_fault(d, done, idx, DMA32_DEMO_FAULT_SRC_SRC, HIGH);
    canary_check(d, BUF_B, 4096);
    faults++;

    /* entirely above 4 GiB */
    idx = d->tail;
    done = run1(d, DMA32_DEMO_OP_FILL, 4096, 0, HIGH + 4096, 1);
    expect_addr_fault(d, done, idx, DMA32_DEMO_FAULT_SRC_DST, HIGH + 4096);
    faults++;

    canary_check(d, HIGH, 2 * 4096);
    qtest_memread(d->qts, HIGH - 8192, rom2, 8192);
    g_assert(memcmp(rom, rom2, 8192) == 0);
    check_counters(d, 0, 0, 0, faults, 0, 0);

    /* ends exactly at 4 GiB: in range, reads the ROM */
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 4096, HIGH - 4096, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, crc32c_std(rom + 4096, 4096));
    done = run1(d, DMA32_DEMO_OP_COPY, 4096, HIGH - 4096, BUF_B, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    qtest_memread(d->qts, BUF_B, rom2, 4096);
    g_assert(memcmp(rom + 4096, rom2, 4096) == 0);
    check_counters(d, 2, 8192, 4096, faults, 0, 0);
    dev_stop(d);
}

/* A range wrapping past 2^64 faults, whatever dma-bits is */
static void test_fault_wrap(void)
{
    static const char *const props[] = { NULL, "dma-bits=64" };
    unsigned i;

    for (i = 0; i < ARRAY_SIZE(props); i++) {
        uint64_t addr = 0xfffffffffffff000ULL;
        Done done;
        Dev *d;

        d = dev_start(props[i]);
        ring_start(d, RING_ADDR, RING_ENTRIES);
        /* the wrapped part would land at [0, 4K) */
        canary_set(d, 0, 4096);
        done = run1(d, DMA32_DEMO_OP_FILL, 8192, 0, addr, 1);
        expect_addr_fault(d, done, 0, DMA32_DEMO_FAULT_SRC_DST, addr);
        done = run1(d, DMA32_DEMO_OP_COPY, 8192, BUF_A, addr, 0);
        expect_addr_fault(d, done, 1, DMA32_DEMO_FAULT_SRC_DST, addr);
        done = run1(d, DMA32_DEMO_OP_CHECKSUM, 4097, addr, 0, 0);
        expect_addr_fault(d, done, 2, DMA32_DEMO_FAULT_SRC_SRC, addr);
        /* the very last byte of the address space */
        done = run1(d, DMA32_DEMO_OP_FILL, 2, 0, UINT64_MAX, 1);
        expect_addr_fault(d, done, 3, DMA32_DEMO_FAULT_SRC_DST, UINT64_MAX);
        canary_check(d, 0, 4096);
        check_counters(d, 0, 0, 0, 4, 0, 0);
        dev_stop(d);
    }
}

/* A ring at or above 2^ring-bits faults, and nothing of it is touched */
static void test_ring_high(void)
{
    Dev *d;
    Desc x = { .op = DMA32_DEMO_OP_FILL, .len = 64, .dst = BUF_A };
    Done done;

    d = dev_start(NULL);
    canary_set(d, BUF_A, 64);
    ring_start(d, HIGH, RING_ENTRIES);
    desc_write(d, 0, &x);
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_STATUS), ==,
                    DMA32_DEMO_STATUS_ENABLED | DMA32_DEMO_STATUS_HALTED);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 0);
    check_fault(d, DMA32_DEMO_ST_ADDR_FAULT, DMA32_DEMO_FAULT_SRC_RING, 0,
                HIGH);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==,
                    DMA32_DEMO_INT_ERROR);
    desc_read(d, 0, &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_PENDING);
    canary_check(d, BUF_A, 64);
    check_counters(d, 0, 0, 0, 1, 0, 0);

    /* a doorbell while halted does nothing */
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    check_counters(d, 0, 0, 0, 1, 0, 0);

    /* a ring whose last descriptor reaches past 4 GiB faults as well */
    ring_program(d, HIGH - 2 * DMA32_DEMO_DESC_SIZE, 4);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_HALTED,
                    ==, 0);
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    g_assert(rd(d, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_HALTED);
    check_fault(d, DMA32_DEMO_ST_ADDR_FAULT, DMA32_DEMO_FAULT_SRC_RING, 0,
                HIGH - 2 * DMA32_DEMO_DESC_SIZE);
    check_counters(d, 0, 0, 0, 2, 0, 0);

    /* the same ring below 4 GiB works after reprogramming */
    ring_program(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 3);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, 64, 3);
    dev_stop(d);

    /* ring-bits=33 accepts the ring above 4 GiB */
    d = dev_start("ring-bits=33");
    ring_start(d, HIGH + MiB_, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 4);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, 64, 4);
    dev_stop(d);
}

/* dma-bits=64,ring-bits=32: high data works, a high ring does not */
static void test_dma64_ring32(void)
{
    Dev *d;
    const uint64_t len = MiB_ + 1;
    g_autofree uint8_t *buf = g_malloc(len);
    Done done;

    d = dev_start("dma-bits=64,ring-bits=32");
    ring_start(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, len, 0, HIGH + 8, 7);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, HIGH + 8, len, 7);
    done = run1(d, DMA32_DEMO_OP_COPY, len, HIGH + 8, HIGH + 2 * GiB_, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, HIGH + 2 * GiB_, len, 7);
    done = run1(d, DMA32_DEMO_OP_COPY, len, HIGH + 2 * GiB_, BUF_A, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, len, 7);
    pattern(buf, 7, len);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, len, HIGH + 8, 0, 0);
    g_assert_cmphex(done.result, ==, crc32c_std(buf, len));
    check_counters(d, 4, 3 * len, 3 * len, 0, 0, 0);

    /* data beyond RAM is a bus error, not an address fault */
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 64, 1ULL << 50, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, 1ULL << 50);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_SRC, 4,
                1ULL << 50);

    ring_start(d, HIGH, RING_ENTRIES);
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    g_assert(rd(d, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_HALTED);
    check_fault(d, DMA32_DEMO_ST_ADDR_FAULT, DMA32_DEMO_FAULT_SRC_RING, 0,
                HIGH);
    dev_stop(d);
}

/* dma-bits=31 faults at 2 GiB */
static void test_dma31(void)
{
    Dev *d;
    const uint64_t lim = 2 * GiB_;
    Done done;

    d = dev_start("dma-bits=31");
    ring_start(d, RING_ADDR, RING_ENTRIES);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_DMA_BITS), ==, 31);
    /* ends exactly at 2 GiB: fine */
    done = run1(d, DMA32_DEMO_OP_FILL, 4096, 0, lim - 4096, 11);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, lim - 4096, 4096, 11);
    /* one byte more: faults, nothing written */
    canary_set(d, lim - 4096, 4096);
    done = run1(d, DMA32_DEMO_OP_FILL, 4097, 0, lim - 4096, 11);
    expect_addr_fault(d, done, 1, DMA32_DEMO_FAULT_SRC_DST, lim - 4096);
    done = run1(d, DMA32_DEMO_OP_COPY, 4097, BUF_A, lim - 4096, 0);
    expect_addr_fault(d, done, 2, DMA32_DEMO_FAULT_SRC_DST, lim - 4096);
    canary_check(d, lim - 4096, 4096);
    done = run1(d, DMA32_DEMO_OP_FILL, 1, 0, lim, 11);
    expect_addr_fault(d, done, 3, DMA32_DEMO_FAULT_SRC_DST, lim);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 1, lim + GiB_, 0, 0);
    expect_addr_fault(d, done, 4, DMA32_DEMO_FAULT_SRC_SRC, lim + GiB_);
    check_counters(d, 1, 0, 4096, 4, 0, 0);
    dev_stop(d);
}

/* overflow=truncate: the device writes at addr mod 2^dma-bits */
static void test_truncate(void)
{
    Dev *d;
    Done done;
    g_autofree uint8_t *buf = g_malloc(4096);
    g_autofree uint8_t *got = g_malloc(4096);

    d = dev_start("overflow=truncate");
    ring_start(d, RING_ADDR, RING_ENTRIES);
    canary_set(d, HIGH + BUF_A, 4096);
    qtest_memset(d->qts, BUF_A, 0, 4096);
    done = run1(d, DMA32_DEMO_OP_FILL, 4096, 0, HIGH + BUF_A, 21);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, 4096, 21);          /* silent corruption */
    canary_check(d, HIGH + BUF_A, 4096);        /* the intended target */
    /* reads are truncated too */
    pattern(buf, 21, 4096);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 4096, (5 * HIGH) + BUF_A, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, crc32c_std(buf, 4096));
    done = run1(d, DMA32_DEMO_OP_COPY, 4096, HIGH + BUF_A, BUF_B, 0);
    qtest_memread(d->qts, BUF_B, got, 4096);
    g_assert(memcmp(buf, got, 4096) == 0);
    check_counters(d, 3, 8192, 8192, 0, 0, 0);
    dev_stop(d);

    /* a range crossing 2^31 wraps to 0 byte by byte */
    d = dev_start("overflow=truncate,dma-bits=31");
    ring_start(d, RING_ADDR, RING_ENTRIES);
    qtest_memset(d->qts, 0, 0, 4096);
    done = run1(d, DMA32_DEMO_OP_FILL, 4096, 0, 2 * GiB_ - 2048, 22);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    pattern(buf, 22, 4096);
    qtest_memread(d->qts, 2 * GiB_ - 2048, got, 2048);
    g_assert(memcmp(buf, got, 2048) == 0);
    qtest_memread(d->qts, 0, got, 2048);
    g_assert(memcmp(buf + 2048, got, 2048) == 0);
    /* and 2^64 wraps to 0 as well */
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 4096, UINT64_MAX - 2047, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, crc32c_std(buf, 4096));
    check_counters(d, 2, 4096, 4096, 0, 0, 0);
    dev_stop(d);
}

static uint64_t qom_counter(Dev *d, const char *name)
{
    QDict *rsp;
    uint64_t v;

    rsp = qtest_qmp(d->qts, "{'execute': 'qom-get', 'arguments': "
                    "{'path': '/machine/peripheral/d0', "
                    "'property': %s}}", name);
    g_assert(qdict_haskey(rsp, "return"));
    g_assert(qnum_get_try_uint(qobject_to(QNum, qdict_get(rsp, "return")),
                               &v));
    qobject_unref(rsp);
    return v;
}

/* Counters and the latched fault are exact, over MMIO and QOM */
static void test_counters(void)
{
    Dev *d;
    Desc bad = { .op = 9, .len = 1, .dst = BUF_A };
    QDict *rsp;
    Done done;

    d = dev_start(NULL);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    check_counters(d, 0, 0, 0, 0, 0, 0);
    run1(d, DMA32_DEMO_OP_FILL, 5000, 0, BUF_A, 1);
    run1(d, DMA32_DEMO_OP_CHECKSUM, 777, BUF_A, 0, 0);
    run1(d, DMA32_DEMO_OP_COPY, 333, BUF_A, BUF_B, 0);
    done = run1(d, DMA32_DEMO_OP_FILL, 16, 0, HIGH + 0x1230, 1);
    expect_addr_fault(d, done, 3, DMA32_DEMO_FAULT_SRC_DST, HIGH + 0x1230);
    done = run1(d, DMA32_DEMO_OP_COPY, 16, BUF_A, 0xfffffff8ULL, 1);
    expect_addr_fault(d, done, 4, DMA32_DEMO_FAULT_SRC_DST, 0xfffffff8ULL);
    submit(d, &bad, 1);
    desc_read(d, 5, &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_INVALID);
    check_fault(d, DMA32_DEMO_ST_INVALID, DMA32_DEMO_FAULT_SRC_RING, 5,
                RING_ADDR + 5 * DMA32_DEMO_DESC_SIZE);
    wr(d, DMA32_DEMO_REG_INJECT, DMA32_DEMO_INJECT_BUS_ERROR);
    done = run1(d, DMA32_DEMO_OP_FILL, 100, 0, BUF_A + 50, 1);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_DST, 6,
                BUF_A + 50);

    check_counters(d, 3, 777 + 333, 5000 + 333, 2, 1, 1);
    /* 64-bit access: low word first, consistent */
    g_assert_cmpuint(qpci_io_readq(d->pdev, d->bar,
                                   DMA32_DEMO_REG_CNT_BYTES_WRITTEN),
                     ==, 5333);
    g_assert_cmpuint(qom_counter(d, "descs-completed"), ==, 3);
    g_assert_cmpuint(qom_counter(d, "bytes-read"), ==, 1110);
    g_assert_cmpuint(qom_counter(d, "bytes-written"), ==, 5333);
    g_assert_cmpuint(qom_counter(d, "addr-faults"), ==, 2);
    g_assert_cmpuint(qom_counter(d, "bus-errors"), ==, 1);
    g_assert_cmpuint(qom_counter(d, "invalid-descs"), ==, 1);
    /* read only over QOM */
    rsp = qtest_qmp(d->qts, "{'execute': 'qom-set', 'arguments': "
                    "{'path': '/machine/peripheral/d0', "
                    "'property': 'bytes-read', 'value': 0}}");
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    /* properties are visible too */
    rsp = qtest_qmp(d->qts, "{'execute': 'qom-get', 'arguments': "
                    "{'path': '/machine/peripheral/d0', "
                    "'property': 'overflow'}}");
    g_assert_cmpstr(qdict_get_str(rsp, "return"), ==, "fault");
    qobject_unref(rsp);

    /* the _LO read snapshots: _HI stays consistent */
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_CNT_BYTES_WRITTEN), ==, 5333);
    run1(d, DMA32_DEMO_OP_FILL, 10, 0, BUF_A, 1);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_CNT_BYTES_WRITTEN + 4), ==, 0);

    wr(d, DMA32_DEMO_REG_CNT_CLEAR, 1);
    check_counters(d, 0, 0, 0, 0, 0, 0);
    g_assert_cmpuint(qom_counter(d, "bytes-written"), ==, 0);
    /* the fault latch is not a counter: it stays */
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_DST, 6,
                BUF_A + 50);
    dev_stop(d);
}

static uint32_t msi_cap_setup(Dev *d, bool enable)
{
    uint8_t cap;
    uint16_t flags;

    cap = qpci_find_capability(d->pdev, PCI_CAP_ID_MSI, 0);
    g_assert(cap);
    flags = qpci_config_readw(d->pdev, cap + PCI_MSI_FLAGS);
    g_assert(flags & PCI_MSI_FLAGS_64BIT);
    qpci_config_writel(d->pdev, cap + PCI_MSI_ADDRESS_LO, MSI_ADDR);
    qpci_config_writel(d->pdev, cap + PCI_MSI_ADDRESS_HI, 0);
    qpci_config_writew(d->pdev, cap + PCI_MSI_DATA_64, MSI_DATA);
    flags &= ~(PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_QSIZE);
    qpci_config_writew(d->pdev, cap + PCI_MSI_FLAGS,
                       flags | (enable ? PCI_MSI_FLAGS_ENABLE : 0));
    return cap;
}

static int intx_gsi(Dev *d)
{
    int gsi, found = -1;

    for (gsi = 16; gsi < 24; gsi++) {
        if (qtest_get_irq(d->qts, gsi)) {
            g_assert_cmpint(found, ==, -1);
            found = gsi;
        }
    }
    return found;
}

static void test_msi(void)
{
    Dev *d;
    Done done;

    d = dev_start(NULL);
    qtest_irq_intercept_in(d->qts, "ioapic");
    ring_start(d, RING_ADDR, RING_ENTRIES);
    msi_cap_setup(d, true);
    qtest_writel(d->qts, MSI_ADDR, 0);

    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 1);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(qtest_readl(d->qts, MSI_ADDR), ==, MSI_DATA);
    g_assert_cmpint(intx_gsi(d), ==, -1);       /* no INTx with MSI on */

    /* cause still pending: no new message */
    qtest_writel(d->qts, MSI_ADDR, 0);
    run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 1);
    g_assert_cmphex(qtest_readl(d->qts, MSI_ADDR), ==, 0);
    /* acknowledged: the next completion sends one */
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_ALL);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==, 0);
    run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 1);
    g_assert_cmphex(qtest_readl(d->qts, MSI_ADDR), ==, MSI_DATA);

    /* the error cause is a new cause, even with DONE pending */
    qtest_writel(d->qts, MSI_ADDR, 0);
    run1(d, DMA32_DEMO_OP_FILL, 64, 0, HIGH, 1);
    g_assert_cmphex(qtest_readl(d->qts, MSI_ADDR), ==, MSI_DATA);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==,
                    DMA32_DEMO_INT_ALL);

    /* masked: no message; unmasking a pending cause sends one */
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_ALL);
    wr(d, DMA32_DEMO_REG_INT_MASK, 0);
    qtest_writel(d->qts, MSI_ADDR, 0);
    run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 1);
    g_assert_cmphex(qtest_readl(d->qts, MSI_ADDR), ==, 0);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==,
                    DMA32_DEMO_INT_DONE);
    wr(d, DMA32_DEMO_REG_INT_MASK, DMA32_DEMO_INT_ALL);
    g_assert_cmphex(qtest_readl(d->qts, MSI_ADDR), ==, MSI_DATA);
    dev_stop(d);
}

static void test_intx(void)
{
    Dev *d;
    int gsi;

    d = dev_start(NULL);
    qtest_irq_intercept_in(d->qts, "ioapic");
    ring_start(d, RING_ADDR, RING_ENTRIES);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 1);
    gsi = intx_gsi(d);
    g_assert_cmpint(gsi, >=, 16);
    /* level follows INT_STATUS & INT_MASK */
    wr(d, DMA32_DEMO_REG_INT_MASK, 0);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    wr(d, DMA32_DEMO_REG_INT_MASK, DMA32_DEMO_INT_ERROR);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    wr(d, DMA32_DEMO_REG_INT_MASK, DMA32_DEMO_INT_ALL);
    g_assert_cmpint(intx_gsi(d), ==, gsi);
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_DONE);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    /* an error raises it too */
    run1(d, DMA32_DEMO_OP_CHECKSUM, 64, HIGH, 0, 0);
    g_assert_cmpint(intx_gsi(d), ==, gsi);
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_DONE);
    g_assert_cmpint(intx_gsi(d), ==, gsi);
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_ERROR);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    /* enabling MSI drops the line; disabling brings it back */
    run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 1);
    g_assert_cmpint(intx_gsi(d), ==, gsi);
    msi_cap_setup(d, true);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    msi_cap_setup(d, false);
    g_assert_cmpint(intx_gsi(d), ==, gsi);
    /* reset lowers it */
    wr(d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    dev_stop(d);
}

static void check_idle(Dev *d)
{
    static const uint32_t zero_regs[] = {
        DMA32_DEMO_REG_CTRL, DMA32_DEMO_REG_STATUS,
        DMA32_DEMO_REG_INT_STATUS, DMA32_DEMO_REG_INT_MASK,
        DMA32_DEMO_REG_RING_BASE_LO, DMA32_DEMO_REG_RING_BASE_HI,
        DMA32_DEMO_REG_RING_SIZE, DMA32_DEMO_REG_RING_HEAD,
        DMA32_DEMO_REG_RING_TAIL, DMA32_DEMO_REG_FAULT_ADDR_LO,
        DMA32_DEMO_REG_FAULT_ADDR_HI, DMA32_DEMO_REG_FAULT_INFO,
    };
    unsigned i;

    for (i = 0; i < ARRAY_SIZE(zero_regs); i++) {
        g_assert_cmphex(rd(d, zero_regs[i]), ==, 0);
    }
    check_counters(d, 0, 0, 0, 0, 0, 0);
}

static void dirty_device(Dev *d)
{
    Done done;

    ring_start(d, RING_ADDR, RING_ENTRIES);
    run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 1);
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, HIGH + 64, 1);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_ADDR_FAULT);
    wr(d, DMA32_DEMO_REG_INJECT, DMA32_DEMO_INJECT_STALL);
    /* stalled: the doorbell is accepted but nothing completes */
    desc_write(d, 2, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = 8,
                              .dst = BUF_A });
    wr(d, DMA32_DEMO_REG_DOORBELL, 3);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 2);
    g_assert(rd(d, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_BUSY);
}

static void test_reset(void)
{
    Dev *d;
    QDict *rsp;

    d = dev_start(NULL);
    /* CTRL.RESET */
    dirty_device(d);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 2);
    wr(d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
    check_idle(d);
    /* no longer stalled */
    ring_start(d, RING_ADDR, RING_ENTRIES);
    g_assert_cmpuint(run1(d, DMA32_DEMO_OP_FILL, 8, 0, BUF_A, 1).status, ==,
                     DMA32_DEMO_ST_OK);

    /* system reset (the Resettable hold phase) */
    dirty_device(d);
    rsp = qtest_qmp(d->qts, "{'execute': 'system_reset'}");
    qobject_unref(rsp);
    qtest_qmp_eventwait(d->qts, "RESET");
    dev_teardown(d);
    dev_setup(d);
    check_idle(d);
    g_assert_cmpuint(qom_counter(d, "addr-faults"), ==, 0);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    g_assert_cmpuint(run1(d, DMA32_DEMO_OP_FILL, 8, 0, BUF_A, 1).status, ==,
                     DMA32_DEMO_ST_OK);
    dev_stop(d);
}

/* Malformed descriptors and ring programming; injected errors */
static void test_malformed(void)
{
    static const Desc bad[] = {
        { .op = 0, .len = 8, .dst = BUF_A },
        { .op = 4, .len = 8, .dst = BUF_A },
        { .op = 0xffffffff, .len = 8, .dst = BUF_A },
        { .op = DMA32_DEMO_OP_FILL, .len = 0, .dst = BUF_A },
        { .op = DMA32_DEMO_OP_COPY, .len = 0, .src = BUF_B, .dst = BUF_A },
        { .op = DMA32_DEMO_OP_FILL, .len = MiB_ + 1, .dst = BUF_A },
        { .op = DMA32_DEMO_OP_CHECKSUM, .len = 0xffffffff, .src = BUF_A },
        { .op = DMA32_DEMO_OP_FILL, .len = 8, .dst = BUF_A, .reserved0 = 1 },
    };
    uint64_t invalid = 0, bus_errors = 0;
    unsigned i;
    Done done;
    Dev *d;

    d = dev_start("max-xfer=1M");
    ring_start(d, RING_ADDR, RING_ENTRIES);
    canary_set(d, BUF_A, 2 * MiB_);
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        uint32_t idx = d->tail;

        g_assert_cmphex(submit(d, &bad[i], 1) & DMA32_DEMO_STATUS_HALTED, ==,
                        0);
        desc_read(d, idx, &done);
        g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_INVALID);
        check_fault(d, DMA32_DEMO_ST_INVALID, DMA32_DEMO_FAULT_SRC_RING, idx,
                    desc_addr(d, idx));
        invalid++;
    }
    canary_check(d, BUF_A, 2 * MiB_);
    /* exactly max-xfer is fine */
    done = run1(d, DMA32_DEMO_OP_FILL, MiB_, 0, BUF_A, 1);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_counters(d, 1, 0, MiB_, 0, 0, invalid);

    /* bad ring programming halts the ring with an invalid status */
    {
        static const struct {
            uint64_t base;
            uint32_t size;
            uint32_t doorbell;
        } rings[] = {
            { RING_ADDR, 0, 0 },
            { RING_ADDR, 3, 1 },
            { RING_ADDR, 8192, 1 },
            { RING_ADDR, 0x80000000u, 1 },
            { RING_ADDR + 8, 4, 1 },
            { RING_ADDR, 4, 4 },
            { RING_ADDR, 4, 0xffffffff },
        };

        for (i = 0; i < ARRAY_SIZE(rings); i++) {
            ring_program(d, rings[i].base, rings[i].size);
            wr(d, DMA32_DEMO_REG_DOORBELL, rings[i].doorbell);
            g_assert(rd(d, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_HALTED);
            check_fault(d, DMA32_DEMO_ST_INVALID, DMA32_DEMO_FAULT_SRC_RING, 0,
                        rings[i].base);
            invalid++;
        }
    }
    check_counters(d, 1, 0, MiB_, 0, 0, invalid);

    /* ring size 1 is legal but can never hold work */
    ring_program(d, RING_ADDR, 1);
    wr(d, DMA32_DEMO_REG_DOORBELL, 0);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_STATUS), ==,
                    DMA32_DEMO_STATUS_ENABLED);

    /* a ring in a hole of the address space: bus error, halted */
    ring_program(d, 0xa0000000ULL, 4);
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    g_assert(wait_head(d, 1) & DMA32_DEMO_STATUS_HALTED);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_RING, 0,
                0xa0000000ULL);
    bus_errors++;

    /* data in a hole, in range: bus error on the right side */
    ring_program(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 8192, 2 * GiB_ - 4096, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, 2 * GiB_);
    bus_errors++;
    done = run1(d, DMA32_DEMO_OP_COPY, 64, BUF_A, 0xa0000000ULL, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_DST, 1,
                0xa0000000ULL);
    bus_errors++;

    /* injected bus error hits exactly the next transfer */
    canary_set(d, BUF_B, 4096);
    wr(d, DMA32_DEMO_REG_INJECT, DMA32_DEMO_INJECT_BUS_ERROR);
    done = run1(d, DMA32_DEMO_OP_COPY, 4096, BUF_A, BUF_B, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    canary_check(d, BUF_B, 4096);
    bus_errors++;
    done = run1(d, DMA32_DEMO_OP_COPY, 4096, BUF_A, BUF_B, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_INJECT), ==, 0);

    /* bus mastering off: DMA fails cleanly */
    qpci_config_writew(d->pdev, PCI_COMMAND, PCI_COMMAND_MEMORY);
    desc_write(d, d->tail, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = 8,
                                     .dst = BUF_A });
    d->tail = (d->tail + 1) & (d->ring_size - 1);
    wr(d, DMA32_DEMO_REG_DOORBELL, d->tail);
    g_assert(wait_head(d, d->tail) & DMA32_DEMO_STATUS_HALTED);
    bus_errors++;
    /*
     * partial CHECKSUM before the hole, good COPY; the COPY into the hole
     * reads nothing, its destination being rejected before its source
     */
    check_counters(d, 2, 4096 + 4096, MiB_ + 4096, 0, bus_errors, invalid);

    /* unknown registers and odd accesses are harmless */
    wr(d, 0xffc, 0xffffffff);
    wr(d, DMA32_DEMO_REG_ID, 0);
    g_assert_cmphex(rd(d, 0xffc), ==, 0);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_ID), ==, DMA32_DEMO_ID_MAGIC);
    /* below the 4-byte minimum: refused, CTRL keeps ENABLE, reads 0 */
    qtest_writeb(d->qts, d->bar.addr + DMA32_DEMO_REG_CTRL, 0xfe);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_CTRL), ==, DMA32_DEMO_CTRL_ENABLE);
    g_assert_cmphex(qtest_readw(d->qts, d->bar.addr + DMA32_DEMO_REG_ID + 1),
                    ==, 0);
    dev_stop(d);
}

/* Many descriptors in one doorbell: the bottom half yields and resumes */
static void test_big_batch(void)
{
    Dev *d;
    Desc x[RING_ENTRIES - 1];
    unsigned i;

    d = dev_start(NULL);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    for (i = 0; i < ARRAY_SIZE(x); i++) {
        x[i] = (Desc) { .op = DMA32_DEMO_OP_FILL, .len = MiB_ + i,
                        .dst = BUF_A + i * 2 * MiB_, .seed = i };
    }
    g_assert_cmphex(submit(d, x, ARRAY_SIZE(x)) & DMA32_DEMO_STATUS_HALTED,
                    ==, 0);
    for (i = 0; i < ARRAY_SIZE(x); i += 9) {
        check_pattern(d, BUF_A + i * 2 * MiB_, MiB_ + i, i);
    }
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_COMPLETED), ==,
                     ARRAY_SIZE(x));
    dev_stop(d);
}

static void wait_qmp_status(QTestState *qts, const char *cmd,
                            const char *key, const char *want)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_SECONDS * G_USEC_PER_SEC;

    for (;;) {
        QDict *rsp;
        QDict *ret;
        bool done;

        rsp = qtest_qmp(qts, "{'execute': %s}", cmd);
        ret = qdict_get_qdict(rsp, "return");
        done = ret && qdict_haskey(ret, key) &&
               !strcmp(qdict_get_str(ret, key), want);
        g_assert(!ret || !qdict_haskey(ret, key) ||
                 strcmp(qdict_get_str(ret, key), "failed"));
        qobject_unref(rsp);
        if (done) {
            return;
        }
        g_assert(g_get_monotonic_time() < deadline);
        g_usleep(10 * 1000);
    }
}

/*
 * Migration: registers, counters and the fault latch travel with the
 * device; descriptors rung in while the VM was stopped complete on the
 * destination once it runs, without any further guest action.
 */
static void test_migrate(void)
{
    g_autofree char *dir = g_dir_make_tmp("dma32-demo-XXXXXX", NULL);
    g_autofree char *file = g_strdup_printf("%s/state", dir);
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    Dev *d;
    Dev *d2 = g_new0(Dev, 1);
    Desc x[3];
    g_autofree char *uri = NULL;
    QDict *rsp;
    Done done;
    unsigned i;

    d = dev_start(NULL);
    g_assert(dir);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    run1(d, DMA32_DEMO_OP_FILL, 1000, 0, BUF_A, 1);
    run1(d, DMA32_DEMO_OP_FILL, 8, 0, HIGH + 8, 1);
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_ALL);
    wr(d, DMA32_DEMO_REG_INT_MASK, DMA32_DEMO_INT_ERROR);

    /* stop the VM, ring three descriptors: nothing may run while stopped */
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'stop'}"));
    for (i = 0; i < ARRAY_SIZE(x); i++) {
        x[i] = (Desc) { .op = DMA32_DEMO_OP_FILL, .len = 4096,
                        .dst = BUF_B + i * 4096, .seed = 100 + i };
        desc_write(d, 2 + i, &x[i]);
    }
    wr(d, DMA32_DEMO_REG_DOORBELL, 5);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 2);

    uri = g_strdup_printf("exec:cat > %s", file);
    rsp = qtest_qmp(d->qts, "{'execute': 'migrate', 'arguments': "
                    "{'uri': %s}}", uri);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    wait_qmp_status(d->qts, "query-migrate", "status", "completed");
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 2);
    dev_stop(d);

    d2->qts = qtest_initf("%s -M q35 -m 6G -nodefaults "
                          "-device dma32-demo,id=d0,addr=04.0 "
                          "-incoming 'exec:cat %s'", fw_args, file);
    /* the source was stopped, so the destination stays paused */
    wait_qmp_status(d2->qts, "query-status", "status", "paused");
    d = d2;
    d->bus = qpci_new_pc(d->qts, NULL);
    d->pdev = qpci_device_find(d->bus, DEV_DEVFN);
    g_assert(d->pdev);
    /* keep the migrated BAR: do not re-enumerate */
    d->bar.addr = qpci_config_readl(d->pdev, PCI_BASE_ADDRESS_0) &
                  PCI_BASE_ADDRESS_MEM_MASK;
    d->ring = RING_ADDR;
    d->ring_size = RING_ENTRIES;
    d->tail = 5;
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 2);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_TAIL), ==, 5);
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'cont'}"));
    g_assert_cmphex(wait_head(d, 5), ==, DMA32_DEMO_STATUS_ENABLED);
    for (i = 0; i < ARRAY_SIZE(x); i++) {
        desc_read(d, 2 + i, &done);
        g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
        check_pattern(d, BUF_B + i * 4096, 4096, 100 + i);
    }
    check_counters(d, 4, 0, 1000 + 3 * 4096, 1, 0, 0);
    check_fault(d, DMA32_DEMO_ST_ADDR_FAULT, DMA32_DEMO_FAULT_SRC_DST, 1,
                HIGH + 8);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_MASK), ==, DMA32_DEMO_INT_ERROR);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==,
                    DMA32_DEMO_INT_DONE);
    g_assert_cmphex(rd64(d, DMA32_DEMO_REG_RING_BASE_LO), ==, RING_ADDR);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_SIZE), ==, RING_ENTRIES);
    dev_stop(d);
    unlink(file);
    rmdir(dir);
}

/* Stop the VM and save its state into @file */
static void migrate_to_file(QTestState *qts, const char *file)
{
    g_autofree char *uri = g_strdup_printf("exec:cat > %s", file);
    QDict *rsp;

    qobject_unref(qtest_qmp(qts, "{'execute': 'stop'}"));
    rsp = qtest_qmp(qts, "{'execute': 'migrate', 'arguments': "
                    "{'uri': %s}}", uri);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    wait_qmp_status(qts, "query-migrate", "status", "completed");
}

/*
 * dma-bits, ring-bits, overflow and max-xfer travel in the stream and
 * must match the destination's: a destination configured otherwise
 * refuses the state (QEMU exits) rather than running the guest's rings
 * against different limits.
 */
static void test_migrate_config(void)
{
    static const struct {
        const char *props;
        const char *field;
    } cases[] = {
        { "dma-bits=31", "dma_bits" },
        { "ring-bits=33", "ring_bits" },
        { "overflow=truncate", "overflow" },
        { "max-xfer=1M", "max_xfer" },
    };
    g_autofree char *dir = g_dir_make_tmp("dma32-demo-XXXXXX", NULL);
    g_autofree char *file = g_strdup_printf("%s/state", dir);
    g_autofree char *incoming = g_strdup_printf("exec:cat %s", file);
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    Dev *d;
    unsigned i;

    g_assert(dir && qemu);
    d = dev_start(NULL);
    migrate_to_file(d->qts, file);
    dev_stop(d);

    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree char *dev = g_strdup_printf("dma32-demo,id=d0,addr=04.0,%s",
                                               cases[i].props);
        g_autofree char *want = g_strdup_printf("Failed to load dma32-demo:%s",
                                                cases[i].field);
        g_auto(GStrv) fw = firmware_dirs();
        const char *base[] = {
            "timeout", "30", qemu, "-M", "q35", "-m", "6G", "-accel",
            "qtest", "-display", "none", "-nodefaults", "-device", dev,
            "-incoming", incoming,
        };
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_autofree char *out = NULL;
        g_autofree char *err = NULL;
        g_autoptr(GError) gerr = NULL;
        int wstatus;
        char **p;

        for (p = (char **)base; p < (char **)base + ARRAY_SIZE(base); p++) {
            g_ptr_array_add(argv, *p);
        }
        for (p = fw; *p; p++) {
            g_ptr_array_add(argv, *p);
        }
        g_ptr_array_add(argv, NULL);
        g_assert(g_spawn_sync(NULL, (char **)argv->pdata, NULL,
                              G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                              &wstatus, &gerr));
        g_assert(WIFEXITED(wstatus));
        g_assert_cmpint(WEXITSTATUS(wstatus), ==, 1);
        if (!strstr(err, want) || !strstr(err, "differs between source")) {
            g_test_message("%s: %s", cases[i].props, err);
            g_assert_not_reached();
        }
    }
    unlink(file);
    rmdir(dir);
}

/*
 * post_load keeps CTRL, INT_STATUS and INT_MASK to their defined bits
 * whatever the stream says: the test sets every bit of them in a saved
 * state (found through the ring base that follows them) and loads it.
 */
#define ODD_RING_BASE       0x13579bdf2468ac0ULL

static void test_migrate_masked(void)
{
    g_autofree char *dir = g_dir_make_tmp("dma32-demo-XXXXXX", NULL);
    g_autofree char *file = g_strdup_printf("%s/state", dir);
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    g_autofree char *state = NULL;
    uint8_t be[8];
    size_t len, off, found = 0, at = 0;
    Dev *d;

    g_assert(dir);
    d = dev_start(NULL);
    wr(d, DMA32_DEMO_REG_RING_BASE_LO, (uint32_t)ODD_RING_BASE);
    wr(d, DMA32_DEMO_REG_RING_BASE_HI, ODD_RING_BASE >> 32);
    migrate_to_file(d->qts, file);
    dev_stop(d);

    /* CTRL, INT_STATUS, INT_MASK precede the ring base, big endian */
    g_assert(g_file_get_contents(file, &state, &len, NULL));
    stq_be_p(be, ODD_RING_BASE);
    for (off = 12; off + 8 <= len; off++) {
        if (!memcmp(state + off, be, 8)) {
            found++;
            at = off;
        }
    }
    g_assert_cmpuint(found, ==, 1);
    memset(state + at - 12, 0xff, 12);
    g_assert(g_file_set_contents(file, state, len, NULL));

    d = g_new0(Dev, 1);
    d->qts = qtest_initf("%s -M q35 -m 6G -nodefaults "
                         "-device dma32-demo,id=d0,addr=04.0 "
                         "-incoming 'exec:cat %s'", fw_args, file);
    wait_qmp_status(d->qts, "query-status", "status", "paused");
    d->bus = qpci_new_pc(d->qts, NULL);
    d->pdev = qpci_device_find(d->bus, DEV_DEVFN);
    g_assert(d->pdev);
    d->bar.addr = qpci_config_readl(d->pdev, PCI_BASE_ADDRESS_0) &
                  PCI_BASE_ADDRESS_MEM_MASK;
    g_assert_cmphex(rd64(d, DMA32_DEMO_REG_RING_BASE_LO), ==, ODD_RING_BASE);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_CTRL), ==, DMA32_DEMO_CTRL_ENABLE);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==, DMA32_DEMO_INT_ALL);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_MASK), ==, DMA32_DEMO_INT_ALL);
    dev_stop(d);
    unlink(file);
    rmdir(dir);
}

/* Behind an (unprogrammed, pass-through) VT-d IOMMU */
static void test_iommu(void)
{
    Dev *d;
    g_autofree uint8_t *buf = g_malloc(8192);
    Done done;

    d = dev_start_with("-device intel-iommu", NULL);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 8192, 0, BUF_A + 1, 31);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A + 1, 8192, 31);
    done = run1(d, DMA32_DEMO_OP_COPY, 8192, BUF_A + 1, BUF_B, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_B, 8192, 31);
    pattern(buf, 31, 8192);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 8192, BUF_B, 0, 0);
    g_assert_cmphex(done.result, ==, crc32c_std(buf, 8192));
    done = run1(d, DMA32_DEMO_OP_FILL, 8192, 0, HIGH - 4096, 31);
    expect_addr_fault(d, done, 3, DMA32_DEMO_FAULT_SRC_DST, HIGH - 4096);
    check_counters(d, 3, 16384, 16384, 1, 0, 0);
    dev_stop(d);
}

/*
 * The device behind a pcie-root-port at 04.0, on bus 1, with native PCIe
 * hotplug (ACPI hotplug off, as before QEMU 6.1), so that the guest's
 * Slot Control powers the slot off and unplugs what is in it.
 * MMCONFIG is enabled at its q35 default address so that a descriptor can
 * aim DMA at the root port's own registers; the port forwards the first
 * 16 MiB from 0xe0000000, where libqos places BAR0.
 */
#define MMCFG_BASE          0xb0000000ULL
#define MCH_PCIEXBAR        0x60
#define RP_DEVFN            QPCI_DEVFN(4, 0)

typedef struct Port {
    Dev *d;
    QPCIDevice *rp;
    uint64_t mmcfg;     /* the root port's config space in MMCONFIG */
    uint8_t exp;        /* its PCI Express capability */
} Port;

/* Enable MMCONFIG at MMCFG_BASE, as firmware would */
static void mmcfg_enable(Dev *d)
{
    QPCIDevice *mch;

    mch = qpci_device_find(d->bus, QPCI_DEVFN(0, 0));
    g_assert(mch);
    qpci_config_writel(mch, MCH_PCIEXBAR + 4, 0);
    qpci_config_writel(mch, MCH_PCIEXBAR, MMCFG_BASE | 1);
    g_free(mch);
}

/*
 * The device at 00.0 behind @bridge ("TYPE,opts"), which sits at 04.0 as
 * "rp"; @props are the device's own, @extra more QEMU options.
 */
static Port *bridge_start_with(const char *bridge, const char *props,
                               const char *extra)
{
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    Port *p = g_new0(Port, 1);
    Dev *d;

    d = p->d = g_new0(Dev, 1);
    d->qts = qtest_initf("%s -M q35 -m 6G -nodefaults %s "
                         "-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off "
                         "-device %s,id=rp,addr=04.0 "
                         "-device dma32-demo,id=d0,bus=rp,addr=00.0%s%s",
                         fw_args, extra, bridge, props ? "," : "",
                         props ? props : "");
    d->bus = qpci_new_pc(d->qts, NULL);
    mmcfg_enable(d);

    p->rp = qpci_device_find(d->bus, RP_DEVFN);
    g_assert(p->rp);
    qpci_config_writeb(p->rp, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(p->rp, PCI_SECONDARY_BUS, 1);
    qpci_config_writeb(p->rp, PCI_SUBORDINATE_BUS, 1);
    qpci_config_writew(p->rp, PCI_MEMORY_BASE, 0xe000);
    qpci_config_writew(p->rp, PCI_MEMORY_LIMIT, 0xe0f0);
    qpci_config_writew(p->rp, PCI_PREF_MEMORY_BASE, 0xfff0);
    qpci_config_writew(p->rp, PCI_PREF_MEMORY_LIMIT, 0);
    qpci_config_writew(p->rp, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    p->exp = qpci_find_capability(p->rp, PCI_CAP_ID_EXP, 0);
    p->mmcfg = MMCFG_BASE + ((uint64_t)RP_DEVFN << 12);
    g_assert_cmphex(qtest_readw(d->qts, p->mmcfg + PCI_VENDOR_ID), ==,
                    qpci_config_readw(p->rp, PCI_VENDOR_ID));

    /* bus 1, device 0: the bus number rides in bits 15:8 of devfn */
    d->pdev = qpci_device_find(d->bus, 1 << 8 | QPCI_DEVFN(0, 0));
    g_assert(d->pdev);
    qpci_device_enable(d->pdev);
    d->bar = qpci_iomap(d->pdev, 0, NULL);
    g_assert_cmphex(d->bar.addr, >=, 0xe0000000ULL);
    g_assert_cmphex(d->bar.addr, <, 0xe1000000ULL);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_ID), ==, DMA32_DEMO_ID_MAGIC);
    return p;
}

static Port *bridge_start(const char *bridge, const char *props)
{
    return bridge_start_with(bridge, props, "");
}

static Port *port_start(void)
{
    return bridge_start("pcie-root-port,chassis=1", NULL);
}

static void port_stop(Port *p)
{
    g_free(p->rp);
    dev_stop(p->d);
    g_free(p);
}

/*
 * Ring a COPY of @len bytes of @val (little endian, the rest zero) into
 * the root port's config space at @reg, followed by three FILLs into
 * canaried RAM: the COPY reconfigures the port from inside the device's
 * bottom half, with work still queued behind it.
 */
static void port_ring_copy_to_config(Port *p, uint32_t reg, uint32_t val,
                                     uint32_t len)
{
    Dev *d = p->d;
    uint8_t src[16] = { 0 };
    Desc x[4];
    unsigned i;

    g_assert_cmpuint(len, <=, sizeof(src));
    stl_le_p(src, val);
    qtest_memwrite(d->qts, BUF_B, src, sizeof(src));
    x[0] = (Desc) { .op = DMA32_DEMO_OP_COPY, .len = len, .src = BUF_B,
                    .dst = p->mmcfg + reg };
    for (i = 1; i < ARRAY_SIZE(x); i++) {
        x[i] = (Desc) { .op = DMA32_DEMO_OP_FILL, .len = 4096,
                        .dst = BUF_A + i * 8192, .seed = i };
        canary_set(d, BUF_A + i * 8192, 4096);
    }
    ring_start(d, RING_ADDR, RING_ENTRIES);
    for (i = 0; i < ARRAY_SIZE(x); i++) {
        desc_write(d, i, &x[i]);
    }
    wr(d, DMA32_DEMO_REG_DOORBELL, ARRAY_SIZE(x));
}

static bool qom_exists(QTestState *qts, const char *path)
{
    QDict *rsp;
    bool found;

    rsp = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': "
                    "{'path': %s, 'property': 'type'}}", path);
    found = qdict_haskey(rsp, "return");
    qobject_unref(rsp);
    return found;
}

/*
 * Powering the slot off from inside a COPY (Slot Control: power controller
 * off, power indicator off) unplugs and unrealizes the device while its
 * bottom half is in the middle of the transfer.  QEMU must survive it: no
 * access to freed memory (which the run on the sanitizer build reports),
 * no completion written and nothing more done for the queued descriptors.
 */
static void test_unplug_in_copy(void)
{
    Port *p;
    Dev *d;
    Done done;
    unsigned i;

    p = port_start();
    d = p->d;
    g_assert(p->exp);
    port_ring_copy_to_config(p, p->exp + PCI_EXP_SLTCTL, PCI_EXP_SLTCTL_PCC |
                             PCI_EXP_SLTCTL_PWR_IND_OFF, 16);
    qtest_qmp_eventwait(d->qts, "DEVICE_DELETED");
    g_assert(!qom_exists(d->qts, "/machine/peripheral/d0"));
    /* the port is still there and QEMU still answers */
    g_assert(qom_exists(d->qts, "/machine/peripheral/rp"));
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'query-pci'}"));
    g_assert_cmphex(qpci_config_readw(p->rp, PCI_VENDOR_ID), !=, 0xffff);
    for (i = 0; i < 4; i++) {
        desc_read(d, i, &done);
        g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_PENDING);
        if (i) {
            canary_check(d, BUF_A + i * 8192, 4096);
        }
    }
    port_stop(p);
}

/*
 * A secondary bus reset of the parent port, from inside a COPY, resets
 * the device in the middle of a descriptor: afterwards it must be exactly
 * as reset left it (no completion written, no counter, HEAD 0, no
 * interrupt, nothing latched), and the queued FILLs must not run.
 */
static void test_bus_reset_in_copy(void)
{
    Port *p;
    Dev *d;
    gint64 deadline = g_get_monotonic_time() + WAIT_SECONDS * G_USEC_PER_SEC;
    uint64_t bar;
    Done done;
    unsigned i;

    p = port_start();
    d = p->d;
    bar = d->bar.addr;
    port_ring_copy_to_config(p, PCI_BRIDGE_CONTROL, PCI_BRIDGE_CTL_BUS_RESET,
                             2);
    /* the reset clears the device's command register */
    while (qpci_config_readw(d->pdev, PCI_COMMAND) & PCI_COMMAND_MEMORY) {
        g_assert(g_get_monotonic_time() < deadline);
        g_usleep(1000);
    }
    qpci_config_writew(p->rp, PCI_BRIDGE_CONTROL, 0);
    qpci_config_writel(d->pdev, PCI_BASE_ADDRESS_0, bar);
    qpci_device_enable(d->pdev);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_ID), ==, DMA32_DEMO_ID_MAGIC);
    check_idle(d);
    for (i = 0; i < 4; i++) {
        desc_read(d, i, &done);
        g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_PENDING);
        if (i) {
            canary_check(d, BUF_A + i * 8192, 4096);
        }
    }

    /* and it works again */
    ring_start(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 4096, 0, BUF_A, 5);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, 4096, 5);
    port_stop(p);
}

/*
 * A descriptor of 64 MiB aimed at MMIO: MMCONFIG from bus 2 on, where no
 * function exists, so reads give all ones and writes are dropped.  The
 * memory core dispatches it as 16 Mi 4-byte accesses.  A bottom-half run
 * bounces at most 256 KiB (a bounced byte costs 64 of the 16 MiB budget),
 * so the descriptor takes 256 runs and the main loop gets control between
 * any two.
 */
#define MMCFG_NOBODY        (MMCFG_BASE + (2 << 20))
#define MMIO_DESC_LEN       ((uint64_t)(64 * MiB_))
#define BOUNCED_PER_RUN     ((uint64_t)(256 * KiB_))

/*
 * With the VM stopped and a descriptor rung: let the VM run for as long
 * as QEMU takes to dispatch a 'stop' sent right behind 'cont' (as many
 * bottom-half runs as happen while the monitor thread reads the 'stop'),
 * until the descriptor has started.  The VM is stopped again on return,
 * so what the test reads next cannot move, however slowly it reads.
 * Returns how far BYTES_WRITTEN moved past @before; asserts the
 * descriptor is still under way: HEAD at @head, short of @len.
 */
static uint64_t step_under_way(Dev *d, uint64_t before, uint32_t head,
                               uint64_t len)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_SECONDS * G_USEC_PER_SEC;
    uint64_t moved;

    for (;;) {
        qtest_qmp_send(d->qts, "{'execute': 'cont'}");
        qtest_qmp_send(d->qts, "{'execute': 'stop'}");
        qobject_unref(qtest_qmp_receive(d->qts));
        qobject_unref(qtest_qmp_receive(d->qts));
        moved = rd64(d, DMA32_DEMO_REG_CNT_BYTES_WRITTEN) - before;
        if (moved) {
            break;
        }
        g_assert(g_get_monotonic_time() < deadline);
    }
    g_assert_cmpuint(moved, <, len);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, head);
    return moved;
}

/*
 * The BQL bound.  The main loop answers a QMP command within one
 * bottom-half run of reading it, and a run does at most 256 KiB through
 * the bounce buffer (64 Ki MMIO dispatches) or 16 MiB of RAM.  The test:
 * with the VM stopped, ring the 64 MiB descriptor into MMIO, then send
 * 'cont' and, without waiting, a 'qom-get' of the device's bytes-written
 * counter.  The answer's own value says where the descriptor was when
 * the main loop dispatched the command: still under way (fewer than its
 * 256 runs done), after whole runs of 256 KiB.  Without the byte budget
 * inside a descriptor, the one run that follows 'cont' does all 64 MiB
 * and the command can only be dispatched after it, so the answer is the
 * full length, on any machine.  A slow machine cannot fail it: the
 * descriptor's 256 runs slow down with it, and the command reaches the
 * dispatcher after the monitor thread (which needs no BQL) has read about
 * 100 bytes, not after a number of runs.  The times are printed: the
 * answer's latency against the whole descriptor, which is what the
 * answer would have waited for without the budget.
 */
static void test_qmp_during_mmio(void)
{
    const uint64_t len = MMIO_DESC_LEN;
    Dev *d = dev_start(NULL);
    gint64 t0, t_qmp, t_done;
    uint64_t at_qmp;
    QDict *rsp;
    Done done;

    mmcfg_enable(d);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    desc_write(d, 0, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = len,
                               .dst = MMCFG_NOBODY, .seed = 1 });
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'stop'}"));
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    d->tail = 1;
    t0 = g_get_monotonic_time();
    qtest_qmp_send(d->qts, "{'execute': 'cont'}");
    qtest_qmp_send(d->qts, "{'execute': 'qom-get', 'arguments': "
                   "{'path': '/machine/peripheral/d0', "
                   "'property': 'bytes-written'}}");
    rsp = qtest_qmp_receive(d->qts);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    rsp = qtest_qmp_receive(d->qts);
    t_qmp = g_get_monotonic_time();
    g_assert(qdict_haskey(rsp, "return"));
    g_assert(qnum_get_try_uint(qobject_to(QNum, qdict_get(rsp, "return")),
                               &at_qmp));
    qobject_unref(rsp);
    g_assert_cmpuint(at_qmp, <, len);
    g_assert_cmpuint(at_qmp % BOUNCED_PER_RUN, ==, 0);
    g_assert_cmphex(wait_head(d, 1) & DMA32_DEMO_STATUS_HALTED, ==, 0);
    t_done = g_get_monotonic_time();
    desc_read(d, 0, &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_counters(d, 1, 0, len, 0, 0, 0);
    g_test_message("QMP answered after %" PRIu64 " of the descriptor's %"
                   PRIu64 " runs, %.1f ms after 'cont'; the whole "
                   "descriptor took %.1f ms (%.2f ms per run)",
                   at_qmp / BOUNCED_PER_RUN, len / BOUNCED_PER_RUN,
                   (t_qmp - t0) / 1e3, (t_done - t0) / 1e3,
                   (t_done - t0) / 1e3 / (len / BOUNCED_PER_RUN));
    dev_stop(d);
}

/*
 * A descriptor under way migrates: a COPY of 64 MiB from MMCONFIG (all
 * ones) into canaried RAM is stopped in the middle, its doorbell taken
 * back (TAIL = HEAD, which pauses it without ending it), saved, and
 * loaded into a new QEMU; the stream carries the descriptor's subsection.
 * On the destination the byte counter is where the source stopped; a
 * doorbell resumes the descriptor from there: every byte of the
 * destination buffer is then 0xff (the device's own CHECKSUM of it), and
 * the counter ends at exactly the length, not more (a destination that
 * started the descriptor over, or lost its progress, counts more).
 */
static void test_migrate_under_way(void)
{
    const uint32_t len = MMIO_DESC_LEN;
    g_autofree char *dir = g_dir_make_tmp("dma32-demo-XXXXXX", NULL);
    g_autofree char *file = g_strdup_printf("%s/state", dir);
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    g_autofree uint8_t *ones = g_malloc(len);
    g_autofree char *state = NULL;
    g_autofree uint8_t *edge = g_malloc(4096);
    uint64_t at_stop;
    size_t state_len;
    Done done;
    Dev *d;

    g_assert(dir);
    d = dev_start(NULL);
    mmcfg_enable(d);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    canary_set(d, BUF_A, len);
    desc_write(d, 0, &(Desc) { .op = DMA32_DEMO_OP_COPY, .len = len,
                               .src = MMCFG_NOBODY, .dst = BUF_A });
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'stop'}"));
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    at_stop = step_under_way(d, 0, 0, len);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_BYTES_READ), ==, at_stop);
    wr(d, DMA32_DEMO_REG_DOORBELL, 0);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_STATUS), ==,
                    DMA32_DEMO_STATUS_ENABLED);
    /* written up to the progress, not beyond */
    qtest_memread(d->qts, BUF_A + at_stop - 4096, edge, 4096);
    g_assert(edge[0] == 0xff && edge[4095] == 0xff);
    canary_check(d, BUF_A + at_stop, 4096);
    migrate_to_file(d->qts, file);
    dev_stop(d);
    g_assert(g_file_get_contents(file, &state, &state_len, NULL));
    g_assert(memmem(state, state_len, "dma32-demo/descriptor", 21));

    d = g_new0(Dev, 1);
    d->qts = qtest_initf("%s -M q35 -m 6G -nodefaults "
                         "-device dma32-demo,id=d0,addr=04.0 "
                         "-incoming 'exec:cat %s'", fw_args, file);
    wait_qmp_status(d->qts, "query-status", "status", "paused");
    d->bus = qpci_new_pc(d->qts, NULL);
    d->pdev = qpci_device_find(d->bus, DEV_DEVFN);
    g_assert(d->pdev);
    d->bar.addr = qpci_config_readl(d->pdev, PCI_BASE_ADDRESS_0) &
                  PCI_BASE_ADDRESS_MEM_MASK;
    d->ring = RING_ADDR;
    d->ring_size = RING_ENTRIES;
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_BYTES_WRITTEN), ==, at_stop);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 0);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_TAIL), ==, 0);
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'cont'}"));
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    d->tail = 1;
    g_assert_cmphex(wait_head(d, 1) & DMA32_DEMO_STATUS_HALTED, ==, 0);
    desc_read(d, 0, &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_counters(d, 1, len, len, 0, 0, 0);
    memset(ones, 0xff, len);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, len, BUF_A, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, crc32c_std(ones, len));
    g_test_message("stopped %" PRIu64 " bytes into the descriptor", at_stop);
    dev_stop(d);
    unlink(file);
    rmdir(dir);
}

/*
 * Reprogramming the ring, and a reset, abandon a descriptor under way:
 * the next one at HEAD 0 is fetched afresh, not the old one continued.
 */
static void test_abandon_under_way(void)
{
    const uint32_t len = MMIO_DESC_LEN;
    Dev *d = dev_start(NULL);
    uint64_t at;
    Done done;

    mmcfg_enable(d);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    desc_write(d, 0, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = len,
                               .dst = MMCFG_NOBODY, .seed = 1 });
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'stop'}"));
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    at = step_under_way(d, 0, 0, len);

    /* the same ring again: index 0 is a new descriptor */
    ring_program(d, RING_ADDR, RING_ENTRIES);
    canary_set(d, BUF_A + 4096, 4096);
    desc_write(d, 0, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = 4096,
                               .dst = BUF_A, .seed = 7 });
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    d->tail = 1;
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'cont'}"));
    g_assert_cmphex(wait_head(d, 1) & DMA32_DEMO_STATUS_HALTED, ==, 0);
    desc_read(d, 0, &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, 4096, 7);
    canary_check(d, BUF_A + 4096, 4096);
    check_counters(d, 1, 0, at + 4096, 0, 0, 0);

    /* under way again, then CTRL.RESET */
    desc_write(d, 1, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = len,
                               .dst = MMCFG_NOBODY, .seed = 1 });
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'stop'}"));
    wr(d, DMA32_DEMO_REG_DOORBELL, 2);
    step_under_way(d, at + 4096, 1, len);
    wr(d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'cont'}"));
    check_idle(d);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 4096, 0, BUF_B, 9);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_B, 4096, 9);
    check_counters(d, 1, 0, 4096, 0, 0, 0);
    dev_stop(d);
}

/*
 * Two devices: "d0" behind the root port (Port.d) and a peer "d1" at 05.0
 * on the root bus, its BAR placed at PEER_BAR by hand, outside the port's
 * window, so that each reaches the other's registers through the root
 * complex.  The peer's ring is at PEER_RING.
 */
#define PEER_DEVFN          QPCI_DEVFN(5, 0)
#define PEER_BAR            0xe8000000ULL
#define PEER_RING           0x00140000ULL
/* Slot Control: power controller and power indicator off (unplug) */
#define SLOT_OFF            (PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF)

static Port *pair_start(const char *props)
{
    return bridge_start_with("pcie-root-port,chassis=1", props,
                             "-device dma32-demo,id=d1,addr=05.0");
}

static Dev *peer_get(Port *p)
{
    Dev *b = g_new0(Dev, 1);

    b->qts = p->d->qts;
    b->bus = p->d->bus;
    b->pdev = qpci_device_find(b->bus, PEER_DEVFN);
    g_assert(b->pdev);
    qpci_config_writel(b->pdev, PCI_BASE_ADDRESS_0, PEER_BAR);
    qpci_device_enable(b->pdev);
    b->bar.addr = PEER_BAR;
    g_assert_cmphex(rd(b, DMA32_DEMO_REG_ID), ==, DMA32_DEMO_ID_MAGIC);
    return b;
}

static void peer_put(Dev *b)
{
    g_free(b->pdev);
    g_free(b);
}

/* Aim @d's MSI at @addr with @data, and enable it */
static void msi_aim(Dev *d, uint64_t addr, uint16_t data)
{
    uint8_t cap = qpci_find_capability(d->pdev, PCI_CAP_ID_MSI, 0);
    uint16_t flags;

    g_assert(cap);
    flags = qpci_config_readw(d->pdev, cap + PCI_MSI_FLAGS);
    qpci_config_writel(d->pdev, cap + PCI_MSI_ADDRESS_LO, (uint32_t)addr);
    qpci_config_writel(d->pdev, cap + PCI_MSI_ADDRESS_HI, addr >> 32);
    qpci_config_writew(d->pdev, cap + PCI_MSI_DATA_64, data);
    flags &= ~PCI_MSI_FLAGS_QSIZE;
    qpci_config_writew(d->pdev, cap + PCI_MSI_FLAGS,
                       flags | PCI_MSI_FLAGS_ENABLE);
}

/*
 * Arm @d as a trigger: a completed FILL leaves DONE pending with INT_MASK
 * 0, and its MSI aims at the root port's Slot Control with power off.
 * Any write that sets INT_MASK.DONE then sends the MSI, which unplugs
 * the device behind the port.
 */
static void trigger_arm(Port *p, Dev *d, uint64_t ring)
{
    Done done;

    ring_start(d, ring, RING_ENTRIES);
    wr(d, DMA32_DEMO_REG_INT_MASK, 0);
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_B + 8 * MiB_, 1);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==,
                    DMA32_DEMO_INT_DONE);
    msi_aim(d, p->mmcfg + p->exp + PCI_EXP_SLTCTL, SLOT_OFF);
}

/* The device behind the port was unplugged; the port and QEMU answer */
static void wait_unplugged(Port *p)
{
    QTestState *qts = p->d->qts;

    qtest_qmp_eventwait(qts, "DEVICE_DELETED");
    g_assert(!qom_exists(qts, "/machine/peripheral/d0"));
    g_assert(qom_exists(qts, "/machine/peripheral/rp"));
    g_assert_cmphex(qpci_config_readw(p->rp, PCI_VENDOR_ID), !=, 0xffff);
}

/*
 * A second bus master reaches an unplugged device's registers.  d0's MSI
 * is aimed at its port's Slot Control (power off), DONE is pending and
 * masked.  The peer COPYs 16 bytes into d0's BAR from INT_MASK on: the
 * first write unmasks DONE, d0's MSI unplugs it, and the memory core
 * dispatches the rest of the same access (INT_ACK first) through the
 * FlatView it started with, into the unrealized device, whose config
 * space is freed and whose bus is gone.  d0 must refuse them (decode
 * error), so the peer's COPY completes with a bus error at d0's BAR.
 */
static void test_unplug_peer_mmio(void)
{
    Port *p = pair_start(NULL);
    Dev *a = p->d, *b = peer_get(p);
    uint64_t dst = a->bar.addr + DMA32_DEMO_REG_INT_MASK;
    uint8_t src[16] = { 0 };
    Done done;

    trigger_arm(p, a, RING_ADDR);
    stl_le_p(src, DMA32_DEMO_INT_DONE);         /* INT_MASK */
    stl_le_p(src + 4, DMA32_DEMO_INT_ALL);      /* INT_ACK */
    qtest_memwrite(b->qts, BUF_B, src, sizeof(src));
    ring_start(b, PEER_RING, RING_ENTRIES);
    done = run1(b, DMA32_DEMO_OP_COPY, sizeof(src), BUF_B, dst, 0);
    wait_unplugged(p);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, dst);
    check_fault(b, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_DST, 0, dst);
    g_assert_cmphex(qpci_config_readw(b->pdev, PCI_STATUS) &
                    PCI_STATUS_REC_MASTER_ABORT, ==,
                    PCI_STATUS_REC_MASTER_ABORT);
    /* the peer still works */
    done = run1(b, DMA32_DEMO_OP_FILL, 4096, 0, BUF_A, 3);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(b, BUF_A, 4096, 3);
    peer_put(b);
    port_stop(p);
}

/*
 * d0's own completion MSI, aimed at its port's Slot Control, unplugs it
 * from its bottom half: the descriptor's completion is written first,
 * then nothing more is done for the ones queued behind it.
 */
static void test_unplug_by_own_msi(void)
{
    Port *p = port_start();
    Dev *d = p->d;
    Desc x[3];
    Done done;
    unsigned i;

    ring_start(d, RING_ADDR, RING_ENTRIES);
    msi_aim(d, p->mmcfg + p->exp + PCI_EXP_SLTCTL, SLOT_OFF);
    for (i = 0; i < ARRAY_SIZE(x); i++) {
        x[i] = (Desc) { .op = DMA32_DEMO_OP_FILL, .len = 4096,
                        .dst = BUF_A + i * 8192, .seed = i };
        canary_set(d, BUF_A + i * 8192, 4096);
        desc_write(d, i, &x[i]);
    }
    wr(d, DMA32_DEMO_REG_DOORBELL, ARRAY_SIZE(x));
    wait_unplugged(p);
    desc_read(d, 0, &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, 4096, 0);
    for (i = 1; i < ARRAY_SIZE(x); i++) {
        desc_read(d, i, &done);
        g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_PENDING);
        canary_check(d, BUF_A + i * 8192, 4096);
    }
    port_stop(p);
}

/*
 * A FILL whose bounced write unplugs the device: d0 FILLs the peer's
 * registers from INT_MASK to the end of its BAR and one piece past it.
 * The pattern's first word sets the peer's INT_MASK.DONE, whose MSI
 * unplugs d0; the FILL must stop there, before its next piece (which,
 * on the unplugged device, would touch freed config space).  The seed
 * is chosen so that the pattern also leaves the peer's RING_SIZE
 * invalid: its doorbell, written by the same FILL, halts its ring
 * instead of running whatever the pattern put there.
 */
static void test_unplug_in_fill(void)
{
    const uint32_t off = DMA32_DEMO_REG_INT_MASK;
    const uint32_t len = DMA32_DEMO_BAR0_SIZE - off + 64;
    Port *p = pair_start(NULL);
    Dev *a = p->d, *b = peer_get(p);
    g_autofree uint8_t *pat = g_malloc(len);
    uint64_t seed;
    uint32_t size;
    Done done;

    for (seed = 1;; seed++) {
        pattern(pat, seed, len);
        size = ldl_le_p(pat + DMA32_DEMO_REG_RING_SIZE - off);
        if ((ldl_le_p(pat) & DMA32_DEMO_INT_DONE) &&
            (size & (size - 1))) {
            break;
        }
    }
    trigger_arm(p, b, PEER_RING);
    ring_start(a, RING_ADDR, RING_ENTRIES);
    canary_set(a, BUF_A, 4096);
    desc_write(a, 0, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = len,
                               .dst = PEER_BAR + off, .seed = seed });
    desc_write(a, 1, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = 4096,
                               .dst = BUF_A, .seed = 1 });
    wr(a, DMA32_DEMO_REG_DOORBELL, 2);
    wait_unplugged(p);
    desc_read(a, 0, &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_PENDING);
    canary_check(a, BUF_A, 4096);
    g_assert(rd(b, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_HALTED);
    peer_put(b);
    port_stop(p);
}

/*
 * The descriptor write-back unplugs the device.  d0 truncates (its ring
 * address loses bit 32 on the bus) and its ring is at 2^32 + PEER_BAR:
 * it fetches the peer's registers as a descriptor (ID as the op: an
 * invalid descriptor), and writes back result and fault address, the
 * untruncated ring address, over the peer's STATUS, INT_STATUS and
 * INT_MASK.  The fault address's high word, 1, unmasks the peer's
 * pending DONE, whose MSI unplugs d0 in the middle of its write-back:
 * nothing more may touch d0's config space (a bus error on the status
 * word, written through the unplugged device, would).
 */
static void test_unplug_in_writeback(void)
{
    Port *p = pair_start("overflow=truncate");
    Dev *a = p->d, *b = peer_get(p);

    trigger_arm(p, b, PEER_RING);
    ring_program(a, HIGH + PEER_BAR, RING_ENTRIES);
    wr(a, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
    wr(a, DMA32_DEMO_REG_DOORBELL, 1);
    wait_unplugged(p);
    g_assert_cmphex(rd(b, DMA32_DEMO_REG_INT_MASK), ==, DMA32_DEMO_INT_DONE);
    peer_put(b);
    port_stop(p);
}

/*
 * DMA aimed at the device's own BAR is refused by the device, and the
 * descriptor says so: a bus error at the BAR address, nothing changed.
 */
static void test_dma_own_bar(void)
{
    Dev *d;
    uint64_t bar;
    Done done;

    d = dev_start(NULL);
    bar = d->bar.addr;
    ring_start(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, bar + DMA32_DEMO_REG_CTRL, 3);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, bar + DMA32_DEMO_REG_CTRL);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_DST, 0,
                bar + DMA32_DEMO_REG_CTRL);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_CTRL), ==, DMA32_DEMO_CTRL_ENABLE);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_MASK), ==, DMA32_DEMO_INT_ALL);

    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 64, bar, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, bar);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_SRC, 1, bar);

    /* COPY out of and into the BAR */
    done = run1(d, DMA32_DEMO_OP_COPY, 64, bar, BUF_A, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_SRC, 2, bar);
    done = run1(d, DMA32_DEMO_OP_COPY, 64, BUF_A, bar, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_DST, 3, bar);
    check_counters(d, 0, 64, 0, 0, 4, 0);
    dev_stop(d);
}

/*
 * A bus error sets the received-abort bits in PCI_STATUS, as other bus
 * masters in QEMU do: a hole (nothing decodes the address) is a master
 * abort, a target that refuses (the device's own BAR, an injected error)
 * a target abort.  They are write-1-to-clear.
 */
static void test_pci_status(void)
{
    const uint16_t both = PCI_STATUS_REC_MASTER_ABORT |
                          PCI_STATUS_REC_TARGET_ABORT;
    Dev *d;
    Done done;

    d = dev_start("dma-bits=64,ring-bits=64");
    ring_start(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, BUF_A, 1);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(qpci_config_readw(d->pdev, PCI_STATUS) & both, ==, 0);

    /* a hole: RAM ends at 8 GiB */
    done = run1(d, DMA32_DEMO_OP_FILL, 64, 0, 8 * GiB_, 1);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(qpci_config_readw(d->pdev, PCI_STATUS) & both, ==,
                    PCI_STATUS_REC_MASTER_ABORT);
    qpci_config_writew(d->pdev, PCI_STATUS, both);
    g_assert_cmphex(qpci_config_readw(d->pdev, PCI_STATUS) & both, ==, 0);

    /* the device's own BAR */
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 64, d->bar.addr, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(qpci_config_readw(d->pdev, PCI_STATUS) & both, ==,
                    PCI_STATUS_REC_TARGET_ABORT);
    qpci_config_writew(d->pdev, PCI_STATUS, both);

    /* an injected error */
    wr(d, DMA32_DEMO_REG_INJECT, DMA32_DEMO_INJECT_BUS_ERROR);
    done = run1(d, DMA32_DEMO_OP_COPY, 64, BUF_A, BUF_B, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(qpci_config_readw(d->pdev, PCI_STATUS) & both, ==,
                    PCI_STATUS_REC_TARGET_ABORT);

    /* the ring itself in a hole: a ring error, a master abort */
    qpci_config_writew(d->pdev, PCI_STATUS, both);
    ring_start(d, 8 * GiB_, RING_ENTRIES);
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    g_assert(wait_head(d, 1) & DMA32_DEMO_STATUS_HALTED);
    g_assert_cmphex(qpci_config_readw(d->pdev, PCI_STATUS) & both, ==,
                    PCI_STATUS_REC_MASTER_ABORT);
    check_counters(d, 1, 0, 64, 0, 4, 0);
    dev_stop(d);
}

/*
 * A transfer crossing from one kind of memory into another stops at the
 * first piece the bus rejects: the bytes before it are moved and counted,
 * the fault address is where the rejected region starts, and nothing
 * after it is touched.  Memory map (q35, -m 6G): RAM ends at 8 GiB; a
 * 128 MiB DIMM at 8 GiB + 128 MiB leaves a hole in front of it; the
 * IOAPIC's 4 KiB at 0xfec00000 are followed by unassigned space.
 */
#define DIMM_ADDR           (8 * GiB_ + 128 * MiB_)
#define IOAPIC_END          0xfec01000ULL

static void test_cross_regions(void)
{
    Dev *d;
    Done done;

    d = dev_start_with("-m 6G,slots=2,maxmem=8G "
                       "-object memory-backend-ram,id=m1,size=128M "
                       "-device pc-dimm,memdev=m1,addr=0x208000000",
                       "dma-bits=64");
    ring_start(d, RING_ADDR, RING_ENTRIES);

    /* hole, then RAM: the RAM after the hole stays untouched */
    canary_set(d, DIMM_ADDR, 8192);
    done = run1(d, DMA32_DEMO_OP_FILL, 8192, 0, DIMM_ADDR - 4096, 1);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, DIMM_ADDR - 4096);
    canary_check(d, DIMM_ADDR, 8192);
    qtest_memset(d->qts, BUF_A, 0x5a, 4096);
    done = run1(d, DMA32_DEMO_OP_COPY, 8192, BUF_A, DIMM_ADDR - 4096,
                0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, DIMM_ADDR - 4096);
    canary_check(d, DIMM_ADDR, 8192);

    /* RAM, then hole: moved up to the hole, fault at the hole */
    done = run1(d, DMA32_DEMO_OP_FILL, 8192, 0, 8 * GiB_ - 4096, 2);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, 8 * GiB_);
    check_pattern(d, 8 * GiB_ - 4096, 4096, 2);

    /* MMIO that reads fine, then a hole: the fault is at the hole */
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 512, IOAPIC_END - 256, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, IOAPIC_END);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_SRC, 3,
                IOAPIC_END);
    /* the COPY stopped before reading: its destination was rejected */
    check_counters(d, 0, 256, 4096, 0, 4, 0);
    dev_stop(d);
}

/*
 * Behind a translating VT-d (q35's intel-iommu at 0xfed90000): a 39-bit,
 * three-level identity map of the ring's page and of the first 16 KiB of
 * BUF_A, nothing else.  Each piece is translated once: a transfer that
 * runs off the mapping costs the IOMMU one failed translation (counted
 * with its vtd_dmar_fault trace event in a log file), not two.
 */
#define VTD_BASE            0xfed90000ULL
#define VTD_GCMD            0x18
#define VTD_GSTS            0x1c
#define VTD_RTADDR          0x20
#define VTD_FSTS            0x34
#define VTD_GCMD_TE         (1u << 31)
#define VTD_GCMD_SRTP       (1u << 30)
#define VTD_FSTS_PFO        (1u << 0)
#define VTD_FSTS_PPF        (1u << 1)
#define VTD_TABLES          0x00200000ULL

static void vtd_map_4k(QTestState *qts, uint64_t l1, uint64_t addr)
{
    qtest_writeq(qts, l1 + ((addr >> 12) & 511) * 8, addr | 3);
}

static void test_iommu_translating(void)
{
    g_autofree char *log = NULL;
    int fd;
    g_autofree char *extra = NULL;
    Dev *d;
    g_autofree char *faults = NULL;
    g_auto(GStrv) parts = NULL;
    QTestState *qts;
    uint64_t root = VTD_TABLES, ctx = root + 0x1000, l3 = root + 0x2000;
    uint64_t l2 = root + 0x3000, l1_ring = root + 0x4000;
    uint64_t l1_buf = root + 0x5000;
    g_autofree uint8_t *buf = g_malloc(16384);
    Done done;
    unsigned i;

    fd = g_file_open_tmp("dma32-demo-XXXXXX", &log, NULL);
    extra = g_strdup_printf("-device intel-iommu -D %s "
                            "-trace vtd_dmar_fault", log);
    d = dev_start_with(extra, NULL);
    qts = d->qts;
    qtest_memset(qts, root, 0, 0x6000);
    qtest_writeq(qts, root, ctx | 1);                   /* bus 0 */
    qtest_writeq(qts, ctx + DEV_DEVFN * 16, l3 | 1);
    qtest_writeq(qts, ctx + DEV_DEVFN * 16 + 8, 1 | 1 << 8); /* 39 bit */
    qtest_writeq(qts, l3, l2 | 3);
    qtest_writeq(qts, l2 + (RING_ADDR >> 21) * 8, l1_ring | 3);
    qtest_writeq(qts, l2 + (BUF_A >> 21) * 8, l1_buf | 3);
    vtd_map_4k(qts, l1_ring, RING_ADDR);
    for (i = 0; i < 4; i++) {
        vtd_map_4k(qts, l1_buf, BUF_A + i * 4096);
    }
    qtest_writeq(qts, VTD_BASE + VTD_RTADDR, root);
    qtest_writel(qts, VTD_BASE + VTD_GCMD, VTD_GCMD_SRTP);
    qtest_writel(qts, VTD_BASE + VTD_GCMD, VTD_GCMD_TE);
    g_assert(qtest_readl(qts, VTD_BASE + VTD_GSTS) & VTD_GCMD_TE);

    ring_start(d, RING_ADDR, RING_ENTRIES);
    done = run1(d, DMA32_DEMO_OP_FILL, 16384, 0, BUF_A, 9);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    check_pattern(d, BUF_A, 16384, 9);
    pattern(buf, 9, 16384);
    done = run1(d, DMA32_DEMO_OP_CHECKSUM, 16384, BUF_A, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, crc32c_std(buf, 16384));
    done = run1(d, DMA32_DEMO_OP_COPY, 8192, BUF_A, BUF_A + 8192, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(qtest_readl(qts, VTD_BASE + VTD_FSTS), ==, 0);

    /* one page mapped, then the end of the mapping: one fault */
    canary_set(d, BUF_A + 16384, 4096);
    done = run1(d, DMA32_DEMO_OP_FILL, 8192, 0, BUF_A + 12288, 10);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_BUS_ERROR);
    g_assert_cmphex(done.fault_addr, ==, BUF_A + 16384);
    check_fault(d, DMA32_DEMO_ST_BUS_ERROR, DMA32_DEMO_FAULT_SRC_DST, 3,
                BUF_A + 16384);
    check_pattern(d, BUF_A + 12288, 4096, 10);
    canary_check(d, BUF_A + 16384, 4096);
    g_assert_cmphex(qtest_readl(qts, VTD_BASE + VTD_FSTS), ==, VTD_FSTS_PPF);
    check_counters(d, 3, 16384 + 8192, 16384 + 8192 + 4096, 0, 1, 0);
    dev_stop(d);

    /* the IOMMU saw exactly one failed translation */
    g_assert(g_file_get_contents(log, &faults, NULL, NULL));
    parts = g_strsplit(faults, "vtd_dmar_fault", -1);
    g_assert_cmpuint(g_strv_length(parts), ==, 2);
    close(fd);
    unlink(log);
}

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
 * fuzzer checks them against what the operation did (see fuzz_check).
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

typedef struct Fuzz {
    Dev *d;
    Port *port;                 /* behind a bridge, else NULL */
    FuzzPlace place;
    bool iommu_mapped;          /* FUZZ_IOMMU: what the IOMMU maps */
    uint8_t msi_cap;
    uint64_t abort_base;        /* bus errors when PCI_STATUS was cleared */
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
 *  - a bus error set a received-abort bit in PCI_STATUS.
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

/* A register write, noted in @st */
static void fuzz_wr(Fuzz *f, FuzzStep *st, uint32_t reg, uint32_t val)
{
    wr(f->d, reg, val);
    st->mmio_write = true;
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

static void fuzz_start(Fuzz *f, FuzzPlace place, const char *props)
{
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

    fuzz_start(f, place, props);
    d = f->d;
    r = g_rand_new_with_seed(seed);
    g_test_message("randomized loop on dma32-demo,%s %s: seed 0x%x, %"
                   PRIu64 " ops, %" PRIu64 " s", props ? props : "",
                   fuzz_place_names[place], seed, ops, secs);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    fuzz_snapshot(f, f->snap);
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
             * MSI on/off, aimed at RAM, at the device's own BAR or at the
             * LAPIC window
             */
            static const uint64_t msi_targets[] = {
                MSI_ADDR, 0, LAPIC_BASE,
            };
            uint64_t a = msi_targets[g_rand_int_range(r, 0, 3)];

            if (!a) {
                a = d->bar.addr + DMA32_DEMO_REG_CTRL;
            }
            qpci_config_writel(d->pdev, f->msi_cap + PCI_MSI_ADDRESS_LO, a);
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
        for (i = 0; i < DMA32_DEMO_NR_COUNTERS; i++) {
            uint64_t v = snap_cnt(f->snap, i), o = snap_cnt(old, i);

            seen[i] += v >= o ? v - o : v;
        }
    }
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

/* Benchmark: 64 MiB COPY in the device against host memcpy */

/*
 * Host side.  The baseline copies between the same offsets of one large
 * anonymous mapping, 2 MiB aligned with transparent huge pages, which is
 * how QEMU allocates guest RAM: the copy sees the same page size and
 * address aliasing as the device's.  Two separately allocated buffers are
 * measured as well, for reference (on some hosts they copy faster).
 */
static void *bench_map(uint64_t size, void **to_unmap)
{
    uint8_t *p;

    p = mmap(NULL, size + 2 * MiB_, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    g_assert(p != MAP_FAILED);
    *to_unmap = p;
    p = (uint8_t *)ROUND_UP((uintptr_t)p, 2 * MiB_);
    qemu_madvise(p, size, QEMU_MADV_HUGEPAGE);
    return p;
}

static double host_memcpy_seconds(void *dst, const void *src, uint64_t len,
                                  unsigned batch)
{
    gint64 t0 = g_get_monotonic_time();
    unsigned j;

    for (j = 0; j < batch; j++) {
        memcpy(dst, src, len);
        /* keep the copy from being optimised away */
        __asm__ __volatile__("" : : "r"(dst) : "memory");
    }
    return (g_get_monotonic_time() - t0) / 1e6 / batch;
}

/*
 * Each device run is one doorbell for @batch COPY descriptors of 64 MiB,
 * so that the qtest protocol's round trips (doorbell, polling) are a
 * negligible part of the time measured.  Device and host runs alternate,
 * so that load from other processes hits both alike; best of @runs each.
 */
static void test_bench(void)
{
    const uint64_t len = 64 * MiB_;
    /* not a power of two apart: that aliases in caches and DRAM banks */
    const uint64_t src = 0x10000000ULL, dst = 0x23456000ULL;
    const uint64_t map_size = 0x30000000ULL;
    const unsigned runs = 15, batch = 4;
    double dev_best = 1e9, host_best = 1e9, sep_best = 1e9;
    void *unmap1, *unmap2, *unmap3;
    uint8_t *ram, *sep_src, *sep_dst;
    Desc x[4];
    unsigned i;
    Done done;
    Dev *d;

    d = dev_start(NULL);
    ram = bench_map(map_size, &unmap1);
    sep_src = bench_map(len, &unmap2);
    sep_dst = bench_map(len, &unmap3);
    memset(ram + src, 1, len);
    memset(ram + dst, 2, len);
    memset(sep_src, 1, len);
    memset(sep_dst, 2, len);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    /* touch both buffers so that page faults are not measured */
    run1(d, DMA32_DEMO_OP_FILL, len, 0, src, 1);
    run1(d, DMA32_DEMO_OP_FILL, len, 0, dst, 2);
    for (i = 0; i < batch; i++) {
        x[i] = (Desc) { .op = DMA32_DEMO_OP_COPY, .len = len, .src = src,
                        .dst = dst };
    }
    for (i = 0; i < runs; i++) {
        gint64 t0 = g_get_monotonic_time();

        g_assert_cmphex(submit(d, x, batch) & DMA32_DEMO_STATUS_HALTED,
                        ==, 0);
        dev_best = MIN(dev_best,
                       (g_get_monotonic_time() - t0) / 1e6 / batch);
        desc_read(d, (d->tail - 1) & (d->ring_size - 1), &done);
        g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
        host_best = MIN(host_best,
                        host_memcpy_seconds(ram + dst, ram + src, len, batch));
        sep_best = MIN(sep_best,
                       host_memcpy_seconds(sep_dst, sep_src, len, batch));
    }
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_COMPLETED), ==,
                     2 + runs * batch);
    check_pattern(d, dst, 4096, 1);
    printf("{\"device_copy_mbps\":%.0f,\"host_memcpy_mbps\":%.0f,"
           "\"ratio\":%.3f,\"host_memcpy_separate_buffers_mbps\":%.0f,"
           "\"ratio_separate_buffers\":%.3f,\"bytes\":%" PRIu64
           ",\"batch\":%u,\"runs\":%u}\n",
           len / MiB_ / dev_best, len / MiB_ / host_best,
           host_best / dev_best, len / MiB_ / sep_best,
           sep_best / dev_best, len, batch, runs);
    fflush(stdout);
    munmap(unmap1, map_size + 2 * MiB_);
    munmap(unmap2, len + 2 * MiB_);
    munmap(unmap3, len + 2 * MiB_);
    dev_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    if (g_getenv("DMA32_DEMO_BENCH")) {
        qtest_add_func("/dma32-demo/bench", test_bench);
        return g_test_run();
    }
    qtest_add_func("/dma32-demo/ids", test_ids);
    qtest_add_func("/dma32-demo/bad-props", test_bad_props);
    qtest_add_func("/dma32-demo/fill", test_fill);
    qtest_add_func("/dma32-demo/checksum", test_checksum);
    qtest_add_func("/dma32-demo/copy", test_copy);
    qtest_add_func("/dma32-demo/batch", test_batch);
    qtest_add_func("/dma32-demo/fault-4g", test_fault_4g);
    qtest_add_func("/dma32-demo/fault-wrap-2^64", test_fault_wrap);
    qtest_add_func("/dma32-demo/ring-high", test_ring_high);
    qtest_add_func("/dma32-demo/dma64-ring32", test_dma64_ring32);
    qtest_add_func("/dma32-demo/dma31", test_dma31);
    qtest_add_func("/dma32-demo/truncate", test_truncate);
    qtest_add_func("/dma32-demo/counters", test_counters);
    qtest_add_func("/dma32-demo/msi", test_msi);
    qtest_add_func("/dma32-demo/intx", test_intx);
    qtest_add_func("/dma32-demo/reset", test_reset);
    qtest_add_func("/dma32-demo/malformed", test_malformed);
    qtest_add_func("/dma32-demo/big-batch", test_big_batch);
    qtest_add_func("/dma32-demo/iommu", test_iommu);
    qtest_add_func("/dma32-demo/iommu-translating", test_iommu_translating);
    qtest_add_func("/dma32-demo/unplug-in-copy", test_unplug_in_copy);
    qtest_add_func("/dma32-demo/bus-reset-in-copy", test_bus_reset_in_copy);
    qtest_add_func("/dma32-demo/unplug-peer-mmio", test_unplug_peer_mmio);
    qtest_add_func("/dma32-demo/unplug-by-own-msi", test_unplug_by_own_msi);
    qtest_add_func("/dma32-demo/unplug-in-fill", test_unplug_in_fill);
    qtest_add_func("/dma32-demo/unplug-in-writeback",
                   test_unplug_in_writeback);
    qtest_add_func("/dma32-demo/dma-own-bar", test_dma_own_bar);
    qtest_add_func("/dma32-demo/cross-regions", test_cross_regions);
    qtest_add_func("/dma32-demo/pci-status", test_pci_status);
    qtest_add_func("/dma32-demo/migrate", test_migrate);
    qtest_add_func("/dma32-demo/migrate-config", test_migrate_config);
    qtest_add_func("/dma32-demo/migrate-masked", test_migrate_masked);
    qtest_add_func("/dma32-demo/qmp-during-mmio", test_qmp_during_mmio);
    qtest_add_func("/dma32-demo/migrate-under-way", test_migrate_under_way);
    qtest_add_func("/dma32-demo/abandon-under-way", test_abandon_under_way);
    /* the fuzz suite runs it with its own DMA32_DEMO_FUZZ_OPS */
    if (g_test_slow() || g_getenv("DMA32_DEMO_FUZZ_OPS")) {
        qtest_add_func("/dma32-demo/random", test_random);
    }
    return g_test_run();
}
