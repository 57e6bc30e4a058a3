// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo-ioctls: every malformed request to /dev/dma32demo0 gets its
 * errno, and only requests that pass validation are counted.
 *
 * A kselftest harness program (the kernel's own
 * tools/testing/selftests/kselftest_harness.h, from the guest kernel's
 * tree): it prints KTAP itself, one result per case, each case in its own
 * child process. Built static for the guest (see the Makefile); the guest
 * suite driver/tests/guest/ioctls.sh runs it.
 */
#define _GNU_SOURCE
#include "dma32demo-user.h"
#include "kselftest_harness.h"

#include <linux/capability.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>

/* The request every case starts from: valid, and cheap. */
static const struct dma32demo_run valid_run = {
	.strategy = DMA32DEMO_STRATEGY_COHERENT,
	.op = DMA32DEMO_OP_FILL,
	.size = 4096,
	.count = 1,
	.flags = DMA32DEMO_RUN_VERIFY,
};

/* A place for address runs that the cases can point at. */
static struct dma32demo_addr_run run_space[16];

static int ioctl_errno(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

FIXTURE(dev) {
	int fd;
	struct dma32demo_info info;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(DEFAULT_DEVICE, O_RDWR);
	ASSERT_LE(0, self->fd) {
		TH_LOG("open %s: %s", DEFAULT_DEVICE, strerror(errno));
	}
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_INFO, &self->info));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

/* Run R and expect WANT (0: success), naming both errnos if not. */
#define EXPECT_RUN(want, r) do {					\
	int want_ = (want);						\
	int got_ = ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, (r));	\
	EXPECT_EQ(want_, got_) {					\
		TH_LOG("got %s, expected %s", got_ ? errname(got_) : "success", \
		       want_ ? errname(want_) : "success");		\
	}								\
} while (0)

/*
 * One field of a RUN request made wrong, its errno: a variant each, so
 * each gets its own result line.
 */
FIXTURE(run_field) {
	int fd;
	struct dma32demo_info info;
};

FIXTURE_VARIANT(run_field) {
	void (*edit)(struct dma32demo_run *r, const struct dma32demo_info *info);
	int want;
};

FIXTURE_SETUP(run_field)
{
	self->fd = open(DEFAULT_DEVICE, O_RDWR);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_INFO, &self->info));
}

FIXTURE_TEARDOWN(run_field)
{
	close(self->fd);
}

TEST_F(run_field, gives_its_errno)
{
	struct dma32demo_run r = valid_run;

	variant->edit(&r, &self->info);
	EXPECT_RUN(variant->want, &r);
}

#define RUN_FIELD(name, want_errno, body)				\
static void edit_##name(struct dma32demo_run *r,			\
			const struct dma32demo_info *info)		\
{									\
	(void)info;							\
	body;								\
}									\
FIXTURE_VARIANT_ADD(run_field, name) {					\
	.edit = edit_##name,						\
	.want = want_errno,						\
}

RUN_FIELD(valid, 0, (void)r);
RUN_FIELD(strategy_0, EINVAL, r->strategy = 0);
RUN_FIELD(strategy_unknown, EINVAL, r->strategy = 99);
RUN_FIELD(op_0, EINVAL, r->op = 0);
RUN_FIELD(op_unknown, EINVAL, r->op = 7);
RUN_FIELD(size_0, EINVAL, r->size = 0);
RUN_FIELD(size_above_max_xfer, E2BIG, r->size = (__u64)info->max_xfer + 1);
RUN_FIELD(count_0, EINVAL, r->count = 0);
RUN_FIELD(count_above_max, E2BIG, r->count = DMA32DEMO_MAX_COUNT + 1);
RUN_FIELD(size_times_count_overflows, EOVERFLOW,
	  { r->size = 1 << 20; r->count = ~0ull / 1024; });
RUN_FIELD(copy_size_times_count_times_2_overflows, EOVERFLOW,
	  { r->op = DMA32DEMO_OP_COPY; r->size = 1ull << 32; r->count = 1ull << 31; });
