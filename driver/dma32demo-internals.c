// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo: every look at kernel internals, in this one file.
 *
 * On purpose: a driver normally never asks where its memory came from.
 * This module exists to show it, so it reads what the DMA API hides (what
 * the DMA API does answer, the rest of the module asks it: dma_need_sync()
 * for a bounced streaming mapping, dma_get_sgtable() for the pages of a
 * coherent buffer): <linux/dma-direct.h>'s dma_to_phys() and phys_to_dma()
 * and the device's swiotlb pool (dev->dma_io_tlb_mem, d32_is_swiotlb()) to
 * tell a coherent buffer held in the pool, where the pool lies, and the
 * IOMMU domain type to tell translated DMA from an identity mapping; the
 * driver's README lists each with its reason. None of it is needed to
 * move data; all of it is read-only. It ties the module to the kernel
 * version it is built for, which is how out-of-tree test drivers live.
 * The truncation-alias windows are checked against the firmware's memory
 * map (x86's e820), which no driver normally reads either.
 *
 * Why one file: the rest of the module uses only the interfaces drivers
 * use, so what a new kernel version breaks is found here, and this is the
 * only file that includes <linux/dma-direct.h> or touches
 * dev->dma_io_tlb_mem. It also holds the address runs (what the caller
 * gets to see of physical and DMA addresses), which are built from it.
 *
 * It builds against both guest kernels, Debian's 6.1 and 6.12. Where their
 * interfaces differ (Kbuild tests the kernel's headers: the D32_* macros):
 * d32_swiotlb_pool() (6.6 moved the default pool into io_tlb_mem.defpool),
 * d32_swiotlb_active() (6.12 stopped exporting is_swiotlb_active()),
 * d32_is_swiotlb() (6.12 replaced is_swiotlb_buffer() with
 * swiotlb_find_pool()). Elsewhere: PCI_IRQ_INTX (6.8's name for
 * PCI_IRQ_LEGACY, dma32demo-core.c) and the unaligned-access header (6.12
 * moved it to <linux/unaligned.h>, dma32demo-verify.c).
 */

#include <linux/dma-direct.h>
#include <linux/iommu.h>
#include <linux/ioport.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/swiotlb.h>
#include <linux/vmalloc.h>
#include <asm/e820/api.h>

#include "dma32demo-priv.h"

/* Where memory lies: zones, the swiotlb pool, coherent footprints */

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

void d32_account_page(struct d32_req *rq, struct page *pg)
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
bool d32_swiotlb_active(struct device *dev)
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
	return dd->dma_untranslated &&
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
void d32_coherent_account(struct d32_dev *dd, dma_addr_t dma,
			  size_t size, int sign)
{
	s64 bytes = sign * (s64)d32_coherent_footprint(dd, dma, size);

	atomic64_add(bytes, D32_STAT(dd, coherent_bytes_held));
	if (d32_in_swiotlb(dd, dma))
		atomic64_add(bytes, D32_STAT(dd, coherent_swiotlb_bytes));
}

/*
 * A window must be RAM the kernel does not use: RAM in the firmware's
 * memory map (e820, before memmap= changed it) that is not System RAM,
 * i.e. reserved with memmap=64K$ADDR. Anything else is memory the kernel
 * owns or MMIO (the PCI hole), where 64 KiB of canaries must never go.
 * Then it is claimed for the request, so that no other device (or driver)
 * writes it at the same time.
 */
int d32_alias_check(struct d32_dev *dd, phys_addr_t phys)
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

/*
 * Where the device's swiotlb pool lies, [*start, *end); both 0 without one.
 * With CONFIG_SWIOTLB_DYNAMIC (6.6 on) this is the default pool, the one
 * the boot log announces; pools added at run time lie elsewhere.
 */
void d32_swiotlb_pool(struct device *dev, phys_addr_t *start,
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
 * Is the device's DMA free of IOMMU-API translation? True without an IOMMU
 * domain, and with one that is the identity (iommu=pt, or an identity
 * default domain): the device then has an IOMMU group
 * (device_iommu_mapped() is true) but nothing translates its DMA. Only a
 * translating (DMA) domain gives IOVAs, which never bounce here.
 * Not the same as "dma-direct": behind the K8 GART, whose dma_map_ops are
 * not an IOMMU-API driver, this is true too, and streaming mappings above
 * the mask get aperture addresses. That is what the callers need: a raw
 * physical address still reaches the memory it names (truncation-alias),
 * dma_need_sync() is false for GART mappings (nothing counts as bounced),
 * and there is no swiotlb pool whose place could matter.
 * The domain cannot change while the driver is bound (the group's type can
 * only be changed with no driver bound), so probe asks once.
 */
bool d32_dma_untranslated(struct device *dev)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);

	return !dom || dom->type == IOMMU_DOMAIN_IDENTITY;
}

/*
 * On dma-direct, a page the device cannot reach is bounced through
 * swiotlb; if the pool itself is beyond the mask, the DMA API would WARN.
 * Refuse such a mapping up front (-ENOMEM like any mapping failure).
 */
bool d32_unbounceable(struct d32_dev *dd, struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	if (!dd->bounce_beyond_mask || !dd->dma_untranslated)
		return false;
	for_each_sgtable_sg(sgt, sg, i)
		if (!dma_capable(dd->dev, phys_to_dma(dd->dev, sg_phys(sg)),
				 sg->length, true))
			return true;
	return false;
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
				if (!(flags & DMA32DEMO_ADDR_COHERENT) &&
				    d32_bounced(dd, segs[si].addr))
					f |= DMA32DEMO_ADDR_BOUNCED;
				else if ((flags & DMA32DEMO_ADDR_COHERENT) &&
					 d32_in_swiotlb(dd, segs[si].addr))
					f |= DMA32DEMO_ADDR_IN_POOL;
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
void d32_runs_collect(struct d32_req *rq, struct d32_runs *rs,
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
				     d32_alias_window + b->win_off, b->size,
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

