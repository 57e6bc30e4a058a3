// SPDX-License-Identifier: GPL-2.0
/*
 * dma32ctl: user tool for the dma32demo driver (/dev/dma32demoN).
 *
 *   dma32ctl [--device DEV] info [--json]
 *   dma32ctl [--device DEV] run --strategy S --op O --size N[K|M|G]
 *                               [--count K] [--verify] [--json]
 *                               [--inject stall|bus-error]
 *                               [--counter FILE]...
 *   dma32ctl [--device DEV] stats [--json]
 *   dma32ctl [--device DEV] reset
 *
 * Built static for the guest:
 *   gcc -static -O2 -Wall -Wextra -I driver/uapi -I qemu-device \
 *       -o dma32ctl dma32ctl.c
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dma32demo.h"
#include "dma32-demo-regs.h"

#define DEFAULT_DEVICE "/dev/dma32demo0"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const strategy_names[] = {
	[DMA32DEMO_STRATEGY_COHERENT] = "coherent",
	[DMA32DEMO_STRATEGY_STREAMING] = "streaming",
	[DMA32DEMO_STRATEGY_STREAMING_DMA32] = "streaming-dma32",
	[DMA32DEMO_STRATEGY_USER] = "user",
	[DMA32DEMO_STRATEGY_UNSAFE_RAW] = "unsafe-raw",
};

static const char *const op_names[] = {
	[DMA32DEMO_OP_FILL] = "fill",
	[DMA32DEMO_OP_CHECKSUM] = "checksum",
	[DMA32DEMO_OP_COPY] = "copy",
};

static const char *const zone_names[DMA32DEMO_NR_ZONES] = {
	"DMA", "DMA32", "Normal", "other",
};

static const char *device_path = DEFAULT_DEVICE;

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("dma32ctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: dma32ctl [--device DEV] COMMAND [OPTIONS]\n"
		"  info  [--json]            device capabilities and driver settings\n"
		"  run   --strategy S --op O --size N[K|M|G] [--count K] [--verify]\n"
		"        [--json] [--inject stall|bus-error] [--counter FILE]...\n"
		"        --counter: a kernel counter file read right before and\n"
		"        after the request, reported in the JSON (null if absent)\n"
		"        strategies: coherent streaming streaming-dma32 user unsafe-raw\n"
		"        ops: fill checksum copy\n"
		"  stats [--json]            driver counters\n"
		"  reset                     zero the counters\n"
		"DEV defaults to " DEFAULT_DEVICE ". Exit status: 0 ok, 1 request\n"
		"failed (the errno name is printed), 2 usage or device error.\n");
}

static const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : NULL;

	return n ? n : "EUNKNOWN";
}

static int open_dev(void)
{
	int fd = open(device_path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("%s: %s (%s)", device_path, errname(errno), strerror(errno));
	return fd;
}

static int lookup(const char *what, const char *const *names, int n,
		  const char *s)
{
	int i;

	for (i = 1; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	fprintf(stderr, "dma32ctl: unknown %s '%s' (one of:", what, s);
	for (i = 1; i < n; i++)
		fprintf(stderr, " %s", names[i]);
	fputs(")\n", stderr);
	exit(2);
}

/*
 * A number (decimal, 0x hex or 0 octal) with an optional K, M or G suffix
 * and an optional B or iB. strtoull() alone would also take leading white
 * space, a sign ('-1' is ULLONG_MAX) and let the suffix shift bits out of
 * the top: only a digit may start it, and a suffix that overflows is an
 * error.
 */
static __u64 parse_size(const char *opt, const char *s)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		goto bad;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		goto bad;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	}
	if (shift) {
		if (v > ULLONG_MAX >> shift)
			goto bad;
		v <<= shift;
		end++;
	}
	if (end[0] == 'i' && end[1] == 'B')
		end += 2;
	else if (end[0] == 'B')
		end++;
	if (*end)
		goto bad;
	return v;
bad:
	die("bad %s '%s': expected a number with an optional K, M or G suffix, below 2^64",
	    opt, s);
	return 0;
}

