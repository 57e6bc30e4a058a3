/*
 * QTest for the dma32-demo PCI device
 *
 * Runs on "-M q35 -m 6G": RAM is at [0, 2 GiB) and [4 GiB, 8 GiB).  The
 * libqos allocator never returns memory above 4 GiB, so this test places
 * its rings and buffers at fixed addresses and writes them directly with
 * qtest_memwrite.
 *
 * One program from several files, each adding its cases from main():
 *   dma32-demo-test.c          the helpers they share (dma32-demo-test.h)
 *   dma32-demo-test-regs.c     registers, properties, counters, interrupts,
 *                              reset, malformed input, PCI_STATUS
 *   dma32-demo-test-dma.c      the operations, address limits, IOMMU,
 *                              DMA into odd targets
 *   dma32-demo-test-unplug.c   unplug and reset under way: stale state
 *   dma32-demo-test-migrate.c  migration, and QMP during a long descriptor
 *   dma32-demo-test-fuzz.c     the randomized loop
 *   dma32-demo-test-guard.c    the randomized loop's guard regions in RAM
 *   dma32-demo-test-bench.c    the benchmark
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
#include "dma32-demo-test.h"

uint32_t rd(Dev *d, uint32_t reg)
{
    return qpci_io_readl(d->pdev, d->bar, reg);
}

void wr(Dev *d, uint32_t reg, uint32_t val)
{
    qpci_io_writel(d->pdev, d->bar, reg, val);
}

uint64_t rd64(Dev *d, uint32_t reg)
{
    uint64_t lo;

    lo = rd(d, reg);
    return lo | (uint64_t)rd(d, reg + 4) << 32;
}

void dev_setup(Dev *d)
{
    d->bus = qpci_new_pc(d->qts, NULL);
    d->pdev = qpci_device_find(d->bus, DEV_DEVFN);
    g_assert(d->pdev);
    qpci_device_enable(d->pdev);
    d->bar = qpci_iomap(d->pdev, 0, NULL);
}

void dev_teardown(Dev *d)
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
char **firmware_dirs(void)
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

Dev *dev_start_with(const char *extra, const char *props)
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

Dev *dev_start(const char *props)
{
    return dev_start_with("", props);
}

void dev_stop(Dev *d)
{
    dev_teardown(d);
    qtest_quit(d->qts);
    g_free(d);
}

void ring_program(Dev *d, uint64_t base, uint32_t size)
{
    wr(d, DMA32_DEMO_REG_RING_BASE_LO, (uint32_t)base);
    wr(d, DMA32_DEMO_REG_RING_BASE_HI, base >> 32);
    wr(d, DMA32_DEMO_REG_RING_SIZE, size);
    d->ring = base;
    d->ring_size = size;
    d->tail = 0;
}

void ring_start(Dev *d, uint64_t base, uint32_t size)
{
    ring_program(d, base, size);
    wr(d, DMA32_DEMO_REG_INT_MASK, DMA32_DEMO_INT_ALL);
    wr(d, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
}

uint64_t desc_addr(Dev *d, uint32_t idx)
{
    return d->ring + (uint64_t)idx * DMA32_DEMO_DESC_SIZE;
}

void desc_write(Dev *d, uint32_t idx, const Desc *x)
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

void desc_read(Dev *d, uint32_t idx, Done *done)
{
    uint8_t raw[16];

    qtest_memread(d->qts, desc_addr(d, idx) + DMA32_DEMO_DESC_STATUS_OFF,
                  raw, sizeof(raw));
    done->status = ldl_le_p(raw);
    done->result = ldl_le_p(raw + 4);
    done->fault_addr = ldq_le_p(raw + 8);
}

/* Wait until HEAD reaches @head or the ring halts; return STATUS */
uint32_t wait_head(Dev *d, uint32_t head)
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
uint32_t submit(Dev *d, const Desc *x, unsigned n)
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
Done run1(Dev *d, uint32_t op, uint32_t len, uint64_t src,
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

void pattern(uint8_t *buf, uint64_t seed, uint64_t len)
{
    uint64_t i;

    for (i = 0; i < len; i++) {
        buf[i] = dma32_demo_pattern_word(seed, i / 8) >> ((i % 8) * 8);
    }
}

uint32_t crc32c_std(const void *buf, size_t len)
{
    return crc32c(0xffffffff, buf, len);
}

void check_pattern(Dev *d, uint64_t addr, uint64_t len, uint64_t seed)
{
    g_autofree uint8_t *want = g_malloc(len);
    g_autofree uint8_t *got = g_malloc(len);

    pattern(want, seed, len);
    qtest_memread(d->qts, addr, got, len);
    g_assert(memcmp(want, got, len) == 0);
}

/* Canaries: fill a region with a known byte and check it stayed so */
void canary_set(Dev *d, uint64_t addr, uint64_t len)
{
    qtest_memset(d->qts, addr, 0xa5, len);
}

void canary_check(Dev *d, uint64_t addr, uint64_t len)
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

void check_fault(Dev *d, uint32_t status, uint32_t source,
                 uint32_t idx, uint64_t addr)
{
    uint32_t info;

    info = rd(d, DMA32_DEMO_REG_FAULT_INFO);
    g_assert_cmphex(rd64(d, DMA32_DEMO_REG_FAULT_ADDR_LO), ==, addr);
    g_assert_cmpuint(DMA32_DEMO_FAULT_STATUS(info), ==, status);
    g_assert_cmpuint(DMA32_DEMO_FAULT_SOURCE(info), ==, source);
    g_assert_cmpuint(DMA32_DEMO_FAULT_INDEX(info), ==, idx);
}

void check_counters(Dev *d, uint64_t completed, uint64_t rd_bytes,
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
void expect_addr_fault(Dev *d, Done done, uint32_t idx,
                       uint32_t source, uint64_t addr)
{
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_ADDR_FAULT);
    g_assert_cmphex(done.fault_addr, ==, addr);
    check_fault(d, DMA32_DEMO_ST_ADDR_FAULT, source, idx, addr);
    g_assert(rd(d, DMA32_DEMO_REG_INT_STATUS) & DMA32_DEMO_INT_ERROR);
    wr(d, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_ALL);
}

void check_idle(Dev *d)
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

/*
 * Another dma32-demo, function @devfn on @d's bus (which it borrows), its
 * BAR placed at @bar by hand (0: where it is); free it with
 * dev_other_free()
 */
Dev *dev_other(Dev *d, int devfn, uint64_t bar)
{
    Dev *o = g_new0(Dev, 1);

    o->qts = d->qts;
    o->bus = d->bus;
    o->pdev = qpci_device_find(d->bus, devfn);
    g_assert(o->pdev);
    if (bar) {
        qpci_config_writel(o->pdev, PCI_BASE_ADDRESS_0, bar);
        qpci_device_enable(o->pdev);
    }
    o->bar.addr = qpci_config_readl(o->pdev, PCI_BASE_ADDRESS_0) &
                  PCI_BASE_ADDRESS_MEM_MASK;
    g_assert_cmphex(rd(o, DMA32_DEMO_REG_ID), ==, DMA32_DEMO_ID_MAGIC);
    return o;
}

void dev_other_free(Dev *o)
{
    g_free(o->pdev);
    g_free(o);
}

/*
 * Aim @d's MSI (one vector, 64-bit address) at @addr with @data, enabled
 * or not; returns the capability's offset
 */
uint8_t msi_aim(Dev *d, uint64_t addr, uint16_t data, bool enable)
{
    uint8_t cap = qpci_find_capability(d->pdev, PCI_CAP_ID_MSI, 0);
    uint16_t flags;

    g_assert(cap);
    flags = qpci_config_readw(d->pdev, cap + PCI_MSI_FLAGS);
    g_assert(flags & PCI_MSI_FLAGS_64BIT);
    qpci_config_writel(d->pdev, cap + PCI_MSI_ADDRESS_LO, (uint32_t)addr);
    qpci_config_writel(d->pdev, cap + PCI_MSI_ADDRESS_HI, addr >> 32);
    qpci_config_writew(d->pdev, cap + PCI_MSI_DATA_64, data);
    flags &= ~(PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_QSIZE);
    qpci_config_writew(d->pdev, cap + PCI_MSI_FLAGS,
                       flags | (enable ? PCI_MSI_FLAGS_ENABLE : 0));
    return cap;
}

/* Enable MMCONFIG at MMCFG_BASE, as firmware would */
void mmcfg_enable(Dev *d)
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
Port *bridge_start_with(const char *bridge, const char *props,
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

Port *bridge_start(const char *bridge, const char *props)
{
    return bridge_start_with(bridge, props, "");
}

void port_stop(Port *p)
{
    g_free(p->rp);
    dev_stop(p->d);
    g_free(p);
}

/*
 * VT-d second-level translation (see Vtd in dma32-demo-test.h): root
 * table, context table and top level in the area's first three pages.
 */
void vtd_init(Vtd *v, QTestState *qts, uint64_t tables, uint64_t size,
              uint8_t devfn)
{
    uint64_t ctx = tables + 0x1000;

    memset(v, 0, sizeof(*v));
    v->qts = qts;
    v->root = tables;
    v->end = tables + size;
    v->l3 = tables + 0x2000;
    v->next = tables + 0x3000;
    /* a key and its value share one allocation, freed with the key */
    v->l1 = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                  NULL);
    v->pte = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                   NULL);
    qtest_memset(qts, tables, 0, size);
    qtest_writeq(qts, v->root, ctx | 1);                /* bus 0 */
    qtest_writeq(qts, ctx + devfn * 16, v->l3 | 1);
    qtest_writeq(qts, ctx + devfn * 16 + 8, 1 | 1 << 8); /* 39 bit, DID 1 */
}

