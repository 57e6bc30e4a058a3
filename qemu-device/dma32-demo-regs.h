/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * dma32-demo: the hardware ABI of the device, shared by the QEMU model
 * (qemu-device/dma32-demo.c) and the Linux driver (driver/dma32demo-*.c).
 *
 * This header is the one source of truth for the register map, the
 * descriptor layout, the status codes and the FILL pattern. It must
 * compile both in QEMU (stdint types) and in the kernel (linux/types.h
 * provides uint32_t/uint64_t). It uses nothing else.
 *
 * All registers are 32 bits wide, little endian, at the offsets below in
 * BAR0. 64-bit quantities are split into _LO/_HI pairs; reading _LO of a
 * counter snapshots the whole 64-bit value so that the following read of
 * _HI is consistent.
 *
 * Descriptors live in guest memory, are little endian and
 * DMA32_DEMO_DESC_SIZE bytes long. Drivers that want endian annotations
 * define DMA32_DEMO_LE32/DMA32_DEMO_LE64 (e.g. __le32/__le64) before
 * including this file.
 */
#ifndef DMA32_DEMO_REGS_H
#define DMA32_DEMO_REGS_H

/* PCI identity: QEMU's range for experimental devices (docs/specs/pci-ids) */
#define DMA32_DEMO_VENDOR_ID            0x1af4
#define DMA32_DEMO_DEVICE_ID            0x10f3
#define DMA32_DEMO_REVISION             0x01
#define DMA32_DEMO_BAR0_SIZE            0x1000

/* Identification and capabilities (read only) */
#define DMA32_DEMO_REG_ID               0x000 /* DMA32_DEMO_ID_MAGIC */
#define DMA32_DEMO_REG_VERSION          0x004 /* major << 16 | minor */
#define DMA32_DEMO_REG_DMA_BITS         0x008 /* data buffer address bits */
#define DMA32_DEMO_REG_RING_BITS        0x00c /* ring address bits */
#define DMA32_DEMO_REG_MAX_XFER         0x010 /* max bytes per descriptor */
#define DMA32_DEMO_REG_MAX_RING         0x014 /* max descriptors in the ring */
#define DMA32_DEMO_REG_FEATURES         0x018 /* DMA32_DEMO_FEAT_* */

#define DMA32_DEMO_ID_MAGIC             0x444d4133 /* "DMA3" */
#define DMA32_DEMO_VERSION_MAJOR        1
#define DMA32_DEMO_VERSION_MINOR        0
#define DMA32_DEMO_FEAT_TRUNCATE        (1u << 0) /* overflow=truncate */

/* Control */
#define DMA32_DEMO_REG_CTRL             0x020
#define DMA32_DEMO_CTRL_ENABLE          (1u << 0) /* process the ring */
#define DMA32_DEMO_CTRL_RESET           (1u << 31) /* write 1: device reset */

#define DMA32_DEMO_REG_STATUS           0x024 /* read only */
#define DMA32_DEMO_STATUS_ENABLED       (1u << 0)
#define DMA32_DEMO_STATUS_BUSY          (1u << 1) /* head != tail */
#define DMA32_DEMO_STATUS_HALTED        (1u << 2) /* ring error, see FAULT_* */

/* Interrupts: level = INT_STATUS & INT_MASK; MSI sent on each new cause */
#define DMA32_DEMO_REG_INT_STATUS       0x028 /* read only */
#define DMA32_DEMO_REG_INT_MASK         0x02c /* read/write */
#define DMA32_DEMO_REG_INT_ACK          0x030 /* write 1 to clear */
#define DMA32_DEMO_INT_DONE             (1u << 0) /* a descriptor completed */
#define DMA32_DEMO_INT_ERROR            (1u << 1) /* fault or error */
#define DMA32_DEMO_INT_ALL \
    (DMA32_DEMO_INT_DONE | DMA32_DEMO_INT_ERROR)

/*
 * Ring: RING_SIZE descriptors (a power of two, 1..MAX_RING) at RING_BASE
 * (DMA32_DEMO_DESC_SIZE aligned). Writing RING_BASE_LO/HI or RING_SIZE sets
 * HEAD and TAIL to 0 and clears HALTED. The driver fills descriptors and
 * writes the index one past the last one to DOORBELL (the new tail, modulo
 * RING_SIZE). The device completes descriptors in order, writing status
 * into each and advancing HEAD.
 */
#define DMA32_DEMO_REG_RING_BASE_LO     0x040
#define DMA32_DEMO_REG_RING_BASE_HI     0x044
#define DMA32_DEMO_REG_RING_SIZE        0x048
#define DMA32_DEMO_REG_DOORBELL         0x04c /* write only: new tail */
#define DMA32_DEMO_REG_RING_HEAD        0x050 /* read only */
#define DMA32_DEMO_REG_RING_TAIL        0x054 /* read only */

