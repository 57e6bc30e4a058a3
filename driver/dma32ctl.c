// SPDX-License-Identifier: GPL-2.0
/*
 * dma32ctl: user tool for the dma32demo driver (/dev/dma32demoN).
 *
 *   dma32ctl [--device DEV] info [--json]
 *   dma32ctl [--device DEV] run --strategy S --op O --size N[K|M|G]
 *                               [--count K] [--verify] [--json]
 *                               [--inject stall|bus-error]
 *                               [--counter FILE]... [--runs N]
 *   dma32ctl [--device DEV] stats [--json]
 *   dma32ctl [--device DEV] reset
 *
 * The tool alone: the driver's test programs (ioctl self-test, fuzzer,
 * stress) live in tests/ and share dma32demo-user.h with it. Built static
 * for the guest by the Makefile.
 */
#define _GNU_SOURCE
#include "dma32demo-user.h"
#include <getopt.h>
#include <sys/resource.h>

/* Address runs asked for by default (--runs) */
#define DEFAULT_RUNS 64
/* A result error no driver writes: the result was not written at all */
#define RESULT_UNWRITTEN (-1)

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: dma32ctl [--device DEV] COMMAND [OPTIONS]\n"
		"  info  [--json]            device capabilities and driver settings\n"
		"  run   --strategy S --op O --size N[K|M|G] [--count K] [--verify]\n"
		"        [--json] [--inject stall|bus-error] [--counter FILE]...\n"
		"        --counter: a kernel counter file read right before and\n"
		"        after the request, reported in the JSON (null if absent)\n"
		"        --runs N: report up to N (0..%d, default %d) address runs:\n"
		"        where the ring, the control buffers and the buffers were,\n"
		"        physical and DMA (as root: CAP_SYS_ADMIN)\n"
		"        --inject: make the device fail (needs the module\n"
		"        parameter unsafe_fault_injection=1)\n"
		"        strategies: coherent streaming streaming-dma32 user unsafe-raw\n"
		"                    truncation-alias\n"
		"        ops: fill checksum copy\n"
		"  stats [--json]            driver counters\n"
		"  reset                     zero the counters\n"
		"DEV defaults to " DEFAULT_DEVICE ". Exit status: 0 ok, 1 request\n"
		"failed (the errno name is printed), 2 usage or device error.\n",
		DMA32DEMO_MAX_RUNS, DEFAULT_RUNS);
}

/* info */

