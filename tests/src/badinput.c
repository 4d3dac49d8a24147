// SPDX-License-Identifier: GPL-2.0
/*
 * badinput: the bad-input table of one zram-like device family, as a
 * transcript a script can compare with another driver's.
 *
 * Every writable attribute of FAMILY0 gets every input of the table, first
 * with the device uninitialised, then initialised (a backing device, a
 * secondary algorithm, 16 MiB, and 64 KiB of data written); then the control
 * class's hot_remove gets them, with FAMILY0 held open. For each write it
 * prints the phase, the attribute, the input (escaped), the errno name or
 * "ok", and the attribute's value after it where the attribute is readable
 * (mm_stat's limit field for mem_limit). After a write that changed the
 * phase's state (initialised or not, the size) the state is set up again,
 * data included. After each attribute's row the data must read back as
 * written: "DATA CHANGED" lines report where it did not.
 *
 * usage: badinput FAMILY BACKING_DEV
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA (64 * 1024)

struct input {
	const char *label;	/* as printed */
	char bytes[4200];
	size_t len;
};

/* The inputs, in the escapes of sysfs_rw: \n, \0, \xHH, \a{N}, \r{N}. */
static const char *const table[] = {
	"", "\\n", " ", "\\x09", " 1", "1 ", "1\\n", "1\\n\\n", "\\n1",
	"0", "1", "2", "+1", "-1", "+0", "-0", "--1", "+-1", "-+1",
	"65535", "65536", "2147483647", "2147483648", "4294967295", "4294967296",
	"18446744073709551615", "18446744073709551616", "99999999999999999999x", "1x",
	"4096", "1K", "1k", "4K\\n", "1M", "1m", "1G", "1T", "1P", "1E", "16E", "K", "M\\n",
	"true", "x", "0x10", "0x", "0X1f", "010", "08", "1.5",
	"lz4\\n\\n", "lzo", "lz4\\n", "zstd ", "all", "all\\n", "idle", "huge", "type=idle",
	"algo=lz4", "priority=1", "level=3", "a=b=c", "\"", "=", "=1",
	"\\xc3\\xa9", "\\xff\\xfe", "1\\0junk", "\\0", "\\a{4095}", "\\a{4096}", "\\r{64}",
};
#define N_INPUTS (sizeof(table) / sizeof(table[0]))

static const char *const attrs[] = {
	"disksize", "reset", "mem_limit", "mem_used_max", "idle", "max_comp_streams",
	"comp_algorithm", "compact", "backing_dev", "writeback", "writeback_limit",
	"writeback_limit_enable", "recomp_algorithm", "recompress", "algorithm_params",
};
static const char *const readable[] = {
	"disksize", "comp_algorithm", "max_comp_streams", "backing_dev", "writeback_limit",
	"writeback_limit_enable", "recomp_algorithm",
};

/*
 * Skipped: disksizes above 4 GiB (as memparse() reads them, overflow
 * wrapping), whose slot table the C zram allocates with a warning
 * (rzram_disksize_limits covers them on rzram).
 */
static int skipped(const char *attr, const struct input *in)
{
	unsigned long long v = 0, base = 10, d;
	const char *p = in->bytes;
	int wrapped = 0;

	if (strcmp(attr, "disksize"))
		return 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
		base = 16;
		p += 2;
	} else if (p[0] == '0') {
		base = 8;
	}
	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (isxdigit((unsigned char)*p))
			d = (tolower(*p) - 'a') + 10;
		else
			break;
		if (d >= base)
			break;
		if (v > (~0ULL - d) / base)
			wrapped = 1;
		v = v * base + d;
	}
	switch (tolower(*p)) {
	case 'e': case 'p': case 't':
		return 1;
	case 'g': v <<= 30; break;
	case 'm': v <<= 20; break;
	case 'k': v <<= 10; break;
	}
	return wrapped || v > (1ULL << 32);
}

static struct input inputs[N_INPUTS];
static char dir[128], dev[128], ctl[128];
static const char *backing;
static uint8_t *data;

static void decode(struct input *in, const char *s)
{
	size_t n = 0;
	const char *p;

	in->label = s;
	for (p = s; *p && n < sizeof(in->bytes); p++) {
		unsigned int x;

		if (p[0] == '\\' && p[1] == 'n') {
			in->bytes[n++] = '\n';
			p++;
		} else if (p[0] == '\\' && p[1] == '0') {
			in->bytes[n++] = 0;
			p++;
		} else if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &x) == 1) {
			in->bytes[n++] = (char)x;
			p += 3;
		} else if (p[0] == '\\' && (p[1] == 'a' || p[1] == 'r') && p[2] == '{') {
			char kind = p[1], *end;
			unsigned long k, len = strtoul(p + 3, &end, 10);
			uint32_t h = 2166136261u;

			for (k = 0; k < len && n < sizeof(in->bytes); k++) {
				h = (h ^ k) * 16777619u;
				in->bytes[n++] = kind == 'a' ? 'a' : (char)(h >> 13);
			}
			p = end;
		} else {
			in->bytes[n++] = *p;
		}
	}
	in->len = n;
}

