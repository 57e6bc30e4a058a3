/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * k8-northbridge: the hardware ABI of the AMD K8 (family 0Fh) northbridge's
 * GART, as the model (qemu-device/k8-northbridge.c) and its qtest use it.
 *
 * The registers are those of AMD's BIOS and Kernel Developer's Guide for
 * the family 0Fh processors, function 3 ("miscellaneous control"), and of
 * Linux's arch/x86/include/asm/gart.h, which programs them. This header is
 * the one place the model and its test take them from.
 */
#ifndef K8_NORTHBRIDGE_REGS_H
#define K8_NORTHBRIDGE_REGS_H

/* PCI identity: device 18h on bus 0, functions 0 and 3 */
#define K8NB_VENDOR_ID              0x1022 /* AMD */
#define K8NB_HT_DEVICE_ID           0x1100 /* function 0: HyperTransport */
#define K8NB_MISC_DEVICE_ID         0x1103 /* function 3: misc control */
#define K8NB_SLOT                   0x18
#define K8NB_MISC_FUNC              3

/* F3x90 GART Aperture Control */
#define K8NB_APER_CTL               0x90
#define K8NB_APER_CTL_GARTEN        (1u << 0) /* translate */
#define K8NB_APER_CTL_SIZE_SHIFT    1         /* 3:1 size order */
#define K8NB_APER_CTL_SIZE_MASK     (7u << K8NB_APER_CTL_SIZE_SHIFT)
#define K8NB_APER_CTL_DISGARTCPU    (1u << 4) /* CPU accesses untranslated */
#define K8NB_APER_CTL_DISGARTIO     (1u << 5) /* I/O accesses untranslated */
#define K8NB_APER_CTL_DISTLBWALKPRB (1u << 6) /* no probes on table walks */
#define K8NB_APER_CTL_BITS          0x7fu

/* Size order N: 32 MiB << N; 6 (2 GiB) is the largest, 7 is reserved */
#define K8NB_APER_ORDER_MAX         6
#define K8NB_APER_MIN_SIZE          (32ull << 20)

/* F3x94 GART Aperture Base: bits 14:0 are address bits 39:25 */
#define K8NB_APER_BASE              0x94
#define K8NB_APER_BASE_BITS         0x7fffu
#define K8NB_APER_BASE_SHIFT        25

/* F3x98 GART Table Base: bits 31:4 are address bits 39:12 */
#define K8NB_TABLE_BASE             0x98
#define K8NB_TABLE_BASE_BITS        0xfffffff0u
#define K8NB_TABLE_BASE_SHIFT       8

/* F3x9C GART Cache Control */
#define K8NB_CACHE_CTL              0x9c
#define K8NB_CACHE_CTL_INVGART      (1u << 0) /* 1: flush; reads 0 when done */
#define K8NB_CACHE_CTL_PTEERR       (1u << 1) /* an invalid PTE was used */
#define K8NB_CACHE_CTL_BITS         0x3u

/*
 * A GART page table entry: 32 bits, little endian, one per 4 KiB page of
 * the aperture. Bits 31:12 are address bits 31:12, bits 11:4 address bits
 * 39:32.
 */
#define K8NB_PAGE_SHIFT             12
#define K8NB_PAGE_SIZE              (1ull << K8NB_PAGE_SHIFT)
#define K8NB_PTE_VALID              (1u << 0)
#define K8NB_PTE_COHERENT           (1u << 1)
#define K8NB_PTE_ADDR_MAX           (1ull << 40) /* exclusive */

static inline uint32_t k8nb_pte_encode(uint64_t addr, uint32_t flags)
{
    return (uint32_t)(addr & 0xfffff000u) |
           (uint32_t)(((addr >> 32) & 0xff) << 4) | flags;
}

static inline uint64_t k8nb_pte_addr(uint32_t pte)
{
    return (pte & 0xfffff000ull) | ((uint64_t)(pte & 0xff0u) << 28);
}

static inline uint64_t k8nb_aper_size(uint32_t order)
{
    return K8NB_APER_MIN_SIZE << order;
}

#endif /* K8_NORTHBRIDGE_REGS_H */
