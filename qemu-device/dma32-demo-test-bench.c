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

/* CPU time of this thread, and of QEMU's main thread (@pid), in seconds */
static double thread_cpu_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double qemu_cpu_seconds(long pid)
{
    g_autofree char *path = g_strdup_printf("/proc/%ld/task/%ld/schedstat",
                                            pid, pid);
    g_autofree char *text = NULL;

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    return g_ascii_strtoull(text, NULL, 10) / 1e9;
}

static double host_memcpy_seconds(void *dst, const void *src, uint64_t len,
                                  unsigned batch, double *cpu)
{
    double c0 = thread_cpu_seconds();
    gint64 t0 = g_get_monotonic_time();
    unsigned j;

    for (j = 0; j < batch; j++) {
        memcpy(dst, src, len);
        /* keep the copy from being optimised away */
        __asm__ __volatile__("" : : "r"(dst) : "memory");
    }
    if (cpu) {
        *cpu = (thread_cpu_seconds() - c0) / batch;
    }
    return (g_get_monotonic_time() - t0) / 1e6 / batch;
}

#define BENCH_RUNS          15

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/*
 * One device run: a doorbell for @n descriptors; seconds per descriptor,
 * of the wall clock and of the CPU time of QEMU's main thread (@pid),
 * which runs the device's bottom half
 */
static double device_seconds(Dev *d, long pid, const Desc *x, unsigned n,
                             double *cpu)
{
    double c0 = qemu_cpu_seconds(pid);
    gint64 t0 = g_get_monotonic_time();
    double t;
    Done done;

    g_assert_cmphex(submit(d, x, n) & DMA32_DEMO_STATUS_HALTED, ==, 0);
    t = (g_get_monotonic_time() - t0) / 1e6 / n;
    *cpu = (qemu_cpu_seconds(pid) - c0) / n;
    desc_read(d, (d->tail - 1) & (d->ring_size - 1), &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    return t;
}

/*
 * Each device run is one doorbell for @batch COPY descriptors of 64 MiB,
 * so that the qtest protocol's round trips (doorbell, polling) are a
 * negligible part of the time measured.  Device and host runs alternate
 * in pairs, which one goes first alternating too, so that load from other
 * processes hits both sides of a pair alike.  The ratio reported is the
 * median of the @runs pairs' ratios, with their spread (min, max): on the
 * shared 2-core host the best of each side, taken from different
 * moments, swung from 0.5x to 2.6x with one CPU hog running; it is
 * reported as ratio_best.
 */
static void test_bench(void)
{
    const uint64_t len = 64 * MiB_;
    /* not a power of two apart: that aliases in caches and DRAM banks */
    const uint64_t src = 0x10000000ULL, dst = 0x23456000ULL;
    const uint64_t map_size = 0x30000000ULL;
    const unsigned runs = BENCH_RUNS, batch = 4;
    const uint64_t sum_len = 16 * MiB_;
    double dev_best = 1e9, host_best = 1e9, sep_best = 1e9;
    double fill_best = 1e9, sum_best = 1e9, ratio[BENCH_RUNS];
    double ratio_cpu[BENCH_RUNS];
    void *unmap1, *unmap2, *unmap3;
    uint8_t *ram, *sep_src, *sep_dst;
    g_autofree char *dir = g_dir_make_tmp("dma32-demo-XXXXXX", NULL);
    g_autofree char *pidfile = g_strdup_printf("%s/pid", dir);
    g_autofree char *pidopt = g_strdup_printf("-pidfile %s", pidfile);
    g_autofree char *pidtext = NULL;
    Desc x[4];
    unsigned i;
    long pid;
    Dev *d;

    g_assert(dir);
    d = dev_start_with(pidopt, NULL);
    g_assert(g_file_get_contents(pidfile, &pidtext, NULL, NULL));
    pid = g_ascii_strtoll(pidtext, NULL, 10);
    g_assert_cmpint(pid, >, 0);
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
        double t_dev, t_host, c_dev, c_host;

        if (i & 1) {
            t_host = host_memcpy_seconds(ram + dst, ram + src, len, batch,
                                         &c_host);
            t_dev = device_seconds(d, pid, x, batch, &c_dev);
        } else {
            t_dev = device_seconds(d, pid, x, batch, &c_dev);
            t_host = host_memcpy_seconds(ram + dst, ram + src, len, batch,
                                         &c_host);
        }
        ratio[i] = t_host / t_dev;
        ratio_cpu[i] = c_host / c_dev;
        dev_best = MIN(dev_best, t_dev);
        host_best = MIN(host_best, t_host);
        sep_best = MIN(sep_best, host_memcpy_seconds(sep_dst, sep_src, len,
                                                     batch, NULL));
    }
    qsort(ratio, runs, sizeof(ratio[0]), cmp_double);
    qsort(ratio_cpu, runs, sizeof(ratio_cpu[0]), cmp_double);
    g_assert_cmpuint(rd64(d, DMA32_DEMO_REG_CNT_COMPLETED), ==,
                     2 + runs * batch);
    check_pattern(d, dst, 4096, 1);
    /*
     * FILL and CHECKSUM of RAM, for the cost of their bytes in the bottom
     * half's budget (against COPY's): best of a few single descriptors
     */
    for (i = 0; i < 5; i++) {
        gint64 t0 = g_get_monotonic_time();

        run1(d, DMA32_DEMO_OP_FILL, len, 0, dst, i);
        fill_best = MIN(fill_best, (g_get_monotonic_time() - t0) / 1e6);
        t0 = g_get_monotonic_time();
        run1(d, DMA32_DEMO_OP_CHECKSUM, sum_len, src, 0, 0);
        sum_best = MIN(sum_best, (g_get_monotonic_time() - t0) / 1e6);
    }
    printf("{\"device_copy_mbps\":%.0f,\"host_memcpy_mbps\":%.0f,"
           "\"ratio\":%.3f,\"ratio_min\":%.3f,\"ratio_max\":%.3f,"
           "\"ratio_best\":%.3f,\"ratio_cpu\":%.3f,"
           "\"ratio_cpu_min\":%.3f,\"ratio_cpu_max\":%.3f,"
           "\"host_memcpy_separate_buffers_mbps\":%.0f,"
           "\"ratio_separate_buffers\":%.3f,\"bytes\":%" PRIu64
           ",\"batch\":%u,\"runs\":%u,\"device_fill_mbps\":%.0f,"
           "\"device_checksum_mbps\":%.0f}\n",
           len / MiB_ / dev_best, len / MiB_ / host_best,
           ratio[runs / 2], ratio[0], ratio[runs - 1],
           host_best / dev_best, ratio_cpu[runs / 2], ratio_cpu[0],
           ratio_cpu[runs - 1], len / MiB_ / sep_best,
           sep_best / dev_best, len, batch, runs, len / MiB_ / fill_best,
           sum_len / MiB_ / sum_best);
    fflush(stdout);
    munmap(unmap1, map_size + 2 * MiB_);
    munmap(unmap2, len + 2 * MiB_);
    munmap(unmap3, len + 2 * MiB_);
    dev_stop(d);
    unlink(pidfile);
    rmdir(dir);
}

void dma32_demo_add_bench_test(void)
{
    qtest_add_func("/dma32-demo/bench", test_bench);
}