static int cmd_info(bool json)
{
	struct dma32demo_info in;
	int fd = open_dev();
	char ver[16];
	bool addrs;

	memset(&in, 0, sizeof(in));
	if (ioctl(fd, DMA32DEMO_IOC_INFO, &in))
		die("INFO: %s (%s)", errname(errno), strerror(errno));
	close(fd);
	snprintf(ver, sizeof(ver), "%u.%u", in.version >> 16,
		 in.version & 0xffff);
	addrs = !(in.flags & DMA32DEMO_INFO_ADDRESSES_HIDDEN);
	if (json) {
		j_begin();
		j_str("device", device_path);
		j_str("pci", in.pci_name);
		j_hex("id", in.id);
		j_str("version", ver);
		j_u64("dma_bits", in.dma_bits);
		j_u64("ring_bits", in.ring_bits);
		j_u64("max_xfer", in.max_xfer);
		j_u64("max_ring", in.max_ring);
		j_u64("features", in.features);
		j_str("overflow", in.features & DMA32_DEMO_FEAT_TRUNCATE ?
		      "truncate" : "fault");
		j_u64("ring_entries", in.ring_entries);
		j_u64("dma_mask_bits", in.dma_mask_bits);
		j_u64("coherent_mask_bits", in.coherent_mask_bits);
		j_str("irq", in.irq_mode == DMA32DEMO_IRQ_MSI ? "msi" : "intx");
		j_bool("allow_unsafe", in.flags & DMA32DEMO_INFO_ALLOW_UNSAFE);
		j_bool("fault_injection",
		       in.flags & DMA32DEMO_INFO_FAULT_INJECTION);
		j_bool("addresses_hidden", !addrs);
		j_bool("mask_forced", in.flags & DMA32DEMO_INFO_MASK_FORCED);
		j_bool("coherent_mask_forced",
		       in.flags & DMA32DEMO_INFO_COHERENT_MASK_FORCED);
		j_bool("swiotlb", in.flags & DMA32DEMO_INFO_SWIOTLB_ACTIVE);
		j_maybe("swiotlb_start", addrs, in.swiotlb_start);
		j_maybe("swiotlb_end", addrs, in.swiotlb_end);
		j_maybe("ring_dma", addrs, in.ring_dma);
		j_u64("ctrl_buffers", in.ctrl_buffers);
		j_u64("ctrl_buffer_bytes", in.ctrl_buffer_bytes);
		j_maybe("alias_window", addrs, in.alias_window);
		j_u64("abi_version", in.abi_version);
		j_u64("timeout_ms", in.timeout_ms);
		j_end();
		return 0;
	}
	printf("%-20s %s (PCI %s)\n", "device", device_path, in.pci_name);
	printf("%-20s 0x%08x, version %s\n", "id", in.id, ver);
	printf("%-20s %u bits (data), %u bits (ring)\n", "device reach",
	       in.dma_bits, in.ring_bits);
	printf("%-20s %u bits streaming%s, %u bits coherent%s\n", "DMA masks",
	       in.dma_mask_bits,
	       in.flags & DMA32DEMO_INFO_MASK_FORCED ? " (FORCED, unsafe)" : "",
	       in.coherent_mask_bits,
	       in.flags & DMA32DEMO_INFO_COHERENT_MASK_FORCED ?
	       " (FORCED, unsafe)" : "");
	printf("%-20s %u bytes per transfer\n", "max transfer", in.max_xfer);
	if (addrs)
		printf("%-20s %u of %u entries at bus address 0x%llx\n", "ring",
		       in.ring_entries, in.max_ring,
		       (unsigned long long)in.ring_dma);
	else
		printf("%-20s %u of %u entries\n", "ring", in.ring_entries,
		       in.max_ring);
	printf("%-20s %u of %u bytes, coherent, held while bound\n",
	       "control buffers", in.ctrl_buffers, in.ctrl_buffer_bytes);
	printf("%-20s %s\n", "overflow",
	       in.features & DMA32_DEMO_FEAT_TRUNCATE ?
	       "truncate (upper address bits dropped)" : "fault");
	if (in.alias_window)
		printf("%-20s 0x%llx (truncation-alias)\n", "alias window",
		       (unsigned long long)in.alias_window);
	printf("%-20s %s\n", "interrupt",
	       in.irq_mode == DMA32DEMO_IRQ_MSI ? "MSI" : "INTx");
	if ((in.flags & DMA32DEMO_INFO_SWIOTLB_ACTIVE) && !addrs)
		printf("%-20s active\n", "swiotlb");
	else if (in.flags & DMA32DEMO_INFO_SWIOTLB_ACTIVE)
		printf("%-20s active, pool 0x%llx-0x%llx (%llu MiB)\n",
		       "swiotlb", (unsigned long long)in.swiotlb_start,
		       (unsigned long long)in.swiotlb_end - 1,
		       (unsigned long long)(in.swiotlb_end -
					    in.swiotlb_start) >> 20);
	else
		printf("%-20s inactive\n", "swiotlb");
	printf("%-20s %s\n", "unsafe-raw",
	       in.flags & DMA32DEMO_INFO_ALLOW_UNSAFE ? "allowed" :
	       "refused (load with allow_unsafe=1)");
	printf("%-20s %s\n", "fault injection",
	       in.flags & DMA32DEMO_INFO_FAULT_INJECTION ? "accepted" :
	       "refused (unsafe_fault_injection=1 accepts it)");
	if (!addrs)
		printf("%-20s hidden (no CAP_SYS_ADMIN)\n", "addresses");
	printf("%-20s %u ms\n", "timeout", in.timeout_ms);
	return 0;
}

/* stats */

static int cmd_stats(bool json)
{
	struct dma32demo_stats s;
	int fd = open_dev();
	unsigned int i;

	memset(&s, 0, sizeof(s));
	if (ioctl(fd, DMA32DEMO_IOC_STATS, &s))
		die("STATS: %s (%s)", errname(errno), strerror(errno));
	close(fd);

	if (json)
		j_begin();
	for (i = 0; i < ARRAY_SIZE(stat_descs); i++) {
		__u64 v;

		memcpy(&v, (const char *)&s + stat_descs[i].off, sizeof(v));
		if (json)
			j_u64(stat_descs[i].name, v);
		else
			printf("%-20s %llu\n", stat_descs[i].name,
			       (unsigned long long)v);
	}
	if (json)
		j_end();
	return 0;
}

