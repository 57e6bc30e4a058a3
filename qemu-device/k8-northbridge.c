/*
 * k8-northbridge: the AMD K8 (family 0Fh) northbridge's PCI functions
 * 00:18.0 and 00:18.3, with the GART that Linux's own K8 GART IOMMU driver
 * (arch/x86/kernel/aperture_64.c, amd_gart_64.c, amd_nb.c) programs.
 *
 * The GART translates bus-master DMA whose address falls in its aperture,
 * through a table of 32-bit PTEs in guest memory, with a TLB that only
 * GART Cache Control's InvGart (and reset) flushes. An invalid PTE makes
 * the access fail, as the bus would: the device sees a bus error, and
 * GartPteErr is set. Everything outside the aperture passes unchanged.
 * The specification is k8-northbridge.rst.
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/bswap.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/notify.h"
#include "qemu/range.h"
#include "exec/address-spaces.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/qdev-core.h"
#include "migration/vmstate.h"
#include "sysemu/sysemu.h"
#include "hw/misc/k8-northbridge-regs.h"
#include "trace.h"

#define TYPE_K8_NB              "k8-northbridge"
#define TYPE_K8_NB_MISC         "k8-northbridge-misc"
#define TYPE_K8_NB_IOMMU_MR     "k8-northbridge-gart-iommu-memory-region"

/*
 * The GART's TLB: direct mapped, indexed by the aperture page number modulo
 * its size. It caches the PTE as read from the table, valid or not, until
 * InvGart or a reset flushes it.
 */
#define K8NB_TLB_ENTRIES        16

OBJECT_DECLARE_SIMPLE_TYPE(K8NBMiscState, K8_NB_MISC)
OBJECT_DECLARE_SIMPLE_TYPE(K8NBState, K8_NB)

struct K8NBMiscState {
    PCIDevice parent_obj;

    IOMMUMemoryRegion iommu;
    MemoryRegion dma_root;
    AddressSpace dma_as;
    Notifier machine_done;

    uint32_t tlb_tag[K8NB_TLB_ENTRIES];  /* aperture page number */
    uint32_t tlb_pte[K8NB_TLB_ENTRIES];
    bool tlb_valid[K8NB_TLB_ENTRIES];
};

struct K8NBState {
    PCIDevice parent_obj;
};

static uint32_t k8nb_reg(K8NBMiscState *s, uint32_t reg)
{
    return pci_get_long(PCI_DEVICE(s)->config + reg);
}

static void k8nb_tlb_flush(K8NBMiscState *s)
{
    memset(s->tlb_valid, 0, sizeof(s->tlb_valid));
}

/* The aperture's size order, and its base as programmed */
static uint32_t k8nb_aper_order(K8NBMiscState *s)
{
    return (k8nb_reg(s, K8NB_APER_CTL) & K8NB_APER_CTL_SIZE_MASK) >>
           K8NB_APER_CTL_SIZE_SHIFT;
}

static uint64_t k8nb_aper_base_programmed(K8NBMiscState *s)
{
    return (uint64_t)(k8nb_reg(s, K8NB_APER_BASE) & K8NB_APER_BASE_BITS) <<
           K8NB_APER_BASE_SHIFT;
}

/*
 * The aperture, when the GART translates device accesses: GartEn set,
 * DisGartIo clear and a size order that is not reserved.  Its base is
 * aligned to its size: the base bits below the size are ignored, as the
 * hardware's address compare ignores them (Linux always programs a
 * naturally aligned aperture).
 */
static bool k8nb_aperture(K8NBMiscState *s, uint64_t *base, uint64_t *size)
{
    uint32_t ctl = k8nb_reg(s, K8NB_APER_CTL);
    uint32_t order = k8nb_aper_order(s);

    if (!(ctl & K8NB_APER_CTL_GARTEN) || (ctl & K8NB_APER_CTL_DISGARTIO) ||
        order > K8NB_APER_ORDER_MAX) {
        return false;
    }
    *size = k8nb_aper_size(order);
    *base = k8nb_aper_base_programmed(s) & ~(*size - 1);
    return true;
}