static const char *human(__u64 v, char *buf, size_t len)
{
	static const char units[] = "GMK";
	int i;

	for (i = 0; i < 3; i++) {
		unsigned int shift = 30 - 10 * i;

		if (v >= (1ull << shift) && !(v & ((1ull << shift) - 1))) {
			snprintf(buf, len, "%llu%c",
				 (unsigned long long)(v >> shift), units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* JSON output: one object per line */

static bool j_first;

static void j_key(const char *k)
{
	printf("%s\"%s\":", j_first ? "" : ",", k);
	j_first = false;
}

static void j_begin(void)
{
	putchar('{');
	j_first = true;
}

static void j_end(void)
{
	puts("}");
}

static void j_obj(const char *k)
{
	j_key(k);
	putchar('{');
	j_first = true;
}

static void j_obj_end(void)
{
	putchar('}');
	j_first = false;
}

static void j_u64(const char *k, __u64 v)
{
	j_key(k);
	printf("%llu", (unsigned long long)v);
}

static void j_hex(const char *k, __u64 v)
{
	j_key(k);
	printf("\"0x%08llx\"", (unsigned long long)v);
}

static void j_str(const char *k, const char *v)
{
	j_key(k);
	if (v)
		printf("\"%s\"", v);
	else
		fputs("null", stdout);
}

static void j_bool(const char *k, bool v)
{
	j_key(k);
	fputs(v ? "true" : "false", stdout);
}

/* info */

static int cmd_info(bool json)
{
	struct dma32demo_info in;
	int fd = open_dev();
	char ver[16];

	memset(&in, 0, sizeof(in));
	if (ioctl(fd, DMA32DEMO_IOC_INFO, &in))
		die("INFO: %s (%s)", errname(errno), strerror(errno));
	close(fd);
	snprintf(ver, sizeof(ver), "%u.%u", in.version >> 16,
		 in.version & 0xffff);
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
		j_bool("mask_forced", in.flags & DMA32DEMO_INFO_MASK_FORCED);
		j_bool("coherent_mask_forced",
		       in.flags & DMA32DEMO_INFO_COHERENT_MASK_FORCED);
		j_bool("swiotlb", in.flags & DMA32DEMO_INFO_SWIOTLB_ACTIVE);
		j_u64("swiotlb_start", in.swiotlb_start);
		j_u64("swiotlb_end", in.swiotlb_end);
		j_u64("ring_dma", in.ring_dma);
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
	printf("%-20s %u of %u entries at bus address 0x%llx\n", "ring",
	       in.ring_entries, in.max_ring, (unsigned long long)in.ring_dma);
	printf("%-20s %s\n", "overflow",
	       in.features & DMA32_DEMO_FEAT_TRUNCATE ?
	       "truncate (upper address bits dropped)" : "fault");
	printf("%-20s %s\n", "interrupt",
	       in.irq_mode == DMA32DEMO_IRQ_MSI ? "MSI" : "INTx");
	if (in.flags & DMA32DEMO_INFO_SWIOTLB_ACTIVE)
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
	printf("%-20s %u ms\n", "timeout", in.timeout_ms);
	return 0;
}

/* stats */

static int cmd_stats(bool json)
{
	struct dma32demo_stats s;
	const struct {
		const char *name;
		const __u64 *v;
	} f[] = {
		{ "requests", &s.requests },
		{ "errors", &s.errors },
		{ "transfers", &s.transfers },
		{ "bytes", &s.bytes },
		{ "mappings", &s.mappings },
		{ "bounced_mappings", &s.bounced_mappings },
		{ "bounced_bytes", &s.bounced_bytes },
		{ "device_faults", &s.device_faults },
		{ "alloc_failures", &s.alloc_failures },
		{ "timeouts", &s.timeouts },
		{ "resets", &s.resets },
		{ "coherent_bytes_held", &s.coherent_bytes_held },
	};
	int fd = open_dev();
	unsigned int i;

	memset(&s, 0, sizeof(s));
	if (ioctl(fd, DMA32DEMO_IOC_STATS, &s))
		die("STATS: %s (%s)", errname(errno), strerror(errno));
	close(fd);

	if (json)
		j_begin();
	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (json)
			j_u64(f[i].name, *f[i].v);
		else
			printf("%-20s %llu\n", f[i].name,
			       (unsigned long long)*f[i].v);
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
#define MAX_COUNTERS 16

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

static void j_maybe(const char *k, bool have, __u64 v)
{
	if (have)
		j_u64(k, v);
	else
		j_str(k, NULL);
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

static void fill_pattern(__u8 *p, size_t len, __u64 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = dma32_demo_pattern_word(seed, i / 8) >> ((i % 8) * 8);
}

static void print_json(const struct run_opts *o,
		       const struct dma32demo_result *r, int err,
		       __u64 user_bad)
{
	const struct dma32demo_result z = { 0 };
	int i;

	if (!r)
		r = &z;
	j_begin();
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
	j_u64("fault_addr", r->fault_addr);
	j_u64("latched_fault_addr", r->latched_fault_addr);
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
	j_u64("cpu_ns", o->cpu_ns);
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
	if (r->device_faults)
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
	if (r->alloc_failures)
		printf("%-16s %llu; coherent asked %llu bytes while holding %llu\n",
		       "alloc failures", (unsigned long long)r->alloc_failures,
		       (unsigned long long)r->coherent_asked,
		       (unsigned long long)r->coherent_held);
}

static int cmd_run(int argc, char **argv)
{
	struct run_opts o = { .count = 1 };
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
		{ "device", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
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
			o.counters[o.nr_counters++].path = optarg;
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

	/* Argument errors come back before the driver fills a result */
	if (err && !run.result.error && !user_bad) {
		if (o.json)
			print_json(&o, NULL, err, 0);
		fprintf(stderr, "dma32ctl: run: %s (%s)\n", errname(err),
			strerror(err));
		return 1;
	}
	if (o.json)
		print_json(&o, &run.result, err, user_bad);
	else
		print_table(&o, &run.result, err, user_bad);
	if (err) {
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

/*
 * selftest-ioctls (hidden): every malformed request gets its errno. One
 * line per check, "ok - ..." or "not ok - ... # got X", for a KTAP script
 * to number. Exit 0 when all checks passed.
 */

static int st_fails, st_fd;

static void st_report(bool ok, const char *desc, const char *why)
{
	if (!ok)
		st_fails++;
	printf("%s - %s%s%s\n", ok ? "ok" : "not ok", desc, ok ? "" : " # ",
	       ok ? "" : why);
}

static void st_expect(const char *desc, unsigned long cmd, void *arg,
		      int want)
{
	char why[96];
	int ret = ioctl(st_fd, cmd, arg);
	int got = ret ? errno : 0;

	snprintf(why, sizeof(why), "got %s, expected %s",
		 got ? errname(got) : "success", want ? errname(want) : "success");
	st_report(got == want, desc, why);
}

static void st_run(const char *desc, const struct dma32demo_run *tmpl,
		   int want)
{
	struct dma32demo_run r = *tmpl;

	st_expect(desc, DMA32DEMO_IOC_RUN, &r, want);
}

static int cmd_selftest(void)
{
	struct dma32demo_stats before, after;
	struct dma32demo_info info;
	struct dma32demo_run ok = {
		.strategy = DMA32DEMO_STRATEGY_COHERENT,
		.op = DMA32DEMO_OP_FILL,
		.size = 4096,
		.count = 1,
		.flags = DMA32DEMO_RUN_VERIFY,
	};
	struct dma32demo_run r;
	long pg = sysconf(_SC_PAGESIZE);
	__u8 *map, *ro;
	char desc[96];

	st_fd = open_dev();
	if (ioctl(st_fd, DMA32DEMO_IOC_INFO, &info) ||
	    ioctl(st_fd, DMA32DEMO_IOC_STATS, &before))
		die("INFO/STATS: %s", errname(errno));

	st_run("valid request succeeds", &ok, 0);

	r = ok;
	r.strategy = 0;
	st_run("strategy 0 gives EINVAL", &r, EINVAL);
	r.strategy = 99;
	st_run("unknown strategy gives EINVAL", &r, EINVAL);
	r = ok;
	r.op = 0;
	st_run("op 0 gives EINVAL", &r, EINVAL);
	r.op = 7;
	st_run("unknown op gives EINVAL", &r, EINVAL);
	r = ok;
	r.size = 0;
	st_run("size 0 gives EINVAL", &r, EINVAL);
	r.size = (__u64)info.max_xfer + 1;
	snprintf(desc, sizeof(desc), "size max_xfer+1 (%llu) gives E2BIG",
		 (unsigned long long)r.size);
	st_run(desc, &r, E2BIG);
	r = ok;
	r.count = 0;
	st_run("count 0 gives EINVAL", &r, EINVAL);
	r.count = DMA32DEMO_MAX_COUNT + 1;
	st_run("count above DMA32DEMO_MAX_COUNT gives E2BIG", &r, E2BIG);
	r.size = 1 << 20;
	r.count = ~0ull / 1024;
	st_run("size x count overflow gives EOVERFLOW", &r, EOVERFLOW);
	r.op = DMA32DEMO_OP_COPY;
	r.size = 1ull << 32;
	r.count = 1ull << 31;
	st_run("copy size x count x 2 overflow gives EOVERFLOW", &r,
	       EOVERFLOW);
	r = ok;
	r.size = 1 << 20;
	r.count = DMA32DEMO_MAX_COUNT;
	st_run("request larger than max_request_mb gives E2BIG", &r, E2BIG);
	r = ok;
	r.flags = 0x80000000u;
	st_run("unknown flag gives EINVAL", &r, EINVAL);
	r = ok;
	r.reserved0 = 1;
	st_run("reserved0 set gives EINVAL", &r, EINVAL);
	r = ok;
	r.reserved1[1] = 1;
	st_run("reserved1 set gives EINVAL", &r, EINVAL);
	r = ok;
	r.user_addr = 0x10000;
	r.user_len = 4096;
	st_run("user_addr with a kernel strategy gives EINVAL", &r, EINVAL);

	map = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (map == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	r = ok;
	r.strategy = DMA32DEMO_STRATEGY_USER;
	r.user_addr = (unsigned long)map;
	r.user_len = 4096;
	st_run("valid user request succeeds", &r, 0);
	r.user_addr = 0;
	st_run("user NULL pointer gives EFAULT", &r, EFAULT);
	r.user_addr = (unsigned long)map + 8;
	st_run("user misaligned pointer gives EINVAL", &r, EINVAL);
	r.user_addr = (unsigned long)map;
	r.user_len = 8192;
	st_run("user_len not size x count gives EINVAL", &r, EINVAL);
	r.size = 100;
	r.count = 2;
	r.user_len = 200;
	st_run("user destinations sharing a cache line give EINVAL", &r,
	       EINVAL);
	r.size = 4096;
	r.count = 1;
	munmap(map + 2 * pg, 2 * pg);
	r.user_addr = (unsigned long)map + 2 * pg;
	r.user_len = 4096;
	st_run("user unmapped pointer gives EFAULT", &r, EFAULT);
	r.user_addr = (unsigned long)map + pg;
	r.size = 2 * pg;
	r.user_len = 2 * pg;
	st_run("user buffer running into a hole gives EFAULT", &r, EFAULT);
	r.user_addr = 0xffff800000000000ull;
	r.size = 4096;
	r.user_len = 4096;
	st_run("user kernel address gives EFAULT", &r, EFAULT);
	ro = mmap(NULL, pg, PROT_READ,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (ro == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	r.user_addr = (unsigned long)ro;
	st_run("user read-only buffer as fill target gives EFAULT", &r, EFAULT);
	r.op = DMA32DEMO_OP_CHECKSUM;
	st_run("user read-only buffer as checksum source succeeds", &r, 0);
	munmap(ro, pg);
	munmap(map, 2 * pg);

	r = ok;
	r.strategy = DMA32DEMO_STRATEGY_UNSAFE_RAW;
	if (info.flags & DMA32DEMO_INFO_ALLOW_UNSAFE)
		printf("ok - unsafe-raw without allow_unsafe gives EPERM # SKIP allow_unsafe=1\n");
	else
		st_run("unsafe-raw without allow_unsafe gives EPERM", &r, EPERM);

	st_expect("unknown ioctl gives ENOTTY", _IO(DMA32DEMO_IOC_MAGIC, 42),
		  NULL, ENOTTY);
	st_expect("RUN with a wrong size in the command gives ENOTTY",
		  _IOWR(DMA32DEMO_IOC_MAGIC, 1, __u64), &r, ENOTTY);
	st_expect("RUN with a NULL argument gives EFAULT", DMA32DEMO_IOC_RUN,
		  NULL, EFAULT);
	st_expect("RUN with an unmapped argument gives EFAULT",
		  DMA32DEMO_IOC_RUN, (void *)16, EFAULT);
	st_expect("INFO with a NULL argument gives EFAULT", DMA32DEMO_IOC_INFO,
		  NULL, EFAULT);
	st_expect("STATS with a NULL argument gives EFAULT",
		  DMA32DEMO_IOC_STATS, NULL, EFAULT);

	st_run("valid request still succeeds afterwards", &ok, 0);
	if (ioctl(st_fd, DMA32DEMO_IOC_STATS, &after))
		die("STATS: %s", errname(errno));
	snprintf(desc, sizeof(desc),
		 "rejected ioctls are not counted (requests +%llu, errors +%llu)",
		 (unsigned long long)(after.requests - before.requests),
		 (unsigned long long)(after.errors - before.errors));
	/*
	 * Past validation: 4 that succeed (2 coherent, user fill, user
	 * checksum) and 3 whose pages cannot be pinned.
	 */
	st_report(after.requests - before.requests == 7 &&
		  after.errors - before.errors == 3, desc, "expected +7, +3");
	close(st_fd);
	return st_fails ? 1 : 0;
}

/*
 * fuzz (hidden): random ioctls on the device and random data into its sysfs
 * files, with a fixed seed, for tests/guest/fuzz.sh.
 *
 *   dma32ctl fuzz [--seed S] [--calls N] [--seconds T] [--sysfs-every K]
 *
 * It makes at least N ioctl calls and, with --seconds, keeps going until T
 * seconds have passed too: the time-bounded mode for long runs.
 *
 * Every RUN gets random fields (valid and invalid strategies, ops, flags,
 * sizes, counts, reserved fields, user pointers and lengths) and an
 * argument that is valid, NULL, unmapped, read-only, straddling a guard
 * page or a kernel address; other calls are INFO, STATS, RESET_STATS and
 * random ioctl numbers. The tool predicts the errno of every call that the
 * driver must reject and the set of errnos allowed for one that it runs,
 * checks the result of every request that succeeds (and that verified
 * data never mismatch), and checks the canary bytes around every buffer it
 * hands the driver: each lives in a mapping with PROT_NONE guard pages on
 * both sides, the rest of the mapping filled with canary bytes. Exit 1 on
 * any canary violation, mismatch or unexpected result.
 */

static __u64 fz_state;

static __u64 fz_rand(void)
{
	__u64 z = (fz_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static __u64 fz_below(__u64 n)
{
	return n ? fz_rand() % n : 0;
}

static bool fz_pct(unsigned int pct)
{
	return fz_below(100) < pct;
}

#define FZ_MAX_ERRNO 256

struct fz_counts {
	unsigned long calls, ok, runs, runs_ran, runs_ok, verified;
	unsigned long long bytes_verified;
	unsigned long err[FZ_MAX_ERRNO];
	unsigned long canary, mismatch, unexpected;
	unsigned long sysfs_reads, sysfs_read_errors;
	unsigned long sysfs_writes, sysfs_write_refused;
	/* Requests past validation since the last RESET_STATS */
	unsigned long long st_requests, st_errors;
};

static struct fz_counts fz;
static unsigned long fz_call;
static long fz_pg;

static void fz_bad(unsigned long *counter, const char *fmt, ...)
{
	va_list ap;

	(*counter)++;
	if (fz.canary + fz.mismatch + fz.unexpected > 50)
		return;
	fprintf(stderr, "fuzz: call %lu: ", fz_call);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * A guarded mapping: [PROT_NONE][lead canary pages][buffer, canary to the
 * page end][trail canary pages][PROT_NONE]. The buffer is at a page
 * boundary (user buffers) or ends right at the trailing guard page.
 */
struct fz_map {
	__u8 *base;
	size_t maplen;
	__u8 *lo, *hi;		/* the accessible part */
	__u8 *buf;
	size_t len;
};

static __u8 fz_canary(size_t off)
{
	return 0xa5 ^ (__u8)(off * 7) ^ (__u8)(off >> 8);
}

static int fz_map_new(struct fz_map *m, size_t len, bool lead, bool trail,
		      bool at_end)
{
	size_t body = (len + fz_pg - 1) / fz_pg * fz_pg;
	size_t rw = body + (lead + trail) * fz_pg;
	size_t i;

	if (!body)
		body = fz_pg, rw += fz_pg;
	m->maplen = rw + 2 * fz_pg;
	m->base = mmap(NULL, m->maplen, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->base == MAP_FAILED) {
		m->base = NULL;
		return -1;
	}
	if (mprotect(m->base, fz_pg, PROT_NONE) ||
	    mprotect(m->base + fz_pg + rw, fz_pg, PROT_NONE))
		die("fuzz: mprotect: %s", strerror(errno));
	m->lo = m->base + fz_pg;
	m->hi = m->lo + rw;
	m->len = len;
	m->buf = at_end ? m->hi - (trail ? fz_pg : 0) - len :
		 m->lo + (lead ? fz_pg : 0);
	for (i = 0; i < rw; i++)
		m->lo[i] = fz_canary(i);
	return 0;
}

/* Count the canary bytes outside [buf, buf + len) that changed */
static unsigned long fz_map_check(const struct fz_map *m, const char *what)
{
	size_t i, rw = m->hi - m->lo, b = m->buf - m->lo;
	unsigned long bad = 0;

	if (!m->base)
		return 0;
	for (i = 0; i < rw; i++) {
		if (i >= b && i < b + m->len)
			continue;
		if (m->lo[i] != fz_canary(i)) {
			if (!bad)
				fz_bad(&fz.canary,
				       "%s: canary byte changed at %+ld from the buffer",
				       what, i < b ? (long)i - (long)b :
				       (long)(i - b - m->len));
			bad++;
		}
	}
	return bad;
}

static void fz_map_free(struct fz_map *m)
{
	if (m->base)
		munmap(m->base, m->maplen);
	m->base = NULL;
}

/* Where an ioctl argument lives */
enum fz_arg {
	FZ_ARG_OK,		/* read-write, right before the guard page */
	FZ_ARG_MISALIGNED,	/* read-write, odd address */
	FZ_ARG_NULL,
	FZ_ARG_UNMAPPED,
	FZ_ARG_GUARD,		/* the PROT_NONE page */
	FZ_ARG_STRADDLE,	/* runs into the guard page */
	FZ_ARG_READONLY,	/* readable, not writable */
	FZ_ARG_KERNEL,
	FZ_ARG_NR,
};

static enum fz_arg fz_pick_arg(void)
{
	return fz_pct(85) ? (fz_pct(80) ? FZ_ARG_OK : FZ_ARG_MISALIGNED) :
	       (enum fz_arg)fz_below(FZ_ARG_NR);
}

static __u8 *fz_unmapped;	/* a page that is not mapped */

/*
 * Place @len bytes of @src for an ioctl according to @a; returns the
 * pointer to hand the kernel. The mapping @m holds it (or is empty).
 */
static void *fz_arg_place(struct fz_map *m, enum fz_arg a, const void *src,
			  size_t len)
{
	memset(m, 0, sizeof(*m));
	switch (a) {
	case FZ_ARG_NULL:
		return NULL;
	case FZ_ARG_UNMAPPED:
		return fz_unmapped + fz_below(fz_pg);
	case FZ_ARG_KERNEL:
		return (void *)(0xffff888000000000ull + fz_below(1ull << 30));
	default:
		break;
	}
	if (fz_map_new(m, len + 1, true, a == FZ_ARG_MISALIGNED, true))
		die("fuzz: mmap: %s", strerror(errno));
	if (a == FZ_ARG_MISALIGNED)
		m->buf -= 1 + fz_below(7);
	else
		m->buf++;	/* ends at the guard page */
	m->len = len;
	memcpy(m->buf, src, len);
	switch (a) {
	case FZ_ARG_GUARD:
		return m->base + fz_below(fz_pg);
	case FZ_ARG_STRADDLE:
		return m->buf + len / 2 + 1;
	case FZ_ARG_READONLY:
		if (mprotect(m->lo, m->hi - m->lo, PROT_READ))
			die("fuzz: mprotect: %s", strerror(errno));
		return m->buf;
	default:
		return m->buf;
	}
}

static bool fz_arg_readable(enum fz_arg a)
{
	return a == FZ_ARG_OK || a == FZ_ARG_MISALIGNED ||
	       a == FZ_ARG_READONLY;
}

static bool fz_arg_writable(enum fz_arg a)
{
	return a == FZ_ARG_OK || a == FZ_ARG_MISALIGNED;
}

static void fz_count(int err)
{
	fz.calls++;
	if (!err)
		fz.ok++;
	else
		fz.err[err < FZ_MAX_ERRNO ? err : 0]++;
}

static struct dma32demo_info fz_info;
static unsigned int fz_max_request_mb = 1024;
static int fz_fd;

/* The sizes worth trying: edges of pages, segments and the device */
static __u64 fz_size(void)
{
	static const __u64 small[] = {
		1, 2, 3, 7, 8, 9, 63, 511, 512, 4095, 4096, 4097, 8191, 8192,
		12288, 65535, 65536, 65537, 131072, 262144,
	};
	__u64 r = fz_below(100);

	if (r < 60)
		return small[fz_below(ARRAY_SIZE(small))];
	if (r < 85)
		return 1 + fz_below(256 * 1024);
	if (r < 90)
		return 1 + fz_below(4 << 20);
	switch (fz_below(8)) {
	case 0:
		return 0;
	case 1:
		return fz_info.max_xfer;
	case 2:
		return (__u64)fz_info.max_xfer + 1;
	case 3:
		return 1ull << 32;
	case 4:
		return 1ull << 63;
	case 5:
		return ~0ull;
	case 6:
		return ~0ull / 2 + 1 + fz_below(3);
	default:
		return fz_rand();
	}
}

static __u64 fz_count_field(void)
{
	__u64 r = fz_below(100);

	if (r < 70)
		return 1 + fz_below(4);
	if (r < 85)
		return 1 + fz_below(32);
	switch (fz_below(9)) {
	case 0:
		return 0;
	case 1:
		return DMA32DEMO_MAX_COUNT;
	case 2:
		return DMA32DEMO_MAX_COUNT + 1;
	case 3:
		return 1ull << 32;
	case 4:
		return ~0ull;
	case 5:
		return 1ull << 63;
	case 6:
		return (1ull << 63) / 4096 + fz_below(2);
	case 7:
		return 1 + fz_below(DMA32DEMO_MAX_COUNT);
	default:
		return fz_rand();
	}
}

/* What the driver's argument checks must say (0: it runs the request) */
static int fz_expect_validation(const struct dma32demo_run *r, __u64 *totalp)
{
	__u64 total;

	if (r->strategy < 1 || r->strategy > DMA32DEMO_STRATEGY_MAX)
		return -EINVAL;
	if (r->op < 1 || r->op > DMA32DEMO_OP_MAX)
		return -EINVAL;
	if (r->flags & ~DMA32DEMO_RUN_FLAGS_ALL)
		return -EINVAL;
	if (r->reserved0 || r->reserved1[0] || r->reserved1[1])
		return -EINVAL;
	if (!r->size || !r->count)
		return -EINVAL;
	if (__builtin_mul_overflow(r->size, r->count, &total) ||
	    (r->op == DMA32DEMO_OP_COPY &&
	     __builtin_mul_overflow(total, 2, &total)))
		return -EOVERFLOW;
	*totalp = total;
	if (r->size > fz_info.max_xfer || r->count > DMA32DEMO_MAX_COUNT ||
	    total > (__u64)fz_max_request_mb << 20)
		return -E2BIG;
	if (r->strategy == DMA32DEMO_STRATEGY_USER) {
		if (!r->user_addr)
			return -EFAULT;
		if (r->user_addr & (fz_pg - 1) || r->user_len != total)
			return -EINVAL;
		/* destinations sharing a (64-byte) cache line */
		if (r->op != DMA32DEMO_OP_CHECKSUM && r->count > 1 &&
		    r->size % 64)
			return -EINVAL;
		if (r->user_addr >= 0x800000000000ull - total ||
		    total >= 0x800000000000ull)
			return -EFAULT;
	} else if (r->user_addr || r->user_len) {
		return -EINVAL;
	}
	if (r->strategy == DMA32DEMO_STRATEGY_UNSAFE_RAW &&
	    !(fz_info.flags & DMA32DEMO_INFO_ALLOW_UNSAFE))
		return -EPERM;
	return 0;
}

/* User buffer pointers */
enum fz_user {
	FZ_USER_OK,
	FZ_USER_NULL,
	FZ_USER_MISALIGNED,
	FZ_USER_UNMAPPED,
	FZ_USER_GUARD,		/* starts in the leading guard page */
	FZ_USER_SHORT,		/* runs into the trailing guard page */
	FZ_USER_KERNEL,
	FZ_USER_BADLEN,
	FZ_USER_READONLY,
	FZ_USER_NR,
};

static const char *const fz_user_names[] = {
	"ok", "null", "misaligned", "unmapped", "guard", "short", "kernel",
	"badlen", "readonly",
};

static void fz_pattern(__u8 *p, size_t len, __u64 seed)
{
	fill_pattern(p, len, seed);
}

static void fz_sync_errors(const struct dma32demo_stats *before)
{
	struct dma32demo_stats s;

	if (ioctl(fz_fd, DMA32DEMO_IOC_STATS, &s))
		die("fuzz: STATS: %s", errname(errno));
	if (s.requests != before->requests + 1)
		fz_bad(&fz.unexpected, "requests went from %llu to %llu",
		       (unsigned long long)before->requests,
		       (unsigned long long)s.requests);
	fz.st_errors += s.errors - before->errors;
}

/* One RUN call */
static void fz_run(void)
{
	struct dma32demo_stats before = { 0 };
	struct dma32demo_run r, sent;
	struct fz_map am, um = { 0 };
	enum fz_arg a = fz_pick_arg();
	enum fz_user u = FZ_USER_OK;
	__u64 total = 0, useed = fz_rand(), nbufs;
	int want, got, ret;
	bool ran, counted;
	void *argp;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.strategy = fz_pct(90) ? 1 + fz_below(DMA32DEMO_STRATEGY_MAX) :
		     (fz_pct(50) ? 0 : (__u32)fz_rand());
	r.op = fz_pct(92) ? 1 + fz_below(DMA32DEMO_OP_MAX) :
	       (fz_pct(50) ? 0 : (__u32)fz_rand());
	r.size = fz_size();
	r.count = fz_count_field();
	if (fz_pct(85))
		r.flags |= DMA32DEMO_RUN_VERIFY;
	if (fz_pct(2))
		r.flags |= DMA32DEMO_RUN_INJECT_BUS_ERROR;
	if (fz_pct(1) && fz_pct(40))
		r.flags |= DMA32DEMO_RUN_INJECT_STALL;
	if (fz_pct(3))
		r.flags |= 1u << fz_below(32);
	if (fz_pct(2))
		r.reserved0 = fz_rand() | 1;
	if (fz_pct(2))
		r.reserved1[fz_below(2)] = fz_rand() | 1;
	/* The output part goes in with garbage: the driver overwrites it */
	for (i = 0; i < sizeof(r.result); i++)
		((__u8 *)&r.result)[i] = fz_rand();

	/* Keep what actually reaches the device small, mostly */
	if (!fz_expect_validation(&r, &total) && total > (4u << 20) &&
	    (total > (64u << 20) || !fz_pct(3))) {
		r.count = 1;
		if (r.size > (4u << 20))
			r.size = 1 + fz_below(4u << 20);
	}
	nbufs = r.count * (r.op == DMA32DEMO_OP_COPY ? 2 : 1);
	total = 0;
	if (!__builtin_mul_overflow(r.size, nbufs, &total) &&
	    nbufs <= 2 * DMA32DEMO_MAX_COUNT &&
	    r.strategy == DMA32DEMO_STRATEGY_USER) {
		/* A user buffer, whatever else is wrong */
		u = fz_pct(75) ? FZ_USER_OK : (enum fz_user)fz_below(FZ_USER_NR);
		if (total > (64u << 20) || !total)
			u = FZ_USER_KERNEL;
		if (u != FZ_USER_KERNEL && u != FZ_USER_NULL &&
		    u != FZ_USER_UNMAPPED) {
			size_t len = total;

			if (u == FZ_USER_SHORT && total <= (size_t)fz_pg)
				u = FZ_USER_OK;
			if (u == FZ_USER_SHORT)
				len = total - fz_pg;
			if (fz_map_new(&um, len, fz_pct(50),
				       u != FZ_USER_SHORT && fz_pct(50), false))
				die("fuzz: mmap %zu: %s", len, strerror(errno));
			/* a short mapping: the buffer runs into the guard */
			if (u == FZ_USER_SHORT)
				um.len = um.hi - um.buf;
			fz_pattern(um.buf, um.len, useed);
			for (i = 0; i < um.len; i++)
				if (r.op == DMA32DEMO_OP_COPY && i >= total / 2)
					um.buf[i] = fz_canary(i) ^ 0x5a;
		}
		switch (u) {
		case FZ_USER_NULL:
			r.user_addr = 0;
			break;
		case FZ_USER_UNMAPPED:
			r.user_addr = (unsigned long)fz_unmapped;
			break;
		case FZ_USER_KERNEL:
			r.user_addr = 0xffff888000000000ull;
			break;
		case FZ_USER_MISALIGNED:
			r.user_addr = (unsigned long)um.buf + 1 +
				      fz_below(fz_pg - 1);
			break;
		case FZ_USER_GUARD:
			r.user_addr = (unsigned long)um.base;
			break;
		default:
			r.user_addr = (unsigned long)um.buf;
			break;
		}
		r.user_len = total;
		if (u == FZ_USER_BADLEN)
			r.user_len = fz_pct(50) ? total + 1 + fz_below(8192) :
				     fz_below(total);
		if (u == FZ_USER_READONLY &&
		    mprotect(um.lo, um.hi - um.lo, PROT_READ))
			die("fuzz: mprotect: %s", strerror(errno));
	} else if (fz_pct(3)) {
		r.user_addr = fz_pct(50) ? fz_rand() : 0;
		r.user_len = fz_rand() | !r.user_addr;
	}

	sent = r;
	want = -fz_expect_validation(&r, &total);
	argp = fz_arg_place(&am, a, &r, sizeof(r));
	/* No result comes back: learn from STATS whether it failed */
	if (a == FZ_ARG_READONLY && ioctl(fz_fd, DMA32DEMO_IOC_STATS, &before))
		die("fuzz: STATS: %s", errname(errno));
	ret = ioctl(fz_fd, DMA32DEMO_IOC_RUN, argp);
	got = ret ? errno : 0;
	fz_count(got);
	fz.runs++;
	if (ret && !got)
		fz_bad(&fz.unexpected, "RUN returned %d without errno", ret);

	ran = fz_arg_readable(a) && !want;
	counted = ran;
	if (!fz_arg_readable(a)) {
		if (got != EFAULT)
			fz_bad(&fz.unexpected, "RUN with a bad argument (%d): %s, expected EFAULT",
			       a, got ? errname(got) : "success");
	} else if (want) {
		if (got != want)
			fz_bad(&fz.unexpected,
			       "RUN strategy %u op %u size %llu count %llu flags %#x user %s: %s, expected %s",
			       r.strategy, r.op, (unsigned long long)r.size,
			       (unsigned long long)r.count, r.flags,
			       fz_user_names[u], got ? errname(got) : "success",
			       errname(want));
		/* Rejected: not a byte of the argument changes */
		if (memcmp(am.buf, &sent, sizeof(sent)))
			fz_bad(&fz.unexpected, "rejected RUN changed its argument");
	} else {
		struct dma32demo_run back;
		struct dma32demo_result *res = &back.result;
		bool user_bad = u != FZ_USER_OK && u != FZ_USER_READONLY;
		bool writes = r.op != DMA32DEMO_OP_CHECKSUM;
		bool ok_set;

		fz.runs_ran++;
		memcpy(&back, am.buf, sizeof(back));
		ok_set = got == 0 || got == ENOMEM ||
			 (got == EFAULT && (user_bad || !fz_arg_writable(a) ||
			  (u == FZ_USER_READONLY && writes))) ||
			 (got == EIO &&
			  ((r.flags & DMA32DEMO_RUN_INJECT_BUS_ERROR) ||
			   r.strategy == DMA32DEMO_STRATEGY_UNSAFE_RAW)) ||
			 (got == ETIMEDOUT &&
			  (r.flags & DMA32DEMO_RUN_INJECT_STALL));
		if (got == EILSEQ)
			fz_bad(&fz.mismatch, "RUN strategy %u op %u size %llu count %llu: EILSEQ",
			       r.strategy, r.op, (unsigned long long)r.size,
			       (unsigned long long)r.count);
		else if (!ok_set)
			fz_bad(&fz.unexpected,
			       "RUN strategy %u op %u size %llu count %llu flags %#x user %s arg %d: %s",
			       r.strategy, r.op, (unsigned long long)r.size,
			       (unsigned long long)r.count, r.flags,
			       fz_user_names[u], a,
			       got ? errname(got) : "success");
		if (!got && (user_bad || (u == FZ_USER_READONLY && writes)))
			fz_bad(&fz.unexpected, "RUN with user buffer '%s' succeeded",
			       fz_user_names[u]);
		if (fz_arg_writable(a))
			fz.st_errors += !!got;
		else
			fz_sync_errors(&before);
		if (got && fz_arg_writable(a)) {
			if ((got == EIO && !res->device_faults) ||
			    (got == ETIMEDOUT &&
			     (!res->timeouts || !res->resets)))
				fz_bad(&fz.unexpected, "%s, no fault or timeout in the result",
				       errname(got));
		}
		if (!got && (r.flags & (DMA32DEMO_RUN_INJECT_BUS_ERROR |
					DMA32DEMO_RUN_INJECT_STALL)))
			fz_bad(&fz.unexpected, "injected fault %#x went unnoticed",
			       r.flags);
		if (fz_arg_writable(a)) {
			if (memcmp(&back, &sent,
				   offsetof(struct dma32demo_run, result)))
				fz_bad(&fz.unexpected, "RUN changed its input fields");
			if ((__u32)res->error != (__u32)got)
				fz_bad(&fz.unexpected, "result.error %d, ioctl %s",
				       res->error, got ? errname(got) : "success");
			if (res->verify_errors)
				fz_bad(&fz.mismatch, "%llu verify errors",
				       (unsigned long long)res->verify_errors);
		}
		if (!got && fz_arg_writable(a)) {
			__u64 want_bytes = r.size * r.count;

			fz.runs_ok++;
			if (res->buffers != nbufs || res->bytes != want_bytes ||
			    res->transfers != res->descriptors ||
			    res->device_faults || res->timeouts ||
			    res->pages < nbufs || res->mappings < nbufs ||
			    res->bounced > res->mappings ||
			    ((r.flags & DMA32DEMO_RUN_VERIFY) &&
			     res->buffers_verified != r.count))
				fz_bad(&fz.unexpected,
				       "inconsistent result: buffers %llu/%llu bytes %llu/%llu transfers %llu/%llu verified %llu",
				       (unsigned long long)res->buffers,
				       (unsigned long long)nbufs,
				       (unsigned long long)res->bytes,
				       (unsigned long long)want_bytes,
				       (unsigned long long)res->transfers,
				       (unsigned long long)res->descriptors,
				       (unsigned long long)res->buffers_verified);
			if (r.flags & DMA32DEMO_RUN_VERIFY) {
				fz.verified++;
				fz.bytes_verified += want_bytes;
			}
		}
		/* The tool's own look at a user buffer the device used */
		if (!got && um.base &&
		    (u == FZ_USER_OK || u == FZ_USER_READONLY)) {
			__u64 n = r.size * r.count, k, bad = 0;

			if (r.op == DMA32DEMO_OP_COPY) {
				for (k = 0; k < n; k++)
					bad += um.buf[k] != um.buf[n + k];
			}
			if (r.op != DMA32DEMO_OP_FILL) {
				/* sources are read, never written */
				__u8 *ref = malloc(n);

				if (!ref)
					die("fuzz: out of memory");
				fz_pattern(ref, n, useed);
				bad += memcmp(ref, um.buf, n) != 0;
				free(ref);
			}
			if (bad) {
				fz_bad(&fz.mismatch, "user %s: %llu bytes differ",
				       op_names[r.op], (unsigned long long)bad);
			} else {
				fz.verified += !(r.flags & DMA32DEMO_RUN_VERIFY);
			}
		}
	}
	if (counted)
		fz.st_requests++;
	fz_map_check(&am, "RUN argument");
	fz_map_check(&um, "user buffer");
	fz_map_free(&am);
	fz_map_free(&um);
}

/* INFO, STATS, RESET_STATS and ioctl numbers the driver does not know */
static void fz_other(void)
{
	union {
		struct dma32demo_info info;
		struct dma32demo_stats stats;
		__u8 raw[512];
	} buf;
	struct fz_map am;
	enum fz_arg a = fz_pick_arg();
	unsigned long cmd;
	__u64 r = fz_below(100);
	size_t len = sizeof(buf.raw);
	int want, got, ret;
	void *argp;
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf.raw[i] = fz_rand();
	if (r < 25) {
		cmd = DMA32DEMO_IOC_INFO;
		len = sizeof(buf.info);
		want = fz_arg_writable(a) ? 0 : EFAULT;
	} else if (r < 50) {
		cmd = DMA32DEMO_IOC_STATS;
		len = sizeof(buf.stats);
		want = fz_arg_writable(a) ? 0 : EFAULT;
	} else if (r < 52) {
		cmd = DMA32DEMO_IOC_RESET_STATS;
		want = 0;
	} else {
		/* Our magic with other numbers, sizes and directions */
		do {
			if (r < 80)
				cmd = _IOC(fz_below(4), DMA32DEMO_IOC_MAGIC,
					   fz_below(16), fz_below(1 << 14));
			else
				cmd = (__u32)fz_rand();
		} while (cmd == DMA32DEMO_IOC_INFO || cmd == DMA32DEMO_IOC_RUN ||
			 cmd == DMA32DEMO_IOC_STATS ||
			 cmd == DMA32DEMO_IOC_RESET_STATS ||
			 /* the VFS handles these types itself */
			 _IOC_TYPE(cmd) == 0 || _IOC_TYPE(cmd) == 'T' ||
			 _IOC_TYPE(cmd) == 'X' || _IOC_TYPE(cmd) == 'f' ||
			 _IOC_TYPE(cmd) == 0x94);
		want = ENOTTY;
	}
	argp = fz_arg_place(&am, a, buf.raw, len);
	ret = ioctl(fz_fd, cmd, argp);
	got = ret ? errno : 0;
	fz_count(got);
	if (got != want)
		fz_bad(&fz.unexpected, "ioctl %#lx arg %d: %s, expected %s", cmd,
		       a, got ? errname(got) : "success",
		       want ? errname(want) : "success");
	if (!got && cmd == DMA32DEMO_IOC_INFO) {
		struct dma32demo_info *in = (void *)am.buf;

		if (memcmp(in, &fz_info, sizeof(*in)))
			fz_bad(&fz.unexpected, "INFO changed between calls");
	}
	if (!got && cmd == DMA32DEMO_IOC_STATS) {
		struct dma32demo_stats *s = (void *)am.buf;

		if (s->requests != fz.st_requests || s->errors != fz.st_errors)
			fz_bad(&fz.unexpected,
			       "STATS requests %llu errors %llu, the tool counted %llu and %llu",
			       (unsigned long long)s->requests,
			       (unsigned long long)s->errors, fz.st_requests,
			       fz.st_errors);
	}
	if (!got && cmd == DMA32DEMO_IOC_RESET_STATS) {
		fz.st_requests = 0;
		fz.st_errors = 0;
	}
	fz_map_check(&am, "ioctl argument");
	fz_map_free(&am);
}

/* sysfs: the device's files, read; the driver's files, written at random */

#define FZ_MAX_FILES 96

static char *fz_files[FZ_MAX_FILES];
static bool fz_writable[FZ_MAX_FILES];
static int fz_nfiles;

/* The regular files directly in @dir (no symlinks), in readdir order */
static void fz_add_dir(const char *dir, bool write)
{
	char path[512];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while (fz_nfiles < FZ_MAX_FILES && (de = readdir(d))) {
		if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (de->d_type == DT_UNKNOWN &&
		    (lstat(path, &st) || !S_ISREG(st.st_mode)))
			continue;
		fz_writable[fz_nfiles] = write;
		fz_files[fz_nfiles] = strdup(path);
		if (fz_files[fz_nfiles])
			fz_nfiles++;
	}
	closedir(d);
}

static ssize_t fz_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = 0;
	close(fd);
	return n;
}

static void fz_sysfs(void)
{
	int i = fz_below(fz_nfiles), fd, err;
	const char *path = fz_files[i];
	char old[256], junk[80], back[256];
	size_t len, k;
	ssize_t n;

	n = fz_read_file(path, old, sizeof(old));
	fz.sysfs_reads++;
	fz.sysfs_read_errors += n < 0;
	if (strstr(path, "/stats/")) {
		char *end;

		if (n <= 0 || (strtoull(old, &end, 10), *end != '\n'))
			fz_bad(&fz.unexpected, "%s: read '%s' (%zd)", path, old, n);
	}
	if (!fz_writable[i])
		return;

	/* Random data: numbers, junk, nothing, too much */
	switch (fz_below(6)) {
	case 0:
		len = snprintf(junk, sizeof(junk), "%llu",
			       (unsigned long long)fz_rand() >> fz_below(64));
		break;
	case 1:
		len = snprintf(junk, sizeof(junk), "%llu\n",
			       (unsigned long long)fz_below(1 << fz_below(16)));
		break;
	case 2:
		len = snprintf(junk, sizeof(junk), "-%llu\n",
			       (unsigned long long)fz_below(1000));
		break;
	case 3:
		len = fz_below(2);
		junk[0] = '\n';
		break;
	default:
		len = 1 + fz_below(sizeof(junk));
		for (k = 0; k < len; k++)
			junk[k] = fz_rand();
		break;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC);
	fz.sysfs_writes++;
	if (fd < 0) {
		err = errno;
		fz.sysfs_write_refused++;
		if (err != EACCES)
			fz_bad(&fz.unexpected, "%s: open for write: %s", path,
			       errname(err));
		return;
	}
	err = write(fd, junk, len) < 0 ? errno : 0;
	close(fd);
	fz.sysfs_write_refused += !!err;
	if (err && err != EINVAL && err != ERANGE)
		fz_bad(&fz.unexpected, "%s: write: %s", path, errname(err));
	/* Parameters: put the old value back before anything uses it */
	if (n > 0 && strstr(path, "/parameters/")) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, old, n) != n)
			fz_bad(&fz.unexpected, "%s: cannot restore '%s'", path, old);
		if (fd >= 0)
			close(fd);
		if (fz_read_file(path, back, sizeof(back)) != n ||
		    strcmp(back, old))
			fz_bad(&fz.unexpected, "%s: restored '%s', reads '%s'",
			       path, old, back);
	}
}

static void fz_final_stats(const char *statsdir)
{
	static const char *const names[] = {
		"requests", "errors", "transfers", "bytes", "mappings",
		"bounced_mappings", "bounced_bytes", "device_faults",
		"alloc_failures", "timeouts", "resets", "coherent_bytes_held",
	};
	struct dma32demo_stats s;
	const __u64 *v = &s.requests;
	char path[300], val[64];
	unsigned int i;

	if (ioctl(fz_fd, DMA32DEMO_IOC_STATS, &s))
		die("fuzz: STATS: %s", errname(errno));
	if (s.requests != fz.st_requests || s.errors != fz.st_errors)
		fz_bad(&fz.unexpected,
		       "final STATS requests %llu errors %llu, the tool counted %llu and %llu",
		       (unsigned long long)s.requests,
		       (unsigned long long)s.errors, fz.st_requests,
		       fz.st_errors);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", statsdir, names[i]);
		if (fz_read_file(path, val, sizeof(val)) <= 0 ||
		    strtoull(val, NULL, 10) != v[i])
			fz_bad(&fz.unexpected, "sysfs %s '%s' != STATS %llu",
			       names[i], val, (unsigned long long)v[i]);
	}
	if (s.coherent_bytes_held != (__u64)fz_info.ring_entries *
	    DMA32_DEMO_DESC_SIZE)
		fz_bad(&fz.unexpected, "coherent_bytes_held %llu after the run",
		       (unsigned long long)s.coherent_bytes_held);
}

static int cmd_fuzz(int argc, char **argv)
{
	unsigned long calls = 10000, sysfs_every = 20, i;
	__u64 seed = 1, seconds = 0;
	struct timespec t0, t;
	bool more_time = false;
	char dir[256], val[32];
	int k;

	for (k = 0; k < argc; k++) {
		if (k + 1 >= argc)
			die("fuzz: %s needs a value", argv[k]);
		if (!strcmp(argv[k], "--seed"))
			seed = parse_size("--seed", argv[++k]);
		else if (!strcmp(argv[k], "--calls"))
			calls = parse_size("--calls", argv[++k]);
		else if (!strcmp(argv[k], "--seconds"))
			seconds = parse_size("--seconds", argv[++k]);
		else if (!strcmp(argv[k], "--sysfs-every"))
			sysfs_every = parse_size("--sysfs-every", argv[++k]);
		else if (!strcmp(argv[k], "--device"))
			device_path = argv[++k];
		else
			die("fuzz: unknown option '%s'", argv[k]);
	}
	fz_state = seed;
	fz_pg = sysconf(_SC_PAGESIZE);
	/* Below a static binary: nothing is ever mapped there */
	fz_unmapped = (__u8 *)0x20000;
	if (!msync(fz_unmapped, fz_pg, MS_ASYNC) || errno != ENOMEM)
		die("fuzz: %p is mapped", fz_unmapped);
	fz_fd = open_dev();
	if (ioctl(fz_fd, DMA32DEMO_IOC_INFO, &fz_info))
		die("fuzz: INFO: %s", errname(errno));
	if (fz_read_file("/sys/module/dma32demo/parameters/max_request_mb",
			 val, sizeof(val)) > 0)
		fz_max_request_mb = strtoul(val, NULL, 10);
	if (ioctl(fz_fd, DMA32DEMO_IOC_RESET_STATS))
		die("fuzz: RESET_STATS: %s", errname(errno));

	/*
	 * Read every file of the PCI device; write only the driver's own
	 * (stats/ and the module parameters). Writing the PCI core's
	 * remove, reset or enable would take the device away from under
	 * the test: tests/guest/unload-inflight.sh does unbind on purpose.
	 */
	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s", fz_info.pci_name);
	fz_add_dir(dir, false);
	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s/stats",
		 fz_info.pci_name);
	fz_add_dir(dir, true);
	fz_add_dir("/sys/module/dma32demo/parameters", true);
	fz_add_dir("/sys/class/misc/dma32demo0", false);
	for (k = 0; k < fz_nfiles; k++)
		if (strstr(fz_files[k], "/resource") || strstr(fz_files[k], "/rom"))
			fz_writable[k] = false;

	/* @calls ioctls (and @seconds); the sysfs accesses come on top */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	more_time = seconds > 0;
	for (i = 0; fz.calls < calls || more_time; i++) {
		if (more_time && i % 64 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			more_time = (__u64)(t.tv_sec - t0.tv_sec) < seconds;
		}
		fz_call = i;
		if (fz_nfiles && sysfs_every && fz_below(sysfs_every) == 0)
			fz_sysfs();
		else if (fz_pct(80))
			fz_run();
		else
			fz_other();
	}
	/* Every file once more, to be sure each was read */
	for (k = 0; k < fz_nfiles; k++) {
		char buf[256];

		fz.sysfs_reads++;
		fz.sysfs_read_errors += fz_read_file(fz_files[k], buf,
						     sizeof(buf)) < 0;
	}
	snprintf(dir, sizeof(dir), "/sys/bus/pci/devices/%s/stats",
		 fz_info.pci_name);
	fz_final_stats(dir);
	close(fz_fd);

	clock_gettime(CLOCK_MONOTONIC, &t);
	printf("fuzz: seed %llu seconds %lld calls %lu ok %lu",
	       (unsigned long long)seed, (long long)(t.tv_sec - t0.tv_sec),
	       fz.calls, fz.ok);
	printf(" runs %lu ran %lu run_ok %lu", fz.runs, fz.runs_ran,
	       fz.runs_ok);
	printf(" verified %lu bytes_verified %llu sysfs_files %d", fz.verified,
	       fz.bytes_verified, fz_nfiles);
	printf(" sysfs_reads %lu (%lu failed) sysfs_writes %lu (%lu refused) errno",
	       fz.sysfs_reads, fz.sysfs_read_errors, fz.sysfs_writes,
	       fz.sysfs_write_refused);
	for (k = 0; k < FZ_MAX_ERRNO; k++)
		if (fz.err[k])
			printf(" %s=%lu", k ? errname(k) : "other", fz.err[k]);
	printf(" canary_violations %lu mismatches %lu unexpected %lu\n",
	       fz.canary, fz.mismatch, fz.unexpected);
	return fz.canary || fz.mismatch || fz.unexpected ? 1 : 0;
}

/*
 * stress (hidden): verified requests across coherent, streaming,
 * streaming-dma32 and user for --seconds, then one JSON line with the sums
 * of what the requests reported, for tests/guest/stress.sh and
 * unload-inflight.sh. User buffers get guard pages and canaries as in
 * fuzz; the tool compares copies and checks sources itself. ENODEV (the
 * device was unbound) ends the run early. Exit 1 on a failed request,
 * mismatched byte or canary violation.
 */
static int cmd_stress(int argc, char **argv)
{
	static const __u32 strategies[] = {
		DMA32DEMO_STRATEGY_COHERENT, DMA32DEMO_STRATEGY_STREAMING,
		DMA32DEMO_STRATEGY_STREAMING_DMA32, DMA32DEMO_STRATEGY_USER,
	};
	unsigned long long sum[12] = { 0 }, per[ARRAY_SIZE(strategies)] = { 0 };
	unsigned long long mism = 0, failed = 0, first_err = 0;
	__u64 seed = 1, seconds = 30, max_size = 256 * 1024;
	struct timespec t0, t;
	bool gone = false;
	int k, fd;

	for (k = 0; k < argc; k++) {
		if (k + 1 >= argc)
			die("stress: %s needs a value", argv[k]);
		if (!strcmp(argv[k], "--seed"))
			seed = parse_size("--seed", argv[++k]);
		else if (!strcmp(argv[k], "--seconds"))
			seconds = parse_size("--seconds", argv[++k]);
		else if (!strcmp(argv[k], "--max-size"))
			max_size = parse_size("--max-size", argv[++k]);
		else if (!strcmp(argv[k], "--device"))
			device_path = argv[++k];
		else
			die("stress: unknown option '%s'", argv[k]);
	}
	if (!max_size)
		die("stress: --max-size must be at least 1");
	fz_state = seed;
	fz_pg = sysconf(_SC_PAGESIZE);
	fd = open_dev();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		unsigned int si = sum[0] % ARRAY_SIZE(strategies);
		struct dma32demo_run r = {
			.strategy = strategies[si],
			.op = 1 + fz_below(DMA32DEMO_OP_MAX),
			.size = 1 + fz_below(max_size),
			.count = 1 + fz_below(4),
			.flags = DMA32DEMO_RUN_VERIFY,
		};
		struct dma32demo_result *res = &r.result;
		struct fz_map um = { 0 };
		__u64 n = r.size * r.count, useed = fz_rand(), i;
		int err;

		if (r.strategy == DMA32DEMO_STRATEGY_USER) {
			/* destinations may not share a cache line */
			if (r.op != DMA32DEMO_OP_CHECKSUM && r.count > 1)
				r.size = (r.size + 63) & ~63ull;
			n = r.size * r.count;
			r.user_len = n * (r.op == DMA32DEMO_OP_COPY ? 2 : 1);
			if (fz_map_new(&um, r.user_len, fz_pct(50), fz_pct(50),
				       false))
				die("stress: mmap: %s", strerror(errno));
			fill_pattern(um.buf, um.len, useed);
			if (r.op == DMA32DEMO_OP_COPY)
				memset(um.buf + n, 0, n);
			r.user_addr = (unsigned long)um.buf;
		}
		err = ioctl(fd, DMA32DEMO_IOC_RUN, &r) ? errno : 0;
		if (err == ENODEV) {
			gone = true;
			fz_map_free(&um);
			break;
		}
		sum[0]++;
		per[si]++;
		sum[1] += !!err;
		sum[2] += res->transfers;
		sum[3] += res->bytes;
		sum[4] += res->mappings;
		sum[5] += res->bounced;
		sum[6] += res->bounced_bytes;
		sum[7] += res->device_faults;
		sum[8] += res->alloc_failures;
		sum[9] += res->timeouts;
		sum[10] += res->resets;
		mism += res->verify_errors;
		if (err) {
			failed++;
			if (!first_err)
				first_err = err;
			fprintf(stderr, "dma32ctl: stress: %s %s size %llu count %llu: %s\n",
				strategy_names[r.strategy], op_names[r.op],
				(unsigned long long)r.size,
				(unsigned long long)r.count, errname(err));
		} else if (um.base) {
			__u8 *ref = malloc(n);

			if (!ref)
				die("stress: out of memory");
			if (r.op == DMA32DEMO_OP_COPY)
				for (i = 0; i < n; i++)
					mism += um.buf[i] != um.buf[n + i];
			if (r.op != DMA32DEMO_OP_FILL) {
				fill_pattern(ref, n, useed);
				for (i = 0; i < n; i++)
					mism += ref[i] != um.buf[i];
			}
			free(ref);
		}
		sum[11] += fz_map_check(&um, "stress user buffer");
		fz_map_free(&um);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((__u64)(t.tv_sec - t0.tv_sec) < seconds);
	close(fd);

	j_begin();
	j_u64("requests", sum[0]);
	j_u64("errors", sum[1]);
	j_u64("transfers", sum[2]);
	j_u64("bytes", sum[3]);
	j_u64("mappings", sum[4]);
	j_u64("bounced_mappings", sum[5]);
	j_u64("bounced_bytes", sum[6]);
	j_u64("device_faults", sum[7]);
	j_u64("alloc_failures", sum[8]);
	j_u64("timeouts", sum[9]);
	j_u64("resets", sum[10]);
	j_u64("mismatched_bytes", mism);
	j_u64("canary_violations", sum[11]);
	j_u64("failed", failed);
	j_str("first_errno", first_err ? errname(first_err) : NULL);
	j_bool("gone", gone);
	for (k = 0; k < (int)ARRAY_SIZE(strategies); k++)
		j_u64(strategy_names[strategies[k]], per[k]);
	j_end();
	return failed || mism || sum[11] ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	bool json = false;
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			print_help(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--device") || i + 1 >= argc)
			die("unknown option '%s' (see dma32ctl --help)", argv[i]);
		device_path = argv[i + 1];
		i += 2;
	}
	if (i >= argc) {
		print_help(stderr);
		return 2;
	}
	cmd = argv[i++];
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - i + 1, argv + i - 1);
	if (!strcmp(cmd, "fuzz"))
		return cmd_fuzz(argc - i, argv + i);
	if (!strcmp(cmd, "stress"))
		return cmd_stress(argc - i, argv + i);
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			device_path = argv[++i];
		else
			die("%s: unknown option '%s'", cmd, argv[i]);
	}
	if (!strcmp(cmd, "info"))
		return cmd_info(json);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(json);
	if (!strcmp(cmd, "reset"))
		return cmd_reset();
	if (!strcmp(cmd, "selftest-ioctls"))
		return cmd_selftest();
	die("unknown command '%s' (info, run, stats, reset)", cmd);
	return 2;
}