RUN_FIELD(request_above_max_request_mb, E2BIG,
	  { r->size = 1 << 20; r->count = DMA32DEMO_MAX_COUNT; });
RUN_FIELD(unknown_flag, EINVAL, r->flags = 0x80000000u);
RUN_FIELD(reserved0_set, EINVAL, r->reserved0 = 1);
RUN_FIELD(reserved1_set, EINVAL, r->reserved1 = 1);
RUN_FIELD(user_addr_with_a_kernel_strategy, EINVAL,
	  { r->user_addr = 0x10000; r->user_len = 4096; });
RUN_FIELD(truncation_alias_with_a_checksum, EINVAL,
	  { r->strategy = DMA32DEMO_STRATEGY_TRUNCATION_ALIAS; r->op = DMA32DEMO_OP_CHECKSUM; });
RUN_FIELD(truncation_alias_with_two_buffers, EINVAL,
	  { r->strategy = DMA32DEMO_STRATEGY_TRUNCATION_ALIAS; r->count = 2; });
RUN_FIELD(truncation_alias_beyond_half_its_window, EINVAL,
	  { r->strategy = DMA32DEMO_STRATEGY_TRUNCATION_ALIAS;
	    r->size = DMA32DEMO_ALIAS_MAX + 1; });
RUN_FIELD(runs_max_above_the_limit, E2BIG,
	  { r->runs_max = DMA32DEMO_MAX_RUNS + 1; r->runs_addr = (unsigned long)run_space; });
RUN_FIELD(runs_max_without_runs_addr, EFAULT, r->runs_max = 4);
RUN_FIELD(runs_addr_without_runs_max, EINVAL, r->runs_addr = (unsigned long)run_space);
RUN_FIELD(runs_addr_in_the_kernel, EFAULT,
	  { r->runs_max = 4; r->runs_addr = 0xffff800000000000ull; });

/* The user strategy's buffer: pinned, aligned, whole, writable. */
TEST_F(dev, user_buffers)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct dma32demo_run r = valid_run;
	__u8 *map, *ro;

	map = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	r.strategy = DMA32DEMO_STRATEGY_USER;
	r.user_addr = (unsigned long)map;
	r.user_len = 4096;
	EXPECT_RUN(0, &r);				/* valid */
	r.user_addr = 0;
	EXPECT_RUN(EFAULT, &r);				/* NULL */
	r.user_addr = (unsigned long)map + 8;
	EXPECT_RUN(EINVAL, &r);				/* misaligned */
	r.user_addr = (unsigned long)map;
	r.user_len = 8192;
	EXPECT_RUN(EINVAL, &r);				/* user_len != size x count */
	r.size = 100;
	r.count = 2;
	r.user_len = 200;
	EXPECT_RUN(EINVAL, &r);				/* destinations share a cache line */
	r.size = 4096;
	r.count = 1;
	ASSERT_EQ(0, munmap(map + 2 * pg, 2 * pg));
	r.user_addr = (unsigned long)map + 2 * pg;
	r.user_len = 4096;
	EXPECT_RUN(EFAULT, &r);				/* unmapped */
	r.user_addr = (unsigned long)map + pg;
	r.size = 2 * pg;
	r.user_len = 2 * pg;
	EXPECT_RUN(EFAULT, &r);				/* runs into a hole */
	r.user_addr = 0xffff800000000000ull;
	r.size = 4096;
	r.user_len = 4096;
	EXPECT_RUN(EFAULT, &r);				/* a kernel address */
	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	r.user_addr = (unsigned long)ro;
	EXPECT_RUN(EFAULT, &r);				/* read-only, as a fill target */
	r.op = DMA32DEMO_OP_CHECKSUM;
	EXPECT_RUN(0, &r);				/* read-only, as a checksum source */
	munmap(ro, pg);
	munmap(map, 2 * pg);
}

