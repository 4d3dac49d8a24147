// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the zsmalloc abstractions.

#[macros::kunit_tests(rust_zsmalloc)]
mod cases {
    use super::super::*;
    use crate::{alloc::KVec, c_str, kunit_expect, kunit_expect_eq, types::Opaque};
    use crate::{
        alloc::{flags::*, KBox},
        bindings,
        error::{code::*, Result},
        page::PAGE_SIZE,
        sync::Arc,
    };
    use core::sync::atomic::{AtomicBool, Ordering};
    use core::sync::atomic::{AtomicU32, AtomicUsize};

    fn byte(seed: usize, i: usize) -> u8 {
        (seed.wrapping_mul(131) ^ i.wrapping_mul(7) ^ (i >> 8) ^ 0x80) as u8
    }

    /// `len` bytes of pattern `seed`; never all zeroes.
    fn pattern(len: usize, seed: usize) -> Result<KVec<u8>> {
        let mut v = KVec::with_capacity(len, GFP_KERNEL)?;
        for i in 0..len {
            v.push(byte(seed, i), GFP_KERNEL)?;
        }
        Ok(v)
    }

    /// Whether `bytes` are the start of pattern `seed`.
    fn is_pattern(bytes: &[u8], seed: usize) -> bool {
        bytes.iter().enumerate().all(|(i, &b)| b == byte(seed, i))
    }

