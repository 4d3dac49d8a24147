// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for zsmalloc.
 *
 * They drive a private pool through the public API only: allocation in every
 * size class with the contents checked across map/unmap, the class index of
 * a handle, compaction after fragmentation, frees from several kthreads while
 * compaction runs, bulk free, the deferred-free framework (push and drain,
 * two users of one pool with elements of different sizes, the synchronous
 * fallback, flush ordering, destroy with pending elements),
 * and the pool's page count back at zero at the end.
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
	KUNIT_EXPECT_GE(test, (unsigned long)atomic_long_read(&stats.pages_compacted), freed);

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

/* zs_free_bulk() of mixed classes, with NULL and error handles mixed in. */
static void zs_test_free_bulk(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	const unsigned int nr = 3000;
	unsigned long *handles;
	struct zs_obj o;
	unsigned int i;

	handles = kunit_kcalloc(test, nr, sizeof(*handles), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, handles);
	for (i = 0; i < nr; i++) {
		if (i % 100 == 7) {
			handles[i] = i % 200 == 7 ? 0 : (unsigned long)ERR_PTR(-ENOMEM);
			continue;
		}
		KUNIT_ASSERT_EQ(test, zs_alloc_obj(pool, &o, 40 + (i * 53) % 4000, i), 0);
		handles[i] = o.handle;
	}
	KUNIT_EXPECT_GT(test, zs_get_total_pages(pool), 0UL);
	zs_free_bulk(pool, handles, nr);
	KUNIT_EXPECT_EQ(test, zs_settled_pages(pool), 0UL);
}

/* A deferred-free user whose elements are zsmalloc handles. */
struct zs_df_user {
	struct zs_pool *pool;
	atomic_t drained;
	atomic_t calls;
	struct completion *gate;	/* if set, drains wait for it */
	u8 *seen;			/* for index elements: times each was drained */
	unsigned int stride;		/* u32 words per index element, 0 for 1 */
	atomic_t max_nr;		/* the most elements one drain call got */
};

static void zs_df_record(struct zs_df_user *u, unsigned int nr)
{
	int old = atomic_read(&u->max_nr);

	while (old < (int)nr && !atomic_try_cmpxchg(&u->max_nr, &old, nr))
		;
	atomic_add(nr, &u->drained);
	atomic_inc(&u->calls);
}

static void zs_df_drain_handles(void *priv, const void *elems, unsigned int nr)
{
	struct zs_df_user *u = priv;
	unsigned long batch[64];
	unsigned int i, n;

	if (u->gate)
		wait_for_completion(u->gate);
	for (i = 0; i < nr; i += n) {
		n = min(nr - i, (unsigned int)ARRAY_SIZE(batch));
		memcpy(batch, (const unsigned long *)elems + i, n * sizeof(*batch));
		zs_free_bulk(u->pool, batch, n);
	}
	zs_df_record(u, nr);
}

static void zs_df_drain_index(void *priv, const void *elems, unsigned int nr)
{
	struct zs_df_user *u = priv;
	const u32 *idx = elems;
	unsigned int i;

	if (u->gate)
		wait_for_completion(u->gate);
	for (i = 0; i < nr; i++)
		u->seen[idx[i * max(u->stride, 1U)]]++;
	zs_df_record(u, nr);
}

static const struct zs_deferred_ops zs_df_handle_ops = { .drain = zs_df_drain_handles };
static const struct zs_deferred_ops zs_df_index_ops = { .drain = zs_df_drain_index };

/*
 * Allocate @nr objects, of sizes @min to @min + @span - 1, and push their
 * handles to @df, freeing at once those it refuses. Returns how many it
 * refused.
 */
static unsigned int zs_df_push_new(struct kunit *test, struct zs_pool *pool,
				   struct zs_deferred *df, unsigned int nr,
				   unsigned int min, unsigned int span)
{
	unsigned int i, refused = 0;
	struct zs_obj o;

	for (i = 0; i < nr; i++) {
		KUNIT_ASSERT_EQ(test, zs_alloc_obj(pool, &o, min + (i * 29) % span, i), 0);
		if (!zs_deferred_push(df, &o.handle)) {
			zs_free(pool, o.handle);
			refused++;
		}
	}
	return refused;
}

