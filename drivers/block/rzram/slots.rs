// SPDX-License-Identifier: GPL-2.0

//! The slot table: one 16-byte slot per page of the disk, with the statistics and the bitmaps
//! that follow its contents.
//!
//! The slots are a [`zsmalloc::Table`], which owns the device's pool: each slot holds a zsmalloc
//! object of the pool or a plain word, under a lock of its own, with its [`State`] in the lock
//! word (`state.rs`), and 32 bits of rzram's next to them: the page's access time, in seconds
//! since boot (`CLOCK_BOOTTIME`), which takes the space the word's alignment would leave empty
//! after the lock word, so the slot stays 16 bytes on 64-bit. The contents (an object or the
//! word) are reached only through the slot's guard.
//!
//! Emptying or filling a slot goes through [`Table::take`] and [`Table::store`], which keep the
//! statistics, the backing device's blocks and the stale bits (`bitmaps.rs`) in step with it;
//! [`Table::free_stale`] is swap's deferred free of the slots it freed (`swap_free.rs`). Two
//! paths replace a page's object in place, under the slot lock, and change the statistics with
//! `Stats::object_shrunk`: writeback's commit of a written block (`writeback.rs`) and
//! recompression's smaller object (`recompress.rs`).

use crate::{
    bitmaps::{Blocks, Marked, Stale},
    state::{access_time, accessed, State},
    stats::{Stats, Tally},
};
use kernel::{
    prelude::*,
    sync::Arc,
    zsmalloc::{self, Contents, Handle, Pool, SlotGuard},
};

/// One page of the disk, as stored.
pub(crate) type Slot = zsmalloc::Slot;

#[cfg(CONFIG_64BIT)]
kernel::static_assert!(core::mem::size_of::<Slot>() == 16);

/// The slots, their pool and the statistics of an initialised disk.
pub(crate) struct Table {
    /// The slots; they own the device's pool.
    slots: zsmalloc::Table,
    stats: Stats,
    /// The blocks of the backing device in use; none without one.
    blocks: Blocks,
    /// The slots that swap freed since their contents were stored.
    stale: Stale,
}

impl Table {
    /// A table of `pages` empty slots on `pool`, with `backing_pages` blocks of a backing device
    /// to write pages back to. Fails with `ENOMEM`, without a warning, if memory is short or
    /// `pages` is too large.
    pub(crate) fn new(pool: Arc<Pool>, pages: usize, backing_pages: u64) -> Result<Self> {
        Ok(Table {
            slots: zsmalloc::Table::new(pool, pages)?,
            stats: Stats::default(),
            blocks: Blocks::new(backing_pages)?,
            stale: Stale::new(pages)?,
        })
    }

    /// The number of slots: one per page of the disk.
    pub(crate) fn pages(&self) -> usize {
        self.slots.len()
    }

    /// The device's pool.
    pub(crate) fn pool(&self) -> &Arc<Pool> {
        self.slots.pool()
    }

