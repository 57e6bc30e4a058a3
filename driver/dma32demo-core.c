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
 * Signals and system sleep: a request sleeps killably and checks only for
 * fatal signals while it allocates and verifies, so an ordinary signal
 * (SA_RESTART or not, SIGSTOP, a debugger) never ends it: a caller with a
 * periodic timer gets its request done, not restarted from the start again
 * and again. A fatal signal ends it within moments: the device is reset
 * before anything is unmapped. System sleep cannot wait for a request of up
 * to a minute, and the freezer cannot stop a task in a killable sleep, so a
 * PM notifier, which runs before the freezer, aborts every running request
 * (d32_pm_notify(): d32_sleeping, then each device's wait ends at once).
 * The aborted request resets the device, unmaps and frees what it held,
 * drops dd->lock, and waits freezably, holding no lock, for the system to
 * wake (d32_wait_for_wakeup()); then it runs again from the start. The
 * caller sees one request, done after the resume. Suspend itself thus finds
 * the device idle and dd->lock free.
 *
 * The module's files: this one (PCI, registers, IRQ, probe, remove,
 * power management), dma32demo-request.c (descriptors, the ring, one
 * request from allocation to free), dma32demo-buffers.c (the buffer
 * strategies: allocation and DMA mapping), dma32demo-verify.c (the CPU's
 * view of the data: patterns, CRC, comparison), dma32demo-internals.c
 * (everything that reads kernel internals) and dma32demo-chardev.c
 * (/dev/dma32demoN, the ioctls, sysfs).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/freezer.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pm.h>
#include <linux/slab.h>
#include <linux/suspend.h>

#include "dma32demo-priv.h"

#ifndef PCI_IRQ_INTX
#define PCI_IRQ_INTX PCI_IRQ_LEGACY
#endif

bool d32_allow_unsafe;
module_param_named(allow_unsafe, d32_allow_unsafe, bool, 0444);
MODULE_PARM_DESC(allow_unsafe,
		 "Allow the unsafe-raw strategy (CPU physical addresses, no DMA API)");

/*
 * The INJECT flags of a request make the device fail on purpose (a bus
 * error, a stall until reset): a test interface, off unless asked for.
 * Writable, so that a test can turn it on for the module it has.
 */
bool d32_unsafe_fault_injection;
module_param_named(unsafe_fault_injection, d32_unsafe_fault_injection, bool, 0644);
MODULE_PARM_DESC(unsafe_fault_injection,
		 "UNSAFE, for tests: accept the requests' INJECT_BUS_ERROR and INJECT_STALL flags, which make the device fail on purpose");

/*
 * For the tests of the truncation-alias error path: while set, and only
 * with unsafe_fault_injection=1, the second memremap() of a request's
 * alias windows (the low one) fails. Writable, as unsafe_fault_injection.
 */
bool d32_inject_alias_remap_failure;
module_param_named(inject_alias_remap_failure, d32_inject_alias_remap_failure, bool, 0644);
MODULE_PARM_DESC(inject_alias_remap_failure,
		 "UNSAFE, for tests, needs unsafe_fault_injection=1: truncation-alias requests find the second memremap() of their windows failed");

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
unsigned int d32_timeout_ms = 5000;

static int d32_set_timeout_ms(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < 1 || v > D32_TIMEOUT_MS_MAX) {
		pr_err("timeout_ms=%.*s refused: must be 1..%u (milliseconds)\n",
		       (int)strcspn(val, "\n"), val, D32_TIMEOUT_MS_MAX);
		return -EINVAL;
	}
	WRITE_ONCE(d32_timeout_ms, v);
	return 0;
}

static const struct kernel_param_ops d32_timeout_ms_ops = {
	.set = d32_set_timeout_ms,
	.get = param_get_uint,
};

module_param_cb(timeout_ms, &d32_timeout_ms_ops, &d32_timeout_ms, 0644);
MODULE_PARM_DESC(timeout_ms,
		 "Time without progress after which the device is declared hung and reset (1..120000 ms)");

static unsigned int ring_entries = 256;
module_param(ring_entries, uint, 0444);
MODULE_PARM_DESC(ring_entries, "Descriptor ring entries (power of two, 2..4096)");

