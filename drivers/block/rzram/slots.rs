// SPDX-License-Identifier: GPL-2.0

//! The slot table: one 16-byte entry per page of the disk.
//!
//! A slot is a [`PackedLock`] over a zsmalloc [`Entry`]. The lock word (32 bits) packs:
//!
//! ```text
//!  31     30..21   20     19       18    17     16..0
//! [LOCK] [unused] [-]  [PENDING] [HUGE] [SAME] [size: compressed bytes, up to 65536]
//! ```
//!
//! - `SAME`: the page is one machine word repeated; the entry holds the word, no memory is used.
//!   A slot never written has no flags and the word 0, so it reads as zeroes too.
//! - `HUGE`: the page did not compress below zsmalloc's huge class size and is stored raw.
//! - `PENDING`: swap freed the slot and its index waits in the deferred-free queue. A write
//!   clears it, so a late drain never frees new data.
//!
//! The entry (a handle or the word) is reached only through the lock's guard.

use crate::stats::Stats;
use kernel::{
    alloc::KVVec,
    prelude::*,
    sync::Arc,
    sync::{PackedGuard, PackedLock},
    zsmalloc::{DeferredFree, Entry, Handle, Pool},
};

/// Compressed size, in bytes.
pub(crate) const SIZE_MASK: u32 = (1 << 17) - 1;
/// The page is a repeated word, held in the entry.
pub(crate) const SAME: u32 = 1 << 17;
/// The page is stored uncompressed.
pub(crate) const HUGE: u32 = 1 << 18;
/// Swap freed the slot; its index is queued for the deferred free.
pub(crate) const PENDING: u32 = 1 << 19;

/// One page of the disk.
pub(crate) type Slot = PackedLock<Entry>;

#[cfg(CONFIG_64BIT)]
kernel::static_assert!(core::mem::size_of::<Slot>() == 16);

/// What a slot's lock word says about its contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Word(pub(crate) u32);

impl Word {
    pub(crate) fn size(self) -> usize {
        (self.0 & SIZE_MASK) as usize
    }

    pub(crate) fn has(self, flag: u32) -> bool {
        self.0 & flag != 0
    }

    /// The word for contents of `size` bytes with `flags`.
    pub(crate) fn new(size: usize, flags: u32) -> Word {
        Word((size as u32 & SIZE_MASK) | (flags & !SIZE_MASK))
    }
}

/// The pool, the slots and the statistics of an initialised disk.
pub(crate) struct Table {
    pub(crate) pool: Arc<Pool>,
    pub(crate) slots: KVVec<Slot>,
    pub(crate) stats: Stats,
}

impl Table {
    pub(crate) fn new(pool: Arc<Pool>, pages: usize) -> Result<Self> {
        let mut slots = KVVec::with_capacity(pages, GFP_KERNEL)?;
        for _ in 0..pages {
            slots.push(Slot::new(0, Entry::default()), GFP_KERNEL)?;
        }
        Ok(Table {
            pool,
            slots,
            stats: Stats::default(),
        })
    }

    /// Empties a locked slot and returns its object, if any, for the caller to free; updates
    /// the statistics and clears the word.
    pub(crate) fn take(&self, g: &mut PackedGuard<'_, Entry>) -> Option<Handle> {
        let w = Word(g.bits());
        g.set_bits(0);
        if w.has(SAME) {
            self.stats.same_pages.dec();
            self.stats.pages_stored.dec();
        }
        let h = g.replace(Entry::word(0)).into_handle();
        if h.is_some() {
            self.stats.compr_data_size.sub(w.size() as u64);
            self.stats.pages_stored.dec();
            if w.has(HUGE) {
                self.stats.huge_pages.dec();
            }
        }
        h
    }

    /// Empties a locked slot and frees its object.
    pub(crate) fn clear(&self, g: &mut PackedGuard<'_, Entry>) {
        if let Some(h) = self.take(g) {
            self.pool.free(h);
        }
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        // The pool must be empty before it is destroyed.
        let handles = self
            .slots
            .iter_mut()
            .filter_map(|s| s.get_mut().take_handle());
        self.pool.free_bulk(handles);
    }
}

/// Frees the slots whose indices swap queued in `swap_slot_free_notify`.
pub(crate) struct Freer(pub(crate) Arc<Table>);

impl DeferredFree for Freer {
    type Item = u32;