    /// The device's statistics.
    pub(crate) fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Locks slot `index`; `None` past the last slot.
    #[inline]
    pub(crate) fn lock(&self, index: usize) -> Option<SlotGuard<'_>> {
        self.slots.lock(index)
    }

    /// The state of slot `index` as it is now, read without its lock (it may change at once);
    /// `None` past the last slot. For scans that lock and check again what they pick.
    pub(crate) fn state(&self, index: usize) -> Option<State> {
        State::snapshot(&self.slots, index)
    }

    /// Swap freed slot `index`: marks it stale, without its lock. See [`Marked`].
    #[inline]
    pub(crate) fn mark_stale(&self, index: usize) -> Marked {
        self.stale.mark(index)
    }

    /// Hands the word that [`mark_stale`](Self::mark_stale) returned as [`Marked::First`] and
    /// the caller could not queue (from interrupt context, never for swap) to the device's next
    /// drain: the word stays marked queued, as notifies to it since then found it, and that
    /// drain takes every such word. The next drain comes when swap frees a slot of another word
    /// (or the device is reset): until then the word's slots keep their contents, unless they
    /// are rewritten. That drain scans the whole bitmap, a load per 32 slots.
    pub(crate) fn orphan_stale(&self) {
        self.stale.orphan();
    }

    /// Whether swap freed slot `index` since its contents were stored. The caller holds the
    /// slot's lock, so that no store or free changes the answer.
    pub(crate) fn is_stale(&self, g: &SlotGuard<'_>) -> bool {
        self.stale.test(g.index())
    }

    /// Returns the number of stale slots that no drain or store has emptied yet.
    #[cfg(CONFIG_RZRAM_KUNIT_TEST)]
    pub(crate) fn stale_pending(&self) -> u64 {
        self.stale.count()
    }

    /// The stale bitmap, for tests.
    #[cfg(CONFIG_RZRAM_KUNIT_TEST)]
    pub(crate) fn stale(&self) -> &Stale {
        &self.stale
    }

    /// Frees the stale slots of the words `words` ([`Marked::First`]) and of every word orphaned
    /// since the last call: each slot is emptied under its lock, and only if it is still stale,
    /// that is, not emptied or written since the notify (the stale bit is taken under the lock,
    /// so two calls for one word free each slot once); the objects are then freed together,
    /// grouped by size class 64 at a time, taking each class lock once per class and group (one
    /// object is freed directly). The statistics, `notify_free` included, change once a call.
    pub(crate) fn free_stale(&self, words: &[u32]) {
        let mut tally = Tally::default();
        self.pool().free_bulk(
            Iterator::chain(words.iter().copied(), self.stale.take_orphans())
                .flat_map(|w| self.stale.take_word(w))
                .filter_map(|i| self.take_stale(i, &mut tally)),
        );
        tally.apply(&self.stats);
    }

    /// Empties slot `index` if swap freed it and nothing was stored since; returns its object,
    /// if any, and counts the notify in `tally`.
    fn take_stale(&self, index: usize, tally: &mut Tally) -> Option<Handle<'_>> {
        let Some(mut g) = self.slots.lock(index) else {
            // Past the last slot, in the last word: nothing to free, and no lock to take.
            tally.notified(self.stale.clear(index));
            return None;
        };
        // `take_tallied` clears the bit and counts the notify.
        if self.stale.test(index) {
            self.take_tallied(&mut g, tally)
        } else {
            None
        }
    }

    /// Marks the stored pages last accessed at or before `cutoff` (seconds since boot) as idle and
    /// clears the mark of the others, as zram's `idle` attribute; `i64::MAX` marks them all, a
    /// negative cutoff none. Empty and same-filled slots are left alone: nothing post-processes
    /// them.
    ///
    /// May race with reads and writes, which clear the mark of the pages they access: each slot
    /// is marked under its lock.
    pub(crate) fn mark_idle(&self, cutoff: i64) {
        for index in 0..self.slots.len() {
            let Some(mut g) = self.slots.lock(index) else {
                break;
            };
            if !g.has_object() {
                continue;
            }
            let idle = i64::from(access_time(&g)) <= cutoff;
            State::of(&g).with_idle(idle).set(&mut g);
        }
    }

    /// Empties a locked slot and returns its object, if any, for the caller to free (by dropping
    /// it); releases its block of the backing device, if it was written back; updates the
    /// statistics and clears the flags, the size and the access time.
    pub(crate) fn take<'t>(&self, g: &mut SlotGuard<'t>) -> Option<Handle<'t>> {
        let mut tally = Tally::default();
        let h = self.take_tallied(g, &mut tally);
        tally.apply(&self.stats);
        h
    }

    /// [`take`](Self::take), with the statistics' decrements added to `tally` for the caller to
    /// apply (once for many slots: each is an atomic operation).
    #[inline(always)]
    fn take_tallied<'t>(&self, g: &mut SlotGuard<'t>, tally: &mut Tally) -> Option<Handle<'t>> {
        let w = State::of(g);
        State::EMPTY.set(g);
        g.set_aux(0);
        // Whatever is stored next, swap has not freed it: a queued free must leave it. A notify
        // whose bit is cleared here is counted here (its free is this one).
        tally.notified(self.stale.clear(g.index()));
        if w.is_wb() {
            if let Some(block) = g.word() {
                self.release_block(block as u64);
            }
        }
        let h = g.take();
        tally.count(w, h.is_some());
        h
    }

    /// Stores `new` in a locked slot, in state `st` (a repeated word, or an object of the
    /// state's size), with a fresh access time, after emptying it as [`take`](Self::take) does;
    /// the old object is freed. The statistics change once each, by the difference: a stored
    /// page replaced by another leaves `pages_stored` as it was.
    ///
    /// Fails with `EINVAL` if `new` is an object of another pool, before anything changes (that
    /// object is freed).
    #[inline(always)]
    pub(crate) fn store<'t>(&self, g: &mut SlotGuard<'t>, new: Contents<'t>, st: State) -> Result {
        let object = match &new {
            Contents::Object(h) if !core::ptr::eq(h.pool(), &**self.pool()) => return Err(EINVAL),
            Contents::Object(_) => true,
            Contents::Word(_) => false,
        };
        let mut gone = Tally::default();
        drop(self.take_tallied(g, &mut gone));
        let mut came = Tally::default();
        let r = g.replace(new);
        if r.is_ok() {
            st.set(g);
            accessed(g);
            came.count(st, object);
        }
        came.apply_since(&gone, &self.stats);
        r.map(drop)
    }

    /// Empties a locked slot and frees its object.
    pub(crate) fn clear(&self, g: &mut SlotGuard<'_>) {
        drop(self.take(g));
    }
}