/*
 * The largest naturally aligned block around @addr that does not meet the
 * aperture [@base, @base + @size): an untranslated access may run that far.
 * At most 2^63 bytes, so that the memory core's length arithmetic
 * ((addr | mask) - addr + 1) cannot wrap to 0.
 */
static uint64_t k8nb_passthrough_mask(uint64_t addr, uint64_t base,
                                      uint64_t size)
{
    uint64_t mask = INT64_MAX;

    while (size && mask > K8NB_PAGE_SIZE - 1) {
        uint64_t lo = addr & ~mask, hi = addr | mask;

        if (hi < base || lo > base + size - 1) {
            break;
        }
        mask >>= 1;
    }
    return mask;
}

/* The PTE of aperture page @page: from the TLB, else from the table */
static uint32_t k8nb_pte(K8NBMiscState *s, uint32_t page, bool *hit)
{
    unsigned i = page % K8NB_TLB_ENTRIES;
    uint64_t table = (uint64_t)(k8nb_reg(s, K8NB_TABLE_BASE) &
                                K8NB_TABLE_BASE_BITS) << K8NB_TABLE_BASE_SHIFT;
    uint64_t at = table + (uint64_t)page * 4;
    uint8_t raw[4];
    uint32_t pte = 0;
    MemTxResult r;

    if (s->tlb_valid[i] && s->tlb_tag[i] == page) {
        *hit = true;
        return s->tlb_pte[i];
    }
    *hit = false;
    /*
     * A table the bus cannot read yields an invalid entry, which is not
     * cached: the walk was aborted, it read no entry
     */
    r = address_space_read(&address_space_memory, at, MEMTXATTRS_UNSPECIFIED,
                           raw, sizeof(raw));
    trace_k8nb_table_walk(page, at, r == MEMTX_OK ? ldl_le_p(raw) : 0, r);
    if (r != MEMTX_OK) {
        return 0;
    }
    pte = ldl_le_p(raw);
    s->tlb_valid[i] = true;
    s->tlb_tag[i] = page;
    s->tlb_pte[i] = pte;
    return pte;
}

static IOMMUTLBEntry k8nb_translate(IOMMUMemoryRegion *iommu, hwaddr addr,
                                    IOMMUAccessFlags flag, int iommu_idx)
{
    K8NBMiscState *s = container_of(iommu, K8NBMiscState, iommu);
    IOMMUTLBEntry e = {
        .target_as = &address_space_memory,
        .perm = IOMMU_RW,
    };
    uint64_t base = 0, size = 0;
    uint32_t page, pte;
    bool hit;

    /*
     * The TLB and GartPteErr change here without a lock of their own: the
     * only callers are bus masters' DMA under the BQL (IOMMU notifiers,
     * through which vhost or vfio would translate from other threads, are
     * refused).
     */
    assert(qemu_mutex_iothread_locked());
    if (!k8nb_aperture(s, &base, &size) || addr < base ||
        addr - base >= size) {
        /* not in the aperture: unchanged */
        e.addr_mask = k8nb_passthrough_mask(addr, base, size);
        e.iova = addr & ~e.addr_mask;
        e.translated_addr = e.iova;
        return e;
    }
    page = (addr - base) >> K8NB_PAGE_SHIFT;
    pte = k8nb_pte(s, page, &hit);
    e.addr_mask = K8NB_PAGE_SIZE - 1;
    e.iova = addr & ~e.addr_mask;
    if (!(pte & K8NB_PTE_VALID)) {
        /* the access fails; GartPteErr records that it happened */
        e.perm = IOMMU_NONE;
        if (flag != IOMMU_NONE) {
            PCIDevice *pdev = PCI_DEVICE(s);

            pci_set_long(pdev->config + K8NB_CACHE_CTL,
                         k8nb_reg(s, K8NB_CACHE_CTL) | K8NB_CACHE_CTL_PTEERR);
            trace_k8nb_pte_error(addr, page, pte, hit);
        }
        return e;
    }
    e.translated_addr = k8nb_pte_addr(pte);
    trace_k8nb_translate(addr, e.translated_addr, flag, hit);
    return e;
}

