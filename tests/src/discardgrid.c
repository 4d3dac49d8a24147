// SPDX-License-Identifier: GPL-2.0
/*
 * discardgrid DEV: regress_partial_discard's loop, in one process so that the
 * test's time goes to the driver, not to spawning blkdiscard under KASAN.
 *
 * For BLKDISCARD, then BLKZEROOUT: fill the first 64 pages of DEV with data
 * (O_DIRECT), then at each page offset of a 32-page window issue the aligned
 * ranges of 1 to 4 pages, which must succeed and zero exactly their pages,
 * and four ranges that are not page-aligned (start, length, or both), which
 * must fail with EINVAL and change nothing. Finally the device, read with
 * O_DIRECT, must equal a model of it. Exit 0 when all holds; 1, naming the
 * first failure, otherwise.
 *
 * Each call runs under a 20 s alarm, but the alarm cannot catch a hang: its
 * handler runs only when the call comes back to user space, and a hung
 * discard waits uninterruptibly in the kernel. So the alarm only reports,
 * when it comes back, a call that took more than 20 s (and fails the test).
 * A call that never comes back is caught by guest/init's per-test time
 * limit: runtest kills the test when it runs past it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "mix.h"

#define PG 4096
#define NPAGES 64
#define WINDOW 32

static const char *what = "start";

/* Runs when the call under the alarm comes back, not while it hangs. */
static void on_alarm(int sig)
{
	(void)sig;
	dprintf(2, "discardgrid: %s took more than 20 s (reported as it came back)\n", what);
	_exit(1);
}

static void die(const char *msg)
{
	fprintf(stderr, "discardgrid: %s: %s\n", msg, strerror(errno));
	exit(1);
}

/*
 * The range ioctl, under a 20 s alarm (which reports a slow call as it comes
 * back; see the top); 0 or the errno.
 */
static int range(int fd, unsigned long req, uint64_t start, uint64_t len)
{
	uint64_t r[2] = { start, len };
	int ret;

	alarm(20);
	ret = ioctl(fd, req, r);
	alarm(0);
	return ret ? errno : 0;
}

static void fill(int fd, unsigned char *model, uint64_t seed)
{
	uint64_t *w = (uint64_t *)model;
	size_t i;

	for (i = 0; i < NPAGES * PG / 8; i++)
		w[i] = mix(seed * 0x100000 + i);
	if (pwrite(fd, model, NPAGES * PG, 0) != NPAGES * PG)
		die("write");
}

int main(int argc, char **argv)
{
	static const char *names[] = { "discard", "write-zeroes" };
	static const unsigned long reqs[] = { BLKDISCARD, BLKZEROOUT };
	unsigned char *model, *buf;
	int fd, m, done = 0, refused = 0;
	char label[128];

	if (argc != 2) {
		fprintf(stderr, "usage: discardgrid DEV\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0)
		die(argv[1]);
	if (posix_memalign((void **)&model, PG, NPAGES * PG) ||
	    posix_memalign((void **)&buf, PG, NPAGES * PG))
		die("posix_memalign");
	for (m = 0; m < 2; m++) {
		uint64_t off, len;
		int u;

		fill(fd, model, m + 1);
		for (off = 0; off < WINDOW; off++) {
			uint64_t bad[4][2] = {
				{ 512, PG },
				{ off * PG, 512 },
				{ 2048, 6144 },
				{ off * PG + 3584, 1024 },
			};

			for (len = 1; len <= 4; len++) {
				snprintf(label, sizeof(label), "%s of %llu pages at page %llu",
					 names[m], (unsigned long long)len,
					 (unsigned long long)off);
				what = label;
				errno = range(fd, reqs[m], off * PG, len * PG);
				if (errno)
					die(label);
				memset(model + off * PG, 0, len * PG);
				done++;
			}
			for (u = 0; u < 4; u++) {
				int err;

				snprintf(label, sizeof(label), "%s -o %llu -l %llu", names[m],
					 (unsigned long long)bad[u][0],
					 (unsigned long long)bad[u][1]);
				what = label;
				err = range(fd, reqs[m], bad[u][0], bad[u][1]);
				if (err != EINVAL) {
					fprintf(stderr, "discardgrid: %s (not page-aligned): %s, not EINVAL\n",
						label, err ? strerror(err) : "succeeded");
					return 1;
				}
				refused++;
			}
		}
		what = "read back";
		if (pread(fd, buf, NPAGES * PG, 0) != NPAGES * PG)
			die("read back");
		if (memcmp(buf, model, NPAGES * PG)) {
			size_t i;

			for (i = 0; buf[i] == model[i]; i++)
				;
			fprintf(stderr, "discardgrid: the device differs from its model after %s, first at byte %zu (page %zu)\n",
				names[m], i, i / PG);
			return 1;
		}
	}
	printf("%d aligned discards and write-zeroes done, %d unaligned ones refused (EINVAL), device as modelled\n",
	       done, refused);
	return 0;
}
