/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzzer and the stress test share: a seeded random number
 * generator, the tally of what went wrong, and buffers in mappings with
 * PROT_NONE guard pages and canary bytes around them.
 */
#ifndef DMA32DEMO_GUARDED_H
#define DMA32DEMO_GUARDED_H

#include "dma32demo-user.h"

static __u64 fz_state;

static inline __u64 fz_rand(void)
{
	__u64 z = (fz_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline __u64 fz_below(__u64 n)
{
	return n ? fz_rand() % n : 0;
}

static inline bool fz_pct(unsigned int pct)
{
	return fz_below(100) < pct;
}

#define FZ_MAX_ERRNO 256

struct fz_counts {
	unsigned long calls, ok, runs, runs_ran, runs_ok, runs_checked, verified;
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

static inline void fz_bad(unsigned long *counter, const char *fmt, ...)
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

static inline __u8 fz_canary(size_t off)
{
	return 0xa5 ^ (__u8)(off * 7) ^ (__u8)(off >> 8);
}

static inline int fz_map_new(struct fz_map *m, size_t len, bool lead,
			     bool trail, bool at_end)
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
static inline unsigned long fz_map_check(const struct fz_map *m, const char *what)
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

static inline void fz_map_free(struct fz_map *m)
{
	if (m->base)
		munmap(m->base, m->maplen);
	m->base = NULL;
}

#endif /* DMA32DEMO_GUARDED_H */
