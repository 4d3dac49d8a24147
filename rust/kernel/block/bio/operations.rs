// SPDX-License-Identifier: GPL-2.0

//! The operations of a bio-based disk, and the `block_device_operations` that call them.
//!
//! C header: [`include/linux/blkdev.h`](srctree/include/linux/blkdev.h)

use super::Bio;
use crate::{
    bindings,
    error::Result,
    ffi::{c_int, c_ulong, c_void},
    prelude::*,
    sync::{rcu, Arc},
    types::Opaque,
    ThisModule,
};
use core::{
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{AtomicPtr, Ordering},
};

/// The operations of a bio-based disk, implemented by the driver's per-disk state.
#[macros::vtable]
pub trait Operations: Sized + Send + Sync + 'static {
    /// The module of the driver: `&THIS_MODULE`, which [`module!`](macros::module) defines.
    ///
    /// It becomes the `owner` of the disk's operations, so that an open disk pins a loadable
    /// module. [`GenDiskBuilder::build_bio`](crate::block::GenDiskBuilder::build_bio) checks it
    /// against the module whose code the operations are in, and fails with `EINVAL` if they
    /// differ.
    const OWNER: &'static ThisModule;

    /// Handles `bio`, which must be completed with [`Bio::end`] (dropping it fails it).
    ///
    /// A bio may be completed later, from another thread. It must be completed before the
    /// [`GenDisk`](super::GenDisk) is dropped, as for C bio-based drivers: removing the disk
    /// waits only for the calls of this function in progress, not for the bios they left in
    /// flight. The block layer enters the disk's queue (takes a reference on its
    /// `q_usage_counter`, `bio_queue_enter()` in `__submit_bio()`) around each call and leaves
    /// it when the call returns; `del_gendisk()` marks the disk dead, freezes the queue, so that
    /// later submissions fail, and waits for that counter to drain. And in a loadable module
    /// being unloaded the drop waits for the disk's release, which a bio held by the driver would
    /// delay for ever (its submitter holds the disk until the bio completes).
    ///
    /// Completing a bio late is still sound. A bio holds no reference to its block device, its
    /// disk or its queue: its submitter does, and must keep them until the bio completes
    /// (normally by holding the block device open: a mounted filesystem, swap, an open file);
    /// and completing it (`bio_endio()`, the I/O accounting) reaches nothing of the driver's.
    fn submit_bio(&self, bio: Bio);

    /// Called when the disk is opened; an error refuses the open.
    fn open(&self) -> Result {
        Ok(())
    }

    /// Swap no longer needs the page in slot `slot`.
    ///
    /// `slot` is a page index, in units of `PAGE_SIZE` (not of the logical block size), from the
    /// start of the block device swap is on, which is always the whole disk: a disk built by
    /// [`GenDiskBuilder::build_bio`](crate::block::GenDiskBuilder::build_bio) has no partitions
    /// (`GENHD_FL_NO_PART`; on a partition the index would count from the partition's start).
    /// So the page is the disk's bytes `slot * PAGE_SIZE` up to `(slot + 1) * PAGE_SIZE`, which
    /// bios address from sector `slot * (PAGE_SIZE / 512)`. Swap calls this only when it is on
    /// the block device itself, not on a file.
    ///
    /// Context: called under the swap device's spinlock, so must not sleep (atomic, except on
    /// `CONFIG_PREEMPT_RT`). `guard` is the RCU read-side critical section that the lock makes
    /// of the call (see
    /// [`rcu::assume_read_side`]), so that data published with [`rcu::RcuArc`] is reached
    /// without entering another.
    fn swap_slot_free_notify(&self, _slot: usize, _guard: &rcu::Guard) {
        crate::build_error!(crate::error::VTABLE_DEFAULT_ERROR)
    }
}

/// The `block_device_operations` of disks of `T`: a constant, so it lives in static memory (of
/// the module that uses it) and outlives every reference to a disk; see [`DiskData`].
pub(super) struct Vtable<T>(PhantomData<T>);

impl<T: Operations> Vtable<T> {
    pub(super) const FOPS: bindings::block_device_operations = bindings::block_device_operations {
        submit_bio: Some(submit_bio_callback::<T>),
        open: Some(open_callback::<T>),
        free_disk: Some(free_disk_callback),
        swap_slot_free_notify: if T::HAS_SWAP_SLOT_FREE_NOTIFY {
            Some(swap_notify_callback::<T>)
        } else {
            None
        },
        // Opening the disk pins the module (`build_bio` checked that it is the right one).
        owner: T::OWNER.0,
        // SAFETY: all zeroes is a valid `block_device_operations` (no other callbacks).
        ..unsafe { core::mem::zeroed() }
    };
}

