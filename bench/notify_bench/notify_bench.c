// SPDX-License-Identifier: GPL-2.0
/*
 * notify_bench: the cost of one swap_slot_free_notify() call, measured
 * directly (make bench only; never built into a product kernel).
 *
 * Writing "PATH N [STRIDE]" to /sys/kernel/debug/notify_bench/run opens the
 * block device PATH, writes pages 0..N-1 through the device's own write path
 * (one bio per page, data about half compressible and different on every
 * page), and then, under a spinlock as swap holds si->lock, calls the
 * device's swap_slot_free_notify() for pages 0, STRIDE, 2 * STRIDE, ... below
 * N (every page with the default STRIDE of 1, as an exiting process frees its
 * swap; STRIDE 32 or more makes every notify the first of its neighbourhood),
 * and after that an empty callback through the same kind of indirect call,
 * as many times. Both loops are timed with ktime_get_ns(), the guest's
 * counter. Then it sleeps twice for NB_DRAIN_MS and takes the time the CPUs
 * were not idle in each sleep: the first holds the device's drain of what
 * the notifies queued (handed to its worker once the spinlock is dropped,
 * or by the idle work 10 ms after the first element), the second the same
 * window without it. Reading the file returns
 *
 *   notify dev=NAME n=CALLS dev_ns=T null_ns=T0 stride=STRIDE
 *          drain_ns=D base_ns=D0
 *
 * (T - T0) / CALLS is the cost of one notify, (D - D0) / CALLS that of the
 * drain behind it (-1 for both when idle time is not tracked: no NO_HZ).
 * Under QEMU with -icount shift=0 one guest instruction takes one virtual
 * nanosecond, so the same figures are exact numbers of guest instructions
 * per notify; the drain's are to the microsecond of idle accounting (four
 * readings: up to 4000 instructions over the whole run) and include
 * whatever else the kernel did in the window, so the report takes the
 * smallest over the rounds.
 */
#include <linux/bio.h>
#include <linux/bits.h>
#include <linux/blkdev.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/tick.h>
#include <linux/timekeeping.h>

#define NB_MAX_PAGES	BIT(20)
/* Each drain window; the deferred free's idle work runs 10 ms in. */
#define NB_DRAIN_MS	200

static DEFINE_MUTEX(nb_mutex);
static DEFINE_SPINLOCK(nb_lock);
static char nb_result[200];
static struct dentry *nb_dir;

static noinline void nb_null_notify(struct block_device *bdev,
				    unsigned long slot)
{
	barrier();
}

/* Read with READ_ONCE(), so that the compiler keeps the indirect call. */
static void (*nb_null)(struct block_device *, unsigned long) = nb_null_notify;

static int nb_write_pages(struct block_device *bdev, unsigned long n)
{
	struct page *page = alloc_page(GFP_KERNEL);
	unsigned long i;
	u64 *w;
	int err = 0;

	if (!page)
		return -ENOMEM;
	w = page_address(page);
	for (i = 0; i < n && !err; i++) {
		struct bio_vec bv;
		struct bio bio;
		unsigned int j;

		/* Half of each page random, half one repeated word. */
		for (j = 0; j < PAGE_SIZE / sizeof(u64); j++)
			w[j] = (j & 1) ? get_random_u64() : 0x5a5a5a5a5a5a5a5aULL;
		bio_init(&bio, bdev, &bv, 1, REQ_OP_WRITE);
		bio.bi_iter.bi_sector = i << (PAGE_SHIFT - SECTOR_SHIFT);
		__bio_add_page(&bio, page, PAGE_SIZE, 0);
		err = submit_bio_wait(&bio);
		bio_uninit(&bio);
		cond_resched();
	}
	__free_page(page);
	return err;
}

/* The wall time and the CPUs' idle time at a point; ok is false without NO_HZ. */
struct nb_mark {
	u64 t, idle;
	bool ok;
};

/* Callable in atomic context (the notify loop's spinlock). */
static void nb_mark(struct nb_mark *m)
{
	u64 us;
	int cpu;

	m->idle = 0;
	m->ok = true;
	for_each_online_cpu(cpu) {
		us = get_cpu_idle_time_us(cpu, NULL);
		if (us == (u64)-1)
			m->ok = false;
		m->idle += us;
	}
	m->t = ktime_get_ns();
}