impl Table {
    /// Reserves a free block of the backing device; `None` if there is none.
    pub(crate) fn reserve_block(&self) -> Option<u64> {
        let b = self.blocks.reserve()?;
        self.stats.bd_count.inc();
        Some(b)
    }

    /// Releases a block of the backing device that [`reserve_block`](Self::reserve_block) gave.
    pub(crate) fn release_block(&self, block: u64) {
        if self.blocks.test_and_clear(block) {
            self.stats.bd_count.dec();
        }
    }
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
impl Table {
    /// Stores an object of 100 bytes of `byte` in slot `i`, as a write does (emptying it first).
    pub(crate) fn store_bytes(&self, i: usize, byte: u8) -> Result {
        // Allocate first: the slot lock disables preemption.
        let h = self.pool().alloc(100, GFP_KERNEL)?.write(&[byte; 100])?;
        let mut g = self.slots.lock(i).ok_or(EINVAL)?;
        self.store(&mut g, Contents::Object(h), State::stored(100, false))
    }
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_slots)]
mod tests {
    use super::*;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use kernel::{c_str, workqueue};
    use kernel::{kunit_expect, kunit_expect_eq};

    fn pool(name: &'static CStr) -> Result<Arc<Pool>> {
        Ok(Arc::new(Pool::new(name)?, GFP_KERNEL)?)
    }

    #[test]
    fn lock_stress() -> Result {
        const ROUNDS: usize = 200_000;
        // The caller bits as a second counter, published by each unlock.
        const COUNTER_MASK: u32 = (1 << 17) - 1;
        // A non-atomic counter in the slot's word, incremented under the lock from two workers
        // and this thread: any lost update shows.
        let t = Arc::new(
            Table::new(pool(c_str!("rzram_kunit_stress"))?, 1, 0)?,
            GFP_KERNEL,
        )?;
        let done = Arc::new(AtomicUsize::new(0), GFP_KERNEL)?;
        let bump = |t: &Table| {
            if let Some(mut g) = t.slots.lock(0) {
                let v = g.word().unwrap_or(0);
                let _ = g.replace(Contents::Word(v + 1));
                let b = g.bits();
                g.set_bits((b + 1) & COUNTER_MASK);
            }
        };
        for _ in 0..2 {
            let (t, done) = (t.clone(), done.clone());
            workqueue::system_unbound().try_spawn(GFP_KERNEL, move || {
                for _ in 0..ROUNDS {
                    bump(&t);
                }
                done.fetch_add(1, Ordering::Release);
            })?;
        }
        for _ in 0..ROUNDS {
            bump(&t);
        }
        while done.load(Ordering::Acquire) < 2 {
            core::hint::spin_loop();
        }
        assert_eq!(t.slots.lock(0).and_then(|g| g.word()), Some(3 * ROUNDS));
        assert_eq!(
            t.slots.bits(0).map(|b| b as usize),
            Some((3 * ROUNDS) & COUNTER_MASK as usize)
        );
        Ok(())
    }

