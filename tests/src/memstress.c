// SPDX-License-Identifier: GPL-2.0
/*
 * memstress: fill anonymous memory with deterministic, partly compressible
 * pages, push it to swap, and verify every page on read-back.
 *
 * Each 4 KiB page holds its index and the seed in its first two words; of the
 * remaining words, PCT percent are pseudo-random (a hash of seed, page and
 * word) and the rest repeat a per-page byte, so the compression ratio is set
 * by PCT. Any page that comes back different is reported and fails the run.
 *
 * usage: memstress -m MB [-r PCT] [-s SEED] [-p] [-H] [-v PASSES]
 *   -m MB      anonymous memory to use
 *   -r PCT     percent of random words per page (default 25)
 *   -s SEED    pattern seed (default 1)
 *   -p         madvise(MADV_PAGEOUT) the region after filling it
 *   -H         hold: after filling print "memstress: filled" and wait for a
 *              line on stdin before verifying (lets a script swapoff first)
 *   -v PASSES  verification passes (default 1)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mix.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define PAGE 4096UL
#define WORDS (PAGE / sizeof(uint64_t))

static void fill_page(uint64_t *w, uint64_t page, uint64_t seed, unsigned int pct)
{
	uint64_t rep = (mix(page ^ seed) & 0xff) * 0x0101010101010101ULL;
	size_t j;

	w[0] = 0x527a72616d000000ULL ^ page;
	w[1] = seed;
	for (j = 2; j < WORDS; j++)
		w[j] = ((j * 37) % 100 < pct) ? mix(seed ^ (page << 12) ^ j) : rep;
}

static void usage(void)
{
	fprintf(stderr, "usage: memstress -m MB [-r PCT] [-s SEED] [-p] [-H] [-v PASSES]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long mb = 0, pct = 25, passes = 1, bad = 0, pass;
	uint64_t seed = 1, expect[WORDS];
	int pageout = 0, hold = 0, c;
	size_t npages, i;
	char *mem;

	while ((c = getopt(argc, argv, "m:r:s:pHv:")) != -1) {
		switch (c) {
		case 'm': mb = strtoul(optarg, NULL, 0); break;
		case 'r': pct = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'p': pageout = 1; break;
		case 'H': hold = 1; break;
		case 'v': passes = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!mb || pct > 100)
		usage();
	npages = mb * (1024 * 1024 / PAGE);
	mem = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "memstress: mmap %lu MB: %s\n", mb, strerror(errno));
		return 2;
	}
	for (i = 0; i < npages; i++)
		fill_page((uint64_t *)(mem + i * PAGE), i, seed, pct);
	if (pageout && madvise(mem, npages * PAGE, MADV_PAGEOUT)) {
		fprintf(stderr, "memstress: MADV_PAGEOUT: %s\n", strerror(errno));
		return 2;
	}
	printf("memstress: filled %lu MB (%zu pages, %lu%% random)\n", mb, npages, pct);
	fflush(stdout);
	if (hold) {
		char line[16];

		if (!fgets(line, sizeof(line), stdin))
			fprintf(stderr, "memstress: stdin closed, verifying\n");
	}
	for (pass = 0; pass < passes; pass++) {
		for (i = 0; i < npages; i++) {
			fill_page(expect, i, seed, pct);
			if (memcmp(mem + i * PAGE, expect, PAGE)) {
				if (bad < 8)
					fprintf(stderr, "memstress: page %zu differs (pass %lu)\n", i, pass);
				bad++;
			}
		}
	}
	printf("memstress: verified %zu pages x %lu passes, %lu bad\n", npages, passes, bad);
	return bad ? 1 : 0;
}
