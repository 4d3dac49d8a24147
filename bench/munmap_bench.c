// SPDX-License-Identifier: GPL-2.0
/*
 * munmap_bench: how long munmap() of swapped-out anonymous memory takes.
 *
 * Each of P processes mmaps N MB of anonymous memory, fills it with data
 * that is about half compressible, pushes it to swap with MADV_PAGEOUT
 * (in chunks, so the whole region never has to be resident at once), waits
 * at a barrier shared by all processes, and times its munmap(), which frees
 * one swap slot (one zsmalloc object) per page. One line per round:
 *
 *   munmap dev=zram P=2 N=256 round=0 swapped_kb=524288 ms=123.4 max_ms=130.1 ret_ms=140.2
 *
 * ms is the mean of the processes' munmap times, max_ms the slowest.
 * ret_ms is the time from the start of the munmaps until the device's
 * memory in use (given with -s: zram's mm_stat, whose third field is
 * mem_used_total, or zswap's pool_total_size) is back to its value before
 * the fill: when the memory is really returned. -1 without
 * -s, and if it is not back within 60 s. The parent sleeps in waitpid() until
 * every process has unmapped and exited (the memory cannot be back sooner),
 * and only then polls that file every 200 us (with pread(), or opening it
 * again where it cannot be read at an offset), so its polling takes no CPU
 * time from the munmaps, nor, with -c, from a deferred free's worker on the
 * other CPUs.
 *
 * -c pins process i to CPU i modulo the number of CPUs (with P = 1, the one
 * process runs on CPU 0), and the parent to CPU 0. -d names the device in the
 * output and -o numbers the rounds from an offset.
 *
 * usage: munmap_bench -p P -m MB [-r ROUNDS] [-o FIRST] [-d NAME] [-s MM_STAT|POOL_SIZE] [-c]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define PAGE 4096UL
#define CHUNK (16UL << 20)
#define MAXP 64

struct shared {
	volatile int ready;
	volatile int go;
	double ms[MAXP];
	long swapped_kb[MAXP];
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * The memory in use, in bytes, from the file PATH, open as FD:
 * mem_used_total, the third field of zram's mm_stat, or the one number of a
 * file that has only one (zswap's debugfs pool_total_size); -1 if
 * unreadable. A file that cannot be read with pread() (debugfs attributes
 * are not seekable) is opened again for each read.
 */
static long long mem_used(int fd, const char *path)
{
	static int reopen;
	long long orig, compr, used;
	char buf[512];
	ssize_t n = -1;
	int got;

	if (!reopen) {
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		reopen = n < 0 && errno == ESPIPE;
	}
	if (reopen) {
		int again = open(path, O_RDONLY);

		if (again < 0)
			return -1;
		n = read(again, buf, sizeof(buf) - 1);
		close(again);
	}
	if (n <= 0)
		return -1;
	buf[n] = 0;
	got = sscanf(buf, "%lld %lld %lld", &orig, &compr, &used);
	if (got == 1)
		return orig;
	return got == 3 ? used : -1;
}

static void pin(int idx)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(n > 0 ? idx % n : 0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "munmap_bench: sched_setaffinity: %s\n", strerror(errno));
}

static long vm_swap_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSwap: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int child(struct shared *sh, int idx, int nproc, unsigned long mb, int pinned)
{
	size_t len = mb << 20, off, i;
	char *mem;
	double t0;

	if (pinned)
		pin(idx);

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "munmap_bench: mmap %lu MB: %s\n", mb, strerror(errno));
		return 1;
	}
	for (off = 0; off < len; off += CHUNK) {
		size_t n = len - off < CHUNK ? len - off : CHUNK;

		/* Half of each page random, half one repeated word. */
		for (i = 0; i < n; i += sizeof(uint64_t)) {
			uint64_t *w = (uint64_t *)(mem + off + i);
			size_t word = (off + i) / sizeof(uint64_t);

			*w = (word & 1) ? mix(word ^ ((uint64_t)idx << 48)) : 0x5a5a5a5a5a5a5a5aULL;
		}
		if (madvise(mem + off, n, MADV_PAGEOUT)) {
			fprintf(stderr, "munmap_bench: MADV_PAGEOUT: %s\n", strerror(errno));
			return 1;
		}
	}
	sh->swapped_kb[idx] = vm_swap_kb();
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		usleep(100);
	t0 = now_ms();
	munmap(mem, len);
	sh->ms[idx] = now_ms() - t0;
	(void)nproc;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mb = 0, p = 1, rounds = 5, first = 0, r, i;
	const char *dev = "-", *stat = NULL;
	struct shared *sh;
	int c, status, failed = 0, pinned = 0, statfd = -1;

	while ((c = getopt(argc, argv, "p:m:r:o:d:s:c")) != -1) {
		switch (c) {
		case 'p': p = strtoul(optarg, NULL, 0); break;
		case 'm': mb = strtoul(optarg, NULL, 0); break;
		case 'r': rounds = strtoul(optarg, NULL, 0); break;
		case 'o': first = strtoul(optarg, NULL, 0); break;
		case 'd': dev = optarg; break;
		case 's': stat = optarg; break;
		case 'c': pinned = 1; break;
		default: goto usage;
		}
	}
	if (!mb || !p || p > MAXP || !rounds)
		goto usage;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;

	if (stat) {
		statfd = open(stat, O_RDONLY);
		if (statfd < 0) {
			fprintf(stderr, "munmap_bench: %s: %s\n", stat, strerror(errno));
			return 1;
		}
	}
	if (pinned)
		pin(0);

	for (r = 0; r < rounds; r++) {
		double sum = 0, max = 0, t0, ret_ms = -1;
		long long base = statfd >= 0 ? mem_used(statfd, stat) : -1;
		long swapped = 0;

		memset(sh, 0, sizeof(*sh));
		for (i = 0; i < p; i++) {
			pid_t pid = fork();

			if (pid < 0)
				return 1;
			if (!pid)
				_exit(child(sh, i, p, mb, pinned));
		}
		while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < (int)p) {
			if (waitpid(-1, &status, WNOHANG) > 0 && (!WIFEXITED(status) || WEXITSTATUS(status))) {
				fprintf(stderr, "munmap_bench: a child failed before the barrier\n");
				return 1;
			}
			usleep(1000);
		}
		t0 = now_ms();
		__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
		for (i = 0; i < p; i++) {
			wait(&status);
			failed |= !WIFEXITED(status) || WEXITSTATUS(status);
		}
		/* The memory is back when mem_used_total is at its pre-fill value. */
		while (base >= 0 && now_ms() - t0 < 60e3) {
			long long used = mem_used(statfd, stat);

			if (used >= 0 && used <= base) {
				ret_ms = now_ms() - t0;
				break;
			}
			usleep(200);
		}
		for (i = 0; i < p; i++) {
			sum += sh->ms[i];
			max = sh->ms[i] > max ? sh->ms[i] : max;
			swapped += sh->swapped_kb[i];
		}
		printf("munmap dev=%s P=%lu N=%lu round=%lu swapped_kb=%ld ms=%.1f max_ms=%.1f ret_ms=%.1f\n",
		       dev, p, mb, first + r, swapped, sum / p, max, ret_ms);
		fflush(stdout);
	}
	return failed;
usage:
	fprintf(stderr, "usage: munmap_bench -p P -m MB [-r ROUNDS] [-o FIRST] [-d NAME] [-s MM_STAT|POOL_SIZE] [-c]\n");
	return 2;
}
