// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for zsmalloc.
 *
 * They drive a private pool through the public API only: allocation in every
 * size class with the contents checked across map/unmap, the class index of
 * a handle, compaction after fragmentation, frees from several kthreads while
 * compaction runs, and the pool's page count back at zero at the end.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/zsmalloc.h>

struct zs_obj {
	unsigned long handle;
	unsigned int size;
	unsigned int seed;
};

static u8 zs_pattern(unsigned int seed, unsigned int i)
{
	return (u8)(seed * 31 + i * 7 + (i >> 8));
}

static void zs_fill(struct zs_pool *pool, struct zs_obj *o)
{
	u8 *p = zs_map_object(pool, o->handle, ZS_MM_WO);
	unsigned int i;

	for (i = 0; i < o->size; i++)
		p[i] = zs_pattern(o->seed, i);
	zs_unmap_object(pool, o->handle);
}

/* Returns the number of bytes of @o that differ from its pattern. */
static unsigned int zs_check(struct zs_pool *pool, struct zs_obj *o)
{
	const u8 *p = zs_map_object(pool, o->handle, ZS_MM_RO);
	unsigned int i, bad = 0;

	for (i = 0; i < o->size; i++)
		bad += p[i] != zs_pattern(o->seed, i);
	zs_unmap_object(pool, o->handle);
	return bad;
}

static int zs_alloc_obj(struct zs_pool *pool, struct zs_obj *o,
			unsigned int size, unsigned int seed)
{
	unsigned long h = zs_malloc(pool, size, GFP_KERNEL);

	if (IS_ERR_VALUE(h))
		return PTR_ERR((void *)h);
	o->handle = h;
	o->size = size;
	o->seed = seed;
	zs_fill(pool, o);
	return 0;
}

/*
 * Pages still counted after every object is freed. A zspage whose pages
 * could not be locked without sleeping is freed by the pool's async worker,
 * so give that a moment.
 */
static unsigned long zs_settled_pages(struct zs_pool *pool)
{
	int i;

	for (i = 0; i < 50 && zs_get_total_pages(pool); i++)
		msleep(20);
	return zs_get_total_pages(pool);
}

static int zs_test_init(struct kunit *test)
{
	struct zs_pool *pool = zs_create_pool("zs_kunit");

	KUNIT_ASSERT_NOT_NULL(test, pool);
	test->priv = pool;
	return 0;
}

static void zs_test_exit(struct kunit *test)
{
	zs_destroy_pool(test->priv);
}

/* Every size from the smallest to PAGE_SIZE, so every class, huge included. */
static void zs_test_every_class(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	unsigned int size, n = 0, nr = PAGE_SIZE / 8, i;
	size_t huge = zs_huge_class_size(pool);
	struct zs_obj *objs;
	bool saw_huge = false;

	objs = kunit_kcalloc(test, nr, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);

	for (size = 8; size <= PAGE_SIZE; size += 8, n++) {
		KUNIT_ASSERT_EQ(test, zs_alloc_obj(pool, &objs[n], size, n), 0);
		saw_huge |= size >= huge;
	}
	KUNIT_EXPECT_TRUE(test, saw_huge);
	KUNIT_EXPECT_GT(test, zs_get_total_pages(pool), 0UL);

	/* Every object still holds its own bytes once all are allocated. */
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, zs_check(pool, &objs[i]), 0U,
				    "object of %u bytes corrupted", objs[i].size);
	for (i = 0; i < n; i++)
		zs_free(pool, objs[i].handle);
	KUNIT_EXPECT_EQ(test, zs_settled_pages(pool), 0UL);
}

static void zs_test_bad_sizes(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	unsigned long h;

	h = zs_malloc(pool, 0, GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, PTR_ERR((void *)h), -EINVAL);
	h = zs_malloc(pool, PAGE_SIZE + 1, GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, PTR_ERR((void *)h), -ENOSPC);
	/* zs_free() ignores NULL and error handles. */
	zs_free(pool, 0);
	zs_free(pool, (unsigned long)ERR_PTR(-ENOMEM));
	KUNIT_EXPECT_EQ(test, zs_get_total_pages(pool), 0UL);
}

/* The index a handle carries is the one its size looks up. */
static void zs_test_class_index(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	unsigned int size, prev = 0;
	struct zs_obj o;

	for (size = 1; size <= PAGE_SIZE; size += size < 64 ? 1 : 13) {
		unsigned int want = zs_lookup_class_index(pool, size);

		KUNIT_ASSERT_EQ(test, zs_alloc_obj(pool, &o, size, size), 0);
		KUNIT_EXPECT_EQ_MSG(test, zs_handle_class_index(pool, o.handle), want,
				    "size %u", size);
		/* Bigger objects never land in a smaller class. */
		KUNIT_EXPECT_GE(test, want, prev);
		prev = want;
		zs_free(pool, o.handle);
	}
	KUNIT_EXPECT_EQ(test, zs_settled_pages(pool), 0UL);
}

