// SPDX-License-Identifier: GPL-2.0
/*
 * failnth: run one operation again and again, failing the 1st, 2nd, 3rd, ...
 * allocation (or other fault point) it reaches in the kernel, until it runs
 * without reaching the N-th: every allocation on its path fails once.
 *
 * It uses the per-task fault injection of /proc/thread-self/fail-nth (needs
 * FAULT_INJECTION, FAILSLAB and FAIL_PAGE_ALLOC, with their debugfs
 * ignore-gfp-wait set to N so that sleeping allocations fail too). Only the
 * one system call is under injection: files are opened before and checked
 * after. rzram is bio-based, so its write path runs in the writer's task.
 *
 * After each attempt it checks what the attempt left:
 *   w PATH VALUE       write VALUE to an attribute; with -r RESET, a
 *                      successful write is undone by writing 1 (or -u
 *                      UNDO) to RESET (disksize; a CPU's online), and the
 *                      next attempt starts again
 *   hot_add CTL        read CTL/hot_add; a device it made is hot_removed
 *                      again, and no device may be left by a failed one
 *   pw DEV BLOCK       O_DIRECT write of one 4 KiB block at BLOCK with data
 *                      unique to the attempt (-k c: compressible, the
 *                      default; r: incompressible; s: same-filled); the
 *                      block must then read back
 *                      as the new data after a success and as the data
 *                      before after a failure
 *   pr DEV BLOCK       O_DIRECT read of the block; a success must return the
 *                      data the device holds (read again without injection)
 *   rc DEV BLOCK SYSDIR VALUE
 *                      write a block as pw does and mark every page idle
 *                      (SYSDIR/idle), without injection; then write VALUE
 *                      to SYSDIR/recompress; the block must read back as
 *                      written, whatever the outcome
 *
 * Prints one line: "failnth OP: N fault points, outcomes: ok A, ENOMEM B, ..."
 * and "K bad" for attempts that left the wrong state. Exits 1 if any attempt
 * left the wrong state or failed with an errno outside -e LIST (comma
 * separated names; default ENOMEM,EIO,ENOSPC), or if the operation never
 * succeeded.
 *
 * With -A there is one attempt, during which every allocation of the task
 * fails (/proc/thread-self/make-it-fail; the caller sets failslab's and
 * fail_page_alloc's task-filter, probability 100 and times -1): a path with
 * fallbacks must still fail cleanly when the fallbacks fail too.
 *
 * usage: failnth [-A] [-m MAX] [-e ERRNOS] [-r RESET [-u UNDO]] [-k KIND] OP ARGS...
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

#define BLK 4096
#define MAX_ERRNO 160

static int nth_fd;
static unsigned long count[MAX_ERRNO], bad;
static char allowed[512] = "ENOMEM,EIO,ENOSPC";

/* -A: every allocation of the one attempt fails, through make-it-fail. */
static int all_mode, mif_fd = -1;

static void arm(int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%d", n);

	if (all_mode) {
		if (pwrite(mif_fd, n ? "1" : "0", 1, 0) != 1) {
			perror("failnth: make-it-fail");
			exit(2);
		}
		return;
	}
	if (pwrite(nth_fd, s, len, 0) != len) {
		perror("failnth: fail-nth");
		exit(2);
	}
}

/* 1 if the fault armed was injected, and disarms it either way. */
static int injected(void)
{
	char s[16] = "";
	int left;

	if (all_mode) {
		arm(0);
		return 1;
	}
	if (pread(nth_fd, s, sizeof(s) - 1, 0) < 0) {
		perror("failnth: fail-nth");
		exit(2);
	}
	left = atoi(s);
	if (left)
		arm(0);
	return left == 0;
}

static void outcome(int e)
{
	count[e < MAX_ERRNO ? e : MAX_ERRNO - 1]++;
	if (e) {
		char list[520], *tok, *save;

		snprintf(list, sizeof(list), ",%s,", allowed);
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!strcmp(tok, strerrorname_np(e)))
				return;
		fprintf(stderr, "failnth: an injected fault gave %s, not one of %s\n",
			strerrorname_np(e), allowed);
		bad++;
	}
}