static int k8nb_notify_flag_changed(IOMMUMemoryRegion *iommu,
                                    IOMMUNotifierFlag old,
                                    IOMMUNotifierFlag new, Error **errp)
{
    if (new != IOMMU_NOTIFIER_NONE) {
        error_setg(errp, "%s does not support IOMMU notifiers: nothing may "
                   "cache its translations", TYPE_K8_NB);
        return -EINVAL;
    }
    return 0;
}

static AddressSpace *k8nb_dma_as(PCIBus *bus, void *opaque, int devfn)
{
    K8NBMiscState *s = opaque;

    return &s->dma_as;
}

static void k8nb_misc_write_config(PCIDevice *pdev, uint32_t addr,
                                   uint32_t val, int len)
{
    K8NBMiscState *s = K8_NB_MISC(pdev);

    pci_default_write_config(pdev, addr, val, len);
    if (ranges_overlap(addr, len, K8NB_APER_CTL, 16)) {
        uint64_t base = k8nb_aper_base_programmed(s), size;

        trace_k8nb_regs(k8nb_reg(s, K8NB_APER_CTL),
                        k8nb_reg(s, K8NB_APER_BASE),
                        k8nb_reg(s, K8NB_TABLE_BASE),
                        k8nb_reg(s, K8NB_CACHE_CTL));
        if ((k8nb_reg(s, K8NB_APER_CTL) & K8NB_APER_CTL_GARTEN) &&
            k8nb_aper_order(s) <= K8NB_APER_ORDER_MAX) {
            size = k8nb_aper_size(k8nb_aper_order(s));
            if (base & (size - 1)) {
                qemu_log_mask(LOG_GUEST_ERROR, "%s: aperture base 0x%" PRIx64
                              " not aligned to its size 0x%" PRIx64 ": used "
                              "as 0x%" PRIx64 "\n", TYPE_K8_NB, base, size,
                              base & ~(size - 1));
            }
        }
    }
    if (k8nb_reg(s, K8NB_CACHE_CTL) & K8NB_CACHE_CTL_INVGART) {
        /* the flush completes at once: InvGart reads 0 again */
        k8nb_tlb_flush(s);
        pci_set_long(pdev->config + K8NB_CACHE_CTL,
                     k8nb_reg(s, K8NB_CACHE_CTL) & ~K8NB_CACHE_CTL_INVGART);
        trace_k8nb_flush();
    }
}

static void k8nb_misc_reset(DeviceState *dev)
{
    K8NBMiscState *s = K8_NB_MISC(dev);
    uint8_t *config = PCI_DEVICE(s)->config;

    pci_set_long(config + K8NB_APER_CTL, 0);
    pci_set_long(config + K8NB_APER_BASE, 0);
    pci_set_long(config + K8NB_TABLE_BASE, 0);
    pci_set_long(config + K8NB_CACHE_CTL, 0);
    k8nb_tlb_flush(s);
    trace_k8nb_reset();
}

/*
 * Every PCI device's bus-master address space is made at machine done
 * (pcibus_machine_done), after all -device options, from the root bus's
 * IOMMU: each cold-plugged device, before or after us on the command
 * line, gets the GART. An IOMMU set up later (intel-iommu after us)
 * would silently replace it: refuse to run then.
 */
