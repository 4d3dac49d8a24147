// SPDX-License-Identifier: GPL-2.0
/*
 * swaprace: threads of one process fault in the same swapped-out pages at
 * once, and every page must come back with its data.
 *
 * On a swap device with SWP_SYNCHRONOUS_IO (zram, rzram) a fault on a page
 * whose swap entry has one user reads it straight into a new page, skipping
 * the swap cache. Two threads faulting the same entry both read it; the first
 * to finish frees the slot, and the driver frees its data then. The second
 * read must still see the data, never a zeroed or freed slot: that race
 * mapped zeroed pages into processes (CVE-2022-49052, "mm: fix unexpected
 * zeroed page mapping with zram swap") and, in its later form, let one
 * thread's slot free race the other's read (CVE-2024-26759, "mm/swap: fix
 * race when skipping swapcache").
 *
 * Each round fills MB of anonymous memory with data unique to the round,
 * pushes it out with MADV_PAGEOUT, then releases T threads together that
 * read and check every page in the same order, so that they fault each page
 * at nearly the same time. A forked child reads the same pages in half the rounds, so the entries
 * have two users there and the swap cache path races too.
 *
 * usage: swaprace -m MB -t SECONDS [-T THREADS]
 * Prints "swaprace: N rounds, P pages swapped out, B bad" and exits non-zero
 * if any page came back wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mix.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define PAGE 4096UL
#define MAX_THREADS 16

static uint8_t *mem;
static size_t npages;
static unsigned int nthreads;
static uint64_t round_seed;
static pthread_barrier_t go, done;
static volatile int finished;
static unsigned long bad;
static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t word(size_t page, size_t j)
{
	return mix(round_seed ^ (page << 12) ^ j);
}

/* Half the words hashed, half a repeated byte: compressible, never zero. */
static void fill(uint64_t *w, size_t page)
{
	size_t j;

	for (j = 0; j < PAGE / 8; j++)
		w[j] = (j % 2) ? word(page, j) : 0x0101010101010101ULL * ((page & 0x7f) + 1);
}

static unsigned long check_from(size_t start)
{
	uint64_t expect[PAGE / 8];
	unsigned long n = 0;
	size_t k;

	for (k = 0; k < npages; k++) {
		size_t i = (start + k) % npages;

		fill(expect, i);
		if (memcmp(mem + i * PAGE, expect, PAGE)) {
			if (n < 4)
				fprintf(stderr, "swaprace: page %zu wrong (first word %016llx)\n", i,
					(unsigned long long)*(uint64_t *)(void *)(mem + i * PAGE));
			n++;
		}
	}
	return n;
}

static void *reader(void *arg)
{
	(void)arg;
	for (;;) {
		unsigned long n;

		pthread_barrier_wait(&go);
		if (finished)
			return NULL;
		n = check_from(0);
		if (n) {
			pthread_mutex_lock(&bad_lock);
			bad += n;
			pthread_mutex_unlock(&bad_lock);
		}
		pthread_barrier_wait(&done);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long mb = 0, secs = 0, rounds = 0, out = 0;
	pthread_t th[MAX_THREADS];
	double t0;
	unsigned int i;
	int c;

	nthreads = 4;
	while ((c = getopt(argc, argv, "m:t:T:")) != -1) {
		switch (c) {
		case 'm': mb = strtoul(optarg, NULL, 0); break;
		case 't': secs = strtoul(optarg, NULL, 0); break;
		case 'T': nthreads = strtoul(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (!mb || !secs || nthreads < 2 || nthreads > MAX_THREADS)
		goto usage;
	npages = mb * (1024 * 1024 / PAGE);
	mem = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("swaprace: mmap");
		return 2;
	}
	pthread_barrier_init(&go, NULL, nthreads + 1);
	pthread_barrier_init(&done, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)i);
	t0 = now();
	while (now() - t0 < secs) {
		pid_t child = -1;
		size_t p;
		FILE *f;
		unsigned long before = 0, after = 0;
		char line[128];

		round_seed = (rounds + 1) * 0x1000193ULL;
		for (p = 0; p < npages; p++)
			fill((uint64_t *)(void *)(mem + p * PAGE), p);
		f = fopen("/proc/vmstat", "r");
		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "pswpout %lu", &before);
		if (f)
			fclose(f);
		if (madvise(mem, npages * PAGE, MADV_PAGEOUT)) {
			perror("swaprace: MADV_PAGEOUT");
			return 2;
		}
		f = fopen("/proc/vmstat", "r");
		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "pswpout %lu", &after);
		if (f)
			fclose(f);
		out += after - before;
		/* Every other round a child shares the entries and reads too. */
		if (rounds % 2) {
			child = fork();
			if (child == 0)
				_exit(check_from(0) ? 1 : 0);
		}
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
		if (child > 0) {
			int status;

			if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
				bad++;
		}
		rounds++;
		if (bad)
			break;
	}
	finished = 1;
	pthread_barrier_wait(&go);
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("swaprace: %lu rounds of %u threads, %lu pages swapped out, %lu bad\n", rounds,
	       nthreads, out, bad);
	if (!out) {
		fprintf(stderr, "swaprace: nothing was swapped out: is swap on?\n");
		return 1;
	}
	return bad ? 1 : 0;
usage:
	fprintf(stderr, "usage: swaprace -m MB -t SECONDS [-T THREADS]\n");
	return 2;
}
