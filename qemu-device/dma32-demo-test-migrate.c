/*
 * QTest for the dma32-demo PCI device, part of dma32-demo-test
 *
 * Migration, and the main loop while a long descriptor is under way.
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "dma32-demo-test.h"

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
 * A q35 machine with the device at 04.0 that takes its state from @file,
 * paused once the state is in, its migrated BAR found (not re-enumerated)
 */
static Dev *dev_incoming(const char *fw_args, const char *extra,
                         const char *file)
{
    Dev *d = g_new0(Dev, 1);

    d->qts = qtest_initf("%s -M q35 -m 6G -nodefaults %s "
                         "-device dma32-demo,id=d0,addr=04.0 "
                         "-incoming 'exec:cat %s'", fw_args, extra, file);
    wait_qmp_status(d->qts, "query-status", "status", "paused");
    d->bus = qpci_new_pc(d->qts, NULL);
    d->pdev = qpci_device_find(d->bus, DEV_DEVFN);
    g_assert(d->pdev);
    d->bar.addr = qpci_config_readl(d->pdev, PCI_BASE_ADDRESS_0) &
                  PCI_BASE_ADDRESS_MEM_MASK;
    return d;
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
    Desc x[3];
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

    /* the VM is stopped already: the 'stop' in front changes nothing */
    migrate_to_file(d->qts, file);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 2);
    dev_stop(d);

    /* the source was stopped, so the destination stays paused */
    d = dev_incoming(fw_args, "", file);
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

/*
 * A QEMU (-accel qtest, q35, the devices in @devices, split at spaces)
 * that loads @file must refuse it: exit with status 1.  Returns what it
 * printed on stderr.
 */
static char *incoming_fails(const char *devices, const char *file)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    const char *base[] = {
        "timeout", "30", qemu, "-M", "q35", "-m", "6G", "-accel", "qtest",
        "-display", "none", "-nodefaults", "-incoming",
    };
    g_autofree char *incoming = g_strdup_printf("exec:cat %s", file);
    g_auto(GStrv) dev = g_strsplit(devices, " ", -1);
    g_auto(GStrv) fw = firmware_dirs();
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autofree char *out = NULL;
    g_autoptr(GError) gerr = NULL;
    char *err = NULL;
    int wstatus;
    char **p;

    g_assert(qemu);
    for (p = (char **)base; p < (char **)base + ARRAY_SIZE(base); p++) {
        g_ptr_array_add(argv, *p);
    }
    g_ptr_array_add(argv, incoming);
    for (p = fw; *p; p++) {
        g_ptr_array_add(argv, *p);
    }
    for (p = dev; *p; p++) {
        g_ptr_array_add(argv, *p);
    }
    g_ptr_array_add(argv, NULL);
    g_assert(g_spawn_sync(NULL, (char **)argv->pdata, NULL,
                          G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                          &wstatus, &gerr));
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 1) {
        g_test_message("loading %s: status 0x%x, not exit 1: %s", file,
                       wstatus, err);
        g_assert_not_reached();
    }
    return err;
}

/* ... and print @want */
static void incoming_refused(const char *devices, const char *file,
                             const char *want)
{
    g_autofree char *err = incoming_fails(devices, file);

    if (!strstr(err, want)) {
        g_test_message("want '%s', got: %s", want, err);
        g_assert_not_reached();
    }
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
    Dev *d;
    unsigned i;

    g_assert(dir);
    d = dev_start(NULL);
    migrate_to_file(d->qts, file);
    dev_stop(d);

    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree char *dev = g_strdup_printf("-device dma32-demo,id=d0,"
                                               "addr=04.0,%s",
                                               cases[i].props);
        g_autofree char *want = g_strdup_printf("Failed to load dma32-demo:%s",
                                                cases[i].field);

        g_autofree char *err = incoming_fails(dev, file);

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

    d = dev_incoming(fw_args, "", file);
    g_assert_cmphex(rd64(d, DMA32_DEMO_REG_RING_BASE_LO), ==, ODD_RING_BASE);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_CTRL), ==, DMA32_DEMO_CTRL_ENABLE);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_STATUS), ==, DMA32_DEMO_INT_ALL);
    g_assert_cmphex(rd(d, DMA32_DEMO_REG_INT_MASK), ==, DMA32_DEMO_INT_ALL);
    dev_stop(d);
    unlink(file);
    rmdir(dir);
}