/// What a disk's `private_data` points to: the driver's state, and how to release it.
///
/// The C disk may outlive the [`GenDisk`](super::GenDisk) (`del_gendisk()` waits neither for
/// openers nor for references taken without opening), and its last reference calls `free_disk`.
/// For a loadable module that must happen before the module's memory goes: its code (the
/// callbacks, `release`), its operations table and its `struct module` are all read on the way.
/// So `free_disk` is [`free_disk_callback`], which is not generic and is therefore built-in
/// code (`#[inline(never)]`, so that it is never copied into a module): it calls `release`,
/// completes `released`, and then drops the module reference in `module`, if any, last.
///
/// When a module's `GenDisk` is dropped while the module is live (a device removed at run
/// time), the disk takes a reference to the module, put by `free_disk`: the module stays loaded
/// until the disk is released, and the drop does not wait. If the drop's own `put_disk()` is
/// the last reference, that `module_put()` runs inside the drop, and module code runs after it;
/// that is sound because the module's code that dropped the disk (a sysfs `store`, say) is
/// itself waited for by the module's exit before the module goes. When the module is being unloaded
/// (or failed to load) it cannot be referenced any more, and the drop waits for `released`.
///
/// # Invariants
///
/// `data` is an `Arc<T>` converted with [`Arc::into_raw`] (so it points at the `T`), for some
/// `T: Operations` (so `Send + Sync + 'static`) whose `release::<T>` is `release`; it is not yet
/// released while `released` is not completed. `released` is initialised. `module` is null or a
/// module reference owned by the disk.
#[pin_data]
pub(super) struct DiskData {
    data: *const c_void,
    release: unsafe fn(*const c_void),
    module: AtomicPtr<bindings::module>,
    #[pin]
    released: Opaque<bindings::completion>,
}

// SAFETY: `data` is an `Arc<T>` with `T: Send + Sync` (type invariant); the completion and the
// module reference are thread-safe.
unsafe impl Send for DiskData {}
// SAFETY: as above; shared access only borrows `data` and waits on or completes `released`.
unsafe impl Sync for DiskData {}

/// Releases an `Arc<T>` converted with [`Arc::into_raw`].
///
/// # Safety
///
/// `data` must come from `Arc::<T>::into_raw`, and not be used afterwards.
unsafe fn release<T: Operations>(data: *const c_void) {
    // SAFETY: by the caller's promise.
    drop(unsafe { Arc::<T>::from_raw(data.cast()) });
}

impl DiskData {
    /// A disk's data holding `data`, to be released by its `free_disk`.
    pub(super) fn new<T: Operations>(data: Arc<T>) -> Result<Arc<DiskData>> {
        let data = Arc::into_raw(data).cast::<c_void>();
        let dd = Arc::pin_init(
            pin_init!(DiskData {
                data,
                release: release::<T>,
                module: AtomicPtr::new(core::ptr::null_mut()),
                // SAFETY: `init_completion` initialises the completion in place.
                released <- Opaque::ffi_init(|slot| unsafe { bindings::init_completion(slot) }),
            }),
            GFP_KERNEL,
        );
        match dd {
            // INVARIANT: `data` is an `Arc<T>`, not released; `released` was initialised.
            Ok(dd) => Ok(dd),
            Err(e) => {
                // SAFETY: `data` came from `into_raw` above and was not stored anywhere.
                unsafe { release::<T>(data) };
                Err(e)
            }
        }
    }

    /// Releases the driver's state and completes `released`.
    ///
    /// Built-in code: see [`DiskData`].
    ///
    /// # Safety
    ///
    /// Called once, by `free_disk` or, for a disk that was never added, instead of it.
    #[inline(never)]
    pub(super) unsafe fn release(&self) {
        // SAFETY: `data` is the `Arc<T>` of `release` (type invariant), released once, here, by
        // the caller's promise.
        unsafe { (self.release)(self.data) };
        // SAFETY: `released` is initialised (type invariant).
        unsafe { bindings::complete_all(self.released.get()) };
    }

    /// Gives the disk a reference to `owner` if it is a live module, to be put by `free_disk`;
    /// returns whether it did. Called once, before the `GenDisk` puts its reference.
    pub(super) fn hold_module(&self, owner: *mut bindings::module) -> bool {
        if owner.is_null() {
            return false;
        }
        // SAFETY: `owner` is a module whose code is running (the caller's), so its `struct
        // module` is valid; the helper takes a reference only if it is live.
        if !unsafe { bindings::module_get_if_live(owner) } {
            return false;
        }
        // INVARIANT: the reference just taken is owned by the disk.
        self.module.store(owner, Ordering::Release);
        true
    }

    /// Waits until `free_disk` has released the driver's state.
    ///
    /// Context: process context; sleeps.
    pub(super) fn wait_released(&self) {
        // SAFETY: `released` is initialised (type invariant).
        unsafe { bindings::wait_for_completion(self.released.get()) };
    }
}

