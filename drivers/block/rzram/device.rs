// SPDX-License-Identifier: GPL-2.0

//! One rzram device: its state and its lifecycle (initialised by `disksize`, claimed and reset by
//! `reset` and `hot_remove`), and the start of its post-processing operations (`recompress`,
//! `writeback`), which a reset waits for. Its I/O is in `io.rs`, its sysfs attributes in
//! `attrs.rs`.
//!
//! # Lock order
//!
//! The configuration mutex (`config`) comes before the backing device's `open_mutex`: a
//! `backing_dev` write opens the device under `config`. The disk's own `open_mutex` is taken
//! alone: [`Disk::if_unopened`] in [`Rzram::claim`] makes one compare-and-exchange under it. A
//! reset
//! takes the post-processing mutex (`post_processing`) under `config`, to wait for a
//! `recompress` or `writeback`; those hold it (taken with a trylock), and take neither `config`
//! nor an open mutex. None of these is ever taken under a slot lock, a compression stream or a
//! zsmalloc mapping (`storage.rs`). The module's device list mutex (`rzram.rs`) comes before all
//! of them.
//!
//! The storage pointer takes no lock: readers follow it in an RCU read-side critical section (the
//! swap notify, in the one swap's spinlock makes of its call; a bio, until a page must sleep) or
//! take a reference (everything else); `disksize` and reset replace it under `config`, and a
//! reset waits for an RCU grace period before it drops the old storage.

