// SPDX-License-Identifier: GPL-2.0
/*
 * iocount: the cost of one 4 KiB O_DIRECT write and one 4 KiB O_DIRECT read
 * through a block device's own bio path, page by page.
 *
 * Each round writes N pages of one kind of data, one pwrite() of a page
 * each, then reads them back, one pread() each, and checks them after the
 * read loop; it times both loops with CLOCK_MONOTONIC. Under QEMU's -icount shift=0 a guest
 * instruction takes one virtual nanosecond, so on a guest of one vCPU the
 * times are guest instructions: the same syscall and block-layer path for
 * every device, and the driver's own work on top. Round 0 writes into empty
 * slots; later rounds overwrite (the old object freed, a new one stored).
 * One line per round:
 *
 *   iocount dev=rzram alg=lz4 kind=text round=1 write=42255 read=23262
 *
 * (write and read in ns per page). Kinds:
 *   text    compressible: words and numbers, about 2.8:1 with deflate
 *   random  incompressible: every byte from a mixer, stored whole (huge)
 *   zero    same-filled: zeroes, stored as a word in the slot
 *
 * usage: iocount -f DEV -n PAGES -r ROUNDS -k KIND [-d NAME] [-a ALG]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tests/src/mix.h"

#define PAGE 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* fill_page(P, KIND, I): page I's contents of the given kind. */
static void fill_page(unsigned char *p, const char *kind, uint64_t i)
{
	static const char *const words[] = {
		"the ", "page ", "swap ", "of ", "memory ", "and ", "a ", "device ",
		"compressed ", "block ", "to ", "is ", "in ", "zram ", "slot ", "free ",
	};
	size_t n = 0;
	uint64_t x = i * 0x10001;

	if (!strcmp(kind, "zero")) {
		memset(p, 0, PAGE);
		return;
	}
	if (!strcmp(kind, "random")) {
		for (n = 0; n < PAGE; n += 8) {
			uint64_t w = mix(x++);

			memcpy(p + n, &w, 8);
		}
		return;
	}
	while (n < PAGE) {
		uint64_t r = mix(x++);
		const char *w = words[r % 16];
		size_t l = strlen(w);

		if (l > PAGE - n)
			l = PAGE - n;
		memcpy(p + n, w, l);
		n += l;
		/* A number now and then, so that pages differ. */
		if ((r >> 8) % 8 == 0 && n + 8 <= PAGE)
			n += snprintf((char *)p + n, 9, "%07u ", (unsigned int)(r >> 32) % 10000000);
	}
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *kind = "text", *name = "dev", *alg = "-";
	long pages = 2048, rounds = 5;
	unsigned char *data, *back;
	int fd, c;

	while ((c = getopt(argc, argv, "f:n:r:k:d:a:")) != -1) {
		switch (c) {
		case 'f': dev = optarg; break;
		case 'n': pages = atol(optarg); break;
		case 'r': rounds = atol(optarg); break;
		case 'k': kind = optarg; break;
		case 'd': name = optarg; break;
		case 'a': alg = optarg; break;
		default: return 2;
		}
	}
	if (!dev || pages <= 0 || rounds <= 0 ||
	    (strcmp(kind, "text") && strcmp(kind, "random") && strcmp(kind, "zero"))) {
		fprintf(stderr, "usage: iocount -f DEV -n PAGES -r ROUNDS -k text|random|zero [-d NAME] [-a ALG]\n");
		return 2;
	}
	if (posix_memalign((void **)&data, PAGE, (size_t)pages * PAGE) ||
	    posix_memalign((void **)&back, PAGE, (size_t)pages * PAGE)) {
		perror("posix_memalign");
		return 1;
	}
	for (long i = 0; i < pages; i++)
		fill_page(data + (size_t)i * PAGE, kind, (uint64_t)i);
	fd = open(dev, O_RDWR | O_DIRECT);
	if (fd < 0) {
		perror(dev);
		return 1;
	}
	for (long r = 0; r < rounds; r++) {
		uint64_t t0, t1, t2;

		t0 = now_ns();
		for (long i = 0; i < pages; i++) {
			if (pwrite(fd, data + (size_t)i * PAGE, PAGE, (off_t)i * PAGE) != PAGE) {
				fprintf(stderr, "pwrite page %ld: %s\n", i, strerror(errno));
				return 1;
			}
		}
		t1 = now_ns();
		for (long i = 0; i < pages; i++) {
			if (pread(fd, back + (size_t)i * PAGE, PAGE, (off_t)i * PAGE) != PAGE) {
				fprintf(stderr, "pread page %ld: %s\n", i, strerror(errno));
				return 1;
			}
		}
		t2 = now_ns();
		for (long i = 0; i < pages; i++) {
			if (memcmp(back + (size_t)i * PAGE, data + (size_t)i * PAGE, PAGE)) {
				fprintf(stderr, "page %ld read back wrong\n", i);
				return 1;
			}
		}
		memset(back, 0x5a, (size_t)pages * PAGE);
		printf("iocount dev=%s alg=%s kind=%s round=%ld write=%llu read=%llu\n", name, alg,
		       kind, r, (unsigned long long)((t1 - t0) / pages),
		       (unsigned long long)((t2 - t1) / pages));
		fflush(stdout);
	}
	close(fd);
	return 0;
}