TEST_F(dev, unsafe_raw_needs_allow_unsafe)
{
	struct dma32demo_run r = valid_run;

	if (self->info.flags & DMA32DEMO_INFO_ALLOW_UNSAFE)
		SKIP(return, "the driver was loaded with allow_unsafe=1");
	r.strategy = DMA32DEMO_STRATEGY_UNSAFE_RAW;
	EXPECT_RUN(EPERM, &r);
}

TEST_F(dev, truncation_alias_needs_alias_window)
{
	struct dma32demo_run r = valid_run;

	if (self->info.alias_window)
		SKIP(return, "the driver was loaded with an alias_window");
	r.strategy = DMA32DEMO_STRATEGY_TRUNCATION_ALIAS;
	EXPECT_RUN(EPERM, &r);
}

TEST_F(dev, bad_commands_and_arguments)
{
	struct dma32demo_run r = valid_run;

	EXPECT_EQ(ENOTTY, ioctl_errno(self->fd, _IO(DMA32DEMO_IOC_MAGIC, 42), NULL));
	EXPECT_EQ(ENOTTY, ioctl_errno(self->fd, _IOWR(DMA32DEMO_IOC_MAGIC, 1, __u64), &r)) {
		TH_LOG("RUN with a wrong size in the command");
	}
	EXPECT_EQ(EFAULT, ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, NULL));
	EXPECT_EQ(EFAULT, ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, (void *)16));
	EXPECT_EQ(EFAULT, ioctl_errno(self->fd, DMA32DEMO_IOC_INFO, NULL));
	EXPECT_EQ(EFAULT, ioctl_errno(self->fd, DMA32DEMO_IOC_STATS, NULL));
}

/*
 * Address runs: the ring's first (and the control buffers'), then every
 * buffer's in order, their pages adding up to the result's, nothing written
 * past result.runs.
 */
TEST_F(dev, address_runs)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct dma32demo_addr_run runs[16], *a;
	struct dma32demo_run r = valid_run;
	__u64 pages = 0, ring_pages = 0;
	unsigned int i, next = 0;
	bool order = true;

	memset(runs, 0x5a, sizeof(runs));
	r.size = 8192;
	r.count = 3;
	r.runs_addr = (unsigned long)runs;
	r.runs_max = ARRAY_SIZE(runs);
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, &r));
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
	EXPECT_TRUE(order);
	EXPECT_LE(4 + self->info.ctrl_buffers, r.result.runs);
	EXPECT_EQ(0, r.result.runs_dropped);
	EXPECT_EQ(r.result.pages, pages);
	EXPECT_EQ(r.count, next);
	EXPECT_LE((__u64)self->info.ring_entries * 64, ring_pages * pg);
	for (i = r.result.runs; i < ARRAY_SIZE(runs); i++)
		EXPECT_EQ(0x5a, ((__u8 *)&runs[i])[0]) {
			TH_LOG("entry %u, past result.runs, was written", i);
		}
}

/* runs_max 1 keeps the ring's run and counts the rest as dropped. */
TEST_F(dev, address_runs_capacity_1)
{
	struct dma32demo_addr_run runs[1];
	struct dma32demo_run r = valid_run;

	r.size = 8192;
	r.count = 3;
	r.runs_addr = (unsigned long)runs;
	r.runs_max = 1;
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, &r));
	EXPECT_EQ(1, r.result.runs);
	EXPECT_TRUE(runs[0].flags & DMA32DEMO_ADDR_RING);
	EXPECT_LE(r.count + self->info.ctrl_buffers, r.result.runs_dropped);
}

/* Runs to read-only memory: the request runs, the copy back fails. */
TEST_F(dev, address_runs_read_only)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct dma32demo_stats before, after;
	struct dma32demo_run r = valid_run;
	void *ro;

	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	r.runs_addr = (unsigned long)ro;
	r.runs_max = 4;
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_STATS, &before));
	EXPECT_RUN(EFAULT, &r);
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_STATS, &after));
	EXPECT_EQ(1, after.requests - before.requests) {
		TH_LOG("the request itself ran before the copy back failed");
	}
	munmap(ro, pg);
}

