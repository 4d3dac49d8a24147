// SPDX-License-Identifier: GPL-2.0

//! Device statistics, as zram keeps them; shown in `mm_stat`, `io_stat`, `bd_stat` and
//! `debug_stat` as a [`Snapshot`]. The counts of stored pages and their sizes change when a slot
//! is emptied or filled (`slots.rs`, a batch of slots at a time through a [`Tally`]) or its
//! object replaced in place ([`Stats::object_shrunk`]); the event counters where the event
//! happens.

use crate::state::State;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::page::PAGE_SIZE;

/// A statistics counter.
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn add(&self, v: u64) {
        self.0.fetch_add(v, Ordering::Relaxed);
    }

    pub(crate) fn sub(&self, v: u64) {
        self.0.fetch_sub(v, Ordering::Relaxed);
    }

    pub(crate) fn inc(&self) {
        self.add(1);
    }

    pub(crate) fn dec(&self) {
        self.sub(1);
    }

    pub(crate) fn set(&self, v: u64) {
        self.0.store(v, Ordering::Relaxed);
    }

    /// Raises the counter to `v` if it is lower.
    ///
    /// A load first, as zram's `update_used_max()`: once the maximum is reached, a write on every
    /// store would take the counter's cache line from the other CPUs for nothing.
    pub(crate) fn raise_to(&self, v: u64) {
        if self.0.load(Ordering::Relaxed) < v {
            self.0.fetch_max(v, Ordering::Relaxed);
        }
    }
}

/// The statistics of an initialised device; a reset drops them with the device's memory.
#[derive(Default)]
pub(crate) struct Stats {
    /// Bytes of compressed data stored (huge pages count a page each).
    pub(crate) compr_data_size: Counter,
    /// Pages stored, including same-filled ones.
    pub(crate) pages_stored: Counter,
    /// Pages stored uncompressed.
    pub(crate) huge_pages: Counter,
    /// Pages ever stored uncompressed since the device was initialised.
    pub(crate) huge_pages_since: Counter,
    /// Pages stored as one repeated word.
    pub(crate) same_pages: Counter,
    /// The most pages the pool has held.
    pub(crate) max_used_pages: Counter,
    pub(crate) failed_reads: Counter,
    pub(crate) failed_writes: Counter,
    /// Pages freed by discards and write-zeroes, counted as they run, and swap notifications,
    /// counted off their path where their stale bit is cleared (`Table::free_stale`,
    /// `Table::take`; see `SwapFreeQueue::notify`; a notify past the bitmap at once): so the
    /// count, like `mm_stat`, lags a swap free by the drain's delay.
    pub(crate) notify_free: Counter,
    /// Writes that had to wait for memory (the allocation slow path).
    pub(crate) writestall: Counter,
    /// Blocks of the backing device in use (written back or being written), in pages.
    pub(crate) bd_count: Counter,
    /// Pages read from the backing device.
    pub(crate) bd_reads: Counter,
    /// Pages written to the backing device.
    pub(crate) bd_writes: Counter,
}

impl Stats {
    /// A page's object in memory, of `old_size` bytes (`was_huge`: stored uncompressed), was
    /// replaced by one of `new_size` bytes, smaller and not huge, or 0 for none: the page was
    /// recompressed smaller, or written back. The page stays stored.
    pub(crate) fn object_shrunk(&self, old_size: usize, was_huge: bool, new_size: usize) {
        // One change, so that no reader sees the old size gone and the new one not yet there.
        self.compr_data_size
            .sub(old_size.saturating_sub(new_size) as u64);
        if was_huge {
            self.huge_pages.dec();
        }
    }

    /// The counters' values now, with the pool's pages (`pool_pages`) and compacted pages
    /// (`pages_compacted`), which the pool counts.
    pub(crate) fn snapshot(&self, pool_pages: u64, pages_compacted: u64) -> Snapshot {
        Snapshot {
            pages_stored: self.pages_stored.get(),
            compr_data_size: self.compr_data_size.get(),
            pool_pages,
            max_used_pages: self.max_used_pages.get(),
            same_pages: self.same_pages.get(),
            pages_compacted,
            huge_pages: self.huge_pages.get(),
            huge_pages_since: self.huge_pages_since.get(),
            failed_reads: self.failed_reads.get(),
            failed_writes: self.failed_writes.get(),
            notify_free: self.notify_free.get(),
            writestall: self.writestall.get(),
            bd_count: self.bd_count.get(),
            bd_reads: self.bd_reads.get(),
            bd_writes: self.bd_writes.get(),
        }
    }
}

