// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo-stress: verified requests of every strategy for a while.
 *
 * Built static for the guest, next to dma32ctl (see the Makefile).
 */
#define _GNU_SOURCE
#include "dma32demo-user.h"
#include "dma32demo-guarded.h"

/*
 * stress (hidden): verified requests across coherent, streaming,
 * streaming-dma32 and user for --seconds, then one JSON line with the sums
 * of what the requests reported, for tests/guest/stress.sh and
 * unload-inflight.sh. User buffers get guard pages and canaries as in
 * fuzz; the tool compares copies and checks sources itself. ENODEV (the
 * device was unbound) ends the run early. Exit 1 on a failed request,
 * mismatched byte or canary violation.
 */
/* Add to @sum what the driver adds to its counters for the request @res */
static void stress_count(unsigned long long *sum,
			 const struct dma32demo_result *res)
{
	unsigned int i;

	for (i = 0; i < DMA32DEMO_NR_STATS; i++)
		sum[i] += dma32demo_stat_adds(res, i);
}

static int cmd_stress(int argc, char **argv)
{
	static const __u32 strategies[] = {
		DMA32DEMO_STRATEGY_COHERENT, DMA32DEMO_STRATEGY_STREAMING,
		DMA32DEMO_STRATEGY_STREAMING_DMA32, DMA32DEMO_STRATEGY_USER,
	};
	unsigned long long sum[DMA32DEMO_NR_STATS] = { 0 }, canaries = 0;
	unsigned long long per[ARRAY_SIZE(strategies)] = { 0 };
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
		unsigned int si = sum[DMA32DEMO_STAT_requests] %
				  ARRAY_SIZE(strategies);
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
		per[si]++;
		stress_count(sum, res);
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
		canaries += fz_map_check(&um, "stress user buffer");
		fz_map_free(&um);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((__u64)(t.tv_sec - t0.tv_sec) < seconds);
	close(fd);

	j_begin();
	for (k = 0; k < DMA32DEMO_NR_STATS; k++)
		if (stat_descs[k].counter)
			j_u64(stat_descs[k].name, sum[k]);
	j_u64("mismatched_bytes", mism);
	j_u64("canary_violations", canaries);
	j_u64("failed", failed);
	j_str("first_errno", first_err ? errname(first_err) : NULL);
	j_bool("gone", gone);
	for (k = 0; k < (int)ARRAY_SIZE(strategies); k++)
		j_u64(strategy_names[strategies[k]], per[k]);
	j_end();
	return failed || mism || canaries ? 1 : 0;
}

int main(int argc, char **argv)
{
	return cmd_stress(argc - 1, argv + 1);
}
