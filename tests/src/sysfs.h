/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sysfs.h: one attribute write for the test programs, its outcome as an
 * errno (0 for success), so that a test can compare it with what zram gives.
 */
#ifndef RZRAM_TESTS_SYSFS_H
#define RZRAM_TESTS_SYSFS_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static inline int sysfs_write(const char *path, const char *v)
{
	int f = open(path, O_WRONLY), e = 0;

	if (f < 0)
		return errno;
	if (write(f, v, strlen(v)) < 0)
		e = errno;
	close(f);
	return e;
}

#endif