static bool use_msi = true;
module_param(use_msi, bool, 0444);
MODULE_PARM_DESC(use_msi, "Use MSI when available (0: legacy INTx only)");

unsigned int d32_max_request_mb = 1024;
module_param_named(max_request_mb, d32_max_request_mb, uint, 0644);
MODULE_PARM_DESC(max_request_mb, "Largest request (all its buffers together) in MiB");

static unsigned int ctrl_buffers;
module_param(ctrl_buffers, uint, 0444);
MODULE_PARM_DESC(ctrl_buffers,
		 "Coherent control buffers each device holds while bound, as a NIC or HBA holds its rings (0..64)");

static unsigned int ctrl_buffer_kb = 64;
module_param(ctrl_buffer_kb, uint, 0444);
MODULE_PARM_DESC(ctrl_buffer_kb, "Size of each control buffer in KiB (4..4096)");

/* 0400: an address, which INFO hides from callers without CAP_SYS_ADMIN */
unsigned long long d32_alias_window;
module_param_named(alias_window, d32_alias_window, ullong, 0400);
MODULE_PARM_DESC(alias_window,
		 "UNSAFE, needs allow_unsafe=1: the physical address of a reserved 64 KiB window above the device's reach whose low alias (modulo 2^dma-bits) is reserved too, for the truncation-alias strategy (boot with memmap=64K$ADDR for both)");

static DEFINE_IDA(d32_ida);

/* System sleep (see the top): the bound devices, and whether it is near */
static LIST_HEAD(d32_devs);
static DEFINE_MUTEX(d32_devs_lock);
bool d32_sleeping;
static DECLARE_WAIT_QUEUE_HEAD(d32_wakeup);

/* Registers */