/*
 * A descriptor of 64 MiB aimed at MMIO: MMCONFIG from bus 2 on, where no
 * function exists, so reads give all ones and writes are dropped.  The
 * memory core dispatches it as 16 Mi 4-byte accesses.  A bottom-half run
 * bounces at most 256 KiB (a bounced byte costs 256 of the 64 Mi budget),
 * so the descriptor takes 256 runs and the main loop gets control between
 * any two.
 */
#define MMCFG_NOBODY        (MMCFG_BASE + (2 << 20))
#define MMIO_DESC_LEN       ((uint64_t)(64 * MiB_))
#define BOUNCED_PER_RUN     ((uint64_t)(256 * KiB_))

/*
 * MMCONFIG on, a ring at RING_ADDR holding @desc in slot 0, the VM stopped
 * and the doorbell rung: the descriptor starts only when the VM runs
 */
static void ring_one_stopped(Dev *d, const Desc *desc)
{
    mmcfg_enable(d);
    ring_start(d, RING_ADDR, RING_ENTRIES);
    desc_write(d, 0, desc);
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'stop'}"));
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
}

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
 * Send 'cont' and, without waiting, a 'qom-get' of @prop of the device;
 * return the value in the answer to the second
 */
static uint64_t cont_and_qom_get(Dev *d, const char *prop)
{
    uint64_t val;
    QDict *rsp;

    qtest_qmp_send(d->qts, "{'execute': 'cont'}");
    qtest_qmp_send(d->qts, "{'execute': 'qom-get', 'arguments': "
                   "{'path': '/machine/peripheral/d0', 'property': %s}}",
                   prop);
    rsp = qtest_qmp_receive(d->qts);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    rsp = qtest_qmp_receive(d->qts);
    g_assert(qdict_haskey(rsp, "return"));
    g_assert(qnum_get_try_uint(qobject_to(QNum, qdict_get(rsp, "return")),
                               &val));
    qobject_unref(rsp);
    return val;
}

/*
 * The descriptor cap of a bottom-half run, 64.  A descriptor that faults
 * before it moves a byte costs nothing of the budget, so the cap is the
 * only bound on a ring of them: the largest ring, full (4,095 address
 * faults), must take at least 64 runs of at most 64 descriptors, each run
 * a return to the main loop (without the cap it is one run).  The runs
 * are counted from the dma32_demo_bh trace events in @log, from byte @from
 * on: a QMP command sent behind 'cont' cannot show them, since all 4,095
 * faults take less time (about 8 ms) than the monitor takes to dispatch
 * the command (about 11 ms, measured with qmp-during-mmio).
 */
#define FAULT_RING          0x00400000ULL
#define FAULT_RING_SIZE     4096
#define DESCS_PER_RUN       64

static void faults_ring(Dev *d, const char *log, size_t from)
{
    const uint32_t n = FAULT_RING_SIZE - 1;
    g_autofree uint8_t *raw = g_malloc0(n * DMA32_DEMO_DESC_SIZE);
    g_autofree char *text = NULL;
    unsigned runs = 0, total = 0;
    const char *p;
    size_t len;
    uint32_t i;

    qobject_unref(qtest_qmp(d->qts, "{'execute': 'stop'}"));
    wr(d, DMA32_DEMO_REG_CNT_CLEAR, 1);
    ring_program(d, FAULT_RING, FAULT_RING_SIZE);
    for (i = 0; i < n; i++) {
        uint8_t *x = raw + i * DMA32_DEMO_DESC_SIZE;

        /* a FILL one byte past 4 GiB: an address fault, nothing moved */
        stl_le_p(x, DMA32_DEMO_OP_FILL);
        stl_le_p(x + 4, 2);
        stq_le_p(x + 16, HIGH - 1);
    }
    qtest_memwrite(d->qts, FAULT_RING, raw, n * DMA32_DEMO_DESC_SIZE);
    wr(d, DMA32_DEMO_REG_DOORBELL, n);
    d->tail = n;
    qobject_unref(qtest_qmp(d->qts, "{'execute': 'cont'}"));
    g_assert_cmphex(wait_head(d, n) & DMA32_DEMO_STATUS_HALTED, ==, 0);
    check_counters(d, 0, 0, 0, n, 0, 0);

    g_assert(g_file_get_contents(log, &text, &len, NULL));
    g_assert_cmpuint(len, >=, from);
    for (p = text + from; (p = strstr(p, "dma32_demo_bh descs ")); p++) {
        unsigned descs = g_ascii_strtoull(p + strlen("dma32_demo_bh descs "),
                                          NULL, 10);

        g_assert_cmpuint(descs, <=, DESCS_PER_RUN);
        total += descs;
        runs++;
    }
    g_assert_cmpuint(total, ==, n);
    g_assert_cmpuint(runs, >=, DIV_ROUND_UP(n, DESCS_PER_RUN));
    g_test_message("%u faulting descriptors in %u bottom-half runs", n,
                   runs);
}

