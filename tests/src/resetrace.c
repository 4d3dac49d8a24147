// SPDX-License-Identifier: GPL-2.0
/*
 * resetrace: writeback, or reads of debugfs block_state, racing a reset and
 * a smaller re-initialisation of one device.
 *
 * The main thread cycles device 0 of FAMILY between a large size (BIG_PAGES)
 * and a small one (SMALL_PAGES). At each size: reset, backing_dev (wb),
 * disksize; a few pages written across the whole size (the last pages of the
 * device among them) and at once read back and checked; idle all; a short
 * random pause (under 3 ms), in which the other threads meet the device; and
 * the pages read back and checked again. So every other reset goes from
 * 4 MiB to 256 KiB. Meanwhile:
 *
 * - wb: two threads write to the device's writeback attribute, over and
 *   over: idle, huge, huge_idle, incompressible, page_index=N with N
 *   anywhere in the large size and, with "rzram" (the newer forms),
 *   type=MODE, page_indexes=LO-HI across the end of the small size, and
 *   lists of page_index; with "rzram" also recompress (type=idle,
 *   threshold=1024; zstd is set as the secondary algorithm before each
 *   disksize), which shares writeback's entry (storage, then
 *   post-processing). The C zram 6.12 is not given recompress: its
 *   recompress_store() reads disksize before init_lock, the very bug class,
 *   unfixed there. A writeback that took the size before a reset and a
 *   smaller disksize would walk the large size over the small table (the
 *   bug class of CVE-2026-89718). Every outcome is counted by errno; the
 *   allowed ones are success, EINVAL (not initialised, or page_index past
 *   the end), EAGAIN (the other thread's writeback or recompression under
 *   way) and, for page_indexes, ERANGE. backing_dev right after a reset
 *   must succeed on both drivers: a reset returns only when no writeback
 *   uses the old backing device (an EBUSY here is the bug rzram had, a
 *   writeback that took the storage just before a reset running on it
 *   after the reset returned).
 * - bs: two threads read /sys/kernel/debug/FAMILY/FAMILY0/block_state from
 *   start to end, over and over, one in reads of 600 bytes and the other in
 *   reads of 640 (so one pass takes many reads, which a reset may come
 *   between, and the two split lines differently). A read that took the size
 *   before a reset and a smaller disksize would walk the large size over the
 *   small table (CVE-2026-89719). Each pass must end at the end of the file
 *   or with EINVAL (the device not initialised); every line must be one of
 *   zram's 40-byte lines, with an index below the large size, above the
 *   line before it, and flags each in its place.
 *
 * After the race, with every thread stopped, the device is initialised small
 * once more and checked: (wb) writeback idle succeeds, every page reads back
 * right from the backing device and bd_stat counts exactly the pages written
 * back; (bs) block_state lists exactly the pages written, with zram's flags
 * for each kind (random: ..hi.., text: ...i.., same-filled: s.....).
 *
 * The race stops after CYCLES cycles or SECONDS seconds, whichever is first,
 * or at the first fault; but it must have raced for real, so a run that
 * reaches SECONDS without these goes on until it has them, for at most
 * HARD_SECS (60) seconds in all, and fails without them:
 * - at least MIN_CYCLES (5) whole resize cycles (large and small; fewer only
 *   if CYCLES is smaller);
 * - wb: at least one write to writeback that succeeded, and at least one
 *   page written back (bd_stat, read before each reset) during the race, so
 *   that a writeback that always failed (EINVAL, say) or never wrote a page
 *   cannot pass;
 * - bs: at least one pass of block_state, start to end, that returned lines.
 * The slowest run seen (arm64 under TCG, KASAN, rzram) did 14 cycles in 8 s,
 * so a machine at half that speed still does 5 in 8 s; the cap keeps the
 * test bounded on a slower one.
 *
 * usage: resetrace wb FAMILY SECONDS CYCLES LOOP [rzram]
 *        resetrace bs FAMILY SECONDS CYCLES
 * Prints the counts and exits non-zero on any fault or unmet requirement.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sysfs.h"

#define PG 4096
#define BIG_PAGES 1024
#define SMALL_PAGES 64
#define BIG_SIZE "4M"
#define SMALL_SIZE "256K"
#define THREADS 2
#define NERR 256
/* The least a run must race (see the top), and its hard time limit. */
#define MIN_CYCLES 5
#define HARD_SECS 60

