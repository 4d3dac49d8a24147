// SPDX-License-Identifier: GPL-2.0

//! The slot table: one 16-byte slot per page of the disk.
//!
//! The slots are a [`zsmalloc::Table`], which owns the device's pool: each slot holds a zsmalloc
//! object of the pool or a plain word, under a lock of its own, and 32 bits of rzram's next to
//! them: the page's access time, in seconds since boot (`CLOCK_BOOTTIME`), which takes the space
//! the word's alignment would leave empty after the lock word, so the slot stays 16 bytes on
//! 64-bit. The slot's lock
//! word (32 bits) packs:
//!
//! ```text
//!  31     30       29..26   25         24   23       22..21  20     19        18     17     16..0
//! [LOCK] [OBJECT] [unused] [UNDER_WB] [WB] [INCOMP] [PRIO]  [IDLE] [unused]  [HUGE] [SAME] [size]
//! ```
//!
//! (`size` holds up to 65536 bytes.)
//!
//! - `LOCK` and `OBJECT` belong to the table: the lock, and whether the slot holds an object or a
//!   word. The 30 bits below are rzram's, read and written only as a typed [`State`].
//! - `SAME`: the page is one machine word repeated; the slot holds the word, no memory is used.
//!   A slot never written has no flags and the word 0, so it reads as zeroes too.
//! - `HUGE`: the page did not compress below zsmalloc's huge class size and is stored raw.
//! - `IDLE`: set by the `idle` attribute on stored pages not accessed since a time; cleared when
//!   the page is read or written.
//! - `PRIO`: the priority of the algorithm that compressed the page: 0 for the primary one, 1 to 3
//!   for a secondary one of `recomp_algorithm` that `recompress` used.
//! - `INCOMP`: no secondary algorithm compressed the page better; `recompress` skips it.
//! - `WB`: the page was written back: the slot holds the index of its block on the backing
//!   device, and no object. `size` and `PRIO` say how it is stored there: a page of `size` bytes
//!   compressed by the algorithm of that priority (`writeback_compressed`), or raw for a size of
//!   a page.
//! - `UNDER_WB`: a write of the page to the backing device is in flight. Whatever changes the
//!   contents (a write, a free, a recompression) clears it, so the writeback's completion knows
//!   whether the block it wrote still holds the page.
//!
//! The contents (an object or the word) are reached only through the slot's guard.
//!
//! Next to the slots, one bit per slot says that swap freed the slot since its contents were
//! last stored ([`Stale`]): `swap_slot_free_notify` sets it with one atomic OR and no lock;
//! emptying the slot clears it (under the slot lock: a write, a discard, the drain). The bits
//! come 32 to a 64-bit word, next to a `QUEUED` bit: the notify that sets `QUEUED` queues the
//! word's index for the deferred free, and every other notify to the word rides on that one,
//! so that swap freeing neighbouring slots, as an exiting process does, touches the per-CPU
//! queue once in 32 notifies. The drain frees a slot only if it finds its bit set under the
//! slot's lock, so it never frees contents stored after the notify, and writeback and
//! recompression leave a stale slot alone.

use crate::stats::Stats;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::{
    prelude::*,
    sync::Arc,
    time::Ktime,
    zsmalloc::{self, Contents, DeferredFree, Handle, Pool, SlotGuard},
};

/// Compressed size, in bytes.
const SIZE_MASK: u32 = (1 << 17) - 1;
/// The page is a repeated word, held in the slot.
const SAME: u32 = 1 << 17;
/// The page is stored uncompressed.
const HUGE: u32 = 1 << 18;
/// Not accessed since the last `idle` marking.
const IDLE: u32 = 1 << 20;
/// The priority of the algorithm that compressed the page (two bits).
const PRIO_SHIFT: u32 = 21;
const PRIO_MASK: u32 = 3 << PRIO_SHIFT;
/// No secondary algorithm compressed the page better.
const INCOMPRESSIBLE: u32 = 1 << 23;

/// Written back: the slot holds the page's block on the backing device.
const WB: u32 = 1 << 24;
/// A writeback of the page is in flight.
const UNDER_WB: u32 = 1 << 25;