static int cmd_reset(void)
{
	int fd = open_dev();

	if (ioctl(fd, DMA32DEMO_IOC_RESET_STATS))
		die("RESET_STATS: %s (%s)", errname(errno), strerror(errno));
	close(fd);
	return 0;
}

/* run */

/*
 * A kernel counter (one decimal number in a file, e.g. swiotlb's debugfs
 * files) read right before and right after the request, so that its delta
 * belongs to this request alone. A file that is missing or holds no
 * number reads as "not there": null in the JSON, never 0.
 */
#define MAX_COUNTERS 32

struct counter {
	const char *path;
	bool have_before, have_after;
	__u64 before, after;
};

static bool read_counter(const char *path, __u64 *v)
{
	char buf[32], *end;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return !errno && end != buf && (*end == '\n' || *end == '\0') &&
	       buf[0] >= '0' && buf[0] <= '9';
}

/* Free pages of one zone (summed over nodes) from /proc/zoneinfo */
static bool zone_free_pages(const char *zone, __u64 *v)
{
	char line[256], name[32];
	bool in_zone = false, found = false;
	unsigned long long free;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return false;
	*v = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %*d, zone %31s", name) == 1) {
			in_zone = !strcmp(name, zone);
			continue;
		}
		if (in_zone && sscanf(line, " pages free %llu", &free) == 1) {
			*v += free;
			found = true;
			in_zone = false;
		}
	}
	fclose(f);
	return found;
}

/* CPU time (user + system) this process has used, in ns */
static __u64 cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

struct run_opts {
	int strategy, op;
	__u64 size, count;
	__u32 flags;
	bool json;
	struct counter counters[MAX_COUNTERS + 1];	/* + ZONE_DMA free */
	int nr_counters;
	__u64 cpu_ns;	/* CPU time of the ioctl: the driver runs in our context */
	__u32 runs_max;
	struct dma32demo_addr_run *runs;
};

static void sample_counters(struct run_opts *o, bool after)
{
	struct counter *c;
	bool *have;
	__u64 *v;

	for (c = o->counters; c < o->counters + o->nr_counters; c++) {
		have = after ? &c->have_after : &c->have_before;
		v = after ? &c->after : &c->before;
		if (c->path[0] == '/')
			*have = read_counter(c->path, v);
		else	/* "zone:DMA": that zone's free pages */
			*have = zone_free_pages(c->path + 5, v);
	}
}

/* "counters": {"FILE": {"before": N, "after": N}, ...} */
static void print_counters(const struct run_opts *o)
{
	const struct counter *c;

	j_obj("counters");
	for (c = o->counters; c < o->counters + o->nr_counters; c++) {
		j_obj(c->path);
		j_maybe("before", c->have_before, c->before);
		j_maybe("after", c->have_after, c->after);
		j_obj_end();
	}
	j_obj_end();
}

/*
 * "ring": [{"phys", "dma", "pages", "in_pool"}], "ctrl": [the same, the
 * control buffers'], "runs": [{"buffer", "phys", "dma", "pages",
 * "bounce_slot", "in_pool", "reserved"}], "runs_dropped": N; addresses as
 * "0x..." strings, dma null for a buffer that was never mapped; all four
 * null when no runs were asked for or the request was rejected. After the
 * result's own keys, and none of them named like one but "pages", so that
 * line-oriented readers of a result key still find the result's.
 */
static void print_runs_json(const struct run_opts *o,
			    const struct dma32demo_result *r, bool have)
{
	static const char *const arrays[] = { "ring", "ctrl", "runs" };
	const struct dma32demo_addr_run *a;
	unsigned int k;
	int which;

	if (!have || !o->runs_max) {
		for (k = 0; k < ARRAY_SIZE(arrays); k++)
			j_str(arrays[k], NULL);
		j_str("runs_dropped", NULL);
		return;
	}
	for (k = 0; k < ARRAY_SIZE(arrays); k++) {
		j_arr(arrays[k]);
		for (a = o->runs; a < o->runs + r->runs; a++) {
			which = a->buffer != DMA32DEMO_ADDR_DEVICE_BUFFER ? 2 :
				a->flags & DMA32DEMO_ADDR_RING ? 0 : 1;
			if (which != (int)k)
				continue;
			j_item();
			if (k == 2)
				j_u64("buffer", a->buffer);
			j_hex("phys", a->phys);
			if (a->flags & DMA32DEMO_ADDR_UNMAPPED)
				j_str("dma", NULL);
			else
				j_hex("dma", a->dma);
			j_u64("pages", a->pages);
			if (k == 2)
				j_bool("bounce_slot",
				       a->flags & DMA32DEMO_ADDR_BOUNCED);
			j_bool("in_pool", a->flags & DMA32DEMO_ADDR_IN_POOL);
			if (k == 2)
				j_bool("reserved",
				       a->flags & DMA32DEMO_ADDR_RESERVED);
			j_obj_end();
		}
		j_arr_end();
	}
	j_u64("runs_dropped", r->runs_dropped);
}

