/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dma32demo: the driver's statistics, the one list of them, in order.
 *
 * Deliberately without an include guard: each use defines
 * DMA32DEMO_STAT(name, from, field) to what it makes of a row, includes
 * this file and undefines it again. Made from it: struct dma32demo_stats's
 * fields (__u64 name) and enum dma32demo_stat's indices
 * (DMA32DEMO_STAT_name) in uapi/dma32demo.h, the driver's counters, their
 * counting, RESET_STATS and the files of /sys/bus/pci/devices/<BDF>/stats/
 * (documented in Documentation/ABI/testing/sysfs-driver-dma32demo), and
 * the names dma32ctl stats and dma32demo-stress print.
 *
 * from: what a request adds (DMA32DEMO_STAT_ADDS() in uapi/dma32demo.h)
 *   RESULT   a counter: each request adds its struct dma32demo_result's
 *            field
 *   REQUEST  a counter: one per request
 *   FAILED   a counter: one per request that failed (result.error set)
 *   ABORTED  a counter the driver keeps alone: one per run of a request
 *            that system sleep aborted; the ioctl runs the request again
 *            after the resume, and only that run's result is returned and
 *            counted in the rows above, so no result adds to this one
 *   GAUGE    bytes held now, not added by requests and not reset:
 *            coherent memory of the device (ring, control buffers,
 *            requests' buffers) and the part of it in the swiotlb pool
 * field: the struct dma32demo_result field of a RESULT row (else none)
 *
 * struct dma32demo_stats's layout is ABI: a new statistic goes at the end
 * and takes the place of one of its reserved[] fields.
 */
DMA32DEMO_STAT(requests, REQUEST, none)
DMA32DEMO_STAT(errors, FAILED, none)
DMA32DEMO_STAT(transfers, RESULT, transfers)
DMA32DEMO_STAT(bytes, RESULT, bytes)
DMA32DEMO_STAT(mappings, RESULT, mappings)
DMA32DEMO_STAT(bounced_mappings, RESULT, bounced)
DMA32DEMO_STAT(bounced_bytes, RESULT, bounced_bytes)
DMA32DEMO_STAT(device_faults, RESULT, device_faults)
DMA32DEMO_STAT(alloc_failures, RESULT, alloc_failures)
DMA32DEMO_STAT(timeouts, RESULT, timeouts)
DMA32DEMO_STAT(resets, RESULT, resets)
DMA32DEMO_STAT(coherent_bytes_held, GAUGE, none)
DMA32DEMO_STAT(coherent_swiotlb_bytes, GAUGE, none)
DMA32DEMO_STAT(map_failures, RESULT, map_failures)
DMA32DEMO_STAT(aborted, ABORTED, none)