/// The number of algorithm priorities: the primary one and three secondary ones, as zram.
pub(crate) const MAX_PRIO: usize = 4;

kernel::static_assert!(UNDER_WB <= zsmalloc::Table::MAX_BITS);
kernel::static_assert!(kernel::page::PAGE_SIZE as u32 <= SIZE_MASK);

/// One page of the disk, as stored.
pub(crate) type Slot = zsmalloc::Slot;

#[cfg(CONFIG_64BIT)]
kernel::static_assert!(core::mem::size_of::<Slot>() == 16);

/// What a slot holds, as its lock word says: nothing, a repeated word, or a stored object (with
/// its size, and whether it is stored uncompressed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct State(u32);

impl State {
    /// Never written, or emptied.
    pub(crate) const EMPTY: State = State(0);
    /// A page that repeats one word, which the slot holds.
    pub(crate) const SAME: State = State(SAME);

    /// A page stored as an object of `size` bytes (at most a page), uncompressed if `huge`.
    pub(crate) fn stored(size: usize, huge: bool) -> State {
        let size = size.min(SIZE_MASK as usize) as u32;
        State(size | if huge { HUGE } else { 0 })
    }

    /// Returns the size of the stored object; 0 for an empty or same-filled slot.
    pub(crate) fn size(self) -> usize {
        (self.0 & SIZE_MASK) as usize
    }

    pub(crate) fn is_same(self) -> bool {
        self.0 & SAME != 0
    }

    pub(crate) fn is_huge(self) -> bool {
        self.0 & HUGE != 0
    }

    /// The same contents, marked idle or not.
    pub(crate) fn with_idle(self, idle: bool) -> State {
        State(if idle { self.0 | IDLE } else { self.0 & !IDLE })
    }

    pub(crate) fn is_idle(self) -> bool {
        self.0 & IDLE != 0
    }

    /// The same contents, compressed by the algorithm of priority `prio` (below [`MAX_PRIO`]).
    pub(crate) fn with_prio(self, prio: usize) -> State {
        let p = (prio as u32 & 3) << PRIO_SHIFT;
        State((self.0 & !PRIO_MASK) | p)
    }

    /// The priority of the algorithm that compressed the page.
    pub(crate) fn prio(self) -> usize {
        ((self.0 & PRIO_MASK) >> PRIO_SHIFT) as usize
    }

    /// The same contents, which no secondary algorithm compresses better.
    pub(crate) fn incompressible(self) -> State {
        State(self.0 | INCOMPRESSIBLE)
    }

    pub(crate) fn is_incompressible(self) -> bool {
        self.0 & INCOMPRESSIBLE != 0
    }

    /// A page written back, as `size` bytes compressed by the algorithm of priority `prio`, or
    /// raw for a size of a page.
    pub(crate) fn written_back(size: usize, prio: usize) -> State {
        State(Self::stored(size, false).0 | WB).with_prio(prio)
    }

    pub(crate) fn is_wb(self) -> bool {
        self.0 & WB != 0
    }

    /// The same contents, with a writeback in flight.
    pub(crate) fn under_wb(self) -> State {
        State(self.0 | UNDER_WB)
    }

    /// The same contents, with no writeback in flight.
    pub(crate) fn without_wb(self) -> State {
        State(self.0 & !UNDER_WB)
    }

    pub(crate) fn is_under_wb(self) -> bool {
        self.0 & UNDER_WB != 0
    }

    /// The state a locked slot's bits hold.
    pub(crate) fn of(g: &SlotGuard<'_>) -> State {
        State(g.bits())
    }

    /// Stores the state in a locked slot's bits; published when the slot is unlocked.
    pub(crate) fn set(self, g: &mut SlotGuard<'_>) {
        g.set_bits(self.0);
    }

    /// A snapshot of slot `index`'s state, which its lock holder may change at any time.
    pub(crate) fn snapshot(slots: &zsmalloc::Table, index: usize) -> Option<State> {
        slots.bits(index).map(State)
    }
}

