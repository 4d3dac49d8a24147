// SPDX-License-Identifier: GPL-2.0
/*
 * torture: concurrent I/O, sysfs, hotplug and swap traffic on one zram-like
 * device, every read checked against a shadow model of the device.
 *
 * The device (/dev/NAME, /sys/block/NAME) must be initialised (disksize set)
 * and must not be in use: torture holds it open for the whole run. These run
 * side by side until the time is up:
 *
 * - I/O threads (-j): random O_DIRECT reads and writes of 1 to 16 blocks of
 *   4 KiB, discards (BLKDISCARD) and write-zeroes (BLKZEROOUT). Each block
 *   written is zero, same-filled (one non-zero word repeated), compressible
 *   or incompressible. The user buffer starts at a random 512-byte offset in
 *   a page, so most transfers reach the driver as segments that start or end
 *   mid-page; the memory around the buffer is checked after every transfer.
 *   Each operation holds the shadow locks of its blocks, so every read has
 *   exactly one right answer.
 * - Racers (-r): rounds in which three threads hit one block of a region the
 *   I/O threads leave alone, released together: one writes it, one writes
 *   other contents, discards it or write-zeroes it, and one reads it. The
 *   read must see the old block or one of the new ones, whole; afterwards
 *   the block must hold what the first or the second left. Their buffers
 *   are page-aligned: a block from a buffer that starts mid-page reaches the
 *   driver as two segments, each stored on its own (as in zram), so two
 *   such writes of one block may interleave; one segment per block is
 *   stored, and read, whole. Two writes to one
 *   slot at once once leaked a handle (CVE-2025-39941); a free racing a read
 *   once freed the slot being read (CVE-2022-49052, CVE-2024-26759).
 * - A sysfs thread (-y): compacts, reads every statistics file, sets and
 *   clears mem_limit (far above what the run stores), marks pages idle, and
 *   tries what must fail while the device is initialised and open: disksize
 *   and comp_algorithm (EBUSY), reset (EBUSY). Every outcome is counted by
 *   errno and printed as a "sysfs" line, so a script can compare two drivers.
 *   With -W (the device has a backing device) it also writes back idle and
 *   huge pages, which the reads must then find on the backing device; a
 *   writeback may fail with ENOSPC (a backing device that runs out of room
 *   fails its writes so).
 * - Hotplug threads (-H): hot_add a device of the same family, give it a
 *   disksize, write and verify it, hot_remove it; a prober reads the
 *   attributes of those devices and opens them while they come and go.
 * - Swap workers (-w, -m MB each): processes that fill anonymous memory,
 *   push it out with MADV_PAGEOUT, verify it, re-dirty half, push it out
 *   again, verify and exit, over and over. The swap device is the caller's
 *   (any device; torture does not set it up).
 *
 * At the end the whole device is read back and checked. With -z it is then
 * discarded whole, and mm_stat must come back to zero data, zero memory
 * used, zero same-filled and zero huge pages (a leaked handle keeps memory):
 * frees may be deferred, so this polls for up to 10 s.
 *
 * usage: torture -d NAME -t SECONDS [-j N] [-r] [-y] [-H N] [-w N -m MB]
 *                [-b BLOCKS] [-s SEED] [-z] [-W]
 * Prints counts and a last line "torture: PASS ..." or "torture: FAIL ...";
 * exits 0 only on PASS.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mix.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define BLK 4096UL
#define WORDS (BLK / sizeof(uint64_t))
#define MAX_BLOCKS 16
#define RACE_BLOCKS 64
#define GUARD 0xa5
#define MAX_REPORTS 30

enum kind { K_ZERO, K_SAME, K_COMP, K_RAND, K_NR };
static const char *const kind_name[] = { "zero", "same", "compressible", "random" };

struct state {
	uint8_t kind;
	uint32_t seed;
};

struct shadow {
	pthread_mutex_t lock;
	struct state st;
};

static char name[64], family[64], sysdir[128], devpath[128], ctldir[128];
static int fd;
static uint64_t nblocks, io_blocks;	/* io_blocks: blocks the I/O threads use */
static struct shadow *shadow;
static atomic_int stop;
static atomic_ulong failures, reports;
static atomic_ulong n_read, n_write, n_discard, n_zeroout, n_blocks_checked;
static atomic_ulong n_rounds, n_race_reads, n_hot_cycles, n_hot_busy, n_probes;
static atomic_ulong n_swap_iters, n_swap_pages, max_busy_ms;
static uint64_t base_seed = 1;

