/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dma32demo: ioctl interface of the dma32demo driver (/dev/dma32demoN).
 *
 * Shared by the kernel module (driver/dma32demo-*.c) and the user tool
 * (driver/dma32ctl.c). Every structure has a fixed layout (naturally
 * aligned __u32/__u64 fields, explicit padding), so 32-bit and 64-bit
 * user space see the same thing. Reserved fields must be zero on input.
 */
#ifndef _UAPI_LINUX_DMA32DEMO_H
#define _UAPI_LINUX_DMA32DEMO_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * The interface grows compatibly: a new field takes a reserved one (zero
 * from a driver that predates it), a new behaviour is announced by a flag
 * in struct dma32demo_info.flags, and a caller looks for the flag, not at
 * the version. DMA32DEMO_ABI_VERSION changes only if a structure's layout
 * or an existing meaning does, which would break callers: INFO reports the
 * driver's, and a caller refuses a driver whose version is not its own.
 * 3: control buffers, coherent memory in the swiotlb pool, refused
 * mappings, the truncation-alias strategy, address runs; then, compatibly,
 * DMA32DEMO_INFO_FAULT_INJECTION, DMA32DEMO_INFO_ADDRESSES_HIDDEN,
 * struct dma32demo_result.flags (was padding).
 * 4: struct dma32demo_result.mappings counts CPU segments, the unit of
 * mappings_above_4g (3 counted DMA segments, fewer behind an IOMMU).
 */
#define DMA32DEMO_ABI_VERSION			4

/* Buffer strategies (struct dma32demo_run.strategy) */
#define DMA32DEMO_STRATEGY_COHERENT		1 /* dma_alloc_coherent */
#define DMA32DEMO_STRATEGY_STREAMING		2 /* GFP_KERNEL pages, mapped */
#define DMA32DEMO_STRATEGY_STREAMING_DMA32	3 /* GFP_DMA32 pages, mapped */
#define DMA32DEMO_STRATEGY_USER			4 /* pinned user pages */
#define DMA32DEMO_STRATEGY_UNSAFE_RAW		5 /* CPU physical addresses */
/*
 * What 2005 hardware did with an address beyond its lines, shown safely:
 * the device is handed the physical address of a reserved window above its
 * reach (module parameter alias_window) and, if it truncates, writes the
 * window's low alias (the address modulo 2^dma_bits), which the driver
 * owns too (also reserved). FILL only, count 1, size up to
 * DMA32DEMO_ALIAS_MAX; the request's CPU view is the low alias, so
 * --verify proves the data landed there; alias_canary_errors counts bytes
 * that changed anywhere else in either window.
 */
#define DMA32DEMO_STRATEGY_TRUNCATION_ALIAS	6
#define DMA32DEMO_STRATEGY_MAX			6

/* The alias windows: DMA32DEMO_ALIAS_WINDOW bytes each, reserved memory */
#define DMA32DEMO_ALIAS_WINDOW			0x10000 /* 64 KiB */
#define DMA32DEMO_ALIAS_MAX			0x8000

/* Operations (struct dma32demo_run.op) */
#define DMA32DEMO_OP_FILL			1 /* device writes a pattern */
#define DMA32DEMO_OP_CHECKSUM			2 /* device reads, CRC-32C */
#define DMA32DEMO_OP_COPY			3 /* device copies src -> dst */
#define DMA32DEMO_OP_MAX			3

/* struct dma32demo_run.flags */
#define DMA32DEMO_RUN_VERIFY			0x1 /* check the data */
/* Tests only: refused unless the module parameter unsafe_fault_injection=1 */
#define DMA32DEMO_RUN_INJECT_BUS_ERROR		0x2 /* device fault */
#define DMA32DEMO_RUN_INJECT_STALL		0x4 /* device hangs */
#define DMA32DEMO_RUN_FLAGS_ALL			0x7u

/* Limits of one request */
#define DMA32DEMO_MAX_COUNT			4096
#define DMA32DEMO_MAX_RUNS			4096 /* runs_max */

