// SPDX-License-Identifier: GPL-2.0
/*
 * odirect_offsets: O_DIRECT reads and writes of whole 4 KiB blocks from user
 * buffers that are 512-byte aligned but start anywhere in a page.
 *
 * The block layer accepts an O_DIRECT buffer aligned to the queue's
 * dma_alignment (511 unless the driver says otherwise), so each block of such
 * a transfer reaches the driver as segments that start or end mid-page. A
 * driver that treats every segment as a whole page at offset 0 writes the
 * wrong data and, on reads, overwrites the user's memory around the buffer.
 *
 * For every 512-byte offset within a page and 1 to 16 blocks, at a block
 * offset on the device that moves from one transfer to the next, this writes
 * a pattern unique to the transfer and the block from a buffer at that offset
 * in a page-aligned allocation, then reads the blocks back into a buffer at
 * the same offset. Everything in the allocation around the buffer (a page
 * before it and the rest of its last page plus a page after it) holds a known
 * byte, checked after every write and read; the data read back must be the
 * data written. At the end the whole region used is read back through an
 * aligned buffer and compared with what every transfer wrote, which catches
 * blocks written in the wrong place.
 *
 * usage: odirect_offsets DEVICE
 * Prints "odirect_offsets: N ops, M data mismatches, G guard corruptions"
 * (ops: O_DIRECT reads and writes; mismatches: 4 KiB blocks that read back
 * wrong; corruptions: transfers that changed memory outside their buffer)
 * and exits non-zero on any mismatch, corruption or I/O error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mix.h"

#define BLK 4096UL		/* block size of the transfers */
#define STEP 512UL		/* buffer offsets within a page: 0, 512, ... */
#define MAX_BLOCKS 16		/* blocks per transfer: 1 .. MAX_BLOCKS */
#define REGION_BLOCKS 256	/* device blocks used (1 MiB) */
#define WR_GUARD 0xa5		/* memory around the write buffers */
#define RD_GUARD 0x5a		/* memory around the read buffers */
#define POISON 0x3c		/* read buffers before the read */
#define MAX_REPORTS 20

static unsigned long ops, mismatches, corruptions, io_errors, reports;
static uint8_t *shadow;		/* what the region should hold */

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void report(const char *fmt, ...)
{
	va_list ap;

	if (reports++ >= MAX_REPORTS) {
		if (reports == MAX_REPORTS + 1)
			printf("odirect_offsets: further failures not shown\n");
		return;
	}
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* Block @blk of transfer @seq: no two blocks anywhere in the run are equal. */
static void fill_block(uint8_t *p, unsigned long seq, unsigned long blk)
{
	uint64_t w;
	size_t i;

	for (i = 0; i < BLK; i += sizeof(w)) {
		w = mix((seq << 40) ^ (blk << 20) ^ i);
		memcpy(p + i, &w, sizeof(w));
	}
}

/* The number of bytes of [p, p + n) that are not @byte. */
static size_t check_fill(const uint8_t *p, size_t n, uint8_t byte)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++)
		bad += p[i] != byte;
	return bad;
}

struct xfer {
	uint8_t *mem;		/* page-aligned allocation */
	size_t size;		/* of the allocation */
	uint8_t guard;		/* byte around the buffer */
	uint8_t *buf;		/* mem + page + off */
	size_t len;		/* blocks * BLK */
	unsigned long off;	/* buffer offset within its page */
};

static int xfer_alloc(struct xfer *x, long page, unsigned long off,
		      unsigned int blocks, uint8_t guard)
{
	size_t end;

	x->off = off;
	x->len = blocks * BLK;
	end = page + off + x->len;
	/* The rest of the buffer's last page and one more page after it. */
	x->size = (end + page - 1) / page * page + page;
	if (posix_memalign((void **)&x->mem, page, x->size))
		return -1;
	x->guard = guard;
	memset(x->mem, guard, x->size);
	x->buf = x->mem + page + off;
	return 0;
}

/* Whether the memory around the buffer is intact; reports if not. */
static int guards_ok(const struct xfer *x, const char *what, unsigned int blocks,
		     unsigned long devblk)
{
	size_t before = x->buf - x->mem;
	size_t after = x->size - before - x->len;
	size_t bad_before = check_fill(x->mem, before, x->guard);
	size_t bad_after = check_fill(x->buf + x->len, after, x->guard);

	if (!bad_before && !bad_after)
		return 1;
	corruptions++;
	report("%s of %u block(s) at device block %lu from buffer offset %lu: %zu of %zu bytes before the buffer and %zu of %zu after it overwritten\n",
	       what, blocks, devblk, x->off, bad_before, before, bad_after,
	       after);
	return 0;
}

