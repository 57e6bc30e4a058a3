// SPDX-License-Identifier: GPL-2.0
/*
 * dma32demo: the CPU's view of the data the device moved: the FILL
 * pattern written and checked byte by byte, CRC-32C of what the device
 * read, source against destination of a COPY, and d32_verify(), which
 * checks every completed transfer of a request.
 */

#include <linux/crc32.h>
#include <linux/highmem.h>
#include <linux/sched/signal.h>
#ifdef D32_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#include "dma32demo-priv.h"

/* CPU access to buffers */

/* Map the part of @b at @off; *len is clamped to what the mapping covers */
static void *d32_kmap(struct d32_buf *b, size_t off, size_t *len)
{
	size_t in;

	if (b->cpu) {
		/* In pieces, so that long loops can reschedule */
		*len = min_t(size_t, *len, SZ_64K);
		return b->cpu + off;
	}
	off += b->pgoff;
	in = offset_in_page(off);
	*len = min_t(size_t, *len, PAGE_SIZE - in);
	return kmap_local_page(b->pages[off >> PAGE_SHIFT]) + in;
}

static void d32_kunmap(struct d32_buf *b, void *p)
{
	if (!b->cpu)
		kunmap_local(p);
}

static u8 d32_pattern_byte(u64 seed, u64 pos)
{
	return dma32_demo_pattern_word(seed, pos >> 3) >> ((pos & 7) * 8);
}

/* Write the FILL pattern of @seed to [off, off + len) of @b */
void d32_pattern_write(struct d32_buf *b, size_t off, size_t len,
		       u64 seed)
{
	u64 pos = 0;

	while (len) {
		size_t n = len, i = 0;
		u8 *p = d32_kmap(b, off, &n);

		while (i < n) {
			if (!(pos & 7) && n - i >= 8) {
				put_unaligned_le64(dma32_demo_pattern_word(seed, pos >> 3),
						   p + i);
				i += 8;
				pos += 8;
			} else {
				p[i++] = d32_pattern_byte(seed, pos++);
			}
		}
		d32_kunmap(b, p);
		off += n;
		len -= n;
		cond_resched();
	}
}

/* Count the bytes of [off, off + len) of @b that differ from the pattern */
static u64 d32_pattern_check(struct d32_buf *b, size_t off, size_t len,
			     u64 seed, u64 *first_bad)
{
	u64 pos = 0, bad = 0;

	while (len) {
		size_t n = len, i = 0;
		u8 *p = d32_kmap(b, off, &n);

		while (i < n) {
			if (!(pos & 7) && n - i >= 8 &&
			    get_unaligned_le64(p + i) ==
			    dma32_demo_pattern_word(seed, pos >> 3)) {
				i += 8;
				pos += 8;
				continue;
			}
			if (p[i] != d32_pattern_byte(seed, pos)) {
				if (!bad)
					*first_bad = off + i;
				bad++;
			}
			i++;
			pos++;
		}
		d32_kunmap(b, p);
		off += n;
		len -= n;
		cond_resched();
	}
	return bad;
}

/* Standard CRC-32C (check value 0xe3069283) of [off, off + len) of @b */
static u32 d32_crc32c(struct d32_buf *b, size_t off, size_t len)
{
	u32 crc = ~0u;

	while (len) {
		size_t n = len;
		u8 *p = d32_kmap(b, off, &n);

		crc = __crc32c_le(crc, p, n);
		d32_kunmap(b, p);
		off += n;
		len -= n;
		cond_resched();
	}
	return ~crc;
}

static u64 d32_compare(struct d32_buf *a, struct d32_buf *b, size_t off,
		       size_t len, u64 *first_bad)
{
	u64 bad = 0;

	while (len) {
		size_t n = len, i;
		u8 *pa = d32_kmap(a, off, &n);
		u8 *pb = d32_kmap(b, off, &n);

		if (memcmp(pa, pb, n)) {
			for (i = 0; i < n; i++) {
				if (pa[i] == pb[i])
					continue;
				if (!bad)
					*first_bad = off + i;
				bad++;
			}
		}
		d32_kunmap(b, pb);
		d32_kunmap(a, pa);
		off += n;
		len -= n;
		cond_resched();
	}
	return bad;
}

/* Check the data of every completed transfer; -EILSEQ on a mismatch */
int d32_verify(struct d32_req *rq)
{
	struct dma32demo_result *res = rq->res;
	unsigned int i, unit = UINT_MAX;
	bool unit_ok = false;
	u64 first_bad = 0, bad;
	u32 crc;
	int ret;

	for (i = 0; i < rq->njobs; i++) {
		struct d32_job *j = &rq->jobs[i];

		/* Up to 1 GiB to check: see d32_interrupted() */
		ret = d32_interrupted(rq->dd);
		if (ret)
			return ret;
		if (j->unit != unit) {
			if (unit_ok)
				res->buffers_verified++;
			unit = j->unit;
			unit_ok = true;
		}
		if (j->status != DMA32_DEMO_ST_OK) {
			unit_ok = false;
			continue;
		}
		bad = 0;
		switch (rq->op) {
		case DMA32DEMO_OP_FILL:
			bad = d32_pattern_check(d32_dst(rq, unit), j->off,
						j->len, j->seed, &first_bad);
			break;
		case DMA32DEMO_OP_CHECKSUM:
			crc = d32_crc32c(d32_src(rq, unit), j->off, j->len);
			if (!res->verify_errors) {
				res->device_crc = j->result;
				res->cpu_crc = crc;
			}
			if (crc != j->result) {
				first_bad = j->off;
				bad = 1;
			}
			break;
		case DMA32DEMO_OP_COPY:
			bad = d32_compare(d32_src(rq, unit), d32_dst(rq, unit),
					  j->off, j->len, &first_bad);
			break;
		}
		if (bad) {
			if (!res->verify_errors)
				res->first_bad_offset = first_bad;
			res->verify_errors += bad;
			unit_ok = false;
		}
	}
	if (unit_ok)
		res->buffers_verified++;
	if (res->verify_errors) {
		dev_err_ratelimited(rq->dd->dev, "verification failed: %llu bad, first at offset %llu\n",
				    res->verify_errors, res->first_bad_offset);
		return -EILSEQ;
	}
	return 0;
}

