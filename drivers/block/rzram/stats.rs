// SPDX-License-Identifier: GPL-2.0

//! Device statistics, as zram keeps them; shown in `mm_stat`, `io_stat` and `debug_stat`.

use core::sync::atomic::{AtomicU64, Ordering};

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
    /// `Table::take`; see `SwapFreeQueue::notify`).
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
