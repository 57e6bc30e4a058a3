// SPDX-License-Identifier: GPL-2.0
/*
 * dma32-pressure: make a freshly booted guest look like a machine that has
 * been up a while, before the demo's scenarios run.
 *
 *   dma32-pressure --leave MIB [--fragment] [--churn N] [--snapshot FILE]
 *
 * It takes anonymous memory until only about MIB of free memory is left
 * (MemFree), which fills ZONE_NORMAL, spills ordinary allocations into
 * ZONE_DMA32 as far as its watermarks and lowmem_reserve let them, and
 * wakes kswapd. --churn N then frees and touches again a quarter of what
 * it holds, N times, so that the allocator cycles through the zones under
 * pressure. --fragment finally gives back the first 256 KiB of every 512 KiB
 * it holds: the free memory is then order-6 holes scattered through the
 * zones, as on a long-running machine, each far smaller than the demo's
 * 1 MiB (order-8) buffers, which then need compaction to be found. The
 * guest has no swap: nothing it holds can be reclaimed, which is the point.
 * Memory is populated by the kernel (MAP_POPULATE), not by touching it page
 * by page: under TCG a page fault costs too much. Only mmap and munmap are
 * used: the guest kernel is built without madvise().
 *
 * --snapshot FILE copies /proc/zoneinfo to FILE at the peak, when it holds
 * the most, before churning and fragmenting.
 *
 * It prints one line, "pressure: ...", and holds its memory until it gets
 * SIGTERM. Exit status: 0 after SIGTERM, 1 on a system error, 2 on usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK (64UL << 20)	/* taken in 64 MiB mappings */
#define HOLE (256UL << 10)	/* --fragment: 256 KiB back of every 512 KiB */

static void die(const char *what)
{
	fprintf(stderr, "dma32-pressure: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(FILE *f)
{
	fputs("usage: dma32-pressure --leave MIB [--fragment] [--churn N] [--snapshot FILE]\n"
	      "  --leave MIB  take memory until about MIB of free memory is left\n"
	      "  --churn N    then free and touch again a quarter of it, N times\n"
	      "  --fragment   then give back 256 KiB of every 512 KiB (order-6 holes)\n"
	      "  --snapshot FILE  /proc/zoneinfo at the peak, into FILE\n",
	      f);
}

/* MemFree in MiB */
static long mem_free_mib(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemFree: %ld kB", &kb) == 1)
			break;
	fclose(f);
	if (kb < 0) {
		errno = EINVAL;
		die("no MemFree in /proc/meminfo");
	}
	return kb >> 10;
}

static long parse_num(const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max || s[0] == '+' ||
	    s[0] == ' ') {
		fprintf(stderr, "dma32-pressure: %s needs a number from 0 to %ld, got '%s'\n",
			opt, max, s);
		exit(2);
	}
	return v;
}

static void copy_file(const char *from, const char *to)
{
	char buf[4096];
	size_t n;
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");

	if (!in || !out)
		die(in ? to : from);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			die(to);
	fclose(in);
	if (fclose(out))
		die(to);
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "leave", required_argument, NULL, 'l' },
		{ "churn", required_argument, NULL, 'c' },
		{ "fragment", no_argument, NULL, 'f' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	long leave = -1, churn = 0, free0, n = 0, i, r;
	size_t off, holes = 0, held = 0;
	const char *snapshot = NULL;
	char **chunk = NULL;
	bool fragment = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			leave = parse_num("--leave", optarg, 1L << 20);
			break;
		case 'c':
			churn = parse_num("--churn", optarg, 1000);
			break;
		case 'f':
			fragment = true;
			break;
		case 's':
			snapshot = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (leave < 0 || optind != argc) {
		usage(stderr);
		return 2;
	}
	signal(SIGTERM, on_term);
	/* Every hole splits a mapping: allow that many (the default is 65530) */
	if (fragment) {
		FILE *f = fopen("/proc/sys/vm/max_map_count", "w");

		if (!f || fprintf(f, "1048576\n") < 0 || fclose(f))
			die("raising /proc/sys/vm/max_map_count");
	}
	free0 = mem_free_mib();

	/* Take memory 64 MiB at a time, then the rest in smaller steps */
	while (!stop) {
		long left = mem_free_mib() - leave;
		size_t len = CHUNK;
		char *p;

		if (left <= 0)
			break;
		if ((long)(len >> 20) > left)
			len = (size_t)left << 20;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED)
			die("mmap");
		chunk = realloc(chunk, (n + 1) * sizeof(*chunk));
		if (!chunk)
			die("realloc");
		held += len;
		if (len < CHUNK)
			break;	/* the last, short one is held, never churned */
		chunk[n++] = p;
	}
	if (snapshot)
		copy_file("/proc/zoneinfo", snapshot);
	for (r = 0; r < churn && !stop; r++)
		for (i = r % 4; i < n; i += 4) {
			if (munmap(chunk[i], CHUNK) ||
			    mmap(chunk[i], CHUNK, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
				 MAP_POPULATE, -1, 0) == MAP_FAILED)
				die("churn");
		}
	if (fragment)
		for (i = 0; i < n && !stop; i++)
			for (off = 0; off < CHUNK; off += 2 * HOLE, holes++)
				if (munmap(chunk[i] + off, HOLE))
					die("munmap");

	printf("pressure: free %ld MiB before, took %zu MiB, churned a quarter of it %ld times, gave back %zu MiB in 256 KiB holes, free %ld MiB now\n",
	       free0, held >> 20, churn, holes * HOLE >> 20, mem_free_mib());
	fflush(stdout);
	while (!stop)
		pause();
	return 0;
}
