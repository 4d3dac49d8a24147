// SPDX-License-Identifier: GPL-2.0

//! The slot table: one 16-byte slot per page of the disk.
//!
//! The slots are a [`zsmalloc::Table`], which owns the device's pool: each slot holds a zsmalloc
//! object of the pool or a plain word, under a lock of its own. The slot's lock word (32 bits)
//! packs:
//!
//! ```text
//!  31     30       29..20   19        18     17     16..0
//! [LOCK] [OBJECT] [unused] [PENDING] [HUGE] [SAME] [size: compressed bytes, up to 65536]
//! ```
//!
//! - `LOCK` and `OBJECT` belong to the table: the lock, and whether the slot holds an object or a
//!   word. The 30 bits below are rzram's.
//! - `SAME`: the page is one machine word repeated; the slot holds the word, no memory is used.
//!   A slot never written has no flags and the word 0, so it reads as zeroes too.
//! - `HUGE`: the page did not compress below zsmalloc's huge class size and is stored raw.
//! - `PENDING`: swap freed the slot and its index waits in the deferred-free queue. A write
//!   clears it, so a late drain never frees new data.
//!
//! The contents (an object or the word) are reached only through the slot's guard.

use crate::stats::Stats;
use kernel::{
    prelude::*,
    sync::Arc,
    zsmalloc::{self, DeferredFree, Handle, Pool, SlotGuard},
};

/// Compressed size, in bytes.
pub(crate) const SIZE_MASK: u32 = (1 << 17) - 1;
/// The page is a repeated word, held in the slot.
pub(crate) const SAME: u32 = 1 << 17;
/// The page is stored uncompressed.
pub(crate) const HUGE: u32 = 1 << 18;
/// Swap freed the slot; its index is queued for the deferred free.
pub(crate) const PENDING: u32 = 1 << 19;

kernel::static_assert!(PENDING <= zsmalloc::Table::MAX_BITS);

/// One page of the disk, as stored.
pub(crate) type Slot = zsmalloc::Slot;

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
    /// The device's pool; the same as `slots.pool()`.
    pub(crate) pool: Arc<Pool>,
    pub(crate) slots: zsmalloc::Table,
    pub(crate) stats: Stats,
}

impl Table {
    /// A table of `pages` empty slots on `pool`. Fails with `ENOMEM`, without a warning, if
    /// memory is short or `pages` is too large.
    pub(crate) fn new(pool: Arc<Pool>, pages: usize) -> Result<Self> {
        Ok(Table {
            slots: zsmalloc::Table::new(pool.clone(), pages)?,
            pool,
            stats: Stats::default(),
        })
    }

    /// Empties a locked slot and returns its object, if any, for the caller to free (by dropping
    /// it); updates the statistics and clears the flags and the size.
    pub(crate) fn take<'t>(&self, g: &mut SlotGuard<'t>) -> Option<Handle<'t>> {
        let w = Word(g.bits());
        g.set_bits(0);
        if w.has(SAME) {
            self.stats.same_pages.dec();
            self.stats.pages_stored.dec();
        }
        let h = g.take();
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
    pub(crate) fn clear(&self, g: &mut SlotGuard<'_>) {
        drop(self.take(g));
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
            let mut g = t.slots.lock(i as usize)?;
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
    use kernel::{c_str, kunit_expect, kunit_expect_eq, workqueue, zsmalloc::Contents};

    fn pool(name: &'static CStr) -> Result<Arc<Pool>> {
        Ok(Arc::new(Pool::new(name)?, GFP_KERNEL)?)
    }

    #[test]
    fn packing() -> Result {
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
        // The flags survive locking, and the table's own bits never show.
        let t = Table::new(pool(c_str!("rzram_kunit_pack"))?, 1)?;
        {
            let mut g = t.slots.lock(0).ok_or(EINVAL)?;
            g.replace(Contents::Word(9))?;
            g.set_bits(Word::new(300, HUGE).0);
        }
        kunit_expect_eq!(t.slots.bits(0).map(Word), Some(Word::new(300, HUGE)));
        {
            let mut g = t.slots.lock(0).ok_or(EINVAL)?;
            kunit_expect_eq!(Word(g.bits()), Word::new(300, HUGE));
            kunit_expect_eq!(t.slots.try_lock(0).err(), Some(EBUSY));
            g.set_bits(Word::new(12, SAME).0);
        }
        kunit_expect!(t.slots.try_lock(0).is_ok());
        kunit_expect_eq!(t.slots.bits(0).map(Word), Some(Word::new(12, SAME)));
        kunit_expect_eq!(t.slots.lock(0).and_then(|g| g.word()), Some(9));
        Ok(())
    }

    #[test]
    fn lock_stress() -> Result {
        const ROUNDS: usize = 200_000;
        // A non-atomic counter in the slot's word, incremented under the lock from two workers
        // and this thread: any lost update shows.
        let t = Arc::new(
            Table::new(pool(c_str!("rzram_kunit_stress"))?, 1)?,
            GFP_KERNEL,
        )?;
        let done = Arc::new(AtomicUsize::new(0), GFP_KERNEL)?;
        let bump = |t: &Table| {
            if let Some(mut g) = t.slots.lock(0) {
                let v = g.word().unwrap_or(0);
                let _ = g.replace(Contents::Word(v + 1));
                let b = g.bits();
                g.set_bits((b + 1) & SIZE_MASK);
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
        kunit_expect_eq!(t.slots.lock(0).and_then(|g| g.word()), Some(3 * ROUNDS));
        kunit_expect_eq!(
            t.slots.bits(0).map(|b| b as usize),
            Some((3 * ROUNDS) & SIZE_MASK as usize)
        );
        Ok(())
    }

    #[test]
    fn deferred_drain_respects_writes() -> Result {
        let pool = pool(c_str!("rzram_kunit_slots"))?;
        let table = Arc::new(Table::new(pool.clone(), 4)?, GFP_KERNEL)?;
        for i in 0..4 {
            // Allocate first: the slot lock disables preemption.
            let h = pool.alloc(100, GFP_KERNEL)?.write(&[1; 100])?;
            let mut g = table.slots.lock(i).ok_or(EINVAL)?;
            g.replace(Contents::Object(h))?;
            g.set_bits(Word::new(100, if i == 1 { 0 } else { PENDING }).0);
            table.stats.pages_stored.inc();
            table.stats.compr_data_size.add(100);
        }
        // Slot 1 was rewritten after its notify (no PENDING): the drain must leave it.
        Freer(table.clone()).drain(&[0, 1, 2, 3, 9999]);
        kunit_expect!(!table.slots.lock(0).ok_or(EINVAL)?.has_object());
        kunit_expect!(table.slots.lock(1).ok_or(EINVAL)?.has_object());
        kunit_expect_eq!(table.stats.pages_stored.get(), 1);
        kunit_expect_eq!(table.stats.compr_data_size.get(), 100);
        kunit_expect_eq!(pool.live_objects(), 1);
        table.clear(&mut table.slots.lock(1).ok_or(EINVAL)?);
        kunit_expect_eq!(pool.live_objects(), 0);
        kunit_expect_eq!(pool.total_pages(), 0);
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
                Table::new(pool(c_str!("rzram_kunit_big"))?, 1usize << 40).err(),
                Some(ENOMEM)
            );
        }
        kunit_expect_eq!(zsmalloc::Table::bytes_for(usize::MAX).err(), Some(ENOMEM));
        kunit_expect_eq!(zsmalloc::Table::bytes_for(8), Ok(8 * slot));
        Ok(())
    }
}
