/*
 * QTest for the dma32-demo PCI device, part of dma32-demo-test
 *
 * Unplug and reset while a descriptor is under way: the device's
 * checks for state that went stale under its own access, with one device
 * and with two.
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "dma32-demo-test.h"
#include "libqos/libqos-malloc.h"
#include "libqos/virtio-pci.h"
#include "standard-headers/linux/virtio_config.h"
#include "standard-headers/linux/virtio_iommu.h"

static Port *port_start(void)
{
    return bridge_start("pcie-root-port,chassis=1", NULL);
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
    msi_aim(d, p->mmcfg + p->exp + PCI_EXP_SLTCTL, SLOT_OFF, true);
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
    Dev *a = p->d, *b = dev_other(p->d, PEER_DEVFN, PEER_BAR);
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
    dev_other_free(b);
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
    msi_aim(d, p->mmcfg + p->exp + PCI_EXP_SLTCTL, SLOT_OFF, true);
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
 * instead of running whatever the pattern put there.  That the doorbell
 * arrives after the unplug is what the spec says of a bounced access in
 * flight: the memory core dispatches it to its end (one dma_memory_rw of
 * up to 64 KiB), and only the next piece is stopped.
 */
static void test_unplug_in_fill(void)
{
    const uint32_t off = DMA32_DEMO_REG_INT_MASK;
    const uint32_t len = DMA32_DEMO_BAR0_SIZE - off + 64;
    Port *p = pair_start(NULL);
    Dev *a = p->d, *b = dev_other(p->d, PEER_DEVFN, PEER_BAR);
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
    dev_other_free(b);
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
    Dev *a = p->d, *b = dev_other(p->d, PEER_DEVFN, PEER_BAR);

    trigger_arm(p, b, PEER_RING);
    ring_program(a, HIGH + PEER_BAR, RING_ENTRIES);
    wr(a, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
    wr(a, DMA32_DEMO_REG_DOORBELL, 1);
    wait_unplugged(p);
    g_assert_cmphex(rd(b, DMA32_DEMO_REG_INT_MASK), ==, DMA32_DEMO_INT_DONE);
    dev_other_free(b);
    port_stop(p);
}

/*
 * An IOMMU that does DMA while it translates: virtio-iommu writes a fault
 * record into a buffer of its event queue (then interrupts) from inside
 * the translation that failed.  The record's last 8 bytes are the
 * faulting address, which the device chooses.  The test puts the event
 * buffer in MMCONFIG so that those bytes land on d0's root port's Slot
 * Control and aims a FILL at IOVA 0x700 (power controller and power
 * indicator off): translating that piece unplugs d0, inside
 * address_space_get_iotlb_entry(), before the device sees the failed
 * translation.  The device must then stop without reporting the bus
 * error (which would write PCI_STATUS of freed config space and raise an
 * interrupt through a freed bus: the sanitizer build reports that), and
 * write nothing back.
 *
 * virtio-iommu-pci sits at 03.0 on the root bus, its BAR above the root
 * port's window; its queues live in VIOMMU_MEM.  d0 (endpoint 0x100: bus
 * 1, device 0) is attached to domain 1, in which only its ring's page is
 * mapped: the descriptor is fetched, its FILL faults.
 */
#define VIOMMU_DEVFN        QPCI_DEVFN(3, 0)
#define VIOMMU_BAR          0xe8000000ULL
#define VIOMMU_MEM          0x30000000ULL
#define VIOMMU_TIMEOUT_US   (30 * 1000 * 1000)
#define VIOMMU_EP           0x100

/* One request on the request queue: @len bytes at @req, the tail last */
static void viommu_request(QVirtioPCIDevice *dev, QGuestAllocator *alloc,
                           QVirtQueue *vq, const uint8_t *req, size_t len)
{
    QTestState *qts = dev->pdev->bus->qts;
    uint64_t at = guest_alloc(alloc, len);
    uint32_t head;

    qtest_memwrite(qts, at, req, len);
    head = qvirtqueue_add(qts, vq, at, len - 4, false, true);
    qvirtqueue_add(qts, vq, at + len - 4, 4, true, false);
    qvirtqueue_kick(qts, &dev->vdev, vq, head);
    qvirtio_wait_used_elem(qts, &dev->vdev, vq, head, NULL,
                           VIOMMU_TIMEOUT_US);
    g_assert_cmpuint(qtest_readb(qts, at + len - 4), ==, VIRTIO_IOMMU_S_OK);
    guest_free(alloc, at);
}

static void test_unplug_in_translation(void)
{
    Port *p = bridge_start_with("pcie-root-port,chassis=1", NULL,
                                "-device virtio-iommu-pci,addr=03.0");
    Dev *d = p->d;
    QPCIAddress addr = { .devfn = VIOMMU_DEVFN };
    QGuestAllocator alloc;
    QVirtioPCIDevice *dev;
    QVirtQueue *reqq, *evq;
    uint64_t features;
    uint8_t req[40] = { 0 };
    Done done;

    alloc_init(&alloc, 0, VIOMMU_MEM, VIOMMU_MEM + 16 * MiB_, 4096);
    dev = virtio_pci_new(d->bus, &addr);
    g_assert(dev);
    d->bus->mmio_alloc_ptr = VIOMMU_BAR;
    qvirtio_pci_device_enable(dev);
    qvirtio_start_device(&dev->vdev);
    features = qvirtio_get_features(&dev->vdev);
    g_assert(features & (1ull << VIRTIO_IOMMU_F_MAP_UNMAP));
    qvirtio_set_features(&dev->vdev, features &
                         ((1ull << VIRTIO_F_VERSION_1) |
                          (1ull << VIRTIO_IOMMU_F_MAP_UNMAP)));
    reqq = qvirtqueue_setup(&dev->vdev, &alloc, 0);
    evq = qvirtqueue_setup(&dev->vdev, &alloc, 1);
    qvirtio_set_driver_ok(&dev->vdev);

    /* d0 into domain 1, its ring's page mapped there and nothing else */
    req[0] = VIRTIO_IOMMU_T_ATTACH;
    stl_le_p(req + 4, 1);
    stl_le_p(req + 8, VIOMMU_EP);
    viommu_request(dev, &alloc, reqq, req, 24);
    memset(req, 0, sizeof(req));
    req[0] = VIRTIO_IOMMU_T_MAP;
    stl_le_p(req + 4, 1);
    stq_le_p(req + 8, RING_ADDR);
    stq_le_p(req + 16, RING_ADDR + 4095);
    stq_le_p(req + 24, RING_ADDR);
    stl_le_p(req + 32, VIRTIO_IOMMU_MAP_F_READ | VIRTIO_IOMMU_MAP_F_WRITE);
    viommu_request(dev, &alloc, reqq, req, 40);

    /* the event buffer: its address field on the root port's Slot Control */
    qvirtqueue_kick(d->qts, &dev->vdev, evq,
                    qvirtqueue_add(d->qts, evq, p->mmcfg + p->exp +
                                   PCI_EXP_SLTCTL - 16,
                                   sizeof(struct virtio_iommu_fault), true,
                                   false));

    ring_start(d, RING_ADDR, RING_ENTRIES);
    desc_write(d, 0, &(Desc) { .op = DMA32_DEMO_OP_FILL, .len = 64,
                               .dst = SLOT_OFF, .seed = 1 });
    wr(d, DMA32_DEMO_REG_DOORBELL, 1);
    wait_unplugged(p);
    desc_read(d, 0, &done);
    g_assert_cmpuint(done.status, ==, DMA32_DEMO_ST_PENDING);
    qvirtqueue_cleanup(dev->vdev.bus, reqq, &alloc);
    qvirtqueue_cleanup(dev->vdev.bus, evq, &alloc);
    g_free(dev->pdev);
    g_free(dev);
    alloc_destroy(&alloc);
    port_stop(p);
}

void dma32_demo_add_unplug_tests(void)
{
    qtest_add_func("/dma32-demo/unplug-in-copy", test_unplug_in_copy);
    qtest_add_func("/dma32-demo/bus-reset-in-copy", test_bus_reset_in_copy);
    qtest_add_func("/dma32-demo/unplug-peer-mmio", test_unplug_peer_mmio);
    qtest_add_func("/dma32-demo/unplug-by-own-msi", test_unplug_by_own_msi);
    qtest_add_func("/dma32-demo/unplug-in-fill", test_unplug_in_fill);
    qtest_add_func("/dma32-demo/unplug-in-writeback", test_unplug_in_writeback);
    qtest_add_func("/dma32-demo/unplug-in-translation",
                   test_unplug_in_translation);
}
