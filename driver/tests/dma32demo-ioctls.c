// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo-ioctls: every malformed request to /dev/dma32demo0 gets its errno.
 *
 * Built static for the guest, next to dma32ctl (see the Makefile).
 */
#define _GNU_SOURCE
#include "dma32demo-user.h"

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

/*
 * Address runs: the ring's first, then every buffer's in order, their pages
 * adding up to the result's, nothing written past result.runs; a capacity
 * of 1 keeps the ring's only run and counts the buffers' as dropped; runs
 * in read-only memory: the request runs, the copy back fails with EFAULT.
 * Three requests, none failing in the driver.
 */
static void st_runs(const struct dma32demo_run *tmpl,
		    const struct dma32demo_info *info)
{
	struct dma32demo_addr_run runs[16], *a;
	struct dma32demo_run r = *tmpl;
	long pg = sysconf(_SC_PAGESIZE);
	__u64 pages = 0, ring_pages = 0;
	unsigned int i, next = 0;
	bool order = true;
	char why[128];
	void *ro;

	memset(runs, 0x5a, sizeof(runs));
	r.size = 8192;
	r.count = 3;
	r.runs_addr = (unsigned long)runs;
	r.runs_max = ARRAY_SIZE(runs);
	st_run("valid request with address runs succeeds", &r, 0);
	if (ioctl(st_fd, DMA32DEMO_IOC_RUN, &r))
		die("RUN: %s", errname(errno));
	for (i = 0; i < r.result.runs && i < ARRAY_SIZE(runs); i++) {
		a = &runs[i];
		if (a->buffer == DMA32DEMO_ADDR_DEVICE_BUFFER) {
			order &= next == 0;
			if (a->flags & DMA32DEMO_ADDR_RING)
				ring_pages += a->pages;
			continue;
		}
		order &= a->buffer >= (next ? next - 1 : 0) &&
			 a->buffer < r.count && !a->reserved &&
			 !(a->flags & ~(DMA32DEMO_ADDR_COHERENT |
					DMA32DEMO_ADDR_IN_POOL)) && a->dma;
		next = a->buffer + 1;
		pages += a->pages;
	}
	snprintf(why, sizeof(why),
		 "%u runs, %u dropped, %llu buffer pages of %llu, ring %llu pages",
		 r.result.runs, r.result.runs_dropped,
		 (unsigned long long)pages,
		 (unsigned long long)r.result.pages,
		 (unsigned long long)ring_pages);
	st_report(order && r.result.runs >= 4 + info->ctrl_buffers &&
		  !r.result.runs_dropped &&
		  pages == r.result.pages && next == r.count &&
		  ring_pages * pg >= (__u64)info->ring_entries * 64,
		  "address runs: the ring's and control buffers', then each buffer's, adding up to the result's pages",
		  why);
	for (i = r.result.runs; i < ARRAY_SIZE(runs); i++)
		if (((__u8 *)&runs[i])[0] != 0x5a)
			break;
	st_report(i == ARRAY_SIZE(runs),
		  "address runs: nothing written past result.runs",
		  "entry changed");

	r.runs_max = 1;
	if (ioctl(st_fd, DMA32DEMO_IOC_RUN, &r))
		die("RUN: %s", errname(errno));
	snprintf(why, sizeof(why), "%u runs, %u dropped", r.result.runs,
		 r.result.runs_dropped);
	st_report(r.result.runs == 1 && (runs[0].flags & DMA32DEMO_ADDR_RING) &&
		  r.result.runs_dropped >= r.count + info->ctrl_buffers,
		  "address runs: runs_max 1 keeps the ring's, counts the rest as dropped",
		  why);

	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	r.runs_addr = (unsigned long)ro;
	r.runs_max = 4;
	st_run("address runs in read-only memory: EFAULT after the request", &r,
	       EFAULT);
	munmap(ro, pg);

	r = *tmpl;
	r.runs_max = DMA32DEMO_MAX_RUNS + 1;
	r.runs_addr = (unsigned long)runs;
	st_run("runs_max above DMA32DEMO_MAX_RUNS gives E2BIG", &r, E2BIG);
	r.runs_max = 4;
	r.runs_addr = 0;
	st_run("runs_max without runs_addr gives EFAULT", &r, EFAULT);
	r.runs_max = 0;
	r.runs_addr = (unsigned long)runs;
	st_run("runs_addr without runs_max gives EINVAL", &r, EINVAL);
	r.runs_max = 4;
	r.runs_addr = 0xffff800000000000ull;
	st_run("runs_addr in the kernel gives EFAULT", &r, EFAULT);
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
	r.reserved1 = 1;
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

	r = ok;
	r.strategy = DMA32DEMO_STRATEGY_TRUNCATION_ALIAS;
	r.op = DMA32DEMO_OP_CHECKSUM;
	st_run("truncation-alias with a checksum gives EINVAL", &r, EINVAL);
	r.op = DMA32DEMO_OP_FILL;
	r.count = 2;
	st_run("truncation-alias with two buffers gives EINVAL", &r, EINVAL);
	r.count = 1;
	r.size = DMA32DEMO_ALIAS_MAX + 1;
	st_run("truncation-alias beyond its window's half gives EINVAL", &r,
	       EINVAL);
	r.size = 4096;
	if (info.alias_window)
		printf("ok - %s # SKIP alias_window set\n",
		       "truncation-alias without alias_window gives EPERM");
	else
		st_run("truncation-alias without alias_window gives EPERM", &r,
		       EPERM);

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

	st_runs(&ok, &info);

	st_run("valid request still succeeds afterwards", &ok, 0);
	if (ioctl(st_fd, DMA32DEMO_IOC_STATS, &after))
		die("STATS: %s", errname(errno));
	snprintf(desc, sizeof(desc),
		 "rejected ioctls are not counted (requests +%llu, errors +%llu)",
		 (unsigned long long)(after.requests - before.requests),
		 (unsigned long long)(after.errors - before.errors));
	/*
	 * Past validation: 4 that succeed (2 coherent, user fill, user
	 * checksum), 3 whose pages cannot be pinned, and 4 with address
	 * runs (the one whose runs cannot be copied back succeeded too).
	 */
	st_report(after.requests - before.requests == 11 &&
		  after.errors - before.errors == 3, desc, "expected +11, +3");
	close(st_fd);
	return st_fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	return argc > 1 ? (die("usage: %s (no arguments)", argv[0]), 2) : cmd_selftest();
}