static void print_json(const struct run_opts *o,
		       const struct dma32demo_result *r, int err,
		       __u64 user_bad)
{
	const struct dma32demo_result z = { 0 };
	bool addrs;
	int i;

	if (!r)
		r = &z;
	addrs = !(r->flags & DMA32DEMO_RESULT_ADDRESSES_HIDDEN);
	j_begin();
	j_str("device", device_path);
	j_str("strategy", strategy_names[o->strategy]);
	j_str("op", op_names[o->op]);
	j_u64("size", o->size);
	j_u64("count", o->count);
	j_bool("verify", o->flags & DMA32DEMO_RUN_VERIFY);
	j_bool("ok", !err);
	j_str("errno", err ? errname(err) : NULL);
	j_u64("bytes", r->bytes);
	j_u64("ns", r->ns);
	j_u64("dma_ns", r->dma_ns);
	j_u64("buffers", r->buffers);
	j_u64("buffers_verified", r->buffers_verified);
	j_u64("descriptors", r->descriptors);
	j_u64("transfers", r->transfers);
	j_u64("mappings", r->mappings);
	j_u64("mappings_above_4g", r->mappings_above_4g);
	j_u64("bounced", r->bounced);
	j_u64("bounced_bytes", r->bounced_bytes);
	j_u64("pages", r->pages);
	j_u64("pages_above_4g", r->pages_above_4g);
	j_obj("zones");
	for (i = 0; i < DMA32DEMO_NR_ZONES; i++)
		j_u64(zone_names[i], r->zone_pages[i]);
	j_obj_end();
	j_u64("device_faults", r->device_faults);
	j_maybe("fault_addr", addrs, r->fault_addr);
	j_maybe("latched_fault_addr", addrs, r->latched_fault_addr);
	j_u64("fault_info", r->fault_info);
	j_u64("dev_status", r->dev_status);
	j_u64("timeouts", r->timeouts);
	j_u64("resets", r->resets);
	j_u64("verify_errors", r->verify_errors);
	j_u64("first_bad_offset", r->first_bad_offset);
	j_u64("user_verify_errors", user_bad);
	if (o->op == DMA32DEMO_OP_CHECKSUM) {
		j_hex("device_crc", r->device_crc);
		j_hex("cpu_crc", r->cpu_crc);
	}
	j_u64("alloc_failures", r->alloc_failures);
	j_u64("coherent_asked", r->coherent_asked);
	j_u64("coherent_held", r->coherent_held);
	j_u64("coherent_swiotlb_bytes", r->coherent_swiotlb_bytes);
	j_u64("map_failures", r->map_failures);
	j_u64("map_failed_segments", r->map_failed_segments);
	if (o->strategy == DMA32DEMO_STRATEGY_TRUNCATION_ALIAS)
		j_u64("alias_canary_errors", r->alias_canary_errors);
	j_u64("cpu_ns", o->cpu_ns);
	print_runs_json(o, r, r != &z && addrs);
	print_counters(o);
	j_end();
}