/*
 * Only requests that pass validation are counted: two valid requests
 * around rejected ones raise requests by 2 and errors by nothing.
 */
TEST_F(dev, rejected_requests_are_not_counted)
{
	struct dma32demo_stats before, after;
	struct dma32demo_run r = valid_run;

	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_STATS, &before));
	EXPECT_RUN(0, &r);
	r.strategy = 0;
	EXPECT_RUN(EINVAL, &r);
	r = valid_run;
	r.size = 0;
	EXPECT_RUN(EINVAL, &r);
	r = valid_run;
	r.count = DMA32DEMO_MAX_COUNT + 1;
	EXPECT_RUN(E2BIG, &r);
	EXPECT_EQ(EFAULT, ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, NULL));
	EXPECT_EQ(ENOTTY, ioctl_errno(self->fd, _IO(DMA32DEMO_IOC_MAGIC, 42), NULL));
	r = valid_run;
	EXPECT_RUN(0, &r);
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_STATS, &after));
	EXPECT_EQ(2, after.requests - before.requests);
	EXPECT_EQ(0, after.errors - before.errors);
}

/* Drop CAP_SYS_ADMIN from this process's effective set (raw capset(2)) */
static int drop_cap_sys_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	return syscall(SYS_capset, &h, d);
}

/*
 * Physical and DMA addresses only for an opener with CAP_SYS_ADMIN: a
 * file opened without it reads them as 0 and gets no address runs (the
 * flags say so); one opened before the capability was dropped still
 * sees them, as /proc/PID/pagemap does. Counts are not addresses: the
 * request's pages and mappings are there either way.
 */
TEST_F(dev, addresses_need_cap_sys_admin)
{
	struct dma32demo_addr_run runs[16];
	struct dma32demo_run r = valid_run;
	struct dma32demo_info in;
	int fd;

	if (self->info.flags & DMA32DEMO_INFO_ADDRESSES_HIDDEN)
		SKIP(return, "this test must start with CAP_SYS_ADMIN");
	ASSERT_NE(0, self->info.ring_dma);
	ASSERT_EQ(0, drop_cap_sys_admin()) {
		TH_LOG("capset: %s", strerror(errno));
	}
	fd = open(DEFAULT_DEVICE, O_RDWR);
	ASSERT_LE(0, fd);

	memset(&in, 0x5a, sizeof(in));
	ASSERT_EQ(0, ioctl_errno(fd, DMA32DEMO_IOC_INFO, &in));
	EXPECT_TRUE(in.flags & DMA32DEMO_INFO_ADDRESSES_HIDDEN);
	EXPECT_EQ(0, in.ring_dma);
	EXPECT_EQ(0, in.swiotlb_start);
	EXPECT_EQ(0, in.swiotlb_end);
	EXPECT_EQ(0, in.alias_window);
	EXPECT_EQ(self->info.dma_bits, in.dma_bits);

	memset(runs, 0x5a, sizeof(runs));
	r.runs_addr = (unsigned long)runs;
	r.runs_max = ARRAY_SIZE(runs);
	ASSERT_EQ(0, ioctl_errno(fd, DMA32DEMO_IOC_RUN, &r));
	EXPECT_TRUE(r.result.flags & DMA32DEMO_RESULT_ADDRESSES_HIDDEN);
	EXPECT_EQ(0, r.result.runs);
	EXPECT_EQ(0x5a, ((__u8 *)runs)[0]) {
		TH_LOG("address runs were written for an opener without CAP_SYS_ADMIN");
	}
	EXPECT_EQ(1, r.result.pages);
	close(fd);

	/* The file opened with the capability keeps what it was opened with */
	memset(&in, 0, sizeof(in));
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_INFO, &in));
	EXPECT_FALSE(in.flags & DMA32DEMO_INFO_ADDRESSES_HIDDEN);
	EXPECT_EQ(self->info.ring_dma, in.ring_dma);
	r.result.flags = 0;
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, &r));
	EXPECT_FALSE(r.result.flags & DMA32DEMO_RESULT_ADDRESSES_HIDDEN);
	EXPECT_LE(2, r.result.runs);
}

