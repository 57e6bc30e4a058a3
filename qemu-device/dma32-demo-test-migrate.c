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
 * A q35 machine with the device at 04.0 that takes its state from @file,
 * paused once the state is in, its BAR found
 */
static Dev *dev_incoming(const char *fw_args, const char *file)
{
    Dev *d = g_new0(Dev, 1);

    d->qts = qtest_initf("%s -M q35 -m 6G -nodefaults "
                         "-device dma32-demo,id=d0,addr=04.0 "
                         "-incoming 'exec:cat %s'", fw_args, file);
    wait_qmp_status(d->qts, "query-status", "status", "paused");
    d->bus = qpci_new_pc(d->qts, NULL);
    d->pdev = qpci_device_find(d->bus, DEV_DEVFN);
    g_assert(d->pdev);
    d->bar.addr = qpci_config_readl(d->pdev, PCI_BASE_ADDRESS_0) &
                  PCI_BASE_ADDRESS_MEM_MASK;
    return d;
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

    d = dev_incoming(fw_args, file);
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
 * bounces at most 256 KiB (a bounced byte costs 64 of the 16 MiB budget),
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

    ring_one_stopped(d, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = len,
                                  .dst = MMCFG_NOBODY, .seed = 1 });
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
    canary_set(d, BUF_A, len);
    ring_one_stopped(d, &(Desc) { .op = DMA32_DEMO_OP_COPY, .len = len,
                                  .src = MMCFG_NOBODY, .dst = BUF_A });
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

    d = dev_incoming(fw_args, file);
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
    qtest_add_func("/dma32-demo/abandon-under-way", test_abandon_under_way);
}