static void zs_test_deferred_args(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	static const struct zs_deferred_ops no_drain = {};

	KUNIT_EXPECT_EQ(test, PTR_ERR(zs_deferred_create(pool, NULL, NULL, 4, 0, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(zs_deferred_create(pool, &no_drain, NULL, 4, 0, 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(zs_deferred_create(pool, &zs_df_index_ops, NULL, 0, 0, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(zs_deferred_create(pool, &zs_df_index_ops, NULL,
							 PAGE_SIZE + 1, 0, 0)), -EINVAL);
}

/* Push handles, flush: every object freed once, through the drain. */
static void zs_test_deferred_drain(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	struct zs_df_user u = { .pool = pool };
	struct zs_deferred_stats st;
	const unsigned int nr = 5000;
	struct zs_deferred *df;
	unsigned int sync;

	df = zs_deferred_create(pool, &zs_df_handle_ops, &u, sizeof(unsigned long), 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(df));
	sync = zs_df_push_new(test, pool, df, nr, 64, 3000);
	zs_deferred_flush(df);
	zs_deferred_stats(df, &st);
	KUNIT_EXPECT_EQ(test, st.pushed + st.sync_frees, (u64)nr);
	KUNIT_EXPECT_EQ(test, st.sync_frees, (u64)sync);
	KUNIT_EXPECT_EQ(test, st.drained, st.pushed);
	KUNIT_EXPECT_EQ(test, (u64)atomic_read(&u.drained), st.pushed);
	KUNIT_EXPECT_LE(test, st.pages, st.max_pages);
	KUNIT_EXPECT_EQ(test, zs_settled_pages(pool), 0UL);
	zs_deferred_destroy(df);
}

/*
 * A batch hands a CPU's page to the drain as soon as it holds that many
 * elements: with spare pages at hand (each round is flushed, which returns
 * the pages) no drain call gets more, and none is lost. A batch of 0, or of
 * more than a page holds, is a page's worth (two elements of half a page).
 */
static void zs_test_deferred_batch(struct kunit *test)
{
	static const struct {
		size_t elem;
		unsigned int batch, eff;
	} c[] = {
		{ sizeof(u32), 8, 8 },
		{ sizeof(u32), 0, PAGE_SIZE / sizeof(u32) },
		{ sizeof(u32), UINT_MAX, PAGE_SIZE / sizeof(u32) },
		{ PAGE_SIZE / 2, 10, 2 },
	};
	struct zs_pool *pool = test->priv;
	struct zs_deferred_stats st;
	struct zs_deferred *df;
	unsigned int i, k, r, nr, rounds;
	u32 *e;

	e = kunit_kzalloc(test, PAGE_SIZE / 2, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	for (k = 0; k < ARRAY_SIZE(c); k++) {
		struct zs_df_user u = { .pool = pool };

		/* 16 rounds, fewer for the large pages' many elements. */
		rounds = clamp(16384 / c[k].eff, 2U, 16U);
		nr = rounds * c[k].eff;
		u.seen = kunit_kzalloc(test, nr, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, u.seen);
		u.stride = c[k].elem / sizeof(u32);
		df = zs_deferred_create(pool, &zs_df_index_ops, &u, c[k].elem,
					c[k].batch, 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR(df));
		zs_deferred_stats(df, &st);
		KUNIT_EXPECT_EQ(test, st.batch, c[k].eff);
		for (r = 0, i = 0; r < rounds; r++) {
			for (; i < (r + 1) * c[k].eff; i++) {
				e[0] = i;
				if (!zs_deferred_push(df, e))
					u.seen[i]++;	/* the caller's own free */
			}
			zs_deferred_flush(df);
		}
		zs_deferred_stats(df, &st);
		KUNIT_EXPECT_EQ(test, st.sync_frees, 0ULL);
		KUNIT_EXPECT_EQ(test, st.pushed, (u64)nr);
		KUNIT_EXPECT_EQ(test, (u64)atomic_read(&u.drained), st.pushed);
		KUNIT_EXPECT_LE(test, atomic_read(&u.max_nr), (int)c[k].eff);
		KUNIT_EXPECT_GE(test, atomic_read(&u.calls), (int)rounds);
		for (i = 0; i < nr; i++)
			KUNIT_EXPECT_EQ_MSG(test, u.seen[i], 1, "element %u", i);
		zs_deferred_destroy(df);
	}
}

/*
 * A batch costs no capacity: with the drain held up and the spare pages
 * gone, a CPU fills its page past the batch before pushes are refused. On
 * one CPU, at the smallest bound (its pages all made at once, since the
 * drain cannot add any), that is a batch for each page but the CPU's own,
 * and a page's worth in that one.
 */
static void zs_test_deferred_batch_capacity(struct kunit *test)
{
	const unsigned int per_page = PAGE_SIZE / sizeof(u32), batch = 8;
	const unsigned int nr = batch * num_possible_cpus() + 2 * per_page;
	struct zs_pool *pool = test->priv;
	struct zs_df_user u = { .pool = pool };
	DECLARE_COMPLETION_ONSTACK(gate);
	struct zs_deferred_stats st;
	struct zs_deferred *df;
	unsigned int i, refused = 0;
	u32 e;

	u.seen = kunit_kzalloc(test, nr, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u.seen);
	u.gate = &gate;
	df = zs_deferred_create(pool, &zs_df_index_ops, &u, sizeof(u32), batch, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(df));
	/* On one CPU, whose page its idle work cannot take meanwhile. */
	preempt_disable();
	for (i = 0; i < nr; i++) {
		e = i;
		if (!zs_deferred_push(df, &e)) {
			u.seen[i] += 100;	/* the caller's synchronous free */
			refused++;
		}
	}
	preempt_enable();
	zs_deferred_stats(df, &st);
	KUNIT_EXPECT_EQ(test, st.pages, st.max_pages);
	KUNIT_EXPECT_EQ(test, st.pushed, (u64)(batch * (st.pages - 1) + per_page));
	KUNIT_EXPECT_EQ(test, st.sync_frees, (u64)refused);
	KUNIT_EXPECT_EQ(test, st.pushed + refused, (u64)nr);
	complete_all(&gate);
	zs_deferred_flush(df);
	KUNIT_EXPECT_EQ(test, (u64)atomic_read(&u.drained), st.pushed);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_TRUE_MSG(test, u.seen[i] == 1 || u.seen[i] == 100,
				      "element %u handled %u times", i, u.seen[i]);
	zs_deferred_destroy(df);
}

/*
 * With the drain held up and a small bound, pushes run out of buffer pages
 * and must fall back; each element ends up either drained or refused, never
 * both and never lost.
 */
static void zs_test_deferred_fallback(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	const unsigned int nr = 4096, elem = 512;
	struct zs_df_user u = { .pool = pool };
	DECLARE_COMPLETION_ONSTACK(gate);
	struct zs_deferred_stats st;
	struct zs_deferred *df;
	unsigned int i, refused = 0;
	u32 *e;

	u.seen = kunit_kzalloc(test, nr, GFP_KERNEL);
	e = kunit_kzalloc(test, elem, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u.seen);
	KUNIT_ASSERT_NOT_NULL(test, e);
	u.gate = &gate;
	u.stride = elem / sizeof(u32);
	/* 8 elements a page, at most one page a CPU plus one. */
	df = zs_deferred_create(pool, &zs_df_index_ops, &u, elem, 0, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(df));
	for (i = 0; i < nr; i++) {
		e[0] = i;
		if (!zs_deferred_push(df, e)) {
			u.seen[i] += 100;	/* the caller's synchronous free */
			refused++;
		}
	}
	KUNIT_EXPECT_GT(test, refused, 0U);
	complete_all(&gate);
	zs_deferred_flush(df);
	zs_deferred_stats(df, &st);
	KUNIT_EXPECT_EQ(test, st.sync_frees, (u64)refused);
	KUNIT_EXPECT_EQ(test, st.pushed + st.sync_frees, (u64)nr);
	KUNIT_EXPECT_LE(test, st.pages, st.max_pages);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_TRUE_MSG(test, u.seen[i] == 1 || u.seen[i] == 100,
				      "element %u handled %u times", i, u.seen[i]);
	zs_deferred_destroy(df);
}

struct zs_df_pusher {
	struct zs_deferred *df;
	unsigned int first, nr, stride, refused;
	u8 *refused_map;
	struct completion done;
};

static int zs_df_pusher_fn(void *data)
{
	struct zs_df_pusher *p = data;
	unsigned int i;
	u32 e;

	for (i = p->first; i < p->nr; i += p->stride) {
		e = i;
		if (!zs_deferred_push(p->df, &e)) {
			p->refused_map[i] = 1;
			p->refused++;
		}
	}
	complete(&p->done);
	return 0;
}

/*
 * Flush ordering: whatever was pushed before zs_deferred_flush() was called,
 * from any CPU, has been drained when it returns.
 */
static void zs_test_deferred_flush(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	const unsigned int nr = 20000, nthreads = 2;
	struct zs_df_user u = { .pool = pool };
	struct zs_df_pusher p[2];
	struct zs_deferred *df;
	u8 *refused;
	unsigned int i, t;

	u.seen = kunit_kzalloc(test, nr, GFP_KERNEL);
	refused = kunit_kzalloc(test, nr, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u.seen);
	KUNIT_ASSERT_NOT_NULL(test, refused);
	df = zs_deferred_create(pool, &zs_df_index_ops, &u, sizeof(u32), 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(df));

	for (t = 0; t < nthreads; t++) {
		struct task_struct *task;

		p[t] = (struct zs_df_pusher){ .df = df, .first = t, .nr = nr,
					      .stride = nthreads, .refused_map = refused };
		init_completion(&p[t].done);
		task = kthread_run(zs_df_pusher_fn, &p[t], "zs_kunit_push/%u", t);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	}
	for (t = 0; t < nthreads; t++)
		wait_for_completion(&p[t].done);
	zs_deferred_flush(df);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, u.seen[i] + refused[i], 1,
				    "element %u drained %u times, refused %u", i,
				    u.seen[i], refused[i]);

	/* One more push after the flush is drained by the next one. */
	i = 0;
	if (zs_deferred_push(df, &i)) {
		zs_deferred_flush(df);
		KUNIT_EXPECT_EQ(test, u.seen[0], refused[0] ? 1 : 2);
	}
	zs_deferred_destroy(df);
}

/*
 * zs_deferred_flush_queued(), for callers in memory reclaim: it drains the
 * pages handed to the worker and the calling CPU's own page, without holding
 * the CPUs online. Pushed (a new instance refuses none) and flushed on one
 * CPU, in batches that leave a partly filled page, every element is drained
 * once.
 */
static void zs_test_deferred_flush_queued(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	struct zs_df_user u = { .pool = pool };
	const unsigned int nr = 20;
	struct zs_deferred *df;
	u8 refused[20] = {};
	unsigned int i;

	u.seen = kunit_kzalloc(test, nr, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u.seen);
	/* Batches of 8: 16 elements handed over, 4 left on this CPU's page. */
	df = zs_deferred_create(pool, &zs_df_index_ops, &u, sizeof(u32), 8, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(df));
	migrate_disable();
	for (i = 0; i < nr; i++)
		refused[i] = !zs_deferred_push(df, &i);
	zs_deferred_flush_queued(df);
	migrate_enable();
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, u.seen[i], 1,
				    "element %u drained %u times, refused %u", i,
				    u.seen[i], refused[i]);
	zs_deferred_destroy(df);
}

/*
 * Two users of one pool at once, as zram and zswap are: one queues u32 slot
 * numbers, the other pointers to entries that own an object (zswap's
 * element). Each drain gets only its own user's elements, every object is
 * freed exactly once, and the pool empties.
 */
struct zs_df_entry {
	unsigned long handle;
	unsigned int id;
};

struct zs_df_owner {
	struct zs_pool *pool;
	unsigned long *handles;		/* the slot user's objects, by slot */
	u8 *seen;			/* times each slot or entry was freed */
};

static void zs_df_drain_slots(void *priv, const void *elems, unsigned int nr)
{
	struct zs_df_owner *u = priv;
	const u32 *slot = elems;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		u->seen[slot[i]]++;
		zs_free(u->pool, u->handles[slot[i]]);
	}
}

static void zs_df_drain_entries(void *priv, const void *elems, unsigned int nr)
{
	struct zs_df_entry * const *entry = elems;
	struct zs_df_owner *u = priv;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		u->seen[entry[i]->id]++;
		zs_free(u->pool, entry[i]->handle);
	}
}

static const struct zs_deferred_ops zs_df_slot_ops = { .drain = zs_df_drain_slots };
static const struct zs_deferred_ops zs_df_entry_ops = { .drain = zs_df_drain_entries };

static void zs_test_deferred_two_users(struct kunit *test)
{
	struct zs_pool *pool = test->priv;
	const unsigned int nr = 3000;
	struct zs_df_owner slots = { .pool = pool }, entries = { .pool = pool };
	struct zs_deferred *a, *b;
	struct zs_df_entry *ent;
	unsigned int i;

	slots.handles = kunit_kcalloc(test, nr, sizeof(*slots.handles), GFP_KERNEL);
	slots.seen = kunit_kzalloc(test, nr, GFP_KERNEL);
	entries.seen = kunit_kzalloc(test, nr, GFP_KERNEL);
	ent = kunit_kcalloc(test, nr, sizeof(*ent), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, slots.handles);
	KUNIT_ASSERT_NOT_NULL(test, slots.seen);
	KUNIT_ASSERT_NOT_NULL(test, entries.seen);
	KUNIT_ASSERT_NOT_NULL(test, ent);
	a = zs_deferred_create(pool, &zs_df_slot_ops, &slots, sizeof(u32), 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	b = zs_deferred_create(pool, &zs_df_entry_ops, &entries,
			       sizeof(struct zs_df_entry *), 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));

	for (i = 0; i < nr; i++) {
		struct zs_df_entry *e = &ent[i];
		struct zs_obj o;
		u32 slot = i;

		KUNIT_ASSERT_EQ(test, zs_alloc_obj(pool, &o, 100 + i % 1000, i), 0);
		slots.handles[i] = o.handle;
		KUNIT_ASSERT_EQ(test, zs_alloc_obj(pool, &o, 2000 + i % 1000, i), 0);
		e->handle = o.handle;
		e->id = i;
		/* Refused: freed here, as its user would. */
		if (!zs_deferred_push(a, &slot)) {
			slots.seen[i]++;
			zs_free(pool, slots.handles[i]);
		}
		if (!zs_deferred_push(b, &e)) {
			entries.seen[i]++;
			zs_free(pool, e->handle);
		}
	}
	zs_deferred_flush(a);
	zs_deferred_flush(b);
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_EQ_MSG(test, slots.seen[i], 1, "slot %u freed %u times", i,
				    slots.seen[i]);
		KUNIT_EXPECT_EQ_MSG(test, entries.seen[i], 1, "entry %u freed %u times", i,
				    entries.seen[i]);
	}
	zs_deferred_destroy(a);
	zs_deferred_destroy(b);
	KUNIT_EXPECT_EQ(test, zs_settled_pages(pool), 0UL);
}

/*
 * Destroy with elements still in the per-CPU buffers drains them; so does
 * zs_destroy_pool() for an instance still attached.
 */
static void zs_test_deferred_destroy(struct kunit *test)
{
	struct zs_df_user u = {}, v = {};
	struct zs_deferred *df;
	struct zs_pool *pool;
	unsigned int refused;

	pool = zs_create_pool("zs_kunit_df");
	KUNIT_ASSERT_NOT_NULL(test, pool);
	u.pool = pool;
	v.pool = pool;
	df = zs_deferred_create(pool, &zs_df_handle_ops, &u, sizeof(unsigned long), 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(df));
	refused = zs_df_push_new(test, pool, df, 100, 100, 1);
	zs_deferred_destroy(df);
	KUNIT_EXPECT_EQ(test, atomic_read(&u.drained), 100 - (int)refused);
	KUNIT_EXPECT_EQ(test, zs_settled_pages(pool), 0UL);

	df = zs_deferred_create(pool, &zs_df_handle_ops, &v, sizeof(unsigned long), 0, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(df));
	refused = zs_df_push_new(test, pool, df, 100, 300, 1);
	zs_destroy_pool(pool);
	KUNIT_EXPECT_EQ(test, atomic_read(&v.drained), 100 - (int)refused);
}

static struct kunit_case zsmalloc_test_cases[] = {
	KUNIT_CASE(zs_test_every_class),
	KUNIT_CASE(zs_test_bad_sizes),
	KUNIT_CASE(zs_test_class_index),
	KUNIT_CASE(zs_test_compaction),
	KUNIT_CASE_SLOW(zs_test_concurrent_free),
	KUNIT_CASE(zs_test_free_bulk),
	KUNIT_CASE(zs_test_deferred_args),
	KUNIT_CASE(zs_test_deferred_drain),
	KUNIT_CASE(zs_test_deferred_batch),
	KUNIT_CASE(zs_test_deferred_batch_capacity),
	KUNIT_CASE(zs_test_deferred_fallback),
	KUNIT_CASE(zs_test_deferred_flush),
	KUNIT_CASE(zs_test_deferred_flush_queued),
	KUNIT_CASE(zs_test_deferred_two_users),
	KUNIT_CASE(zs_test_deferred_destroy),
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