/*
 * The BQL bound.  The main loop answers a QMP command within one
 * bottom-half run of reading it, and a run does at most 256 KiB through
 * the bounce buffer (64 Ki MMIO dispatches) or 64 MiB of RAM.  The test:
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
    g_autofree char *log = NULL;
    g_autofree char *extra = NULL;
    g_autofree char *text = NULL;
    gint64 t0, t_qmp, t_done;
    uint64_t at_qmp;
    size_t log_len;
    Done done;
    Dev *d;
    int fd;

    fd = g_file_open_tmp("dma32-demo-XXXXXX", &log, NULL);
    g_assert(fd >= 0);
    close(fd);
    extra = g_strdup_printf("-D %s -trace dma32_demo_bh", log);
    d = dev_start_with(extra, NULL);

    ring_one_stopped(d, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = len,
                                  .dst = MMCFG_NOBODY, .seed = 1 });
    d->tail = 1;
    t0 = g_get_monotonic_time();
    at_qmp = cont_and_qom_get(d, "bytes-written");
    t_qmp = g_get_monotonic_time();
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
    g_assert(g_file_get_contents(log, &text, &log_len, NULL));
    faults_ring(d, log, log_len);
    dev_stop(d);
    unlink(log);
}

/*
 * Three descriptors under way at once, one per operation, on three
 * devices of one VM (d0 at 04.0, d1 at 05.0, d2 at 06.0):
 *   d0  COPY of 64 MiB from MMCONFIG (all ones, 256 runs) into BUF_A;
 *   d1  FILL of UW_FILL_LEN bytes of RAM at UW_FILL_DST (max-xfer raised
 *       for it: RAM is cheap, so a long FILL is what takes several runs);
 *   d2  CHECKSUM of UW_SUM_LEN bytes of RAM at UW_SUM_SRC, all UW_SUM_BYTE.
 * Each is what its part of the subsection carries: the addresses and
 * bytes done (all three), the seed (FILL), the CRC so far (CHECKSUM).
 */
#define UW_DEVICES          "-m 1G -device dma32-demo,id=d1,addr=05.0," \
                            "max-xfer=512M -device dma32-demo,id=d2,addr=06.0"
/*
 * A small machine for the stream that post_load must refuse: a migration
 * reads (and the destination zeroes) every page of guest RAM
 */
#define UW_SMALL            "-m 256M"
#define UW_FILL_DST         0x10000000ULL
#define UW_FILL_LEN         (512 * MiB_)
#define UW_FILL_SEED        0x5eed
#define UW_SUM_SRC          0x30000000ULL
#define UW_SUM_LEN          (16 * MiB_)
#define UW_SUM_BYTE         0x5a
#define UW_RING(i)          (RING_ADDR + (i) * 0x40000ULL)

typedef struct UnderWay {
    Dev *d[3];
    uint64_t len[3];
    uint64_t at_stop[3];
} UnderWay;

/* How far a descriptor under way has come: bytes read or written */
static uint64_t progress(Dev *d)
{
    return MAX(rd64(d, DMA32_DEMO_REG_CNT_BYTES_READ),
               rd64(d, DMA32_DEMO_REG_CNT_BYTES_WRITTEN));
}

/*
 * Byte @off onwards of the FILL pattern of @seed, @len bytes, compared
 * with guest memory at @addr + @off
 */
static void check_pattern_at(Dev *d, uint64_t addr, uint64_t off,
                             uint64_t len, uint64_t seed)
{
    g_autofree uint8_t *got = g_malloc(len);
    uint64_t i;

    qtest_memread(d->qts, addr + off, got, len);
    for (i = 0; i < len; i++) {
        uint8_t want = dma32_demo_pattern_word(seed, (off + i) / 8) >>
                       ((off + i) % 8 * 8);

        if (got[i] != want) {
            g_test_message("FILL byte %" PRIu64 " is 0x%02x, not 0x%02x",
                           off + i, got[i], want);
            g_assert_not_reached();
        }
    }
}

