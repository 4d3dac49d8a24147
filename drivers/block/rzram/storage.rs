// SPDX-License-Identifier: GPL-2.0

//! The memory of an initialised device: pages into and out of its slot table, compressed.
//!
//! # Lock order
//!
//! A slot's lock (lockdep class `zsmalloc_table`), then this CPU's compression stream (a
//! `LocalLocked`, lockdep class `rzram_streams`), then zsmalloc's mapping of an object (its per-CPU
//! area and the zspage's lock). A read takes all three, in that order. A write compresses and
//! allocates with the stream and the mapping but without a slot lock, then takes the slot lock
//! alone to swap the contents. The device's configuration mutex (`device.rs`) is never taken under
//! any of these. Only one slot lock is held at a time. The swap notify takes none of them unless
//! the deferred free's buffers are full; it then frees its batch itself, one slot lock at a time,
//! as the drain does (`swap_free.rs`).

use crate::{
    bitmaps::backing_blocks,
    config::Config,
    slots::Table,
    state::{self, State, MAX_PRIO},
    stats::Stats,
    streams::{Compressed, Streams},
    swap_free::SwapFreeQueue,
};
use kernel::{
    block::bdev::{BdevClaim, BdevFile},
    compress::Algorithm,
    error::code::*,
    io_buf::{Sink, Source},
    new_packed_lock_class,
    page::PAGE_SIZE,
    prelude::*,
    str::CStr,
    sync::Arc,
    sync::LocalLocked,
    types::ARef,
    zsmalloc::{Contents, Handle, Pool},
};

/// The memory of an initialised device: its table, its streams and swap's deferred frees.
///
/// Replaced as a whole by `disksize` and dropped by `reset`, after an RCU grace period: a bio
/// uses it in an RCU read-side critical section, or holds a reference once a page must sleep
/// (`io.rs`), so a reset never frees memory that a bio is using.
pub(crate) struct Storage {
    table: Arc<Table>,
    swap_frees: SwapFreeQueue,
    streams: LocalLocked<Streams>,
    /// The algorithms by priority, as configured at initialisation.
    algs: [Option<Algorithm>; MAX_PRIO],
    disksize: u64,
    /// The backing device, as configured at initialisation; its blocks are the table's.
    backing: Option<ARef<BdevFile>>,
    /// Pages are written back compressed (`compressed_writeback`).
    compressed_writeback: bool,
}

/// What a read that must not sleep did ([`Storage::try_read_page`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// The page was read.
    Done,
    /// Nothing was done: the page is written back, and reading it sleeps. The caller reads it
    /// with [`Storage::read_page`] where it may sleep.
    WouldSleep,
}

/// What a write that must not sleep did ([`Storage::try_write_page`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteOutcome {
    /// The page was written.
    Done,
    /// Nothing was done: the pool has no memory for the page's object of this many bytes
    /// without reclaim. The caller writes it with [`Storage::write_page_stalled`] where it may
    /// sleep.
    NeedMemory(usize),
}

/// The answer of a write that may sleep: only one that must not answers
/// [`WriteOutcome::NeedMemory`], and a page left unwritten is never a success.
fn written(outcome: WriteOutcome) -> Result {
    match outcome {
        WriteOutcome::Done => Ok(()),
        WriteOutcome::NeedMemory(_) => Err(ENOMEM),
    }
}

impl Storage {
    /// Storage with the algorithm `alg` and nothing else configured; for the tests and the
    /// lockdep self-test.
    #[cfg(any(CONFIG_RZRAM_LOCKDEP_SELFTEST, CONFIG_RZRAM_KUNIT_TEST))]
    pub(crate) fn new(name: &CStr, disksize: u64, alg: Algorithm) -> Result<Arc<Storage>> {
        let mut cfg = Config::default();
        cfg.set_algorithm(0, alg)?;
        Self::with_config(name, disksize, &cfg)
    }

