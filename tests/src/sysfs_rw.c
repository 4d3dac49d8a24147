// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs_rw: one sysfs read or write, reporting the errno by name, so that a
 * shell test can compare what two drivers return for the same input.
 *
 *   sysfs_rw w PATH VALUE   write VALUE (no newline added; "\n" in VALUE is
 *                           a newline), print "ok" or the errno name
 *   sysfs_rw r PATH         print the contents, or the errno name
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
	default: return "E?";
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
		if (p[0] == '\\' && p[1] == 'n') {
			val[n++] = '\n';
			p++;
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
