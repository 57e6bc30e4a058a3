// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo: the character device /dev/dma32demoN: open and release,
 * the ioctls of uapi/dma32demo.h (argument validation, copying to and from
 * user space) and the statistics in sysfs.
 */

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "dma32demo-priv.h"

/* Character device */

static void d32_release_dev(struct kref *kref)
{
	struct d32_dev *dd = container_of(kref, struct d32_dev, kref);

	put_device(&dd->pdev->dev);
	kfree(dd);
}

void d32_put(struct d32_dev *dd)
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
	    total > (u64)READ_ONCE(d32_max_request_mb) * SZ_1M)
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
	if ((r->flags & (DMA32DEMO_RUN_INJECT_BUS_ERROR |
			 DMA32DEMO_RUN_INJECT_STALL)) &&
	    !READ_ONCE(d32_unsafe_fault_injection)) {
		dev_err_ratelimited(dd->dev, "fault injection refused: it needs the module parameter unsafe_fault_injection=1\n");
		return -EPERM;
	}
	if (r->strategy == DMA32DEMO_STRATEGY_UNSAFE_RAW && !d32_allow_unsafe)
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
		if (!d32_allow_unsafe) {
			dev_err_ratelimited(dd->dev, "truncation-alias refused: it needs allow_unsafe=1\n");
			return -EPERM;
		}
		if (!d32_alias_window) {
			dev_err_ratelimited(dd->dev, "truncation-alias refused: no alias_window\n");
			return -EPERM;
		}
		if (!dd->dma_untranslated) {
			dev_err_ratelimited(dd->dev, "truncation-alias refused: behind a translating IOMMU the window's address would be an IOVA, not the memory it names\n");
			return -EPERM;
		}
	}
	return 0;
}

/*
 * Physical and DMA addresses (address runs, fault addresses, the ring and
 * the swiotlb pool) only for an opener with CAP_SYS_ADMIN, as for
 * /proc/PID/pagemap: to anyone else they read as 0, and the
 * ADDRESSES_HIDDEN flags say so.
 */
static bool d32_may_see_addresses(struct file *file)
{
	return file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN);
}

static long d32_ioc_run(struct d32_dev *dd, struct dma32demo_run __user *arg,
			bool addresses)
{
	struct dma32demo_run r;
	struct d32_runs runs = { };
	bool ran;
	int ret;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	ret = d32_validate(dd, &r);
	if (ret)
		return ret;
again:
	memset(&r.result, 0, sizeof(r.result));
	runs.max = addresses ? r.runs_max : 0;

	/* Only a fatal signal ends the wait for the device (see the top) */
	if (mutex_lock_killable(&dd->lock))
		return -EINTR;
	ran = false;
	if (READ_ONCE(dd->gone)) {
		ret = -ENODEV;
	} else if (READ_ONCE(d32_sleeping)) {
		ret = -ECANCELED;
	} else {
		ret = d32_request(dd, &r, &r.result, runs.max ? &runs : NULL);
		ran = true;
	}
	mutex_unlock(&dd->lock);
	if (ret == -ECANCELED) {
		/* Aborted for system sleep: run it again after the resume */
		kvfree(runs.v);
		runs = (struct d32_runs){ };
		ret = d32_wait_for_wakeup();
		if (ret)
			return -ERESTARTSYS;
		goto again;
	}
	/* Gone before it started: not counted, nothing to copy back */
	if (!ran)
		goto out;

	if (!addresses) {
		r.result.flags |= DMA32DEMO_RESULT_ADDRESSES_HIDDEN;
		r.result.fault_addr = 0;
		r.result.latched_fault_addr = 0;
	}
	/* The runs are copied without dd->lock: user memory may fault */
	if (copy_to_user(&arg->result, &r.result, sizeof(r.result)) ||
	    (runs.n && copy_to_user(u64_to_user_ptr(r.runs_addr), runs.v,
				    array_size(runs.n, sizeof(*runs.v)))))
		ret = -EFAULT;
out:
	kvfree(runs.v);
	return ret;
}

