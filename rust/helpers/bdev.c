// SPDX-License-Identifier: GPL-2.0

#include <linux/blkdev.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/workqueue.h>

struct file *rust_helper_get_file(struct file *f)
{
	return get_file(f);
}

loff_t rust_helper_bdev_nr_bytes(struct block_device *bdev)
{
	return bdev_nr_bytes(bdev);
}

/*
 * destroy_work_on_stack() is a function with CONFIG_DEBUG_OBJECTS_WORK and an
 * empty inline without it: a name of its own keeps the binding unambiguous.
 */
void rust_helper_destroy_onstack_work(struct work_struct *work)
{
	destroy_work_on_stack(work);
}

/* might_sleep() is a macro. */
void rust_helper_might_sleep_here(void)
{
	might_sleep();
}