static void d32_hw_stop(struct d32_dev *dd)
{
	d32_wr(dd, DMA32_DEMO_REG_INT_MASK, 0);
	d32_wr(dd, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
	d32_rd(dd, DMA32_DEMO_REG_STATUS);
}

/*
 * Reset the device, empty the ring and program it again; false, touching
 * no register, when the device is gone: remove or shutdown stopped it for
 * good, and a request that ends after them must not start it again.
 * The ring is cleared only once the reset has been flushed (as in
 * d32_mark_gone()): on the kill and suspend-abort paths the device may
 * still hold queued descriptors, and an engine that fetched a slot while
 * the CPU zeroed it would write a status back into the emptied ring.
 */
bool d32_hw_init(struct d32_dev *dd)
{
	bool gone;

	spin_lock(&dd->hw_lock);
	gone = READ_ONCE(dd->gone);
	if (!gone) {
		d32_wr(dd, DMA32_DEMO_REG_CTRL, DMA32_DEMO_CTRL_RESET);
		/* Flush it: once the read returns, no descriptor runs */
		d32_rd(dd, DMA32_DEMO_REG_STATUS);
	}
	/* Stopped by the reset, or for good by d32_mark_gone() */
	memset(dd->ring, 0, dd->ring_bytes);
	dd->tail = 0;
	if (!gone) {
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
 * Hand the device the descriptors up to @tail, unless it is gone or the
 * system is about to sleep. Under hw_lock, like d32_mark_gone() and
 * d32_pm_notify(): either they see the doorbell's completion reinitialised
 * and complete it after, or the request sees their flag here.
 */
int d32_doorbell(struct d32_dev *dd, u32 tail)
{
	int ret = 0;

	spin_lock(&dd->hw_lock);
	if (READ_ONCE(dd->gone))
		ret = -ENODEV;
	else if (READ_ONCE(d32_sleeping))
		ret = -ECANCELED;
	else
		d32_wr(dd, DMA32_DEMO_REG_DOORBELL, tail);
	spin_unlock(&dd->hw_lock);
	return ret;
}

/*
 * The device goes away (remove) or the system goes down (shutdown): stop
 * the engine for good and end a request's wait at once, without dd->lock.
 */
void d32_mark_gone(struct d32_dev *dd)
{
	spin_lock(&dd->hw_lock);
	WRITE_ONCE(dd->gone, true);
	d32_hw_stop(dd);
	spin_unlock(&dd->hw_lock);
	complete_all(&dd->done);
}

/*
 * Before the freezer, at suspend and hibernation: end every running
 * request's wait (the request sees d32_sleeping and lets go of the device)
 * and keep new ones from starting; after the resume, let them run again.
 */
static int d32_pm_notify(struct notifier_block *nb, unsigned long action,
			 void *data)
{
	struct d32_dev *dd;

	switch (action) {
	case PM_SUSPEND_PREPARE:
	case PM_HIBERNATION_PREPARE:
	case PM_RESTORE_PREPARE:
		WRITE_ONCE(d32_sleeping, true);
		mutex_lock(&d32_devs_lock);
		list_for_each_entry(dd, &d32_devs, node) {
			/* Pairs with d32_doorbell(): see there */
			spin_lock(&dd->hw_lock);
			spin_unlock(&dd->hw_lock);
			complete(&dd->done);
		}
		mutex_unlock(&d32_devs_lock);
		break;
	case PM_POST_SUSPEND:
	case PM_POST_HIBERNATION:
	case PM_POST_RESTORE:
		WRITE_ONCE(d32_sleeping, false);
		wake_up_all(&d32_wakeup);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block d32_pm_nb = {
	.notifier_call = d32_pm_notify,
};

/*
 * A request that system sleep aborted waits here, holding no lock, so the
 * freezer can stop its task: 0 once the system is awake again, -EINTR on
 * a fatal signal. Killable, not interruptible, like every other wait of a
 * request: the freezer thaws tasks before PM_POST_SUSPEND clears
 * d32_sleeping, and a thawed caller's ordinary signal (a periodic timer
 * without SA_RESTART) must not end its request with EINTR.
 */
int d32_wait_for_wakeup(void)
{
	if (wait_event_state(d32_wakeup, !READ_ONCE(d32_sleeping),
			     (TASK_KILLABLE | TASK_FREEZABLE)))
		return -EINTR;
	return 0;
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

static void d32_unlist(void *data)
{
	struct d32_dev *dd = data;

	mutex_lock(&d32_devs_lock);
	list_del(&dd->node);
	mutex_unlock(&d32_devs_lock);
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
	dd->dma_untranslated = d32_dma_untranslated(dd->dev);
	if (dd->dma_untranslated && device_iommu_mapped(dd->dev))
		dev_info(dd->dev, "IOMMU identity domain (passthrough): DMA addresses are physical, swiotlb bounces what the mask cannot reach\n");
	d32_swiotlb_pool(dd->dev, &start, &end);
	if (dd->dma_untranslated && d32_swiotlb_active(dd->dev) &&
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
	mutex_lock(&d32_devs_lock);
	list_add(&dd->node, &d32_devs);
	mutex_unlock(&d32_devs_lock);
	ret = devm_add_action_or_reset(dev, d32_unlist, dd);
	if (ret)
		return ret;

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
		 atomic64_read(D32_STAT(dd, coherent_swiotlb_bytes)),
		 dd->irq_mode == DMA32DEMO_IRQ_MSI ? "MSI" : "INTx", dd->irq);
	if (d32_allow_unsafe)
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
 * The PM notifier has already ended any request in flight, and none
 * starts until the resume (see the top), so dd->lock is free and the ring
 * empty; the lock keeps out whatever else could come. The engine is reset:
 * it moves nothing while the system sleeps. Power may be lost, and with it
 * the registers, the ring base among them: resume programs the ring again
 * (kept in memory, as are the control buffers) and enables the engine, as
 * at probe. PCI config space and MSI are the PCI core's to save and
 * restore.
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

static int __init d32_init(void)
{
	int ret = register_pm_notifier(&d32_pm_nb);

	if (ret)
		return ret;
	ret = pci_register_driver(&d32_driver);
	if (ret)
		unregister_pm_notifier(&d32_pm_nb);
	return ret;
}
module_init(d32_init);

static void __exit d32_exit(void)
{
	pci_unregister_driver(&d32_driver);
	unregister_pm_notifier(&d32_pm_nb);
}
module_exit(d32_exit);

MODULE_DESCRIPTION("dma32-demo DMA engine: buffer strategies, bounces and faults");
MODULE_AUTHOR("The dma32-demo authors");
MODULE_LICENSE("GPL");