static long d32_ioc_info(struct d32_dev *dd, struct dma32demo_info __user *arg,
			 bool addresses)
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
		.timeout_ms = READ_ONCE(d32_timeout_ms),
		.ring_dma = dd->ring_dma,
		.ctrl_buffers = dd->nctrl,
		.ctrl_buffer_bytes = dd->ctrl_bytes,
		.alias_window = d32_alias_window,
		.abi_version = DMA32DEMO_ABI_VERSION,
	};

	if (d32_allow_unsafe)
		info.flags |= DMA32DEMO_INFO_ALLOW_UNSAFE;
	if (READ_ONCE(d32_unsafe_fault_injection))
		info.flags |= DMA32DEMO_INFO_FAULT_INJECTION;
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
	if (!addresses) {
		info.flags |= DMA32DEMO_INFO_ADDRESSES_HIDDEN;
		info.ring_dma = 0;
		info.swiotlb_start = 0;
		info.swiotlb_end = 0;
		info.alias_window = 0;
	}

	if (copy_to_user(arg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

/*
 * uapi/dma32demo-stats.h makes struct dma32demo_stats, whose layout is
 * ABI: it must stay what it was when the fields were written out one by
 * one, 14 statistics and 2 reserved, all __u64; aborted took the first
 * reserved one.
 */
static_assert(sizeof(struct dma32demo_stats) == 16 * sizeof(__u64));
static_assert(offsetof(struct dma32demo_stats, map_failures) == 13 * sizeof(__u64));
static_assert(offsetof(struct dma32demo_stats, aborted) == 14 * sizeof(__u64));
static_assert(offsetof(struct dma32demo_stats, reserved) == 15 * sizeof(__u64));

static long d32_ioc_stats(struct d32_dev *dd,
			  struct dma32demo_stats __user *arg)
{
	struct dma32demo_stats s = {
#define DMA32DEMO_STAT(name, ...)					\
		.name = atomic64_read(&dd->st.v[DMA32DEMO_STAT_##name]),
#include "dma32demo-stats.h"
#undef DMA32DEMO_STAT
	};

	if (copy_to_user(arg, &s, sizeof(s)))
		return -EFAULT;
	return 0;
}

static long d32_reset_stats(struct d32_dev *dd)
{
	static const bool resets[DMA32DEMO_NR_STATS] = {
#define DMA32DEMO_STAT(name, from, ...)					\
		[DMA32DEMO_STAT_##name] = DMA32DEMO_STAT_RESETS(from),
#include "dma32demo-stats.h"
#undef DMA32DEMO_STAT
	};
	unsigned int i;

	for (i = 0; i < DMA32DEMO_NR_STATS; i++)
		if (resets[i])
			atomic64_set(&dd->st.v[i], 0);
	return 0;
}

static long d32_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct d32_dev *dd = file->private_data;
	void __user *argp = (void __user *)arg;
	long ret;

	switch (cmd) {
	case DMA32DEMO_IOC_RUN:
		return d32_ioc_run(dd, argp, d32_may_see_addresses(file));
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
		ret = d32_ioc_info(dd, argp, d32_may_see_addresses(file));
	else if (cmd == DMA32DEMO_IOC_STATS)
		ret = d32_ioc_stats(dd, argp);
	else
		ret = d32_reset_stats(dd);
	return ret;
}

const struct file_operations d32_fops = {
	.owner = THIS_MODULE,
	.open = d32_open,
	.release = d32_release,
	.unlocked_ioctl = d32_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	/* No .llseek: d32_open()'s nonseekable_open() makes lseek ESPIPE. */
};

/* sysfs: /sys/bus/pci/devices/<BDF>/stats/ */

/* One file per statistic; the attribute's var is its index */
static ssize_t d32_stat_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct d32_dev *dd = dev_get_drvdata(dev);
	unsigned long i = (unsigned long)
		container_of(attr, struct dev_ext_attribute, attr)->var;

	return sysfs_emit(buf, "%lld\n", atomic64_read(&dd->st.v[i]));
}

static struct dev_ext_attribute d32_stat_attrs[DMA32DEMO_NR_STATS] = {
#define DMA32DEMO_STAT(name, ...)					\
	[DMA32DEMO_STAT_##name] = { __ATTR(name, 0444, d32_stat_show, NULL), \
				    (void *)DMA32DEMO_STAT_##name },
#include "dma32demo-stats.h"
#undef DMA32DEMO_STAT
};

static struct attribute *d32_stats_attrs[DMA32DEMO_NR_STATS + 1] = {
#define DMA32DEMO_STAT(name, ...)					\
	(&d32_stat_attrs[DMA32DEMO_STAT_##name].attr.attr),
#include "dma32demo-stats.h"
#undef DMA32DEMO_STAT
	NULL
};

static const struct attribute_group d32_stats_group = {
	.name = "stats",
	.attrs = d32_stats_attrs,
};

const struct attribute_group *d32_groups[] = {
	&d32_stats_group,
	NULL
};