static void report(const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&failures, 1);
	if (atomic_fetch_add(&reports, 1) >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	fputs("torture: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A per-thread generator: xorshift64*. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return rnd(s) % n;
}

/* The contents of block @blk in state @st. */
static void gen(uint64_t *w, uint64_t blk, struct state st)
{
	uint64_t h = mix(((uint64_t)st.seed << 32) ^ blk ^ base_seed);
	size_t j;

	switch (st.kind) {
	case K_ZERO:
		memset(w, 0, BLK);
		break;
	case K_SAME:
		for (j = 0; j < WORDS; j++)
			w[j] = h | 1;
		break;
	case K_COMP:
		for (j = 0; j < WORDS; j++)
			w[j] = (j % 4 == 0) ? mix(h ^ j) : (h & 0xff) * 0x0101010101010101ULL;
		w[0] = blk;
		w[1] = st.seed;
		break;
	default:
		for (j = 0; j < WORDS; j++)
			w[j] = mix(h ^ j);
		break;
	}
}

static struct state rnd_state(uint64_t *s)
{
	struct state st = { .kind = rnd_below(s, K_NR), .seed = (uint32_t)rnd(s) | 1 };

	if (st.kind == K_ZERO)
		st.seed = 0;
	return st;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * An I/O buffer: @len bytes at @off (a multiple of 512) into a page-aligned
 * allocation, with guard bytes from the allocation's start to the buffer and
 * from its end to the allocation's end.
 */
struct iobuf {
	uint8_t *mem;
	size_t size;
	size_t off, len;
};

static uint8_t *buf_at(struct iobuf *b, size_t off, size_t len)
{
	b->off = off;
	b->len = len;
	memset(b->mem, GUARD, b->size);
	return b->mem + off;
}

static int guards_ok(struct iobuf *b)
{
	size_t i;

	for (i = 0; i < b->off; i++)
		if (b->mem[i] != GUARD)
			return 0;
	for (i = b->off + b->len; i < b->size; i++)
		if (b->mem[i] != GUARD)
			return 0;
	return 1;
}

static void lock_range(uint64_t blk, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		pthread_mutex_lock(&shadow[blk + i].lock);
}

static void unlock_range(uint64_t blk, unsigned int n)
{
	unsigned int i;

	for (i = n; i-- > 0;)
		pthread_mutex_unlock(&shadow[blk + i].lock);
}

/* Which of @n candidate states block @blk's data @got matches, or -1. */
static int match(const uint8_t *got, uint64_t blk, const struct state *cand, int n)
{
	uint64_t expect[WORDS];
	int i;

	for (i = 0; i < n; i++) {
		gen(expect, blk, cand[i]);
		if (!memcmp(got, expect, BLK))
			return i;
	}
	return -1;
}

static void describe_mismatch(const char *what, const uint8_t *got, uint64_t blk,
			      const struct state *cand, int n)
{
	uint64_t w0, w1;

	memcpy(&w0, got, 8);
	memcpy(&w1, got + 8, 8);
	report("%s: block %llu matches none of %d expected states (first: %s seed %u); read words %016llx %016llx",
	       what, (unsigned long long)blk, n, kind_name[cand[0].kind], cand[0].seed,
	       (unsigned long long)w0, (unsigned long long)w1);
}

static int do_write(struct iobuf *b, uint64_t blk, unsigned int n, size_t off,
		    const struct state *st)
{
	uint8_t *p = buf_at(b, off, n * BLK);
	unsigned int i;
	ssize_t r;

	for (i = 0; i < n; i++)
		gen((uint64_t *)(void *)(p + i * BLK), blk + i, st[i]);
	r = pwrite(fd, p, n * BLK, blk * BLK);
	if (r != (ssize_t)(n * BLK)) {
		report("write of %u blocks at %llu (buffer offset %zu): %s", n,
		       (unsigned long long)blk, off, r < 0 ? strerror(errno) : "short");
		return -1;
	}
	if (!guards_ok(b))
		report("write at %llu changed memory around its buffer", (unsigned long long)blk);
	return 0;
}

static int do_read(struct iobuf *b, uint64_t blk, unsigned int n, size_t off, uint8_t **out)
{
	uint8_t *p = buf_at(b, off, n * BLK);
	ssize_t r;

	r = pread(fd, p, n * BLK, blk * BLK);
	if (r != (ssize_t)(n * BLK)) {
		report("read of %u blocks at %llu (buffer offset %zu): %s", n,
		       (unsigned long long)blk, off, r < 0 ? strerror(errno) : "short");
		return -1;
	}
	if (!guards_ok(b))
		report("read at %llu changed memory around its buffer", (unsigned long long)blk);
	*out = p;
	return 0;
}

static int do_trim(int zeroout, uint64_t blk, unsigned int n)
{
	uint64_t range[2] = { blk * BLK, n * BLK };

	if (ioctl(fd, zeroout ? BLKZEROOUT : BLKDISCARD, range)) {
		report("%s of %u blocks at %llu: %s", zeroout ? "BLKZEROOUT" : "BLKDISCARD",
		       n, (unsigned long long)blk, strerror(errno));
		return -1;
	}
	return 0;
}

static void iobuf_init(struct iobuf *b)
{
	b->size = (MAX_BLOCKS + 2) * BLK;
	b->mem = aligned_alloc(BLK, b->size);
	if (!b->mem) {
		perror("torture: aligned_alloc");
		exit(2);
	}
}

static void *io_thread(void *arg)
{
	uint64_t s = mix(base_seed ^ (uintptr_t)arg) | 1;
	struct state st[MAX_BLOCKS];
	struct iobuf b;

	iobuf_init(&b);
	while (!atomic_load(&stop)) {
		unsigned int n = 1 + rnd_below(&s, MAX_BLOCKS), op = rnd_below(&s, 100), i;
		size_t off = rnd_below(&s, 8) * 512;
		uint64_t blk;
		uint8_t *p;

		if (n > io_blocks)
			n = io_blocks;
		blk = rnd_below(&s, io_blocks - n + 1);
		lock_range(blk, n);
		if (op < 40) {
			for (i = 0; i < n; i++)
				st[i] = rnd_state(&s);
			if (!do_write(&b, blk, n, off, st))
				for (i = 0; i < n; i++)
					shadow[blk + i].st = st[i];
			atomic_fetch_add(&n_write, 1);
		} else if (op < 85) {
			if (!do_read(&b, blk, n, off, &p)) {
				for (i = 0; i < n; i++)
					if (match(p + i * BLK, blk + i, &shadow[blk + i].st, 1) < 0)
						describe_mismatch("read", p + i * BLK, blk + i,
								  &shadow[blk + i].st, 1);
				atomic_fetch_add(&n_blocks_checked, n);
			}
			atomic_fetch_add(&n_read, 1);
		} else {
			int zeroout = op >= 93;

			if (!do_trim(zeroout, blk, n))
				for (i = 0; i < n; i++)
					shadow[blk + i].st = (struct state){ K_ZERO, 0 };
			atomic_fetch_add(zeroout ? &n_zeroout : &n_discard, 1);
		}
		unlock_range(blk, n);
	}
	free(b.mem);
	return NULL;
}

/* The racers: a coordinator and three helpers meeting at two barriers. */
static pthread_barrier_t race_start, race_end;
static struct {
	uint64_t blk;
	struct state old, a, b;
	int role;	/* the second helper: 0 writes b, 1 discards, 2 write-zeroes */
	int done;
} round_;

static void *race_helper(void *arg)
{
	int id = (int)(uintptr_t)arg;
	struct iobuf b;
	uint8_t *p;

	iobuf_init(&b);
	for (;;) {
		pthread_barrier_wait(&race_start);
		if (round_.done)
			break;
		if (id == 0 || (id == 1 && round_.role == 0)) {
			do_write(&b, round_.blk, 1, 0, id ? &round_.b : &round_.a);
		} else if (id == 1) {
			do_trim(round_.role == 2, round_.blk, 1);
		} else {
			/*
			 * The old block, or any of the new ones, whole: zeroes
			 * only if the block was zero or is being freed.
			 */
			struct state cand[3] = { round_.old, round_.a, round_.b };

			if (round_.role)
				cand[2] = (struct state){ K_ZERO, 0 };
			if (!do_read(&b, round_.blk, 1, 0, &p) &&
			    match(p, round_.blk, cand, 3) < 0)
				describe_mismatch("read in a race", p, round_.blk, cand, 3);
			atomic_fetch_add(&n_race_reads, 1);
		}
		pthread_barrier_wait(&race_end);
	}
	free(b.mem);
	return NULL;
}

static void *racer(void *arg)
{
	uint64_t s = mix(base_seed ^ 0x7261636572ULL) | 1;
	pthread_t h[3];
	struct iobuf b;
	uintptr_t i;
	uint8_t *p;

	(void)arg;
	iobuf_init(&b);
	pthread_barrier_init(&race_start, NULL, 4);
	pthread_barrier_init(&race_end, NULL, 4);
	for (i = 0; i < 3; i++)
		pthread_create(&h[i], NULL, race_helper, (void *)i);
	while (!atomic_load(&stop)) {
		struct state cand[2];
		int n;

		round_.blk = io_blocks + rnd_below(&s, nblocks - io_blocks);
		round_.old = shadow[round_.blk].st;
		round_.a = rnd_state(&s);
		round_.b = rnd_state(&s);
		round_.role = rnd_below(&s, 3);
		pthread_barrier_wait(&race_start);
		pthread_barrier_wait(&race_end);
		/* a, and b or zero, whichever came last. */
		cand[0] = round_.a;
		cand[1] = round_.role ? (struct state){ K_ZERO, 0 } : round_.b;
		n = 2;
		if (!do_read(&b, round_.blk, 1, 0, &p)) {
			int m = match(p, round_.blk, cand, n);

			if (m < 0)
				describe_mismatch("block after a race", p, round_.blk, cand, n);
			else
				shadow[round_.blk].st = cand[m];
		}
		atomic_fetch_add(&n_rounds, 1);
	}
	round_.done = 1;
	pthread_barrier_wait(&race_start);
	for (i = 0; i < 3; i++)
		pthread_join(h[i], NULL);
	free(b.mem);
	return NULL;
}

/* sysfs: each attribute's outcomes by errno. */
#define MAX_ERRNO 160
struct attr_op {
	const char *attr;
	const char *value;	/* NULL: read */
	int expect;		/* the errno expected, 0 for success */
	int also;		/* another errno allowed, if not 0 */
	unsigned long count[MAX_ERRNO];
};

static struct attr_op sysfs_ops[] = {
	{ "compact", "1", 0 },
	{ "mm_stat", NULL, 0 },
	{ "io_stat", NULL, 0 },
	{ "stat", NULL, 0 },
	{ "debug_stat", NULL, 0 },
	{ "mem_limit", "1G", 0 },
	{ "mem_limit", "0", 0 },
	{ "mem_used_max", "0", 0 },
	{ "idle", "all", 0 },
	{ "max_comp_streams", "2", 0 },
	{ "disksize", "64M", EBUSY },
	{ "reset", "1", EBUSY },
	{ "comp_algorithm", NULL, EBUSY },	/* the current algorithm's name */
	/* Only with -W; ENOSPC: the backing device may fail its writes (full). */
	{ "writeback", "idle", 0, ENOSPC },
	{ "writeback", "huge", 0, ENOSPC },
};
#define N_SYSFS (sizeof(sysfs_ops) / sizeof(sysfs_ops[0]))
static char cur_alg[64];
static int writeback;		/* -W: the device has a backing device */

static int attr_access(const char *dir, const char *attr, const char *value)
{
	char path[256], buf[4096];
	int f, e = 0;
	ssize_t r;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	f = open(path, value ? O_WRONLY : O_RDONLY);
	if (f < 0)
		return errno;
	r = value ? write(f, value, strlen(value)) : read(f, buf, sizeof(buf));
	if (r < 0)
		e = errno;
	close(f);
	return e;
}

static void *sysfs_thread(void *arg)
{
	uint64_t s = mix(base_seed ^ 0x737973ULL) | 1;
	size_t order[N_SYSFS], next = N_SYSFS, i;

	(void)arg;
	for (i = 0; i < N_SYSFS; i++)
		order[i] = i;
	while (!atomic_load(&stop)) {
		struct attr_op *op;
		const char *v;
		int e;

		/*
		 * Every operation once per round, in a new random order each
		 * round: however slow the guest, each one is tried, so that the
		 * two drivers' sets of outcomes can be compared.
		 */
		if (next == N_SYSFS) {
			for (i = N_SYSFS - 1; i > 0; i--) {
				size_t j = rnd_below(&s, i + 1), t = order[i];

				order[i] = order[j];
				order[j] = t;
			}
			next = 0;
		}
		op = &sysfs_ops[order[next++]];
		v = op->value;

		if (!strcmp(op->attr, "comp_algorithm"))
			v = cur_alg;
		if (!strcmp(op->attr, "writeback") && !writeback)
			continue;
		e = attr_access(sysdir, op->attr, v);
		if (e == ENOENT)
			continue;	/* not in this kernel's configuration */
		op->count[e < MAX_ERRNO ? e : MAX_ERRNO - 1]++;
		/* About 50 a second: disksize's refusal is logged every time. */
		usleep(10000 + rnd_below(&s, 20000));
	}
	for (i = 0; i < N_SYSFS; i++) {
		struct attr_op *op = &sysfs_ops[i];
		char line[512];
		int e, len;

		if (!strcmp(op->attr, "comp_algorithm"))
			len = snprintf(line, sizeof(line), "sysfs write comp_algorithm=%s:", cur_alg);
		else if (op->value)
			len = snprintf(line, sizeof(line), "sysfs write %s=%s:", op->attr, op->value);
		else
			len = snprintf(line, sizeof(line), "sysfs read %s:", op->attr);
		for (e = 0; e < MAX_ERRNO; e++) {
			if (!op->count[e])
				continue;
			len += snprintf(line + len, sizeof(line) - len, " %s %lu",
					e ? strerrorname_np(e) : "ok", op->count[e]);
			if (e != op->expect && !(op->also && e == op->also))
				report("sysfs: %s gave %s %lu time(s), expected %s", line + 6, e ? strerrorname_np(e) : "success", op->count[e],
				       op->expect ? strerrorname_np(op->expect) : "success");
		}
		printf("%s\n", line);
	}
	return NULL;
}

static void *hotplug_thread(void *arg)
{
	uint64_t s = mix(base_seed ^ 0x686f74ULL ^ (uintptr_t)arg) | 1;
	char path[256], id[32], dev[160], dir[160];
	struct state st[MAX_BLOCKS];
	struct iobuf b;
	unsigned int i;
	uint8_t *p;

	iobuf_init(&b);
	snprintf(path, sizeof(path), "%s/hot_add", ctldir);
	while (!atomic_load(&stop)) {
		int f = open(path, O_RDONLY), dfd, tries;
		double t_busy;
		ssize_t r;

		if (f < 0) {
			report("open %s: %s", path, strerror(errno));
			break;
		}
		r = read(f, id, sizeof(id) - 1);
		close(f);
		if (r <= 0) {
			report("hot_add: %s", r < 0 ? strerror(errno) : "empty");
			break;
		}
		id[r] = 0;
		id[strcspn(id, "\n")] = 0;
		snprintf(dir, sizeof(dir), "/sys/block/%s%s", family, id);
		snprintf(dev, sizeof(dev), "/dev/%s%s", family, id);
		if (attr_access(dir, "disksize", "4M"))
			report("disksize of %s failed", dir);
		dfd = open(dev, O_RDWR | O_DIRECT);
		if (dfd < 0) {
			report("open %s: %s", dev, strerror(errno));
		} else {
			for (i = 0; i < MAX_BLOCKS; i++)
				st[i] = rnd_state(&s);
			p = buf_at(&b, 512, MAX_BLOCKS * BLK);
			for (i = 0; i < MAX_BLOCKS; i++)
				gen((uint64_t *)(void *)(p + i * BLK), i, st[i]);
			if (pwrite(dfd, p, MAX_BLOCKS * BLK, 0) != (ssize_t)(MAX_BLOCKS * BLK))
				report("write to %s: %s", dev, strerror(errno));
			p = buf_at(&b, 1536, MAX_BLOCKS * BLK);
			if (pread(dfd, p, MAX_BLOCKS * BLK, 0) != (ssize_t)(MAX_BLOCKS * BLK))
				report("read from %s: %s", dev, strerror(errno));
			else
				for (i = 0; i < MAX_BLOCKS; i++)
					if (match(p + i * BLK, i, &st[i], 1) < 0)
						describe_mismatch(dev, p + i * BLK, i, &st[i], 1);
			close(dfd);
		}
		/*
		 * The prober may hold it open: EBUSY, try again, for up to 30 s
		 * (a prober descheduled with the device open holds it for long
		 * on a loaded TCG guest; an open that is never released would
		 * hold it for ever).
		 */
		t_busy = now();
		for (tries = 0;; tries++) {
			int e = attr_access(ctldir, "hot_remove", id);
			double waited = now() - t_busy;

			if (!e) {
				unsigned long ms = waited * 1000;

				if (ms > atomic_load(&max_busy_ms))
					atomic_store(&max_busy_ms, ms);
				break;
			}
			if (e != EBUSY || waited > 30) {
				report("hot_remove %s: %s after %d tries in %.1f s", id, strerror(e),
				       tries, waited);
				break;
			}
			atomic_fetch_add(&n_hot_busy, 1);
			usleep(100);
		}
		atomic_fetch_add(&n_hot_cycles, 1);
	}
	free(b.mem);
	return NULL;
}

/* Reads the attributes of, and opens, every device of the family but ours. */
static void *prober(void *arg)
{
	static const char *const attrs[] = { "initstate", "disksize", "mm_stat", "io_stat",
					     "comp_algorithm", "stat", "debug_stat" };
	char dir[300], dev[300], buf[BLK] __attribute__((aligned(4096)));
	size_t flen = strlen(family);

	(void)arg;
	while (!atomic_load(&stop)) {
		DIR *d = opendir("/sys/block");
		struct dirent *e;

		if (!d)
			break;
		while ((e = readdir(d))) {
			size_t i;
			int f;

			if (strncmp(e->d_name, family, flen) || !strcmp(e->d_name, name) ||
			    e->d_name[flen] < '0' || e->d_name[flen] > '9')
				continue;
			snprintf(dir, sizeof(dir), "/sys/block/%s", e->d_name);
			for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
				attr_access(dir, attrs[i], NULL);
			snprintf(dev, sizeof(dev), "/dev/%s", e->d_name);
			f = open(dev, O_RDONLY | O_DIRECT);
			if (f >= 0) {
				if (pread(f, buf, BLK, 0) < 0 && errno != EIO && errno != ENXIO)
					report("probe read of %s: %s", dev, strerror(errno));
				close(f);
			}
			atomic_fetch_add(&n_probes, 1);
		}
		closedir(d);
	}
	return NULL;
}

/* One swap worker iteration, in a child: 0 if every page came back. */
static int swap_child(unsigned long mb, uint64_t seed)
{
	size_t npages = mb * (1024 * 1024 / BLK), i, bad = 0;
	uint64_t expect[WORDS];
	struct state st = { K_COMP, (uint32_t)seed };
	uint8_t *mem;
	int pass;

	mem = mmap(NULL, npages * BLK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 2;
	for (i = 0; i < npages; i++)
		gen((uint64_t *)(void *)(mem + i * BLK), i, st);
	for (pass = 0; pass < 2; pass++) {
		madvise(mem, npages * BLK, MADV_PAGEOUT);
		for (i = 0; i < npages; i++) {
			struct state si = st;

			if (pass && i % 2)
				si.seed = ~st.seed;
			gen(expect, i, si);
			if (memcmp(mem + i * BLK, expect, BLK))
				bad++;
		}
		if (!pass)	/* re-dirty every other page */
			for (i = 1; i < npages; i += 2) {
				struct state si = { K_COMP, ~st.seed };

				gen((uint64_t *)(void *)(mem + i * BLK), i, si);
			}
	}
	if (bad)
		fprintf(stderr, "torture: swap worker: %zu of %zu pages came back wrong\n", bad, npages);
	return bad ? 1 : 0;
}

struct swap_arg {
	unsigned long mb;
	int id;
};

static void *swap_worker(void *arg)
{
	struct swap_arg *a = arg;
	uint64_t iter = 0;

	while (!atomic_load(&stop)) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			int f;

			/*
			 * Not the other threads' descriptors: an inherited
			 * one would hold a hot-added device open while the
			 * child runs, and its hot_remove would fail.
			 */
			for (f = 3; f < 1024; f++)
				close(f);
			_exit(swap_child(a->mb, mix(base_seed ^ ((uint64_t)a->id << 40) ^ iter)));
		}
		if (pid < 0) {
			report("fork: %s", strerror(errno));
			break;
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			report("swap worker %d, iteration %llu: %s", a->id, (unsigned long long)iter,
			       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "pages came back wrong");
		atomic_fetch_add(&n_swap_iters, 1);
		atomic_fetch_add(&n_swap_pages, a->mb * 256);
		iter++;
	}
	return NULL;
}

static int read_mm_stat(unsigned long long v[9])
{
	char path[256];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/mm_stat", sysdir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]);
	fclose(f);
	return n >= 8 ? 0 : -1;
}

static void verify_all(void)
{
	struct iobuf b;
	uint64_t blk;
	uint8_t *p;

	iobuf_init(&b);
	for (blk = 0; blk < nblocks; blk += MAX_BLOCKS) {
		unsigned int n = nblocks - blk < MAX_BLOCKS ? nblocks - blk : MAX_BLOCKS, i;

		if (do_read(&b, blk, n, 0, &p))
			continue;
		for (i = 0; i < n; i++)
			if (match(p + i * BLK, blk + i, &shadow[blk + i].st, 1) < 0)
				describe_mismatch("final read", p + i * BLK, blk + i,
						  &shadow[blk + i].st, 1);
		atomic_fetch_add(&n_blocks_checked, n);
	}
	free(b.mem);
}

static void usage(void)
{
	fprintf(stderr, "usage: torture -d NAME -t SECONDS [-j N] [-r] [-y] [-H N] [-w N -m MB] [-b BLOCKS] [-s SEED] [-z] [-W]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long secs = 0, jobs = 4, hot = 0, swappers = 0, swap_mb = 16, maxblocks = 0;
	int race = 0, sys = 0, zero_check = 0, c;
	pthread_t th[64];
	struct swap_arg sa[16];
	unsigned int nth = 0, i;
	uint64_t size, blk;
	double t0;

	while ((c = getopt(argc, argv, "d:t:j:ryH:w:m:b:s:zW")) != -1) {
		switch (c) {
		case 'd': snprintf(name, sizeof(name), "%s", optarg); break;
		case 't': secs = strtoul(optarg, NULL, 0); break;
		case 'j': jobs = strtoul(optarg, NULL, 0); break;
		case 'r': race = 1; break;
		case 'y': sys = 1; break;
		case 'H': hot = strtoul(optarg, NULL, 0); break;
		case 'w': swappers = strtoul(optarg, NULL, 0); break;
		case 'm': swap_mb = strtoul(optarg, NULL, 0); break;
		case 'b': maxblocks = strtoul(optarg, NULL, 0); break;
		case 's': base_seed = strtoull(optarg, NULL, 0); break;
		case 'z': zero_check = 1; break;
		case 'W': writeback = 1; break;
		default: usage();
		}
	}
	if (!name[0] || !secs || jobs > 32 || hot > 8 || swappers > 16)
		usage();
	snprintf(family, sizeof(family), "%.*s", (int)strcspn(name, "0123456789"), name);
	snprintf(sysdir, sizeof(sysdir), "/sys/block/%s", name);
	snprintf(devpath, sizeof(devpath), "/dev/%s", name);
	snprintf(ctldir, sizeof(ctldir), "/sys/class/%s-control", family);

	fd = open(devpath, O_RDWR | O_DIRECT);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size)) {
		fprintf(stderr, "torture: %s: %s\n", devpath, strerror(errno));
		return 2;
	}
	nblocks = size / BLK;
	if (maxblocks && nblocks > maxblocks)
		nblocks = maxblocks;
	if (nblocks < 2 * RACE_BLOCKS) {
		fprintf(stderr, "torture: %s has %llu blocks, too few\n", devpath,
			(unsigned long long)nblocks);
		return 2;
	}
	io_blocks = race ? nblocks - RACE_BLOCKS : nblocks;
	shadow = calloc(nblocks, sizeof(*shadow));
	if (!shadow)
		return 2;
	for (blk = 0; blk < nblocks; blk++)
		pthread_mutex_init(&shadow[blk].lock, NULL);
	{
		/* "lzo [lz4] zstd": the name in brackets. */
		char path[256], buf[512], *l, *r;
		FILE *f;

		snprintf(path, sizeof(path), "%s/comp_algorithm", sysdir);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f) && (l = strchr(buf, '[')) && (r = strchr(l, ']'))) {
			*r = 0;
			snprintf(cur_alg, sizeof(cur_alg), "%s", l + 1);
		} else {
			snprintf(cur_alg, sizeof(cur_alg), "lzo");
		}
		if (f)
			fclose(f);
	}
	/* Start from a known state: every block zero. */
	{
		uint64_t range[2] = { 0, nblocks * BLK };

		if (ioctl(fd, BLKDISCARD, range))
			fprintf(stderr, "torture: initial discard: %s\n", strerror(errno));
	}

	printf("torture: %s (%llu blocks, %llu for the racers), %lus, %lu I/O threads%s%s, %lu hotplug threads, %lu swap workers of %lu MB, seed %llu\n",
	       devpath, (unsigned long long)nblocks, (unsigned long long)(nblocks - io_blocks),
	       secs, jobs, race ? ", racers" : "", sys ? ", sysfs" : "", hot, swappers, swap_mb,
	       (unsigned long long)base_seed);
	fflush(stdout);
	t0 = now();
	for (i = 0; i < jobs; i++)
		pthread_create(&th[nth++], NULL, io_thread, (void *)(uintptr_t)(i + 1));
	if (race)
		pthread_create(&th[nth++], NULL, racer, NULL);
	if (sys)
		pthread_create(&th[nth++], NULL, sysfs_thread, NULL);
	for (i = 0; i < hot; i++)
		pthread_create(&th[nth++], NULL, hotplug_thread, (void *)(uintptr_t)i);
	if (hot)
		pthread_create(&th[nth++], NULL, prober, NULL);
	for (i = 0; i < swappers; i++) {
		sa[i] = (struct swap_arg){ swap_mb, (int)i };
		pthread_create(&th[nth++], NULL, swap_worker, &sa[i]);
	}
	while (now() - t0 < secs && atomic_load(&reports) < MAX_REPORTS)
		usleep(100000);
	atomic_store(&stop, 1);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);

	printf("torture: I/O: %lu writes, %lu reads, %lu discards, %lu write-zeroes; %lu blocks checked\n",
	       atomic_load(&n_write), atomic_load(&n_read), atomic_load(&n_discard),
	       atomic_load(&n_zeroout), atomic_load(&n_blocks_checked));
	if (race)
		printf("torture: races: %lu rounds, %lu of them with a read\n",
		       atomic_load(&n_rounds), atomic_load(&n_race_reads));
	if (hot)
		printf("torture: hotplug: %lu add/use/remove cycles, %lu hot_remove EBUSY (longest wait %lu ms), %lu probes\n",
		       atomic_load(&n_hot_cycles), atomic_load(&n_hot_busy),
		       atomic_load(&max_busy_ms), atomic_load(&n_probes));
	if (swappers)
		printf("torture: swap: %lu worker iterations, %lu pages verified twice\n",
		       atomic_load(&n_swap_iters), atomic_load(&n_swap_pages));

	verify_all();
	if (zero_check) {
		uint64_t range[2] = { 0, size / BLK * BLK };
		unsigned long long v[9] = { 0 };
		int tries;

		if (ioctl(fd, BLKDISCARD, range))
			report("discard of the whole device: %s", strerror(errno));
		for (tries = 0; tries < 100; tries++) {
			if (read_mm_stat(v)) {
				report("mm_stat unreadable");
				break;
			}
			if (!v[0] && !v[1] && !v[2] && !v[5] && !v[7])
				break;
			usleep(100000);
		}
		printf("torture: mm_stat after discarding everything: %llu %llu %llu %llu %llu %llu %llu %llu\n",
		       v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
		if (v[0] || v[1] || v[2] || v[5] || v[7])
			report("after discarding everything: orig_data_size %llu, compr_data_size %llu, mem_used_total %llu, same_pages %llu, huge_pages %llu (all should be 0)",
			       v[0], v[1], v[2], v[5], v[7]);
	}
	close(fd);
	printf("torture: %s %s in %.0fs: %lu failure(s)\n",
	       atomic_load(&failures) ? "FAIL" : "PASS", devpath, now() - t0,
	       atomic_load(&failures));
	return atomic_load(&failures) ? 1 : 0;
}
