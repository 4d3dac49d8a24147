// SPDX-License-Identifier: GPL-2.0

//! The operations of a bio-based disk, and the `block_device_operations` that call them.
//!
//! C header: [`include/linux/blkdev.h`](srctree/include/linux/blkdev.h)

use super::Bio;
use crate::{
    bindings,
    error::Result,
    ffi::{c_int, c_ulong},
    sync::Arc,
    types::ForeignOwnable,
};
use core::{marker::PhantomData, ptr::NonNull};

/// The operations of a bio-based disk, implemented by the driver's per-disk state.
#[macros::vtable]
pub trait Operations: Sized + Send + Sync + 'static {
    /// Handles `bio`, which must be completed with [`Bio::end`] (dropping it fails it).
    ///
    /// A bio may be completed later, from another thread. It should be completed before the
    /// [`GenDisk`](super::GenDisk) is dropped, as for C bio-based drivers: removing the disk does
    /// not wait for bios in flight. (Completing one later is not unsafe: the bio keeps its own
    /// references.)
    fn submit_bio(&self, bio: Bio);

    /// Called when the disk is opened; an error refuses the open.
    fn open(&self) -> Result {
        Ok(())
    }

    /// Swap no longer needs the page in slot `slot` (the page index on the disk).
    ///
    /// Context: atomic (called under the swap device's lock); must not sleep.
    fn swap_slot_free_notify(&self, _slot: usize) {
        crate::build_error!(crate::error::VTABLE_DEFAULT_ERROR)
    }
}

/// The `block_device_operations` of disks of `T`: a constant, so it lives in static memory and
/// outlives every reference to a disk.
pub(super) struct Vtable<T>(PhantomData<T>);

impl<T: Operations> Vtable<T> {
    pub(super) const FOPS: bindings::block_device_operations = bindings::block_device_operations {
        submit_bio: Some(submit_bio_callback::<T>),
        open: Some(open_callback::<T>),
        free_disk: Some(free_disk_callback::<T>),
        swap_slot_free_notify: if T::HAS_SWAP_SLOT_FREE_NOTIFY {
            Some(swap_notify_callback::<T>)
        } else {
            None
        },
        // A null owner, as for the mq disks: opening the disk takes no module reference. So
        // `GenDiskBuilder::build_bio` refuses to register disks for loadable modules.
        owner: core::ptr::null_mut(),
        // SAFETY: all zeroes is a valid `block_device_operations` (no other callbacks).
        ..unsafe { core::mem::zeroed() }
    };
}

/// Returns the driver state of `disk`.
///
/// # Safety
///
/// `disk` must be a disk of a [`GenDisk<T>`] to which the caller holds a reference (any block
/// layer callback does) for `'a`.
pub(super) unsafe fn state<'a, T: Operations>(disk: *mut bindings::gendisk) -> &'a T {
    // SAFETY: `private_data` holds an `Arc<T>` that is released only by `free_disk`, when the
    // last reference to the disk goes; the caller holds one for `'a`.
    let b = unsafe { <Arc<T> as ForeignOwnable>::borrow((*disk).private_data) };
    // SAFETY: the `Arc` outlives `'a`, as argued above.
    unsafe { &*core::ptr::from_ref::<T>(&b) }
}

/// # Safety
///
/// Called by the block layer once, when the last reference to a disk of a [`GenDisk<T>`] goes.
unsafe extern "C" fn free_disk_callback<T: Operations>(disk: *mut bindings::gendisk) {
    // SAFETY: `private_data` came from `into_foreign` in `build_bio` (type invariant of
    // `GenDisk`), and no callback can borrow it any more: nobody holds a reference to the disk.
    drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign((*disk).private_data) });
}

/// # Safety
///
/// Called by the block layer with a valid bio submitted to a disk of a `GenDisk<T>`.
unsafe extern "C" fn submit_bio_callback<T: Operations>(bio: *mut bindings::bio) {
    // SAFETY: the block layer calls this with a valid bio of our disk.
    let disk = unsafe { (*(*bio).bi_bdev).bd_disk };
    // SAFETY: the submitter holds the block device open and `submit_bio()` entered the disk's
    // queue (`bio_queue_enter()`), which keeps the disk, a disk of a `GenDisk<T>` (it uses our
    // fops), and so its `private_data`, alive for the call.
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
    t.swap_slot_free_notify(slot);
}
