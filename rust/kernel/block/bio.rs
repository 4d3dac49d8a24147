// SPDX-License-Identifier: GPL-2.0

//! Bio-based block devices.
//!
//! A bio-based driver has no request queue and no tags: the block layer hands it each [`Bio`] in
//! [`Operations::submit_bio`], in the submitter's context, and the driver completes it with
//! [`Bio::end`]. This suits devices that complete I/O synchronously in memory, such as zram.
//!
//! [`GenDiskBuilder::build_bio`](crate::block::GenDiskBuilder::build_bio) allocates and registers
//! a disk with the builder's limits, the driver's [`Operations`] and a static table of sysfs
//! attributes ([`Attribute<GenDisk<T>>`](crate::sysfs::Attribute)). The driver's per-disk state is
//! an `Arc<T>` where `T` implements [`Operations`].
//!
//! The module is one file per concept: this file has the [`Bio`] and its [`Op`];
//! `bio/segment.rs` the data of reads and writes ([`Data`], [`Segment`], [`dir`]);
//! `bio/operations.rs` the [`Operations`] trait and the C callbacks that call it;
//! `bio/gen_disk.rs` the registered disk ([`GenDisk`], [`Disk`]) and its attributes.
//!
//! # Lifetimes
//!
//! The block core keeps using a disk after [`GenDisk`] is dropped: `del_gendisk()` neither waits
//! for openers nor for references taken without opening (`blkdev_get_no_open()`, an `open()` that
//! failed and has not yet dropped its reference, swap), and the last `put_disk()` reads
//! `disk->fops` to call `free_disk`. So everything the C disk points to outlives every reference
//! to it:
//!
//! - the `block_device_operations` are a constant per `T`, in static memory: the kernel's for a
//!   built-in driver, the module's for a loadable one, whose `owner` they name, so that an open
//!   disk pins the module; and a module's memory outlives its disks, since a disk removed at run
//!   time keeps the module loaded until it is released, and unloading waits for the release of
//!   the disks removed then (see [`GenDisk`]);
//! - the attributes are `static` tables (an [`Attribute`](crate::sysfs::Attribute) holds the C
//!   attribute itself), which also gives each attribute a lockdep class of its own, as for C
//!   attributes;
//! - the disk's reference to `T` is released by the `free_disk` callback, when the last
//!   reference to the disk goes.
//!
//! Only data bios (reads and writes) have segments: [`Bio::op`] gives access to them through
//! [`Op::Read`] and [`Op::Write`]. A segment's memory may be written by others while the driver
//! handles it (an `O_DIRECT` buffer is not covered by stable writes), so it is reached only by
//! copies or as an [`io_buf`](crate::io_buf) source (writes) or sink (reads) lent for a closure,
//! never as a Rust reference.
//!
//! A disk built by `build_bio` never has partitions (`GENHD_FL_NO_PART`, as zram): its only block
//! device is the whole disk, so a bio's sector and the slot of
//! [`Operations::swap_slot_free_notify`] both count from the start of the disk.
//!
//! C headers: [`include/linux/blkdev.h`](srctree/include/linux/blkdev.h),
//! [`include/linux/bio.h`](srctree/include/linux/bio.h)

use crate::{
    bindings,
    error::{code::*, Result},
};
use core::ptr::NonNull;

mod gen_disk;
mod operations;
mod segment;
#[cfg(CONFIG_RUST_BLOCK_BIO_KUNIT_TEST)]
mod tests;

pub use gen_disk::{Disk, GenDisk};
pub use operations::Operations;
pub use segment::{dir, Data, Segment};

