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
//! any of these. Only one slot lock is held at a time. The swap notify takes none of them
//! (`notify_free`).

use crate::{
    device::Config,
    slots::{self, Marked, State, SwapFrees, Table, MAX_PRIO, SWAP_FREE_BATCH},
};
use core::ops::Range;
use kernel::{
    block::bdev::{BdevClaim, BdevFile},
    compress::{Algorithm, Stream},
    error::code::*,
    io_buf::{Sink, Source},
    new_packed_lock_class,
    page::PAGE_SIZE,
    prelude::*,
    str::CStr,
    sync::Arc,
    sync::LocalLocked,
    types::ARef,
    zsmalloc::{Contents, Deferred, DeferredOptions, Handle, NewObject, Pool},
};

/// A CPU's compression streams, one per configured priority (the primary algorithm and the
/// secondary ones of `recomp_algorithm`), its output buffer (two pages, as zram's: lzo's worst
/// case fits, so it runs unbounded) and the page recompression decompresses into.
pub(crate) struct Comp {
    streams: [Option<Stream>; MAX_PRIO],
    buf: KVec<u8>,
    page: KVec<u8>,
}

impl Comp {
    /// The stream of priority `prio`; `EIO` if it has none (a slot's priority always has one).
    pub(crate) fn stream(&mut self, prio: usize) -> Result<&mut Stream> {
        stream_of(&mut self.streams, prio)
    }
}

/// The stream of priority `prio` of `streams`; `EIO` if there is none. (A function of the field
/// alone, so that the stream and a CPU's other buffers can be borrowed at once.)
fn stream_of(streams: &mut [Option<Stream>; MAX_PRIO], prio: usize) -> Result<&mut Stream> {
    streams.get_mut(prio).and_then(Option::as_mut).ok_or(EIO)
}

/// Decompresses `src`, stored with priority `prio`, with that stream of `streams` into `dst`;
/// `EIO` unless it makes a whole page.
#[inline]
fn decompress_page(
    streams: &mut [Option<Stream>; MAX_PRIO],
    prio: usize,
    src: &[u8],
    dst: Sink<'_>,
) -> Result {
    if stream_of(streams, prio)?.decompress(src, dst)? != PAGE_SIZE {
        return Err(EIO);
    }
    Ok(())
}

/// The memory of an initialised device: its table, its deferred-free queue and its streams.
///
/// Replaced as a whole by `disksize` and dropped by `reset`, after an RCU grace period: a bio
/// uses it in an RCU read-side critical section, or holds a reference once a page must sleep
/// (`io.rs`), so a reset never frees memory that a bio is using.
pub(crate) struct Storage {
    pub(crate) table: Arc<Table>,
    pub(crate) deferred: Pin<KBox<Deferred<SwapFrees>>>,
    pub(crate) streams: LocalLocked<Comp>,
    /// The algorithms by priority, as configured at initialisation.
    pub(crate) algs: [Option<Algorithm>; MAX_PRIO],
    pub(crate) disksize: u64,
    /// The backing device, as configured at initialisation; its blocks are the table's.
    pub(crate) backing: Option<ARef<BdevFile>>,
    /// Pages are written back compressed (`writeback_compressed`).
    pub(crate) wb_compressed: bool,
}

/// The blocks of a backing device of `nr_pages` pages that writeback may use: all of them, but
/// no more than a slot's word can index, since a written-back page's slot holds its block's
/// index. Only a 32-bit kernel with a backing device of 16 TiB (of 4 KiB pages) or more leaves
/// blocks unused (C zram truncates the page count to `unsigned long` there).
pub(crate) fn backing_blocks(nr_pages: u64) -> u64 {
    nr_pages.min(u64::try_from(usize::MAX).unwrap_or(u64::MAX))
}

/// The size range of a bucket of recompression candidates.
const BUCKET_BYTES: usize = 64;

/// What `recompress` may do, from the attribute's arguments.
pub(crate) struct Recompress {
    /// Only idle pages.
    pub(crate) idle: bool,
    /// Only huge pages.
    pub(crate) huge: bool,
    /// Only pages of at least this many bytes, and only into fewer; 0 for any.
    pub(crate) threshold: usize,
    /// At most this many pages.
    pub(crate) max_pages: u64,
    /// The priorities to try: `prio..prio_max`.
    pub(crate) prio: usize,
    pub(crate) prio_max: usize,
}

impl Recompress {
    /// Whether a page in state `st` is a candidate (its size aside, a stored one).
    fn eligible(&self, st: State) -> bool {
        !st.is_same()
            && !st.is_wb()
            && !st.is_under_wb()
            && !st.is_incompressible()
            && (!self.idle || st.is_idle())
            && (!self.huge || st.is_huge())
            && st.size() >= self.threshold
    }
}

