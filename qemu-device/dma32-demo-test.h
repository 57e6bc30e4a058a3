/*
 * QTest for the dma32-demo PCI device: what the files of
 * dma32-demo-test share (dma32-demo-test.c has the helpers)
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef DMA32_DEMO_TEST_H
#define DMA32_DEMO_TEST_H

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
/* the fault recording register (one, 128 bits; CAP.FRO = 0x220) */
#define VTD_FRCD            0x220
#define VTD_FRCD_F          (1ULL << 63)    /* of the high quadword */
#define VTD_FRCD_T          (1ULL << 62)    /* a read request */
#define VTD_FRCD_FR(hi)     (((hi) >> 32) & 0xff)
#define VTD_FRCD_SID(hi)    ((hi) & 0xffff)
#define VTD_FR_BEYOND_MGAW  4
#define VTD_FR_WRITE        5
#define VTD_FR_READ         6
/* a leaf's permissions */
#define VTD_PTE_R           1
#define VTD_PTE_W           2

/*
 * Second-level page tables for one device on bus 0 (dma32-demo-test.c):
 * vtd_init() puts the root table, the device's context entry (39-bit,
 * three levels, domain 1) and the top level at the start of a zeroed
 * area of guest RAM and takes the further tables from the rest of it;
 * vtd_map() maps IOVAs to guest-physical addresses in 4 KiB pages;
 * vtd_enable() points the IOMMU at the root table and turns translation
 * on.  Vtd.pte keeps each mapped page's leaf, for vtd_perm().
 */
typedef struct Vtd {
    QTestState *qts;
    uint64_t root, end, next;   /* the tables' area, its next free page */
    uint64_t l3;
    GHashTable *l1;             /* IOVA >> 21 -> its last-level table */
    GHashTable *pte;            /* IOVA >> 12 -> its leaf */
} Vtd;

/*
 * The fuzzer's guard regions in RAM (dma32-demo-test-guard.c): NR_GUARDS
 * runs of GUARD_SIZE bytes with a seeded pattern that no transfer may
 * touch.  @mask is the bus address bits the device keeps (all ones unless
 * it truncates addresses).
 */
#define NR_GUARDS           9
#define GUARD_SIZE          256

typedef struct Guards {
    QTestState *qts;
    uint64_t mask;
    uint8_t pat[NR_GUARDS][GUARD_SIZE];
} Guards;

/* dma32-demo-test.c */
uint32_t rd(Dev *d, uint32_t reg);
void wr(Dev *d, uint32_t reg, uint32_t val);
uint64_t rd64(Dev *d, uint32_t reg);
void dev_setup(Dev *d);
void dev_teardown(Dev *d);
char **firmware_dirs(void);
Dev *dev_start_with(const char *extra, const char *props);
Dev *dev_start(const char *props);
void dev_stop(Dev *d);
void ring_program(Dev *d, uint64_t base, uint32_t size);
void ring_start(Dev *d, uint64_t base, uint32_t size);
uint64_t desc_addr(Dev *d, uint32_t idx);
void desc_write(Dev *d, uint32_t idx, const Desc *x);
void desc_read(Dev *d, uint32_t idx, Done *done);
uint32_t wait_head(Dev *d, uint32_t head);
uint32_t submit(Dev *d, const Desc *x, unsigned n);
Done run1(Dev *d, uint32_t op, uint32_t len, uint64_t src,
          uint64_t dst, uint64_t seed);
void pattern(uint8_t *buf, uint64_t seed, uint64_t len);
uint32_t crc32c_std(const void *buf, size_t len);
void check_pattern(Dev *d, uint64_t addr, uint64_t len, uint64_t seed);
void canary_set(Dev *d, uint64_t addr, uint64_t len);
void canary_check(Dev *d, uint64_t addr, uint64_t len);
void check_fault(Dev *d, uint32_t status, uint32_t source,
                 uint32_t idx, uint64_t addr);
void check_counters(Dev *d, uint64_t completed, uint64_t rd_bytes,
                    uint64_t wr_bytes, uint64_t faults,
                    uint64_t bus_errors, uint64_t invalid);
void expect_addr_fault(Dev *d, Done done, uint32_t idx,
                       uint32_t source, uint64_t addr);
void check_idle(Dev *d);
Dev *dev_other(Dev *d, int devfn, uint64_t bar);
void dev_other_free(Dev *o);
uint8_t msi_aim(Dev *d, uint64_t addr, uint16_t data, bool enable);
void mmcfg_enable(Dev *d);
Port *bridge_start_with(const char *bridge, const char *props,
                        const char *extra);
Port *bridge_start(const char *bridge, const char *props);
void port_stop(Port *p);
void vtd_init(Vtd *v, QTestState *qts, uint64_t tables, uint64_t size,
              uint8_t devfn);
void vtd_map(Vtd *v, uint64_t iova, uint64_t gpa, uint64_t len,
             unsigned perm);
unsigned vtd_perm(const Vtd *v, uint64_t iova);
void vtd_enable(Vtd *v);
void vtd_free(Vtd *v);

/* dma32-demo-test-guard.c */
uint64_t guard_addr(unsigned i);
void guards_fill(Guards *g, QTestState *qts, uint64_t mask, guint32 seed);
bool guards_clear(const Guards *g, uint64_t *addr, uint32_t *len);
uint64_t guards_aim(GRand *r, uint32_t len);
int guards_check(const Guards *g);

/* Each file adds its test cases */
void dma32_demo_add_regs_tests(void);
void dma32_demo_add_dma_tests(void);
void dma32_demo_add_unplug_tests(void);
void dma32_demo_add_migrate_tests(void);
void dma32_demo_add_fuzz_tests(void);
void dma32_demo_add_bench_test(void);

#endif
