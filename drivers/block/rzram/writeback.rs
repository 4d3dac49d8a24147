// SPDX-License-Identifier: GPL-2.0

//! Writeback: pages moved out of memory to the backing device (a read of a written-back page
//! is the storage's, `storage.rs`).
//!
//! `writeback` picks the candidate pages (idle, huge, incompressible, or given by index), takes
//! them largest first as `recompress` does, and writes each to a block of the backing device of
//! its own: the page decompressed, or as stored (`compressed_writeback`). Up to
//! `writeback_batch_size` writes are in flight at once ([`WriteQueue`]); each completion is
//! handled as soon as the submitter needs its room, and the rest at the end.
//!
//! # Races, ruled out by construction
//!
//! A page's slot is unlocked while its write is in flight, so the page may be read, rewritten,
//! discarded, freed by swap or reset meanwhile:
//!
//! - the write is submitted with the slot marked `UNDER_WB`; anything that changes the contents
//!   clears the mark (a write or a free empties the whole state; swap's free marks the slot
//!   stale), and the completion commits the block to the slot only if the mark is still there
//!   and the slot is not stale: otherwise it releases the block, so no block is leaked and no
//!   new data is replaced by old;
//! - a block is reserved, and the page's worth taken from the writeback limit, once the page is
//!   read and marked for its write; both are given back on every path that does not commit it
//!   (write not submitted, failed write), and the block alone when the page changed meanwhile
//!   (the write counts against the limit, as in zram); `bd_count` counts the reserved blocks and
//!   returns to 0 when every page is freed;
//! - the queue of writes is local to one `writeback`, and each of its bios holds the queue's
//!   shared state and the backing device until it completes, so a completion never touches
//!   memory that is gone, whatever the submitter does;
//! - the writeback works on the storage it started with (a reference it holds), and only while
//!   that storage is the device's: it starts under the post-processing lock a reset waits for,
//!   after checking that no reset has replaced the storage (`Rzram::post_processing`), so a
//!   reset returns only when no writeback uses the old storage or its backing device; scan
//!   bounds and block indices come from that storage's own table, never from a size read
//!   elsewhere.

use crate::{args::WritebackArgs, candidates::candidates, state::State, storage::Storage};
use core::{
    ops::Range,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
};
use kernel::{
    block::bdev::{Completed, WriteQueue},
    error::code::*,
    page::PAGE_SIZE,
    prelude::*,
    zsmalloc::Contents,
};

/// `writeback_limit` counts 4 KiB units, as zram's.
const UNITS_PER_PAGE: u64 = (PAGE_SIZE / 4096) as u64;

/// `writeback_limit` and `writeback_limit_enable`: while enabled, each page written back takes
/// its size from the limit, and writeback stops with `EIO` when it is spent.
#[derive(Default)]
pub(crate) struct WbLimit {
    enabled: AtomicBool,
    /// In 4 KiB units.
    limit: AtomicU64,
}

impl WbLimit {
    /// Whether the limit is enabled (`writeback_limit_enable`).
    pub(crate) fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Enables or disables the limit.
    pub(crate) fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }

    /// What is left of the limit, in 4 KiB units (`writeback_limit`).
    pub(crate) fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// Sets what is left of the limit, in 4 KiB units.
    pub(crate) fn set_limit(&self, units: u64) {
        self.limit.store(units, Ordering::Relaxed);
    }

    /// Takes one page's worth from the limit, if enabled: returns what was taken (0 if the
    /// limit is off; less than a page's worth if only that was left, on pages larger than
    /// 4 KiB), or `None` if it is spent.
    fn take(&self) -> Option<u64> {
        if !self.enabled.load(Ordering::Relaxed) {
            return Some(0);
        }
        let mut taken = 0;
        self.limit
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                taken = l.min(UNITS_PER_PAGE);
                (l != 0).then(|| l - taken)
            })
            .ok()?;
        Some(taken)
    }

    /// Gives back what [`take`](Self::take) took, for a write that was not made.
    fn give_back(&self, taken: u64) {
        if taken != 0 {
            self.limit.fetch_add(taken, Ordering::Relaxed);
        }
    }
}

