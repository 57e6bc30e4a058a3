// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo: the buffer strategies (uapi/dma32demo.h): allocating a
 * request's buffers (coherent, pages, the caller's pinned pages, the
 * reserved truncation-alias windows), mapping them for the device and
 * freeing them again. Where the memory lies is asked of
 * dma32demo-internals.c.
 */

#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "dma32demo-priv.h"

/* Buffers: allocation */

static int d32_alloc_coherent(struct d32_req *rq, struct d32_buf *b)
{
	struct d32_dev *dd = rq->dd;
	struct sg_page_iter piter;
	struct sg_table sgt;
	int ret;

	b->cpu = dma_alloc_coherent(dd->dev, b->size, &b->handle,
				    GFP_KERNEL | __GFP_NOWARN);
	if (!b->cpu) {
		rq->res->coherent_asked = b->size;
		rq->res->coherent_held = atomic64_read(D32_STAT(dd, coherent_bytes_held));
		dev_info_ratelimited(dd->dev,
				     "coherent allocation of %zu bytes failed after %llu buffers; driver holds %llu coherent bytes\n",
				     b->size, rq->res->buffers,
				     rq->res->coherent_held);
		return -ENOMEM;
	}
	d32_coherent_account(dd, b->handle, b->size, 1);
	/* The pages behind it, for the zone counts: dma_get_sgtable() */
	ret = dma_get_sgtable(dd->dev, &sgt, b->cpu, b->handle, b->size);
	if (ret) {
		dev_err_ratelimited(dd->dev, "dma_get_sgtable() of a coherent buffer failed: %d\n",
				    ret);
		return ret;
	}
	b->coherent_phys = sg_phys(sgt.sgl);
	for_each_sgtable_page(&sgt, &piter, 0)
		d32_account_page(rq, sg_page_iter_page(&piter));
	sg_free_table(&sgt);
	return 0;
}

/*
 * Streaming buffers come from the device's NUMA node, as a driver's rings
 * and receive buffers do (dma_alloc_coherent() does the same): on a node
 * without the zone GFP asks for, the node's zonelist falls back to the
 * nearest node that has it.
 */
static int d32_alloc_pages(struct d32_req *rq, struct d32_buf *b, gfp_t gfp)
{
	int node = dev_to_node(rq->dd->dev);
	unsigned int i;

	b->npages = DIV_ROUND_UP(b->size, PAGE_SIZE);
	b->pages = kvcalloc(b->npages, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		return -ENOMEM;
	for (i = 0; i < b->npages; i++) {
		b->pages[i] = alloc_pages_node(node, gfp | __GFP_NOWARN, 0);
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

static void d32_alias_unmap(struct d32_dev *dd, struct d32_buf *b)
{
	if (b->win_hi)
		memunmap(b->win_hi);
	if (b->win_lo)
		memunmap(b->win_lo);
	if (b->win_claimed) {
		release_mem_region(d32_alias_window, DMA32DEMO_ALIAS_WINDOW);
		release_mem_region(d32_alias_lo(dd), DMA32DEMO_ALIAS_WINDOW);
	}
	b->win_claimed = false;
	b->win_hi = NULL;
	b->win_lo = NULL;
	b->cpu = NULL;
}

static int d32_alias_map(struct d32_req *rq, struct d32_buf *b)
{
	struct d32_dev *dd = rq->dd;
	phys_addr_t hi = d32_alias_window, lo = d32_alias_lo(dd);
	size_t i;
	int ret;

	if (hi <= DMA_BIT_MASK(dd->dma_bits) ||
	    !IS_ALIGNED(hi, DMA32DEMO_ALIAS_WINDOW)) {
		dev_err_ratelimited(dd->dev, "truncation-alias: alias_window=%#llx must be 64 KiB aligned and beyond the device's %u address bits\n",
				    d32_alias_window, dd->dma_bits);
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
	/* A test can make the second map fail (inject_alias_remap_failure) */
	if (READ_ONCE(d32_unsafe_fault_injection) &&
	    READ_ONCE(d32_inject_alias_remap_failure))
		b->win_lo = NULL;
	else
		b->win_lo = memremap(lo, DMA32DEMO_ALIAS_WINDOW, MEMREMAP_WB);
	if (!b->win_hi || !b->win_lo) {
		/* Neither window stays mapped or claimed: no half pair */
		dev_err_ratelimited(dd->dev, "truncation-alias: memremap() of the %s window failed\n",
				    b->win_hi ? "low" : "high");
		d32_alias_unmap(dd, b);
		return -ENOMEM;
	}
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
u64 d32_alias_canaries(struct d32_buf *b, bool written)
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

int d32_buf_alloc(struct d32_req *rq, unsigned int idx)
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

void d32_buf_free(struct d32_dev *dd, struct d32_buf *b)
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

	/*
	 * Mappings in CPU segments, the unit of mappings_above_4g too: an
	 * IOMMU (VT-d, the K8 GART) may merge them into fewer DMA segments
	 */
	res->mappings += b->sgt.orig_nents;
	for_each_sgtable_sg(&b->sgt, sg, i)
		if (d32_above_4g(sg_phys(sg), sg->length))
			res->mappings_above_4g++;

	b->segs = kvcalloc(b->sgt.nents, sizeof(*b->segs), GFP_KERNEL);
	if (!b->segs)
		return -ENOMEM;
	for_each_sgtable_dma_sg(&b->sgt, sg, i) {
		b->segs[i].addr = sg_dma_address(sg);
		b->segs[i].len = sg_dma_len(sg);
		if (d32_bounced(dd, sg_dma_address(sg))) {
			res->bounced++;
			res->bounced_bytes += sg_dma_len(sg);
		}
	}
	b->nsegs = b->sgt.nents;
	return 0;
}

int d32_buf_map(struct d32_req *rq, struct d32_buf *b)
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
		if (d32_above_4g(b->coherent_phys, b->size))
			res->mappings_above_4g++;
		/* One in the pool is held there, not bounced: no copies */
		return 0;
	case DMA32DEMO_STRATEGY_TRUNCATION_ALIAS:
		/* The high window's address, beyond the device's reach */
		b->segs = kvcalloc(1, sizeof(*b->segs), GFP_KERNEL);
		if (!b->segs)
			return -ENOMEM;
		b->segs[0].addr = d32_alias_window + b->win_off;
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

void d32_buf_unmap(struct d32_dev *dd, struct d32_buf *b)
{
	if (b->mapped)
		dma_unmap_sgtable(dd->dev, &b->sgt, b->dir, 0);
	b->mapped = false;
	if (b->sgt_alloc)
		sg_free_table(&b->sgt);
	b->sgt_alloc = false;
}

