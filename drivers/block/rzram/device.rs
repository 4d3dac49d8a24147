// SPDX-License-Identifier: GPL-2.0

//! One rzram device: its state and its lifecycle (initialised by `disksize`, claimed and reset by
//! `reset` and `hot_remove`). Its I/O is in `io.rs`, its sysfs attributes in `attrs.rs`.
//!
//! # Lock order
//!
//! The disk's `open_mutex` (taken by [`Disk::if_unopened`] in [`Rzram::claim`]), then the
//! configuration mutex (`config`). A reset takes the post-processing mutex (`pp_lock`) under
//! `config`, to wait for a `recompress` or `writeback`; those hold it, and take neither `config`
//! nor the open mutex. None of these is ever taken under a slot lock, a compression stream or a
//! zsmalloc mapping (`storage.rs`). The module's device list mutex (`rzram.rs`) comes before all
//! of them.
//!
//! The storage pointer takes no lock: readers follow it in an RCU read-side critical section (the
//! swap notify, in the one swap's spinlock makes of its call; a bio, until a page must sleep) or
//! take a reference (everything else); `disksize` and reset replace it under `config`, and a
//! reset waits for an RCU grace period before it drops the old storage.

use crate::{config::Config, storage::Storage, writeback::WbLimit};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::{
    block::bio::Disk,
    error::code::*,
    new_mutex,
    prelude::*,
    sync::{
        rcu::{self, RcuArc},
        Arc, Mutex,
    },
};

/// The number of writebacks `writeback` keeps in flight unless `writeback_batch_size` says
/// otherwise, as zram.
pub(crate) const DEFAULT_WB_BATCH: u32 = 32;

/// [`Rzram::claim`] states: nobody has claimed the device.
const FREE: u8 = 0;
/// A `reset` has claimed the device, until it is done.
const RESET: u8 = 1;
/// A removal has claimed the device, for good.
const REMOVAL: u8 = 2;

/// The state of one device.
#[pin_data]
pub(crate) struct Rzram {
    /// The memory of the initialised device; `None` until `disksize` is written. Replaced only
    /// under `config`.
    pub(crate) storage: RcuArc<Storage>,
    /// Serialises configuration (`disksize`, `reset`, `comp_algorithm`, `algorithm_params`,
    /// `mem_limit`); holds the algorithm and parameters the next `disksize` will use.
    #[pin]
    pub(crate) config: Mutex<Config>,
    /// The pool limit in pages from `mem_limit`; 0 for none.
    pub(crate) limit_pages: AtomicU64,
    /// Who has claimed the device: [`FREE`], [`RESET`] or [`REMOVAL`]. Opens fail with `EBUSY`
    /// unless it is free.
    claim: AtomicU8,
    /// Set while a post-processing operation (`recompress`, `writeback`) runs: another fails
    /// with `EAGAIN`.
    pub(crate) post_processing: AtomicBool,
    /// Held by the post-processing operation under way, so that a reset waits for it, as zram's
    /// does.
    #[pin]
    pub(crate) pp_lock: Mutex<()>,
    /// `writeback_limit` and `writeback_limit_enable`; kept across resets, as zram.
    pub(crate) wb_limit: WbLimit,
    /// `writeback_batch_size`: the writebacks kept in flight; never 0.
    pub(crate) wb_batch: AtomicU32,
}

/// A post-processing operation under way; see [`Rzram::post_processing`].
pub(crate) struct PostProcessing<'a> {
    rz: &'a Rzram,
    _lock: kernel::sync::lock::Guard<'a, (), kernel::sync::lock::mutex::MutexBackend>,
}

impl Drop for PostProcessing<'_> {
    fn drop(&mut self) {
        self.rz.post_processing.store(false, Ordering::Release);
    }
}