static char kind = 'c';

/* -k c: compressible, r: incompressible (stored whole), s: same-filled. */
static void block_data(uint8_t *p, unsigned long blk, unsigned long attempt)
{
	uint64_t *w = (uint64_t *)(void *)p, x;
	size_t j;

	for (j = 0; j < BLK / 8; j++) {
		x = (blk << 32) ^ (attempt * 0x9e3779b97f4a7c15ULL) ^ (kind == 's' ? 0 : j);
		x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ULL;
		w[j] = (kind == 'c' && j % 4) ? 0x0101010101010101ULL * (attempt & 0xff) : x ^ (x >> 29);
	}
}

static int count_devices(const char *family)
{
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, family, strlen(family)))
			n++;
	if (d)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	const char *reset = NULL, *undo = "1", *op;
	int max = 4000, c, n, e;
	uint8_t *buf, *cur, *chk;

	while ((c = getopt(argc, argv, "m:e:r:u:k:A")) != -1) {
		switch (c) {
		case 'A': all_mode = 1; break;
		case 'k': kind = optarg[0]; break;
		case 'm': max = atoi(optarg); break;
		case 'e': snprintf(allowed, sizeof(allowed), "%s", optarg); break;
		case 'r': reset = optarg; break;
		case 'u': undo = optarg; break;
		default: goto usage;
		}
	}
	if (optind >= argc)
		goto usage;
	op = argv[optind];
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0) {
		perror("failnth: /proc/thread-self/fail-nth");
		return 2;
	}
	if (all_mode) {
		mif_fd = open("/proc/thread-self/make-it-fail", O_WRONLY);
		if (mif_fd < 0) {
			perror("failnth: /proc/thread-self/make-it-fail");
			return 2;
		}
	}
	if (posix_memalign((void **)&buf, BLK, 3 * BLK))
		return 2;
	cur = buf + BLK;
	chk = buf + 2 * BLK;

	for (n = 1; n <= max; n++) {
		int inj;

		if (!strcmp(op, "w") && argc - optind == 3) {
			const char *v = argv[optind + 2];
			int f = open(argv[optind + 1], O_WRONLY);

			if (f < 0)
				goto fail_open;
			arm(n);
			e = write(f, v, strlen(v)) < 0 ? errno : 0;
			inj = injected();
			close(f);
			if (!e && reset && inj && sysfs_write(reset, undo)) {
				fprintf(stderr, "failnth: undoing attempt %d with %s failed\n", n, reset);
				bad++;
			}
		} else if (!strcmp(op, "hot_add") && argc - optind == 2) {
			char path[256], family[64], id[32] = "";
			const char *ctl = argv[optind + 1], *base = strrchr(ctl, '/');
			int f, before;
			ssize_t r;

			snprintf(family, sizeof(family), "%.*s",
				 (int)(strstr(base ? base + 1 : ctl, "-control") -
				       (base ? base + 1 : ctl)), base ? base + 1 : ctl);
			before = count_devices(family);
			snprintf(path, sizeof(path), "%s/hot_add", ctl);
			f = open(path, O_RDONLY);
			if (f < 0)
				goto fail_open;
			arm(n);
			r = read(f, id, sizeof(id) - 1);
			e = r < 0 ? errno : 0;
			inj = injected();
			close(f);
			if (!e) {
				snprintf(path, sizeof(path), "%s/hot_remove", ctl);
				if (sysfs_write(path, id)) {
					fprintf(stderr, "failnth: hot_remove %s after attempt %d failed\n", id, n);
					bad++;
				}
			}
			if (count_devices(family) != before) {
				fprintf(stderr, "failnth: %d %s devices before attempt %d, %d after\n",
					before, family, n, count_devices(family));
				bad++;
			}
		} else if ((!strcmp(op, "pw") || !strcmp(op, "pr")) && argc - optind == 3) {
			unsigned long blk = strtoul(argv[optind + 2], NULL, 0);
			int f = open(argv[optind + 1], O_RDWR | O_DIRECT);
			off_t off = (off_t)blk * BLK;

			if (f < 0)
				goto fail_open;
			/* What the block holds now. */
			if (pread(f, cur, BLK, off) != BLK) {
				perror("failnth: read before the attempt");
				return 2;
			}
			if (op[1] == 'w') {
				block_data(buf, blk, n);
				arm(n);
				e = pwrite(f, buf, BLK, off) == BLK ? 0 : errno ? errno : EIO;
			} else {
				memset(buf, 0x5a, BLK);
				arm(n);
				e = pread(f, buf, BLK, off) == BLK ? 0 : errno ? errno : EIO;
			}
			inj = injected();
			if (pread(f, chk, BLK, off) != BLK) {
				fprintf(stderr, "failnth: read after attempt %d: %s\n", n, strerror(errno));
				bad++;
			} else if (op[1] == 'w' && memcmp(chk, e ? cur : buf, BLK)) {
				fprintf(stderr, "failnth: after attempt %d (%s) the block holds %s\n", n,
					e ? strerrorname_np(e) : "ok",
					memcmp(chk, cur, BLK) ? (memcmp(chk, buf, BLK) ? "neither the old nor the new data" : "the new data") : "the old data");
				bad++;
			} else if (op[1] == 'r' && (memcmp(chk, cur, BLK) || (!e && memcmp(buf, cur, BLK)))) {
				fprintf(stderr, "failnth: read attempt %d (%s) returned or left wrong data\n",
					n, e ? strerrorname_np(e) : "ok");
				bad++;
			}
			close(f);
		} else if (!strcmp(op, "rc") && argc - optind == 5) {
			unsigned long blk = strtoul(argv[optind + 2], NULL, 0);
			const char *v = argv[optind + 4];
			int f = open(argv[optind + 1], O_RDWR | O_DIRECT);
			char path[256];
			off_t off = (off_t)blk * BLK;
			int a;

			snprintf(path, sizeof(path), "%s/recompress", argv[optind + 3]);
			a = open(path, O_WRONLY);
			if (f < 0 || a < 0)
				goto fail_open;
			block_data(buf, blk, n);
			snprintf(path, sizeof(path), "%s/idle", argv[optind + 3]);
			if (pwrite(f, buf, BLK, off) != BLK || sysfs_write(path, "all")) {
				perror("failnth: write before the attempt");
				return 2;
			}
			arm(n);
			e = write(a, v, strlen(v)) < 0 ? errno : 0;
			inj = injected();
			close(a);
			if (pread(f, chk, BLK, off) != BLK) {
				fprintf(stderr, "failnth: read after attempt %d: %s\n", n, strerror(errno));
				bad++;
			} else if (memcmp(chk, buf, BLK)) {
				fprintf(stderr, "failnth: after attempt %d (%s) the block changed\n", n,
					e ? strerrorname_np(e) : "ok");
				bad++;
			}
			close(f);
		} else {
			goto usage;
		}
		if (all_mode) {
			outcome(e);
			printf("failnth %s, every allocation failing: %s; %lu bad\n", op,
			       e ? strerrorname_np(e) : "ok", bad);
			return bad ? 1 : 0;
		}
		if (inj)
			outcome(e);
		else if (e) {
			fprintf(stderr, "failnth: %s failed with %s without a fault\n", op, strerrorname_np(e));
			bad++;
			break;
		} else {
			count[0]++;
			break;
		}
	}
	printf("failnth %s: %d fault points, outcomes:", op, n - 1);
	for (e = 0; e < MAX_ERRNO; e++)
		if (count[e])
			printf(" %s %lu", e ? strerrorname_np(e) : "ok", count[e]);
	printf("; %lu bad\n", bad);
	if (n > max) {
		fprintf(stderr, "failnth: still reaching fault point %d: raise -m\n", max);
		bad++;
	}
	return bad ? 1 : 0;
fail_open:
	perror("failnth: open");
	return 2;
usage:
	fprintf(stderr, "usage: failnth [-A] [-m MAX] [-e ERRNOS] [-r RESET [-u UNDO]] [-k c|r|s] w PATH VALUE | hot_add CTL | pw DEV BLOCK | pr DEV BLOCK | rc DEV BLOCK SYSDIR VALUE\n");
	return 2;
}