static void k8nb_machine_done(Notifier *n, void *data)
{
    K8NBMiscState *s = container_of(n, K8NBMiscState, machine_done);
    PCIBus *bus = pci_get_bus(PCI_DEVICE(s));

    if (bus->iommu_fn != k8nb_dma_as || bus->iommu_opaque != s) {
        error_report("%s: another IOMMU took over the DMA of bus %s after "
                     "it; give the machine one IOMMU", TYPE_K8_NB,
                     BUS(bus)->name);
        exit(1);
    }
}

static void k8nb_misc_realize(PCIDevice *pdev, Error **errp)
{
    K8NBMiscState *s = K8_NB_MISC(pdev);
    PCIBus *bus = pci_get_bus(pdev);

    if (bus->iommu_fn) {
        error_setg(errp, "%s: bus %s already has an IOMMU", TYPE_K8_NB,
                   BUS(bus)->name);
        return;
    }
    pci_config_set_class(pdev->config, PCI_CLASS_BRIDGE_HOST);
    /* only the GART's bits are writable past the header */
    memset(pdev->wmask + PCI_CONFIG_HEADER_SIZE, 0,
           PCI_CONFIG_SPACE_SIZE - PCI_CONFIG_HEADER_SIZE);
    pci_set_long(pdev->wmask + K8NB_APER_CTL, K8NB_APER_CTL_BITS);
    pci_set_long(pdev->wmask + K8NB_APER_BASE, K8NB_APER_BASE_BITS);
    pci_set_long(pdev->wmask + K8NB_TABLE_BASE, K8NB_TABLE_BASE_BITS);
    pci_set_long(pdev->wmask + K8NB_CACHE_CTL, K8NB_CACHE_CTL_BITS);

    memory_region_init_iommu(&s->iommu, sizeof(s->iommu), TYPE_K8_NB_IOMMU_MR,
                             OBJECT(s), "k8-gart", UINT64_MAX);
    memory_region_init(&s->dma_root, OBJECT(s), "k8-gart-root", UINT64_MAX);
    memory_region_add_subregion(&s->dma_root, 0, MEMORY_REGION(&s->iommu));
    address_space_init(&s->dma_as, &s->dma_root, "k8-gart");
    pci_setup_iommu(bus, k8nb_dma_as, s);

    s->machine_done.notify = k8nb_machine_done;
    qemu_add_machine_init_done_notifier(&s->machine_done);
}

static void k8nb_misc_exit(PCIDevice *pdev)
{
    K8NBMiscState *s = K8_NB_MISC(pdev);
    PCIBus *bus = pci_get_bus(pdev);

    if (bus->iommu_fn == k8nb_dma_as && bus->iommu_opaque == s) {
        pci_setup_iommu(bus, NULL, NULL);
    }
    notifier_remove(&s->machine_done);
    address_space_destroy(&s->dma_as);
}

/* Function 0 makes function 3, which holds the GART */
static void k8nb_realize(PCIDevice *pdev, Error **errp)
{
    PCIBus *bus = pci_get_bus(pdev);
    PCIDevice *misc;

    if (!pci_bus_is_root(bus)) {
        error_setg(errp, "%s must be on the root bus (it is the CPU's own "
                   "northbridge)", TYPE_K8_NB);
        return;
    }
    if (PCI_FUNC(pdev->devfn) != 0) {
        error_setg(errp, "%s must be function 0 of its slot (addr=%02x.0); "
                   "it makes function 3 itself", TYPE_K8_NB,
                   PCI_SLOT(pdev->devfn));
        return;
    }
    if (!(pdev->cap_present & QEMU_PCI_CAP_MULTIFUNCTION)) {
        error_setg(errp, "%s is a multifunction device: leave "
                   "multifunction=on", TYPE_K8_NB);
        return;
    }
    if (bus->iommu_fn) {
        error_setg(errp, "%s: bus %s already has an IOMMU", TYPE_K8_NB,
                   BUS(bus)->name);
        return;
    }
    pci_config_set_class(pdev->config, PCI_CLASS_BRIDGE_HOST);
    /* no registers past the header */
    memset(pdev->wmask + PCI_CONFIG_HEADER_SIZE, 0,
           PCI_CONFIG_SPACE_SIZE - PCI_CONFIG_HEADER_SIZE);

    misc = pci_new_multifunction(PCI_DEVFN(PCI_SLOT(pdev->devfn),
                                           K8NB_MISC_FUNC),
                                 true, TYPE_K8_NB_MISC);
    object_property_add_child(OBJECT(pdev), "misc", OBJECT(misc));
    pci_realize_and_unref(misc, bus, errp);
}