    fn store<'a>(pool: &'a Pool, len: usize, seed: usize) -> Result<Handle<'a>> {
        pool.alloc(len, GFP_KERNEL)?.write(&pattern(len, seed)?)
    }

    /// Whether the object holds pattern `seed` for `len` bytes, then zeroes up to its capacity.
    fn intact(h: &Handle<'_>, len: usize, seed: usize) -> Result<bool> {
        let cap = h.capacity();
        let g = h.map_read(cap)?;
        Ok(g.len() == cap && is_pattern(&g[..len], seed) && g[len..].iter().all(|&b| b == 0))
    }

    /// Sizes from 1 byte to a full page, crossing every size class and the huge classes.
    fn sizes() -> impl Iterator<Item = usize> {
        (1..MAX_ALLOC_SIZE)
            .step_by(29)
            .chain([MAX_ALLOC_SIZE - 1, MAX_ALLOC_SIZE])
    }

    #[test]
    fn alloc_free_all_sizes() -> Result {
        let pool = Pool::new(c_str!("rust_zs_sizes"))?;
        let mut objs = KVec::new();
        for (seed, size) in sizes().enumerate() {
            objs.push((store(&pool, size, seed)?, size, seed), GFP_KERNEL)?;
        }
        assert!(pool.total_pages() > 0);
        assert_eq!(pool.live_objects(), objs.len());
        let mut bad = 0;
        for (h, size, seed) in objs.iter() {
            if !intact(h, *size, *seed)? {
                bad += 1;
            }
        }
        assert_eq!(bad, 0);
        drop(objs);
        assert_eq!(pool.live_objects(), 0);
        assert_eq!(pool.total_pages(), 0);
        Ok(())
    }

    /// Every size reads back exactly what was written, and zeroes from there to the capacity,
    /// also in memory that held other data: before each object, one of the same size is filled
    /// with 0xff and freed, and zsmalloc hands a freed slot out again first.
    #[test]
    fn read_back_every_size() -> Result {
        let pool = Pool::new(c_str!("rust_zs_every"))?;
        let ones = KVec::from_elem(0xffu8, MAX_ALLOC_SIZE, GFP_KERNEL)?;
        let data = pattern(MAX_ALLOC_SIZE, 3)?;
        // Every size with 4 KiB pages; as many sizes, evenly spread, with larger pages.
        let step = (MAX_ALLOC_SIZE / 4096).max(1);
        let mut bad = 0;
        for size in (1..=MAX_ALLOC_SIZE).step_by(step) {
            let dirty = pool.alloc(size, GFP_KERNEL)?;
            let cap = dirty.capacity();
            assert!(cap >= size && cap <= MAX_ALLOC_SIZE);
            drop(dirty.write(&ones[..cap])?);
            // A spare allocated for `size` bytes but given fewer, as rzram does.
            let len = if size % 2 == 0 { size / 2 } else { size };
            let h = pool.alloc(size, GFP_KERNEL)?.write(&data[..len])?;
            if h.capacity() != cap || !intact(&h, len, 3)? {
                bad += 1;
            }
        }
        assert_eq!(bad, 0);
        assert_eq!(pool.live_objects(), 0);
        assert_eq!(pool.total_pages(), 0);
        Ok(())
    }

    #[test]
    fn class_index() -> Result {
        let pool = Pool::new(c_str!("rust_zs_class"))?;
        let mut last: Option<(u32, usize)> = None;
        for size in sizes() {
            let obj = pool.alloc(size, GFP_KERNEL)?;
            let idx = pool.class_index_for(size)?;
            assert_eq!(obj.class_index(), idx);
            let cap = obj.capacity();
            assert!(cap >= size);
            // Classes and capacities grow with the size; one class has one capacity.
            if let Some((last_idx, last_cap)) = last {
                assert!(idx >= last_idx && cap >= last_cap);
                assert!(idx != last_idx || cap == last_cap);
            }
            // The capacity is the largest size of the class.
            assert_eq!(pool.class_index_for(cap)?, idx);
            if cap < MAX_ALLOC_SIZE {
                assert!(pool.class_index_for(cap + 1)? > idx);
            }
            let h = obj.write(&[1])?;
            assert_eq!(h.class_index(), idx);
            assert_eq!(h.capacity(), cap);
            last = Some((idx, cap));
        }
        // The largest objects are in the last class, which is huge: one object per page.
        assert_eq!(
            last,
            Some((pool.class_index_for(MAX_ALLOC_SIZE)?, MAX_ALLOC_SIZE))
        );
        assert!(pool.huge_class_size() <= MAX_ALLOC_SIZE);
        Ok(())
    }

    #[test]
    fn bad_input() -> Result {
        let pool = Pool::new(c_str!("rust_zs_bad"))?;
        assert_eq!(pool.alloc(0, GFP_KERNEL).err(), Some(EINVAL));
        assert_eq!(
            pool.alloc(MAX_ALLOC_SIZE + 1, GFP_KERNEL).err(),
            Some(E2BIG)
        );
        assert_eq!(pool.alloc(usize::MAX, GFP_KERNEL).err(), Some(E2BIG));
        assert_eq!(pool.class_index_for(0).err(), Some(EINVAL));
        assert_eq!(pool.class_index_for(MAX_ALLOC_SIZE + 1).err(), Some(EINVAL));

        // Writes that are empty or longer than the capacity; the object is freed.
        assert_eq!(pool.alloc(100, GFP_KERNEL)?.write(&[]).err(), Some(EINVAL));
        let obj = pool.alloc(100, GFP_KERNEL)?;
        let long = pattern(obj.capacity() + 1, 0)?;
        assert_eq!(obj.write(&long).err(), Some(EINVAL));
        assert_eq!(pool.live_objects(), 0);

        // Mappings longer than the object's class, or empty.
        let h = store(&pool, 100, 1)?;
        assert_eq!(h.map_read(0).err(), Some(EINVAL));
        assert_eq!(h.map_read(h.capacity() + 1).err(), Some(EINVAL));
        assert_eq!(h.map_read(MAX_ALLOC_SIZE + 1).err(), Some(EINVAL));

        // One mapping per CPU: a second one is refused, not corrupted. (Allocate before mapping:
        // a mapping disables preemption. A write is not tried here: it would fail the same way
        // and free its object while this thread holds a mapping, which may deadlock against
        // compaction.)
        let h2 = store(&pool, 100, 2)?;
        {
            let _g = h.map_read(100)?;
            assert_eq!(h2.map_read(100).err(), Some(EBUSY));
        }
        assert!(intact(&h2, 100, 2)?);
        assert_eq!(pool.live_objects(), 2);
        drop((h, h2));
        assert_eq!(pool.live_objects(), 0);
        Ok(())
    }

    /// Holds two objects and fails at the third allocation.
    fn fails_midway(pool: &Pool) -> Result {
        let _new = pool.alloc(100, GFP_KERNEL)?;
        let _written = store(pool, 2000, 1)?;
        let _never = pool.alloc(0, GFP_KERNEL)?;
        Ok(())
    }

    #[test]
    fn freed_on_drop() -> Result {
        let pool = Pool::new(c_str!("rust_zs_drop"))?;
        assert_eq!(fails_midway(&pool).err(), Some(EINVAL));
        assert_eq!(pool.live_objects(), 0);
        assert_eq!(pool.total_pages(), 0);
        Ok(())
    }

    #[test]
    fn compaction() -> Result {
        let pool = Pool::new(c_str!("rust_zs_compact"))?;
        let mut objs = KVec::new();
        for seed in 0..4000 {
            objs.push(Some(store(&pool, 700, seed)?), GFP_KERNEL)?;
        }
        // Free three objects of every four, leaving each page sparsely used.
        for (i, slot) in objs.iter_mut().enumerate() {
            if i % 4 != 0 {
                *slot = None;
            }
        }
        let before = pool.total_pages();
        let freed = pool.compact();
        assert!(freed > 0);
        assert_eq!(pool.total_pages(), before - freed);
        assert!(pool.stats().pages_compacted >= freed);
        let mut bad = 0;
        for (seed, slot) in objs.iter().enumerate() {
            if let Some(h) = slot {
                if !intact(h, 700, seed)? {
                    bad += 1;
                }
            }
        }
        assert_eq!(bad, 0);
        drop(objs);
        assert_eq!(pool.total_pages(), 0);
        Ok(())
    }

    /// A table of `n` slots of `pool`: objects of pattern `i` in the even slots, the word `i` in
    /// the odd ones; the caller bits hold the object's length.
    fn filled_table(pool: &Arc<Pool>, n: usize) -> Result<Table> {
        let table = Table::new(pool.clone(), n)?;
        for i in 0..n {
            let new = if i % 2 == 0 {
                Contents::Object(store(pool, 300, i)?)
            } else {
                Contents::Word(i)
            };
            let mut slot = table.lock(i).ok_or(EINVAL)?;
            slot.replace(new)?;
            slot.set_bits(300);
        }
        Ok(table)
    }

    #[test]
    fn table_slots() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rust_zs_table"))?, GFP_KERNEL)?;
        let table = filled_table(&pool, 64)?;
        assert_eq!(table.len(), 64);
        assert_eq!(pool.live_objects(), 32);
        assert!(table.lock(64).is_none());
        assert_eq!(table.try_lock(64).err(), Some(EINVAL));
        assert_eq!(table.bits(64), None);
        let mut bad = 0;
        for i in 0..64 {
            let slot = table.lock(i).ok_or(EINVAL)?;
            let ok = if i % 2 == 0 {
                slot.word().is_none()
                    && slot.has_object()
                    && slot.class_index() == Some(pool.class_index_for(300)?)
                    && is_pattern(&slot.map_read(300)?, i)
            } else {
                slot.word() == Some(i)
                    && slot.class_index().is_none()
                    && slot.map_read(1).err() == Some(EINVAL)
            };
            if !ok || slot.bits() != 300 {
                bad += 1;
            }
        }
        assert_eq!(bad, 0);
        // The caller bits are 30 bits wide; the table's own bit is not theirs.
        {
            let mut slot = table.lock(0).ok_or(EINVAL)?;
            slot.set_bits(u32::MAX);
            assert_eq!(slot.bits(), Table::MAX_BITS);
            assert!(slot.has_object());
            assert_eq!(table.try_lock(0).err(), Some(EBUSY));
        }
        assert_eq!(table.bits(0), Some(Table::MAX_BITS));
        // Taking an object leaves the word 0; a replaced object comes back.
        {
            let mut slot = table.lock(2).ok_or(EINVAL)?;
            let h = slot.take();
            assert!(h.is_some());
            assert_eq!(slot.word(), Some(0));
            assert!(slot.take().is_none());
            if let Some(h) = h {
                assert!(matches!(
                    slot.replace(Contents::Object(h))?,
                    Contents::Word(0)
                ));
            }
            assert!(matches!(
                slot.replace(Contents::Word(5))?,
                Contents::Object(_)
            ));
        }
        assert_eq!(pool.live_objects(), 31);
        Ok(())
    }

    #[test]
    fn table_drop_frees_all() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rust_zs_tdrop"))?, GFP_KERNEL)?;
        let table = filled_table(&pool, 1000)?;
        assert_eq!(pool.live_objects(), 500);
        assert!(pool.total_pages() > 0);
        drop(table);
        assert_eq!(pool.live_objects(), 0);
        assert_eq!(pool.total_pages(), 0);
        Ok(())
    }

    #[test]
    fn table_refuses_other_pool() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rust_zs_tmine"))?, GFP_KERNEL)?;
        let other = Pool::new(c_str!("rust_zs_tother"))?;
        let table = filled_table(&pool, 2)?;
        let theirs = store(&other, 300, 9)?;
        {
            let mut slot = table.lock(0).ok_or(EINVAL)?;
            assert_eq!(slot.replace(Contents::Object(theirs)).err(), Some(EINVAL));
            // The slot is unchanged; the refused object went back to its own pool.
            assert!(is_pattern(&slot.map_read(300)?, 0));
        }
        assert_eq!(other.live_objects(), 0);
        assert_eq!(other.total_pages(), 0);
        assert_eq!(pool.live_objects(), 1);
        // The same for `free_bulk`: each object goes to its own pool.
        let v = [store(&other, 10, 1)?, store(&pool, 10, 2)?];
        pool.free_bulk(v);
        assert_eq!(other.live_objects(), 0);
        assert_eq!(pool.live_objects(), 1);
        Ok(())
    }

    #[test]
    fn table_size() -> Result {
        let slot = core::mem::size_of::<Slot>();
        #[cfg(CONFIG_64BIT)]
        {
            kunit_expect_eq!(slot, 16);
            // A 1 TiB device: 4 GiB of slots, above kvmalloc()'s INT_MAX limit, is fine.
            let slots = (1usize << 40) / PAGE_SIZE;
            let bytes = Table::bytes_for(slots);
            kunit_expect_eq!(bytes, Ok(slots * 16));
            kunit_expect!(bytes.is_ok_and(|b| b > i32::MAX as usize));
            // 2^40 slots (16 TiB of table) fail quietly with ENOMEM, without a warning.
            let pool = Arc::new(Pool::new(c_str!("rust_zs_tsize"))?, GFP_KERNEL)?;
            kunit_expect_eq!(Table::new(pool, 1usize << 40).err(), Some(ENOMEM));
        }
        #[cfg(not(CONFIG_64BIT))]
        {
            // The table of a 1 TiB device would not fit the address space.
            kunit_expect_eq!(Table::bytes_for(1usize << 28).err(), Some(ENOMEM));
        }
        kunit_expect_eq!(Table::bytes_for(usize::MAX / 2).err(), Some(ENOMEM));
        kunit_expect_eq!(Table::bytes_for(0), Ok(0));
        kunit_expect_eq!(Table::bytes_for(3), Ok(3 * slot));
        Ok(())
    }

    /// Frees the objects of a table by slot number; the batch drain can be held back.
    struct Slots {
        table: Table,
        drained: AtomicUsize,
        batches: AtomicUsize,
        most: AtomicUsize,
        hold: AtomicBool,
    }

    impl DeferredFree for Slots {
        type Item = u32;

        fn drain(&self, items: &[u32]) {
            self.most.fetch_max(items.len(), Ordering::Relaxed);
            if items.len() > 1 {
                self.batches.fetch_add(1, Ordering::Relaxed);
                while self.hold.load(Ordering::Acquire) {
                    core::hint::spin_loop();
                }
            }
            let t = &self.table;
            let taken = items
                .iter()
                .filter_map(|&i| t.lock(i as usize)?.take())
                .inspect(|_| {
                    self.drained.fetch_add(1, Ordering::Relaxed);
                });
            t.pool().free_bulk(taken);
        }
    }

    fn slots(pool: &Arc<Pool>, n: usize) -> Result<Slots> {
        let table = Table::new(pool.clone(), n)?;
        for i in 0..n {
            let h = store(pool, 300, i)?;
            table.lock(i).ok_or(EINVAL)?.replace(Contents::Object(h))?;
        }
        Ok(Slots {
            table,
            drained: AtomicUsize::new(0),
            batches: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            hold: AtomicBool::new(false),
        })
    }

    #[test]
    fn deferred_drain_and_flush() -> Result {
        const N: usize = 5000;
        let pool = Arc::new(Pool::new(c_str!("rust_zs_df"))?, GFP_KERNEL)?;
        let df = Deferred::new(pool.clone(), slots(&pool, N)?, Default::default())?;
        let mut refused = 0;
        for i in 0..N {
            if df.push(i as u32).is_err() {
                refused += 1;
            }
        }
        assert_eq!(refused, 0);
        df.flush();
        // Everything pushed before the flush has been freed, exactly once.
        assert_eq!(df.owner().drained.load(Ordering::Relaxed), N);
        assert_eq!(pool.live_objects(), 0);
        assert_eq!(pool.total_pages(), 0);
        let s = df.stats();
        assert_eq!(s.pushed + s.sync_frees, N as u64);
        assert_eq!(s.drained, s.pushed);
        assert!(s.pages <= s.max_pages);
        Ok(())
    }

    #[test]
    fn deferred_batch() -> Result {
        const BATCH: usize = 32;
        const ROUNDS: usize = 40;
        const N: usize = BATCH * ROUNDS;
        let per_page = PAGE_SIZE / core::mem::size_of::<u32>();
        let pool = Arc::new(Pool::new(c_str!("rust_zs_df_batch"))?, GFP_KERNEL)?;
        // 0 and more than a page holds are a page's worth.
        for batch in [0, per_page + 1, usize::MAX] {
            let options = DeferredOptions {
                batch,
                ..Default::default()
            };
            let df = Deferred::new(pool.clone(), slots(&pool, 1)?, options)?;
            assert_eq!(df.stats().batch, per_page);
        }
        let options = DeferredOptions {
            batch: BATCH,
            ..Default::default()
        };
        let df = Deferred::new(pool.clone(), slots(&pool, N)?, options)?;
        assert_eq!(df.stats().batch, BATCH);
        // A round of `BATCH` pushes, then a flush, which gives the pages back: each CPU's page
        // goes to the drain at `BATCH` items, with a spare page to take its place.
        for r in 0..ROUNDS {
            for i in r * BATCH..(r + 1) * BATCH {
                // Task context: queued, or drained at once when the queue is full.
                assert!(df.push(i as u32).is_ok());
            }
            df.flush();
        }
        // No drain got more than a batch (a full page, without the batch: 1024); nothing was
        // lost or freed twice.
        let most = df.owner().most.load(Ordering::Relaxed);
        assert!(most > 0 && most <= BATCH);
        let s = df.stats();
        assert_eq!((s.pushed, s.sync_frees), (N as u64, 0));
        assert_eq!(df.owner().drained.load(Ordering::Relaxed), N);
        assert_eq!(pool.live_objects(), 0);
        Ok(())
    }

    #[test]
    fn deferred_fallback_and_drop() -> Result {
        const N: usize = 20000;
        let pool = Arc::new(Pool::new(c_str!("rust_zs_df_full"))?, GFP_KERNEL)?;
        // The smallest bound, and a drain held back: the queue fills up, and pushes then free
        // synchronously.
        let options = DeferredOptions {
            max_pages: 1,
            ..Default::default()
        };
        let df = Deferred::new(pool.clone(), slots(&pool, N)?, options)?;
        df.owner().hold.store(true, Ordering::Release);
        let mut sync = 0;
        for i in 0..N {
            if df.push(i as u32) == Ok(Pushed::Drained) {
                sync += 1;
            }
        }
        let s = df.stats();
        // Expectations: a stopped case would drop the queue with its drain held back, forever.
        kunit_expect!(sync > 0);
        kunit_expect_eq!(s.sync_frees, sync as u64);
        kunit_expect!(s.pages <= s.max_pages);
        df.owner().hold.store(false, Ordering::Release);
        // Dropping the queue drains what is left, before the owner (and its table) goes.
        drop(df);
        assert_eq!(pool.live_objects(), 0);
        assert_eq!(pool.total_pages(), 0);
        Ok(())
    }

    /// Counts what its drain sees.
    struct Counter(AtomicUsize);

    impl DeferredFree for Counter {
        type Item = u32;

        fn drain(&self, items: &[u32]) {
            self.0.fetch_add(items.len(), Ordering::Relaxed);
        }
    }

    /// A timer whose callback, in softirq context, pushes onto a queue.
    ///
    /// `timer` is the first field of this `repr(C)` struct, so a pointer to it is a pointer to
    /// the whole.
    #[repr(C)]
    struct InSoftirq {
        timer: Opaque<bindings::timer_list>,
        df: *const Deferred<Counter>,
        /// 0: not run yet; 1: the push was refused with the item back; 2: anything else.
        outcome: AtomicU32,
    }

    /// # Safety
    ///
    /// `t` must be the `timer` of a live [`InSoftirq`] whose `df` points to a live queue.
    unsafe extern "C" fn push_in_softirq(t: *mut bindings::timer_list) {
        // SAFETY: by the caller `t` is the first field of a live `InSoftirq` (`repr(C)`); only
        // its atomics and `df` are used, through a shared reference.
        let this = unsafe { &*t.cast::<InSoftirq>() };
        // SAFETY: by the caller `df` points to a live queue.
        let df = unsafe { &*this.df };
        let outcome = match df.push(7) {
            Err(7) => 1,
            _ => 2,
        };
        this.outcome.store(outcome, Ordering::Release);
    }

    #[test]
    fn deferred_push_from_interrupt_refused() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rust_zs_df_irq"))?, GFP_KERNEL)?;
        let df = Deferred::new(pool, Counter(AtomicUsize::new(0)), Default::default())?;
        let t = KBox::new(
            InSoftirq {
                timer: Opaque::uninit(),
                df: &*df,
                outcome: AtomicU32::new(0),
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `t.timer` is a writable `timer_list`, initialised here before any other use;
        // the name and the lock class key are static. The callback's requirements hold until
        // `timer_delete_sync()` below: `t` and `df` outlive it.
        unsafe {
            bindings::init_timer_key(
                t.timer.get(),
                Some(push_in_softirq),
                0,
                c_str!("rust_zs_df_irq").as_char_ptr(),
                crate::static_lock_class!().as_ptr(),
            );
            let now = core::ptr::read_volatile(core::ptr::addr_of!(bindings::jiffies));
            (*t.timer.get()).expires = now;
            bindings::add_timer(t.timer.get());
        }
        // The timer fires at the next tick.
        for _ in 0..5000 {
            if t.outcome.load(Ordering::Acquire) != 0 {
                break;
            }
            // SAFETY: FFI call; a test case runs in process context and may sleep.
            unsafe { bindings::msleep(1) };
        }
        // SAFETY: the timer was initialised above; after this it is not running nor queued.
        unsafe { bindings::timer_delete_sync(t.timer.get()) };
        assert_eq!(t.outcome.load(Ordering::Acquire), 1);
        // Nothing was queued nor drained.
        df.flush();
        assert_eq!(df.owner().0.load(Ordering::Relaxed), 0);
        let s = df.stats();
        assert_eq!(s.pushed, 0);
        assert_eq!(s.sync_frees, 0);
        Ok(())
    }

    #[test]
    fn concurrent_frees() -> Result {
        const N: usize = 3000;
        let pool = Arc::new(Pool::new(c_str!("rust_zs_conc"))?, GFP_KERNEL)?;
        let done = Arc::new(AtomicUsize::new(0), GFP_KERNEL)?;
        for w in 0..2 {
            let table = Table::new(pool.clone(), N)?;
            for i in 0..N {
                let size = 64 + (i * 37 + w * 11) % 3000;
                let h = store(&pool, size, i)?;
                table.lock(i).ok_or(EINVAL)?.replace(Contents::Object(h))?;
            }
            let done = done.clone();
            crate::workqueue::system_unbound().try_spawn(GFP_KERNEL, move || {
                for i in 0..N {
                    if let Some(mut slot) = table.lock(i) {
                        drop(slot.take());
                    }
                }
                drop(table);
                done.fetch_add(1, Ordering::Release);
            })?;
        }
        // Compact while the two workers free.
        while done.load(Ordering::Acquire) < 2 {
            pool.compact();
            // SAFETY: FFI call; a test case runs in process context and may sleep.
            unsafe { bindings::msleep(1) };
        }
        assert_eq!(pool.live_objects(), 0);
        assert_eq!(pool.total_pages(), 0);
        Ok(())
    }
}