impl Rzram {
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Rzram {
                storage: RcuArc::new(None),
                config <- new_mutex!(Config::default(), "rzram::config"),
                limit_pages: AtomicU64::new(0),
                claim: AtomicU8::new(FREE),
                post_processing: AtomicBool::new(false),
                pp_lock <- new_mutex!((), "rzram::pp_lock"),
                wb_limit: WbLimit::default(),
                wb_batch: AtomicU32::new(DEFAULT_WB_BATCH),
            }),
            GFP_KERNEL,
        )
    }

    /// Returns the device's memory if it is initialised.
    pub(crate) fn storage(&self) -> Option<Arc<Storage>> {
        self.storage.get_arc()
    }

    /// Whether the device is initialised (has storage). Stable while `config` is held.
    pub(crate) fn initialized(&self) -> bool {
        self.storage.get(&rcu::read_lock()).is_some()
    }

    /// Whether the device is claimed (by a reset or a removal): opens then fail with `EBUSY`.
    pub(crate) fn claimed(&self) -> bool {
        self.claim.load(Ordering::Acquire) != FREE
    }

    /// Claims the device for a reset: fails with `EBUSY` if it is open or already claimed.
    /// Opens fail from now until [`unclaim`](Self::unclaim).
    pub(crate) fn claim(&self, disk: &Disk) -> Result {
        let free = || {
            self.claim
                .compare_exchange(FREE, RESET, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        };
        if !disk.if_unopened(free)? {
            return Err(EBUSY);
        }
        // Whatever the page cache still holds for the device goes out now.
        disk.sync();
        Ok(())
    }

    /// Claims the device for its removal, for good: fails with `EBUSY` if it is open. A claim a
    /// `reset` holds is no obstacle, as in zram: the removal's reset runs after that one (the
    /// config lock orders them), the reset's [`unclaim`](Self::unclaim) leaves the removal's
    /// claim in place, so that no open slips in between, and the disk's deletion waits for the
    /// `reset` write to return.
    pub(crate) fn claim_for_removal(&self, disk: &Disk) -> Result {
        disk.if_unopened(|| self.claim.store(REMOVAL, Ordering::Release))?;
        disk.sync();
        Ok(())
    }

    /// Starts a post-processing operation (`recompress`, `writeback`) on `storage`, which the
    /// caller took from [`storage`](Self::storage): `EAGAIN` if another is under way, `EINVAL` if
    /// a reset has replaced `storage` since. The operation runs while the guard lives.
    ///
    /// The check is made with the lock held, which is what a reset waits for after it replaces
    /// the storage: either the reset came first and this sees it, or the reset waits for the
    /// guard. So when a reset returns, no post-processing uses the old storage (or its backing
    /// device), as in zram, whose `writeback_store()` and `recompress_store()` hold `init_lock`.
    pub(crate) fn post_processing(&self, storage: &Arc<Storage>) -> Result<PostProcessing<'_>> {
        if self.post_processing.swap(true, Ordering::Acquire) {
            return Err(EAGAIN);
        }
        let pp = PostProcessing {
            rz: self,
            _lock: self.pp_lock.lock(),
        };
        let current = self.storage.get(&rcu::read_lock()).map(core::ptr::from_ref);
        if current != Some(core::ptr::from_ref::<Storage>(storage)) {
            return Err(EINVAL);
        }
        Ok(pp)
    }

    /// Ends a reset's claim; a removal's stays.
    pub(crate) fn unclaim(&self) {
        let _ = self
            .claim
            .compare_exchange(RESET, FREE, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Frees the device's memory and statistics, closes its backing device and sets its size to
    /// 0. The caller has claimed the device.
    pub(crate) fn reset(&self, disk: &Disk) {
        let mut cfg = self.config.lock();
        // Returns after a grace period: no swap notify still uses the old storage.
        let storage = self.storage.replace(None);
        // A `recompress` or `writeback` under way finishes first, as zram's reset waits for it;
        // one that has yet to start finds the storage gone (`post_processing`).
        drop(self.pp_lock.lock());
        // No I/O holds a reference: the device is claimed, not open, and synced. A sysfs `show`
        // running now may still hold one (it clones the `Arc` to read the statistics), and so
        // may a `writeback` or `recompress` that `post_processing` is refusing; then the memory
        // goes when that call returns, and its drop flushes the deferred frees and frees the
        // pool there, in process context.
        drop(storage);
        // Gives the backing device up before this returns, whatever still holds a reference to
        // its file (the `BdevClaim`): a `backing_dev` right after may claim it again.
        *cfg = Config::default();
        self.limit_pages.store(0, Ordering::Relaxed);
        disk.set_capacity(0);
    }
}