    fn drain(&self, items: &[u32]) {
        let t = &*self.0;
        // Each slot is emptied under its lock; the objects are then freed together, sorted by
        // size class, taking each class lock once per batch.
        let taken = items.iter().filter_map(|&i| {
            let mut g = t.slots.get(i as usize)?.lock();
            // A write since the notify replaced the contents and cleared the flag.
            if Word(g.bits()).has(PENDING) {
                t.take(&mut g)
            } else {
                None
            }
        });
        t.pool.free_bulk(taken);
    }
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_slots)]
mod tests {
    use super::*;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use kernel::{c_str, kunit_expect, kunit_expect_eq, sync::Arc, workqueue};

    #[test]
    fn packing() {
        #[cfg(CONFIG_64BIT)]
        kunit_expect_eq!(core::mem::size_of::<Slot>(), 16);
        for size in [0, 1, 100, 4095, 4096, 65536] {
            for flags in [0, SAME, HUGE, PENDING, HUGE | PENDING] {
                let w = Word::new(size, flags);
                kunit_expect_eq!(w.size(), size);
                kunit_expect_eq!(w.has(SAME), flags & SAME != 0);
                kunit_expect_eq!(w.has(HUGE), flags & HUGE != 0);
                kunit_expect_eq!(w.has(PENDING), flags & PENDING != 0);
            }
        }
        // The caller's bits survive locking and never show the lock bit.
        let slot = Slot::new(Word::new(300, HUGE).0, Entry::word(9));
        {
            let mut g = slot.lock();
            kunit_expect!(slot.is_locked());
            kunit_expect_eq!(Word(slot.bits()), Word::new(300, HUGE));
            kunit_expect!(slot.try_lock().is_none());
            g.set_bits(Word::new(12, SAME).0);
        }
        kunit_expect!(!slot.is_locked());
        kunit_expect_eq!(Word(slot.bits()), Word::new(12, SAME));
        kunit_expect_eq!(slot.lock().as_word(), Some(9));
    }

    #[test]
    fn lock_stress() -> Result {
        const ROUNDS: usize = 200_000;
        // A non-atomic counter in the slot's entry, incremented under the lock from two workers
        // and this thread: any lost update shows.
        let slot = Arc::new(Slot::new(0, Entry::word(0)), GFP_KERNEL)?;
        let done = Arc::new(AtomicUsize::new(0), GFP_KERNEL)?;
        let bump = |slot: &Slot| {
            let mut g = slot.lock();
            let v = g.as_word().unwrap_or(0);
            let _ = g.replace(Entry::word(v + 1));
            let b = g.bits();
            g.set_bits((b + 1) & SIZE_MASK);
        };
        for _ in 0..2 {
            let (slot, done) = (slot.clone(), done.clone());
            workqueue::system_unbound().try_spawn(GFP_KERNEL, move || {
                for _ in 0..ROUNDS {
                    bump(&slot);
                }
                done.fetch_add(1, Ordering::Release);
            })?;
        }
        for _ in 0..ROUNDS {
            bump(&slot);
        }
        while done.load(Ordering::Acquire) < 2 {
            core::hint::spin_loop();
        }
        kunit_expect_eq!(slot.lock().as_word(), Some(3 * ROUNDS));
        kunit_expect_eq!(slot.bits() as usize, (3 * ROUNDS) & SIZE_MASK as usize);
        Ok(())
    }

    #[test]
    fn deferred_drain_respects_writes() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rzram_kunit_slots"))?, GFP_KERNEL)?;
        let table = Arc::new(Table::new(pool.clone(), 4)?, GFP_KERNEL)?;
        for (i, slot) in table.slots.iter().enumerate() {
            // Allocate first: the slot lock disables preemption.
            let h = pool.alloc(100, GFP_KERNEL)?;
            let mut g = slot.lock();
            let _ = g.replace(Entry::handle(h));
            g.set_bits(Word::new(100, if i == 1 { 0 } else { PENDING }).0);
            table.stats.pages_stored.inc();
            table.stats.compr_data_size.add(100);
        }
        // Slot 1 was rewritten after its notify (no PENDING): the drain must leave it.
        Freer(table.clone()).drain(&[0, 1, 2, 3, 9999]);
        kunit_expect!(table.slots[0].lock().as_handle().is_none());
        kunit_expect!(table.slots[1].lock().as_handle().is_some());
        kunit_expect_eq!(table.stats.pages_stored.get(), 1);
        kunit_expect_eq!(table.stats.compr_data_size.get(), 100);
        table.clear(&mut table.slots[1].lock());
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }
}