/// The page ranges a `writeback` write names, on a disk of `pages` pages: all of them if it
/// names none. As zram: `EINVAL` for a `page_index` beyond the disk, `ERANGE` for a
/// `page_indexes` range beyond it (the error each range carries).
pub(crate) fn page_ranges(args: &WritebackArgs, pages: usize) -> Result<KVec<Range<usize>>> {
    let mut ranges = KVec::new();
    for &(lo, hi, err) in args.ranges.iter() {
        let (lo, hi) = match (usize::try_from(lo), usize::try_from(hi)) {
            (Ok(lo), Ok(hi)) if lo < pages && hi <= pages => (lo, hi),
            _ => return Err(err),
        };
        ranges.push(lo..hi, GFP_KERNEL)?;
    }
    if ranges.is_empty() {
        ranges.push(0..pages, GFP_KERNEL)?;
    }
    Ok(ranges)
}

/// What `writeback` may write back, from the attribute's arguments.
pub(crate) struct Writeback<'a> {
    /// Only idle pages.
    idle: bool,
    /// Only huge pages.
    huge: bool,
    /// Only pages no algorithm compressed better (`recompress`).
    incompressible: bool,
    /// The pages to look at; checked against the disk's size by the caller.
    ranges: &'a [Range<usize>],
    /// The writes to keep in flight; at least 1.
    batch: usize,
}

impl<'a> Writeback<'a> {
    /// What a `writeback` write asks: the kinds of pages of `args`, among `ranges` (from
    /// [`page_ranges`]), with `batch` writes in flight (at least 1 is kept).
    pub(crate) fn new(args: &WritebackArgs, ranges: &'a [Range<usize>], batch: usize) -> Self {
        Writeback {
            idle: args.idle,
            huge: args.huge,
            incompressible: args.incompressible,
            ranges,
            batch,
        }
    }
}

impl Writeback<'_> {
    /// Whether a page in state `st` is a candidate: a stored page (not same-filled, not written
    /// back or being written, not freed by swap) of the kinds asked for.
    fn eligible(&self, st: State) -> bool {
        st.is_candidate(self.idle, self.huge) && (!self.incompressible || st.is_incompressible())
    }
}

/// A block of the backing device reserved for one page's write, and what that write took from
/// the writeback limit. `Copy`, so that a write the queue refuses (it then never completes) can
/// be cancelled after the reservation went into its tag.
#[derive(Clone, Copy)]
struct Reservation {
    block: u64,
    charged: u64,
}

impl Reservation {
    /// Takes a page's worth from `limit`, then a free block of `storage`'s backing device:
    /// `EIO` when the limit is spent, `ENOSPC` when the device is full (the limit refunded).
    fn take(storage: &Storage, limit: &WbLimit) -> Result<Self> {
        let charged = limit.take().ok_or(EIO)?;
        match storage.table().reserve_block() {
            Some(block) => Ok(Reservation { block, charged }),
            None => {
                limit.give_back(charged);
                Err(ENOSPC)
            }
        }
    }

    /// Gives the block and the charge back: the write was not made, or failed (a failed write
    /// does not count against the limit, as in zram).
    fn cancel(self, storage: &Storage, limit: &WbLimit) {
        storage.table().release_block(self.block);
        limit.give_back(self.charged);
    }
}

/// The page of a write in flight, and its reservation.
#[derive(Clone, Copy)]
struct Tag {
    index: usize,
    res: Reservation,
}