/// What recompressing a page gave.
enum Recompressed<'a> {
    /// A smaller object: the handle, its size and the priority of its algorithm.
    Smaller(Handle<'a>, usize, usize),
    /// Nothing smaller, with `tried` algorithms; `all_tried` if they were every secondary one.
    NotSmaller { tried: usize, all_tried: bool },
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

/// Where a compressed page goes.
enum Compressed<'a> {
    /// Written to this object, of this many bytes; huge if stored uncompressed.
    Stored(Handle<'a>, usize, bool),
    /// No memory without sleeping: allocate this many bytes, then retry.
    NeedMemory(usize),
}

/// Compresses `src`, one page, with the primary stream of `streams` into `buf`, and writes the
/// result (or `src` itself, if it does not compress below the huge size) to a new object of
/// `pool`: `spare` if it is large enough, else one allocated without sleeping.
fn store<'a>(
    pool: &'a Pool,
    streams: &mut [Option<Stream>; MAX_PRIO],
    buf: &mut [u8],
    src: Source<'_>,
    spare: &mut Option<NewObject<'a>>,
) -> Result<Compressed<'a>> {
    let huge_size = pool.huge_class_size();
    let stream = stream_of(streams, 0)?;
    let (data, len, huge) = match stream.compress(src, buf) {
        Ok(n) if n < huge_size => (Source::from(buf.get(..n).ok_or(EIO)?), n, false),
        Ok(_) | Err(E2BIG) => (src, PAGE_SIZE, true),
        Err(e) => return Err(e),
    };
    // The page may have changed since `spare` was allocated for it (a write that is not stable):
    // use the object only if the new length fits it.
    let obj = match spare.take() {
        Some(obj) if obj.capacity() >= len => obj,
        other => {
            // Too small: freed.
            drop(other);
            match pool.alloc(len, GFP_NOWAIT | __GFP_NOWARN) {
                Ok(obj) => obj,
                Err(_) => return Ok(Compressed::NeedMemory(len)),
            }
        }
    };
    // Bytes past `len` up to the object's capacity are zeroed.
    Ok(Compressed::Stored(obj.write_from(data)?, len, huge))
}

impl Storage {
    /// Storage with the algorithm `alg` and nothing else configured; for the tests and the
    /// lockdep self-test.
    #[cfg(any(CONFIG_PROVE_LOCKING, CONFIG_RZRAM_KUNIT_TEST))]
    pub(crate) fn new(name: &CStr, disksize: u64, alg: Algorithm) -> Result<Arc<Storage>> {
        let mut cfg = Config::default();
        cfg.algs[0] = Some(alg);
        Self::with_config(name, disksize, &cfg)
    }

    /// As [`new`](Self::new), with the algorithms and parameters of `cfg`; `EINVAL` if an
    /// algorithm refuses its parameters.
    pub(crate) fn with_config(name: &CStr, disksize: u64, cfg: &Config) -> Result<Arc<Storage>> {
        let pages = usize::try_from(disksize / PAGE_SIZE as u64).map_err(|_| ENOMEM)?;
        // Slot indices fit in `u32`, as zram's; the deferred-free queue carries the stale
        // bitmap's word indices as `u32`.
        if u32::try_from(pages).is_err() {
            return Err(ENOMEM);
        }
        let pool = Arc::new(Pool::new(name)?, GFP_KERNEL)?;
        let backing_pages = backing_blocks(cfg.backing.as_ref().map_or(0, |f| f.nr_pages()));
        // Allocated with vmalloc(), quietly: its size comes from user space.
        let table = Arc::new(Table::new(pool.clone(), pages, backing_pages)?, GFP_KERNEL)?;
        let options = DeferredOptions {
            batch: SWAP_FREE_BATCH,
            ..Default::default()
        };
        let deferred = Deferred::new(pool, SwapFrees(table.clone()), options)?;
        let streams = LocalLocked::new(new_packed_lock_class!("rzram_streams"), |_| {
            let mut streams = [None, None, None, None];
            for (prio, s) in streams.iter_mut().enumerate() {
                if let Some(a) = cfg.algs[prio] {
                    *s = Some(Stream::with_params(a, &cfg.params[prio])?);
                }
            }
            Ok(Comp {
                streams,
                buf: KVec::from_elem(0u8, 2 * PAGE_SIZE, GFP_KERNEL)?,
                page: KVec::from_elem(0u8, PAGE_SIZE, GFP_KERNEL)?,
            })
        })?;
        Ok(Arc::new(
            Storage {
                table,
                deferred,
                streams,
                algs: cfg.algs,
                disksize,
                backing: cfg.backing.as_ref().map(BdevClaim::file),
                wb_compressed: cfg.wb_compressed,
            },
            GFP_KERNEL,
        )?)
    }