#define FAULT_INJECTION "/sys/module/dma32demo/parameters/unsafe_fault_injection"

/* Write V to the module parameter unsafe_fault_injection; 0 or an errno */
static int set_fault_injection(const char *v)
{
	int fd = open(FAULT_INJECTION, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, v, strlen(v)) < 0)
		err = errno;
	close(fd);
	return err;
}

/*
 * A request that faults (an injected bus error) reports where: fault_addr
 * and latched_fault_addr. They are addresses too, so an opener without
 * CAP_SYS_ADMIN reads them as 0, and the flag says so; the fault itself
 * (EIO, device_faults) is not hidden.
 */
TEST_F(dev, fault_addresses_need_cap_sys_admin)
{
	struct dma32demo_run r = valid_run, hidden;
	int fd, err, err_hidden;

	if (self->info.flags & DMA32DEMO_INFO_ADDRESSES_HIDDEN)
		SKIP(return, "this test must start with CAP_SYS_ADMIN");
	r.flags |= DMA32DEMO_RUN_INJECT_BUS_ERROR;
	hidden = r;
	ASSERT_EQ(0, set_fault_injection("1")) {
		TH_LOG("cannot turn on %s", FAULT_INJECTION);
	}
	err = ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, &r);
	ASSERT_EQ(0, drop_cap_sys_admin()) {
		set_fault_injection("0");
		TH_LOG("capset: %s", strerror(errno));
	}
	fd = open(DEFAULT_DEVICE, O_RDWR);
	err_hidden = fd < 0 ? errno : ioctl_errno(fd, DMA32DEMO_IOC_RUN, &hidden);
	/* The parameter's owner (uid 0) may write it without the capability */
	EXPECT_EQ(0, set_fault_injection("0"));
	if (fd >= 0)
		close(fd);

	/* With the capability, the fault has its addresses */
	EXPECT_EQ(EIO, err);
	EXPECT_EQ(1, r.result.device_faults);
	EXPECT_NE(0, r.result.fault_addr | r.result.latched_fault_addr) {
		TH_LOG("the fault reported no address: the test proves nothing");
	}
	EXPECT_FALSE(r.result.flags & DMA32DEMO_RESULT_ADDRESSES_HIDDEN);
	/* Without it, the same fault, and no address */
	EXPECT_EQ(EIO, err_hidden);
	EXPECT_EQ(1, hidden.result.device_faults);
	EXPECT_TRUE(hidden.result.flags & DMA32DEMO_RESULT_ADDRESSES_HIDDEN);
	EXPECT_EQ(0, hidden.result.fault_addr);
	EXPECT_EQ(0, hidden.result.latched_fault_addr);
}

/* Read only after the ioctl returns: a call the compiler cannot see into */
static sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/*
 * A request of about a second under a timer that fires every 5 ms: the
 * signals are handled and the request is done once. SA_RESTART or not,
 * an ordinary signal does not end a request (only a fatal one does): a
 * request that every signal ended and restarted from the start would
 * never finish here, and one that returned EINTR would fail.
 */
FIXTURE(periodic_signals) {
	int fd;
};

FIXTURE_VARIANT(periodic_signals) {
	int sa_flags;
};

FIXTURE_VARIANT_ADD(periodic_signals, sa_restart) {
	.sa_flags = SA_RESTART,
};

FIXTURE_VARIANT_ADD(periodic_signals, no_sa_restart) {
	.sa_flags = 0,
};