static uint64_t vtd_table(Vtd *v)
{
    uint64_t t = v->next;

    v->next += 0x1000;
    g_assert_cmphex(v->next, <=, v->end);
    return t;
}

/* The last-level table of @iova's 2 MiB, made on first use */
static uint64_t vtd_l1(Vtd *v, uint64_t iova)
{
    uint64_t key = iova >> 21, *kp;
    uint64_t l3e = v->l3 + ((iova >> 30) & 511) * 8;
    uint64_t l2, l1;
    gpointer val;

    g_assert_cmphex(iova >> 39, ==, 0);
    if (g_hash_table_lookup_extended(v->l1, &key, NULL, &val)) {
        return *(uint64_t *)val;
    }
    l2 = qtest_readq(v->qts, l3e) & ~0xfffULL;
    if (!l2) {
        l2 = vtd_table(v);
        qtest_writeq(v->qts, l3e, l2 | 3);
    }
    l1 = vtd_table(v);
    qtest_writeq(v->qts, l2 + ((iova >> 21) & 511) * 8, l1 | 3);
    kp = g_new(uint64_t, 2);
    kp[0] = key;
    kp[1] = l1;
    g_hash_table_insert(v->l1, kp, kp + 1);
    return l1;
}

/*
 * Map [@iova, @iova + @len) to @gpa on (4 KiB aligned, VTD_PTE_* in
 * @perm), one qtest write per last-level table touched.
 */