    /// The storage of a disk of `disksize` bytes (a whole number of pages), with the algorithms,
    /// parameters and backing device of `cfg`; `ENOMEM` for more pages than `u32` indexes or if
    /// memory is short, `EINVAL` if an algorithm refuses its parameters.
    pub(crate) fn with_config(name: &CStr, disksize: u64, cfg: &Config) -> Result<Arc<Storage>> {
        let pages = usize::try_from(disksize / PAGE_SIZE as u64).map_err(|_| ENOMEM)?;
        // Slot indices fit in `u32`, as zram's; the deferred-free queue carries the stale
        // bitmap's word indices as `u32`.
        if u32::try_from(pages).is_err() {
            return Err(ENOMEM);
        }
        let pool = Arc::new(Pool::new(name)?, GFP_KERNEL)?;
        let backing_pages = backing_blocks(cfg.backing().map_or(0, |f| f.nr_pages()));
        // Allocated with vmalloc(), quietly: its size comes from user space.
        let table = Arc::new(Table::new(pool.clone(), pages, backing_pages)?, GFP_KERNEL)?;
        let swap_frees = SwapFreeQueue::new(pool, table.clone())?;
        let streams = LocalLocked::new(new_packed_lock_class!("rzram_streams"), |_| {
            Streams::new(cfg)
        })?;
        Ok(Arc::new(
            Storage {
                table,
                swap_frees,
                streams,
                algs: cfg.algorithms(),
                disksize,
                backing: cfg.backing().map(BdevClaim::file),
                compressed_writeback: cfg.compressed_writeback(),
            },
            GFP_KERNEL,
        )?)
    }

    /// The slot table.
    pub(crate) fn table(&self) -> &Table {
        &self.table
    }

    /// The size of the disk, in bytes: a whole number of pages.
    pub(crate) fn disksize(&self) -> u64 {
        self.disksize
    }

    /// The number of pages of the disk.
    pub(crate) fn pages(&self) -> usize {
        self.table.pages()
    }

    /// The algorithms by priority, as configured at initialisation.
    pub(crate) fn algorithms(&self) -> [Option<Algorithm>; MAX_PRIO] {
        self.algs
    }

    /// The pool the pages are stored in.
    pub(crate) fn pool(&self) -> &Pool {
        self.table.pool()
    }

    /// The statistics.
    pub(crate) fn stats(&self) -> &Stats {
        self.table.stats()
    }

    /// The backing device, if one was configured at initialisation.
    pub(crate) fn backing(&self) -> Option<&BdevFile> {
        self.backing.as_deref()
    }

    /// Whether pages are written back compressed (`compressed_writeback`).
    pub(crate) fn compressed_writeback(&self) -> bool {
        self.compressed_writeback
    }

    /// This CPU's compression streams, behind their local lock.
    pub(crate) fn streams(&self) -> &LocalLocked<Streams> {
        &self.streams
    }