/* At 00:18.0, where Linux looks, unless addr= says otherwise */
static void k8nb_instance_init(Object *obj)
{
    PCIDevice *pdev = PCI_DEVICE(obj);

    pdev->cap_present |= QEMU_PCI_CAP_MULTIFUNCTION;
    pdev->devfn = PCI_DEVFN(K8NB_SLOT, 0);
}

static const VMStateDescription vmstate_k8nb_misc = {
    .name = TYPE_K8_NB_MISC,
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, K8NBMiscState),
        VMSTATE_UINT32_ARRAY(tlb_tag, K8NBMiscState, K8NB_TLB_ENTRIES),
        VMSTATE_UINT32_ARRAY(tlb_pte, K8NBMiscState, K8NB_TLB_ENTRIES),
        VMSTATE_BOOL_ARRAY(tlb_valid, K8NBMiscState, K8NB_TLB_ENTRIES),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_k8nb = {
    .name = TYPE_K8_NB,
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, K8NBState),
        VMSTATE_END_OF_LIST()
    },
};

static void k8nb_misc_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = k8nb_misc_realize;
    k->exit = k8nb_misc_exit;
    k->config_write = k8nb_misc_write_config;
    k->vendor_id = K8NB_VENDOR_ID;
    k->device_id = K8NB_MISC_DEVICE_ID;
    k->class_id = PCI_CLASS_BRIDGE_HOST;
    dc->desc = "AMD K8 northbridge, function 3 (misc control, GART)";
    dc->reset = k8nb_misc_reset;
    dc->vmsd = &vmstate_k8nb_misc;
    dc->hotpluggable = false;
    /* made by k8-northbridge, function 0 */
    dc->user_creatable = false;
    set_bit(DEVICE_CATEGORY_BRIDGE, dc->categories);
}

static void k8nb_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = k8nb_realize;
    k->vendor_id = K8NB_VENDOR_ID;
    k->device_id = K8NB_HT_DEVICE_ID;
    k->class_id = PCI_CLASS_BRIDGE_HOST;
    dc->desc = "AMD K8 northbridge with its GART IOMMU (00:18.0 and 00:18.3)";
    dc->vmsd = &vmstate_k8nb;
    dc->hotpluggable = false;
    set_bit(DEVICE_CATEGORY_BRIDGE, dc->categories);
}

static void k8nb_iommu_mr_class_init(ObjectClass *klass, void *data)
{
    IOMMUMemoryRegionClass *imrc = IOMMU_MEMORY_REGION_CLASS(klass);

    imrc->translate = k8nb_translate;
    imrc->notify_flag_changed = k8nb_notify_flag_changed;
}

static const TypeInfo k8nb_types[] = {
    {
        .name = TYPE_K8_NB,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(K8NBState),
        .instance_init = k8nb_instance_init,
        .class_init = k8nb_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_CONVENTIONAL_PCI_DEVICE },
            { },
        },
    },
    {
        .name = TYPE_K8_NB_MISC,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(K8NBMiscState),
        .class_init = k8nb_misc_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_CONVENTIONAL_PCI_DEVICE },
            { },
        },
    },
    {
        .name = TYPE_K8_NB_IOMMU_MR,
        .parent = TYPE_IOMMU_MEMORY_REGION,
        .class_init = k8nb_iommu_mr_class_init,
    },
};

DEFINE_TYPES(k8nb_types)
