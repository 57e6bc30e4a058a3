/*
 * QTest for the dma32-demo PCI device, part of dma32-demo-test
 *
 * Registers, properties, counters, interrupts, reset, malformed input
 * and PCI_STATUS.
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "dma32-demo-test.h"

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
    msi_aim(d, MSI_ADDR, MSI_DATA, true);
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
    msi_aim(d, MSI_ADDR, MSI_DATA, true);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    msi_aim(d, MSI_ADDR, MSI_DATA, false);
    g_assert_cmpint(intx_gsi(d), ==, gsi);
    /* reset lowers it */
    wr(d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
    g_assert_cmpint(intx_gsi(d), ==, -1);
    dev_stop(d);
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

void dma32_demo_add_regs_tests(void)
{
    qtest_add_func("/dma32-demo/ids", test_ids);
    qtest_add_func("/dma32-demo/bad-props", test_bad_props);
    qtest_add_func("/dma32-demo/counters", test_counters);
    qtest_add_func("/dma32-demo/msi", test_msi);
    qtest_add_func("/dma32-demo/intx", test_intx);
    qtest_add_func("/dma32-demo/reset", test_reset);
    qtest_add_func("/dma32-demo/malformed", test_malformed);
    qtest_add_func("/dma32-demo/pci-status", test_pci_status);
}
