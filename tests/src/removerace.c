// SPDX-License-Identifier: GPL-2.0
/*
 * removerace: hot_remove racing reset, disksize and opens of one device.
 *
 * Each cycle hot-adds a device of FAMILY. A resetter thread writes reset and
 * disksize to it over and over, an opener thread opens it, and if the device
 * has a size, writes a block and reads it back before closing it. Meanwhile
 * the main thread hot_removes the device, retrying while it is open (EBUSY).
 *
 * A device cannot be reset while it is open, so an opener that found a size
 * must be able to write and read its block until it closes the device. A
 * removal that slipped a reset under an opener breaks that: the opener's I/O
 * fails or reads back something else. That happened when a reset's end let
 * opens in while a removal waited to reset the device after it.
 *
 * usage: removerace FAMILY SECONDS
 * Prints "removerace: N cycles, O opens with I/O, B bad" and exits non-zero
 * if any opener's I/O went wrong or a removal failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "sysfs.h"

#define BLK 4096

static char family[64], dir[160], dev[160];
static atomic_int stop_dev;
static atomic_ulong bad, opens_io;

static void *resetter(void *arg)
{
	char reset[200], size[200];

	(void)arg;
	snprintf(reset, sizeof(reset), "%s/reset", dir);
	snprintf(size, sizeof(size), "%s/disksize", dir);
	while (!atomic_load(&stop_dev)) {
		sysfs_write(reset, "1");
		sysfs_write(size, "4M");
	}
	return NULL;
}

static void *opener(void *arg)
{
	uint8_t *buf = aligned_alloc(BLK, 2 * BLK), *back;
	unsigned long n = 0;

	(void)arg;
	if (!buf)
		return NULL;
	back = buf + BLK;
	while (!atomic_load(&stop_dev)) {
		uint64_t size = 0;
		int f = open(dev, O_RDWR | O_DIRECT);

		if (f < 0)
			continue;
		if (!ioctl(f, BLKGETSIZE64, &size) && size >= BLK) {
			memset(buf, (int)(++n & 0xff) | 1, BLK);
			if (pwrite(f, buf, BLK, 0) != BLK || pread(f, back, BLK, 0) != BLK ||
			    memcmp(buf, back, BLK)) {
				fprintf(stderr, "removerace: I/O on open %s (size %llu) failed: %s\n",
					dev, (unsigned long long)size, strerror(errno));
				atomic_fetch_add(&bad, 1);
			}
			atomic_fetch_add(&opens_io, 1);
		}
		close(f);
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	char ctl[160], path[200], id[32];
	unsigned long cycles = 0;
	time_t end;

	if (argc != 3) {
		fprintf(stderr, "usage: removerace FAMILY SECONDS\n");
		return 2;
	}
	snprintf(family, sizeof(family), "%s", argv[1]);
	snprintf(ctl, sizeof(ctl), "/sys/class/%s-control", family);
	end = time(NULL) + atoi(argv[2]);
	while (time(NULL) < end && !atomic_load(&bad)) {
		pthread_t r, o;
		ssize_t len;
		int f, e;

		snprintf(path, sizeof(path), "%s/hot_add", ctl);
		f = open(path, O_RDONLY);
		len = f < 0 ? -1 : read(f, id, sizeof(id) - 1);
		if (f >= 0)
			close(f);
		if (len <= 0) {
			perror("removerace: hot_add");
			return 2;
		}
		id[len] = 0;
		id[strcspn(id, "\n")] = 0;
		snprintf(dir, sizeof(dir), "/sys/block/%s%s", family, id);
		snprintf(dev, sizeof(dev), "/dev/%s%s", family, id);
		atomic_store(&stop_dev, 0);
		pthread_create(&r, NULL, resetter, NULL);
		pthread_create(&o, NULL, opener, NULL);
		usleep(1000 + rand() % 20000);
		snprintf(path, sizeof(path), "%s/hot_remove", ctl);
		while ((e = sysfs_write(path, id)) == EBUSY)
			usleep(100);
		atomic_store(&stop_dev, 1);
		pthread_join(r, NULL);
		pthread_join(o, NULL);
		if (e) {
			fprintf(stderr, "removerace: hot_remove %s: %s\n", id, strerror(e));
			atomic_fetch_add(&bad, 1);
		}
		cycles++;
	}
	printf("removerace: %lu cycles, %lu opens with I/O, %lu bad\n", cycles,
	       atomic_load(&opens_io), atomic_load(&bad));
	return atomic_load(&bad) ? 1 : 0;
}
