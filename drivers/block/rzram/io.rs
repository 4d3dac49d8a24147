// SPDX-License-Identifier: GPL-2.0

//! The I/O path: bios into and out of the device's storage, by operation.
//!
//! # Lock order
//!
//! A bio takes no lock of its own. It reaches the storage in an RCU read-side critical section, as
//! long as nothing sleeps: a reset drops the storage only after a grace period, so it never frees
//! memory a bio uses. A page that must sleep (a written-back page read from the backing device, a
//! pool that grows only by reclaim, a partial page's own buffer) first takes a reference to the
//! storage and leaves the critical section for the rest of the bio ([`Held`]). The pages go through
//! `storage.rs`, whose slot lock, compression stream and zsmalloc mapping nest in that order. The
//! swap-slot notification runs in atomic context under swap's lock and takes no lock: it reads the
//! storage in the RCU read-side critical section that swap's spinlock makes of the call, and sets
//! an atomic bit; once for 32 neighbouring slots it also pushes onto this CPU's deferred-free queue
//! (whose drain, inline when the queue is full, takes one slot lock at a time).

use crate::{
    device::Rzram,
    storage::{ReadOutcome, Storage, WriteOutcome},
};
use core::ops::Range;
use kernel::{
    block::{
        bio::{dir, Bio, Data, Op, Operations, Segment},
        SECTOR_SHIFT,
    },
    error::code::*,
    page::PAGE_SIZE,
    prelude::*,
    sync::{rcu, Arc},
};

/// Sectors per page.
const SECTORS_PER_PAGE: u64 = (PAGE_SIZE >> SECTOR_SHIFT) as u64;

/// Calls `f(segment, offset in the segment, page index, byte range in the page)` for each part of
/// the bio's data that lies in one page of the device: a segment lies within one page of memory
/// but may straddle two of the device.
fn for_each_page<D>(
    data: &mut Data<'_, D>,
    mut f: impl FnMut(&mut Segment<'_, D>, usize, usize, Range<usize>) -> Result,
) -> Result {
    data.for_each_segment(|seg| {
        let mut sector = seg.sector();
        let mut done = 0;
        while done < seg.bytes() {
            let index = (sector / SECTORS_PER_PAGE) as usize;
            let offset = ((sector % SECTORS_PER_PAGE) << SECTOR_SHIFT) as usize;
            let n = (seg.bytes() - done).min(PAGE_SIZE - offset);
            f(seg, done, index, offset..offset + n)?;
            done += n;
            sector += (n >> SECTOR_SHIFT) as u64;
        }
        Ok(())
    })
}

/// The storage of a device for one bio: borrowed in an RCU read-side critical section while
/// nothing sleeps, as the common path never does; from the first page that must sleep on, a
/// reference, with the critical section left.
///
/// # Invariants
///
/// `rcu` is `Some` while `arc` is `None`.
struct Held<'d> {
    dev: &'d Rzram,
    rcu: Option<rcu::Guard>,
    arc: Option<Arc<Storage>>,
}

impl<'d> Held<'d> {
    /// The storage of `dev`, in an RCU read-side critical section.
    fn new(dev: &'d Rzram) -> Self {
        // INVARIANT: a guard, no reference.
        Held {
            dev,
            rcu: Some(rcu::read_lock()),
            arc: None,
        }
    }

    /// The storage, if the device has any; the caller must not sleep unless it came from
    /// [`sleepable`](Self::sleepable).
    #[inline]
    fn get(&self) -> Option<&Storage> {
        match (&self.arc, &self.rcu) {
            (Some(arc), _) => Some(arc),
            (None, Some(guard)) => self.dev.storage_rcu(guard),
            (None, None) => None,
        }
    }

    /// The storage, held by a reference from now on, out of the RCU read-side critical section:
    /// the caller may sleep. `EIO` if the device has no storage any more (which a bio never sees:
    /// its device is open, and a reset needs it closed).
    fn sleepable(&mut self) -> Result<&Storage> {
        if self.arc.is_none() {
            let arc = self.dev.storage().ok_or(EIO)?;
            // INVARIANT: the reference first, then the guard goes.
            self.arc = Some(arc);
            self.rcu = None;
        }
        self.arc.as_deref().ok_or(EIO)
    }
}

/// Reads the bio's data, page by page. A whole page is decompressed (or copied, or filled)
/// straight into the bio's memory, lent as a sink that only C writes (others may use an
/// `O_DIRECT` buffer meanwhile); part of a page is read into a page of its own and copied.
fn read(held: &mut Held<'_>, data: &mut Data<'_, dir::Read>) -> Result {
    for_each_page(data, |seg, done, index, part| {
        if part.len() == PAGE_SIZE {
            // The segment is the whole page (a segment lies within a page of memory).
            let storage = held.get().ok_or(EIO)?;
            match seg.with_sink(|dst| storage.try_read_page(index, dst))? {
                ReadOutcome::Done => Ok(()),
                ReadOutcome::WouldSleep => {
                    // Written back: read from the backing device, which sleeps.
                    let storage = held.sleepable()?;
                    seg.with_sink(|dst| storage.read_page(index, dst))
                }
            }
        } else {
            let storage = held.sleepable()?;
            let mut page = KVec::from_elem(0u8, PAGE_SIZE, GFP_NOIO)?;
            storage.read_page(index, &mut page)?;
            seg.copy_from_slice(done, &page[part])
        }
    })
}

