// SPDX-License-Identifier: GPL-2.0

//! Swap's frees, deferred: the slots `swap_slot_free_notify` marked stale (`bitmaps.rs`) are
//! freed in batches by the zsmalloc deferred free's worker, off swap's path, unless the deferred
//! free's buffers are full: then the notify that finds them full frees its batch itself.

use crate::{
    bitmaps::{Marked, Stale},
    slots::Table,
};
use kernel::{
    prelude::*,
    sync::Arc,
    zsmalloc::{Deferred, DeferredFree, DeferredOptions, Pool},
};

/// The swap frees of one storage: the notify's side, which marks slots stale and queues their
/// words, and the deferred free that drains them ([`SwapFrees`]). Dropping it drains what is
/// queued.
pub(crate) struct SwapFreeQueue {
    table: Arc<Table>,
    deferred: Pin<KBox<Deferred<SwapFrees>>>,
}

impl SwapFreeQueue {
    /// The swap frees of `table`, whose objects are `pool`'s.
    pub(crate) fn new(pool: Arc<Pool>, table: Arc<Table>) -> Result<Self> {
        let options = DeferredOptions {
            batch: SWAP_FREE_BATCH,
            ..Default::default()
        };
        let deferred = Deferred::new(pool, SwapFrees(table.clone()), options)?;
        Ok(SwapFreeQueue { table, deferred })
    }

    /// Swap freed slot `index`: marks it stale, and queues the slot's word of the stale
    /// bitmap for the deferred free unless a notify before did, which then empties the slot if
    /// it is still stale.
    ///
    /// It takes no lock and costs one atomic OR; once in 32 notifies to neighbouring slots, a
    /// push onto this CPU's queue too. When the deferred free's buffers are full, that push
    /// frees the word's slots itself instead ([`SwapFrees`]'s drain: slot locks, then zsmalloc's
    /// class locks). Runs in atomic context under swap's lock. Why this is enough:
    ///
    /// - a read of the same page under way holds the slot lock; the drain takes it too, so the
    ///   page is never freed under its reader;
    /// - a write, discard or free after the notify empties the slot under its lock, which clears
    ///   the stale bit: the drain, which clears the bit under the slot lock, then leaves the new
    ///   contents alone; a notify racing a write of the same page (which swap never does: it
    ///   frees a slot before it reuses it) frees whichever contents the slot holds when the
    ///   drain runs;
    /// - a bit set while its word is queued is seen by that word's drain, and a bit set after
    ///   the drain took the word queues the word again (the invariant of `bitmaps::Stale`); a
    ///   word that cannot be queued (interrupt context, never for swap) waits for the drain of
    ///   another word;
    /// - the storage cannot go away meanwhile: the caller reached it under the RCU read-side
    ///   lock, and a reset drops it only after a grace period, draining the queue first
    ///   ([`Deferred`]'s drop).
    #[inline]
    pub(crate) fn notify(&self, index: usize) {
        match self.table.mark_stale(index) {
            Marked::Queued => {}
            // Queued, drained at once if the queue is full (`SwapFrees::drain`), or, from
            // interrupt context, orphaned for the next drain.
            Marked::First(word) => self.queue(word),
            // Never from swap: nothing to free; counted here, off the common path.
            Marked::OutOfRange => self.table.stats().notify_free.inc(),
        }
    }

    /// Queues word `word` of the stale bitmap, which a notify marked first.
    #[inline(never)]
    fn queue(&self, word: u32) {
        if self.deferred.push(word).is_err() {
            // Interrupt context (never for swap): the next drain, when swap frees a slot of
            // another word, takes the word; its slots keep their contents until then (or until
            // they are rewritten).
            self.table.orphan_stale();
        }
    }

    /// The deferred free, for tests.
    #[cfg(CONFIG_RZRAM_KUNIT_TEST)]
    pub(crate) fn deferred(&self) -> &Deferred<SwapFrees> {
        &self.deferred
    }
}

/// Frees the slots that swap freed in `swap_slot_free_notify`, given the words of the stale
/// bitmap that the notifies queued ([`Marked::First`]), and every word orphaned since the last
/// drain ([`Table::orphan_stale`]).
///
/// One drain covers [`SWAP_FREE_BATCH`] words, 32 slots each (up to a buffer page of words if a
/// CPU found no spare page to hand its batch over); the queue runs it in its worker without a
/// resched point (or inline, in atomic context), as it does any drain.
///
/// Its drain may race with reads and writes of the same slots, and with itself (the worker and a
/// full queue's inline drain): [`Table::free_stale`] empties each slot under its lock, and only
/// if it is still stale.
pub(crate) struct SwapFrees(pub(crate) Arc<Table>);

/// The words of the stale bitmap a CPU queues before the deferred free's worker takes them: as
/// many slots as the C zram's buffer page of `u32` slot numbers (1024 with 4 KiB pages), so that
/// the drain runs beside an exiting process's munmap, not after it.
pub(crate) const SWAP_FREE_BATCH: usize =
    kernel::page::PAGE_SIZE / core::mem::size_of::<u32>() / Stale::PER_WORD;

impl DeferredFree for SwapFrees {
    type Item = u32;

    fn drain(&self, words: &[u32]) {
        self.0.free_stale(words);
    }
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kernel::prelude::kunit_tests(rzram_swap_free)]
mod tests {
    use super::*;
    use kernel::c_str;