/* struct dma32demo_addr_run.flags */
#define DMA32DEMO_ADDR_BOUNCED			0x1 /* dma is a swiotlb bounce slot */
#define DMA32DEMO_ADDR_RING			0x2 /* the descriptor ring */
#define DMA32DEMO_ADDR_UNMAPPED			0x4 /* never mapped: dma is 0 */
#define DMA32DEMO_ADDR_CTRL			0x8 /* a control buffer */
#define DMA32DEMO_ADDR_COHERENT			0x10 /* dma_alloc_coherent() memory */
#define DMA32DEMO_ADDR_IN_POOL			0x20 /* the memory is in the swiotlb pool */
#define DMA32DEMO_ADDR_RESERVED			0x40 /* reserved memory, not pages */

/* struct dma32demo_addr_run.buffer of the ring's and control buffers' runs */
#define DMA32DEMO_ADDR_DEVICE_BUFFER		0xffffffffu

/* struct dma32demo_info.irq_mode */
#define DMA32DEMO_IRQ_MSI			1
#define DMA32DEMO_IRQ_INTX			2

/* struct dma32demo_info.flags */
#define DMA32DEMO_INFO_ALLOW_UNSAFE		0x1
#define DMA32DEMO_INFO_SWIOTLB_ACTIVE		0x2
#define DMA32DEMO_INFO_MASK_FORCED		0x4
#define DMA32DEMO_INFO_COHERENT_MASK_FORCED	0x8
#define DMA32DEMO_INFO_TRUNCATES		0x10 /* device drops high bits */
#define DMA32DEMO_INFO_FAULT_INJECTION		0x20 /* INJECT_* flags accepted */
/*
 * The opener lacks CAP_SYS_ADMIN: every physical or DMA address reads as
 * 0 (ring_dma, swiotlb_start/end, alias_window here; fault_addr,
 * latched_fault_addr and the address runs of a request, whose result says
 * so with DMA32DEMO_RESULT_ADDRESSES_HIDDEN).
 */
#define DMA32DEMO_INFO_ADDRESSES_HIDDEN		0x40

/* struct dma32demo_result.flags */
#define DMA32DEMO_RESULT_ADDRESSES_HIDDEN	0x1 /* no runs, fault addresses 0 */

/* Indices of struct dma32demo_result.zone_pages */
#define DMA32DEMO_ZONE_DMA			0 /* below 16 MiB */
#define DMA32DEMO_ZONE_DMA32			1 /* below 4 GiB */
#define DMA32DEMO_ZONE_NORMAL			2
#define DMA32DEMO_ZONE_OTHER			3 /* movable, device, ... */
#define DMA32DEMO_NR_ZONES			4

struct dma32demo_info {
	__u32 id;		/* ID register (magic) */
	__u32 version;		/* major << 16 | minor */
	__u32 dma_bits;		/* data address bits the device advertises */
	__u32 ring_bits;	/* ring address bits the device advertises */
	__u32 max_xfer;		/* max bytes per request buffer */
	__u32 max_ring;		/* max ring entries of the device */
	__u32 features;		/* device FEATURES register */
	__u32 ring_entries;	/* ring entries the driver uses */
	__u32 dma_mask_bits;	/* streaming DMA mask in effect */
	__u32 coherent_mask_bits; /* coherent DMA mask in effect */
	__u32 irq_mode;		/* DMA32DEMO_IRQ_* */
	__u32 flags;		/* DMA32DEMO_INFO_* */
	__u32 timeout_ms;	/* completion timeout */
	__u32 pad;
	__u64 ring_dma;		/* bus address of the ring */
	__u64 swiotlb_start;	/* physical range of the swiotlb pool, */
	__u64 swiotlb_end;	/* or 0, 0 if there is none */
	char pci_name[32];	/* e.g. "0000:00:03.0" */
	__u32 ctrl_buffers;	/* coherent control buffers held while bound */
	__u32 ctrl_buffer_bytes; /* size of each */
	__u64 alias_window;	/* high alias window (physical) or 0 */
	__u32 abi_version;	/* DMA32DEMO_ABI_VERSION of the driver */
	__u32 pad2;
	__u64 reserved;
};