static int do_io(int fd, int wr, void *buf, size_t len, off_t pos)
{
	ssize_t r;

	ops++;
	r = wr ? pwrite(fd, buf, len, pos) : pread(fd, buf, len, pos);
	if (r == (ssize_t)len)
		return 0;
	io_errors++;
	if (r < 0)
		report("%s of %zu bytes at %lld: %s\n", wr ? "write" : "read",
		       len, (long long)pos, strerror(errno));
	else
		report("%s of %zu bytes at %lld: short, %zd bytes\n",
		       wr ? "write" : "read", len, (long long)pos, r);
	return -1;
}

/* Compare @len bytes read at device block @devblk with the shadow. */
static void compare(const uint8_t *got, size_t len, unsigned long devblk,
		    const char *what, unsigned long off)
{
	size_t b, i;

	for (b = 0; b < len / BLK; b++) {
		const uint8_t *g = got + b * BLK;
		const uint8_t *w = shadow + (devblk + b) * BLK;

		if (!memcmp(g, w, BLK))
			continue;
		mismatches++;
		for (i = 0; g[i] == w[i]; i++)
			;
		report("%s: device block %lu (buffer offset %lu) differs from byte %zu: got %02x want %02x\n",
		       what, devblk + b, off, i, g[i], w[i]);
	}
}

static void one(int fd, long page, unsigned long seq, unsigned long off,
		unsigned int blocks, unsigned long devblk)
{
	struct xfer wr, rd;
	unsigned int b;

	if (xfer_alloc(&wr, page, off, blocks, WR_GUARD) ||
	    xfer_alloc(&rd, page, off, blocks, RD_GUARD)) {
		fprintf(stderr, "odirect_offsets: out of memory\n");
		exit(2);
	}
	for (b = 0; b < blocks; b++)
		fill_block(wr.buf + b * BLK, seq, devblk + b);

	if (!do_io(fd, 1, wr.buf, wr.len, devblk * BLK))
		memcpy(shadow + devblk * BLK, wr.buf, wr.len);
	else	/* contents unknown: take what the device holds now */
		do_io(fd, 0, shadow + devblk * BLK, wr.len, devblk * BLK);
	guards_ok(&wr, "write", blocks, devblk);

	memset(rd.buf, POISON, rd.len);
	if (!do_io(fd, 0, rd.buf, rd.len, devblk * BLK))
		compare(rd.buf, rd.len, devblk, "read back", off);
	guards_ok(&rd, "read", blocks, devblk);

	free(wr.mem);
	free(rd.mem);
}

int main(int argc, char **argv)
{
	unsigned long nblocks, off, seq = 0, region;
	unsigned int blocks;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t size = 0;
	uint8_t *all;
	struct stat st;
	int fd, lbs = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: odirect_offsets DEVICE\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "odirect_offsets: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size) || ioctl(fd, BLKSSZGET, &lbs)) {
			fprintf(stderr, "odirect_offsets: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
	} else {
		size = st.st_size;
	}
	if (lbs > (int)BLK) {
		fprintf(stderr, "odirect_offsets: logical block size %d > %lu\n", lbs, BLK);
		return 1;
	}
	nblocks = size / BLK;
	region = nblocks < REGION_BLOCKS ? nblocks : REGION_BLOCKS;
	if (region < 2 * MAX_BLOCKS) {
		fprintf(stderr, "odirect_offsets: %s: %llu bytes, need %lu\n", argv[1],
			(unsigned long long)size, 2 * MAX_BLOCKS * BLK);
		return 1;
	}
	if (posix_memalign((void **)&shadow, page, region * BLK) ||
	    posix_memalign((void **)&all, page, region * BLK)) {
		fprintf(stderr, "odirect_offsets: out of memory\n");
		return 2;
	}
	/* Whatever the region holds now is what the untouched blocks must keep. */
	if (do_io(fd, 0, shadow, region * BLK, 0))
		memset(shadow, 0, region * BLK);
	printf("odirect_offsets: %s, %llu bytes, page %ld, offsets 0..%lu step %lu, 1..%u blocks of %lu\n",
	       argv[1], (unsigned long long)size, page, page - STEP, STEP,
	       MAX_BLOCKS, BLK);

	for (off = 0; off < (unsigned long)page; off += STEP) {
		for (blocks = 1; blocks <= MAX_BLOCKS; blocks++, seq++) {
			/* Spread the transfers over the region; they overlap. */
			unsigned long devblk = (seq * 37 + blocks) %
					       (region - MAX_BLOCKS + 1);

			one(fd, page, seq + 1, off, blocks, devblk);
		}
	}

	/* Every block of the region, through a page-aligned buffer. */
	if (!do_io(fd, 0, all, region * BLK, 0))
		compare(all, region * BLK, 0, "final read of the region", 0);

	if (io_errors)
		printf("odirect_offsets: %lu I/O errors\n", io_errors);
	printf("odirect_offsets: %lu ops, %lu data mismatches, %lu guard corruptions\n",
	       ops, mismatches, corruptions);
	close(fd);
	return (mismatches || corruptions || io_errors) ? 1 : 0;
}