    /// Reads page `index` into `dst`, one page long (`EINVAL` otherwise): a slice, or a bio's
    /// page lent as a [`Sink`], which the page is then decompressed (or copied, or filled)
    /// straight into, as zram does.
    ///
    /// May race with writes, frees, swap notifications and deferred frees of the same page: the
    /// slot lock orders them, and the read sees the contents before or after each, never an
    /// object being freed. A written-back page is read from the backing device into a page of
    /// its own, without the slot lock, and copied; the read is retried if the slot no longer
    /// holds that block afterwards (`writeback.rs`).
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
            let mut g = t.slots.lock(index).ok_or(EIO)?;
            let st = State::of(&g);
            if st.is_wb() {
                if !may_sleep {
                    return Ok(ReadOutcome::WouldSleep);
                }
                slots::accessed(&mut g);
                let block = g.word().ok_or(EIO)? as u64;
                drop(g);
                let mut page = KVec::from_elem(0u8, PAGE_SIZE, GFP_NOIO)?;
                if self.read_written_back(index, block, &mut page)? {
                    dst.copy_from_slice(&page)?;
                    return Ok(ReadOutcome::Done);
                }
                continue;
            }
            slots::accessed(&mut g);
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
                .with(|c| decompress_page(&mut c.streams, st.prio(), &g.map_read(size)?, dst))?;
            return Ok(ReadOutcome::Done);
        }
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
        if index >= self.table.slots.len() {
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
        let pool = &self.table.pool;
        let mut spare = None;
        let mut need = stalled;
        let mut counted = false;
        loop {
            if let Some(len) = need.take() {
                // The slow path may sleep, so it runs without the stream. One stall per write,
                // as zram, however often a page that changes meanwhile outgrows its object.
                if !counted {
                    self.table.stats.writestall.inc();
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
                .with(|c| store(pool, &mut c.streams, &mut c.buf, src, &mut spare))?;
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
        let mut g = t.slots.lock(index).ok_or(EIO)?;
        t.store(&mut g, Contents::Word(w), State::SAME)
    }

    /// Stores object `h`, of `len` bytes (a whole page if `huge`), as page `index`, replacing its
    /// contents, unless the pool has grown beyond `limit_pages` (not 0): then `ENOMEM`, and the
    /// object is freed.
    fn install(&self, index: usize, h: Handle<'_>, len: usize, huge: bool, limit: u64) -> Result {
        let t = &*self.table;
        let used = t.pool.total_pages() as u64;
        // As zram, the peak counts the pool as it is now, with the new object, even when the
        // limit then refuses it.
        t.stats.max_used_pages.raise_to(used);
        if limit != 0 && used > limit {
            // Dropping `h` frees the new object.
            return Err(ENOMEM);
        }
        // Free the old contents and install the new ones under one lock.
        let mut g = t.slots.lock(index).ok_or(EIO)?;
        t.store(&mut g, Contents::Object(h), State::stored(len, huge))?;
        if huge {
            t.stats.huge_pages_since.inc();
        }
        Ok(())
    }

    /// Marks the stored pages last accessed at or before `cutoff` (seconds since boot) as idle and
    /// clears the mark of the others, as zram's `idle` attribute; `i64::MAX` marks them all, a
    /// negative cutoff none. Empty and same-filled slots are left alone: nothing post-processes
    /// them.
    ///
    /// May race with reads and writes, which clear the mark of the pages they access: each slot
    /// is marked under its lock.
    pub(crate) fn mark_idle(&self, cutoff: i64) {
        let t = &*self.table;
        for index in 0..t.slots.len() {
            let Some(mut g) = t.slots.lock(index) else {
                break;
            };
            if !g.has_object() {
                continue;
            }
            let idle = i64::from(slots::access_time(&g)) <= cutoff;
            State::of(&g).with_idle(idle).set(&mut g);
        }
    }

    /// Recompresses stored pages with the secondary algorithms, as zram's `recompress`.
    ///
    /// The candidates are the stored pages that are not same-filled or incompressible, idle and/or
    /// huge as `opts` asks, of at least `opts.threshold` bytes; they are taken largest first, in
    /// buckets of 64 bytes (zram since 6.13), at most `opts.max_pages` of them. Each is
    /// decompressed and compressed again with the secondary algorithms of priorities
    /// `opts.prio..opts.prio_max` above its own, in order, until one stores it in a smaller size
    /// class (and below the threshold, if one is given); a page no secondary algorithm improves is
    /// marked incompressible when all were tried. Fails with `ENOMEM` if memory for a new object is
    /// short (what was done stays done).
    ///
    /// May race with reads, writes and frees of the same pages: each page is recompressed under
    /// its lock, after its eligibility is checked again.
    pub(crate) fn recompress(&self, opts: &Recompress) -> Result {
        let all = 0..self.table.slots.len();
        let buckets = self.candidates(core::slice::from_ref(&all), |st| opts.eligible(st))?;
        let mut left = opts.max_pages;
        for bucket in buckets.iter().rev() {
            for &index in bucket.iter() {
                if left == 0 {
                    return Ok(());
                }
                // As zram, only pages an algorithm was tried on count.
                if self.recompress_page(index as usize, opts)? {
                    left -= 1;
                }
            }
        }
        Ok(())
    }

    /// The post-processing candidates among the slots of `ranges`: those whose state satisfies
    /// `eligible` and that hold a page of some size, in buckets of 64 bytes by size, as zram since
    /// 6.13 (the last bucket has the largest pages), each bucket in index order. A slot is a
    /// candidate once, however many ranges hold it: an operation visits each page once, so a
    /// mark it leaves on a page (`UNDER_WB`) is its own. The states are snapshots: each candidate
    /// is checked again under its lock.
    pub(crate) fn candidates(
        &self,
        ranges: &[Range<usize>],
        eligible: impl Fn(State) -> bool,
    ) -> Result<KVec<KVec<u32>>> {
        let t = &*self.table;
        let mut buckets = KVec::new();
        for _ in 0..=PAGE_SIZE / BUCKET_BYTES {
            buckets.push(KVec::<u32>::new(), GFP_KERNEL)?;
        }
        let mut seen = KVVec::from_elem(0u64, t.slots.len().div_ceil(64), GFP_KERNEL)?;
        for r in ranges {
            for index in r.clone() {
                let Some(st) = State::snapshot(&t.slots, index) else {
                    break;
                };
                let Some(w) = seen.get_mut(index / 64) else {
                    break;
                };
                let bit = 1u64 << (index % 64);
                if *w & bit != 0 {
                    continue;
                }
                *w |= bit;
                if st.size() != 0 && eligible(st) {
                    if let Some(b) = buckets.get_mut(st.size() / BUCKET_BYTES) {
                        // Slot indices fit in `u32` (`Storage::new`).
                        b.push(index as u32, GFP_KERNEL)?;
                    }
                }
            }
        }
        Ok(buckets)
    }

    /// Recompresses page `index` if it is still a candidate; see [`recompress`](Self::recompress).
    /// Returns whether an algorithm was tried on it.
    fn recompress_page(&self, index: usize, opts: &Recompress) -> Result<bool> {
        let t = &*self.table;
        let pool: &Pool = &t.pool;
        let mut g = t.slots.lock(index).ok_or(EIO)?;
        let st = State::of(&g);
        // A slot swap freed waits for its deferred free.
        if !g.has_object() || !opts.eligible(st) || self.table.is_stale(&g) {
            return Ok(false);
        }
        let old_size = st.size();
        let old_class = g.class_index().ok_or(EIO)?;
        // The secondary algorithms configured: a page all of them tried is incompressible.
        let secondaries = self.algs[1..].iter().filter(|a| a.is_some()).count();
        let outcome = self.streams.with(|c| -> Result<Recompressed<'_>> {
            {
                let obj = g.map_read(old_size)?;
                if old_size == PAGE_SIZE {
                    c.page.copy_from_slice(&obj);
                } else {
                    decompress_page(&mut c.streams, st.prio(), &obj, (&mut c.page).into())?;
                }
            }
            let mut tried = 0;
            for prio in opts.prio.max(st.prio() + 1)..opts.prio_max.min(MAX_PRIO) {
                let Some(stream) = c.streams[prio].as_mut() else {
                    continue;
                };
                tried += 1;
                let len = match stream.compress(&c.page[..], &mut c.buf) {
                    Ok(len) => len,
                    Err(e) if e == E2BIG => continue,
                    Err(e) => return Err(e),
                };
                if len >= pool.huge_class_size()
                    || pool.class_index_for(len)? >= old_class
                    || (opts.threshold != 0 && len >= opts.threshold)
                {
                    continue;
                }
                // Under the slot lock and the stream: no sleeping (zram allocates without
                // direct reclaim here too).
                let obj = pool.alloc(len, GFP_NOWAIT | __GFP_NOWARN)?;
                return Ok(Recompressed::Smaller(obj.write(&c.buf[..len])?, len, prio));
            }
            Ok(Recompressed::NotSmaller {
                tried,
                all_tried: secondaries != 0 && tried == secondaries,
            })
        })?;
        let mut tried = 1;
        match outcome {
            Recompressed::Smaller(h, len, prio) => {
                let old = g.take();
                g.replace(Contents::Object(h))?;
                // The access time stays; the idle mark goes, as zram clears it.
                State::stored(len, false).with_prio(prio).set(&mut g);
                t.stats.compr_data_size.sub(old_size as u64);
                t.stats.compr_data_size.add(len as u64);
                if st.is_huge() {
                    t.stats.huge_pages.dec();
                }
                // Freed under the slot lock, as a write frees the old contents.
                drop(old);
            }
            Recompressed::NotSmaller {
                tried: n,
                all_tried,
            } => {
                tried = n;
                let st = st.with_idle(false);
                let st = if all_tried { st.incompressible() } else { st };
                st.set(&mut g);
            }
        }
        Ok(tried != 0)
    }

    /// Empties page `index`.
    pub(crate) fn free_page(&self, index: usize) {
        if let Some(mut g) = self.table.slots.lock(index) {
            self.table.clear(&mut g);
        }
    }

    /// Returns `notify_free`: the pages freed by discards and write-zeroes, and the calls of
    /// `swap_slot_free_notify`, which are not counted on their path: each stale bit is counted
    /// when the drain or a store clears it (a notify past the bitmap at once), so the count, like
    /// `mm_stat`, lags a swap free by the drain's delay.
    pub(crate) fn notify_free_count(&self) -> u64 {
        self.table.stats.notify_free.get()
    }

    /// Swap freed page `index`: marks its slot stale, and queues the slot's word of the stale
    /// bitmap for the deferred free unless a notify before did, which then empties the slot if
    /// it is still stale.
    ///
    /// It takes no lock and costs one atomic OR; once in 32 notifies to neighbouring slots, a
    /// push onto this CPU's queue too. Runs in atomic context under swap's lock. Why this is
    /// enough:
    ///
    /// - a read of the same page under way holds the slot lock; the drain takes it too, so the
    ///   page is never freed under its reader;
    /// - a write, discard or free after the notify empties the slot under its lock, which clears
    ///   the stale bit: the drain, which clears the bit under the slot lock, then leaves the new
    ///   contents alone; a notify racing a write of the same page (which swap never does: it
    ///   frees a slot before it reuses it) frees whichever contents the slot holds when the
    ///   drain runs;
    /// - a bit set while its word is queued is seen by that word's drain, and a bit set after
    ///   the drain took the word queues the word again (the invariant of `slots::Stale`); a
    ///   word that cannot be queued (interrupt context, never for swap) waits for the drain of
    ///   another word;
    /// - the storage cannot go away meanwhile: the caller reached it under the RCU read-side
    ///   lock, and a reset drops it only after a grace period, draining the queue first
    ///   ([`Deferred`]'s drop).
    #[inline]
    pub(crate) fn notify_free(&self, index: usize) {
        match self.table.mark_stale(index) {
            Marked::Queued => {}
            // Queued, drained at once if the queue is full (`SwapFrees::drain`), or, from
            // interrupt context, orphaned for the next drain.
            Marked::First(word) => self.queue_stale(word),
            // Never from swap: nothing to free; counted here, off the common path.
            Marked::OutOfRange => self.table.stats.notify_free.inc(),
        }
    }

    /// Queues word `word` of the stale bitmap, which a notify marked first.
    #[inline(never)]
    fn queue_stale(&self, word: u32) {
        if self.deferred.push(word).is_err() {
            // Interrupt context (never for swap): the next drain, when swap frees a slot of
            // another word, takes the word; its slots keep their contents until then (or until
            // they are rewritten).
            self.table.orphan_stale();
        }
    }

    /// Takes a slot lock and then this CPU's stream, the documented order (a read does it), then
    /// the stream and then a slot lock: lockdep must report the inversion, which shows that it
    /// tracks the slot locks. For the lockdep self-test boot only (`rzram.lockdep_selftest=1`):
    /// the report turns lockdep off for the rest of the boot.
    #[cfg(CONFIG_PROVE_LOCKING)]
    pub(crate) fn invert_lock_order(&self) -> Result {
        let mut page = KVec::from_elem(0x5au8, PAGE_SIZE, GFP_KERNEL)?;
        let mut out = KVec::from_elem(0u8, PAGE_SIZE, GFP_KERNEL)?;
        // Compressible but not same-filled, so that the read takes the stream under the slot
        // lock.
        page[0] = 1;
        self.write_page(0, &page, 0)?;
        self.read_page(0, &mut out)?;
        pr_info!("lockdep self-test: inverted order: stream, then slot lock\n");
        self.streams.with(|_| {
            drop(self.table.slots.lock(0));
            Ok(())
        })
    }
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_storage)]
mod tests {
    use super::*;
    use kernel::{c_str, compress::Params, kunit_expect, kunit_expect_eq};

