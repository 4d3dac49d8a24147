// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs_rw: one sysfs read or write, reporting the errno by name, so that a
 * shell test can compare what two drivers return for the same input.
 *
 *   sysfs_rw w PATH VALUE   write VALUE (no newline added), print "ok" or the
 *                           errno name. Escapes in VALUE: \n newline, \0 NUL,
 *                           \\ backslash, \xHH a byte, \a{N} N letters a,
 *                           \r{N} N bytes of a fixed pseudo-random sequence
 *   sysfs_rw r PATH         print the contents, or the errno name
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *name(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ERANGE: return "ERANGE";
	case E2BIG: return "E2BIG";
	case ENODEV: return "ENODEV";
	case ENOMEM: return "ENOMEM";
	case EIO: return "EIO";
	case ENOSPC: return "ENOSPC";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ENOTBLK: return "ENOTBLK";
	case EAGAIN: return "EAGAIN";
	default: return strerrorname_np(e) ? strerrorname_np(e) : "E?";
	}
}

int main(int argc, char **argv)
{
	char buf[8192], val[8192];
	size_t n = 0;
	ssize_t r;
	int fd;

	if (argc < 3 || (argv[1][0] == 'w' && argc < 4)) {
		fprintf(stderr, "usage: sysfs_rw r PATH | sysfs_rw w PATH VALUE\n");
		return 2;
	}
	fd = open(argv[2], argv[1][0] == 'w' ? O_WRONLY : O_RDONLY);
	if (fd < 0) {
		printf("%s\n", name(errno));
		return 1;
	}
	if (argv[1][0] == 'r') {
		r = read(fd, buf, sizeof(buf) - 1);
		if (r < 0) {
			printf("%s\n", name(errno));
			return 1;
		}
		fwrite(buf, 1, r, stdout);
		return 0;
	}
	for (const char *p = argv[3]; *p && n < sizeof(val) - 1; p++) {
		unsigned int x;

		if (p[0] == '\\' && p[1] == 'n') {
			val[n++] = '\n';
			p++;
		} else if (p[0] == '\\' && p[1] == '0') {
			val[n++] = '\0';
			p++;
		} else if (p[0] == '\\' && p[1] == '\\') {
			val[n++] = '\\';
			p++;
		} else if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &x) == 1 &&
			   p[2] && p[3]) {
			val[n++] = (char)x;
			p += 3;
		} else if (p[0] == '\\' && p[1] == 'r' && p[2] == '{') {
			/* \r{N}: N bytes of a fixed pseudo-random sequence. */
			unsigned long k, len = strtoul(p + 3, (char **)&p, 10);
			uint32_t h = 2166136261u;

			for (k = 0; k < len && n < sizeof(val) - 1; k++) {
				h = (h ^ k) * 16777619u;
				val[n++] = (char)(h >> 13);
			}
		} else if (p[0] == '\\' && p[1] == 'a' && p[2] == '{') {
			/* \a{N}: N times the letter a. */
			unsigned long k, len = strtoul(p + 3, (char **)&p, 10);

			for (k = 0; k < len && n < sizeof(val) - 1; k++)
				val[n++] = 'a';
		} else {
			val[n++] = *p;
		}
	}
	r = write(fd, val, n);
	if (r < 0) {
		printf("%s\n", name(errno));
		return 1;
	}
	printf("ok\n");
	return 0;
}
