// SPDX-License-Identifier: GPL-2.0

//! The two bitmaps beside a device's slot table, of atomic bits set and cleared without a lock,
//! from any context: the blocks of the backing device in use ([`Blocks`]), and the slots swap
//! freed since their contents were stored ([`Stale`]).
//!
//! Swap's `swap_slot_free_notify` sets a slot's stale bit with one atomic OR and no lock;
//! emptying the slot clears it (under the slot lock: a write, a discard, the drain). The bits
//! come 32 to a 64-bit word, next to a `QUEUED` bit: the notify that sets `QUEUED` queues the
//! word's index for the deferred free (`swap_free.rs`), and every other notify to the word rides
//! on that one, so that swap freeing neighbouring slots, as an exiting process does, touches the
//! per-CPU queue once in 32 notifies. The drain frees a slot only if it finds its bit set under
//! the slot's lock, so it never frees contents stored after the notify, and writeback and
//! recompression leave a stale slot alone.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::prelude::*;

/// The blocks of a backing device of `nr_pages` pages that writeback may use: all of them, but
/// no more than a slot's word can index, since a written-back page's slot holds its block's
/// index. Only a 32-bit kernel with a backing device of 16 TiB (of 4 KiB pages) or more leaves
/// blocks unused (C zram truncates the page count to `unsigned long` there).
pub(crate) fn backing_blocks(nr_pages: u64) -> u64 {
    nr_pages.min(u64::try_from(usize::MAX).unwrap_or(u64::MAX))
}

/// `n` words, all bits clear. Fails with `ENOMEM`, without a warning, if memory is short.
fn zeroed_words(n: usize) -> Result<KVVec<AtomicU64>> {
    let mut words = KVVec::with_capacity(n, GFP_KERNEL | __GFP_NOWARN)?;
    for _ in 0..n {
        words.push(AtomicU64::new(0), GFP_KERNEL)?;
    }
    Ok(words)
}

/// Which blocks of a backing device are in use (set from the moment a writeback reserves the
/// block until the page it holds is freed, or the writeback fails or finds the page changed).
///
/// Each initialisation of the device has its own (a reset drops it with the table), so neither a
/// reservation nor the bounds of a scan outlive the device they were made for.
pub(crate) struct Blocks {
    words: KVVec<AtomicU64>,
    bits: u64,
}

impl Blocks {
    /// `bits` free blocks. Fails with `ENOMEM`, quietly, if memory is short.
    pub(crate) fn new(bits: u64) -> Result<Self> {
        let n = usize::try_from(bits.div_ceil(64)).map_err(|_| ENOMEM)?;
        Ok(Blocks {
            words: zeroed_words(n)?,
            bits,
        })
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
    pub(crate) fn reserve(&self) -> Option<u64> {
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
    pub(crate) fn test_and_clear(&self, i: u64) -> bool {
        self.word(i)
            .is_some_and(|(w, bit)| w.fetch_and(!bit, Ordering::AcqRel) & bit != 0)
    }
}

/// What [`Table::mark_stale`](crate::slots::Table::mark_stale) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marked {
    /// The slot is stale, and its word was queued (or orphaned) already: the drain that takes
    /// the word will see the bit.
    Queued,
    /// The slot is stale, and its word, of this index, was not queued: the caller must queue it
    /// for [`SwapFrees`](crate::swap_free::SwapFrees) or, if it cannot (interrupt context),
    /// hand it to the next drain with [`Table::orphan_stale`](crate::slots::Table::orphan_stale).
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
pub(crate) struct Stale {
    words: KVVec<AtomicU64>,
    /// Some word was set `QUEUED` and not queued: the next drain takes every `QUEUED` word.
    orphans: AtomicBool,
}

impl Stale {
    /// Slots to a word.
    pub(crate) const PER_WORD: usize = 32;
    const SLOTS: u64 = (1 << Self::PER_WORD) - 1;
    const QUEUED: u64 = 1 << Self::PER_WORD;

    /// No slot of `slots` stale. Fails with `ENOMEM`, quietly, if memory is short.
    pub(crate) fn new(slots: usize) -> Result<Self> {
        // INVARIANT: no bit is set, and nothing is queued.
        Ok(Stale {
            words: zeroed_words(slots.div_ceil(Self::PER_WORD))?,
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
    pub(crate) fn mark(&self, i: usize) -> Marked {
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
            // Fits: `Storage::with_config` keeps slot indices in `u32`.
            Marked::First((i / Self::PER_WORD) as u32)
        }
    }

    /// Records that a word was set `QUEUED` by [`mark`](Self::mark) and could not be queued.
    pub(crate) fn orphan(&self) {
        // INVARIANT: the next drain takes the word. Release: that drain, whose swap acquires
        // this store, sees the word's `QUEUED`.
        self.orphans.store(true, Ordering::Release);
    }

    /// Returns the words orphaned since the last call (every word with `QUEUED` set: some may
    /// be queued too, which costs their second drain nothing), or none.
    pub(crate) fn take_orphans(&self) -> impl Iterator<Item = u32> + '_ {
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
    pub(crate) fn test(&self, i: usize) -> bool {
        // Relaxed, as every access to the bits but the orphans' flag: a bit orders no other
        // memory (the slot's contents are ordered by the slot lock, under which it is tested
        // and cleared), and the accesses to one word are ordered among themselves.
        self.word(i)
            .is_some_and(|(w, bit)| w.load(Ordering::Relaxed) & bit != 0)
    }

    /// Clears slot `i`'s bit; returns whether it was set. A load only if it is not.
    pub(crate) fn clear(&self, i: usize) -> bool {
        let Some((w, bit)) = self.word(i) else {
            return false;
        };
        w.load(Ordering::Relaxed) & bit != 0 && w.fetch_and(!bit, Ordering::Relaxed) & bit != 0
    }

    /// Takes a queued word for its drain: clears its `QUEUED` and returns the slots whose bits
    /// are set (each still to be cleared under its slot's lock). Nothing for an index past the
    /// end.
    pub(crate) fn take_word(&self, word: u32) -> StaleSlots {
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
    pub(crate) fn count(&self) -> u64 {
        self.words
            .iter()
            .map(|w| u64::from((w.load(Ordering::Relaxed) & Self::SLOTS).count_ones()))
            .sum()
    }
}

/// The slots whose stale bits one word had when its drain took it.
pub(crate) struct StaleSlots {
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

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_bitmaps)]
mod tests {
    use super::*;
    use kernel::{kunit_expect, kunit_expect_eq};

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
}