/*
 * What a request did. Filled in (and copied back) whenever the request
 * got past argument validation, also when it failed: then error is the
 * positive errno that the ioctl also returns.
 */
struct dma32demo_result {
	__s32 error;		/* 0 or a positive errno */
	__u32 dev_status;	/* device status of the first failed transfer */
	__u64 buffers;		/* buffers allocated (count, x2 for copy) */
	__u64 buffers_verified;	/* buffers whose data checked out */
	__u64 descriptors;	/* descriptors handed to the device */
	__u64 transfers;	/* descriptors the device completed OK */
	__u64 bytes;		/* bytes moved by those transfers */
	__u64 ns;		/* whole request: allocate .. verify .. free */
	__u64 dma_ns;		/* first doorbell .. last completion */
	__u64 mappings;		/* CPU segments mapped (an IOMMU may merge them) */
	__u64 mappings_above_4g; /* those whose CPU memory is >= 4 GiB */
	__u64 bounced;		/* segments whose DMA address is in swiotlb */
	__u64 bounced_bytes;
	__u64 pages;		/* buffer pages */
	__u64 pages_above_4g;
	__u64 zone_pages[DMA32DEMO_NR_ZONES];
	__u64 device_faults;	/* transfers the device failed */
	__u64 fault_addr;	/* address of the first fault, from the ring */
	__u64 latched_fault_addr; /* FAULT_ADDR register after the request */
	__u32 fault_info;	/* FAULT_INFO register after the request */
	__u32 timeouts;		/* completions that never came */
	__u32 resets;		/* device resets done by this request */
	__u32 device_crc;	/* CHECKSUM: last device result */
	__u32 cpu_crc;		/* CHECKSUM: the CPU's value for it */
	__u32 flags;		/* DMA32DEMO_RESULT_* */
	__u64 verify_errors;	/* bytes (fill, copy) or CRCs that differ */
	__u64 first_bad_offset;	/* in the first bad buffer */
	__u64 alloc_failures;	/* allocations or mappings that failed */
	__u64 coherent_asked;	/* coherent bytes of the failed allocation */
	__u64 coherent_held;	/* coherent bytes the driver held then */
	/*
	 * Coherent bytes of this device (ring, control buffers, this
	 * request's buffers) that lay in the swiotlb pool while the request
	 * held its buffers: what a kernel that takes coherent memory from
	 * the pool (2.6.14's swiotlb_alloc_coherent()) keeps there.
	 */
	__u64 coherent_swiotlb_bytes;
	__u64 map_failures;	/* streaming mappings the DMA API refused */
	/* TRUNCATION_ALIAS: bytes changed outside the expected alias, in either window */
	__u64 alias_canary_errors;
	__u32 runs;		/* address runs written to runs_addr */
	__u32 runs_dropped;	/* runs that did not fit in runs_max */
	/*
	 * Segments of the streaming mappings the DMA API refused. A refused
	 * dma_map_sg() may have bounced some of them before it gave up and
	 * undid its work: swiotlb counts those bounces, bounced does not.
	 */
	__u64 map_failed_segments;
};

/*
 * Where a request's memory was: one run of pages that are contiguous both
 * in CPU physical and in DMA address space, belong to one buffer and have
 * the same flags. The device's own memory comes first (buffer ==
 * DMA32DEMO_ADDR_DEVICE_BUFFER: the ring, then the control buffers), then
 * every buffer's in order: the count buffers (sources), then for COPY the
 * count destinations. A run that never got a DMA address (the request
 * failed before mapping it) has DMA32DEMO_ADDR_UNMAPPED and dma 0. Under a
 * translating IOMMU, dma is an IOVA. The truncation-alias buffer is one
 * DMA32DEMO_ADDR_RESERVED run: phys is the low alias (where the CPU looks),
 * dma the high address the device was given; it is in no page count.
 */