    /// Reads page `index` into `dst`, one page long (`EINVAL` otherwise): a slice, or a bio's
    /// page lent as a [`Sink`], which the page is then decompressed (or copied, or filled)
    /// straight into, as zram does.
    ///
    /// May race with writes, frees, swap notifications and deferred frees of the same page: the
    /// slot lock orders them, and the read sees the contents before or after each, never an
    /// object being freed. A written-back page is read from the backing device into a page of
    /// its own, without the slot lock, and copied; the read is retried if the slot no longer
    /// holds that block afterwards (`read_written_back`).
    ///
    /// May sleep (a written-back page is read from the backing device).
    pub(crate) fn read_page<'d>(&self, index: usize, dst: impl Into<Sink<'d>>) -> Result {
        match self.read_page_in(index, dst.into(), true)? {
            ReadOutcome::Done => Ok(()),
            // Only a read that must not sleep answers so: never the page unread as a success.
            ReadOutcome::WouldSleep => Err(EIO),
        }
    }

    /// As [`read_page`](Self::read_page), without sleeping (so in an RCU read-side critical
    /// section, as a bio's read runs until a page must sleep, `io.rs`): a written-back page is
    /// left alone, with `dst` unwritten, and the answer is [`ReadOutcome::WouldSleep`].
    pub(crate) fn try_read_page(&self, index: usize, dst: Sink<'_>) -> Result<ReadOutcome> {
        self.read_page_in(index, dst, false)
    }

    /// [`read_page`](Self::read_page), sleeping if `may_sleep`.
    // Inlined into the bio path, where `may_sleep` is a constant.
    #[inline(always)]
    fn read_page_in(
        &self,
        index: usize,
        mut dst: Sink<'_>,
        may_sleep: bool,
    ) -> Result<ReadOutcome> {
        if dst.len() != PAGE_SIZE {
            return Err(EINVAL);
        }
        let t = &*self.table;
        loop {
            let mut g = t.lock(index).ok_or(EIO)?;
            let st = State::of(&g);
            if st.is_wb() {
                if !may_sleep {
                    return Ok(ReadOutcome::WouldSleep);
                }
                state::accessed(&mut g);
                let block = g.word().ok_or(EIO)? as u64;
                drop(g);
                let mut page = KVec::from_elem(0u8, PAGE_SIZE, GFP_NOIO)?;
                if self.read_written_back(index, block, &mut page)? {
                    dst.copy_from_slice(&page)?;
                    return Ok(ReadOutcome::Done);
                }
                continue;
            }
            state::accessed(&mut g);
            if let Some(w) = g.word() {
                dst.fill_word(w);
                return Ok(ReadOutcome::Done);
            }
            let size = st.size();
            if size == PAGE_SIZE {
                dst.copy_from_slice(&g.map_read(size)?)?;
                return Ok(ReadOutcome::Done);
            }
            // Stream, then mapping: the order of the write path, so that the two never wait on
            // each other.
            self.streams
                .with(|c| c.decompress_page(st.prio(), &g.map_read(size)?, dst))?;
            return Ok(ReadOutcome::Done);
        }
    }

    /// Reads written-back page `index`, in block `block`, into `dst` (a page), and decompresses
    /// it if it was written compressed. Returns `false` if the slot no longer holds that block
    /// once the read is done (it was freed or rewritten meanwhile): the caller starts again.
    fn read_written_back(&self, index: usize, block: u64, dst: &mut [u8]) -> Result<bool> {
        let t = &*self.table;
        let file = self.backing.as_ref().ok_or(EIO)?;
        t.stats().bd_reads.inc();
        file.read_page(block, dst)?;
        let st = {
            let g = t.lock(index).ok_or(EIO)?;
            let st = State::of(&g);
            if !st.is_wb() || g.word().and_then(|w| u64::try_from(w).ok()) != Some(block) {
                return Ok(false);
            }
            st
        };
        let size = st.size();
        if size == PAGE_SIZE {
            return Ok(true);
        }
        // Written compressed: decompress from a copy.
        let mut src = KVec::with_capacity(size, GFP_NOIO)?;
        src.extend_from_slice(dst.get(..size).ok_or(EIO)?, GFP_NOIO)?;
        self.streams()
            .with(|c| c.decompress_page(st.prio(), &src, dst))?;
        Ok(true)
    }

    /// Writes `src`, one page (`EINVAL` otherwise), to page `index`: a slice, or a bio's page
    /// lent as a [`Source`], which is then checked for being same-filled and compressed (or
    /// copied, if huge) straight from where it is, as zram does. With `limit_pages` not 0, fails
    /// with `ENOMEM` rather than let the pool grow beyond it.
    ///
    /// Others may write a bio's page meanwhile (`O_DIRECT` buffers are not covered by stable
    /// writes): what is stored is then some mix of its old and new bytes, as in zram, and the
    /// object allocated for one compressed length is used only if the next one fits it.
    ///
    /// May race with reads, writes, frees and the deferred free of the same page: the last to take
    /// the slot lock wins, and a write empties the slot first, which clears its stale bit, so a
    /// deferred free queued before it leaves the new contents alone.
    ///
    /// May sleep (when the pool needs memory that only reclaim gives).
    pub(crate) fn write_page<'s>(
        &self,
        index: usize,
        src: impl Into<Source<'s>>,
        limit_pages: u64,
    ) -> Result {
        written(self.write_page_in(index, src.into(), limit_pages, true, None)?)
    }

    /// As [`write_page`](Self::write_page), without sleeping: if the pool needs memory that
    /// only reclaim gives, the page is left as it was and the answer is
    /// [`WriteOutcome::NeedMemory`], with the size to allocate.
    pub(crate) fn try_write_page(
        &self,
        index: usize,
        src: Source<'_>,
        limit_pages: u64,
    ) -> Result<WriteOutcome> {
        self.write_page_in(index, src, limit_pages, false, None)
    }

    /// As [`write_page`](Self::write_page), after [`try_write_page`](Self::try_write_page)
    /// answered [`WriteOutcome::NeedMemory`] with `len`: counted as a write stall, the object is
    /// allocated first, with reclaim, and the page compressed once more into it, or stored
    /// whole if it was huge, as zram's slow path does. (A page that others change meanwhile
    /// and that outgrows the object is compressed again, into a larger one: the lengths only
    /// grow, up to the huge size, where it is stored whole.)
    pub(crate) fn write_page_stalled(
        &self,
        index: usize,
        src: Source<'_>,
        limit_pages: u64,
        len: usize,
    ) -> Result {
        written(self.write_page_in(index, src, limit_pages, true, Some(len))?)
    }

    /// [`write_page`](Self::write_page), sleeping if `may_sleep`, starting with an allocation
    /// of `stalled` bytes if given.
    // Inlined into the bio path, where `may_sleep` and `stalled` are constants.
    #[inline(always)]
    fn write_page_in(
        &self,
        index: usize,
        src: Source<'_>,
        limit_pages: u64,
        may_sleep: bool,
        stalled: Option<usize>,
    ) -> Result<WriteOutcome> {
        if index >= self.table.pages() {
            return Err(EIO);
        }
        if src.len() != PAGE_SIZE {
            return Err(EINVAL);
        }
        if stalled.is_none() {
            if let Some(w) = src.same_filled() {
                self.install_same(index, w)?;
                return Ok(WriteOutcome::Done);
            }
        }
        let pool = self.table.pool();
        let mut spare = None;
        let mut need = stalled;
        let mut counted = false;
        loop {
            if let Some(len) = need.take() {
                // The slow path may sleep, so it runs without the stream. One stall per write,
                // as zram, however often a page that changes meanwhile outgrows its object.
                if !counted {
                    self.table.stats().writestall.inc();
                    counted = true;
                }
                let obj = pool.alloc(len, GFP_NOIO | __GFP_NOWARN)?;
                if len >= pool.huge_class_size() {
                    // Huge: stored whole, without compressing again, as zram.
                    let h = obj.write_from(src)?;
                    self.install(index, h, PAGE_SIZE, true, limit_pages)?;
                    return Ok(WriteOutcome::Done);
                }
                spare = Some(obj);
            }
            let stored = self
                .streams
                .with(|c| c.compress_page(pool, src, &mut spare))?;
            match stored {
                Compressed::Stored(h, len, huge) => {
                    self.install(index, h, len, huge, limit_pages)?;
                    return Ok(WriteOutcome::Done);
                }
                Compressed::NeedMemory(len) if !may_sleep => {
                    return Ok(WriteOutcome::NeedMemory(len))
                }
                Compressed::NeedMemory(len) => need = Some(len),
            }
        }
    }

    /// Stores `w`, the word page `index` is filled with, replacing its contents.
    fn install_same(&self, index: usize, w: usize) -> Result {
        let t = &*self.table;
        let mut g = t.lock(index).ok_or(EIO)?;
        t.store(&mut g, Contents::Word(w), State::SAME)
    }

    /// Stores object `h`, of `len` bytes (a whole page if `huge`), as page `index`, replacing its
    /// contents, unless the pool has grown beyond `limit_pages` (not 0): then `ENOMEM`, and the
    /// object is freed.
    fn install(&self, index: usize, h: Handle<'_>, len: usize, huge: bool, limit: u64) -> Result {
        let t = &*self.table;
        let used = t.pool().total_pages() as u64;
        // As zram, the peak counts the pool as it is now, with the new object, even when the
        // limit then refuses it.
        t.stats().max_used_pages.raise_to(used);
        if limit != 0 && used > limit {
            // Dropping `h` frees the new object.
            return Err(ENOMEM);
        }
        // Free the old contents and install the new ones under one lock.
        let mut g = t.lock(index).ok_or(EIO)?;
        t.store(&mut g, Contents::Object(h), State::stored(len, huge))?;
        if huge {
            t.stats().huge_pages_since.inc();
        }
        Ok(())
    }

    /// Empties page `index`.
    pub(crate) fn free_page(&self, index: usize) {
        if let Some(mut g) = self.table.lock(index) {
            self.table.clear(&mut g);
        }
    }

    /// Swap freed page `index`: see [`SwapFreeQueue::notify`].
    #[inline]
    pub(crate) fn notify_free(&self, index: usize) {
        self.swap_frees.notify(index);
    }

    /// Swap's deferred frees, for tests.
    #[cfg(CONFIG_RZRAM_KUNIT_TEST)]
    pub(crate) fn swap_frees(&self) -> &SwapFreeQueue {
        &self.swap_frees
    }
}