/* The pages written in each size: the first and the last, and around 64. */
static const unsigned int big_idx[] = {
	0, 1, 2, 3, 4, 5, 61, 62, 63, 64, 65, 100, 255, 256, 511, 512, 900, 1021, 1022, 1023,
};

static const unsigned int small_idx[] = { 0, 1, 2, 3, 4, 5, 30, 31, 32, 61, 62, 63 };

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int wb_mode, newer;
static char family[32], dir[96], blk[96], bspath[160], loopdev[96];
static char p_reset[128], p_disksize[128], p_backing[128], p_idle[128], p_wb[128];
static char p_recomp_alg[128], p_recompress[128], p_bdstat[128];
static atomic_int stop;
static atomic_ulong faults;
static atomic_ulong wb_err[NERR], wb_total, wb_ok;
static atomic_ulong bs_passes, bs_einval, bs_lines, bs_data_passes;
/* Pages written to the backing device during the race (main thread only). */
static unsigned long bd_written;

static void fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fault(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "resetrace: %s: ", family);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
	atomic_fetch_add(&faults, 1);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "ok";

	return n ? n : "E?";
}

/*
 * Page idx of generation gen: random bytes (stored whole, "huge"), text
 * (compressible, its own per page) or one byte repeated (same-filled), by
 * idx % 3.
 */
static void page_fill(uint8_t *p, unsigned long gen, unsigned int idx)
{
	uint64_t x = (gen << 20) ^ (idx * 0x9e3779b97f4a7c15ull) ^ 0x5851f42d4c957f2dull;
	unsigned int i;
	int n;

	switch (idx % 3) {
	case 0:
		for (i = 0; i < PG; i += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(p + i, &x, 8);
		}
		break;
	case 1:
		for (i = 0; i < PG; i += n) {
			char line[64];

			n = snprintf(line, sizeof(line), "resetrace generation %lu page %u\n", gen, idx);
			if (n > (int)(PG - i))
				n = PG - i;
			memcpy(p + i, line, n);
		}
		break;
	default:
		memset(p, 1 + (gen + idx) % 254, PG);
	}
}

/* The block_state flags zram gives a page of that kind after idle all. */
static const char *kind_flags(unsigned int idx)
{
	static const char *const f[] = { "..hi..", "...i..", "s....." };

	return f[idx % 3];
}

/* Writes the pages of idx[] (generation gen). */
static int fill(const unsigned int *idx, size_t n, unsigned long gen)
{
	uint8_t *buf = aligned_alloc(PG, PG);
	size_t i;
	int fd, ok = 1;

	if (!buf)
		return 0;
	fd = open(blk, O_RDWR | O_DIRECT);
	if (fd < 0) {
		fault("open %s: %s", blk, strerror(errno));
		free(buf);
		return 0;
	}
	for (i = 0; i < n && ok; i++) {
		page_fill(buf, gen, idx[i]);
		if (pwrite(fd, buf, PG, (off_t)idx[i] * PG) != PG) {
			fault("write page %u: %s", idx[i], strerror(errno));
			ok = 0;
		}
	}
	close(fd);
	free(buf);
	return ok;
}

