// SPDX-License-Identifier: GPL-2.0
/*
 * dma32ctl: user tool for the dma32demo driver (/dev/dma32demoN).
 *
 *   dma32ctl [--device DEV] info [--json]
 *   dma32ctl [--device DEV] run --strategy S --op O --size N[K|M|G]
 *                               [--count K] [--verify] [--json]
 *                               [--inject stall|bus-error]
 *   dma32ctl [--device DEV] stats [--json]
 *   dma32ctl [--device DEV] reset
 *
 * Built static for the guest:
 *   gcc -static -O2 -Wall -Wextra -I driver/uapi -I qemu-device \
 *       -o dma32ctl dma32ctl.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
		"        [--json] [--inject stall|bus-error]\n"
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

static __u64 parse_size(const char *opt, const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!*s || *s == '-')
		goto bad;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		goto bad;
	switch (*end) {
	case 'k': case 'K':
		v <<= 10, end++;
		break;
	case 'm': case 'M':
		v <<= 20, end++;
		break;
	case 'g': case 'G':
		v <<= 30, end++;
		break;
	}
	if (end[0] == 'i' && end[1] == 'B')
		end += 2;
	else if (end[0] == 'B')
		end++;
	if (*end)
		goto bad;
	return v;
bad:
	die("bad %s '%s': expected a number with an optional K, M or G suffix",
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

struct run_opts {
	int strategy, op;
	__u64 size, count;
	__u32 flags;
	bool json;
};

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
	int i, fd, ret, err;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--verify")) {
			o.flags |= DMA32DEMO_RUN_VERIFY;
			continue;
		}
		if (!strcmp(a, "--json")) {
			o.json = true;
			continue;
		}
		if (!strcmp(a, "--device") && v) {
			device_path = v;
			i++;
			continue;
		}
		if (strcmp(a, "--strategy") && strcmp(a, "--op") &&
		    strcmp(a, "--size") && strcmp(a, "--count") &&
		    strcmp(a, "--inject"))
			die("run: unknown option '%s' (see dma32ctl --help)", a);
		if (!v)
			die("run: %s needs a value", a);
		i++;
		if (!strcmp(a, "--strategy")) {
			o.strategy = lookup("strategy", strategy_names,
					    DMA32DEMO_STRATEGY_MAX + 1, v);
		} else if (!strcmp(a, "--op")) {
			o.op = lookup("op", op_names, DMA32DEMO_OP_MAX + 1, v);
		} else if (!strcmp(a, "--size")) {
			o.size = parse_size("--size", v);
			have_size = true;
		} else if (!strcmp(a, "--count")) {
			o.count = parse_size("--count", v);
		} else if (!strcmp(v, "stall")) {
			o.flags |= DMA32DEMO_RUN_INJECT_STALL;
		} else if (!strcmp(v, "bus-error")) {
			o.flags |= DMA32DEMO_RUN_INJECT_BUS_ERROR;
		} else {
			die("run: unknown --inject '%s' (stall or bus-error)", v);
		}
	}
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
	ret = ioctl(fd, DMA32DEMO_IOC_RUN, &run);
	err = ret ? errno : 0;
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
		return cmd_run(argc - i, argv + i);
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
