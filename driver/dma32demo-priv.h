/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the module's source files share: the device, request and buffer
 * structures and the functions one file calls in another. The module's
 * overview (strategies, locking, going away, signals) is at the top of
 * dma32demo-core.c.
 */
#ifndef _DMA32DEMO_PRIV_H
#define _DMA32DEMO_PRIV_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#define DMA32_DEMO_LE32 __le32
#define DMA32_DEMO_LE64 __le64
#include "dma32-demo-regs.h"
#include "dma32demo.h"

#define DRV_NAME "dma32demo"

/* The statistics of uapi/dma32demo-stats.h, by enum dma32demo_stat */
struct d32_stats {
	atomic64_t v[DMA32DEMO_NR_STATS];
};

/* The atomic64_t of statistic @name of @dd */
#define D32_STAT(dd, name)	(&(dd)->st.v[DMA32DEMO_STAT_##name])

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
	struct list_head node;		/* in d32_devs, while bound */

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
	bool dma_untranslated;		/* no IOMMU domain translates: no IOVAs */

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
	phys_addr_t coherent_phys;	/* its first page (dma_get_sgtable()) */
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

/* dma32demo-core.c */
extern unsigned int d32_timeout_ms;
extern unsigned int d32_max_request_mb;
extern bool d32_allow_unsafe;
extern bool d32_unsafe_fault_injection;
extern bool d32_inject_alias_remap_failure;
extern unsigned long long d32_alias_window;
extern bool d32_sleeping;
int d32_doorbell(struct d32_dev *dd, u32 tail);
bool d32_hw_init(struct d32_dev *dd);
void d32_mark_gone(struct d32_dev *dd);
int d32_wait_for_wakeup(void);

/*
 * What ends a request early, checked between the steps of its CPU work:
 * -ENODEV when the device went away, -ECANCELED when the system is about
 * to sleep, -EINTR on a fatal signal; ordinary signals do not (see the
 * overview in dma32demo-core.c).
 */
static inline int d32_interrupted(struct d32_dev *dd)
{
	if (READ_ONCE(dd->gone))
		return -ENODEV;
	if (READ_ONCE(d32_sleeping))
		return -ECANCELED;
	if (fatal_signal_pending(current))
		return -EINTR;
	return 0;
}

/* dma32demo-request.c */
int d32_request(struct d32_dev *dd, const struct dma32demo_run *r,
		struct dma32demo_result *res, struct d32_runs *runs);

/* dma32demo-buffers.c */
u64 d32_alias_canaries(struct d32_buf *b, bool written);
int d32_buf_alloc(struct d32_req *rq, unsigned int idx);
void d32_buf_free(struct d32_dev *dd, struct d32_buf *b);
int d32_buf_map(struct d32_req *rq, struct d32_buf *b);
void d32_buf_unmap(struct d32_dev *dd, struct d32_buf *b);

/* dma32demo-verify.c */
void d32_pattern_write(struct d32_buf *b, size_t off, size_t len,
		       u64 seed);
int d32_verify(struct d32_req *rq);

/* dma32demo-internals.c */
void d32_account_page(struct d32_req *rq, struct page *pg);
int d32_alias_check(struct d32_dev *dd, phys_addr_t phys);
void d32_coherent_account(struct d32_dev *dd, dma_addr_t dma,
			  size_t size, int sign);
bool d32_dma_untranslated(struct device *dev);
void d32_runs_collect(struct d32_req *rq, struct d32_runs *rs,
		      unsigned int nbufs);
bool d32_swiotlb_active(struct device *dev);
void d32_swiotlb_pool(struct device *dev, phys_addr_t *start,
		      phys_addr_t *end);
bool d32_unbounceable(struct d32_dev *dd, struct sg_table *sgt);

/* dma32demo-chardev.c */
extern const struct file_operations d32_fops;
extern const struct attribute_group *d32_groups[];
void d32_put(struct d32_dev *dd);

/*
 * Was this streaming mapping bounced through swiotlb? On dma-direct, for a
 * cache-coherent device (all of x86), dma_need_sync() is true exactly for
 * a DMA address in a swiotlb pool. Behind a translating IOMMU it says
 * nothing of the kind, and nothing bounces there.
 */
static inline bool d32_bounced(struct d32_dev *dd, dma_addr_t addr)
{
	return dd->dma_untranslated && dma_need_sync(dd->dev, addr);
}

static inline bool d32_above_4g(phys_addr_t phys, size_t len)
{
	return (u64)phys + len - 1 > U32_MAX;
}

static inline u32 d32_rd(struct d32_dev *dd, unsigned int reg)
{
	return readl(dd->regs + reg);
}

static inline void d32_wr(struct d32_dev *dd, unsigned int reg, u32 val)
{
	writel(val, dd->regs + reg);
}

static inline u64 d32_rd64(struct d32_dev *dd, unsigned int lo, unsigned int hi)
{
	u64 v = d32_rd(dd, lo);

	return v | (u64)d32_rd(dd, hi) << 32;
}

static inline struct d32_buf *d32_src(struct d32_req *rq, unsigned int unit)
{
	return rq->op == DMA32DEMO_OP_FILL ? NULL : &rq->bufs[unit];
}

static inline struct d32_buf *d32_dst(struct d32_req *rq, unsigned int unit)
{
	switch (rq->op) {
	case DMA32DEMO_OP_FILL:
		return &rq->bufs[unit];
	case DMA32DEMO_OP_COPY:
		return &rq->bufs[rq->count + unit];
	}
	return NULL;
}

static inline phys_addr_t d32_alias_lo(struct d32_dev *dd)
{
	return d32_alias_window & DMA_BIT_MASK(dd->dma_bits);
}

#endif /* _DMA32DEMO_PRIV_H */