/// The operation of a [`Bio`]; reads and writes give access to the bio's data.
///
/// There is no flush: the block layer never hands a bio-based driver a `REQ_OP_FLUSH` bio
/// (`submit_bio_noacct()` fails one with `BLK_STS_NOTSUPP`; only blk-mq's flush machinery makes
/// flush requests). A flush reaches a bio-based driver only as a write flagged `REQ_PREFLUSH`
/// (or `REQ_FUA`), possibly empty, and only on a disk with a volatile write cache
/// (`BLK_FEAT_WRITE_CACHE`), which [`GenDiskBuilder`](crate::block::GenDiskBuilder) does not set:
/// on its disks `submit_bio_noacct()` clears those flags and completes an empty flush itself.
///
/// ```ignore
/// # use kernel::block::bio::Bio;
/// // Segments exist only on a data bio: a `Bio` has no `for_each_segment` of its own.
/// fn f(bio: &mut Bio) {
///     let _ = bio.for_each_segment(|_| Ok(()));
/// }
/// ```
///
/// (Does not compile. Marked `ignore` because the kernel's doctests cannot be `compile_fail`;
/// checked by `tests/compile_fail/fail_bio_segments_on_bio.rs`.)
pub enum Op<'a> {
    /// Read data into the bio's pages: its segments can only be filled.
    Read(Data<'a, dir::Read>),
    /// Write the bio's pages: its segments can only be read.
    Write(Data<'a, dir::Write>),
    /// The sectors' contents are no longer needed. Arrives only on a disk built with a nonzero
    /// [`max_discard_sectors`](crate::block::GenDiskBuilder::max_discard_sectors).
    Discard,
    /// Make the sectors read as zeroes. Arrives only on a disk built with a nonzero
    /// [`max_write_zeroes_sectors`](crate::block::GenDiskBuilder::max_write_zeroes_sectors).
    WriteZeroes,
    /// Any other operation, by its `REQ_OP_*` value.
    Other(u32),
}

/// A bio handed to [`Operations::submit_bio`]; it must be completed with [`Bio::end`].
///
/// Dropping a bio without ending it ends it with an I/O error, so a bio can never be left
/// hanging.
///
/// A data bio may be counted in the disk's I/O statistics (`/sys/block/<disk>/stat`,
/// `/proc/diskstats`, `inflight`) with [`Data::start_io_acct`]; completing the bio, by
/// [`Bio::end`] or by dropping it, then ends the accounting. A bio-based driver must do this
/// itself: the block layer counts only requests.
///
/// # Invariants
///
/// `ptr` is a bio submitted to this driver that has not been completed. If `acct_start` is
/// `Some`, `bio_start_io_acct()` was called on it, once, and returned that start time.
pub struct Bio {
    ptr: NonNull<bindings::bio>,
    acct_start: Option<crate::ffi::c_ulong>,
}

// SAFETY: a bio may be completed from any thread.
unsafe impl Send for Bio {}

impl Bio {
    /// Takes ownership of `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be a bio submitted to the driver, not completed, that nothing else completes.
    pub(crate) unsafe fn from_raw(ptr: NonNull<bindings::bio>) -> Self {
        // INVARIANT: by the caller's promise; the accounting has not started.
        Bio {
            ptr,
            acct_start: None,
        }
    }

    /// Starts the I/O accounting of the bio, unless it has started.
    #[inline]
    pub(super) fn start_io_acct(&mut self) {
        if self.acct_start.is_none() {
            // SAFETY: the bio is valid and not completed; `bi_bdev` is the disk's block device,
            // which the submitter holds open.
            let start = unsafe { bindings::bio_start_io_acct(self.raw()) };
            // INVARIANT: started once, here.
            self.acct_start = Some(start);
        }
    }

    /// Completes the bio with block status `sts`, ending its accounting first if it started.
    ///
    /// # Safety
    ///
    /// Called once; the bio is not used afterwards, not even dropped.
    #[inline]
    unsafe fn complete(&mut self, sts: bindings::blk_status_t) {
        let ptr = self.raw();
        // SAFETY: the bio is owned by the driver and not completed (type invariant), and the
        // caller completes it once, here; its accounting started with `acct_start` (type
        // invariant) and ends once, before the completion, against the device it started on:
        // nothing in this crate changes `bi_bdev` after submission (`bio_end_io_acct()`, inline
        // in C, called as it calls it).
        unsafe {
            if let Some(start) = self.acct_start {
                bindings::bio_end_io_acct_remapped(ptr, start, (*ptr).bi_bdev);
            }
            (*ptr).bi_status = sts;
            bindings::bio_endio(ptr);
        }
    }

    #[inline]
    pub(crate) fn raw(&self) -> *mut bindings::bio {
        self.ptr.as_ptr()
    }

    /// Returns the operation, with access to the data for reads and writes.
    #[inline]
    pub fn op(&mut self) -> Op<'_> {
        // SAFETY: the bio is valid; `bi_opf` is not changed while the driver owns it.
        let op = unsafe { (*self.raw()).bi_opf } & ((1 << bindings::REQ_OP_BITS) - 1);
        match op {
            // SAFETY: the bio is a read.
            bindings::req_op_REQ_OP_READ => Op::Read(unsafe { Data::new(self) }),
            // SAFETY: the bio is a write.
            bindings::req_op_REQ_OP_WRITE => Op::Write(unsafe { Data::new(self) }),
            bindings::req_op_REQ_OP_DISCARD => Op::Discard,
            bindings::req_op_REQ_OP_WRITE_ZEROES => Op::WriteZeroes,
            other => Op::Other(other),
        }
    }

    /// Returns the first sector (512 bytes) the bio addresses.
    #[inline]
    pub fn sector(&self) -> u64 {
        // SAFETY: the bio is valid and owned by the driver.
        unsafe { (*self.raw()).bi_iter.bi_sector }
    }

    /// Returns the number of bytes the bio addresses.
    #[inline]
    pub fn size(&self) -> u32 {
        // SAFETY: the bio is valid and owned by the driver.
        unsafe { (*self.raw()).bi_iter.bi_size }
    }

    /// Completes the bio: successfully, or with the error's block status.
    #[inline]
    pub fn end(self, status: Result) {
        let sts = match status {
            Ok(()) => 0,
            // SAFETY: FFI call without preconditions.
            Err(e) => unsafe { bindings::errno_to_blk_status(e.to_errno()) },
        };
        let mut this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is consumed and never dropped.
        unsafe { this.complete(sts) };
    }
}

impl Drop for Bio {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: FFI call without preconditions.
        let sts = unsafe { bindings::errno_to_blk_status(EIO.to_errno()) };
        // SAFETY: the bio is being dropped: it is not used again.
        unsafe { self.complete(sts) };
    }
}