static int verify(const unsigned int *idx, size_t n, unsigned long gen, const char *when)
{
	uint8_t *buf = aligned_alloc(PG, 2 * PG), *back;
	size_t i;
	int fd, ok = 1;

	if (!buf)
		return 0;
	back = buf + PG;
	fd = open(blk, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fault("open %s: %s", blk, strerror(errno));
		free(buf);
		return 0;
	}
	for (i = 0; i < n && ok; i++) {
		page_fill(buf, gen, idx[i]);
		if (pread(fd, back, PG, (off_t)idx[i] * PG) != PG) {
			fault("read page %u %s: %s", idx[i], when, strerror(errno));
			ok = 0;
		} else if (memcmp(buf, back, PG)) {
			fault("page %u (generation %lu) wrong %s", idx[i], gen, when);
			ok = 0;
		}
	}
	close(fd);
	free(buf);
	return ok;
}

/* Field i (from 1) of a file of numbers, or -1. */
static long field(const char *path, int i)
{
	char buf[256], *p = buf, *end;
	long v = -1;
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = 0;
	while (i-- > 0) {
		v = strtol(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
	}
	return v;
}

/*
 * Device 0 reset and initialised at size (the backing device first, in wb
 * mode), its pages idx[] written as generation gen. In wb mode the pages the
 * writebacks wrote to the backing device since the last initialisation
 * (bd_stat's third field, which a reset clears) are counted first.
 */
static int init_dev(const char *size, const unsigned int *idx, size_t n, unsigned long gen)
{
	long w;
	int e;

	if (wb_mode) {
		w = field(p_bdstat, 3);
		if (w > 0)
			bd_written += w;
	}
	e = sysfs_write(p_reset, "1");
	if (e) {
		fault("reset: %s", ename(e));
		return 0;
	}
	if (wb_mode) {
		e = sysfs_write(p_backing, loopdev);
		if (e) {
			fault("backing_dev %s after a reset: %s", loopdev, ename(e));
			return 0;
		}
	}
	if (wb_mode && newer) {
		e = sysfs_write(p_recomp_alg, "algo=zstd");
		if (e) {
			fault("recomp_algorithm algo=zstd: %s", ename(e));
			return 0;
		}
	}
	e = sysfs_write(p_disksize, size);
	if (e) {
		fault("disksize %s: %s", size, ename(e));
		return 0;
	}
	return fill(idx, n, gen);
}

/* Every page idle (a read clears the mark), for writeback idle. */
static int idle_all(void)
{
	int e = sysfs_write(p_idle, "all");

	if (e)
		fault("idle all: %s", ename(e));
	return !e;
}

/*
 * One size of a cycle: initialised, checked at once, made idle, and checked
 * again after a pause in which the writebacks (or readers) meet it.
 */
static int one_size(const char *size, const unsigned int *idx, size_t n, unsigned long gen)
{
	char when[32];

	snprintf(when, sizeof(when), "%s, at once", size);
	if (!init_dev(size, idx, n, gen) || !verify(idx, n, gen, when) || !idle_all())
		return 0;
	usleep(rand() % 3000);
	snprintf(when, sizeof(when), "%s, later", size);
	return verify(idx, n, gen, when);
}

/*
 * The command number k of a thread: its text in c, and the attribute it goes
 * to (writeback, or on rzram now and then recompress).
 */
static const char *wb_cmd(char *c, size_t len, unsigned long k, unsigned int *seed)
{
	static const char *const plain[] = { "idle", "huge", "huge_idle", "incompressible" };
	static const char *const typed[] = { "type=idle", "type=huge", "type=huge_idle" };
	unsigned int r = rand_r(seed), lo;

	switch (k % (newer ? 10 : 5)) {
	case 0 ... 3:
		snprintf(c, len, "%s", plain[k % 4]);
		break;
	case 4:
		snprintf(c, len, "page_index=%u", r % BIG_PAGES);
		break;
	case 5:
		snprintf(c, len, "%s", typed[r % 3]);
		break;
	case 6:
		lo = SMALL_PAGES - 1 - r % 8;
		snprintf(c, len, "page_indexes=%u-%u", lo, lo + 1 + r % (BIG_PAGES - lo - 1));
		break;
	case 7:
		snprintf(c, len, "page_index=%u page_index=%u page_indexes=0-%u type=huge",
			 r % SMALL_PAGES, BIG_PAGES - 1 - r % 4, BIG_PAGES - 1);
		break;
	case 8:
		snprintf(c, len, "type=idle");
		return p_recompress;
	default:
		snprintf(c, len, "threshold=1024");
		return p_recompress;
	}
	return p_wb;
}

static void *wb_thread(void *arg)
{
	unsigned int seed = 7919u * (unsigned int)(uintptr_t)arg + 1;
	unsigned long k = (uintptr_t)arg;
	char cmd[128];

	while (!atomic_load(&stop)) {
		const char *path = wb_cmd(cmd, sizeof(cmd), k++, &seed);
		int e = sysfs_write(path, cmd);

		atomic_fetch_add(&wb_err[e < NERR ? e : NERR - 1], 1);
		atomic_fetch_add(&wb_total, 1);
		if (!e && path == p_wb)
			atomic_fetch_add(&wb_ok, 1);
		if (e && e != EINVAL && e != EAGAIN &&
		    !(e == ERANGE && strstr(cmd, "page_indexes="))) {
			fault("%s '%s': %s", path == p_wb ? "writeback" : "recompress", cmd,
			      ename(e));
			break;
		}
		if (e)
			sched_yield();
	}
	return NULL;
}

/*
 * One block_state line: "%12zd %12lld.%06lu %c%c%c%c%c%c\n", 40 bytes. The
 * index is below the large size and above *last.
 */
static int line_ok(const char *l, long *last)
{
	static const char flag[] = "swhirn";
	char *end;
	long idx;
	int i;

	if (l[12] != ' ' || l[25] != '.' || l[32] != ' ' || l[39] != '\n')
		return 0;
	idx = strtol(l, &end, 10);
	if (end != l + 12 || idx < 0 || idx >= BIG_PAGES || idx <= *last)
		return 0;
	for (i = 0; i < 6; i++)
		if (l[33 + i] != '.' && l[33 + i] != flag[i])
			return 0;
	*last = idx;
	return 1;
}

/*
 * Reads block_state from start to end in reads of rsize bytes: lines are
 * checked and, with out, copied there (up to outlen). Returns the number of
 * lines, or -errno of the read that failed, or -1000 for a bad line.
 */
static long read_bs(size_t rsize, char *out, size_t outlen)
{
	char buf[4096 + 64];
	size_t have = 0, used = 0;
	long last = -1, lines = 0;
	int fd = open(bspath, O_RDONLY);

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r = read(fd, buf + have, rsize);
		size_t off = 0;

		if (r < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		have += r;
		while (have - off >= 40) {
			if (!line_ok(buf + off, &last)) {
				fprintf(stdout, "resetrace: %s: bad block_state line '%.39s'\n",
					family, buf + off);
				close(fd);
				return -1000;
			}
			if (out && used + 40 < outlen) {
				memcpy(out + used, buf + off, 40);
				used += 40;
				out[used] = 0;
			}
			off += 40;
			lines++;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	close(fd);
	if (have) {
		fprintf(stdout, "resetrace: %s: block_state ends mid-line\n", family);
		return -1000;
	}
	return lines;
}

static void *bs_thread(void *arg)
{
	/* Reads of 600 bytes (thread 0) and 640 (thread 1). */
	size_t rsize = 600 + 40 * (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		long n = read_bs(rsize, NULL, 0);

		if (n == -EINVAL) {
			atomic_fetch_add(&bs_einval, 1);
			sched_yield();
			continue;
		}
		if (n < 0) {
			if (n != -1000)
				fault("block_state read: %s", ename((int)-n));
			else
				fault("block_state malformed");
			break;
		}
		atomic_fetch_add(&bs_passes, 1);
		atomic_fetch_add(&bs_lines, n);
		if (n > 0)
			atomic_fetch_add(&bs_data_passes, 1);
	}
	return NULL;
}

/* After the race: one more small initialisation, checked whole. */
static void final_check(unsigned long gen)
{
	char want[40 * N(small_idx) + 1], got[40 * N(small_idx) + 64];
	size_t i, nonsame = 0;
	long n;
	int e;

	got[0] = 0;
	if (!init_dev(SMALL_SIZE, small_idx, N(small_idx), gen) || !idle_all())
		return;
	if (wb_mode) {
		e = sysfs_write(p_wb, "idle");
		if (e)
			fault("writeback idle after the race: %s", ename(e));
		verify(small_idx, N(small_idx), gen, "after the last writeback");
		for (i = 0; i < N(small_idx); i++)
			nonsame += small_idx[i] % 3 != 2;
		n = field(p_bdstat, 1);
		if (n != (long)nonsame)
			fault("bd_stat counts %ld blocks after writeback idle, want %zu", n, nonsame);
		else if (!atomic_load(&faults))
			printf("resetrace: %s: after the race, writeback idle wrote back %ld pages, all read back\n",
			       family, n);
		return;
	}
	n = read_bs(4096, got, sizeof(got));
	if (n < 0) {
		fault("block_state after the race: %s", n == -1000 ? "malformed" : ename((int)-n));
		return;
	}
	if (n != (long)N(small_idx))
		fault("block_state after the race has %ld lines, want %zu", n, N(small_idx));
	want[0] = 0;
	for (i = 0; i < N(small_idx); i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%u %s\n",
			 small_idx[i], kind_flags(small_idx[i]));
	/* got as "index flags" lines, to compare with want. */
	{
		char norm[sizeof(want) + 64] = "";
		char *l;

		for (l = got; *l; l += 40)
			snprintf(norm + strlen(norm), sizeof(norm) - strlen(norm), "%ld %.6s\n",
				 strtol(l, NULL, 10), l + 33);
		if (strcmp(norm, want))
			fault("block_state after the race:\n%swant:\n%s", norm, want);
	}
	if (!atomic_load(&faults))
		printf("resetrace: %s: after the race, block_state lists the %ld pages written, flags right\n",
		       family, n);
}

/* Whether the race has done what it must (see the top) with cycles done. */
static int raced_enough(unsigned long cycles, unsigned long min_cycles)
{
	if (cycles < min_cycles)
		return 0;
	if (wb_mode)
		return atomic_load(&wb_ok) > 0 && bd_written > 0;
	return atomic_load(&bs_data_passes) > 0;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	unsigned long cycles = 0, max_cycles, min_cycles, gen = 0;
	double start, end, hard, raced;
	int i, secs, noted = 0;

	if (argc < 5 || (strcmp(argv[1], "wb") && strcmp(argv[1], "bs")) ||
	    (!strcmp(argv[1], "wb") && argc < 6)) {
		fprintf(stderr, "usage: resetrace wb FAMILY SECONDS CYCLES LOOP [rzram]\n"
				"       resetrace bs FAMILY SECONDS CYCLES\n");
		return 2;
	}
	wb_mode = !strcmp(argv[1], "wb");
	snprintf(family, sizeof(family), "%s", argv[2]);
	secs = atoi(argv[3]);
	max_cycles = strtoul(argv[4], NULL, 10);
	min_cycles = max_cycles < MIN_CYCLES ? max_cycles : MIN_CYCLES;
	if (wb_mode) {
		snprintf(loopdev, sizeof(loopdev), "%s", argv[5]);
		newer = argc > 6 && !strcmp(argv[6], "rzram");
	}
	snprintf(dir, sizeof(dir), "/sys/block/%s0", family);
	snprintf(blk, sizeof(blk), "/dev/%s0", family);
	snprintf(bspath, sizeof(bspath), "/sys/kernel/debug/%s/%s0/block_state", family, family);
	snprintf(p_reset, sizeof(p_reset), "%s/reset", dir);
	snprintf(p_disksize, sizeof(p_disksize), "%s/disksize", dir);
	snprintf(p_backing, sizeof(p_backing), "%s/backing_dev", dir);
	snprintf(p_idle, sizeof(p_idle), "%s/idle", dir);
	snprintf(p_wb, sizeof(p_wb), "%s/writeback", dir);
	snprintf(p_recomp_alg, sizeof(p_recomp_alg), "%s/recomp_algorithm", dir);
	snprintf(p_recompress, sizeof(p_recompress), "%s/recompress", dir);
	snprintf(p_bdstat, sizeof(p_bdstat), "%s/bd_stat", dir);
	srand(1);

	start = now();
	end = start + secs;
	hard = start + (secs > HARD_SECS ? secs : HARD_SECS);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, wb_mode ? wb_thread : bs_thread, (void *)(uintptr_t)i);
	while (cycles < max_cycles && !atomic_load(&faults)) {
		double t_now = now();

		if (t_now >= hard || (t_now >= end && raced_enough(cycles, min_cycles)))
			break;
		if (t_now >= end && !noted) {
			printf("resetrace: %s: %d s gave %lu cycles (want %lu), ", family, secs, cycles,
			       min_cycles);
			if (wb_mode)
				printf("%lu writebacks that succeeded, %lu pages written back",
				       atomic_load(&wb_ok), bd_written);
			else
				printf("%lu passes of block_state with lines",
				       atomic_load(&bs_data_passes));
			printf("; going on until there are enough, for at most %.0f s in all\n",
			       hard - start);
			fflush(stdout);
			noted = 1;
		}
		/* Large, then small: every other reset shrinks the device. */
		if (!one_size(BIG_SIZE, big_idx, N(big_idx), ++gen) ||
		    !one_size(SMALL_SIZE, small_idx, N(small_idx), ++gen))
			break;
		cycles++;
	}
	raced = now() - start;
	atomic_store(&stop, 1);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	/* Also counts, before its reset, the pages written back at the last size. */
	if (!atomic_load(&faults))
		final_check(++gen);

	if (wb_mode) {
		printf("resetrace: %s: %lu cycles 4M/256K in %.1f s, %lu writes to writeback%s:", family,
		       cycles, raced, atomic_load(&wb_total), newer ? " and recompress" : "");
		for (i = 0; i < NERR; i++)
			if (atomic_load(&wb_err[i]))
				printf(" %s %lu", ename(i), atomic_load(&wb_err[i]));
		printf("; writeback succeeded %lu times, %lu pages written back\n",
		       atomic_load(&wb_ok), bd_written);
	} else {
		printf("resetrace: %s: %lu cycles 4M/256K in %.1f s, block_state read whole %lu times",
		       family, cycles, raced, atomic_load(&bs_passes));
		printf(" (%lu of them with lines, %lu lines), EINVAL %lu times\n",
		       atomic_load(&bs_data_passes), atomic_load(&bs_lines), atomic_load(&bs_einval));
	}
	/*
	 * After a fault the run has failed already, and stopped early: these
	 * would only add noise.
	 */
	if (!atomic_load(&faults)) {
		if (cycles < min_cycles)
			fault("only %lu whole resize cycles in %.1f s, want at least %lu: the race was not run enough",
			      cycles, raced, min_cycles);
		if (wb_mode && !atomic_load(&wb_ok))
			fault("no write to writeback succeeded during the race (%lu tried): it did not race a working writeback",
			      atomic_load(&wb_total));
		if (wb_mode && !bd_written)
			fault("no page was written back during the race (bd_stat): it did not race a working writeback");
		if (!wb_mode && !atomic_load(&bs_data_passes))
			fault("no pass of block_state during the race listed a page (%lu passes, all empty): it did not race a working read",
			      atomic_load(&bs_passes));
	}
	printf("resetrace: %s: %s\n", family, atomic_load(&faults) ? "FAILED" : "passed");
	return atomic_load(&faults) ? 1 : 0;
}