use crate::{
    args::{RecompressArgs, WritebackArgs},
    config::Config,
    recompress::Recompress,
    state::MAX_PRIO,
    stats::Snapshot,
    storage::Storage,
    writeback::{self, WbLimit, Writeback},
};
use core::{
    num::NonZeroU32,
    sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering},
};
use kernel::{
    block::{bio::Disk, SECTOR_SHIFT},
    compress::Algorithm,
    error::code::*,
    new_mutex,
    page::PAGE_SIZE,
    prelude::*,
    sync::{
        lock::{mutex::MutexBackend, Guard},
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
    storage: RcuArc<Storage>,
    /// Serialises configuration (`disksize`, `reset`, `comp_algorithm`, `algorithm_params`,
    /// `mem_limit`); holds the algorithm and parameters the next `disksize` will use.
    #[pin]
    config: Mutex<Config>,
    /// The pool limit in pages from `mem_limit`; 0 for none.
    limit_pages: AtomicU64,
    /// Who has claimed the device: [`FREE`], [`RESET`] or [`REMOVAL`]. Opens fail with `EBUSY`
    /// unless it is free.
    claim: AtomicU8,
    /// Held by the post-processing operation (`recompress`, `writeback`) under way: another
    /// fails with `EAGAIN` (it only tries the lock), and a reset waits for it, as zram's does.
    #[pin]
    post_processing: Mutex<()>,
    /// `writeback_limit` and `writeback_limit_enable`; kept across resets, as zram.
    wb_limit: WbLimit,
    /// `writeback_batch_size`: the writebacks kept in flight; never 0.
    wb_batch: AtomicU32,
}

/// A post-processing operation under way, until this is dropped; see
/// [`Rzram::post_processing`].
pub(crate) type PostProcessing<'a> = Guard<'a, (), MutexBackend>;

impl Rzram {
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Rzram {
                storage: RcuArc::new(None),
                config <- new_mutex!(Config::default(), "rzram::config"),
                limit_pages: AtomicU64::new(0),
                claim: AtomicU8::new(FREE),
                post_processing <- new_mutex!((), "rzram::post_processing"),
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

    /// The device's memory if it is initialised, for as long as `guard` is held (a bio's
    /// path, `io.rs`).
    pub(crate) fn storage_rcu<'a>(&'a self, guard: &'a rcu::Guard) -> Option<&'a Storage> {
        self.storage.get(guard)
    }

    /// Whether the device is initialised (has storage). Stable while `config` is held.
    pub(crate) fn initialized(&self) -> bool {
        self.storage.get(&rcu::read_lock()).is_some()
    }

    /// Runs `f` on the configuration the next `disksize` uses, unless the device is initialised:
    /// `EBUSY` then, after logging `busy`, if given, as zram logs it.
    pub(crate) fn configure<T>(
        &self,
        busy: Option<&str>,
        f: impl FnOnce(&mut Config) -> Result<T>,
    ) -> Result<T> {
        let mut cfg = self.config.lock();
        if self.initialized() {
            if let Some(msg) = busy {
                pr_info!("{msg}\n");
            }
            return Err(EBUSY);
        }
        f(&mut cfg)
    }

    /// Returns what `f` reads of the configuration, under its mutex.
    pub(crate) fn with_config<T>(&self, f: impl FnOnce(&Config) -> T) -> T {
        f(&self.config.lock())
    }

    /// `disksize`: initialises the device with a disk of `size` bytes (rounded up to a whole
    /// page) and the configuration's algorithms, parameters and backing device. `EBUSY` if it
    /// is initialised, `ENOMEM` for a size too large, an algorithm's error for its parameters.
    pub(crate) fn init(&self, disk: &Disk, size: u64) -> Result {
        self.configure(
            Some("Cannot change disksize for initialized device"),
            |cfg| {
                let size = size
                    .checked_next_multiple_of(PAGE_SIZE as u64)
                    .ok_or(ENOMEM)?;
                let storage = Storage::with_config(disk.name(), size, cfg)?;
                // Not initialised (checked under `config`): nothing to wait for, nothing replaced.
                drop(self.storage.replace(Some(storage)));
                disk.set_capacity(size >> SECTOR_SHIFT);
                Ok(())
            },
        )
    }

    /// The algorithms by priority: those of the initialised device, or those configured.
    pub(crate) fn algorithms(&self) -> [Option<Algorithm>; MAX_PRIO] {
        match self.storage() {
            Some(storage) => storage.algorithms(),
            None => self.config.lock().algorithms(),
        }
    }

    /// The statistics now; all 0 if the device is not initialised.
    pub(crate) fn stats(&self) -> Snapshot {
        self.storage().map_or_else(Snapshot::default, |storage| {
            let pool = storage.pool();
            storage.stats().snapshot(
                pool.total_pages() as u64,
                pool.stats().pages_compacted as u64,
            )
        })
    }

    /// The pool limit of `mem_limit`, in pages; 0 for none.
    pub(crate) fn limit_pages(&self) -> u64 {
        self.limit_pages.load(Ordering::Relaxed)
    }

    /// `mem_limit`: sets the pool limit, in pages (0 for none), under the configuration mutex.
    pub(crate) fn set_limit_pages(&self, pages: u64) {
        let _cfg = self.config.lock();
        self.limit_pages.store(pages, Ordering::Relaxed);
    }

    /// `compact`: compacts the pool; `EINVAL` before `disksize`.
    pub(crate) fn compact(&self) -> Result {
        let _cfg = self.config.lock();
        self.storage().ok_or(EINVAL)?.pool().compact();
        Ok(())
    }

    /// `mem_used_max`: resets the pool's peak to its size now, if initialised.
    pub(crate) fn reset_max_used(&self) {
        let _cfg = self.config.lock();
        if let Some(storage) = self.storage() {
            storage
                .stats()
                .max_used_pages
                .set(storage.pool().total_pages() as u64);
        }
    }

    /// `writeback_limit` and `writeback_limit_enable`.
    pub(crate) fn wb_limit(&self) -> &WbLimit {
        &self.wb_limit
    }

    /// `writeback_batch_size`: the writes `writeback` keeps in flight.
    pub(crate) fn wb_batch(&self) -> u32 {
        self.wb_batch.load(Ordering::Relaxed)
    }

    /// Sets the writes `writeback` keeps in flight.
    pub(crate) fn set_wb_batch(&self, batch: NonZeroU32) {
        self.wb_batch.store(batch.get(), Ordering::Relaxed);
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
    fn post_processing(&self, storage: &Arc<Storage>) -> Result<PostProcessing<'_>> {
        let pp = self.post_processing.try_lock().ok_or(EAGAIN)?;
        let current = self.storage.get(&rcu::read_lock()).map(core::ptr::from_ref);
        if current != Some(core::ptr::from_ref::<Storage>(storage)) {
            return Err(EINVAL);
        }
        Ok(pp)
    }

    /// `recompress`: recompresses the stored pages `args` select with the secondary algorithms
    /// (`Recompress::run`). `EINVAL` before `disksize`, for a threshold not below the huge class
    /// size and for an algorithm that is not a secondary one; `EAGAIN` while another
    /// post-processing runs, `EINVAL` if a reset came first.
    pub(crate) fn recompress(&self, args: &RecompressArgs<'_>) -> Result {
        let storage = self.storage().ok_or(EINVAL)?;
        Recompress::check_threshold(args, &storage)?;
        let _pp = self.post_processing(&storage)?;
        let r = Recompress::new(args, &storage.algorithms()).and_then(|r| r.run(&storage));
        // Before the operation ends: a reset waiting for it then drops the memory itself.
        drop(storage);
        r
    }

    /// `writeback`: writes the pages `args` select back to the backing device
    /// (`Writeback::run`). `EINVAL` before `disksize` and for a `page_index` beyond the disk
    /// (`ERANGE` for `page_indexes`), `EAGAIN` while another post-processing runs, `EINVAL` if a
    /// reset came first (zram's device, reset under its lock, is then uninitialised), `ENODEV`
    /// without a backing device, then what the writeback returns.
    pub(crate) fn writeback(&self, args: &WritebackArgs) -> Result {
        let storage = self.storage().ok_or(EINVAL)?;
        let ranges = writeback::page_ranges(args, storage.pages())?;
        let _pp = self.post_processing(&storage)?;
        let wb = Writeback::new(args, &ranges, self.wb_batch() as usize);
        let r = wb.run(&storage, &self.wb_limit);
        // Before the operation ends: a reset waiting for it then drops the memory (and closes
        // the backing device) itself.
        drop(storage);
        r
    }

    /// `idle`: marks the stored pages last accessed at or before `cutoff` (seconds since boot)
    /// idle, and clears the mark of the others (`Table::mark_idle`). `EINVAL` before `disksize`.
    pub(crate) fn mark_idle(&self, cutoff: i64) -> Result {
        self.storage().ok_or(EINVAL)?.table().mark_idle(cutoff);
        Ok(())
    }

    /// `reset`: claims the device (`EBUSY` if it is open or claimed), frees its memory and ends
    /// the claim.
    pub(crate) fn reset_unless_open(&self, disk: &Disk) -> Result {
        self.claim(disk)?;
        self.reset(disk);
        self.unclaim();
        Ok(())
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
        drop(self.post_processing.lock());
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