    fn pool(name: &'static CStr) -> Result<Arc<Pool>> {
        Ok(Arc::new(Pool::new(name)?, GFP_KERNEL)?)
    }

    #[test]
    fn deferred_drain_respects_writes() -> Result {
        let pool = pool(c_str!("rzram_kunit_slots"))?;
        let table = Arc::new(Table::new(pool.clone(), 4, 0)?, GFP_KERNEL)?;
        let s = table.stats();
        for i in 0..4 {
            table.store_bytes(i, 1)?;
        }
        // The first notify to a word queues it; the others ride on it.
        assert_eq!(table.mark_stale(0), Marked::First(0));
        for i in 1..4 {
            assert_eq!(table.mark_stale(i), Marked::Queued);
        }
        assert_eq!(table.mark_stale(32), Marked::OutOfRange);
        assert_eq!(table.stale_pending(), 4);
        // Slot 1 was rewritten after its notify, which cleared its stale bit (and counted the
        // notify): the drain must leave it.
        table.store_bytes(1, 1)?;
        assert!(!table.is_stale(&table.lock(1).ok_or(EINVAL)?));
        assert_eq!((s.notify_free.get(), table.stale_pending()), (1, 3));
        // The word queued twice, and a word past the end: the second finds nothing to free.
        SwapFrees(table.clone()).drain(&[0, 0, 9999]);
        assert!(!table.lock(0).ok_or(EINVAL)?.has_object());
        assert!(table.lock(1).ok_or(EINVAL)?.has_object());
        assert_eq!(s.pages_stored.get(), 1);
        assert_eq!(s.compr_data_size.get(), 100);
        assert_eq!(pool.live_objects(), 1);
        assert_eq!((s.notify_free.get(), table.stale_pending()), (4, 0));
        // The drain took the word: the next notify queues it again.
        assert_eq!(table.mark_stale(1), Marked::First(0));
        SwapFrees(table.clone()).drain(&[0]);
        SwapFrees(table.clone()).drain(&[0]);
        assert_eq!(pool.live_objects(), 0);
        assert_eq!(s.pages_stored.get(), 0);
        assert_eq!(pool.total_pages(), 0);
        assert_eq!(s.notify_free.get(), 5);
        Ok(())
    }

    /// A word that could not be queued stays queued for the notifies after it, and the next
    /// drain, of another word, takes it.
    #[test]
    fn orphaned_word_drained_by_next_drain() -> Result {
        let pool = pool(c_str!("rzram_kunit_orphan"))?;
        let table = Arc::new(Table::new(pool.clone(), 64, 0)?, GFP_KERNEL)?;
        let s = table.stats();
        for i in [2, 3, 40] {
            table.store_bytes(i, 1)?;
        }
        assert_eq!(table.mark_stale(2), Marked::First(0));
        table.orphan_stale();
        assert_eq!(table.mark_stale(3), Marked::Queued);
        assert_eq!(table.mark_stale(40), Marked::First(1));
        SwapFrees(table.clone()).drain(&[1]);
        assert_eq!(table.stale_pending(), 0);
        assert_eq!(pool.live_objects(), 0);
        assert_eq!((s.pages_stored.get(), s.compr_data_size.get()), (0, 0));
        assert_eq!(s.notify_free.get(), 3);
        // Taken: no later drain takes word 0 unless it is queued again.
        assert_eq!(table.mark_stale(3), Marked::First(0));
        assert_eq!(table.mark_stale(41), Marked::First(1));
        SwapFrees(table.clone()).drain(&[1]);
        assert_eq!(table.stale_pending(), 1);
        Ok(())
    }

    /// Slots map to words of 32; the last word's bits past the last slot are marked and
    /// drained like the others, with nothing to free.
    #[test]
    fn stale_words() -> Result {
        let table = Arc::new(
            Table::new(pool(c_str!("rzram_kunit_stale"))?, 70, 0)?,
            GFP_KERNEL,
        )?;
        assert_eq!(table.mark_stale(31), Marked::First(0));
        assert_eq!(table.mark_stale(0), Marked::Queued);
        assert_eq!(table.mark_stale(32), Marked::First(1));
        assert_eq!(table.mark_stale(63), Marked::Queued);
        assert_eq!(table.mark_stale(69), Marked::First(2));
        assert_eq!(table.mark_stale(95), Marked::Queued);
        assert_eq!(table.mark_stale(96), Marked::OutOfRange);
        assert_eq!(table.mark_stale(usize::MAX), Marked::OutOfRange);
        assert_eq!(table.stale_pending(), 6);
        SwapFrees(table.clone()).drain(&[2]);
        assert_eq!(table.stale_pending(), 4);
        assert_eq!(table.stats().notify_free.get(), 2);
        let mut word1: KVec<usize> = KVec::new();
        for i in table.stale().take_word(1) {
            word1.push(i, GFP_KERNEL)?;
        }
        assert_eq!(&word1[..], &[32, 63]);
        // Taken: the next notify to the word queues it again, and the bits stay until cleared.
        assert_eq!(table.mark_stale(40), Marked::First(1));
        assert_eq!(table.stale_pending(), 5);
        assert_eq!(table.stale().take_word(3).count(), 0);
        Ok(())
    }
}
