// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo: driver for the dma32-demo PCI device, a DMA engine that can
 * only reach part of the physical address space (qemu-device/).
 *
 * It moves verified data through five buffer strategies and reports, per
 * request, where the memory was (pages per zone, pages above 4 GiB) and
 * which DMA mappings bounced through swiotlb:
 *
 *   coherent         dma_alloc_coherent()
 *   streaming        GFP_KERNEL pages, dma_map_sgtable()
 *   streaming-dma32  GFP_DMA32 pages, dma_map_sgtable()
 *   user             the caller's pages, pinned, dma_map_sgtable()
 *   unsafe-raw       page_to_phys() handed to the device, no DMA API
 *                    (only with allow_unsafe=1: shows the device faulting)
 *   truncation-alias two reserved windows, the high one's address
 *                    handed to a truncating device (alias_window=)
 *
 * One misc device per PCI function (/dev/dma32demoN), ioctls in
 * uapi/dma32demo.h, statistics in /sys/bus/pci/devices/<BDF>/stats/.
 *
 * Locking: dd->lock serialises every use of the hardware and the ring; a
 * request holds it from allocation to free, so concurrent requests queue.
 * INFO, STATS and RESET_STATS take no lock (atomic counters and what
 * probe set once), so they never wait behind a request.
 * The device structure is reference counted: open files keep it alive
 * after the PCI device went away (dd->gone).
 *
 * Going away: remove and shutdown do not wait for a request. Under
 * dd->hw_lock they set dd->gone and stop the engine, then complete
 * dd->done, so a request's wait ends at once with -ENODEV; nothing enables
 * the engine or rings the doorbell once gone is set (d32_hw_init(),
 * d32_doorbell() take hw_lock and look at it). Remove then takes dd->lock
 * only to wait until that request has let go of the ring and its buffers,
 * which no longer waits for the device; shutdown does not wait at all.
 *
 * Signals and system sleep: a request sleeps interruptibly and checks for
 * signals while it allocates and verifies, so any signal it gets ends it
 * within moments: the device is reset before anything is unmapped and the
 * ioctl returns -ERESTARTSYS. The kernel then restarts the request from the
 * start (after the freezer's fake signal at system sleep, after a stop and
 * a continue, after a handler with SA_RESTART) or the caller sees EINTR; a
 * killed caller never returns. That is also what lets the freezer stop user
 * space with a request in flight, so that suspend finds the device idle:
 * a sleep the freezer cannot interrupt (killable) would hold it off for the
 * whole request, and the suspend would fail after 20 s.
 *
 * DMA-API internals, on purpose: a driver normally never asks where its
 * memory came from. This one exists to show it, so it reads what the DMA
 * API hides: <linux/dma-direct.h>'s dma_to_phys() and phys_to_dma() and
 * the device's swiotlb pool (dev->dma_io_tlb_mem, d32_is_swiotlb()) to
 * tell a bounced mapping from a direct one, and the IOMMU domain type to
 * tell translated DMA from an identity mapping. None of it is needed to
 * move data; all of it is read-only. It ties the module to the kernel
 * version it is built for, which is how out-of-tree test drivers live.
 *
 * It builds against both guest kernels, Debian's 6.1 and 6.12. Where their
 * interfaces differ (Kbuild tests the kernel's headers: the D32_* macros):
 * d32_swiotlb_pool() (6.6 moved the default pool into io_tlb_mem.defpool),
 * d32_swiotlb_active() (6.12 stopped exporting is_swiotlb_active()),
 * d32_is_swiotlb() (6.12 replaced is_swiotlb_buffer() with
 * swiotlb_find_pool()), PCI_IRQ_INTX (6.8's name for PCI_IRQ_LEGACY) and
 * the unaligned-access header (6.12 moved it to <linux/unaligned.h>).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/crc32.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/kernel.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/pm.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/swiotlb.h>
#include <linux/uaccess.h>
#include <asm/e820/api.h>
#ifdef D32_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#define DMA32_DEMO_LE32 __le32
#define DMA32_DEMO_LE64 __le64
#include "dma32-demo-regs.h"
#include "dma32demo.h"

#ifndef PCI_IRQ_INTX
#define PCI_IRQ_INTX PCI_IRQ_LEGACY
#endif

#define DRV_NAME "dma32demo"

static bool allow_unsafe;
module_param(allow_unsafe, bool, 0444);
MODULE_PARM_DESC(allow_unsafe,
		 "Allow the unsafe-raw strategy (CPU physical addresses, no DMA API)");

static unsigned int force_mask_bits;
module_param(force_mask_bits, uint, 0444);
MODULE_PARM_DESC(force_mask_bits,
		 "UNSAFE: streaming DMA mask bits instead of the device's dma-bits (0: use the device's)");

static unsigned int force_coherent_bits;
module_param(force_coherent_bits, uint, 0444);
MODULE_PARM_DESC(force_coherent_bits,
		 "Coherent DMA mask bits instead of min(ring-bits, dma-bits); wider is UNSAFE (0: the device's)");

/*
 * A request's wait without progress. Bounded: a request holds dd->lock for
 * at least this long when the device hangs, and everything queued behind it
 * waits too (remove and shutdown do not: see the top).
 */
#define D32_TIMEOUT_MS_MAX	120000
static unsigned int timeout_ms = 5000;

static int d32_set_timeout_ms(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < 1 || v > D32_TIMEOUT_MS_MAX) {
		pr_err("timeout_ms=%.*s refused: must be 1..%u (milliseconds)\n",
		       (int)strcspn(val, "\n"), val, D32_TIMEOUT_MS_MAX);
		return -EINVAL;
	}
	WRITE_ONCE(timeout_ms, v);
	return 0;
}

static const struct kernel_param_ops d32_timeout_ms_ops = {
	.set = d32_set_timeout_ms,
	.get = param_get_uint,
};

module_param_cb(timeout_ms, &d32_timeout_ms_ops, &timeout_ms, 0644);
MODULE_PARM_DESC(timeout_ms,
		 "Time without progress after which the device is declared hung and reset (1..120000 ms)");

static unsigned int ring_entries = 256;
module_param(ring_entries, uint, 0444);
MODULE_PARM_DESC(ring_entries, "Descriptor ring entries (power of two, 2..4096)");

static bool use_msi = true;
module_param(use_msi, bool, 0444);
MODULE_PARM_DESC(use_msi, "Use MSI when available (0: legacy INTx only)");

static unsigned int max_request_mb = 1024;
module_param(max_request_mb, uint, 0644);
MODULE_PARM_DESC(max_request_mb, "Largest request (all its buffers together) in MiB");

static unsigned int ctrl_buffers;
module_param(ctrl_buffers, uint, 0444);
MODULE_PARM_DESC(ctrl_buffers,
		 "Coherent control buffers each device holds while bound, as a NIC or HBA holds its rings (0..64)");

static unsigned int ctrl_buffer_kb = 64;
module_param(ctrl_buffer_kb, uint, 0444);
MODULE_PARM_DESC(ctrl_buffer_kb, "Size of each control buffer in KiB (4..4096)");

static unsigned long long alias_window;
module_param(alias_window, ullong, 0444);
MODULE_PARM_DESC(alias_window,
		 "UNSAFE, needs allow_unsafe=1: the physical address of a reserved 64 KiB window above the device's reach whose low alias (modulo 2^dma-bits) is reserved too, for the truncation-alias strategy (boot with memmap=64K$ADDR for both)");

static DEFINE_IDA(d32_ida);

/*
 * All devices share the alias windows: one truncation-alias request at a
 * time, across all devices, from claiming the windows to releasing them.
 * Taken inside dd->lock, never the other way round.
 */
static DEFINE_MUTEX(d32_alias_lock);

struct d32_stats {
	atomic64_t requests;
	atomic64_t errors;
	atomic64_t transfers;
	atomic64_t bytes;
	atomic64_t mappings;
	atomic64_t bounced;
	atomic64_t bounced_bytes;
	atomic64_t device_faults;
	atomic64_t alloc_failures;
	atomic64_t timeouts;
	atomic64_t resets;
	atomic64_t map_failures;
	atomic64_t coherent_held;	/* gauge, bytes */
	atomic64_t coherent_swiotlb;	/* gauge, bytes: those in the pool */
};

/* A coherent buffer the device holds while bound */
struct d32_ctrl {
	void *cpu;
	dma_addr_t dma;
};

struct d32_dev {
	struct kref kref;
	struct pci_dev *pdev;
	struct device *dev;
	void __iomem *regs;
	struct mutex lock;		/* hardware, ring */
	spinlock_t hw_lock;		/* gone vs. enable and doorbell */
	bool gone;			/* READ_ONCE: remove, shutdown set it */
	struct miscdevice misc;
	char name[24];
	int id;
	int irq;
	u32 irq_mode;
	struct completion done;

	/* Capabilities */
	u32 version;
	u32 dma_bits;
	u32 ring_bits;
	u32 max_xfer;
	u32 max_ring;
	u32 features;
	u32 mask_bits;
	u32 coherent_bits;
	bool mask_forced;
	bool coherent_forced;
	bool bounce_beyond_mask;	/* swiotlb pool outside the DMA mask */
	bool dma_direct;		/* DMA addresses are physical (no IOVA) */

	/* Ring (coherent) */
	struct dma32_demo_desc *ring;
	dma_addr_t ring_dma;
	size_t ring_bytes;
	u32 ring_entries;
	u32 tail;

	/* Control buffers (coherent), held while bound */
	struct d32_ctrl *ctrl;
	unsigned int nctrl;
	size_t ctrl_bytes;

	struct d32_stats st;
};

/* A DMA segment: what one or more descriptors point at */
struct d32_seg {
	dma_addr_t addr;
	size_t len;
};

struct d32_buf {
	size_t size;
	enum dma_data_direction dir;
	/* coherent */
	void *cpu;
	dma_addr_t handle;
	/* page based strategies */
	struct page **pages;
	unsigned int npages;
	unsigned int pgoff;		/* user: offset in the first page */
	bool pinned;
	struct sg_table sgt;
	bool sgt_alloc;
	bool mapped;
	/* truncation-alias: both windows, mapped; cpu points into lo */
	void *win_hi;
	void *win_lo;
	bool win_claimed;		/* both windows request_mem_region()ed */
	size_t win_off;
	/* what the device is given */
	struct d32_seg *segs;
	unsigned int nsegs;
};

struct d32_job {
	u64 src;
	u64 dst;
	u64 seed;
	u64 fault;
	u32 len;
	u32 off;			/* in the unit's buffers */
	u32 unit;
	u32 status;
	u32 result;
};

struct d32_req {
	struct d32_dev *dd;
	u32 strategy;
	u32 op;
	u32 hwop;
	u32 flags;
	size_t size;
	unsigned int count;
	unsigned int nbufs;
	u64 uaddr;
	u64 seed;
	struct d32_buf *bufs;
	struct d32_job *jobs;
	unsigned int njobs;
	struct dma32demo_result *res;
};

/* A request's address runs (struct dma32demo_run.runs_addr) */
struct d32_runs {
	struct dma32demo_addr_run *v;	/* max entries */
	u32 max;
	u32 n;
	u32 dropped;
	struct dma32demo_addr_run cur;	/* the run being built */
	size_t cur_bytes;		/* 0: none */
};

/* Registers */

static u32 d32_rd(struct d32_dev *dd, unsigned int reg)
{
	return readl(dd->regs + reg);
}

static void d32_wr(struct d32_dev *dd, unsigned int reg, u32 val)
{
	writel(val, dd->regs + reg);
}

static u64 d32_rd64(struct d32_dev *dd, unsigned int lo, unsigned int hi)
{
	u64 v = d32_rd(dd, lo);

	return v | (u64)d32_rd(dd, hi) << 32;
}

static void d32_hw_stop(struct d32_dev *dd)
{
	d32_wr(dd, DMA32_DEMO_REG_INT_MASK, 0);
	d32_wr(dd, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
	d32_rd(dd, DMA32_DEMO_REG_STATUS);
}

/*
 * Reset the device and program the (emptied) ring again; false, touching
 * no register, when the device is gone: remove or shutdown stopped it for
 * good, and a request that ends after them must not start it again.
 */
static bool d32_hw_init(struct d32_dev *dd)
{
	bool gone;

	memset(dd->ring, 0, dd->ring_bytes);
	dd->tail = 0;
	spin_lock(&dd->hw_lock);
	gone = READ_ONCE(dd->gone);
	if (!gone) {
		d32_wr(dd, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
		d32_wr(dd, DMA32_DEMO_REG_RING_BASE_LO,
		       lower_32_bits(dd->ring_dma));
		d32_wr(dd, DMA32_DEMO_REG_RING_BASE_HI,
		       upper_32_bits(dd->ring_dma));
		d32_wr(dd, DMA32_DEMO_REG_RING_SIZE, dd->ring_entries);
		d32_wr(dd, DMA32_DEMO_REG_INT_ACK, DMA32_DEMO_INT_ALL);
		d32_wr(dd, DMA32_DEMO_REG_INT_MASK, DMA32_DEMO_INT_ALL);
		d32_wr(dd, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_ENABLE);
		/* Flush the posted writes */
		d32_rd(dd, DMA32_DEMO_REG_STATUS);
	}
	spin_unlock(&dd->hw_lock);
	return !gone;
}

/*
 * Hand the device the descriptors up to @tail, unless it is gone. Under
 * hw_lock, like d32_mark_gone(): either it sees the doorbell's completion
 * reinitialised and completes it after, or the request sees gone here.
 */
static int d32_doorbell(struct d32_dev *dd, u32 tail)
{
	int ret = -ENODEV;

	spin_lock(&dd->hw_lock);
	if (!READ_ONCE(dd->gone)) {
		d32_wr(dd, DMA32_DEMO_REG_DOORBELL, tail);
		ret = 0;
	}
	spin_unlock(&dd->hw_lock);
	return ret;
}

/*
 * The device goes away (remove) or the system goes down (shutdown): stop
 * the engine for good and end a request's wait at once, without dd->lock.
 */
static void d32_mark_gone(struct d32_dev *dd)
{
	spin_lock(&dd->hw_lock);
	WRITE_ONCE(dd->gone, true);
	d32_hw_stop(dd);
	spin_unlock(&dd->hw_lock);
	complete_all(&dd->done);
}

static irqreturn_t d32_irq(int irq, void *data)
{
	struct d32_dev *dd = data;
	u32 st = d32_rd(dd, DMA32_DEMO_REG_INT_STATUS);

	if (!st || st == ~0u)
		return IRQ_NONE;
	d32_wr(dd, DMA32_DEMO_REG_INT_ACK, st);
	complete(&dd->done);
	return IRQ_HANDLED;
}

/* CPU access to buffers */

static bool d32_above_4g(phys_addr_t phys, size_t len)
{
	return (u64)phys + len - 1 > U32_MAX;
}

/* Map the part of @b at @off; *len is clamped to what the mapping covers */
static void *d32_kmap(struct d32_buf *b, size_t off, size_t *len)
{
	size_t in;

	if (b->cpu) {
		/* In pieces, so that long loops can reschedule */
		*len = min_t(size_t, *len, SZ_64K);
		return b->cpu + off;
	}
	off += b->pgoff;
	in = offset_in_page(off);
	*len = min_t(size_t, *len, PAGE_SIZE - in);
	return kmap_local_page(b->pages[off >> PAGE_SHIFT]) + in;
}

static void d32_kunmap(struct d32_buf *b, void *p)
{
	if (!b->cpu)
		kunmap_local(p);
}

static u8 d32_pattern_byte(u64 seed, u64 pos)
{
	return dma32_demo_pattern_word(seed, pos >> 3) >> ((pos & 7) * 8);
}

/* Write the FILL pattern of @seed to [off, off + len) of @b */
static void d32_pattern_write(struct d32_buf *b, size_t off, size_t len,
			      u64 seed)
{
	u64 pos = 0;

	while (len) {
		size_t n = len, i = 0;
		u8 *p = d32_kmap(b, off, &n);

		while (i < n) {
			if (!(pos & 7) && n - i >= 8) {
				put_unaligned_le64(dma32_demo_pattern_word(seed, pos >> 3),
						   p + i);
				i += 8;
				pos += 8;
			} else {
				p[i++] = d32_pattern_byte(seed, pos++);
			}
		}
		d32_kunmap(b, p);
		off += n;
		len -= n;
		cond_resched();
	}
}

/* Count the bytes of [off, off + len) of @b that differ from the pattern */
static u64 d32_pattern_check(struct d32_buf *b, size_t off, size_t len,
			     u64 seed, u64 *first_bad)
{
	u64 pos = 0, bad = 0;

	while (len) {
		size_t n = len, i = 0;
		u8 *p = d32_kmap(b, off, &n);

		while (i < n) {
			if (!(pos & 7) && n - i >= 8 &&
			    get_unaligned_le64(p + i) ==
			    dma32_demo_pattern_word(seed, pos >> 3)) {
				i += 8;
				pos += 8;
				continue;
			}
			if (p[i] != d32_pattern_byte(seed, pos)) {
				if (!bad)
					*first_bad = off + i;
				bad++;
			}
			i++;
			pos++;
		}
		d32_kunmap(b, p);
		off += n;
		len -= n;
		cond_resched();
	}
	return bad;
}

/* Standard CRC-32C (check value 0xe3069283) of [off, off + len) of @b */
static u32 d32_crc32c(struct d32_buf *b, size_t off, size_t len)
{
	u32 crc = ~0u;

	while (len) {
		size_t n = len;
		u8 *p = d32_kmap(b, off, &n);

		crc = __crc32c_le(crc, p, n);
		d32_kunmap(b, p);
		off += n;
		len -= n;
		cond_resched();
	}
	return ~crc;
}

static u64 d32_compare(struct d32_buf *a, struct d32_buf *b, size_t off,
		       size_t len, u64 *first_bad)
{
	u64 bad = 0;

	while (len) {
		size_t n = len, i;
		u8 *pa = d32_kmap(a, off, &n);
		u8 *pb = d32_kmap(b, off, &n);

		if (memcmp(pa, pb, n)) {
			for (i = 0; i < n; i++) {
				if (pa[i] == pb[i])
					continue;
				if (!bad)
					*first_bad = off + i;
				bad++;
			}
		}
		d32_kunmap(b, pb);
		d32_kunmap(a, pa);
		off += n;
		len -= n;
		cond_resched();
	}
	return bad;
}

/* Buffers: allocation */

static unsigned int d32_zone_idx(struct page *pg)
{
	switch (page_zonenum(pg)) {
#ifdef CONFIG_ZONE_DMA
	case ZONE_DMA:
		return DMA32DEMO_ZONE_DMA;
#endif
#ifdef CONFIG_ZONE_DMA32
	case ZONE_DMA32:
		return DMA32DEMO_ZONE_DMA32;
#endif
	case ZONE_NORMAL:
		return DMA32DEMO_ZONE_NORMAL;
	default:
		return DMA32DEMO_ZONE_OTHER;
	}
}

static void d32_account_page(struct d32_req *rq, struct page *pg)
{
	struct dma32demo_result *res = rq->res;

	res->pages++;
	if (d32_above_4g(page_to_phys(pg), PAGE_SIZE))
		res->pages_above_4g++;
	res->zone_pages[d32_zone_idx(pg)]++;
}

/*
 * Does the device have a swiotlb pool with slots in it? is_swiotlb_active()
 * says so, but 6.12 no longer exports it to modules.
 */
static bool d32_swiotlb_active(struct device *dev)
{
#ifdef CONFIG_SWIOTLB
	return dev->dma_io_tlb_mem && dev->dma_io_tlb_mem->nslabs;
#else
	return false;
#endif
}

/*
 * Is @paddr inside one of the device's swiotlb pools? With
 * CONFIG_SWIOTLB_DYNAMIC, 6.12's inline swiotlb_find_pool() calls
 * __swiotlb_find_pool(), which is not exported: a module that used it
 * would not load. Walk the same lists it walks (the allocator's pools,
 * then the device's transient ones), under RCU as it does.
 */
static bool d32_is_swiotlb(struct device *dev, phys_addr_t paddr)
{
#if defined(D32_SWIOTLB_FIND_POOL) && defined(CONFIG_SWIOTLB_DYNAMIC)
	struct io_tlb_mem *mem = dev->dma_io_tlb_mem;
	struct io_tlb_pool *pool;
	bool found = false;

	if (!mem)
		return false;
	smp_rmb(); /* as swiotlb_find_pool(): pairs with swiotlb_find_slots() */
	if (!READ_ONCE(dev->dma_uses_io_tlb))
		return false;
	rcu_read_lock();
	list_for_each_entry_rcu(pool, &mem->pools, node)
		found = found || (paddr >= pool->start && paddr < pool->end);
	list_for_each_entry_rcu(pool, &dev->dma_io_tlb_pools, node)
		found = found || (paddr >= pool->start && paddr < pool->end);
	rcu_read_unlock();
	return found;
#elif defined(D32_SWIOTLB_FIND_POOL)
	return swiotlb_find_pool(dev, paddr);
#else
	return is_swiotlb_buffer(dev, paddr);
#endif
}

/*
 * Is @addr in the swiotlb pool? On dma-direct a DMA address there is a
 * streaming mapping that was bounced, or a coherent buffer that the kernel
 * took out of the pool (2.6.14's swiotlb_alloc_coherent() did that for
 * every buffer it found no reachable page for). Behind a translating IOMMU
 * addresses are IOVAs and never in the pool.
 */
static bool d32_in_swiotlb(struct d32_dev *dd, dma_addr_t addr)
{
	return dd->dma_direct &&
	       d32_is_swiotlb(dd->dev, dma_to_phys(dd->dev, addr));
}

/*
 * What dma_alloc_coherent() really holds for @size bytes at @dma: on x86
 * (dma-direct and the IOMMU's dma-iommu alike, without CMA) a buddy block
 * of get_order(size) pages, which is never trimmed (1 MiB + 1 byte holds
 * 2 MiB); in the swiotlb pool, the slots of the page-aligned size.
 */
static size_t d32_coherent_footprint(struct d32_dev *dd, dma_addr_t dma,
				     size_t size)
{
	if (d32_in_swiotlb(dd, dma))
		return PAGE_ALIGN(size);
	return PAGE_SIZE << get_order(size);
}

/* The gauges of coherent memory held: @sign 1 after alloc, -1 before free */
static void d32_coherent_account(struct d32_dev *dd, dma_addr_t dma,
				 size_t size, int sign)
{
	s64 bytes = sign * (s64)d32_coherent_footprint(dd, dma, size);

	atomic64_add(bytes, &dd->st.coherent_held);
	if (d32_in_swiotlb(dd, dma))
		atomic64_add(bytes, &dd->st.coherent_swiotlb);
}

static int d32_alloc_coherent(struct d32_req *rq, struct d32_buf *b)
{
	struct d32_dev *dd = rq->dd;
	unsigned int i;

	b->cpu = dma_alloc_coherent(dd->dev, b->size, &b->handle,
				    GFP_KERNEL | __GFP_NOWARN);
	if (!b->cpu) {
		rq->res->coherent_asked = b->size;
		rq->res->coherent_held = atomic64_read(&dd->st.coherent_held);
		dev_info_ratelimited(dd->dev,
				     "coherent allocation of %zu bytes failed after %llu buffers; driver holds %llu coherent bytes\n",
				     b->size, rq->res->buffers,
				     rq->res->coherent_held);
		return -ENOMEM;
	}
	d32_coherent_account(dd, b->handle, b->size, 1);
	/*
	 * The pages behind the CPU address, for the zone counts. On x86
	 * dma-direct returns a linear-map address (virt_to_page() holds) and
	 * dma-iommu a vmap() of its pages (vmalloc_to_page()). That is not
	 * portable: an architecture whose coherent memory is remapped
	 * uncached, or carved out of a reserved pool with no struct page,
	 * hands out neither; the DMA API has no call that says which page
	 * backs a coherent buffer, because a driver should never need it.
	 */
	for (i = 0; i < DIV_ROUND_UP(b->size, PAGE_SIZE); i++) {
		void *va = b->cpu + i * PAGE_SIZE;

		d32_account_page(rq, is_vmalloc_addr(va) ? vmalloc_to_page(va) :
				 virt_to_page(va));
	}
	return 0;
}

static int d32_alloc_pages(struct d32_req *rq, struct d32_buf *b, gfp_t gfp)
{
	unsigned int i;

	b->npages = DIV_ROUND_UP(b->size, PAGE_SIZE);
	b->pages = kvcalloc(b->npages, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		return -ENOMEM;
	for (i = 0; i < b->npages; i++) {
		b->pages[i] = alloc_page(gfp | __GFP_NOWARN);
		if (!b->pages[i])
			return -ENOMEM;
		d32_account_page(rq, b->pages[i]);
	}
	return 0;
}

static int d32_pin_user(struct d32_req *rq, struct d32_buf *b, u64 uaddr)
{
	unsigned int i, flags = 0;
	int n;

	b->pgoff = offset_in_page(uaddr);
	b->npages = DIV_ROUND_UP(b->pgoff + b->size, PAGE_SIZE);
	b->pages = kvcalloc(b->npages, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		return -ENOMEM;
	if (b->dir == DMA_FROM_DEVICE)
		flags |= FOLL_WRITE;
	n = pin_user_pages_fast(uaddr & PAGE_MASK, b->npages, flags, b->pages);
	if (n != b->npages) {
		if (n > 0)
			unpin_user_pages(b->pages, n);
		memset(b->pages, 0, b->npages * sizeof(*b->pages));
		return n == -ENOMEM ? -ENOMEM : -EFAULT;
	}
	b->pinned = true;
	for (i = 0; i < b->npages; i++)
		d32_account_page(rq, b->pages[i]);
	return 0;
}

/*
 * The truncation-alias strategy. 2005 hardware with 32 address lines did
 * not fault on a higher address: the upper bits were simply not wired, and
 * the write landed at the address modulo 4 GiB. The demonstration needs
 * memory nobody else owns at both addresses: two windows reserved at boot
 * (memmap=64K$ADDR), never RAM the kernel uses, which the driver maps with
 * memremap(). Both are filled with a canary; the device gets the high
 * window's address; the request's CPU view is the low window, so the
 * ordinary verification proves where the data landed, and the canaries
 * prove that nothing else changed.
 */
static u8 d32_canary(bool hi, size_t pos)
{
	return (hi ? 0xa5 : 0x5a) ^ (u8)(pos * 7);
}

static phys_addr_t d32_alias_lo(struct d32_dev *dd)
{
	return alias_window & DMA_BIT_MASK(dd->dma_bits);
}

/*
 * A window must be RAM the kernel does not use: RAM in the firmware's
 * memory map (e820, before memmap= changed it) that is not System RAM,
 * i.e. reserved with memmap=64K$ADDR. Anything else is memory the kernel
 * owns or MMIO (the PCI hole), where 64 KiB of canaries must never go.
 * Then it is claimed for the request, so that no other device (or driver)
 * writes it at the same time.
 */
static int d32_alias_check(struct d32_dev *dd, phys_addr_t phys)
{
	phys_addr_t p;

	if (region_intersects(phys, DMA32DEMO_ALIAS_WINDOW,
			      IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE) !=
	    REGION_DISJOINT) {
		dev_err_ratelimited(dd->dev, "truncation-alias: %#llx is memory the kernel uses; boot with memmap=64K$%#llx to reserve it\n",
				    (u64)phys, (u64)phys);
		return -EPERM;
	}
	for (p = phys; p < phys + DMA32DEMO_ALIAS_WINDOW; p += PAGE_SIZE) {
		if (!e820__mapped_raw_any(p, p + PAGE_SIZE, E820_TYPE_RAM)) {
			dev_err_ratelimited(dd->dev, "truncation-alias: %#llx is not RAM in the firmware's memory map (MMIO or a hole): refused\n",
					    (u64)p);
			return -EPERM;
		}
	}
	if (!request_mem_region(phys, DMA32DEMO_ALIAS_WINDOW, dd->name)) {
		dev_err_ratelimited(dd->dev, "truncation-alias: the window at %#llx is in use by another device or driver\n",
				    (u64)phys);
		return -EBUSY;
	}
	return 0;
}

static int d32_alias_map(struct d32_req *rq, struct d32_buf *b)
{
	struct d32_dev *dd = rq->dd;
	phys_addr_t hi = alias_window, lo = d32_alias_lo(dd);
	size_t i;
	int ret;

	if (hi <= DMA_BIT_MASK(dd->dma_bits) ||
	    !IS_ALIGNED(hi, DMA32DEMO_ALIAS_WINDOW)) {
		dev_err_ratelimited(dd->dev, "truncation-alias: alias_window=%#llx must be 64 KiB aligned and beyond the device's %u address bits\n",
				    alias_window, dd->dma_bits);
		return -EINVAL;
	}
	ret = d32_alias_check(dd, hi);
	if (ret)
		return ret;
	ret = d32_alias_check(dd, lo);
	if (ret) {
		release_mem_region(hi, DMA32DEMO_ALIAS_WINDOW);
		return ret;
	}
	b->win_claimed = true;
	b->win_hi = memremap(hi, DMA32DEMO_ALIAS_WINDOW, MEMREMAP_WB);
	b->win_lo = memremap(lo, DMA32DEMO_ALIAS_WINDOW, MEMREMAP_WB);
	if (!b->win_hi || !b->win_lo)
		return -ENOMEM;
	for (i = 0; i < DMA32DEMO_ALIAS_WINDOW; i++) {
		((u8 *)b->win_hi)[i] = d32_canary(true, i);
		((u8 *)b->win_lo)[i] = d32_canary(false, i);
	}
	/* In the middle, so that both sides of the alias are canaries */
	b->win_off = ALIGN_DOWN((DMA32DEMO_ALIAS_WINDOW - b->size) / 2, 64);
	b->cpu = b->win_lo + b->win_off;
	return 0;
}

/* Bytes that changed in the windows, other than where the alias was due */
static u64 d32_alias_canaries(struct d32_buf *b, bool written)
{
	size_t i;
	u64 bad = 0;

	for (i = 0; i < DMA32DEMO_ALIAS_WINDOW; i++) {
		if (((u8 *)b->win_hi)[i] != d32_canary(true, i))
			bad++;
		if (written && i >= b->win_off && i < b->win_off + b->size)
			continue;
		if (((u8 *)b->win_lo)[i] != d32_canary(false, i))
			bad++;
	}
	return bad;
}

static void d32_alias_unmap(struct d32_dev *dd, struct d32_buf *b)
{
	if (b->win_hi)
		memunmap(b->win_hi);
	if (b->win_lo)
		memunmap(b->win_lo);
	if (b->win_claimed) {
		release_mem_region(alias_window, DMA32DEMO_ALIAS_WINDOW);
		release_mem_region(d32_alias_lo(dd), DMA32DEMO_ALIAS_WINDOW);
	}
	b->win_claimed = false;
	b->win_hi = NULL;
	b->win_lo = NULL;
	b->cpu = NULL;
}

static int d32_buf_alloc(struct d32_req *rq, unsigned int idx)
{
	struct d32_buf *b = &rq->bufs[idx];

	switch (rq->strategy) {
	case DMA32DEMO_STRATEGY_COHERENT:
		return d32_alloc_coherent(rq, b);
	case DMA32DEMO_STRATEGY_STREAMING:
		return d32_alloc_pages(rq, b, GFP_KERNEL);
	case DMA32DEMO_STRATEGY_STREAMING_DMA32:
		return d32_alloc_pages(rq, b, GFP_KERNEL | GFP_DMA32);
	case DMA32DEMO_STRATEGY_USER:
		return d32_pin_user(rq, b, rq->uaddr + (u64)idx * rq->size);
	case DMA32DEMO_STRATEGY_UNSAFE_RAW:
		/* Ordinary pages: on a large machine most are above 4 GiB */
		return d32_alloc_pages(rq, b, GFP_HIGHUSER);
	case DMA32DEMO_STRATEGY_TRUNCATION_ALIAS:
		return d32_alias_map(rq, b);
	}
	return -EINVAL;
}

static void d32_buf_free(struct d32_dev *dd, struct d32_buf *b)
{
	unsigned int i;

	if (b->win_hi || b->win_lo || b->win_claimed)
		d32_alias_unmap(dd, b);
	if (b->cpu) {
		d32_coherent_account(dd, b->handle, b->size, -1);
		dma_free_coherent(dd->dev, b->size, b->cpu, b->handle);
		b->cpu = NULL;
	}
	if (b->pages) {
		if (b->pinned)
			unpin_user_pages_dirty_lock(b->pages, b->npages,
						    b->dir == DMA_FROM_DEVICE);
		else
			for (i = 0; i < b->npages && b->pages[i]; i++)
				__free_page(b->pages[i]);
		kvfree(b->pages);
		b->pages = NULL;
	}
	kvfree(b->segs);
	b->segs = NULL;
}

/* Buffers: DMA mapping */

static unsigned int d32_max_seg(struct d32_dev *dd)
{
	size_t max = min_t(size_t, dma_get_max_seg_size(dd->dev),
			   dma_max_mapping_size(dd->dev));

	max = min_t(size_t, max, dd->max_xfer);
	return max_t(size_t, ALIGN_DOWN(max, PAGE_SIZE), PAGE_SIZE);
}

/*
 * Where the device's swiotlb pool lies, [*start, *end); both 0 without one.
 * With CONFIG_SWIOTLB_DYNAMIC (6.6 on) this is the default pool, the one
 * the boot log announces; pools added at run time lie elsewhere.
 */
static void d32_swiotlb_pool(struct device *dev, phys_addr_t *start,
			     phys_addr_t *end)
{
	*start = 0;
	*end = 0;
#ifdef CONFIG_SWIOTLB
	if (!dev->dma_io_tlb_mem)
		return;
#ifdef D32_SWIOTLB_DEFPOOL
	*start = dev->dma_io_tlb_mem->defpool.start;
	*end = dev->dma_io_tlb_mem->defpool.end;
#else
	*start = dev->dma_io_tlb_mem->start;
	*end = dev->dma_io_tlb_mem->end;
#endif
#endif
}

/*
 * Does the device use dma-direct, where a DMA address is a physical address
 * and swiotlb bounces what the mask cannot reach? True without an IOMMU,
 * and also behind one whose domain for the device is the identity
 * (iommu=pt, or an identity default domain): the device then has an IOMMU
 * group (device_iommu_mapped() is true) but nothing translates its DMA.
 * Only a translating (DMA) domain gives IOVAs, which never bounce here.
 * The domain cannot change while the driver is bound (the group's type can
 * only be changed with no driver bound), so probe asks once.
 */
static bool d32_dma_is_direct(struct device *dev)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);

	return !dom || dom->type == IOMMU_DOMAIN_IDENTITY;
}

/*
 * On dma-direct, a page the device cannot reach is bounced through
 * swiotlb; if the pool itself is beyond the mask, the DMA API would WARN.
 * Refuse such a mapping up front (-ENOMEM like any mapping failure).
 */
static bool d32_unbounceable(struct d32_dev *dd, struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	if (!dd->bounce_beyond_mask || !dd->dma_direct)
		return false;
	for_each_sgtable_sg(sgt, sg, i)
		if (!dma_capable(dd->dev, phys_to_dma(dd->dev, sg_phys(sg)),
				 sg->length, true))
			return true;
	return false;
}

static int d32_map_sgt(struct d32_req *rq, struct d32_buf *b)
{
	struct d32_dev *dd = rq->dd;
	struct dma32demo_result *res = rq->res;
	struct scatterlist *sg;
	unsigned int i;
	int ret;

	ret = sg_alloc_table_from_pages_segment(&b->sgt, b->pages, b->npages,
						b->pgoff, b->size,
						d32_max_seg(dd), GFP_KERNEL);
	if (ret)
		return ret;
	b->sgt_alloc = true;
	if (d32_unbounceable(dd, &b->sgt)) {
		dev_info_ratelimited(dd->dev,
				     "swiotlb pool is beyond the %u-bit DMA mask: cannot bounce\n",
				     dd->mask_bits);
		res->map_failures++;
		return -ENOMEM;
	}
	ret = dma_map_sgtable(dd->dev, &b->sgt, b->dir, DMA_ATTR_NO_WARN);
	if (ret) {
		res->map_failures++;
		res->map_failed_segments += b->sgt.orig_nents;
		return ret == -EINVAL ? -EINVAL : -ENOMEM;
	}
	b->mapped = true;

	for_each_sgtable_sg(&b->sgt, sg, i)
		if (d32_above_4g(sg_phys(sg), sg->length))
			res->mappings_above_4g++;

	b->segs = kvcalloc(b->sgt.nents, sizeof(*b->segs), GFP_KERNEL);
	if (!b->segs)
		return -ENOMEM;
	for_each_sgtable_dma_sg(&b->sgt, sg, i) {
		b->segs[i].addr = sg_dma_address(sg);
		b->segs[i].len = sg_dma_len(sg);
		if (d32_in_swiotlb(dd, sg_dma_address(sg))) {
			res->bounced++;
			res->bounced_bytes += sg_dma_len(sg);
		}
	}
	b->nsegs = b->sgt.nents;
	res->mappings += b->nsegs;
	return 0;
}

static int d32_buf_map(struct d32_req *rq, struct d32_buf *b)
{
	struct dma32demo_result *res = rq->res;
	unsigned int i;

	switch (rq->strategy) {
	case DMA32DEMO_STRATEGY_COHERENT:
		b->segs = kvcalloc(1, sizeof(*b->segs), GFP_KERNEL);
		if (!b->segs)
			return -ENOMEM;
		b->segs[0].addr = b->handle;
		b->segs[0].len = b->size;
		b->nsegs = 1;
		res->mappings++;
		if (d32_above_4g(page_to_phys(is_vmalloc_addr(b->cpu) ?
					      vmalloc_to_page(b->cpu) :
					      virt_to_page(b->cpu)), b->size))
			res->mappings_above_4g++;
		/* One in the pool is held there, not bounced: no copies */
		return 0;
	case DMA32DEMO_STRATEGY_TRUNCATION_ALIAS:
		/* The high window's address, beyond the device's reach */
		b->segs = kvcalloc(1, sizeof(*b->segs), GFP_KERNEL);
		if (!b->segs)
			return -ENOMEM;
		b->segs[0].addr = alias_window + b->win_off;
		b->segs[0].len = b->size;
		b->nsegs = 1;
		res->mappings++;
		res->mappings_above_4g += d32_above_4g(b->segs[0].addr,
						       b->size);
		return 0;
	case DMA32DEMO_STRATEGY_UNSAFE_RAW:
		/* The wrong thing, on purpose: no DMA API at all */
		b->segs = kvcalloc(b->npages, sizeof(*b->segs), GFP_KERNEL);
		if (!b->segs)
			return -ENOMEM;
		for (i = 0; i < b->npages; i++) {
			b->segs[i].addr = page_to_phys(b->pages[i]);
			b->segs[i].len = min_t(size_t, PAGE_SIZE,
					       b->size - (size_t)i * PAGE_SIZE);
			if (d32_above_4g(b->segs[i].addr, b->segs[i].len))
				res->mappings_above_4g++;
		}
		b->nsegs = b->npages;
		res->mappings += b->nsegs;
		return 0;
	default:
		return d32_map_sgt(rq, b);
	}
}

static void d32_buf_unmap(struct d32_dev *dd, struct d32_buf *b)
{
	if (b->mapped)
		dma_unmap_sgtable(dd->dev, &b->sgt, b->dir, 0);
	b->mapped = false;
	if (b->sgt_alloc)
		sg_free_table(&b->sgt);
	b->sgt_alloc = false;
}

/* Address runs: where the ring and the buffers were, for the caller */

static void d32_runs_flush(struct d32_runs *rs)
{
	if (!rs->cur_bytes)
		return;
	rs->cur.pages = DIV_ROUND_UP(offset_in_page(rs->cur.phys) +
				     rs->cur_bytes, PAGE_SIZE);
	if (rs->n < rs->max)
		rs->v[rs->n++] = rs->cur;
	else
		rs->dropped++;
	rs->cur_bytes = 0;
}

/* @len bytes at @phys that the device got as @dma: extend the run or start one */
static void d32_runs_add(struct d32_runs *rs, u32 buffer, phys_addr_t phys,
			 u64 dma, size_t len, u32 flags)
{
	struct dma32demo_addr_run *c = &rs->cur;

	if (rs->cur_bytes && c->buffer == buffer && c->flags == flags &&
	    c->phys + rs->cur_bytes == phys &&
	    ((flags & DMA32DEMO_ADDR_UNMAPPED) || c->dma + rs->cur_bytes == dma)) {
		rs->cur_bytes += len;
		return;
	}
	d32_runs_flush(rs);
	*c = (struct dma32demo_addr_run) {
		.phys = phys,
		.dma = dma,
		.buffer = buffer,
		.flags = flags,
	};
	rs->cur_bytes = len;
}

static struct page *d32_virt_page(void *va)
{
	return is_vmalloc_addr(va) ? vmalloc_to_page(va) : virt_to_page(va);
}

/*
 * The runs of one buffer (or the ring, a control buffer): its memory is
 * @cpu (coherent) or @pages from offset @pgoff, @size bytes, and the device
 * got it as @segs (none yet: unmapped). Page by page, so that physical
 * discontinuities show; pages that were never allocated end it. A DMA
 * address in the swiotlb pool is a bounce slot for streaming memory; for
 * coherent memory (@flags COHERENT) the memory itself lies in the pool.
 */
static void d32_runs_mem(struct d32_dev *dd, struct d32_runs *rs, u32 buffer,
			 void *cpu, struct page **pages, unsigned int pgoff,
			 size_t size, const struct d32_seg *segs,
			 unsigned int nsegs, u32 flags)
{
	unsigned int si = 0;
	size_t in = 0, off = 0;

	while (off < size) {
		size_t at = pgoff + off;
		size_t len = min_t(size_t, size - off,
				   PAGE_SIZE - offset_in_page(at));
		struct page *pg = cpu ? d32_virt_page(cpu + off) :
				  pages[at >> PAGE_SHIFT];
		phys_addr_t phys;

		if (!pg)
			return;
		phys = page_to_phys(pg) + offset_in_page(at);
		off += len;
		while (len) {
			size_t n = len;
			u64 dma = 0;
			u32 f = flags;

			if (si < nsegs) {
				n = min(n, segs[si].len - in);
				dma = segs[si].addr + in;
				if (d32_in_swiotlb(dd, segs[si].addr))
					f |= flags & DMA32DEMO_ADDR_COHERENT ?
					     DMA32DEMO_ADDR_IN_POOL :
					     DMA32DEMO_ADDR_BOUNCED;
				in += n;
				if (in == segs[si].len) {
					si++;
					in = 0;
				}
			} else {
				f |= DMA32DEMO_ADDR_UNMAPPED;
			}
			d32_runs_add(rs, buffer, phys, dma, n, f);
			phys += n;
			len -= n;
		}
	}
}

/* The coherent memory at @cpu, @dma: one buffer, the ring, a control buffer */
static void d32_runs_coherent(struct d32_dev *dd, struct d32_runs *rs,
			      u32 buffer, void *cpu, dma_addr_t dma,
			      size_t size, u32 flags)
{
	struct d32_seg seg = { .addr = dma, .len = size };

	d32_runs_mem(dd, rs, buffer, cpu, NULL, 0, size, &seg, 1,
		     flags | DMA32DEMO_ADDR_COHERENT);
}

/* The ring's and the control buffers' runs, then the first @nbufs buffers' */
static void d32_runs_collect(struct d32_req *rq, struct d32_runs *rs,
			     unsigned int nbufs)
{
	struct d32_dev *dd = rq->dd;
	unsigned int i;

	d32_runs_coherent(dd, rs, DMA32DEMO_ADDR_DEVICE_BUFFER, dd->ring,
			  dd->ring_dma, dd->ring_bytes, DMA32DEMO_ADDR_RING);
	for (i = 0; i < dd->nctrl; i++)
		d32_runs_coherent(dd, rs, DMA32DEMO_ADDR_DEVICE_BUFFER,
				  dd->ctrl[i].cpu, dd->ctrl[i].dma,
				  dd->ctrl_bytes, DMA32DEMO_ADDR_CTRL);
	for (i = 0; i < nbufs && !fatal_signal_pending(current); i++) {
		struct d32_buf *b = &rq->bufs[i];

		if (b->win_lo) {
			/*
			 * Reserved memory, not pages: the low alias, where the
			 * CPU looks, and the high address the device got
			 */
			d32_runs_add(rs, i, d32_alias_lo(dd) + b->win_off,
				     alias_window + b->win_off, b->size,
				     DMA32DEMO_ADDR_RESERVED);
		} else if (b->cpu) {
			/* The handle exists from allocation on */
			d32_runs_coherent(dd, rs, i, b->cpu, b->handle, b->size,
					  0);
		} else if (b->pages) {
			d32_runs_mem(dd, rs, i, NULL, b->pages, b->pgoff,
				     b->size, b->segs, b->nsegs, 0);
		}
		cond_resched();
	}
	d32_runs_flush(rs);
	rq->res->runs = rs->n;
	rq->res->runs_dropped = rs->dropped;
}

/* Descriptors */

static struct d32_buf *d32_src(struct d32_req *rq, unsigned int unit)
{
	return rq->op == DMA32DEMO_OP_FILL ? NULL : &rq->bufs[unit];
}

static struct d32_buf *d32_dst(struct d32_req *rq, unsigned int unit)
{
	switch (rq->op) {
	case DMA32DEMO_OP_FILL:
		return &rq->bufs[unit];
	case DMA32DEMO_OP_COPY:
		return &rq->bufs[rq->count + unit];
	}
	return NULL;
}

struct d32_cursor {
	const struct d32_buf *b;
	unsigned int i;
	size_t in;
};

static size_t d32_cur_left(const struct d32_cursor *c)
{
	return c->b->segs[c->i].len - c->in;
}

static u64 d32_cur_addr(const struct d32_cursor *c)
{
	return c->b->segs[c->i].addr + c->in;
}

static void d32_cur_advance(struct d32_cursor *c, size_t n)
{
	c->in += n;
	if (c->in == c->b->segs[c->i].len) {
		c->i++;
		c->in = 0;
	}
}

/*
 * Cut one unit (a buffer, or a source/destination pair) into descriptors:
 * each covers one contiguous DMA range on each side and at most max_xfer
 * bytes. With @out NULL, only count them.
 */
static unsigned int d32_walk_unit(struct d32_req *rq, unsigned int unit,
				  struct d32_job *out)
{
	struct d32_cursor s = { .b = d32_src(rq, unit) };
	struct d32_cursor d = { .b = d32_dst(rq, unit) };
	unsigned int nj = 0;
	size_t off = 0, n;

	while (off < rq->size) {
		n = min_t(size_t, rq->size - off, rq->dd->max_xfer);
		if (s.b)
			n = min(n, d32_cur_left(&s));
		if (d.b)
			n = min(n, d32_cur_left(&d));
		if (out) {
			struct d32_job *j = &out[nj];

			j->len = n;
			j->off = off;
			j->unit = unit;
			j->src = s.b ? d32_cur_addr(&s) : 0;
			j->dst = d.b ? d32_cur_addr(&d) : 0;
			j->seed = rq->seed + unit * 0x10000ull + nj;
			j->status = DMA32_DEMO_ST_PENDING;
		}
		if (s.b)
			d32_cur_advance(&s, n);
		if (d.b)
			d32_cur_advance(&d, n);
		off += n;
		nj++;
	}
	return nj;
}

static int d32_build_jobs(struct d32_req *rq)
{
	unsigned int u, n = 0;

	for (u = 0; u < rq->count; u++)
		n += d32_walk_unit(rq, u, NULL);
	rq->jobs = kvcalloc(n, sizeof(*rq->jobs), GFP_KERNEL);
	if (!rq->jobs)
		return -ENOMEM;
	for (u = 0; u < rq->count; u++)
		rq->njobs += d32_walk_unit(rq, u, rq->jobs + rq->njobs);
	return 0;
}

/*
 * Wait until @last completed; -ETIMEDOUT after timeout_ms without progress
 * (the clock restarts on every completed descriptor, so a long request
 * that moves is not a hang). -EINTR at once on any signal, the freezer's
 * included: the caller resets the device, which stops its DMA, before
 * anything is unmapped, and the ioctl returns -ERESTARTSYS. -ENODEV at
 * once when the device went away: d32_mark_gone() stopped it already.
 */
static int d32_wait(struct d32_dev *dd, struct dma32_demo_desc *last)
{
	unsigned long tmo = msecs_to_jiffies(max(READ_ONCE(timeout_ms), 1u));
	u32 head = d32_rd(dd, DMA32_DEMO_REG_RING_HEAD), now;
	long left;

	for (;;) {
		if (le32_to_cpu(READ_ONCE(last->status)) != DMA32_DEMO_ST_PENDING)
			break;
		if (READ_ONCE(dd->gone))
			return -ENODEV;
		if (d32_rd(dd, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_HALTED)
			return -EIO;
		left = wait_for_completion_interruptible_timeout(&dd->done, tmo);
		if (left < 0)
			return -EINTR;
		if (left)
			continue;
		now = d32_rd(dd, DMA32_DEMO_REG_RING_HEAD);
		if (now != head) {
			head = now;
			continue;
		}
		if (le32_to_cpu(READ_ONCE(last->status)) != DMA32_DEMO_ST_PENDING)
			break;
		return -ETIMEDOUT;
	}
	return 0;
}

static int d32_run_batch(struct d32_req *rq, struct d32_job *jobs,
			 unsigned int n)
{
	struct d32_dev *dd = rq->dd;
	struct dma32demo_result *res = rq->res;
	u32 mask = dd->ring_entries - 1, start = dd->tail, t = dd->tail;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		struct dma32_demo_desc *d = &dd->ring[t];

		d->op = cpu_to_le32(rq->hwop);
		d->len = cpu_to_le32(jobs[i].len);
		d->src = cpu_to_le64(jobs[i].src);
		d->dst = cpu_to_le64(jobs[i].dst);
		d->seed = cpu_to_le64(jobs[i].seed);
		d->result = 0;
		d->fault_addr = 0;
		d->reserved[0] = 0;
		d->reserved[1] = 0;
		d->status = cpu_to_le32(DMA32_DEMO_ST_PENDING);
		t = (t + 1) & mask;
	}
	res->descriptors += n;
	reinit_completion(&dd->done);
	/* writel() orders the descriptor stores before the doorbell */
	ret = d32_doorbell(dd, t);
	dd->tail = t;

	if (!ret)
		ret = d32_wait(dd, &dd->ring[(t - 1) & mask]);

	for (i = 0; i < n; i++) {
		struct dma32_demo_desc *d = &dd->ring[(start + i) & mask];
		struct d32_job *j = &jobs[i];

		j->status = le32_to_cpu(READ_ONCE(d->status));
		/* The device writes the status last */
		dma_rmb();
		j->result = le32_to_cpu(d->result);
		j->fault = le64_to_cpu(d->fault_addr);
		switch (j->status) {
		case DMA32_DEMO_ST_PENDING:
			break;
		case DMA32_DEMO_ST_OK:
			res->transfers++;
			res->bytes += j->len;
			break;
		default:
			if (!res->device_faults) {
				res->fault_addr = j->fault;
				res->dev_status = j->status;
			}
			res->device_faults++;
			break;
		}
	}
	return ret;
}

/* Did the device report a bus error for one of the first @n jobs? */
static bool d32_bus_error_seen(const struct d32_req *rq, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (rq->jobs[i].status == DMA32_DEMO_ST_BUS_ERROR)
			return true;
	return false;
}

static int d32_run_jobs(struct d32_req *rq)
{
	struct d32_dev *dd = rq->dd;
	struct dma32demo_result *res = rq->res;
	unsigned int done = 0, n;
	u64 t0 = ktime_get_ns();
	int ret = 0;

	if (rq->flags & DMA32DEMO_RUN_INJECT_BUS_ERROR)
		d32_wr(dd, DMA32_DEMO_REG_INJECT, DMA32_DEMO_INJECT_BUS_ERROR);
	if (rq->flags & DMA32DEMO_RUN_INJECT_STALL)
		d32_wr(dd, DMA32_DEMO_REG_INJECT, DMA32_DEMO_INJECT_STALL);

	while (done < rq->njobs && !ret) {
		n = min(rq->njobs - done, dd->ring_entries - 1);
		ret = d32_run_batch(rq, rq->jobs + done, n);
		done += n;
	}
	res->dma_ns = ktime_get_ns() - t0;
	res->latched_fault_addr = d32_rd64(dd, DMA32_DEMO_REG_FAULT_ADDR_LO,
					   DMA32_DEMO_REG_FAULT_ADDR_HI);
	res->fault_info = d32_rd(dd, DMA32_DEMO_REG_FAULT_INFO);

	if (ret == -EIO) {
		/* The ring itself failed (e.g. beyond ring-bits): halted */
		dev_err_ratelimited(dd->dev, "ring halted, fault info 0x%08x at %#llx: resetting\n",
				    res->fault_info, res->latched_fault_addr);
		if (!res->device_faults) {
			res->fault_addr = res->latched_fault_addr;
			res->dev_status = DMA32_DEMO_FAULT_STATUS(res->fault_info);
		}
		res->device_faults++;
	} else if (ret == -ETIMEDOUT) {
		dev_err_ratelimited(dd->dev, "no completion for %u ms (head %u, tail %u): resetting\n",
				    timeout_ms, d32_rd(dd, DMA32_DEMO_REG_RING_HEAD),
				    dd->tail);
		res->timeouts++;
	} else if (ret == -EINTR) {
		dev_dbg(dd->dev, "request interrupted with descriptors in flight (head %u, tail %u): resetting\n",
			d32_rd(dd, DMA32_DEMO_REG_RING_HEAD), dd->tail);
	} else if (ret == -ENODEV) {
		dev_info(dd->dev, "device going away: request ended with descriptors in flight\n");
	}
	/*
	 * Reset on failure, so that the device is quiet before anything is
	 * unmapped or freed (the reset cancels the device's pending work: once
	 * the read that flushes it returns, no descriptor runs any more), and
	 * to drop an injection nothing consumed: an
	 * address fault (unsafe-raw) is not a bus error and leaves an
	 * injected one armed for the next request. A device that is gone was
	 * stopped for good already: d32_hw_init() leaves it so.
	 */
	if ((ret || (rq->flags & DMA32DEMO_RUN_INJECT_STALL) ||
	     ((rq->flags & DMA32DEMO_RUN_INJECT_BUS_ERROR) &&
	      !d32_bus_error_seen(rq, done))) && d32_hw_init(dd))
		res->resets++;
	if (!ret && res->device_faults)
		ret = -EIO;
	return ret;
}

/* Check the data of every completed transfer; -EILSEQ on a mismatch */
static int d32_verify(struct d32_req *rq)
{
	struct dma32demo_result *res = rq->res;
	unsigned int i, unit = UINT_MAX;
	bool unit_ok = false;
	u64 first_bad = 0, bad;
	u32 crc;

	for (i = 0; i < rq->njobs; i++) {
		struct d32_job *j = &rq->jobs[i];

		/* Up to 1 GiB to check: a signal ends it (and restarts it) */
		if (signal_pending(current))
			return -EINTR;
		if (READ_ONCE(rq->dd->gone))
			return -ENODEV;
		if (j->unit != unit) {
			if (unit_ok)
				res->buffers_verified++;
			unit = j->unit;
			unit_ok = true;
		}
		if (j->status != DMA32_DEMO_ST_OK) {
			unit_ok = false;
			continue;
		}
		bad = 0;
		switch (rq->op) {
		case DMA32DEMO_OP_FILL:
			bad = d32_pattern_check(d32_dst(rq, unit), j->off,
						j->len, j->seed, &first_bad);
			break;
		case DMA32DEMO_OP_CHECKSUM:
			crc = d32_crc32c(d32_src(rq, unit), j->off, j->len);
			if (!res->verify_errors) {
				res->device_crc = j->result;
				res->cpu_crc = crc;
			}
			if (crc != j->result) {
				first_bad = j->off;
				bad = 1;
			}
			break;
		case DMA32DEMO_OP_COPY:
			bad = d32_compare(d32_src(rq, unit), d32_dst(rq, unit),
					  j->off, j->len, &first_bad);
			break;
		}
		if (bad) {
			if (!res->verify_errors)
				res->first_bad_offset = first_bad;
			res->verify_errors += bad;
			unit_ok = false;
		}
	}
	if (unit_ok)
		res->buffers_verified++;
	if (res->verify_errors) {
		dev_err_ratelimited(rq->dd->dev, "verification failed: %llu bad, first at offset %llu\n",
				    res->verify_errors, res->first_bad_offset);
		return -EILSEQ;
	}
	return 0;
}

static void d32_account(struct d32_dev *dd, struct dma32demo_result *res,
			int ret)
{
	struct d32_stats *st = &dd->st;

	atomic64_inc(&st->requests);
	if (ret)
		atomic64_inc(&st->errors);
	atomic64_add(res->transfers, &st->transfers);
	atomic64_add(res->bytes, &st->bytes);
	atomic64_add(res->mappings, &st->mappings);
	atomic64_add(res->bounced, &st->bounced);
	atomic64_add(res->bounced_bytes, &st->bounced_bytes);
	atomic64_add(res->device_faults, &st->device_faults);
	atomic64_add(res->alloc_failures, &st->alloc_failures);
	atomic64_add(res->timeouts, &st->timeouts);
	atomic64_add(res->resets, &st->resets);
	atomic64_add(res->map_failures, &st->map_failures);
}

static enum dma_data_direction d32_dir(u32 op, bool dst)
{
	if (op == DMA32DEMO_OP_FILL || (op == DMA32DEMO_OP_COPY && dst))
		return DMA_FROM_DEVICE;
	return DMA_TO_DEVICE;
}

/* One request, called with dd->lock held; @runs: NULL or to be filled */
static int d32_request(struct d32_dev *dd, const struct dma32demo_run *r,
		       struct dma32demo_result *res, struct d32_runs *runs)
{
	struct d32_req rq = {
		.dd = dd,
		.strategy = r->strategy,
		.op = r->op,
		.flags = r->flags,
		.size = r->size,
		.count = r->count,
		.uaddr = r->user_addr,
		.res = res,
	};
	u64 t0 = ktime_get_ns();
	unsigned int i, nalloc = 0, nmapped = 0;
	bool alias_locked = false;
	int ret, vret;

	if (r->strategy == DMA32DEMO_STRATEGY_TRUNCATION_ALIAS) {
		/* The windows are shared: wait for another device's request */
		ret = mutex_lock_killable(&d32_alias_lock);
		if (ret)
			goto free;
		alias_locked = true;
	}

	switch (r->op) {
	case DMA32DEMO_OP_FILL:
		rq.hwop = DMA32_DEMO_OP_FILL;
		break;
	case DMA32DEMO_OP_CHECKSUM:
		rq.hwop = DMA32_DEMO_OP_CHECKSUM;
		break;
	default:
		rq.hwop = DMA32_DEMO_OP_COPY;
		break;
	}
	rq.nbufs = rq.count * (r->op == DMA32DEMO_OP_COPY ? 2 : 1);
	rq.seed = get_random_u64();
	rq.bufs = kvcalloc(rq.nbufs, sizeof(*rq.bufs), GFP_KERNEL);
	if (runs)
		runs->v = kvcalloc(runs->max, sizeof(*runs->v), GFP_KERNEL);
	if (!rq.bufs || (runs && !runs->v)) {
		res->alloc_failures++;
		ret = -ENOMEM;
		goto free;
	}

	/* All buffers are held at once: a request can exhaust a zone */
	for (i = 0; i < rq.nbufs; i++) {
		rq.bufs[i].size = rq.size;
		rq.bufs[i].dir = d32_dir(r->op, i >= rq.count);
		ret = d32_buf_alloc(&rq, i);
		nalloc = i + 1;
		if (ret) {
			if (ret == -ENOMEM)
				res->alloc_failures++;
			goto unmap;
		}
		res->buffers++;
		/* Sources get a CPU pattern; user buffers keep their data */
		if (rq.bufs[i].dir == DMA_TO_DEVICE &&
		    rq.strategy != DMA32DEMO_STRATEGY_USER)
			d32_pattern_write(&rq.bufs[i], 0, rq.size, ~rq.seed + i);
		cond_resched();
		/* Up to 1 GiB to allocate and fill: a signal or remove ends it */
		if (signal_pending(current)) {
			ret = -EINTR;
			goto free;
		}
		if (READ_ONCE(dd->gone)) {
			ret = -ENODEV;
			goto free;
		}
	}

	for (i = 0; i < rq.nbufs; i++) {
		ret = d32_buf_map(&rq, &rq.bufs[i]);
		nmapped = i + 1;
		if (ret) {
			if (ret == -ENOMEM)
				res->alloc_failures++;
			goto unmap;
		}
	}

	ret = d32_build_jobs(&rq);
	if (ret) {
		res->alloc_failures++;
		goto unmap;
	}
	ret = d32_run_jobs(&rq);

unmap:
	/* Also after a failure: where the buffers that were there lay */
	if (runs && ret != -EINTR && ret != -ENODEV)
		d32_runs_collect(&rq, runs, nalloc);
	for (i = 0; i < nmapped; i++)
		d32_buf_unmap(dd, &rq.bufs[i]);
	if (rq.jobs && (rq.flags & DMA32DEMO_RUN_VERIFY) && ret != -EINTR &&
	    ret != -ENODEV) {
		vret = d32_verify(&rq);
		if (!ret)
			ret = vret;
	}
	if (rq.strategy == DMA32DEMO_STRATEGY_TRUNCATION_ALIAS && nalloc &&
	    rq.bufs[0].win_hi) {
		res->alias_canary_errors = d32_alias_canaries(&rq.bufs[0],
							      res->transfers);
		dev_info(dd->dev, "truncation-alias: %llu bytes for %#llx %s; %llu other bytes changed in the windows\n",
			 res->bytes, alias_window + rq.bufs[0].win_off,
			 res->transfers ? "landed at its low alias" :
			 "were refused by the device",
			 res->alias_canary_errors);
		if (res->alias_canary_errors && !ret)
			ret = -EILSEQ;
	}
free:
	/* All of the request's buffers are still held: the peak */
	res->coherent_swiotlb_bytes = atomic64_read(&dd->st.coherent_swiotlb);
	for (i = 0; i < nalloc; i++)
		d32_buf_free(dd, &rq.bufs[i]);
	kvfree(rq.jobs);
	kvfree(rq.bufs);
	if (alias_locked)
		mutex_unlock(&d32_alias_lock);
	res->ns = ktime_get_ns() - t0;
	res->error = -ret;
	d32_account(dd, res, ret);
	return ret;
}

/* Character device */

static void d32_release_dev(struct kref *kref)
{
	struct d32_dev *dd = container_of(kref, struct d32_dev, kref);

	put_device(&dd->pdev->dev);
	kfree(dd);
}

static void d32_put(struct d32_dev *dd)
{
	kref_put(&dd->kref, d32_release_dev);
}

static int d32_open(struct inode *inode, struct file *file)
{
	/* misc_open() set private_data and holds misc_mtx: no race with remove */
	struct d32_dev *dd = container_of(file->private_data, struct d32_dev,
					  misc);

	kref_get(&dd->kref);
	file->private_data = dd;
	return nonseekable_open(inode, file);
}

static int d32_release(struct inode *inode, struct file *file)
{
	d32_put(file->private_data);
	return 0;
}

static int d32_validate(struct d32_dev *dd, const struct dma32demo_run *r)
{
	u64 total;

	if (r->strategy < 1 || r->strategy > DMA32DEMO_STRATEGY_MAX)
		return -EINVAL;
	if (r->op < 1 || r->op > DMA32DEMO_OP_MAX)
		return -EINVAL;
	if (r->flags & ~DMA32DEMO_RUN_FLAGS_ALL)
		return -EINVAL;
	if (r->reserved0 || r->reserved1)
		return -EINVAL;
	if (!r->size || !r->count)
		return -EINVAL;
	if (check_mul_overflow(r->size, r->count, &total) ||
	    (r->op == DMA32DEMO_OP_COPY &&
	     check_mul_overflow(total, (u64)2, &total)))
		return -EOVERFLOW;
	if (r->size > dd->max_xfer || r->count > DMA32DEMO_MAX_COUNT ||
	    total > (u64)READ_ONCE(max_request_mb) * SZ_1M)
		return -E2BIG;
	if (r->strategy == DMA32DEMO_STRATEGY_USER) {
		if (!r->user_addr)
			return -EFAULT;
		if (!PAGE_ALIGNED(r->user_addr) || r->user_len != total)
			return -EINVAL;
		/*
		 * The destinations are mapped one by one for the device to
		 * write: two must not share a cache line (the DMA API does
		 * not support overlapping DMA_FROM_DEVICE mappings).
		 */
		if (r->op != DMA32DEMO_OP_CHECKSUM && r->count > 1 &&
		    !IS_ALIGNED(r->size, max_t(u64, L1_CACHE_BYTES,
					       dma_get_cache_alignment())))
			return -EINVAL;
		if (!access_ok(u64_to_user_ptr(r->user_addr), total))
			return -EFAULT;
	} else if (r->user_addr || r->user_len) {
		return -EINVAL;
	}
	/* Address runs: none, or 1 .. DMA32DEMO_MAX_RUNS in user memory */
	if (r->runs_max > DMA32DEMO_MAX_RUNS)
		return -E2BIG;
	if (!r->runs_addr != !r->runs_max)
		return r->runs_max ? -EFAULT : -EINVAL;
	if (r->runs_max &&
	    !access_ok(u64_to_user_ptr(r->runs_addr),
		       array_size(r->runs_max,
				  sizeof(struct dma32demo_addr_run))))
		return -EFAULT;
	if (r->strategy == DMA32DEMO_STRATEGY_UNSAFE_RAW && !allow_unsafe)
		return -EPERM;
	if (r->strategy == DMA32DEMO_STRATEGY_UNSAFE_RAW &&
	    (dd->features & DMA32_DEMO_FEAT_TRUNCATE)) {
		dev_err_ratelimited(dd->dev, "unsafe-raw refused: this device truncates addresses beyond %u bits, so a high page would be written at its low alias, in memory the driver does not own\n",
				    dd->dma_bits);
		return -EPERM;
	}
	if (r->strategy == DMA32DEMO_STRATEGY_TRUNCATION_ALIAS) {
		if (r->op != DMA32DEMO_OP_FILL || r->count != 1 ||
		    r->size > DMA32DEMO_ALIAS_MAX)
			return -EINVAL;
		if (!allow_unsafe) {
			dev_err_ratelimited(dd->dev, "truncation-alias refused: it needs allow_unsafe=1\n");
			return -EPERM;
		}
		if (!alias_window) {
			dev_err_ratelimited(dd->dev, "truncation-alias refused: no alias_window\n");
			return -EPERM;
		}
		if (!dd->dma_direct) {
			dev_err_ratelimited(dd->dev, "truncation-alias refused: behind a translating IOMMU the window's address would be an IOVA, not the memory it names\n");
			return -EPERM;
		}
	}
	return 0;
}

static long d32_ioc_run(struct d32_dev *dd, struct dma32demo_run __user *arg)
{
	struct dma32demo_run r;
	struct d32_runs runs = { };
	int ret;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	memset(&r.result, 0, sizeof(r.result));
	ret = d32_validate(dd, &r);
	if (ret)
		return ret;
	runs.max = r.runs_max;

	/* A signal while queued: restarted, or EINTR (see the top) */
	if (mutex_lock_interruptible(&dd->lock))
		return -ERESTARTSYS;
	if (READ_ONCE(dd->gone))
		ret = -ENODEV;
	else
		ret = d32_request(dd, &r, &r.result, runs.max ? &runs : NULL);
	mutex_unlock(&dd->lock);
	if (ret == -ENODEV)
		goto out;

	/* The runs are copied without dd->lock: user memory may fault */
	if (copy_to_user(&arg->result, &r.result, sizeof(r.result)) ||
	    (runs.n && copy_to_user(u64_to_user_ptr(r.runs_addr), runs.v,
				    array_size(runs.n, sizeof(*runs.v)))))
		ret = -EFAULT;
	/*
	 * Ended by a signal (the result says EINTR): the kernel restarts the
	 * request where the signal allows it, else the caller gets EINTR.
	 */
	else if (ret == -EINTR)
		ret = -ERESTARTSYS;
out:
	kvfree(runs.v);
	return ret;
}

static long d32_ioc_info(struct d32_dev *dd, struct dma32demo_info __user *arg)
{
	phys_addr_t start, end;
	struct dma32demo_info info = {
		.id = DMA32_DEMO_ID_MAGIC,
		.version = dd->version,
		.dma_bits = dd->dma_bits,
		.ring_bits = dd->ring_bits,
		.max_xfer = dd->max_xfer,
		.max_ring = dd->max_ring,
		.features = dd->features,
		.ring_entries = dd->ring_entries,
		.dma_mask_bits = dd->mask_bits,
		.coherent_mask_bits = dd->coherent_bits,
		.irq_mode = dd->irq_mode,
		.timeout_ms = READ_ONCE(timeout_ms),
		.ring_dma = dd->ring_dma,
		.ctrl_buffers = dd->nctrl,
		.ctrl_buffer_bytes = dd->ctrl_bytes,
		.alias_window = alias_window,
		.abi_version = DMA32DEMO_ABI_VERSION,
	};

	if (allow_unsafe)
		info.flags |= DMA32DEMO_INFO_ALLOW_UNSAFE;
	if (dd->mask_forced)
		info.flags |= DMA32DEMO_INFO_MASK_FORCED;
	if (dd->coherent_forced)
		info.flags |= DMA32DEMO_INFO_COHERENT_MASK_FORCED;
	if (dd->features & DMA32_DEMO_FEAT_TRUNCATE)
		info.flags |= DMA32DEMO_INFO_TRUNCATES;
	if (d32_swiotlb_active(dd->dev)) {
		info.flags |= DMA32DEMO_INFO_SWIOTLB_ACTIVE;
		d32_swiotlb_pool(dd->dev, &start, &end);
		info.swiotlb_start = start;
		info.swiotlb_end = end;
	}
	strscpy(info.pci_name, pci_name(dd->pdev), sizeof(info.pci_name));

	if (copy_to_user(arg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static long d32_ioc_stats(struct d32_dev *dd,
			  struct dma32demo_stats __user *arg)
{
	struct d32_stats *st = &dd->st;
	struct dma32demo_stats s = {
		.requests = atomic64_read(&st->requests),
		.errors = atomic64_read(&st->errors),
		.transfers = atomic64_read(&st->transfers),
		.bytes = atomic64_read(&st->bytes),
		.mappings = atomic64_read(&st->mappings),
		.bounced_mappings = atomic64_read(&st->bounced),
		.bounced_bytes = atomic64_read(&st->bounced_bytes),
		.device_faults = atomic64_read(&st->device_faults),
		.alloc_failures = atomic64_read(&st->alloc_failures),
		.timeouts = atomic64_read(&st->timeouts),
		.resets = atomic64_read(&st->resets),
		.coherent_bytes_held = atomic64_read(&st->coherent_held),
		.coherent_swiotlb_bytes = atomic64_read(&st->coherent_swiotlb),
		.map_failures = atomic64_read(&st->map_failures),
	};

	if (copy_to_user(arg, &s, sizeof(s)))
		return -EFAULT;
	return 0;
}

static long d32_reset_stats(struct d32_dev *dd)
{
	struct d32_stats *st = &dd->st;

	atomic64_set(&st->requests, 0);
	atomic64_set(&st->errors, 0);
	atomic64_set(&st->transfers, 0);
	atomic64_set(&st->bytes, 0);
	atomic64_set(&st->mappings, 0);
	atomic64_set(&st->bounced, 0);
	atomic64_set(&st->bounced_bytes, 0);
	atomic64_set(&st->device_faults, 0);
	atomic64_set(&st->alloc_failures, 0);
	atomic64_set(&st->timeouts, 0);
	atomic64_set(&st->resets, 0);
	atomic64_set(&st->map_failures, 0);
	return 0;
}

static long d32_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct d32_dev *dd = file->private_data;
	void __user *argp = (void __user *)arg;
	long ret;

	switch (cmd) {
	case DMA32DEMO_IOC_RUN:
		return d32_ioc_run(dd, argp);
	case DMA32DEMO_IOC_INFO:
	case DMA32DEMO_IOC_STATS:
	case DMA32DEMO_IOC_RESET_STATS:
		break;
	default:
		return -ENOTTY;
	}

	/*
	 * No dd->lock: these touch no register and no ring, only what probe
	 * set up once and the atomic counters, so they answer at once even
	 * while a long request holds the lock. dd itself lives as long as
	 * the open file; after remove they report ENODEV like RUN.
	 */
	if (READ_ONCE(dd->gone))
		ret = -ENODEV;
	else if (cmd == DMA32DEMO_IOC_INFO)
		ret = d32_ioc_info(dd, argp);
	else if (cmd == DMA32DEMO_IOC_STATS)
		ret = d32_ioc_stats(dd, argp);
	else
		ret = d32_reset_stats(dd);
	return ret;
}

static const struct file_operations d32_fops = {
	.owner = THIS_MODULE,
	.open = d32_open,
	.release = d32_release,
	.unlocked_ioctl = d32_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	/* No .llseek: d32_open()'s nonseekable_open() makes lseek ESPIPE. */
};

/* sysfs: /sys/bus/pci/devices/<BDF>/stats/ */

#define D32_STAT_SHOW(_name, _field)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct d32_dev *dd = dev_get_drvdata(dev);			\
									\
	return sysfs_emit(buf, "%lld\n", atomic64_read(&dd->st._field)); \
}

D32_STAT_SHOW(requests, requests)
D32_STAT_SHOW(errors, errors)
D32_STAT_SHOW(transfers, transfers)
D32_STAT_SHOW(bytes, bytes)
D32_STAT_SHOW(mappings, mappings)
D32_STAT_SHOW(bounced_mappings, bounced)
D32_STAT_SHOW(bounced_bytes, bounced_bytes)
D32_STAT_SHOW(device_faults, device_faults)
D32_STAT_SHOW(alloc_failures, alloc_failures)
D32_STAT_SHOW(timeouts, timeouts)
D32_STAT_SHOW(resets, resets)
D32_STAT_SHOW(coherent_bytes_held, coherent_held)
D32_STAT_SHOW(coherent_swiotlb_bytes, coherent_swiotlb)
D32_STAT_SHOW(map_failures, map_failures)

static DEVICE_ATTR_RO(requests);
static DEVICE_ATTR_RO(errors);
static DEVICE_ATTR_RO(transfers);
static DEVICE_ATTR_RO(bytes);
static DEVICE_ATTR_RO(mappings);
static DEVICE_ATTR_RO(bounced_mappings);
static DEVICE_ATTR_RO(bounced_bytes);
static DEVICE_ATTR_RO(device_faults);
static DEVICE_ATTR_RO(alloc_failures);
static DEVICE_ATTR_RO(timeouts);
static DEVICE_ATTR_RO(resets);
static DEVICE_ATTR_RO(coherent_bytes_held);
static DEVICE_ATTR_RO(coherent_swiotlb_bytes);
static DEVICE_ATTR_RO(map_failures);

static struct attribute *d32_stats_attrs[] = {
	&dev_attr_requests.attr,
	&dev_attr_errors.attr,
	&dev_attr_transfers.attr,
	&dev_attr_bytes.attr,
	&dev_attr_mappings.attr,
	&dev_attr_bounced_mappings.attr,
	&dev_attr_bounced_bytes.attr,
	&dev_attr_device_faults.attr,
	&dev_attr_alloc_failures.attr,
	&dev_attr_timeouts.attr,
	&dev_attr_resets.attr,
	&dev_attr_coherent_bytes_held.attr,
	&dev_attr_coherent_swiotlb_bytes.attr,
	&dev_attr_map_failures.attr,
	NULL
};

static const struct attribute_group d32_stats_group = {
	.name = "stats",
	.attrs = d32_stats_attrs,
};

static const struct attribute_group *d32_groups[] = {
	&d32_stats_group,
	NULL
};

/* PCI */

static void d32_put_action(void *data)
{
	d32_put(data);
}

static void d32_free_ring(void *data)
{
	struct d32_dev *dd = data;

	d32_coherent_account(dd, dd->ring_dma, dd->ring_bytes, -1);
	dma_free_coherent(dd->dev, dd->ring_bytes, dd->ring, dd->ring_dma);
}

static void d32_free_ctrl(void *data)
{
	struct d32_dev *dd = data;
	unsigned int i;

	for (i = 0; i < dd->nctrl; i++) {
		d32_coherent_account(dd, dd->ctrl[i].dma, dd->ctrl_bytes, -1);
		dma_free_coherent(dd->dev, dd->ctrl_bytes, dd->ctrl[i].cpu,
				  dd->ctrl[i].dma);
	}
	kfree(dd->ctrl);
	dd->ctrl = NULL;
	dd->nctrl = 0;
}

static void d32_free_id(void *data)
{
	struct d32_dev *dd = data;

	ida_free(&d32_ida, dd->id);
}

static int d32_read_caps(struct d32_dev *dd)
{
	u32 id = d32_rd(dd, DMA32_DEMO_REG_ID);

	if (id != DMA32_DEMO_ID_MAGIC) {
		dev_err(dd->dev, "bad ID register %#010x (expected %#010x): not a dma32-demo device\n",
			id, DMA32_DEMO_ID_MAGIC);
		return -ENODEV;
	}
	dd->version = d32_rd(dd, DMA32_DEMO_REG_VERSION);
	if (dd->version >> 16 != DMA32_DEMO_VERSION_MAJOR) {
		dev_err(dd->dev, "unsupported device version %u.%u (driver knows %u.x)\n",
			dd->version >> 16, dd->version & 0xffff,
			DMA32_DEMO_VERSION_MAJOR);
		return -ENODEV;
	}
	dd->dma_bits = d32_rd(dd, DMA32_DEMO_REG_DMA_BITS);
	dd->ring_bits = d32_rd(dd, DMA32_DEMO_REG_RING_BITS);
	dd->max_xfer = d32_rd(dd, DMA32_DEMO_REG_MAX_XFER);
	dd->max_ring = d32_rd(dd, DMA32_DEMO_REG_MAX_RING);
	dd->features = d32_rd(dd, DMA32_DEMO_REG_FEATURES);
	if (dd->dma_bits < 24 || dd->dma_bits > 64 || dd->ring_bits < 24 ||
	    dd->ring_bits > 64 || !dd->max_xfer || dd->max_ring < 2) {
		dev_err(dd->dev, "bad capabilities: dma-bits %u ring-bits %u max-xfer %u max-ring %u\n",
			dd->dma_bits, dd->ring_bits, dd->max_xfer, dd->max_ring);
		return -ENODEV;
	}
	return 0;
}

static int d32_set_masks(struct d32_dev *dd)
{
	phys_addr_t start, end;
	int ret;

	dd->mask_bits = dd->dma_bits;
	/*
	 * Coherent memory holds the ring (ring-bits) and, for the coherent
	 * strategy, data buffers (dma-bits): the mask must satisfy both.
	 */
	dd->coherent_bits = min(dd->ring_bits, dd->dma_bits);
	if (force_mask_bits && force_mask_bits != dd->dma_bits) {
		dd->mask_bits = clamp(force_mask_bits, 24u, 64u);
		dd->mask_forced = true;
		if (dd->mask_bits > dd->dma_bits)
			dev_warn(dd->dev, "UNSAFE: force_mask_bits=%u overrides the device's %u-bit DMA limit: the DMA API will hand it addresses it cannot reach\n",
				 dd->mask_bits, dd->dma_bits);
		else
			dev_notice(dd->dev, "force_mask_bits=%u narrows the device's %u-bit DMA mask\n",
				   dd->mask_bits, dd->dma_bits);
	}
	if (force_coherent_bits && force_coherent_bits != dd->coherent_bits) {
		u32 safe = dd->coherent_bits;

		dd->coherent_bits = clamp(force_coherent_bits, 24u, 64u);
		dd->coherent_forced = true;
		if (dd->coherent_bits > safe)
			dev_warn(dd->dev, "UNSAFE: force_coherent_bits=%u overrides the device's %u-bit limit for coherent memory\n",
				 dd->coherent_bits, safe);
		else
			dev_notice(dd->dev, "force_coherent_bits=%u narrows the %u-bit coherent mask\n",
				   dd->coherent_bits, safe);
	}
	/*
	 * A truncating device given an address beyond its reach does not
	 * fault: it writes the low alias, memory the driver does not own.
	 * Widening its masks would hand it such addresses: refused.
	 */
	if ((dd->features & DMA32_DEMO_FEAT_TRUNCATE) &&
	    ((dd->mask_forced && dd->mask_bits > dd->dma_bits) ||
	     (dd->coherent_forced &&
	      dd->coherent_bits > min(dd->ring_bits, dd->dma_bits)))) {
		dev_err(dd->dev, "force_mask_bits/force_coherent_bits wider than the device's reach refused: it truncates addresses beyond %u bits\n",
			dd->dma_bits);
		return -EPERM;
	}
	ret = dma_set_mask(dd->dev, DMA_BIT_MASK(dd->mask_bits));
	if (ret) {
		dev_err(dd->dev, "no usable %u-bit streaming DMA mask\n",
			dd->mask_bits);
		return ret;
	}
	ret = dma_set_coherent_mask(dd->dev, DMA_BIT_MASK(dd->coherent_bits));
	if (ret) {
		dev_err(dd->dev, "no usable %u-bit coherent DMA mask\n",
			dd->coherent_bits);
		return ret;
	}
	dd->dma_direct = d32_dma_is_direct(dd->dev);
	if (dd->dma_direct && device_iommu_mapped(dd->dev))
		dev_info(dd->dev, "IOMMU identity domain (passthrough): DMA addresses are physical, swiotlb bounces what the mask cannot reach\n");
	d32_swiotlb_pool(dd->dev, &start, &end);
	if (dd->dma_direct && d32_swiotlb_active(dd->dev) &&
	    end - 1 > DMA_BIT_MASK(dd->mask_bits)) {
		dd->bounce_beyond_mask = true;
		dev_warn(dd->dev, "swiotlb pool [%pa-%pa] is beyond the %u-bit DMA mask: buffers it cannot reach will fail to map\n",
			 &start, &end, dd->mask_bits);
	}
	return 0;
}

static int d32_setup_ring(struct d32_dev *dd)
{
	u32 n = ring_entries;

	BUILD_BUG_ON(sizeof(struct dma32_demo_desc) != DMA32_DEMO_DESC_SIZE);
	BUILD_BUG_ON(offsetof(struct dma32_demo_desc, status) !=
		     DMA32_DEMO_DESC_STATUS_OFF);
	if (n < 2 || n > 4096 || !is_power_of_2(n)) {
		dev_warn(dd->dev, "ring_entries=%u invalid, using 256\n", n);
		n = 256;
	}
	n = min_t(u32, n, rounddown_pow_of_two(dd->max_ring));
	dd->ring_entries = n;
	dd->ring_bytes = (size_t)n * DMA32_DEMO_DESC_SIZE;
	dd->ring = dma_alloc_coherent(dd->dev, dd->ring_bytes, &dd->ring_dma,
				      GFP_KERNEL);
	if (!dd->ring)
		return -ENOMEM;
	d32_coherent_account(dd, dd->ring_dma, dd->ring_bytes, 1);
	return devm_add_action_or_reset(dd->dev, d32_free_ring, dd);
}

/*
 * Control buffers: coherent memory held for as long as the driver is bound,
 * as a NIC holds its descriptor rings or an HBA its command blocks. Several
 * such devices are what the ZONE_DMA32 patch meant by control structures
 * that "tie up precious memory, especially with many devices". The device
 * never touches them; a driver that cannot get them does not bind.
 */
static int d32_setup_ctrl(struct d32_dev *dd)
{
	unsigned int n = ctrl_buffers, kb = ctrl_buffer_kb;
	unsigned int i;
	int ret;

	if (n > 64) {
		dev_warn(dd->dev, "ctrl_buffers=%u invalid (0..64), using 0\n", n);
		n = 0;
	}
	if (kb < 4 || kb > 4096) {
		dev_warn(dd->dev, "ctrl_buffer_kb=%u invalid (4..4096), using 64\n",
			 kb);
		kb = 64;
	}
	if (!n)
		return 0;
	dd->ctrl = kcalloc(n, sizeof(*dd->ctrl), GFP_KERNEL);
	if (!dd->ctrl)
		return -ENOMEM;
	dd->ctrl_bytes = (size_t)kb * SZ_1K;
	ret = devm_add_action_or_reset(dd->dev, d32_free_ctrl, dd);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		dd->ctrl[i].cpu = dma_alloc_coherent(dd->dev, dd->ctrl_bytes,
						     &dd->ctrl[i].dma,
						     GFP_KERNEL | __GFP_NOWARN);
		if (!dd->ctrl[i].cpu) {
			dev_err(dd->dev, "control buffer %u of %u (%u KiB) not allocated: the device cannot work without it\n",
				i + 1, n, kb);
			return -ENOMEM;
		}
		dd->nctrl = i + 1;
		d32_coherent_account(dd, dd->ctrl[i].dma, dd->ctrl_bytes, 1);
	}
	return 0;
}

static int d32_setup_irq(struct d32_dev *dd)
{
	struct pci_dev *pdev = dd->pdev;
	unsigned int types = PCI_IRQ_INTX;
	int ret;

	if (use_msi)
		types |= PCI_IRQ_MSI;
	/* Managed: pcim_enable_device() makes these freed on unbind */
	ret = pci_alloc_irq_vectors(pdev, 1, 1, types);
	if (ret < 0) {
		dev_err(dd->dev, "no interrupt (MSI or INTx): %d\n", ret);
		return ret;
	}
	dd->irq = pci_irq_vector(pdev, 0);
	dd->irq_mode = pdev->msi_enabled ? DMA32DEMO_IRQ_MSI :
					   DMA32DEMO_IRQ_INTX;
	return devm_request_irq(dd->dev, dd->irq, d32_irq, IRQF_SHARED,
				dd->name, dd);
}

static int d32_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct d32_dev *dd;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;

	dd = kzalloc(sizeof(*dd), GFP_KERNEL);
	if (!dd)
		return -ENOMEM;
	kref_init(&dd->kref);
	dd->pdev = pdev;
	dd->dev = dev;
	get_device(dev);
	mutex_init(&dd->lock);
	spin_lock_init(&dd->hw_lock);
	init_completion(&dd->done);
	/* The probe's reference: dropped after the IRQ is freed */
	ret = devm_add_action_or_reset(dev, d32_put_action, dd);
	if (ret)
		return ret;

	dd->id = ida_alloc(&d32_ida, GFP_KERNEL);
	if (dd->id < 0)
		return dd->id;
	ret = devm_add_action_or_reset(dev, d32_free_id, dd);
	if (ret)
		return ret;
	snprintf(dd->name, sizeof(dd->name), DRV_NAME "%d", dd->id);

	if (pci_resource_len(pdev, 0) < DMA32_DEMO_BAR0_SIZE ||
	    !(pci_resource_flags(pdev, 0) & IORESOURCE_MEM)) {
		dev_err(dev, "BAR0 missing or smaller than %#x bytes\n",
			DMA32_DEMO_BAR0_SIZE);
		return -ENODEV;
	}
	ret = pcim_iomap_regions(pdev, BIT(0), DRV_NAME);
	if (ret) {
		dev_err(dev, "cannot map BAR0: %d\n", ret);
		return ret;
	}
	dd->regs = pcim_iomap_table(pdev)[0];

	ret = d32_read_caps(dd);
	if (ret)
		return ret;
	/* Quiet until the ring is programmed */
	d32_hw_stop(dd);

	ret = d32_set_masks(dd);
	if (ret)
		return ret;
	pci_set_master(pdev);

	ret = d32_setup_ring(dd);
	if (ret)
		return ret;
	ret = d32_setup_ctrl(dd);
	if (ret)
		return ret;
	ret = d32_setup_irq(dd);
	if (ret)
		return ret;

	d32_hw_init(dd);
	pci_set_drvdata(pdev, dd);

	dd->misc.minor = MISC_DYNAMIC_MINOR;
	dd->misc.name = dd->name;
	dd->misc.fops = &d32_fops;
	dd->misc.parent = dev;
	dd->misc.mode = 0600;
	ret = misc_register(&dd->misc);
	if (ret) {
		dev_err(dev, "cannot register /dev/%s: %d\n", dd->name, ret);
		d32_hw_stop(dd);
		return ret;
	}

	dev_info(dev, "/dev/%s: dma32-demo %u.%u, dma-bits %u, ring-bits %u, max-xfer %u%s; masks %u/%u bits; ring %u x %u bytes at %pad; %u control buffers of %zu bytes; coherent in swiotlb %lld bytes; %s irq %d\n",
		 dd->name, dd->version >> 16, dd->version & 0xffff,
		 dd->dma_bits, dd->ring_bits, dd->max_xfer,
		 dd->features & DMA32_DEMO_FEAT_TRUNCATE ? " (truncates)" : "",
		 dd->mask_bits, dd->coherent_bits, dd->ring_entries,
		 DMA32_DEMO_DESC_SIZE, &dd->ring_dma, dd->nctrl, dd->ctrl_bytes,
		 atomic64_read(&dd->st.coherent_swiotlb),
		 dd->irq_mode == DMA32DEMO_IRQ_MSI ? "MSI" : "INTx", dd->irq);
	if (allow_unsafe)
		dev_warn(dev, "allow_unsafe=1: unsafe-raw requests hand CPU physical addresses to the device, bypassing the DMA API\n");
	return 0;
}

static void d32_remove(struct pci_dev *pdev)
{
	struct d32_dev *dd = pci_get_drvdata(pdev);

	/* No new opens; open files keep dd alive but see it gone */
	misc_deregister(&dd->misc);
	/* Stop the engine and end a request's wait, without waiting for it */
	d32_mark_gone(dd);
	/* Then wait for that request to let go of the ring and its buffers */
	mutex_lock(&dd->lock);
	mutex_unlock(&dd->lock);
	/* devres frees the IRQ, the ring, the id, BAR0, and drops dd */
}

/*
 * Reboot, power-off, kexec: a device left running would go on doing DMA
 * into memory that the next kernel (or firmware) owns. Stop the engine and
 * then bus mastering, without dd->lock: a request may hold it for a long
 * time. Its wait ends at once with ENODEV, and nothing it does afterwards
 * starts the engine again: d32_hw_init() and d32_doorbell() look at gone
 * under hw_lock, which d32_mark_gone() sets it under.
 */
static void d32_shutdown(struct pci_dev *pdev)
{
	struct d32_dev *dd = pci_get_drvdata(pdev);

	if (!dd)
		return;
	d32_mark_gone(dd);
	pci_clear_master(pdev);
}

/*
 * System sleep (suspend, and hibernation's freeze, poweroff and restore).
 * The freezer has already ended any request in flight (see the top), so
 * dd->lock is free and the ring empty; the lock keeps out whatever else
 * could come. The engine is reset: it moves nothing while the system
 * sleeps. Power may be lost, and with it the registers, the ring base
 * among them: resume programs the ring again (kept in memory, as are the
 * control buffers) and enables the engine, as at probe. PCI config space
 * and MSI are the PCI core's to save and restore.
 */
static int d32_suspend(struct device *dev)
{
	struct d32_dev *dd = dev_get_drvdata(dev);

	mutex_lock(&dd->lock);
	d32_hw_stop(dd);
	mutex_unlock(&dd->lock);
	return 0;
}

static int d32_resume(struct device *dev)
{
	struct d32_dev *dd = dev_get_drvdata(dev);

	mutex_lock(&dd->lock);
	d32_hw_init(dd);
	mutex_unlock(&dd->lock);
	return 0;
}

static DEFINE_SIMPLE_DEV_PM_OPS(d32_pm_ops, d32_suspend, d32_resume);

static const struct pci_device_id d32_ids[] = {
	{ PCI_DEVICE(DMA32_DEMO_VENDOR_ID, DMA32_DEMO_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, d32_ids);

static struct pci_driver d32_driver = {
	.name = DRV_NAME,
	.id_table = d32_ids,
	.probe = d32_probe,
	.remove = d32_remove,
	.shutdown = d32_shutdown,
	.driver.pm = pm_sleep_ptr(&d32_pm_ops),
	.dev_groups = d32_groups,
};
module_pci_driver(d32_driver);

MODULE_DESCRIPTION("dma32-demo DMA engine: buffer strategies, bounces and faults");
MODULE_AUTHOR("The dma32-demo authors");
MODULE_LICENSE("GPL");