/// The pool, the slots and the statistics of an initialised disk.
pub(crate) struct Table {
    /// The device's pool; the same as `slots.pool()`.
    pub(crate) pool: Arc<Pool>,
    pub(crate) slots: zsmalloc::Table,
    pub(crate) stats: Stats,
    /// The blocks of the backing device in use; none without one.
    blocks: Bits,
    /// The slots that swap freed since their contents were stored.
    stale: Stale,
}

impl Table {
    /// A table of `pages` empty slots on `pool`, with `backing_pages` blocks of a backing device
    /// to write pages back to. Fails with `ENOMEM`, without a warning, if memory is short or
    /// `pages` is too large.
    pub(crate) fn new(pool: Arc<Pool>, pages: usize, backing_pages: u64) -> Result<Self> {
        Ok(Table {
            slots: zsmalloc::Table::new(pool.clone(), pages)?,
            pool,
            stats: Stats::default(),
            blocks: Bits::new(backing_pages)?,
            stale: Stale::new(pages)?,
        })
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
        if self.stale.clear(g.index()) {
            tally.notify_free += 1;
        }
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
            Contents::Object(h) if !core::ptr::eq(h.pool(), &*self.pool) => return Err(EINVAL),
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

/// Statistics changes of emptied slots, applied together.
#[derive(Default)]
struct Tally {
    /// Notifies counted (added); the rest are taken away.
    notify_free: u64,
    same_pages: u64,
    pages_stored: u64,
    compr_data_size: u64,
    huge_pages: u64,
}

impl Tally {
    /// Counts a slot that held `w` (and an object, if `object`).
    #[inline(always)]
    fn count(&mut self, w: State, object: bool) {
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
    fn apply(&self, s: &Stats) {
        Tally::default().apply_since(self, s);
    }

    /// Adds the counts to the statistics and takes `gone`'s away, each counter changed once by
    /// the difference (each change is an atomic operation); adds `gone`'s notifies.
    #[inline(always)]
    fn apply_since(&self, gone: &Tally, s: &Stats) {
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

/// A bitmap of atomic bits, set and cleared without a lock, from any context: which blocks of a
/// backing device are in use (set from the moment a writeback reserves the block until the page
/// it holds is freed, or the writeback fails or finds the page changed).
///
/// Each initialisation of the device has its own (a reset drops it with the table), so neither a
/// reservation nor the bounds of a scan outlive the device they were made for.
struct Bits {
    words: KVVec<AtomicU64>,
    bits: u64,
}

impl Bits {
    fn new(bits: u64) -> Result<Self> {
        let n = usize::try_from(bits.div_ceil(64)).map_err(|_| ENOMEM)?;
        let mut words = KVVec::with_capacity(n, GFP_KERNEL | __GFP_NOWARN)?;
        for _ in 0..n {
            words.push(AtomicU64::new(0), GFP_KERNEL)?;
        }
        Ok(Bits { words, bits })
    }

    /// The word and the mask of bit `i`; `None` if `i` is out of range.
    fn word(&self, i: u64) -> Option<(&AtomicU64, u64)> {
        if i >= self.bits {
            return None;
        }
        let w = self.words.get(usize::try_from(i / 64).ok()?)?;
        Some((w, 1 << (i % 64)))
    }

    /// Sets the first clear bit and returns its block; `None` if all are set.
    fn reserve(&self) -> Option<u64> {
        for (i, w) in self.words.iter().enumerate() {
            let mut cur = w.load(Ordering::Relaxed);
            loop {
                let bit = (!cur).trailing_zeros();
                let block = i as u64 * 64 + u64::from(bit);
                if bit == 64 || block >= self.bits {
                    break;
                }
                match w.compare_exchange_weak(
                    cur,
                    cur | (1 << bit),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some(block),
                    Err(now) => cur = now,
                }
            }
        }
        None
    }

    /// Clears bit `i`; returns whether it was set.
    fn test_and_clear(&self, i: u64) -> bool {
        self.word(i)
            .is_some_and(|(w, bit)| w.fetch_and(!bit, Ordering::AcqRel) & bit != 0)
    }
}

/// What [`Table::mark_stale`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marked {
    /// The slot is stale, and its word was queued (or orphaned) already: the drain that takes
    /// the word will see the bit.
    Queued,
    /// The slot is stale, and its word, of this index, was not queued: the caller must queue it
    /// for [`SwapFrees`] or, if it cannot (interrupt context), hand it to the next drain with
    /// [`Table::orphan_stale`].
    First(u32),
    /// The index is past the bitmap's last word: nothing was marked.
    OutOfRange,
}

/// The stale bits: 32 slots to a 64-bit word, and above them `QUEUED`, set while a drain of the
/// word is queued.
///
/// The last word may have bits past the last slot: a notify marks them as any other (the notify
/// checks one bound, the words'; swap never notifies past the end), and the drain clears them
/// without a slot lock, there being no slot.
///
/// # Invariants
///
/// A word with `QUEUED` set is in the deferred-free queue, or about to be (its notify found
/// `QUEUED` clear and is pushing it), or orphaned (`orphans` is set, or the drain that cleared
/// it is taking the orphans): a slot bit set while `QUEUED` is set is seen by a drain of the
/// word. The notify sets the slot's bit and `QUEUED` in one atomic OR, and the one that found
/// `QUEUED` clear queues the word, or orphans it if it cannot; the drain clears `QUEUED` and
/// takes the slot bits in one atomic AND. Both act on one location, so each notify either finds
/// `QUEUED` set before the drain's AND (which then returns its bit) or clear after it (and
/// queues the word again).
struct Stale {
    words: KVVec<AtomicU64>,
    /// Some word was set `QUEUED` and not queued: the next drain takes every `QUEUED` word.
    orphans: AtomicBool,
}

impl Stale {
    /// Slots to a word.
    const PER_WORD: usize = 32;
    const SLOTS: u64 = (1 << Self::PER_WORD) - 1;
    const QUEUED: u64 = 1 << Self::PER_WORD;

    fn new(slots: usize) -> Result<Self> {
        let n = slots.div_ceil(Self::PER_WORD);
        let mut words = KVVec::with_capacity(n, GFP_KERNEL | __GFP_NOWARN)?;
        for _ in 0..n {
            words.push(AtomicU64::new(0), GFP_KERNEL)?;
        }
        // INVARIANT: no bit is set, and nothing is queued.
        Ok(Stale {
            words,
            orphans: AtomicBool::new(false),
        })
    }

    /// The word and the mask of slot `i`'s bit; `None` if `i` is past the last word.
    #[inline]
    fn word(&self, i: usize) -> Option<(&AtomicU64, u64)> {
        let w = self.words.get(i / Self::PER_WORD)?;
        Some((w, 1 << (i % Self::PER_WORD)))
    }

    #[inline]
    fn mark(&self, i: usize) -> Marked {
        let Some((w, bit)) = self.word(i) else {
            return Marked::OutOfRange;
        };
        // Relaxed: the drain takes the bit with an atomic AND on the same word, which reads the
        // value right before it in the word's modification order, and the slot's contents under
        // the slot lock; a write that reuses the slot, and clears the bit, is ordered after the
        // notify by swap's own locks; writeback and recompression only skip stale slots, so a
        // late view of the bit costs them nothing but a page the drain frees anyway.
        let old = w.fetch_or(bit | Self::QUEUED, Ordering::Relaxed);
        if old & Self::QUEUED != 0 {
            Marked::Queued
        } else {
            // Fits: `Storage::new` keeps slot indices in `u32`.
            Marked::First((i / Self::PER_WORD) as u32)
        }
    }

    /// Records that a word was set `QUEUED` by [`mark`](Self::mark) and could not be queued.
    fn orphan(&self) {
        // INVARIANT: the next drain takes the word. Release: that drain, whose swap acquires
        // this store, sees the word's `QUEUED`.
        self.orphans.store(true, Ordering::Release);
    }

    /// Returns the words orphaned since the last call (every word with `QUEUED` set: some may
    /// be queued too, which costs their second drain nothing), or none.
    fn take_orphans(&self) -> impl Iterator<Item = u32> + '_ {
        let any =
            self.orphans.load(Ordering::Relaxed) && self.orphans.swap(false, Ordering::Acquire);
        let words = if any { &self.words[..] } else { &[] };
        words
            .iter()
            .enumerate()
            .filter(|(_, w)| w.load(Ordering::Relaxed) & Self::QUEUED != 0)
            .map(|(i, _)| i as u32)
    }

    /// Whether slot `i`'s bit is set; `false` past the last word.
    fn test(&self, i: usize) -> bool {
        // Relaxed, as every access to the bits but the orphans' flag: a bit orders no other
        // memory (the slot's contents are ordered by the slot lock, under which it is tested
        // and cleared), and the accesses to one word are ordered among themselves.
        self.word(i)
            .is_some_and(|(w, bit)| w.load(Ordering::Relaxed) & bit != 0)
    }

    /// Clears slot `i`'s bit; returns whether it was set. A load only if it is not.
    fn clear(&self, i: usize) -> bool {
        let Some((w, bit)) = self.word(i) else {
            return false;
        };
        w.load(Ordering::Relaxed) & bit != 0 && w.fetch_and(!bit, Ordering::Relaxed) & bit != 0
    }

    /// Takes a queued word for its drain: clears its `QUEUED` and returns the slots whose bits
    /// are set (each still to be cleared under its slot's lock). Nothing for an index past the
    /// end.
    fn take_word(&self, word: u32) -> StaleSlots {
        let Some(w) = self.words.get(word as usize) else {
            return StaleSlots { base: 0, bits: 0 };
        };
        // INVARIANT: `QUEUED` is cleared here and the bits taken in the same atomic step: a
        // notify from now on queues the word again.
        let bits = w.fetch_and(!Self::QUEUED, Ordering::Relaxed) & Self::SLOTS;
        StaleSlots {
            base: word as usize * Self::PER_WORD,
            bits,
        }
    }

    /// Returns the number of slot bits set.
    #[cfg(CONFIG_RZRAM_KUNIT_TEST)]
    fn count(&self) -> u64 {
        self.words
            .iter()
            .map(|w| u64::from((w.load(Ordering::Relaxed) & Self::SLOTS).count_ones()))
            .sum()
    }
}

/// The slots whose stale bits one word had when its drain took it.
struct StaleSlots {
    base: usize,
    bits: u64,
}

impl Iterator for StaleSlots {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.bits == 0 {
            return None;
        }
        let b = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.base + b)
    }
}

/// Returns the time now, in the unit of a slot's access time: seconds since boot
/// (`CLOCK_BOOTTIME`, as of the last tick), saturated to 32 bits (136 years).
pub(crate) fn now_secs() -> u32 {
    let secs = Ktime::ktime_get_coarse_boottime().to_secs();
    u32::try_from(secs.max(0)).unwrap_or(u32::MAX)
}

/// Records an access to a locked slot, as zram does on every read and write: it is no longer
/// idle, and with `CONFIG_RZRAM_TRACK_ENTRY_ACTIME` its access time becomes now (without it, a
/// slot's access time stays 0, and nothing reads the clock).
#[inline]
pub(crate) fn accessed(g: &mut SlotGuard<'_>) {
    #[cfg(CONFIG_RZRAM_TRACK_ENTRY_ACTIME)]
    g.set_aux(now_secs());
    State::of(g).with_idle(false).set(g);
}

/// Returns a locked slot's access time, in seconds since boot; 0 for a slot emptied since.
pub(crate) fn access_time(g: &SlotGuard<'_>) -> u32 {
    g.aux()
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
/// full queue's inline drain): each slot is emptied under its lock, and only if it is still
/// stale, that is, not emptied or written since the notify (the stale bit is taken under the
/// lock, so two drains of one word free each slot once).
pub(crate) struct SwapFrees(pub(crate) Arc<Table>);

/// The words of the stale bitmap a CPU queues before the deferred free's worker takes them: as
/// many slots as the C zram's buffer page of `u32` slot numbers (1024 with 4 KiB pages), so that
/// the drain runs beside an exiting process's munmap, not after it.
pub(crate) const SWAP_FREE_BATCH: usize =
    kernel::page::PAGE_SIZE / core::mem::size_of::<u32>() / Stale::PER_WORD;

impl SwapFrees {
    /// Empties slot `index` if swap freed it and nothing was stored since; returns its object,
    /// if any, and counts the notify in `tally`.
    fn take_stale<'t>(t: &'t Table, index: usize, tally: &mut Tally) -> Option<Handle<'t>> {
        let Some(mut g) = t.slots.lock(index) else {
            // Past the last slot, in the last word: nothing to free, and no lock to take.
            tally.notify_free += u64::from(t.stale.clear(index));
            return None;
        };
        // `take_tallied` clears the bit and counts the notify.
        if t.stale.test(index) {
            t.take_tallied(&mut g, tally)
        } else {
            None
        }
    }
}