/* Last fault, latched until the next fault or reset */
#define DMA32_DEMO_REG_FAULT_ADDR_LO    0x060
#define DMA32_DEMO_REG_FAULT_ADDR_HI    0x064
#define DMA32_DEMO_REG_FAULT_INFO       0x068
/* FAULT_INFO: status [7:0], source [15:8], descriptor index [31:16] */
#define DMA32_DEMO_FAULT_STATUS(info)   ((info) & 0xff)
#define DMA32_DEMO_FAULT_SOURCE(info)   (((info) >> 8) & 0xff)
#define DMA32_DEMO_FAULT_INDEX(info)    (((info) >> 16) & 0xffff)
#define DMA32_DEMO_FAULT_SRC_NONE       0
#define DMA32_DEMO_FAULT_SRC_RING       1 /* descriptor fetch or write-back */
#define DMA32_DEMO_FAULT_SRC_SRC        2 /* descriptor's src buffer */
#define DMA32_DEMO_FAULT_SRC_DST        3 /* descriptor's dst buffer */

/* 64-bit counters; CNT_CLEAR write 1 clears all */
#define DMA32_DEMO_REG_CNT_COMPLETED    0x080
#define DMA32_DEMO_REG_CNT_BYTES_READ   0x088
#define DMA32_DEMO_REG_CNT_BYTES_WRITTEN 0x090
#define DMA32_DEMO_REG_CNT_ADDR_FAULTS  0x098
#define DMA32_DEMO_REG_CNT_BUS_ERRORS   0x0a0
#define DMA32_DEMO_REG_CNT_INVALID      0x0a8
#define DMA32_DEMO_NR_COUNTERS          6
#define DMA32_DEMO_REG_CNT_CLEAR        0x0c0

/*
 * Fault injection, for testing drivers' error paths (write only, reads 0):
 * BUS_ERROR makes the next data transfer fail as if the bus had returned
 * an error; STALL makes the device stop completing descriptors until reset.
 */
#define DMA32_DEMO_REG_INJECT           0x0d0
#define DMA32_DEMO_INJECT_BUS_ERROR     (1u << 0)
#define DMA32_DEMO_INJECT_STALL         (1u << 1)

/* Descriptor */
#ifndef DMA32_DEMO_LE32
#define DMA32_DEMO_LE32 uint32_t
#endif
#ifndef DMA32_DEMO_LE64
#define DMA32_DEMO_LE64 uint64_t
#endif

struct dma32_demo_desc {
    DMA32_DEMO_LE32 op;     /* DMA32_DEMO_OP_* */
    DMA32_DEMO_LE32 len;    /* bytes, 1..MAX_XFER */
    DMA32_DEMO_LE64 src;    /* CHECKSUM, COPY */
    DMA32_DEMO_LE64 dst;    /* FILL, COPY */
    DMA32_DEMO_LE64 seed;   /* FILL pattern seed */
    DMA32_DEMO_LE32 status; /* written by the device */
    DMA32_DEMO_LE32 result; /* CHECKSUM: CRC32C of src */
    DMA32_DEMO_LE64 fault_addr; /* written by the device on fault */
    DMA32_DEMO_LE64 reserved[2]; /* must be zero */
};

#define DMA32_DEMO_DESC_SIZE            64
#define DMA32_DEMO_DESC_STATUS_OFF      0x20 /* offsetof(status) */

#define DMA32_DEMO_OP_FILL              1 /* device -> memory */
#define DMA32_DEMO_OP_CHECKSUM          2 /* memory -> device */
#define DMA32_DEMO_OP_COPY              3 /* memory -> memory */

#define DMA32_DEMO_ST_PENDING           0 /* driver writes this */
#define DMA32_DEMO_ST_OK                1
#define DMA32_DEMO_ST_ADDR_FAULT        2 /* range beyond the address limit */
#define DMA32_DEMO_ST_BUS_ERROR         3 /* the bus rejected the access */
#define DMA32_DEMO_ST_INVALID           4 /* malformed descriptor or ring */

/*
 * FILL pattern: byte i of the buffer is byte (i % 8) of the little-endian
 * 64-bit word dma32_demo_pattern_word(seed, i / 8). Cheap to compute and
 * different for every word and seed, so a misplaced or stale byte shows.
 */
static inline uint64_t dma32_demo_pattern_word(uint64_t seed, uint64_t index)
{
    uint64_t x = seed + (index + 1) * 0x9e3779b97f4a7c15ull;

    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return x;
}

#endif /* DMA32_DEMO_REGS_H */
