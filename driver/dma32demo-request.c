// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo: one request (DMA32DEMO_IOC_RUN) from allocation to free:
 * its transfers cut into descriptors, run on the ring in batches, checked
 * and accounted.
 */

#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "dma32demo-priv.h"

/*
 * All devices share the alias windows: one truncation-alias request at a
 * time, across all devices, from claiming the windows to releasing them.
 * Taken inside dd->lock, never the other way round.
 */
static DEFINE_MUTEX(d32_alias_lock);

/* Descriptors */

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
			/* One per descriptor: nj < 2^32, unit < DMA32DEMO_MAX_COUNT */
			j->seed = rq->seed + ((u64)unit << 32) + nj;
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
 * that moves is not a hang). At once: -EINTR on a fatal signal and
 * -ECANCELED when the system is about to sleep (the caller resets the
 * device, which stops its DMA, before anything is unmapped); -ENODEV when
 * the device went away (d32_mark_gone() stopped it already).
 */
static int d32_wait(struct d32_dev *dd, struct dma32_demo_desc *last)
{
	unsigned long tmo = msecs_to_jiffies(max(READ_ONCE(d32_timeout_ms), 1u));
	u32 head = d32_rd(dd, DMA32_DEMO_REG_RING_HEAD), now;
	long left;

	for (;;) {
		if (le32_to_cpu(READ_ONCE(last->status)) != DMA32_DEMO_ST_PENDING)
			break;
		if (READ_ONCE(dd->gone))
			return -ENODEV;
		if (READ_ONCE(d32_sleeping))
			return -ECANCELED;
		if (d32_rd(dd, DMA32_DEMO_REG_STATUS) & DMA32_DEMO_STATUS_HALTED)
			return -EIO;
		left = wait_for_completion_killable_timeout(&dd->done, tmo);
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
				    d32_timeout_ms, d32_rd(dd, DMA32_DEMO_REG_RING_HEAD),
				    dd->tail);
		res->timeouts++;
	} else if (ret == -EINTR || ret == -ECANCELED) {
		dev_dbg(dd->dev, "request %s with descriptors in flight (head %u, tail %u): resetting\n",
			ret == -EINTR ? "killed" : "aborted for system sleep",
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

/*
 * Add what the request (@res, its error set) did to the statistics: what
 * the caller gets back, so that the counters are the sums of the results
 */
static void d32_account(struct d32_dev *dd, struct dma32demo_result *res)
{
	unsigned int i;

	for (i = 0; i < DMA32DEMO_NR_STATS; i++) {
		u64 add = dma32demo_stat_adds(res, i);

		if (add)
			atomic64_add(add, &dd->st.v[i]);
	}
}

static enum dma_data_direction d32_dir(u32 op, bool dst)
{
	if (op == DMA32DEMO_OP_FILL || (op == DMA32DEMO_OP_COPY && dst))
		return DMA_FROM_DEVICE;
	return DMA_TO_DEVICE;
}

/* One request, called with dd->lock held; @runs: NULL or to be filled */
int d32_request(struct d32_dev *dd, const struct dma32demo_run *r,
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
	bool alias_locked = false, ended;
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
		/* Up to 1 GiB to allocate and fill: see d32_interrupted() */
		ret = d32_interrupted(dd);
		if (ret)
			goto free;
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
	ended = ret == -EINTR || ret == -ECANCELED || ret == -ENODEV;
	if (runs && !ended)
		d32_runs_collect(&rq, runs, nalloc);
	for (i = 0; i < nmapped; i++)
		d32_buf_unmap(dd, &rq.bufs[i]);
	if (rq.jobs && (rq.flags & DMA32DEMO_RUN_VERIFY) && !ended) {
		vret = d32_verify(&rq);
		if (!ret)
			ret = vret;
	}
	/* The canaries only of a mapped pair: d32_alias_map() leaves none */
	if (rq.strategy == DMA32DEMO_STRATEGY_TRUNCATION_ALIAS && nalloc &&
	    rq.bufs[0].win_hi && rq.bufs[0].win_lo) {
		res->alias_canary_errors = d32_alias_canaries(&rq.bufs[0],
							      res->transfers);
		dev_info(dd->dev, "truncation-alias: %llu bytes for %#llx %s; %llu other bytes changed in the windows\n",
			 res->bytes, d32_alias_window + rq.bufs[0].win_off,
			 res->transfers ? "landed at its low alias" :
			 "were refused by the device",
			 res->alias_canary_errors);
		if (res->alias_canary_errors && !ret)
			ret = -EILSEQ;
	}
free:
	/* All of the request's buffers are still held: the peak */
	res->coherent_swiotlb_bytes = atomic64_read(D32_STAT(dd, coherent_swiotlb_bytes));
	for (i = 0; i < nalloc; i++)
		d32_buf_free(dd, &rq.bufs[i]);
	kvfree(rq.jobs);
	kvfree(rq.bufs);
	if (alias_locked)
		mutex_unlock(&d32_alias_lock);
	res->ns = ktime_get_ns() - t0;
	res->error = -ret;
	/*
	 * Aborted for system sleep: the caller runs the request again after
	 * the resume and sees only that run's result, which alone is counted;
	 * this one (its partial transfers, its reset) only as aborted.
	 */
	if (ret == -ECANCELED)
		atomic64_inc(D32_STAT(dd, aborted));
	else
		d32_account(dd, res);
	return ret;
}