void vtd_map(Vtd *v, uint64_t iova, uint64_t gpa, uint64_t len,
             unsigned perm)
{
    uint64_t end = iova + len;

    g_assert(!((iova | gpa | len) & 0xfff));
    while (iova < end) {
        uint64_t l1 = vtd_l1(v, iova);
        unsigned first = (iova >> 12) & 511;
        unsigned n = MIN(512 - first, (end - iova) >> 12), i;
        g_autofree uint64_t *ptes = g_new(uint64_t, n);

        for (i = 0; i < n; i++) {
            uint64_t *key = g_new(uint64_t, 1);
            uint64_t pte = (gpa + i * 4096ULL) | perm;

            ptes[i] = cpu_to_le64(pte);
            *key = (iova >> 12) + i;
            g_hash_table_insert(v->pte, key, GUINT_TO_POINTER(perm));
        }
        qtest_memwrite(v->qts, l1 + first * 8, ptes, n * 8);
        iova += n * 4096ULL;
        gpa += n * 4096ULL;
    }
}

/* VTD_PTE_* of the page that holds @iova, 0 where nothing is mapped */
unsigned vtd_perm(const Vtd *v, uint64_t iova)
{
    uint64_t key = iova >> 12;

    return GPOINTER_TO_UINT(g_hash_table_lookup(v->pte, &key));
}

void vtd_enable(Vtd *v)
{
    qtest_writeq(v->qts, VTD_BASE + VTD_RTADDR, v->root);
    qtest_writel(v->qts, VTD_BASE + VTD_GCMD, VTD_GCMD_SRTP);
    qtest_writel(v->qts, VTD_BASE + VTD_GCMD, VTD_GCMD_TE);
    g_assert(qtest_readl(v->qts, VTD_BASE + VTD_GSTS) & VTD_GCMD_TE);
}

void vtd_free(Vtd *v)
{
    g_hash_table_destroy(v->l1);
    g_hash_table_destroy(v->pte);
    v->l1 = v->pte = NULL;
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    if (g_getenv("DMA32_DEMO_BENCH")) {
        dma32_demo_add_bench_test();
        return g_test_run();
    }
    dma32_demo_add_regs_tests();
    dma32_demo_add_dma_tests();
    dma32_demo_add_unplug_tests();
    dma32_demo_add_migrate_tests();
    dma32_demo_add_fuzz_tests();
    return g_test_run();
}