static void print_table(const struct run_opts *o,
			const struct dma32demo_result *r, int err,
			__u64 user_bad)
{
	char a[32];
	double ms = r->ns / 1e6;
	int i;

	printf("%-16s %s %s, %s x %llu%s\n", "request",
	       strategy_names[o->strategy], op_names[o->op],
	       human(o->size, a, sizeof(a)), (unsigned long long)o->count,
	       o->flags & DMA32DEMO_RUN_VERIFY ? ", verify" : "");
	printf("%-16s %s\n", "result", err ? errname(err) : "ok");
	printf("%-16s %llu in %.3f ms (%.1f MiB/s); device time %.3f ms\n",
	       "bytes", (unsigned long long)r->bytes, ms,
	       ms > 0 ? r->bytes / 1048576.0 / (ms / 1000) : 0.0,
	       r->dma_ns / 1e6);
	printf("%-16s %llu allocated, %llu verified%s\n", "buffers",
	       (unsigned long long)r->buffers,
	       (unsigned long long)r->buffers_verified,
	       o->flags & DMA32DEMO_RUN_VERIFY ? "" : " (no --verify)");
	printf("%-16s %llu submitted, %llu completed ok\n", "descriptors",
	       (unsigned long long)r->descriptors,
	       (unsigned long long)r->transfers);
	printf("%-16s %llu, %llu above 4 GiB, %llu bounced (%llu bytes)\n",
	       "mappings", (unsigned long long)r->mappings,
	       (unsigned long long)r->mappings_above_4g,
	       (unsigned long long)r->bounced,
	       (unsigned long long)r->bounced_bytes);
	printf("%-16s %llu, %llu above 4 GiB;", "pages",
	       (unsigned long long)r->pages,
	       (unsigned long long)r->pages_above_4g);
	for (i = 0; i < DMA32DEMO_NR_ZONES; i++)
		printf(" %s %llu", zone_names[i],
		       (unsigned long long)r->zone_pages[i]);
	putchar('\n');
	printf("%-16s %llu", "device faults",
	       (unsigned long long)r->device_faults);
	if (r->device_faults && (r->flags & DMA32DEMO_RESULT_ADDRESSES_HIDDEN))
		printf(", status %u (info 0x%08x; addresses hidden: no CAP_SYS_ADMIN)",
		       r->dev_status, r->fault_info);
	else if (r->device_faults)
		printf(", first at 0x%llx (status %u), latched 0x%llx (info 0x%08x)",
		       (unsigned long long)r->fault_addr, r->dev_status,
		       (unsigned long long)r->latched_fault_addr, r->fault_info);
	putchar('\n');
	if (r->timeouts || r->resets)
		printf("%-16s %u timeouts, %u device resets\n", "recovery",
		       r->timeouts, r->resets);
	if (o->op == DMA32DEMO_OP_CHECKSUM && (o->flags & DMA32DEMO_RUN_VERIFY))
		printf("%-16s device 0x%08x, cpu 0x%08x\n", "crc32c",
		       r->device_crc, r->cpu_crc);
	if (r->verify_errors || user_bad)
		printf("%-16s %llu bad (first at offset %llu), %llu bad seen by the tool\n",
		       "verify", (unsigned long long)r->verify_errors,
		       (unsigned long long)r->first_bad_offset,
		       (unsigned long long)user_bad);
	if (r->alloc_failures) {
		printf("%-16s %llu (%llu mappings refused); ", "alloc failures",
		       (unsigned long long)r->alloc_failures,
		       (unsigned long long)r->map_failures);
		printf("coherent asked %llu bytes while holding %llu\n",
		       (unsigned long long)r->coherent_asked,
		       (unsigned long long)r->coherent_held);
	}
	if (r->coherent_swiotlb_bytes)
		printf("%-16s %llu coherent bytes of this device held in the swiotlb pool\n",
		       "swiotlb held", (unsigned long long)r->coherent_swiotlb_bytes);
	if (!o->runs_max)
		return;
	if (r->flags & DMA32DEMO_RESULT_ADDRESSES_HIDDEN) {
		printf("%-16s hidden (no CAP_SYS_ADMIN)\n", "address runs");
		return;
	}
	printf("%-16s %u shown, %u more not (--runs)\n", "address runs",
	       r->runs, r->runs_dropped);
	for (i = 0; i < (int)r->runs; i++) {
		const struct dma32demo_addr_run *a = &o->runs[i];
		char dma[24] = "unmapped";

		if (!(a->flags & DMA32DEMO_ADDR_UNMAPPED))
			snprintf(dma, sizeof(dma), "0x%llx",
				 (unsigned long long)a->dma);
		if (a->buffer == DMA32DEMO_ADDR_DEVICE_BUFFER)
			printf("  %-14s", a->flags & DMA32DEMO_ADDR_RING ?
			       "ring" : "control buffer");
		else
			printf("  buffer %-7u", a->buffer);
		printf("phys 0x%llx dma %s, %u pages%s%s%s\n",
		       (unsigned long long)a->phys, dma, a->pages,
		       a->flags & DMA32DEMO_ADDR_BOUNCED ? ", bounced" : "",
		       a->flags & DMA32DEMO_ADDR_IN_POOL ?
		       ", in the swiotlb pool" : "",
		       a->flags & DMA32DEMO_ADDR_RESERVED ? ", reserved" : "");
	}
}