/* Free three objects in four across many zspages, then compact. */
static void zs_test_compaction(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	const unsigned int nr = 4096;
	unsigned long before, freed, after;
	struct zs_pool_stats stats = {};
	struct zs_obj *objs;
	unsigned int i;

	objs = kunit_kcalloc(test, nr, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	for (i = 0; i < nr; i++)
		KUNIT_ASSERT_EQ(test, zs_alloc_obj(pool, &objs[i], 208 + (i & 1) * 400, i), 0);
	for (i = 0; i < nr; i++) {
		if (i % 4) {
			zs_free(pool, objs[i].handle);
			objs[i].handle = 0;
		}
	}

	before = zs_get_total_pages(pool);
	freed = zs_compact(pool);
	after = zs_get_total_pages(pool);
	zs_pool_stats(pool, &stats);
	KUNIT_EXPECT_GT(test, freed, 0UL);
	KUNIT_EXPECT_LT(test, after, before);
	KUNIT_EXPECT_GE(test, (unsigned long)stats.pages_compacted, freed);

	for (i = 0; i < nr; i += 4) {
		KUNIT_EXPECT_EQ_MSG(test, zs_check(pool, &objs[i]), 0U,
				    "object %u corrupted by compaction", i);
		zs_free(pool, objs[i].handle);
	}
	KUNIT_EXPECT_EQ(test, zs_settled_pages(pool), 0UL);
}

struct zs_freer {
	struct zs_pool *pool;
	struct zs_obj *objs;
	unsigned int first, nr, stride, bad;
	struct completion done;
};

static int zs_freer_fn(void *data)
{
	struct zs_freer *f = data;
	unsigned int i;

	for (i = f->first; i < f->nr; i += f->stride) {
		f->bad += zs_check(f->pool, &f->objs[i]) != 0;
		zs_free(f->pool, f->objs[i].handle);
		if (!(i % 64))
			cond_resched();
	}
	complete(&f->done);
	return 0;
}

/*
 * Several kthreads free interleaved objects (each checks its objects first)
 * while this thread compacts the pool over and over.
 */
static void zs_test_concurrent_free(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	const unsigned int nr = 8192, nthreads = 3;
	struct zs_freer *f;
	struct zs_obj *objs;
	unsigned int i, t, rounds = 0;
	bool all_done;

	objs = kunit_kcalloc(test, nr, sizeof(*objs), GFP_KERNEL);
	f = kunit_kcalloc(test, nthreads, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, f);
	for (i = 0; i < nr; i++)
		KUNIT_ASSERT_EQ(test, zs_alloc_obj(pool, &objs[i], 32 + (i * 37) % 3000, i), 0);

	for (t = 0; t < nthreads; t++) {
		struct task_struct *task;

		f[t] = (struct zs_freer){ .pool = pool, .objs = objs, .first = t,
					  .nr = nr, .stride = nthreads };
		init_completion(&f[t].done);
		task = kthread_run(zs_freer_fn, &f[t], "zs_kunit_free/%u", t);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	}
	do {
		zs_compact(pool);
		rounds++;
		all_done = true;
		for (t = 0; t < nthreads; t++)
			all_done &= completion_done(&f[t].done);
		cond_resched();
	} while (!all_done);

	for (t = 0; t < nthreads; t++) {
		wait_for_completion(&f[t].done);
		KUNIT_EXPECT_EQ_MSG(test, f[t].bad, 0U, "thread %u saw corrupted objects", t);
	}
	kunit_info(test, "%u compaction rounds ran during the frees\n", rounds);
	KUNIT_EXPECT_EQ(test, zs_settled_pages(pool), 0UL);
}

static struct kunit_case zsmalloc_test_cases[] = {
	KUNIT_CASE(zs_test_every_class),
	KUNIT_CASE(zs_test_bad_sizes),
	KUNIT_CASE(zs_test_class_index),
	KUNIT_CASE(zs_test_compaction),
	KUNIT_CASE_SLOW(zs_test_concurrent_free),
	{}
};

static struct kunit_suite zsmalloc_test_suite = {
	.name = "zsmalloc",
	.init = zs_test_init,
	.exit = zs_test_exit,
	.test_cases = zsmalloc_test_cases,
};

kunit_test_suite(zsmalloc_test_suite);

MODULE_DESCRIPTION("KUnit tests for zsmalloc");
MODULE_LICENSE("GPL");
