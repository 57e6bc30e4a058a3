/*
 * QTest for the dma32-demo PCI device, part of dma32-demo-test
 *
 * The operations, the address limits, the IOMMU, and DMA into odd
 * targets (holes, DIMMs, the device's own BAR).
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "dma32-demo-test.h"

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

static void test_iommu_translating(void)
{
    g_autofree char *log = NULL;
    int fd;
    g_autofree char *extra = NULL;
    Dev *d;
    g_autofree char *faults = NULL;
    g_auto(GStrv) parts = NULL;
    QTestState *qts;
    Vtd v;
    g_autofree uint8_t *buf = g_malloc(16384);
    Done done;
    uint64_t frcd;

    fd = g_file_open_tmp("dma32-demo-XXXXXX", &log, NULL);
    extra = g_strdup_printf("-device intel-iommu -D %s "
                            "-trace vtd_dmar_fault", log);
    d = dev_start_with(extra, NULL);
    qts = d->qts;
    vtd_init(&v, qts, VTD_TABLES, 0x6000, DEV_DEVFN);
    vtd_map(&v, RING_ADDR, RING_ADDR, 4096, VTD_PTE_R | VTD_PTE_W);
    vtd_map(&v, BUF_A, BUF_A, 16384, VTD_PTE_R | VTD_PTE_W);
    vtd_enable(&v);

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
    /* recorded: the page, a write by 00:04.0 without permission */
    g_assert_cmphex(qtest_readq(qts, VTD_BASE + VTD_FRCD), ==,
                    BUF_A + 16384);
    frcd = qtest_readq(qts, VTD_BASE + VTD_FRCD + 8);
    g_assert(frcd & VTD_FRCD_F);
    g_assert(!(frcd & VTD_FRCD_T));
    g_assert_cmphex(VTD_FRCD_SID(frcd), ==, DEV_DEVFN);
    g_assert_cmpuint(VTD_FRCD_FR(frcd), ==, VTD_FR_WRITE);
    check_counters(d, 3, 16384 + 8192, 16384 + 8192 + 4096, 0, 1, 0);
    vtd_free(&v);
    dev_stop(d);

    /* the IOMMU saw exactly one failed translation */
    g_assert(g_file_get_contents(log, &faults, NULL, NULL));
    parts = g_strsplit(faults, "vtd_dmar_fault", -1);
    g_assert_cmpuint(g_strv_length(parts), ==, 2);
    close(fd);
    unlink(log);
}

void dma32_demo_add_dma_tests(void)
{
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
    qtest_add_func("/dma32-demo/big-batch", test_big_batch);
    qtest_add_func("/dma32-demo/iommu", test_iommu);
    qtest_add_func("/dma32-demo/iommu-translating", test_iommu_translating);
    qtest_add_func("/dma32-demo/dma-own-bar", test_dma_own_bar);
    qtest_add_func("/dma32-demo/cross-regions", test_cross_regions);
}
