// SPDX-License-Identifier: GPL-2.0

//! A slot's state: what rzram keeps in a slot's 32-bit lock word (the slot table is `slots.rs`),
//! and the page's access time next to it. The lock word packs:
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
//!   compressed by the algorithm of that priority (`compressed_writeback`), or raw for a size of
//!   a page.
//! - `UNDER_WB`: a write of the page to the backing device is in flight. Whatever changes the
//!   contents (a write, a discard, the deferred free of a slot swap freed) clears it, so the
//!   writeback's completion knows whether the block it wrote still holds the page.

use kernel::{
    time::Ktime,
    zsmalloc::{self, SlotGuard},
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

    /// Whether post-processing (`recompress`, `writeback`) may take the page, its size aside: a
    /// compressed page held in memory (not same-filled, not written back or being written), idle
    /// if `idle` is asked for and huge if `huge` is.
    pub(crate) fn is_candidate(self, idle: bool, huge: bool) -> bool {
        !self.is_same()
            && !self.is_wb()
            && !self.is_under_wb()
            && (!idle || self.is_idle())
            && (!huge || self.is_huge())
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

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kernel::prelude::kunit_tests(rzram_state)]
mod tests {
    use super::*;
    use kernel::{c_str, prelude::*, sync::Arc, zsmalloc::Contents, zsmalloc::Pool};
    use kernel::{kunit_expect, kunit_expect_eq};

    #[test]
    fn packing() -> Result {
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
        let pool = Arc::new(Pool::new(c_str!("rzram_kunit_pack"))?, GFP_KERNEL)?;
        let slots = zsmalloc::Table::new(pool, 1)?;
        {
            let mut g = slots.lock(0).ok_or(EINVAL)?;
            g.replace(Contents::Word(9))?;
            State::stored(300, true).set(&mut g);
        }
        kunit_expect_eq!(State::snapshot(&slots, 0), Some(State::stored(300, true)));
        {
            let mut g = slots.lock(0).ok_or(EINVAL)?;
            kunit_expect_eq!(State::of(&g), State::stored(300, true));
            kunit_expect_eq!(slots.try_lock(0).err(), Some(EBUSY));
            State::SAME.set(&mut g);
        }
        kunit_expect!(slots.try_lock(0).is_ok());
        kunit_expect_eq!(State::snapshot(&slots, 0), Some(State::SAME));
        kunit_expect_eq!(slots.lock(0).and_then(|g| g.word()), Some(9));
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
}