/// Writes the bio's data, page by page. A whole page is checked and compressed straight from
/// the bio's memory, lent as a source that only C and volatile loads read (others may write an
/// `O_DIRECT` buffer meanwhile: `O_DIRECT` buffers are not covered by stable writes). Partial
/// pages are read into a page of their own, modified and written back.
fn write(held: &mut Held<'_>, data: &mut Data<'_, dir::Write>, limit_pages: u64) -> Result {
    for_each_page(data, |seg, done, index, part| {
        if part.len() == PAGE_SIZE {
            let storage = held.get().ok_or(EIO)?;
            match seg.with_source(|src| storage.try_write_page(index, src, limit_pages))? {
                WriteOutcome::Done => Ok(()),
                WriteOutcome::NeedMemory(len) => {
                    let storage = held.sleepable()?;
                    seg.with_source(|src| storage.write_page_stalled(index, src, limit_pages, len))
                }
            }
        } else {
            let storage = held.sleepable()?;
            let mut page = KVec::from_elem(0u8, PAGE_SIZE, GFP_NOIO)?;
            storage.read_page(index, &mut page)?;
            seg.copy_to_slice(done, &mut page[part])?;
            storage.write_page(index, &page, limit_pages)
        }
    })
}

/// Discard and write-zeroes: free the pages of the range, which is page-aligned (the logical
/// block size is a page). Each page counts in `notify_free`, as in zram.
fn discard(storage: &Storage, sector: u64, size: u32) {
    let first = (sector / SECTORS_PER_PAGE) as usize;
    for index in first..first + size as usize / PAGE_SIZE {
        storage.free_page(index);
        storage.stats().notify_free.inc();
    }
}

#[vtable]
impl Operations for Rzram {
    const OWNER: &'static ThisModule = &crate::THIS_MODULE;

    /// Handles a bio by its operation.
    ///
    /// May race with other bios (of the same pages too: the slot lock orders them, page by
    /// page), with swap notifications and deferred frees, with sysfs reads and with `disksize`,
    /// which cannot replace initialised storage. Never races with a reset: a reset needs the
    /// device unopened and synced, and a bio holds the device open.
    fn submit_bio(&self, mut bio: Bio) {
        let mut held = Held::new(self);
        let (sector, size) = (bio.sector(), bio.size());
        let end = sector + (u64::from(size) >> SECTOR_SHIFT);
        let misaligned = sector % SECTORS_PER_PAGE != 0 || size as usize % PAGE_SIZE != 0;
        let in_range = held
            .get()
            .is_some_and(|s| end <= s.disksize() >> SECTOR_SHIFT);
        let r = if !in_range || misaligned {
            Err(EIO)
        } else {
            match bio.op() {
                Op::Read(mut data) => {
                    data.start_io_acct();
                    read(&mut held, &mut data).inspect_err(|_| {
                        if let Some(s) = held.get() {
                            s.stats().failed_reads.inc();
                        }
                    })
                }
                Op::Write(mut data) => {
                    data.start_io_acct();
                    let limit = self.limit_pages();
                    write(&mut held, &mut data, limit).inspect_err(|_| {
                        if let Some(s) = held.get() {
                            s.stats().failed_writes.inc();
                        }
                    })
                }
                Op::Discard | Op::WriteZeroes => {
                    if let Some(s) = held.get() {
                        discard(s, sector, size);
                    }
                    Ok(())
                }
                Op::Other(_) => Err(EIO),
            }
        };
        // Out of the RCU read-side critical section (or the reference dropped) before the
        // completion, which may run the submitter's callback.
        drop(held);
        // As zram, a failed read or write is an I/O error, whatever the cause (ENOMEM at the
        // memory limit or when the pool cannot grow, a failing backing device).
        bio.end(r.map_err(|_| EIO));
    }

    /// Refuses opens while a reset or a removal has claimed the device.
    fn open(&self) -> Result {
        if self.claimed() {
            Err(EBUSY)
        } else {
            Ok(())
        }
    }

    /// Swap freed the page at `slot`.
    ///
    /// Runs in atomic context under swap's lock, once per page of an exiting process: no lock
    /// and no counter here (see `SwapFreeQueue::notify`). May race with reads and writes of the
    /// same page, with the deferred free's drain, and with sysfs reads. Never races with a reset
    /// (swap holds the device open), and the storage is reached in the RCU read-side critical
    /// section that swap's lock makes of the call (`guard`) anyway, so it outlives this call
    /// whatever happens.
    fn swap_slot_free_notify(&self, slot: usize, guard: &rcu::Guard) {
        let Some(storage) = self.storage_rcu(guard) else {
            return;
        };
        storage.notify_free(slot);
    }
}
