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
 *   munmap P=2 N=256 round=0 swapped_kb=262144 ms=123.4 max_ms=130.1
 *
 * ms is the mean of the processes' munmap times, max_ms the slowest.
 *
 * usage: munmap_bench -p P -m MB [-r ROUNDS]
 */
#include <errno.h>
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

static int child(struct shared *sh, int idx, int nproc, unsigned long mb)
{
	size_t len = mb << 20, off, i;
	char *mem;
	double t0;

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
	unsigned long mb = 0, p = 1, rounds = 5, r, i;
	struct shared *sh;
	int c, status, failed = 0;

	while ((c = getopt(argc, argv, "p:m:r:")) != -1) {
		switch (c) {
		case 'p': p = strtoul(optarg, NULL, 0); break;
		case 'm': mb = strtoul(optarg, NULL, 0); break;
		case 'r': rounds = strtoul(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (!mb || !p || p > MAXP || !rounds)
		goto usage;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;

	for (r = 0; r < rounds; r++) {
		double sum = 0, max = 0;
		long swapped = 0;

		memset(sh, 0, sizeof(*sh));
		for (i = 0; i < p; i++) {
			pid_t pid = fork();

			if (pid < 0)
				return 1;
			if (!pid)
				_exit(child(sh, i, p, mb));
		}
		while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < (int)p) {
			if (waitpid(-1, &status, WNOHANG) > 0 && (!WIFEXITED(status) || WEXITSTATUS(status))) {
				fprintf(stderr, "munmap_bench: a child failed before the barrier\n");
				return 1;
			}
			usleep(1000);
		}
		__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
		for (i = 0; i < p; i++) {
			wait(&status);
			failed |= !WIFEXITED(status) || WEXITSTATUS(status);
		}
		for (i = 0; i < p; i++) {
			sum += sh->ms[i];
			max = sh->ms[i] > max ? sh->ms[i] : max;
			swapped += sh->swapped_kb[i];
		}
		printf("munmap P=%lu N=%lu round=%lu swapped_kb=%ld ms=%.1f max_ms=%.1f\n",
		       p, mb, r, swapped, sum / p, max);
		fflush(stdout);
	}
	return failed;
usage:
	fprintf(stderr, "usage: munmap_bench -p P -m MB [-r ROUNDS]\n");
	return 2;
}