struct dma32demo_addr_run {
	__u64 phys;		/* CPU physical address of the first byte */
	__u64 dma;		/* DMA address the device got for that byte */
	__u32 pages;		/* pages the run touches */
	__u32 buffer;		/* buffer index, or DMA32DEMO_ADDR_DEVICE_BUFFER */
	__u32 flags;		/* DMA32DEMO_ADDR_* */
	__u32 reserved;
};

/*
 * DMA32DEMO_IOC_RUN's argument checks. An argument the driver cannot read
 * gets EFAULT. Then the request's fields are checked in this order, and
 * the first check a request fails gives its errno; a request that fails
 * one runs nothing, is not counted, and its argument is not written.
 * "total" is size x count, twice that for COPY (all the request's bytes).
 *
 *  1. EINVAL: strategy not 1 .. DMA32DEMO_STRATEGY_MAX; op not
 *     1 .. DMA32DEMO_OP_MAX; a flag outside DMA32DEMO_RUN_FLAGS_ALL;
 *     reserved0 or reserved1 not zero; size 0; count 0.
 *  2. EOVERFLOW: total does not fit in 64 bits.
 *  3. E2BIG: size > INFO's max_xfer; count > DMA32DEMO_MAX_COUNT; total
 *     > the module parameter max_request_mb MiB.
 *  4. The user buffer. USER strategy: user_addr 0: EFAULT; user_addr not
 *     page aligned, or user_len != total: EINVAL; FILL or COPY with count
 *     > 1 and size not a multiple of the cache line (64 bytes on x86),
 *     the device's destinations would share a cache line: EINVAL;
 *     [user_addr, user_addr + total) not in user space: EFAULT. Another
 *     strategy: user_addr or user_len not zero: EINVAL.
 *  5. The address runs: runs_max > DMA32DEMO_MAX_RUNS: E2BIG; runs_max
 *     without runs_addr: EFAULT; runs_addr without runs_max: EINVAL;
 *     the runs_max runs at runs_addr not in user space: EFAULT.
 *  6. INJECT_BUS_ERROR or INJECT_STALL: EPERM without the module
 *     parameter unsafe_fault_injection=1 (INFO's
 *     DMA32DEMO_INFO_FAULT_INJECTION).
 *  7. UNSAFE_RAW: EPERM without the module parameter allow_unsafe=1
 *     (INFO's DMA32DEMO_INFO_ALLOW_UNSAFE), or on a device that truncates
 *     addresses (DMA32DEMO_INFO_TRUNCATES).
 *  8. TRUNCATION_ALIAS: op not FILL, count not 1, or size >
 *     DMA32DEMO_ALIAS_MAX: EINVAL; then EPERM without allow_unsafe=1,
 *     without an alias_window (INFO's alias_window 0), or behind a
 *     translating IOMMU.
 *
 * "In user space" is the range check of access_ok() and nothing more (no
 * page need be mapped yet): the range ends at or below the top of user
 * space, 0x7ffffffff000 on x86-64 with 4-level paging (TASK_SIZE_MAX:
 * 2^47 less a guard page; the same bound for a 32-bit process, whose
 * pointers are zero-extended), and does not wrap. A buffer that passes the check and is not
 * mapped, or is read-only where the device writes, fails later, when the
 * request runs (EFAULT, counted). driver/README.md lists the errnos of a
 * request that runs.
 */
