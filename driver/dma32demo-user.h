/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What dma32ctl and the driver's test programs share: the names of
 * strategies, ops and zones, errno names, size parsing, opening the
 * device, one-line JSON output and the request data pattern. Header-only
 * (static inline), as tools/testing/selftests/kselftest.h is.
 */
#ifndef DMA32DEMO_USER_H
#define DMA32DEMO_USER_H

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
	[DMA32DEMO_STRATEGY_TRUNCATION_ALIAS] = "truncation-alias",
};

static const char *const op_names[] = {
	[DMA32DEMO_OP_FILL] = "fill",
	[DMA32DEMO_OP_CHECKSUM] = "checksum",
	[DMA32DEMO_OP_COPY] = "copy",
};

static const char *const zone_names[DMA32DEMO_NR_ZONES] = {
	"DMA", "DMA32", "Normal", "other",
};

/*
 * The driver's statistics (uapi/dma32demo-stats.h): name, place in struct
 * dma32demo_stats, counter (requests add to it) or gauge
 */
static const struct {
	const char *name;
	size_t off;
	bool counter;
} stat_descs[DMA32DEMO_NR_STATS] = {
#define DMA32DEMO_STAT(name, from, ...)					\
	[DMA32DEMO_STAT_##name] = { #name, offsetof(struct dma32demo_stats, name), \
				    DMA32DEMO_STAT_RESETS(from) },
#include "dma32demo-stats.h"
#undef DMA32DEMO_STAT
};

static const char *device_path = DEFAULT_DEVICE;

static inline void die(const char *fmt, ...)
{
	va_list ap;

	fputs("dma32ctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static inline const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : NULL;

	return n ? n : "EUNKNOWN";
}

/* Open the device and check that the driver speaks this ABI */
static inline int open_dev(void)
{
	struct dma32demo_info in;
	int fd = open(device_path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("%s: %s (%s)", device_path, errname(errno), strerror(errno));
	memset(&in, 0, sizeof(in));
	if (ioctl(fd, DMA32DEMO_IOC_INFO, &in))
		die("%s: INFO: %s (%s)", device_path, errname(errno),
		    strerror(errno));
	if (in.abi_version != DMA32DEMO_ABI_VERSION)
		die("%s: the driver speaks ABI %u, this program %u: build them from the same tree",
		    device_path, in.abi_version, DMA32DEMO_ABI_VERSION);
	return fd;
}

static inline int lookup(const char *what, const char *const *names,
			 int n, const char *s)
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
static inline __u64 parse_size(const char *opt, const char *s)
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
	/* 4K, 4KB, 4KiB and 4B, not 4iB */
	if (shift && end[0] == 'i' && end[1] == 'B')
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

static inline const char *human(__u64 v, char *buf, size_t len)
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

/*
 * The length of the well-formed UTF-8 sequence at @p (RFC 3629: no
 * overlong form, no surrogate, nothing above U+10FFFF), 0 if there is none
 */
static inline int utf8_len(const unsigned char *p)
{
	int n, i;
	unsigned int c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	c = p[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (n == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return n;
}

/*
 * A JSON string: '"' and the backslash escaped, control characters as \u00XX
 * (keys and values come from the command line and file paths). UTF-8
 * passes as it is; a byte that is not part of well-formed UTF-8 (a path
 * may hold any byte) becomes U+FFFD, as \ufffd: JSON text is Unicode.
 */
static inline void j_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	putchar('"');
	while (*p) {
		n = utf8_len(p);
		if (!n) {
			fputs("\\ufffd", stdout);
			p++;
		} else if (*p == '"' || *p == '\\') {
			printf("\\%c", *p++);
		} else if (*p < 0x20) {
			printf("\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, stdout);
			p += n;
		}
	}
	putchar('"');
}

static inline void j_key(const char *k)
{
	if (!j_first)
		putchar(',');
	j_string(k);
	putchar(':');
	j_first = false;
}

static inline void j_begin(void)
{
	putchar('{');
	j_first = true;
}

static inline void j_end(void)
{
	puts("}");
}

static inline void j_obj(const char *k)
{
	j_key(k);
	putchar('{');
	j_first = true;
}

static inline void j_obj_end(void)
{
	putchar('}');
	j_first = false;
}

static inline void j_arr(const char *k)
{
	j_key(k);
	putchar('[');
	j_first = true;
}

static inline void j_arr_end(void)
{
	putchar(']');
	j_first = false;
}

/* An object as the next element of an array; j_obj_end() closes it */
static inline void j_item(void)
{
	printf("%s{", j_first ? "" : ",");
	j_first = true;
}

static inline void j_u64(const char *k, __u64 v)
{
	j_key(k);
	printf("%llu", (unsigned long long)v);
}

static inline void j_hex(const char *k, __u64 v)
{
	j_key(k);
	printf("\"0x%08llx\"", (unsigned long long)v);
}

static inline void j_str(const char *k, const char *v)
{
	j_key(k);
	if (v)
		j_string(v);
	else
		fputs("null", stdout);
}

static inline void j_bool(const char *k, bool v)
{
	j_key(k);
	fputs(v ? "true" : "false", stdout);
}

/* A number, or null when it is not there */
static inline void j_maybe(const char *k, bool have, __u64 v)
{
	if (have)
		j_u64(k, v);
	else
		j_str(k, NULL);
}

static inline void fill_pattern(__u8 *p, size_t len, __u64 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = dma32_demo_pattern_word(seed, i / 8) >> ((i % 8) * 8);
}

#endif /* DMA32DEMO_USER_H */