/// Returns the driver state of `disk`.
///
/// Two loads after the disk's: `private_data` points at the [`DiskData`] and its `data` at the
/// `T`, both raw `Arc` pointers, so the swap notify, which calls this for every freed slot, needs
/// no null checks or offsets.
///
/// # Safety
///
/// `disk` must be a disk of a [`GenDisk<T>`](super::GenDisk) to which the caller holds a
/// reference (any block layer callback does) for `'a`.
#[inline(always)]
pub(super) unsafe fn state<'a, T: Operations>(disk: *mut bindings::gendisk) -> &'a T {
    // SAFETY: `private_data` is an `Arc<DiskData>` converted with `Arc::into_raw` (type invariant
    // of `GenDisk`), released only by `free_disk`, when the last reference to the disk goes; the
    // caller holds one for `'a`.
    let dd = unsafe { &*(*disk).private_data.cast::<DiskData>() };
    // SAFETY: `data` is an `Arc<T>` converted with `Arc::into_raw` (type invariant of `DiskData`;
    // the disk is a `GenDisk<T>`'s), released by the same `free_disk`, after `'a`.
    unsafe { &*dd.data.cast::<T>() }
}

/// The `free_disk` of every bio-based disk: built-in code, see [`DiskData`].
///
/// # Safety
///
/// Called by the block layer once, when the last reference to a disk of a `GenDisk` goes.
#[inline(never)]
unsafe extern "C" fn free_disk_callback(disk: *mut bindings::gendisk) {
    // SAFETY: `private_data` came from `Arc::into_raw` in `build_bio` (type invariant of
    // `GenDisk`), and no callback can borrow it any more: nobody holds a reference to the disk.
    let dd = unsafe { Arc::from_raw((*disk).private_data.cast::<DiskData>()) };
    let module = dd.module.load(Ordering::Acquire);
    // SAFETY: the block layer calls `free_disk` once.
    unsafe { dd.release() };
    drop(dd);
    if !module.is_null() {
        // SAFETY: the disk owned this reference (type invariant of `DiskData`). Put last: after
        // it the module may go, and this function and `DiskData` are built-in code and heap
        // memory.
        unsafe { bindings::module_put_ref(module) };
    }
}

/// # Safety
///
/// Called by the block layer with a valid bio submitted to a disk of a `GenDisk<T>`.
unsafe extern "C" fn submit_bio_callback<T: Operations>(bio: *mut bindings::bio) {
    // SAFETY: the block layer calls this with a valid bio of our disk.
    let disk = unsafe { (*(*bio).bi_bdev).bd_disk };
    // The submitter holds a reference to the block device, and so to the disk, until the bio
    // completes (it has it open), so for this call. (`__submit_bio()` also entered the disk's
    // queue around the call, so that `del_gendisk()` waits for it.)
    // SAFETY: the disk is alive for the call (above) and is a disk of a `GenDisk<T>` (it uses
    // our fops), whose `private_data` only `free_disk` releases, after the last reference.
    let t = unsafe { state::<T>(disk) };
    // SAFETY: the block layer never passes a null bio.
    let ptr = unsafe { NonNull::new_unchecked(bio) };
    // SAFETY: the bio was just submitted to this driver, which completes it once.
    t.submit_bio(unsafe { Bio::from_raw(ptr) });
}

/// # Safety
///
/// Called by the block layer with a disk of a `GenDisk<T>`, which the opener holds a reference to.
unsafe extern "C" fn open_callback<T: Operations>(
    disk: *mut bindings::gendisk,
    _mode: bindings::blk_mode_t,
) -> c_int {
    // SAFETY: the caller holds a reference to the disk, a disk of a `GenDisk<T>`.
    let t = unsafe { state::<T>(disk) };
    match t.open() {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by swap with a block device of a disk of a `GenDisk<T>`, which it holds open.
unsafe extern "C" fn swap_notify_callback<T: Operations>(
    bdev: *mut bindings::block_device,
    slot: c_ulong,
) {
    // SAFETY: swap holds the device open, and so a reference to the disk, while it calls this.
    let t = unsafe { state::<T>((*bdev).bd_disk) };
    // Swap calls this with a spinlock held: in mm/swapfile.c its one caller, `swap_range_free()`,
    // is called only by `swap_entry_range_free()`, whose every caller holds `si->lock`
    // (include/linux/blkdev.h says "swap_lock", out of date). Re-check when mm/swapfile.c
    // changes; `CONFIG_PROVE_RCU` kernels check it at run time.
    // SAFETY: so the call is an RCU read-side critical section, on a CPU that RCU watches.
    unsafe { rcu::assume_read_side(|guard| t.swap_slot_free_notify(slot, guard)) };
}