/*
 * Start the first @n of the three descriptors (d0's alone, for a small
 * stream) with the VM stopped and let it run in
 * short steps (as step_under_way) until each has moved and none is done;
 * take each doorbell back (TAIL = HEAD pauses a descriptor without ending
 * it) and save the VM into @file.
 */
static void save_under_way(UnderWay *u, unsigned n, const char *file)
{
    const Desc x[3] = {
        { .op = DMA32_DEMO_OP_COPY, .len = MMIO_DESC_LEN,
          .src = MMCFG_NOBODY, .dst = BUF_A },
        { .op = DMA32_DEMO_OP_FILL, .len = UW_FILL_LEN, .dst = UW_FILL_DST,
          .seed = UW_FILL_SEED },
        { .op = DMA32_DEMO_OP_CHECKSUM, .len = UW_SUM_LEN,
          .src = UW_SUM_SRC },
    };
    gint64 deadline = g_get_monotonic_time() + WAIT_SECONDS * G_USEC_PER_SEC;
    g_autofree uint8_t *edge = g_malloc(8192);
    unsigned i, moving;

    memset(u, 0, sizeof(*u));
    u->d[0] = dev_start_with(n > 1 ? UW_DEVICES : UW_SMALL, NULL);
    mmcfg_enable(u->d[0]);
    if (n > 1) {
        u->d[1] = dev_other(u->d[0], QPCI_DEVFN(5, 0), 0xe1000000ULL);
        u->d[2] = dev_other(u->d[0], QPCI_DEVFN(6, 0), 0xe1001000ULL);
        qtest_memset(u->d[0]->qts, UW_SUM_SRC, UW_SUM_BYTE, UW_SUM_LEN);
    }
    qobject_unref(qtest_qmp(u->d[0]->qts, "{'execute': 'stop'}"));
    for (i = 0; i < n; i++) {
        u->len[i] = x[i].len;
        ring_start(u->d[i], UW_RING(i), RING_ENTRIES);
        desc_write(u->d[i], 0, &x[i]);
        wr(u->d[i], DMA32_DEMO_REG_DOORBELL, 1);
    }
    do {
        qtest_qmp_send(u->d[0]->qts, "{'execute': 'cont'}");
        qtest_qmp_send(u->d[0]->qts, "{'execute': 'stop'}");
        qobject_unref(qtest_qmp_receive(u->d[0]->qts));
        qobject_unref(qtest_qmp_receive(u->d[0]->qts));
        moving = 0;
        for (i = 0; i < n; i++) {
            u->at_stop[i] = progress(u->d[i]);
            moving += !!u->at_stop[i];
        }
        g_assert(g_get_monotonic_time() < deadline);
    } while (moving < n);
    for (i = 0; i < n; i++) {
        g_assert_cmpuint(u->at_stop[i], <, u->len[i]);
        g_assert_cmpuint(rd(u->d[i], DMA32_DEMO_REG_RING_HEAD), ==, 0);
        wr(u->d[i], DMA32_DEMO_REG_DOORBELL, 0);
        g_assert_cmphex(rd(u->d[i], DMA32_DEMO_REG_STATUS), ==,
                        DMA32_DEMO_STATUS_ENABLED);
    }
    /* the COPY wrote all ones up to its progress, into RAM still 0 past it */
    g_assert_cmpuint(rd64(u->d[0], DMA32_DEMO_REG_CNT_BYTES_WRITTEN), ==,
                     u->at_stop[0]);
    qtest_memread(u->d[0]->qts, BUF_A + u->at_stop[0] - 4096, edge, 8192);
    g_assert(edge[0] == 0xff && edge[4095] == 0xff);
    g_assert(!edge[4096] && !edge[8191]);
    migrate_to_file(u->d[0]->qts, file);
    for (i = 1; i < n; i++) {
        dev_other_free(u->d[i]);
    }
    dev_stop(u->d[0]);
}

/*
 * The three descriptors under way migrate: on the destination each byte
 * counter is where the source stopped, and a doorbell resumes each from
 * there.  The COPY's buffer is then all ones (the device's own CHECKSUM
 * of it), the FILL's pattern continues with its seed right after the
 * point where it stopped and to its end, the CHECKSUM's result is the
 * CRC of the whole source, and every counter ends at exactly the length
 * (a destination that started a descriptor over, or lost its progress,
 * its seed or its partial CRC, fails one of these).
 */