static int cmd_run(int argc, char **argv)
{
	struct run_opts o = { .count = 1, .runs_max = DEFAULT_RUNS };
	struct dma32demo_run run;
	__u64 user_bad = 0, total = 0;
	__u8 *ubuf = NULL;
	bool have_size = false;
	int fd, ret, err;

	static const struct option opts[] = {
		{ "strategy", required_argument, NULL, 's' },
		{ "op", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "verify", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "inject", required_argument, NULL, 'i' },
		{ "counter", required_argument, NULL, 'k' },
		{ "runs", required_argument, NULL, 'r' },
		{ "device", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	__u64 v;
	int c;

	optind = 0;	/* argv[0] is "run" */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.strategy = lookup("strategy", strategy_names,
					    DMA32DEMO_STRATEGY_MAX + 1, optarg);
			break;
		case 'o':
			o.op = lookup("op", op_names, DMA32DEMO_OP_MAX + 1,
				      optarg);
			break;
		case 'S':
			o.size = parse_size("--size", optarg);
			have_size = true;
			break;
		case 'c':
			o.count = parse_size("--count", optarg);
			break;
		case 'v':
			o.flags |= DMA32DEMO_RUN_VERIFY;
			break;
		case 'j':
			o.json = true;
			break;
		case 'i':
			if (!strcmp(optarg, "stall"))
				o.flags |= DMA32DEMO_RUN_INJECT_STALL;
			else if (!strcmp(optarg, "bus-error"))
				o.flags |= DMA32DEMO_RUN_INJECT_BUS_ERROR;
			else
				die("run: unknown --inject '%s' (stall or bus-error)",
				    optarg);
			break;
		case 'k':
			if (o.nr_counters == MAX_COUNTERS)
				die("run: at most %d --counter files", MAX_COUNTERS);
			if (optarg[0] != '/')
				die("run: --counter '%s' is not an absolute path",
				    optarg);
			/* Each is a key of "counters": one of a name */
			for (v = 0; v < (__u64)o.nr_counters; v++)
				if (!strcmp(o.counters[v].path, optarg))
					die("run: --counter '%s' given twice",
					    optarg);
			o.counters[o.nr_counters++].path = optarg;
			break;
		case 'r':
			v = parse_size("--runs", optarg);
			if (v > DMA32DEMO_MAX_RUNS)
				die("run: --runs %llu: at most %d",
				    (unsigned long long)v, DMA32DEMO_MAX_RUNS);
			o.runs_max = v;
			break;
		case 'd':
			device_path = optarg;
			break;
		case ':':
			die("run: %s needs a value", argv[optind - 1]);
			break;
		default:
			die("run: unknown option '%s' (see dma32ctl --help)",
			    argv[optind - 1]);
		}
	}
	if (optind < argc)
		die("run: unexpected argument '%s' (see dma32ctl --help)",
		    argv[optind]);
	if (o.json)	/* ZONE_DMA's free pages: did the request leak? */
		o.counters[o.nr_counters++].path = "zone:DMA";
	if (!o.strategy || !o.op || !have_size)
		die("run: --strategy, --op and --size are required");

	memset(&run, 0, sizeof(run));
	run.strategy = o.strategy;
	run.op = o.op;
	run.size = o.size;
	run.count = o.count;
	run.flags = o.flags;
	if (o.runs_max) {
		o.runs = calloc(o.runs_max, sizeof(*o.runs));
		if (!o.runs)
			die("run: out of memory");
		run.runs_addr = (unsigned long)o.runs;
		run.runs_max = o.runs_max;
	}

	/* For size or count 0 the driver gives the errno (EINVAL) */
	if (o.strategy == DMA32DEMO_STRATEGY_USER && o.size && o.count) {
		unsigned int nb = o.op == DMA32DEMO_OP_COPY ? 2 : 1;

		if (__builtin_mul_overflow(o.size, o.count, &total) ||
		    __builtin_mul_overflow(total, nb, &total) ||
		    total > SIZE_MAX / 2)
			die("run: --size x --count is too large for a user buffer");
		ubuf = mmap(NULL, total, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (ubuf == MAP_FAILED)
			die("run: cannot map a %llu-byte user buffer: %s",
			    (unsigned long long)total, strerror(errno));
		if (o.op == DMA32DEMO_OP_FILL)
			memset(ubuf, 0, total);
		else
			fill_pattern(ubuf, o.size * o.count, getpid());
		if (o.op == DMA32DEMO_OP_COPY)
			memset(ubuf + o.size * o.count, 0, o.size * o.count);
		run.user_addr = (unsigned long)ubuf;
		run.user_len = total;
	}

	fd = open_dev();
	sample_counters(&o, false);
	o.cpu_ns = cpu_ns();
	/*
	 * The driver writes the result whenever the request ran (also when
	 * it failed), never when it refused it first (an argument, fault
	 * injection not allowed, the device gone before it started): a
	 * result whose error is still this was not written.
	 */
	run.result.error = RESULT_UNWRITTEN;
	ret = ioctl(fd, DMA32DEMO_IOC_RUN, &run);
	err = ret ? errno : 0;
	o.cpu_ns = cpu_ns() - o.cpu_ns;
	sample_counters(&o, true);
	close(fd);

	/* Zero copy: the tool sees the device's work in its own buffer */
	if (ubuf && o.op == DMA32DEMO_OP_COPY &&
	    (o.flags & DMA32DEMO_RUN_VERIFY) && !err) {
		__u64 n = o.size * o.count, k;

		for (k = 0; k < n; k++)
			user_bad += ubuf[k] != ubuf[n + k];
		if (user_bad)
			err = EILSEQ;
	}
	if (ubuf)
		munmap(ubuf, total);

	/* Refused before it ran: no result, only the errno */
	if (err && run.result.error == RESULT_UNWRITTEN) {
		if (o.json)
			print_json(&o, NULL, err, 0);
		fflush(stdout);
		fprintf(stderr, "dma32ctl: run: %s (%s)\n", errname(err),
			strerror(err));
		return 1;
	}
	if (o.json)
		print_json(&o, &run.result, err, user_bad);
	else
		print_table(&o, &run.result, err, user_bad);
	if (err) {
		/*
		 * Out before the message: with both on one pipe, a result over
		 * stdio's buffer would otherwise be cut in two by it.
		 */
		fflush(stdout);
		fprintf(stderr, "dma32ctl: run: %s (%s)", errname(err),
			strerror(err));
		if (run.result.device_faults)
			fprintf(stderr, ": %llu device faults, first at 0x%llx",
				(unsigned long long)run.result.device_faults,
				(unsigned long long)run.result.fault_addr);
		if (run.result.coherent_asked)
			fprintf(stderr,
				": coherent allocation of %llu bytes failed after %llu buffers, driver holds %llu coherent bytes",
				(unsigned long long)run.result.coherent_asked,
				(unsigned long long)run.result.buffers,
				(unsigned long long)run.result.coherent_held);
		else if (err == ENOMEM)
			fprintf(stderr, ": after %llu of %llu buffers",
				(unsigned long long)run.result.buffers,
				(unsigned long long)(o.count *
				(o.op == DMA32DEMO_OP_COPY ? 2 : 1)));
		fputc('\n', stderr);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option global[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option local[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "device", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd;
	bool json = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", global, NULL)) != -1) {
		switch (c) {
		case 'd':
			device_path = optarg;
			break;
		case 'h':
			print_help(stdout);
			return 0;
		case ':':
			die("%s needs a value", argv[optind - 1]);
			break;
		default:
			die("unknown option '%s' (see dma32ctl --help)",
			    argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		print_help(stderr);
		return 2;
	}
	cmd = argv[optind];
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - optind, argv + optind);
	argc -= optind;
	argv += optind;
	optind = 0;	/* argv[0] is the command */
	while ((c = getopt_long(argc, argv, "+:", local, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'd':
			device_path = optarg;
			break;
		case ':':
			die("%s: %s needs a value", cmd, argv[optind - 1]);
			break;
		default:
			die("%s: unknown option '%s'", cmd, argv[optind - 1]);
		}
	}
	if (optind < argc)
		die("%s: unexpected argument '%s'", cmd, argv[optind]);
	if (!strcmp(cmd, "info"))
		return cmd_info(json);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(json);
	if (!strcmp(cmd, "reset"))
		return cmd_reset();
	die("unknown command '%s' (info, run, stats, reset)", cmd);
	return 2;
}