    /// An object of another pool is refused before the slot changes: what it held, and the
    /// statistics, stay as they were.
    #[test]
    fn store_refuses_a_foreign_object() -> Result {
        let pool = pool(c_str!("rzram_kunit_store"))?;
        let other = Pool::new(c_str!("rzram_kunit_store2"))?;
        let table = Table::new(pool.clone(), 1, 0)?;
        table.store_bytes(0, 1)?;
        let theirs = other.alloc(100, GFP_KERNEL)?.write(&[2; 100])?;
        let mut g = table.slots.lock(0).ok_or(EINVAL)?;
        let r = table.store(&mut g, Contents::Object(theirs), State::stored(100, false));
        assert_eq!(r, Err(EINVAL));
        assert_eq!(&*g.map_read(100)?, &[1; 100]);
        drop(g);
        assert_eq!(other.live_objects(), 0);
        assert_eq!(pool.live_objects(), 1);
        let s = &table.stats;
        assert_eq!((s.pages_stored.get(), s.compr_data_size.get()), (1, 100));
        Ok(())
    }

    /// Backing-device blocks: every block once, never one beyond the device, a released block
    /// is reserved again, a release of a free block changes nothing; `bd_count` follows.
    #[test]
    fn backing_blocks() -> Result {
        let none = Table::new(pool(c_str!("rzram_kunit_blocks0"))?, 1, 0)?;
        assert_eq!(none.reserve_block(), None);
        none.release_block(0);
        assert_eq!(none.stats.bd_count.get(), 0);

        let t = Table::new(pool(c_str!("rzram_kunit_blocks"))?, 1, 70)?;
        let mut seen = KVec::new();
        while let Some(b) = t.reserve_block() {
            assert!(b < 70 && !seen.contains(&b));
            seen.push(b, GFP_KERNEL)?;
        }
        assert_eq!(seen.len(), 70);
        assert_eq!(t.stats.bd_count.get(), 70);
        t.release_block(65);
        t.release_block(3);
        assert_eq!(t.stats.bd_count.get(), 68);
        // The lowest free block first.
        assert_eq!(t.reserve_block(), Some(3));
        assert_eq!(t.reserve_block(), Some(65));
        assert_eq!(t.reserve_block(), None);
        // Released twice, or never reserved: counted once.
        t.release_block(10);
        t.release_block(10);
        t.release_block(1000);
        assert_eq!(t.stats.bd_count.get(), 69);
        Ok(())
    }

    /// The slot table of a large device is allocated with vmalloc(): its size is not capped at
    /// kvmalloc()'s INT_MAX, and one too large for memory fails with ENOMEM, quietly.
    #[test]
    fn large_device_sizes() -> Result {
        let slot = core::mem::size_of::<Slot>();
        #[cfg(CONFIG_64BIT)]
        {
            // 1 TiB: 2^28 slots of 4 KiB pages, 4 GiB of table.
            let pages = (1usize << 40) / kernel::page::PAGE_SIZE;
            let bytes = zsmalloc::Table::bytes_for(pages);
            kunit_expect_eq!(bytes, Ok(pages * slot));
            kunit_expect!(bytes.is_ok_and(|b| b > i32::MAX as usize));
            // 2^40 slots do not fit in memory: ENOMEM, no warning.
            kunit_expect_eq!(
                Table::new(pool(c_str!("rzram_kunit_big"))?, 1usize << 40, 0).err(),
                Some(ENOMEM)
            );
        }
        kunit_expect_eq!(zsmalloc::Table::bytes_for(usize::MAX).err(), Some(ENOMEM));
        kunit_expect_eq!(zsmalloc::Table::bytes_for(8), Ok(8 * slot));
        Ok(())
    }
}
