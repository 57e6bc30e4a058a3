/*
 * QTest for the dma32-demo PCI device, part of dma32-demo-test
 *
 * The benchmark: 64 MiB COPY in the device against host memcpy.
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "dma32-demo-test.h"

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

void dma32_demo_add_bench_test(void)
{
    qtest_add_func("/dma32-demo/bench", test_bench);
}
