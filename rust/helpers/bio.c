// SPDX-License-Identifier: GPL-2.0

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/highmem.h>

struct gendisk *rust_helper_dev_to_disk(struct device *dev)
{
	return dev_to_disk(dev);
}

unsigned int rust_helper_disk_openers(struct gendisk *disk)
{
	return disk_openers(disk);
}

void rust_helper_memcpy_from_page(char *to, struct page *page, size_t offset,
				  size_t len)
{
	memcpy_from_page(to, page, offset, len);
}

void rust_helper_memcpy_to_page(struct page *page, size_t offset,
				const char *from, size_t len)
{
	memcpy_to_page(page, offset, from, len);
}

void rust_helper_init_completion(struct completion *x)
{
	init_completion(x);
}

/*
 * flush_dcache_page() under a name of its own: it is a function on some
 * architectures (arm64) and a static inline on others (x86), and bindgen
 * would see one name twice where it is both. kernel::block calls the
 * function itself where it is one it knows of (arm64).
 */
void rust_helper_bio_flush_dcache_page(struct page *page)
{
	flush_dcache_page(page);
}