/// The statistics' values at one moment (all 0 for a device not initialised), read by the
/// attributes as zram shows them. Sizes in pages unless named in bytes.
#[derive(Default)]
pub(crate) struct Snapshot {
    pages_stored: u64,
    compr_data_size: u64,
    pool_pages: u64,
    max_used_pages: u64,
    same_pages: u64,
    pages_compacted: u64,
    huge_pages: u64,
    huge_pages_since: u64,
    failed_reads: u64,
    failed_writes: u64,
    notify_free: u64,
    writestall: u64,
    bd_count: u64,
    bd_reads: u64,
    bd_writes: u64,
}

impl Snapshot {
    /// `mm_stat`'s nine values, with the pool limit `limit_pages`: the original data size, the
    /// compressed data size, the pool's size, its limit and its peak (in bytes), then the
    /// same-filled pages, the pages compaction freed, the huge pages and the huge pages ever
    /// stored.
    pub(crate) fn mm_stat(&self, limit_pages: u64) -> [u64; 9] {
        let bytes = |pages: u64| pages << PAGE_SIZE.trailing_zeros();
        [
            bytes(self.pages_stored),
            self.compr_data_size,
            bytes(self.pool_pages),
            bytes(limit_pages),
            bytes(self.max_used_pages),
            self.same_pages,
            self.pages_compacted,
            self.huge_pages,
            self.huge_pages_since,
        ]
    }

    /// `io_stat`'s counters: failed reads and writes, and the notified frees (zram shows a
    /// constant 0 between the writes and the frees, where it once counted invalid I/O).
    pub(crate) fn io_stat(&self) -> [u64; 3] {
        [self.failed_reads, self.failed_writes, self.notify_free]
    }

    /// `bd_stat`'s three values in 4 KiB units, as zram: the backing device's blocks in use, the
    /// pages read from it and the pages written to it.
    pub(crate) fn bd_stat(&self) -> [u64; 3] {
        let four_k = (PAGE_SIZE / 4096) as u64;
        [self.bd_count, self.bd_reads, self.bd_writes].map(|v| v * four_k)
    }

    /// `debug_stat`'s two counters: the writes that waited for memory and `miss_free`, always 0:
    /// rzram's notify takes no slot lock, unlike zram's, which counts there the notifies that
    /// found the slot locked.
    pub(crate) fn debug_stat(&self) -> [u64; 2] {
        [self.writestall, 0]
    }
}

/// Statistics changes of emptied slots, applied together.
#[derive(Default)]
pub(crate) struct Tally {
    /// Notifies counted (added); the rest are taken away.
    notify_free: u64,
    same_pages: u64,
    pages_stored: u64,
    compr_data_size: u64,
    huge_pages: u64,
}

impl Tally {
    /// Counts a swap notify whose free this is, if `counted`.
    #[inline(always)]
    pub(crate) fn notified(&mut self, counted: bool) {
        self.notify_free += u64::from(counted);
    }

    /// Counts a slot that held `w` (and an object, if `object`).
    #[inline(always)]
    pub(crate) fn count(&mut self, w: State, object: bool) {
        if w.is_same() {
            self.same_pages += 1;
            self.pages_stored += 1;
        }
        if w.is_wb() {
            self.pages_stored += 1;
        }
        if object {
            self.compr_data_size += w.size() as u64;
            self.pages_stored += 1;
            if w.is_huge() {
                self.huge_pages += 1;
            }
        }
    }

    /// Takes the counts away from the statistics, and adds the notifies.
    pub(crate) fn apply(&self, s: &Stats) {
        Tally::default().apply_since(self, s);
    }

    /// Adds the counts to the statistics and takes `gone`'s away, each counter changed once by
    /// the difference (each change is an atomic operation); adds `gone`'s notifies.
    #[inline(always)]
    pub(crate) fn apply_since(&self, gone: &Tally, s: &Stats) {
        for (c, came, went) in [
            (&s.same_pages, self.same_pages, gone.same_pages),
            (&s.pages_stored, self.pages_stored, gone.pages_stored),
            (
                &s.compr_data_size,
                self.compr_data_size,
                gone.compr_data_size,
            ),
            (&s.huge_pages, self.huge_pages, gone.huge_pages),
        ] {
            if came > went {
                c.add(came - went);
            } else if went > came {
                c.sub(went - came);
            }
        }
        if gone.notify_free != 0 {
            s.notify_free.add(gone.notify_free);
        }
    }
}