struct dma32demo_run {
	/* In */
	__u32 strategy;		/* DMA32DEMO_STRATEGY_* */
	__u32 op;		/* DMA32DEMO_OP_* */
	__u64 size;		/* bytes per buffer, 1 .. max_xfer */
	__u64 count;		/* buffers, 1 .. DMA32DEMO_MAX_COUNT */
	__u32 flags;		/* DMA32DEMO_RUN_* */
	__u32 reserved0;
	/*
	 * USER strategy only (zero otherwise): a page-aligned buffer of
	 * user_len == size * count bytes (twice that for COPY: the sources
	 * first, then the destinations). Buffer i is at user_addr + i * size.
	 */
	__u64 user_addr;
	__u64 user_len;
	/*
	 * Optional address runs (both zero: none): an array of runs_max
	 * (1 .. DMA32DEMO_MAX_RUNS) struct dma32demo_addr_run that the driver
	 * fills when the request got past validation; result.runs says how
	 * many it wrote, result.runs_dropped how many more there were. None
	 * for an opener without CAP_SYS_ADMIN (DMA32DEMO_RESULT_ADDRESSES_HIDDEN).
	 */
	__u64 runs_addr;
	__u32 runs_max;
	__u32 reserved1;
	/* Out */
	struct dma32demo_result result;
};

/*
 * The statistics (STATS, /sys/bus/pci/devices/<BDF>/stats/) are listed
 * once, in dma32demo-stats.h; what a row says is explained there.
 */

/* Their indices, in the list's order: DMA32DEMO_STAT_requests, ... */
enum dma32demo_stat {
#define DMA32DEMO_STAT(name, ...) DMA32DEMO_STAT_##name,
#include "dma32demo-stats.h"
#undef DMA32DEMO_STAT
	DMA32DEMO_NR_STATS
};

/* What one request, its struct dma32demo_result *@res, adds to a row's */
#define DMA32DEMO_STAT_ADDS(from, res, field)	DMA32DEMO_ADDS_##from(res, field)
#define DMA32DEMO_ADDS_RESULT(res, field)	((*(res)).field)
#define DMA32DEMO_ADDS_REQUEST(...)		1
#define DMA32DEMO_ADDS_FAILED(res, ...)		((res)->error != 0)
#define DMA32DEMO_ADDS_ABORTED(...)		0
#define DMA32DEMO_ADDS_GAUGE(...)		0

/*
 * What the request @res added to statistic @stat (0 for a gauge): how the
 * driver counts, and how a caller can sum its own requests the same way
 */
static inline __u64
dma32demo_stat_adds(const struct dma32demo_result *res, unsigned int stat)
{
	const __u64 add[DMA32DEMO_NR_STATS] = {
#define DMA32DEMO_STAT(name, from, field)				\
		[DMA32DEMO_STAT_##name] = DMA32DEMO_STAT_ADDS(from, res, field),
#include "dma32demo-stats.h"
#undef DMA32DEMO_STAT
	};

	return stat < DMA32DEMO_NR_STATS ? add[stat] : 0;
}

/* Does RESET_STATS zero a row's? (Every counter, no gauge) */
#define DMA32DEMO_STAT_RESETS(from)		DMA32DEMO_RESETS_##from
#define DMA32DEMO_RESETS_RESULT			1
#define DMA32DEMO_RESETS_REQUEST		1
#define DMA32DEMO_RESETS_FAILED			1
#define DMA32DEMO_RESETS_ABORTED		1
#define DMA32DEMO_RESETS_GAUGE			0

/* All __u64, in the list's order: requests, errors, ..., aborted */
struct dma32demo_stats {
	__u64
#define DMA32DEMO_STAT(name, ...) name,
#include "dma32demo-stats.h"
#undef DMA32DEMO_STAT
	reserved[1];
};

#define DMA32DEMO_IOC_MAGIC	0xd3

#define DMA32DEMO_IOC_INFO	_IOR(DMA32DEMO_IOC_MAGIC, 0, struct dma32demo_info)
#define DMA32DEMO_IOC_RUN	_IOWR(DMA32DEMO_IOC_MAGIC, 1, struct dma32demo_run)
#define DMA32DEMO_IOC_STATS	_IOR(DMA32DEMO_IOC_MAGIC, 2, struct dma32demo_stats)
#define DMA32DEMO_IOC_RESET_STATS _IO(DMA32DEMO_IOC_MAGIC, 3)

#endif /* _UAPI_LINUX_DMA32DEMO_H */