static const char *err_name(int e)
{
	const char *s = e ? strerrorname_np(e) : "ok";

	return s ? s : "E?";
}

static int write_attr(const char *d, const char *attr, const char *buf, size_t len)
{
	char path[256];
	int f, e = 0;

	snprintf(path, sizeof(path), "%s/%s", d, attr);
	f = open(path, O_WRONLY);
	if (f < 0)
		return errno;
	if (write(f, buf, len) < 0)
		e = errno;
	close(f);
	return e;
}

static int set(const char *attr, const char *v)
{
	return write_attr(dir, attr, v, strlen(v));
}

/* The attribute's value, newlines as '|', or its errno's name. */
static void read_attr(const char *attr, char *out, size_t size)
{
	char path[256];
	ssize_t r;
	int f, i;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	f = open(path, O_RDONLY);
	r = f < 0 ? -1 : read(f, out, size - 1);
	if (r < 0) {
		snprintf(out, size, "%s", err_name(errno));
	} else {
		out[r] = 0;
		for (i = 0; i < r; i++)
			if (out[i] == '\n')
				out[i] = '|';
	}
	if (f >= 0)
		close(f);
}

static int data_ok(void)
{
	uint8_t *buf = aligned_alloc(4096, DATA);
	int f = open(dev, O_RDONLY | O_DIRECT), ok;

	ok = f >= 0 && buf && pread(f, buf, DATA, 0) == DATA && !memcmp(buf, data, DATA);
	if (f >= 0)
		close(f);
	free(buf);
	return ok;
}

static void die(const char *what)
{
	fprintf(stderr, "badinput: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void setup(int init)
{
	char s[64];
	int f;

	read_attr("initstate", s, sizeof(s));
	if (s[0] != '0' && set("reset", "1"))
		die("reset");
	set("comp_algorithm", "lzo-rle");
	set("mem_limit", "0");
	if (!init)
		return;
	if (set("backing_dev", backing))
		die("backing_dev");
	if (set("recomp_algorithm", "algo=zstd"))
		die("recomp_algorithm");
	if (set("disksize", "16M"))
		die("disksize");
	f = open(dev, O_WRONLY | O_DIRECT);
	if (f < 0 || pwrite(f, data, DATA, 0) != DATA)
		die("writing the data");
	close(f);
}

int main(int argc, char **argv)
{
	size_t a, i, k;
	int phase, held;

	if (argc != 3) {
		fprintf(stderr, "usage: badinput FAMILY BACKING_DEV\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "/sys/block/%s0", argv[1]);
	snprintf(dev, sizeof(dev), "/dev/%s0", argv[1]);
	snprintf(ctl, sizeof(ctl), "/sys/class/%s-control", argv[1]);
	backing = argv[2];
	for (i = 0; i < N_INPUTS; i++)
		decode(&inputs[i], table[i]);
	data = aligned_alloc(4096, DATA);
	if (!data)
		return 2;
	for (k = 0; k < DATA; k++)
		data[k] = (uint8_t)((k * 2654435761u) >> 11);

	for (phase = 0; phase < 2; phase++) {
		const char *ph = phase ? "init" : "uninit";

		for (a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
			const char *attr = attrs[a];
			char path[256];

			snprintf(path, sizeof(path), "%s/%s", dir, attr);
			if (access(path, F_OK)) {
				printf("%s %s: absent\n", ph, attr);
				continue;
			}
			setup(phase);
			for (i = 0; i < N_INPUTS; i++) {
				char val[512] = "", st[32], sz[32];
				int e;

				if (skipped(attr, &inputs[i]))
					continue;
				e = write_attr(dir, attr, inputs[i].bytes, inputs[i].len);
				for (k = 0; k < sizeof(readable) / sizeof(readable[0]); k++)
					if (!strcmp(attr, readable[k]))
						read_attr(attr, val, sizeof(val));
				if (!strcmp(attr, "mem_limit")) {
					unsigned long long v[4] = { 0 };

					read_attr("mm_stat", val, sizeof(val));
					sscanf(val, "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]);
					snprintf(val, sizeof(val), "mem_limit %llu", v[3]);
				}
				printf("%s %s '%s' => %s %s\n", ph, attr, inputs[i].label, err_name(e), val);
				read_attr("initstate", st, sizeof(st));
				read_attr("disksize", sz, sizeof(sz));
				if (phase == 0 && st[0] != '0')
					setup(0);
				else if (phase == 1 && (st[0] != '1' || strcmp(sz, "16777216|")))
					setup(1);
			}
			if (phase == 1 && !data_ok())
				printf("DATA CHANGED: %s %s\n", ph, attr);
		}
	}
	setup(0);
	/* hot_remove, with device 0 held open: an input naming it gets EBUSY. */
	held = open(dev, O_RDONLY);
	if (held < 0)
		die("opening device 0");
	for (i = 0; i < N_INPUTS; i++)
		printf("control hot_remove '%s' => %s\n", inputs[i].label,
		       err_name(write_attr(ctl, "hot_remove", inputs[i].bytes, inputs[i].len)));
	close(held);
	return 0;
}