impl DeferredFree for SwapFrees {
    type Item = u32;

    fn drain(&self, words: &[u32]) {
        let t = &*self.0;
        let mut tally = Tally::default();
        // Each slot is emptied under its lock; the objects are then freed together, sorted by
        // size class, taking each class lock once per batch (one object is freed directly).
        t.pool.free_bulk(
            Iterator::chain(words.iter().copied(), t.stale.take_orphans())
                .flat_map(|w| t.stale.take_word(w))
                .filter_map(|i| Self::take_stale(t, i, &mut tally)),
        );
        // The statistics, notify_free included, change once a batch, off the notify's path.
        tally.apply(&t.stats);
    }
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_slots)]
mod tests {
    use super::*;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use kernel::{c_str, workqueue, zsmalloc::Contents};
    use kernel::{kunit_expect, kunit_expect_eq};

    fn pool(name: &'static CStr) -> Result<Arc<Pool>> {
        Ok(Arc::new(Pool::new(name)?, GFP_KERNEL)?)
    }

    #[test]
    fn packing() -> Result {
        #[cfg(CONFIG_64BIT)]
        kunit_expect_eq!(core::mem::size_of::<Slot>(), 16);
        for size in [0, 1, 100, 4095, 4096, 65536] {
            for huge in [false, true] {
                let st = State::stored(size, huge);
                kunit_expect_eq!(st.size(), size);
                kunit_expect_eq!(st.is_huge(), huge);
                kunit_expect!(!st.is_same());
                let i = st.with_idle(true);
                kunit_expect!(i.is_idle() && !st.is_idle());
                kunit_expect_eq!((i.size(), i.is_huge()), (size, huge));
                kunit_expect_eq!(i.with_idle(false), st);
                for prio in 0..MAX_PRIO {
                    let r = i.with_prio(prio).incompressible();
                    kunit_expect_eq!(r.prio(), prio);
                    kunit_expect!(r.is_incompressible() && r.is_idle());
                    kunit_expect_eq!((r.size(), r.is_huge()), (size, huge));
                    kunit_expect_eq!(r.with_prio(0).prio(), 0);
                }
                kunit_expect!(!st.is_incompressible() && st.prio() == 0);
            }
        }
        kunit_expect!(State::SAME.is_same() && State::SAME.with_idle(true).is_same());
        kunit_expect_eq!(State::SAME.size(), 0);
        kunit_expect!(State::EMPTY != State::SAME);
        // The state survives locking, and the table's own bits never show.
        let t = Table::new(pool(c_str!("rzram_kunit_pack"))?, 1, 0)?;
        {
            let mut g = t.slots.lock(0).ok_or(EINVAL)?;
            g.replace(Contents::Word(9))?;
            State::stored(300, true).set(&mut g);
        }
        kunit_expect_eq!(State::snapshot(&t.slots, 0), Some(State::stored(300, true)));
        {
            let mut g = t.slots.lock(0).ok_or(EINVAL)?;
            kunit_expect_eq!(State::of(&g), State::stored(300, true));
            kunit_expect_eq!(t.slots.try_lock(0).err(), Some(EBUSY));
            State::SAME.set(&mut g);
        }
        kunit_expect!(t.slots.try_lock(0).is_ok());
        kunit_expect_eq!(State::snapshot(&t.slots, 0), Some(State::SAME));
        kunit_expect_eq!(t.slots.lock(0).and_then(|g| g.word()), Some(9));
        Ok(())
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

    /// Stores an object of 100 bytes in slot `i`, as a write does (emptying it first).
    fn store(pool: &Pool, table: &Table, i: usize) -> Result {
        // Allocate first: the slot lock disables preemption.
        let h = pool.alloc(100, GFP_KERNEL)?.write(&[1; 100])?;
        let mut g = table.slots.lock(i).ok_or(EINVAL)?;
        table.store(&mut g, Contents::Object(h), State::stored(100, false))
    }

    /// An object of another pool is refused before the slot changes: what it held, and the
    /// statistics, stay as they were.
    #[test]
    fn store_refuses_a_foreign_object() -> Result {
        let pool = pool(c_str!("rzram_kunit_store"))?;
        let other = Pool::new(c_str!("rzram_kunit_store2"))?;
        let table = Table::new(pool.clone(), 1, 0)?;
        store(&pool, &table, 0)?;
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

    #[test]
    fn deferred_drain_respects_writes() -> Result {
        let pool = pool(c_str!("rzram_kunit_slots"))?;
        let table = Arc::new(Table::new(pool.clone(), 4, 0)?, GFP_KERNEL)?;
        let s = &table.stats;
        for i in 0..4 {
            store(&pool, &table, i)?;
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
        store(&pool, &table, 1)?;
        assert!(!table.is_stale(&table.slots.lock(1).ok_or(EINVAL)?));
        assert_eq!((s.notify_free.get(), table.stale_pending()), (1, 3));
        // The word queued twice, and a word past the end: the second finds nothing to free.
        SwapFrees(table.clone()).drain(&[0, 0, 9999]);
        assert!(!table.slots.lock(0).ok_or(EINVAL)?.has_object());
        assert!(table.slots.lock(1).ok_or(EINVAL)?.has_object());
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
        let s = &table.stats;
        for i in [2, 3, 40] {
            store(&pool, &table, i)?;
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
        assert_eq!(table.stats.notify_free.get(), 2);
        let mut word1: KVec<usize> = KVec::new();
        for i in table.stale.take_word(1) {
            word1.push(i, GFP_KERNEL)?;
        }
        assert_eq!(&word1[..], &[32, 63]);
        // Taken: the next notify to the word queues it again, and the bits stay until cleared.
        assert_eq!(table.mark_stale(40), Marked::First(1));
        assert_eq!(table.stale_pending(), 5);
        assert_eq!(table.stale.take_word(3).count(), 0);
        Ok(())
    }

    /// The writeback flags: `WB` with the size and priority of how the page is stored on the
    /// backing device, `UNDER_WB` set and cleared without touching the rest.
    #[test]
    fn writeback_states() -> Result {
        for size in [1, 2000, 4096] {
            for prio in 0..MAX_PRIO {
                let w = State::written_back(size, prio);
                kunit_expect!(w.is_wb() && !w.is_under_wb() && !w.is_same() && !w.is_huge());
                kunit_expect_eq!((w.size(), w.prio()), (size, prio));
                kunit_expect_eq!(w.with_idle(true).with_idle(false), w);
            }
        }
        let st = State::stored(300, true).with_prio(2).with_idle(true);
        let u = st.under_wb();
        kunit_expect!(u.is_under_wb() && !u.is_wb() && !st.is_under_wb());
        kunit_expect_eq!(
            (u.size(), u.is_huge(), u.prio(), u.is_idle()),
            (300, true, 2, true)
        );
        kunit_expect_eq!(u.without_wb(), st);
        kunit_expect!(u.with_idle(false).is_under_wb());
        kunit_expect!(!State::EMPTY.is_wb() && !State::EMPTY.is_under_wb());
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