/*
 * How long the online CPUs were busy since @m, in ns, or -1 if idle time is
 * not tracked. No CPU comes or goes during a run.
 */
static s64 nb_busy_since(const struct nb_mark *m)
{
	struct nb_mark now;

	nb_mark(&now);
	if (!m->ok || !now.ok)
		return -1;
	return (s64)((now.t - m->t) * num_online_cpus()) -
	       (s64)(now.idle - m->idle) * NSEC_PER_USEC;
}

static int nb_run(const char *path, unsigned long n, unsigned long stride)
{
	void (*notify)(struct block_device *bdev, unsigned long slot);
	void (*null)(struct block_device *bdev, unsigned long slot);
	struct block_device *bdev;
	struct file *file;
	struct nb_mark mark;
	u64 t0, t1, t2;
	s64 drain, base;
	unsigned long i, calls;
	int err;

	file = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE,
				      NULL, NULL);
	if (IS_ERR(file))
		return PTR_ERR(file);
	bdev = file_bdev(file);
	notify = bdev->bd_disk->fops->swap_slot_free_notify;
	err = -EOPNOTSUPP;
	if (!notify)
		goto out;
	err = -ENOSPC;
	if (n > bdev_nr_bytes(bdev) >> PAGE_SHIFT)
		goto out;
	err = nb_write_pages(bdev, n);
	if (err)
		goto out;

	null = READ_ONCE(nb_null);
	calls = DIV_ROUND_UP(n, stride);
	spin_lock(&nb_lock);
	t0 = ktime_get_ns();
	for (i = 0; i < n; i += stride)
		notify(bdev, i);
	t1 = ktime_get_ns();
	for (i = 0; i < n; i += stride)
		null(bdev, i);
	t2 = ktime_get_ns();
	/*
	 * The drain's window opens before the lock is dropped: the worker
	 * that the notifies woke may run as soon as preemption is enabled.
	 */
	nb_mark(&mark);
	spin_unlock(&nb_lock);
	msleep(NB_DRAIN_MS);
	drain = nb_busy_since(&mark);
	nb_mark(&mark);
	msleep(NB_DRAIN_MS);
	base = nb_busy_since(&mark);

	snprintf(nb_result, sizeof(nb_result),
		 "notify dev=%pg n=%lu dev_ns=%llu null_ns=%llu stride=%lu drain_ns=%lld base_ns=%lld\n",
		 bdev, calls, t1 - t0, t2 - t1, stride, drain, base);
out:
	fput(file);
	return err;
}

static ssize_t nb_run_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char *buf, *path, *count, *stride_str;
	unsigned long n, stride = 1;
	int err;

	buf = memdup_user_nul(ubuf, min_t(size_t, len, PATH_MAX + 32));
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	count = strim(buf);
	path = strsep(&count, " ");
	err = -EINVAL;
	if (!count)
		goto out;
	count = skip_spaces(count);
	stride_str = strsep(&count, " ");
	if (kstrtoul(stride_str, 0, &n) || !n || n > NB_MAX_PAGES)
		goto out;
	if (count && (kstrtoul(skip_spaces(count), 0, &stride) || !stride ||
		      stride > n))
		goto out;
	mutex_lock(&nb_mutex);
	nb_result[0] = '\0';
	err = nb_run(path, n, stride);
	mutex_unlock(&nb_mutex);
out:
	kfree(buf);
	return err ? err : len;
}

static ssize_t nb_run_read(struct file *file, char __user *ubuf, size_t len,
			   loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&nb_mutex);
	ret = simple_read_from_buffer(ubuf, len, ppos, nb_result,
				      strlen(nb_result));
	mutex_unlock(&nb_mutex);
	return ret;
}

static const struct file_operations nb_run_fops = {
	.owner = THIS_MODULE,
	.read = nb_run_read,
	.write = nb_run_write,
	.llseek = default_llseek,
};

static int __init nb_init(void)
{
	nb_dir = debugfs_create_dir("notify_bench", NULL);
	debugfs_create_file("run", 0600, nb_dir, NULL, &nb_run_fops);
	return 0;
}

static void __exit nb_exit(void)
{
	debugfs_remove_recursive(nb_dir);
}

module_init(nb_init);
module_exit(nb_exit);
MODULE_DESCRIPTION("Time a block device's swap_slot_free_notify() (benchmark only)");
MODULE_LICENSE("GPL");