    fn page(mut f: impl FnMut(usize) -> u8) -> Result<KVec<u8>> {
        let mut v = KVec::with_capacity(PAGE_SIZE, GFP_KERNEL)?;
        for i in 0..PAGE_SIZE {
            v.push(f(i), GFP_KERNEL)?;
        }
        Ok(v)
    }

    /// A page of pseudo-random bytes, which no algorithm compresses.
    fn random_page() -> Result<KVec<u8>> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        page(|_| {
            // SplitMix64.
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
    }

    /// A written-back page's slot holds its block's index in a word: every block writeback may
    /// use fits in one, on 32-bit too with a backing device of 16 TiB or more.
    #[test]
    fn backing_block_indices() {
        kunit_expect_eq!(backing_blocks(0), 0);
        kunit_expect_eq!(backing_blocks(70), 70);
        for pages in [1 << 32, (1 << 32) + 1, u64::MAX] {
            let n = backing_blocks(pages);
            kunit_expect!(n != 0 && usize::try_from(n - 1).is_ok());
            kunit_expect_eq!(n == pages, usize::BITS == 64);
        }
    }

    #[test]
    fn same_fill_detection() -> Result {
        let same = |p: &KVec<u8>| Source::from(p).same_filled();
        kunit_expect_eq!(same(&page(|_| 0)?), Some(0));
        let w = usize::from_ne_bytes([0xab; core::mem::size_of::<usize>()]);
        kunit_expect_eq!(same(&page(|_| 0xab)?), Some(w));
        // A repeated word that is not a repeated byte.
        let p = page(|i| (i % core::mem::size_of::<usize>()) as u8)?;
        kunit_expect!(same(&p).is_some());
        // One byte off anywhere: the first word, the last, or a word of each unrolled round.
        for at in [
            0,
            1,
            8,
            17,
            26,
            35,
            PAGE_SIZE / 2,
            PAGE_SIZE - 9,
            PAGE_SIZE - 1,
        ] {
            let p = page(|i| u8::from(i == at))?;
            kunit_expect_eq!(same(&p), None);
        }
        let mut out = page(|_| 1)?;
        Sink::from(&mut out).fill_word(w);
        kunit_expect!(out.iter().all(|&b| b == 0xab));
        // A word that is not one byte repeated.
        let w = usize::from_ne_bytes(core::array::from_fn(|i| i as u8 + 1));
        Sink::from(&mut out).fill_word(w);
        kunit_expect_eq!(same(&out), Some(w));
        Ok(())
    }

    #[test]
    fn round_trip_every_algorithm() -> Result {
        let pages = [
            page(|i| (i / 64) as u8)?,              // compressible
            random_page()?,                         // incompressible
            page(|_| 0)?,                           // zero
            page(|i| if i < 100 { 0 } else { 7 })?, // nearly same-filled
        ];
        for alg in Algorithm::ALL {
            let storage = Storage::new(c_str!("rzram_kunit"), 16 * PAGE_SIZE as u64, alg)?;
            let mut out = page(|_| 0x55)?;
            // A never-written page reads as zeroes.
            storage.read_page(5, &mut out)?;
            assert!(out.iter().all(|&b| b == 0));
            for (i, p) in pages.iter().enumerate() {
                storage.write_page(i, p, 0)?;
            }
            for (i, p) in pages.iter().enumerate() {
                storage.read_page(i, &mut out)?;
                assert!(out == *p);
            }
            let s = &storage.table.stats;
            assert_eq!(s.pages_stored.get(), 4);
            assert_eq!(s.same_pages.get(), 1);
            assert_eq!(s.huge_pages.get(), 1);
            // Overwrite and free: the accounting follows.
            storage.write_page(0, &pages[2], 0)?;
            assert_eq!(s.same_pages.get(), 2);
            for i in 0..4 {
                storage.free_page(i);
            }
            assert_eq!(s.pages_stored.get(), 0);
            assert_eq!(s.compr_data_size.get(), 0);
            assert_eq!(storage.table.pool.total_pages(), 0);
        }
        Ok(())
    }

    /// A write the memory limit refuses leaves the slot as it was and the pool as before, but
    /// counts in the peak (`mem_used_max`), as zram's: the pool held the new object when the
    /// limit was checked.
    #[test]
    fn memory_limit_refusal() -> Result {
        let storage = Storage::new(
            c_str!("rzram_kunit"),
            8 * PAGE_SIZE as u64,
            Algorithm::LzoRle,
        )?;
        let (a, b) = (random_page()?, page(|i| (i * 7) as u8 ^ 0x5a)?);
        // A huge page takes a pool page of its own: the first fits a limit of one page.
        storage.write_page(0, &a, 1)?;
        let s = &storage.table.stats;
        assert_eq!(s.max_used_pages.get(), 1);
        assert_eq!(storage.write_page(1, &random_page()?, 1), Err(ENOMEM));
        assert_eq!(s.max_used_pages.get(), 2);
        assert_eq!(storage.table.pool.total_pages(), 1);
        assert_eq!(s.pages_stored.get(), 1);
        // Nothing stored was lost, and a refused overwrite keeps the old page.
        storage.write_page(1, &b, 0)?;
        assert_eq!(storage.write_page(1, &random_page()?, 1), Err(ENOMEM));
        let mut out = page(|_| 0)?;
        storage.read_page(0, &mut out)?;
        assert!(out == a);
        storage.read_page(1, &mut out)?;
        assert!(out == b);
        Ok(())
    }

    /// What is not a page is refused, and past the end is an I/O error, before anything is
    /// stored: the slots keep their contents.
    #[test]
    fn bad_requests() -> Result {
        let storage = Storage::new(
            c_str!("rzram_kunit"),
            8 * PAGE_SIZE as u64,
            Algorithm::LzoRle,
        )?;
        let p = page(|i| (i / 64) as u8)?;
        storage.write_page(0, &p, 0)?;
        assert_eq!(storage.write_page(0, &p[..100], 0), Err(EINVAL));
        assert_eq!(storage.write_page(8, &p, 0), Err(EIO));
        let mut out = page(|_| 0)?;
        assert_eq!(storage.read_page(0, &mut out[..100]), Err(EINVAL));
        assert_eq!(storage.read_page(8, &mut out), Err(EIO));
        storage.read_page(0, &mut out)?;
        assert!(out == p);
        assert_eq!(storage.table.stats.pages_stored.get(), 1);
        Ok(())
    }

    /// The no-sleep forms (a bio's, in an RCU read-side critical section) store and read what
    /// the sleeping ones do; after a stall the page is stored as written, counted, and a huge
    /// page stored whole.
    #[test]
    fn no_sleep_and_stalled_paths() -> Result {
        let pages = [
            page(|i| (i / 64) as u8)?, // compressible
            random_page()?,            // incompressible: stored whole
            page(|_| 0x3c)?,           // same-filled
        ];
        let storage = Storage::new(
            c_str!("rzram_kunit"),
            8 * PAGE_SIZE as u64,
            Algorithm::LzoRle,
        )?;
        for (i, p) in pages.iter().enumerate() {
            assert_eq!(
                storage.try_write_page(i, Source::from(p), 0)?,
                WriteOutcome::Done
            );
        }
        let mut out = page(|_| 0)?;
        for (i, p) in pages.iter().enumerate() {
            assert_eq!(
                storage.try_read_page(i, Sink::from(&mut out))?,
                ReadOutcome::Done
            );
            assert!(out == *p);
        }
        let s = &storage.table.stats;
        assert_eq!(s.pages_stored.get(), 3);
        assert_eq!(s.same_pages.get(), 1);
        assert_eq!(s.huge_pages.get(), 1);
        assert_eq!(s.writestall.get(), 0);
        // After a stall: compressed again into the object (here too small: allocated again).
        storage.write_page_stalled(3, Source::from(&pages[0]), 0, 100)?;
        // Huge the first time: stored whole, without compressing again.
        storage.write_page_stalled(4, Source::from(&pages[1]), 0, PAGE_SIZE)?;
        assert_eq!(s.writestall.get(), 2);
        assert_eq!(s.huge_pages.get(), 2);
        for (i, p) in [(3, &pages[0]), (4, &pages[1])] {
            storage.read_page(i, &mut out)?;
            assert!(out == *p);
        }
        // Not a page: refused.
        assert_eq!(
            storage.try_write_page(0, Source::from(&pages[0][..100]), 0),
            Err(EINVAL)
        );
        assert_eq!(
            storage.try_read_page(0, Sink::from(&mut out[..100])),
            Err(EINVAL)
        );
        Ok(())
    }

    /// Pages written with lzo-rle and recompressed with zstd, by `type=idle` and by
    /// `threshold=`: the contents stay, the compressed size shrinks, the slot records the
    /// priority; a page zstd cannot shrink is marked incompressible and skipped next time.
    #[test]
    fn recompression() -> Result {
        let mut cfg = Config::default();
        cfg.algs[2] = Some(Algorithm::Zstd);
        let storage = Storage::with_config(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, &cfg)?;
        let s = &storage.table.stats;
        let text =
            |seed: usize| page(move |i| b"rzram recompresses idle pages "[(i * 7 + seed) % 30]);
        // Page 2 compresses less well than page 1: one byte in 32 is random.
        let mut p2 = text(5)?;
        let noise = random_page()?;
        for (i, b) in p2.iter_mut().enumerate().filter(|(i, _)| i % 32 == 0) {
            *b = noise[i];
        }
        let pages = [text(0)?, text(3)?, p2, random_page()?];
        for (i, p) in pages.iter().enumerate() {
            storage.write_page(i, p, 0)?;
        }
        let state = |i| State::snapshot(&storage.table.slots, i).ok_or(EINVAL);
        let before = s.compr_data_size.get();
        let all = |idle, huge, threshold| Recompress {
            idle,
            huge,
            threshold,
            max_pages: u64::MAX,
            prio: 1,
            prio_max: MAX_PRIO,
        };
        // Nothing is idle yet: type=idle does nothing.
        storage.recompress(&all(true, false, 0))?;
        assert_eq!(s.compr_data_size.get(), before);
        // Page 0 idle only.
        storage.mark_idle(i64::MAX);
        storage.write_page(1, &pages[1], 0)?;
        storage.write_page(2, &pages[2], 0)?;
        storage.recompress(&all(true, false, 0))?;
        assert_eq!(state(0)?.prio(), 2);
        assert!(!state(0)?.is_idle());
        assert_eq!((state(1)?.prio(), state(2)?.prio()), (0, 0));
        // The huge page (3) was idle too: not shrunk, so incompressible.
        assert!(state(3)?.is_incompressible() && state(3)?.is_huge());
        // By size, without a threshold, at most one page: the largest bucket goes first (then
        // index order). Page 0 (done) and 3 (incompressible) have nothing left to try.
        let (s1, s2) = (state(1)?.size(), state(2)?.size());
        let mut one = all(false, false, 0);
        one.max_pages = 1;
        storage.recompress(&one)?;
        let done = if s2 / BUCKET_BYTES > s1 / BUCKET_BYTES {
            2
        } else {
            1
        };
        let other = 3 - done;
        assert_eq!(state(done)?.prio(), 2);
        assert_eq!(state(other)?.prio(), 0);
        // A threshold above the other page's size: it is not a candidate.
        let size = state(other)?.size();
        storage.recompress(&all(false, false, size + 1))?;
        assert_eq!(state(other)?.prio(), 0);
        // At its size: a candidate, recompressed below it.
        storage.recompress(&all(false, false, size))?;
        assert_eq!(state(other)?.prio(), 2);
        assert!(state(other)?.size() < size);
        assert!(s.compr_data_size.get() < before);
        let mut out = page(|_| 0)?;
        for (i, p) in pages.iter().enumerate() {
            storage.read_page(i, &mut out)?;
            assert!(out == *p);
        }
        assert_eq!(s.pages_stored.get(), 4);
        assert_eq!(s.huge_pages.get(), 1);
        // A write makes the page new: primary algorithm, not incompressible.
        storage.write_page(3, &pages[0], 0)?;
        assert_eq!(state(3)?.prio(), 0);
        assert!(!state(3)?.is_incompressible());
        Ok(())
    }

    /// A configuration with `alg` as the primary algorithm, with `params`.
    fn config(alg: Algorithm, params: Params) -> Config {
        let mut cfg = Config::default();
        cfg.algs[0] = Some(alg);
        cfg.params[0] = params;
        cfg
    }

    /// `algorithm_params` reach the streams: every algorithm round-trips with a level, deflate
    /// with another window, and a window deflate refuses fails the initialisation.
    #[test]
    fn algorithm_params_apply() -> Result {
        let data = page(|i| (i / 32) as u8 ^ (i % 7) as u8)?;
        let mut out = page(|_| 0)?;
        for alg in Algorithm::ALL {
            for params in [
                Params {
                    level: Some(1),
                    ..Params::default()
                },
                Params {
                    level: Some(9),
                    deflate_winbits: Some(9),
                },
            ] {
                let name = c_str!("rzram_kunit");
                let cfg = config(alg, params);
                let storage = Storage::with_config(name, 4 * PAGE_SIZE as u64, &cfg)?;
                storage.write_page(0, &data, 0)?;
                storage.read_page(0, &mut out)?;
                assert!(out == data);
            }
        }
        let bad = Params {
            deflate_winbits: Some(16),
            ..Params::default()
        };
        let name = c_str!("rzram_kunit");
        let cfg = config(Algorithm::Deflate, bad);
        let r = Storage::with_config(name, 4 * PAGE_SIZE as u64, &cfg);
        assert_eq!(r.err(), Some(EINVAL));
        Ok(())
    }

    #[test]
    fn idle_marking_and_access_times() -> Result {
        let storage = Storage::new(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, Algorithm::Lz4)?;
        let data = page(|i| (i / 32) as u8)?;
        for i in 0..3 {
            storage.write_page(i, &data, 0)?;
        }
        // Same-filled and empty slots are never idle.
        storage.write_page(3, &page(|_| 9)?, 0)?;
        let state = |i| State::snapshot(&storage.table.slots, i).ok_or(EINVAL);
        let now = i64::from(slots::now_secs());
        let at = |i| -> Result<u32> {
            Ok(slots::access_time(
                &storage.table.slots.lock(i).ok_or(EINVAL)?,
            ))
        };
        if cfg!(CONFIG_RZRAM_TRACK_ENTRY_ACTIME) {
            assert!(i64::from(at(0)?) <= now && i64::from(at(0)?) >= now - 1);
        } else {
            // No access time without the option: nothing reads the clock.
            assert_eq!(at(0)?, 0);
        }
        // "all".
        storage.mark_idle(i64::MAX);
        for i in 0..3 {
            assert!(state(i)?.is_idle());
        }
        assert!(!state(3)?.is_idle() && !state(4)?.is_idle());
        // A read and a write clear the mark; the size and flags stay.
        let mut out = page(|_| 0)?;
        storage.read_page(0, &mut out)?;
        assert!(out == data);
        storage.write_page(1, &data, 0)?;
        assert!(!state(0)?.is_idle() && !state(1)?.is_idle() && state(2)?.is_idle());
        assert_eq!(state(0)?.size(), state(2)?.size());
        // An age older than every access (every access time is at least 0) marks nothing and
        // clears the marks.
        storage.mark_idle(-1);
        for i in 0..4 {
            assert!(!state(i)?.is_idle());
        }
        // A cutoff at the access time marks the page (accessed at or before it).
        storage.mark_idle(i64::from(at(2)?));
        assert!(state(2)?.is_idle());
        // Freeing clears the access time.
        storage.free_page(2);
        assert_eq!(at(2)?, 0);
        assert!(!state(2)?.is_idle());
        Ok(())
    }

    #[test]
    fn notify_free_then_write() -> Result {
        let storage = Storage::new(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, Algorithm::Lz4)?;
        let a = page(|i| (i / 32) as u8)?;
        let b = page(|i| (i / 16) as u8)?;
        storage.write_page(1, &a, 0)?;
        storage.notify_free(1);
        // A write after the notify and before the drain must survive the drain.
        storage.write_page(1, &b, 0)?;
        storage.deferred.flush();
        let mut out = page(|_| 0)?;
        storage.read_page(1, &mut out)?;
        assert!(out == b);
        // Without a write the drain frees the slot.
        storage.notify_free(1);
        storage.deferred.flush();
        assert_eq!(storage.table.stats.pages_stored.get(), 0);
        storage.read_page(1, &mut out)?;
        assert!(out.iter().all(|&b| b == 0));
        // Both notifies count: the first when the write cleared its bit, the second when the
        // drain did.
        assert_eq!(storage.notify_free_count(), 2);
        storage.notify_free(1);
        storage.deferred.flush();
        assert_eq!(storage.notify_free_count(), 3);
        Ok(())
    }

    #[test]
    fn notify_free_same_held_and_out_of_range() -> Result {
        let storage = Storage::new(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, Algorithm::Lz4)?;
        let s = &storage.table.stats;
        // A same-filled page is queued and emptied by the drain, like any other.
        storage.write_page(2, &page(|_| 0x11)?, 0)?;
        assert_eq!(s.same_pages.get(), 1);
        storage.notify_free(2);
        storage.deferred.flush();
        assert_eq!(s.same_pages.get(), 0);
        assert_eq!(s.pages_stored.get(), 0);
        assert_eq!(storage.deferred.stats().pushed, 1);
        let mut out = page(|_| 0x55)?;
        storage.read_page(2, &mut out)?;
        assert!(out.iter().all(|&b| b == 0));
        // A notify while the slot is held (as by a reader) takes no lock: the page is freed by
        // the drain, after the holder is done. (The push is the queue's second: a new queue has
        // spare pages, so it cannot fall back to draining inline, which would wait for the
        // lock held here.)
        storage.write_page(3, &page(|i| (i / 32) as u8)?, 0)?;
        {
            let held = storage.table.slots.lock(3).ok_or(EINVAL)?;
            storage.notify_free(3);
            assert!(held.has_object());
        }
        storage.deferred.flush();
        assert_eq!(s.pages_stored.get(), 0);
        // An index past the bitmap has nothing to free and queues nothing; one past the last
        // slot but in the last word is queued, and the drain finds nothing to free.
        storage.notify_free(32);
        assert_eq!(storage.deferred.stats().pushed, 2);
        storage.notify_free(8);
        storage.deferred.flush();
        assert_eq!(storage.deferred.stats().pushed, 3);
        assert_eq!(storage.notify_free_count(), 4);
        Ok(())
    }
}