static void test_migrate_under_way(void)
{
    g_autofree char *dir = g_dir_make_tmp("dma32-demo-XXXXXX", NULL);
    g_autofree char *file = g_strdup_printf("%s/state", dir);
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    g_autofree uint8_t *buf = g_malloc(MAX(MMIO_DESC_LEN, UW_SUM_LEN));
    g_autofree char *state = NULL;
    uint64_t fill_at;
    size_t state_len;
    UnderWay u;
    Done done;
    Dev *d[3];
    unsigned i;

    g_assert(dir);
    save_under_way(&u, 3, file);
    g_assert(g_file_get_contents(file, &state, &state_len, NULL));
    g_assert(memmem(state, state_len, "dma32-demo/descriptor", 21));

    d[0] = dev_incoming(fw_args, UW_DEVICES, file);
    d[1] = dev_other(d[0], QPCI_DEVFN(5, 0), 0);
    d[2] = dev_other(d[0], QPCI_DEVFN(6, 0), 0);
    qobject_unref(qtest_qmp(d[0]->qts, "{'execute': 'cont'}"));
    for (i = 0; i < 3; i++) {
        d[i]->ring = UW_RING(i);
        d[i]->ring_size = RING_ENTRIES;
        g_assert_cmpuint(progress(d[i]), ==, u.at_stop[i]);
        g_assert_cmpuint(rd(d[i], DMA32_DEMO_REG_RING_HEAD), ==, 0);
        g_assert_cmpuint(rd(d[i], DMA32_DEMO_REG_RING_TAIL), ==, 0);
        wr(d[i], DMA32_DEMO_REG_DOORBELL, 1);
        d[i]->tail = 1;
    }
    for (i = 0; i < 3; i++) {
        g_assert_cmphex(wait_head(d[i], 1) & DMA32_DEMO_STATUS_HALTED, ==, 0);
        desc_read(d[i], 0, &done);
        g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
        check_counters(d[i], 1, i == 1 ? 0 : u.len[i], i == 2 ? 0 : u.len[i],
                       0, 0, 0);
        if (i == 2) {
            memset(buf, UW_SUM_BYTE, UW_SUM_LEN);
            g_assert_cmphex(done.result, ==, crc32c_std(buf, UW_SUM_LEN));
        }
    }
    /* the FILL continued with its own seed where it stopped */
    fill_at = QEMU_ALIGN_DOWN(u.at_stop[1], 8);
    check_pattern_at(d[1], UW_FILL_DST, fill_at - 8, 4096, UW_FILL_SEED);
    check_pattern_at(d[1], UW_FILL_DST, UW_FILL_LEN - 4096, 4096,
                     UW_FILL_SEED);
    /* the COPY's destination is all ones */
    memset(buf, 0xff, MMIO_DESC_LEN);
    done = run1(d[0], DMA32_DEMO_OP_CHECKSUM, MMIO_DESC_LEN, BUF_A, 0, 0);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_OK);
    g_assert_cmphex(done.result, ==, crc32c_std(buf, MMIO_DESC_LEN));
    g_test_message("stopped COPY, FILL, CHECKSUM at %" PRIu64 ", %" PRIu64
                   ", %" PRIu64 " bytes", u.at_stop[0], u.at_stop[1],
                   u.at_stop[2]);
    dev_other_free(d[1]);
    dev_other_free(d[2]);
    dev_stop(d[0]);
    unlink(file);
    rmdir(dir);
}

/*
 * post_load refuses a stream whose descriptor under way, or whose ring,
 * the device could not have had: the stream of save_under_way() with one
 * field of d0's state (the COPY's) changed, loaded into a QEMU that must
 * exit naming the problem.  The subsection follows the main section's
 * last field; offsets are from the subsection's marker byte (main
 * section, back) and from its first field (subsection, forward).
 */
#define SUB_MARK            "\x05\x15" "dma32-demo/descriptor"
#define SUB_FIELDS          (2 + 21 + 4)    /* marker, name, version */
#define CUR_OP              0
#define CUR_LEN             4
#define CUR_SRC             8
#define CUR_DST             16
#define CUR_OFF             32
/* ring_size, head, tail, halted, stalled, inject, fault, counters */
#define MAIN_RING_BASE      (-(8 + 4 + 4 + 4 + 1 + 1 + 1 + 8 + 4 + 48 + 48))
#define MAIN_RING_SIZE      (MAIN_RING_BASE + 8)
#define MAIN_HEAD           (MAIN_RING_BASE + 12)
#define MAIN_TAIL           (MAIN_RING_BASE + 16)

