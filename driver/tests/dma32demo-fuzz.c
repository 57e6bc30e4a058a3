// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo-fuzz: random ioctls and sysfs writes against the driver, seeded.
 *
 * Built static for the guest, next to dma32ctl (see the Makefile).
 */
#define _GNU_SOURCE
#include "dma32demo-user.h"
#include "dma32demo-guarded.h"

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
 * sizes, counts, reserved fields, user pointers and lengths, address-run
 * arrays) and an
 * argument that is valid, NULL, unmapped, read-only, straddling a guard
 * page or a kernel address; other calls are INFO, STATS, RESET_STATS and
 * random ioctl numbers. The tool predicts the errno of every call that the
 * driver must reject, from the UAPI header's documented argument checks
 * (its oracle is the document's: see fz_expect_validation()), and the set
 * of errnos allowed for one that it runs,
 * checks the result of every request that succeeds (and that verified
 * data never mismatch), and checks the canary bytes around every buffer it
 * hands the driver: each lives in a mapping with PROT_NONE guard pages on
 * both sides, the rest of the mapping filled with canary bytes. Exit 1 on
 * any canary violation, mismatch or unexpected result.
 */

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

/*
 * The oracle: the errno RUN's argument checks must give (0: the request
 * runs). It is the document's, not the driver's: written from the
 * "DMA32DEMO_IOC_RUN's argument checks" comment in driver/uapi/dma32demo.h
 * (the numbered checks, in their order, with their errnos, and its
 * definition of "in user space"), not from d32_validate(). Where the two
 * disagree the fuzzer reports it, and either the driver or the document
 * is wrong. What the document leaves to the machine comes from INFO
 * (max_xfer, flags, alias_window) and sysfs (max_request_mb); the fuzz
 * suite boots without a translating IOMMU, the one EPERM INFO cannot tell.
 */
#define FZ_DOC_USER_TOP		0x7ffffffff000ull	/* "in user space" */
#define FZ_DOC_CACHE_LINE	64			/* check 4 */

/* "[addr, addr + len) in user space": ends at or below the top, no wrap */
static bool fz_doc_in_user_space(__u64 addr, __u64 len)
{
	return len <= FZ_DOC_USER_TOP && addr <= FZ_DOC_USER_TOP - len;
}

static int fz_expect_validation(const struct dma32demo_run *r, __u64 *totalp)
{
	bool user = r->strategy == DMA32DEMO_STRATEGY_USER;
	bool writes = r->op == DMA32DEMO_OP_FILL || r->op == DMA32DEMO_OP_COPY;
	__u64 total;

	/* 1. unknown strategy, op or flag; reserved set; size or count 0 */
	if (!(r->strategy >= 1 && r->strategy <= DMA32DEMO_STRATEGY_MAX) ||
	    !(r->op >= 1 && r->op <= DMA32DEMO_OP_MAX) ||
	    (r->flags | DMA32DEMO_RUN_FLAGS_ALL) != DMA32DEMO_RUN_FLAGS_ALL ||
	    r->reserved0 != 0 || r->reserved1 != 0 ||
	    r->size == 0 || r->count == 0)
		return -EINVAL;
	/* 2. total = size x count (x2 for COPY) fits in 64 bits */
	if (__builtin_mul_overflow(r->size, r->count, &total) ||
	    __builtin_mul_overflow(total, r->op == DMA32DEMO_OP_COPY ? 2 : 1, &total))
		return -EOVERFLOW;
	*totalp = total;
	/* 3. beyond max_xfer, DMA32DEMO_MAX_COUNT or max_request_mb MiB */
	if (r->size > fz_info.max_xfer || r->count > DMA32DEMO_MAX_COUNT ||
	    total > (__u64)fz_max_request_mb * 1024 * 1024)
		return -E2BIG;
	/* 4. the user buffer: the USER strategy's, nobody else's */
	if (user && r->user_addr == 0)
		return -EFAULT;
	if (user && (r->user_addr % 4096 != 0 || r->user_len != total))
		return -EINVAL;
	if (user && writes && r->count > 1 && r->size % FZ_DOC_CACHE_LINE != 0)
		return -EINVAL;
	if (user && !fz_doc_in_user_space(r->user_addr, total))
		return -EFAULT;
	if (!user && (r->user_addr != 0 || r->user_len != 0))
		return -EINVAL;
	/* 5. the address runs */
	if (r->runs_max > DMA32DEMO_MAX_RUNS)
		return -E2BIG;
	if (r->runs_max != 0 && r->runs_addr == 0)
		return -EFAULT;
	if (r->runs_addr != 0 && r->runs_max == 0)
		return -EINVAL;
	if (r->runs_max != 0 &&
	    !fz_doc_in_user_space(r->runs_addr, (__u64)r->runs_max *
				  sizeof(struct dma32demo_addr_run)))
		return -EFAULT;
	/* 6. fault injection: accepted only when the module says so */
	if ((r->flags & (DMA32DEMO_RUN_INJECT_BUS_ERROR |
			 DMA32DEMO_RUN_INJECT_STALL)) &&
	    !(fz_info.flags & DMA32DEMO_INFO_FAULT_INJECTION))
		return -EPERM;
	/* 7. unsafe-raw: allowed, and not on a truncating device */
	if (r->strategy == DMA32DEMO_STRATEGY_UNSAFE_RAW &&
	    (!(fz_info.flags & DMA32DEMO_INFO_ALLOW_UNSAFE) ||
	     (fz_info.flags & DMA32DEMO_INFO_TRUNCATES)))
		return -EPERM;
	/* 8. truncation-alias: its shape, then its permissions */
	if (r->strategy == DMA32DEMO_STRATEGY_TRUNCATION_ALIAS) {
		if (r->op != DMA32DEMO_OP_FILL || r->count != 1 ||
		    r->size > DMA32DEMO_ALIAS_MAX)
			return -EINVAL;
		if (!(fz_info.flags & DMA32DEMO_INFO_ALLOW_UNSAFE) ||
		    fz_info.alias_window == 0)
			return -EPERM;
	}
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

/* Address-run arrays (runs_addr, runs_max) */
enum fz_runs {
	FZ_RUNS_NONE,
	FZ_RUNS_OK,		/* guarded, 1 .. DMA32DEMO_MAX_RUNS entries */
	FZ_RUNS_TOOMANY,	/* runs_max > DMA32DEMO_MAX_RUNS */
	FZ_RUNS_NULL,		/* runs_max without runs_addr */
	FZ_RUNS_NOMAX,		/* runs_addr without runs_max */
	FZ_RUNS_KERNEL,
	FZ_RUNS_UNMAPPED,	/* passes access_ok(), the copy back fails */
	FZ_RUNS_READONLY,	/* the same */
	FZ_RUNS_NR,
};

static bool fz_runs_unwritable(enum fz_runs k)
{
	return k == FZ_RUNS_UNMAPPED || k == FZ_RUNS_READONLY;
}

/* Give @r an address-run array of kind @k, in @m when it is mapped */
static void fz_runs_place(struct dma32demo_run *r, struct fz_map *m,
			  enum fz_runs k)
{
	size_t len;

	memset(m, 0, sizeof(*m));
	r->runs_max = fz_pct(70) ? 1 + fz_below(8) :
		      1 + fz_below(DMA32DEMO_MAX_RUNS);
	len = r->runs_max * sizeof(struct dma32demo_addr_run);
	switch (k) {
	case FZ_RUNS_NONE:
		r->runs_max = 0;
		return;
	case FZ_RUNS_TOOMANY:
		r->runs_max = fz_pct(50) ? DMA32DEMO_MAX_RUNS + 1 :
			      DMA32DEMO_MAX_RUNS + 1 + (__u32)fz_rand() %
			      (~0u - DMA32DEMO_MAX_RUNS);
		r->runs_addr = (unsigned long)fz_unmapped;
		return;
	case FZ_RUNS_NULL:
		r->runs_addr = 0;
		return;
	case FZ_RUNS_NOMAX:
		r->runs_max = 0;
		r->runs_addr = (unsigned long)fz_unmapped;
		return;
	case FZ_RUNS_KERNEL:
		r->runs_addr = 0xffff888000000000ull;
		return;
	case FZ_RUNS_UNMAPPED:
		r->runs_max = 1 + fz_below(8);
		r->runs_addr = (unsigned long)fz_unmapped;
		return;
	default:
		break;
	}
	if (fz_map_new(m, len, true, true, fz_pct(50)))
		die("fuzz: mmap %zu: %s", len, strerror(errno));
	r->runs_addr = (unsigned long)m->buf;
	if (k == FZ_RUNS_READONLY && mprotect(m->lo, m->hi - m->lo, PROT_READ))
		die("fuzz: mprotect: %s", strerror(errno));
}

/*
 * The runs a request that ran wrote into @m: at most runs_max, none past
 * result.runs, the device's own (ring, control buffers) first, the ring's
 * among them, buffers in order; and with none dropped, the buffers' pages
 * (the reserved alias window is none) and those above 4 GiB are the
 * result's, and bounce slots only where mappings bounced.
 */
static void fz_runs_check(const struct dma32demo_run *r,
			  const struct dma32demo_result *res,
			  const struct fz_map *m, __u64 nbufs)
{
	const struct dma32demo_addr_run *a = (const void *)m->buf;
	size_t i, b = m->buf - m->lo;
	__u64 pages = 0, above = 0, bounced = 0, p;
	__u32 buf = 0;
	bool order = !res->runs || (a[0].flags & DMA32DEMO_ADDR_RING), dev = true;

	if (res->runs > r->runs_max) {
		fz_bad(&fz.unexpected, "%u runs written, runs_max %u",
		       res->runs, r->runs_max);
		return;
	}
	for (i = res->runs * sizeof(*a); i < m->len; i++)
		if (m->lo[b + i] != fz_canary(b + i)) {
			fz_bad(&fz.canary, "address runs: byte %zu written past %u runs",
			       i, res->runs);
			break;
		}
	for (i = 0; i < res->runs; i++) {
		if (a[i].buffer == DMA32DEMO_ADDR_DEVICE_BUFFER) {
			order &= dev && (a[i].flags & (DMA32DEMO_ADDR_RING |
						       DMA32DEMO_ADDR_CTRL));
			continue;
		}
		dev = false;
		order &= a[i].buffer >= buf && a[i].buffer < nbufs &&
			 a[i].pages && !a[i].reserved;
		buf = a[i].buffer;
		if (a[i].flags & DMA32DEMO_ADDR_RESERVED)
			continue;
		pages += a[i].pages;
		bounced += !!(a[i].flags & DMA32DEMO_ADDR_BOUNCED);
		for (p = 0; p < a[i].pages; p++)
			above += (a[i].phys >> 12) + p >= 1ull << 20;
	}
	if (!order)
		fz_bad(&fz.unexpected, "address runs out of order (%u runs)",
		       res->runs);
	if (!res->runs_dropped &&
	    (pages != res->pages || above != res->pages_above_4g ||
	     !bounced != !res->bounced))
		fz_bad(&fz.unexpected,
		       "address runs: %llu pages, %llu above 4 GiB, %llu bounced; result %llu, %llu, %llu",
		       (unsigned long long)pages, (unsigned long long)above,
		       (unsigned long long)bounced,
		       (unsigned long long)res->pages,
		       (unsigned long long)res->pages_above_4g,
		       (unsigned long long)res->bounced);
	fz.runs_checked++;
}

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
	struct fz_map am, um = { 0 }, rm;
	enum fz_arg a = fz_pick_arg();
	enum fz_user u = FZ_USER_OK;
	enum fz_runs rk = fz_pct(50) ? FZ_RUNS_NONE : fz_pct(70) ? FZ_RUNS_OK :
			  (enum fz_runs)fz_below(FZ_RUNS_NR);
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
		r.reserved1 = (__u32)fz_rand() | 1;
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

	fz_runs_place(&r, &rm, rk);

	sent = r;
	want = -fz_expect_validation(&r, &total);
	argp = fz_arg_place(&am, a, &r, sizeof(r));
	/*
	 * No result comes back, or an EFAULT that may be the runs' copy after
	 * a request that succeeded: learn from STATS whether it failed
	 */
	if ((a == FZ_ARG_READONLY || fz_runs_unwritable(rk)) &&
	    ioctl(fz_fd, DMA32DEMO_IOC_STATS, &before))
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
			  fz_runs_unwritable(rk) ||
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
		if (fz_arg_writable(a) && !fz_runs_unwritable(rk))
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
			if ((__u32)res->error != (__u32)got &&
			    !(got == EFAULT && fz_runs_unwritable(rk)))
				fz_bad(&fz.unexpected, "result.error %d, ioctl %s",
				       res->error, got ? errname(got) : "success");
			if (res->verify_errors)
				fz_bad(&fz.mismatch, "%llu verify errors",
				       (unsigned long long)res->verify_errors);
		}
		if (rk == FZ_RUNS_OK && fz_arg_writable(a))
			fz_runs_check(&r, res, &rm, nbufs);
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
	/* Rejected, or the argument never came back: not a run written */
	if (rm.base && (!ran || !fz_arg_writable(a)))
		rm.len = 0;
	fz_map_check(&rm, "address runs");
	fz_map_free(&am);
	fz_map_free(&um);
	fz_map_free(&rm);
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
		"coherent_swiotlb_bytes", "map_failures", "aborted",
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
	printf(" runs %lu ran %lu run_ok %lu addr_runs_checked %lu", fz.runs,
	       fz.runs_ran, fz.runs_ok, fz.runs_checked);
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

int main(int argc, char **argv)
{
	return cmd_fuzz(argc - 1, argv + 1);
}