FIXTURE_SETUP(periodic_signals)
{
	self->fd = open(DEFAULT_DEVICE, O_RDWR);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(periodic_signals)
{
	close(self->fd);
}

TEST_F_TIMEOUT(periodic_signals, do_not_end_a_request, 120)
{
	struct itimerval every_5ms = {
		.it_interval = { .tv_usec = 5000 },
		.it_value = { .tv_usec = 5000 },
	};
	struct itimerval off = { };
	struct dma32demo_stats before, after;
	struct dma32demo_run r = valid_run;
	struct sigaction sa = {
		.sa_handler = on_alarm,
		.sa_flags = variant->sa_flags,
	};
	int err;

	r.strategy = DMA32DEMO_STRATEGY_STREAMING_DMA32;
	r.op = DMA32DEMO_OP_CHECKSUM;
	r.size = 4 << 20;
	r.count = 16;
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_STATS, &before));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &every_5ms, NULL));
	err = ioctl_errno(self->fd, DMA32DEMO_IOC_RUN, &r);
	setitimer(ITIMER_REAL, &off, NULL);
	EXPECT_EQ(0, err) {
		TH_LOG("got %s after %d signals", errname(err), (int)alarms);
	}
	EXPECT_EQ(r.count, r.result.buffers_verified);
	EXPECT_LT(0, alarms) {
		TH_LOG("no signal came during the request: it proves nothing");
	}
	ASSERT_EQ(0, ioctl_errno(self->fd, DMA32DEMO_IOC_STATS, &after));
	EXPECT_EQ(1, after.requests - before.requests) {
		TH_LOG("the request ran %llu times",
		       (unsigned long long)(after.requests - before.requests));
	}
	TH_LOG("%d signals during one request of %llu ms", (int)alarms,
	       (unsigned long long)r.result.ns / 1000000);
}

/*
 * dma32demo-ioctls --signals-across-sleep: not a case of the harness,
 * because the system sleep that it must cross is driven from outside
 * (tests/guest/suspend.sh suspends the guest while it runs). One request
 * of 256 MiB, verified, under a timer that fires every 5 ms into a handler
 * without SA_RESTART; prints one line and exits 0 when the request
 * succeeded, verified every buffer and signals came, 1 otherwise.
 */
static int signals_across_sleep(void)
{
	struct itimerval every_5ms = {
		.it_interval = { .tv_usec = 5000 },
		.it_value = { .tv_usec = 5000 },
	};
	struct itimerval off = { };
	struct dma32demo_run r = valid_run;
	struct sigaction sa = { .sa_handler = on_alarm };
	int fd, err;

	fd = open(DEFAULT_DEVICE, O_RDWR);
	if (fd < 0) {
		printf("signals-across-sleep: open %s: %s\n", DEFAULT_DEVICE,
		       strerror(errno));
		return 1;
	}
	r.strategy = DMA32DEMO_STRATEGY_STREAMING_DMA32;
	r.op = DMA32DEMO_OP_CHECKSUM;
	r.size = 64 << 20;
	r.count = 4;
	if (sigaction(SIGALRM, &sa, NULL) ||
	    setitimer(ITIMER_REAL, &every_5ms, NULL)) {
		printf("signals-across-sleep: timer: %s\n", strerror(errno));
		return 1;
	}
	err = ioctl_errno(fd, DMA32DEMO_IOC_RUN, &r);
	setitimer(ITIMER_REAL, &off, NULL);
	close(fd);
	printf("signals-across-sleep: %s, %d signals, %llu/%llu verified, %llu ms\n",
	       err ? errname(err) : "ok", (int)alarms,
	       (unsigned long long)r.result.buffers_verified,
	       (unsigned long long)r.count,
	       (unsigned long long)r.result.ns / 1000000);
	return err || r.result.buffers_verified != r.count || !alarms;
}

/* TEST_HARNESS_MAIN, with the mode above */
static void __attribute__((constructor)) __constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--signals-across-sleep"))
		return signals_across_sleep();
	return test_harness_run(argc, argv);
}