impl Writeback<'_> {
    /// Writes the candidate pages `self` selects back to the backing device, largest first; see the
    /// module's documentation. `ENODEV` without a backing device. Stops with `EIO` when the
    /// `writeback_limit` is spent and with `ENOSPC` when the backing device is full; a failed
    /// write leaves its page in memory, the others go on, and the last error is returned, as
    /// zram does.
    pub(crate) fn run(&self, storage: &Storage, limit: &WbLimit) -> Result {
        let file = storage.backing().ok_or(ENODEV)?;
        let buckets = candidates(storage.table(), self.ranges, |st| self.eligible(st))?;
        let mut queue = WriteQueue::<Tag>::new(file)?;
        let mut buf = KVec::from_elem(0u8, PAGE_SIZE, GFP_KERNEL)?;
        let mut ret = Ok(());
        'pages: for bucket in buckets.iter().rev() {
            for &index in bucket.iter() {
                let index = index as usize;
                // Room for one more write: completions first.
                while queue.in_flight() >= self.batch.max(1) {
                    if let Some(c) = queue.wait_one() {
                        done(storage, c, limit, &mut ret);
                    }
                }
                // No longer a candidate, or unreadable (skipped, as zram skips it).
                let Some(len) = self.prepare(storage, index, &mut buf) else {
                    continue;
                };
                let res = match Reservation::take(storage, limit) {
                    Ok(res) => res,
                    Err(e) => {
                        cancel(storage, index, false);
                        ret = Err(e);
                        break 'pages;
                    }
                };
                if let Err(e) = queue.submit(res.block, &buf[..len], Tag { index, res }) {
                    cancel(storage, index, false);
                    res.cancel(storage, limit);
                    ret = Err(e);
                    break 'pages;
                }
            }
        }
        while let Some(c) = queue.wait_one() {
            done(storage, c, limit, &mut ret);
        }
        ret
    }

    /// Copies page `index` into `buf` for its writeback and marks it `UNDER_WB`, if it is still a
    /// candidate; returns the length to write (a page, or the compressed size with
    /// `compressed_writeback`), or `None` if it is no longer a candidate or cannot be read. As in
    /// zram, a page that cannot be read is skipped without an error, and loses its idle mark so
    /// that the next idle writeback does not try it again.
    fn prepare(&self, storage: &Storage, index: usize, buf: &mut [u8]) -> Option<usize> {
        let mut g = storage.table().lock(index)?;
        let st = State::of(&g);
        // A slot swap freed waits for its deferred free.
        if !g.has_object() || !self.eligible(st) || storage.table().is_stale(&g) {
            return None;
        }
        let size = st.size();
        let read = if storage.compressed_writeback() || size == PAGE_SIZE {
            buf.get_mut(..size).ok_or(EIO).and_then(|b| {
                b.copy_from_slice(&g.map_read(size)?);
                Ok(())
            })
        } else {
            storage
                .streams()
                .with(|c| c.decompress_page(st.prio(), &g.map_read(size)?, buf))
        };
        if read.is_err() {
            st.with_idle(false).set(&mut g);
            return None;
        }
        st.under_wb().set(&mut g);
        Some(if storage.compressed_writeback() {
            size
        } else {
            PAGE_SIZE
        })
    }
}

/// Clears the `UNDER_WB` mark of a page whose write was not made or failed; and its idle mark
/// if `failed`, as zram clears it, so that the next idle writeback does not try the page again.
fn cancel(storage: &Storage, index: usize, failed: bool) {
    if let Some(mut g) = storage.table().lock(index) {
        let st = State::of(&g);
        if st.is_under_wb() {
            st.without_wb()
                .with_idle(st.is_idle() && !failed)
                .set(&mut g);
        }
    }
}

/// Handles a completed write: commits the block to the page if the page is unchanged, and
/// releases it otherwise; a failed write keeps the page in memory and sets `ret`.
fn done(storage: &Storage, c: Completed<Tag>, limit: &WbLimit, ret: &mut Result) {
    let t = storage.table();
    let Tag { index, res } = c.tag;
    if let Err(e) = c.result {
        cancel(storage, index, true);
        res.cancel(storage, limit);
        *ret = Err(e);
        return;
    }
    // Written: from here on, the charge stays taken, as in zram.
    let block = res.block;
    t.stats().bd_writes.inc();
    let Some(mut g) = t.lock(index) else {
        t.release_block(block);
        return;
    };
    let st = State::of(&g);
    if !st.is_under_wb() || t.is_stale(&g) || !g.has_object() {
        // Written or discarded since (which cleared the mark), or freed by swap (its deferred
        // free empties the slot): the block holds nothing of it.
        if st.is_under_wb() {
            st.without_wb().set(&mut g);
        }
        drop(g);
        t.release_block(block);
        return;
    }
    let size = st.size();
    let (stored, prio) = if storage.compressed_writeback() && size < PAGE_SIZE {
        (size, st.prio())
    } else {
        (PAGE_SIZE, 0)
    };
    // The block index fits in a word: the blocks in use do (`bitmaps::backing_blocks`).
    let old = match usize::try_from(block)
        .map_err(|_| EIO)
        .and_then(|w| g.replace(Contents::Word(w)))
    {
        Ok(old) => old,
        Err(e) => {
            // Not reached: a word is always accepted, and the block fits in one. The page
            // stays in memory.
            st.without_wb().set(&mut g);
            drop(g);
            t.release_block(block);
            *ret = Err(e);
            return;
        }
    };
    // The access time stays: the page can be marked idle by age after it comes back.
    State::written_back(stored, prio).set(&mut g);
    t.stats().object_shrunk(size, st.is_huge(), 0);
    // Freed under the slot lock, as a write frees the old contents.
    drop(old);
}