/* The position of the marker of @state's first subsection of op @op */
static size_t find_cur(const char *state, size_t len, uint32_t op)
{
    const char *p = state;

    for (;;) {
        p = memmem(p, len - (p - state), SUB_MARK, sizeof(SUB_MARK) - 1);
        g_assert(p);
        if (ldl_be_p(p + SUB_FIELDS + CUR_OP) == op) {
            return p - state;
        }
        p++;
    }
}

static void test_migrate_refused(void)
{
    static const struct {
        int off;                /* >= 0: subsection field, < 0: main */
        unsigned size;
        uint64_t val;
        const char *want;
    } cases[] = {
        { CUR_OP, 4, 4, "descriptor under way is inconsistent" },
        { CUR_LEN, 4, 0, "descriptor under way is inconsistent" },
        { CUR_OFF, 8, MMIO_DESC_LEN, "descriptor under way is inconsistent" },
        { MAIN_RING_SIZE, 4, 0, "descriptor under way is inconsistent" },
        { CUR_SRC, 8, HIGH - 4096, "reaches past dma-bits 32" },
        { CUR_DST, 8, HIGH, "reaches past dma-bits 32" },
        { MAIN_RING_BASE, 8, HIGH - 2048, "reaches past ring-bits 32" },
    };
    g_autofree char *dir = g_dir_make_tmp("dma32-demo-XXXXXX", NULL);
    g_autofree char *file = g_strdup_printf("%s/state", dir);
    g_autofree char *bad = g_strdup_printf("%s/bad", dir);
    g_auto(GStrv) fw = firmware_dirs();
    g_autofree char *fw_args = g_strjoinv(" ", fw);
    g_autofree char *state = NULL;
    size_t len, at;
    UnderWay u;
    unsigned i;
    Dev *d;

    g_assert(dir);
    save_under_way(&u, 1, file);
    g_assert(g_file_get_contents(file, &state, &len, NULL));
    at = find_cur(state, len, DMA32_DEMO_OP_COPY);
    g_assert_cmphex(ldq_be_p(state + at + MAIN_RING_BASE), ==, UW_RING(0));
    g_assert_cmpuint(ldl_be_p(state + at + MAIN_RING_SIZE), ==, RING_ENTRIES);

    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree char *copy = g_memdup2(state, len);
        char *f = copy + at + cases[i].off;

        if (cases[i].off >= 0) {
            f += SUB_FIELDS;
        }
        if (cases[i].size == 8) {
            stq_be_p(f, cases[i].val);
        } else {
            stl_be_p(f, cases[i].val);
        }
        g_assert(g_file_set_contents(bad, copy, len, NULL));
        incoming_refused(UW_SMALL " -device dma32-demo,id=d0,addr=04.0", bad,
                         cases[i].want);
    }

    /* HEAD and TAIL out of the ring load clamped into it */
    stl_be_p(state + at + MAIN_HEAD, 0xffffffc1);
    stl_be_p(state + at + MAIN_TAIL, 0xffffffff);
    g_assert(g_file_set_contents(bad, state, len, NULL));
    d = dev_incoming(fw_args, UW_SMALL, bad);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_HEAD), ==, 1);
    g_assert_cmpuint(rd(d, DMA32_DEMO_REG_RING_TAIL), ==, RING_ENTRIES - 1);
    dev_stop(d);
    unlink(bad);
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

    ring_one_stopped(d, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = len,
                                  .dst = MMCFG_NOBODY, .seed = 1 });
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

void dma32_demo_add_migrate_tests(void)
{
    qtest_add_func("/dma32-demo/migrate", test_migrate);
    qtest_add_func("/dma32-demo/migrate-config", test_migrate_config);
    qtest_add_func("/dma32-demo/migrate-masked", test_migrate_masked);
    qtest_add_func("/dma32-demo/qmp-during-mmio", test_qmp_during_mmio);
    qtest_add_func("/dma32-demo/migrate-under-way", test_migrate_under_way);
    qtest_add_func("/dma32-demo/migrate-refused", test_migrate_refused);
    qtest_add_func("/dma32-demo/abandon-under-way", test_abandon_under_way);
}
