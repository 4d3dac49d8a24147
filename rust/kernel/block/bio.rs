// SPDX-License-Identifier: GPL-2.0

//! Bio-based block devices.
//!
//! A bio-based driver has no request queue and no tags: the block layer hands it each [`Bio`] in
//! [`Operations::submit_bio`], in the submitter's context, and the driver completes it with
//! [`Bio::end`]. This suits devices that complete I/O synchronously in memory, such as zram.
//!
//! [`GenDisk::new`] allocates and registers a disk with its limits ([`DiskParams`]), its operations
//! and its sysfs attributes ([`Attribute`]). The driver's per-disk state is an `Arc<T>` where `T`
//! implements [`Operations`].
//!
//! # Lifetimes
//!
//! The block core keeps using a disk after [`GenDisk`] is dropped: `del_gendisk()` neither waits
//! for openers nor for references taken without opening (`blkdev_get_no_open()`, an `open()` that
//! failed and has not yet dropped its reference, swap), and the last `put_disk()` reads
//! `disk->fops` to call `free_disk`. So everything the C disk points to outlives every reference
//! to it:
//!
//! - the `block_device_operations` are a constant per `T`, in static memory;
//! - the attributes are `static` tables ([`Attribute`] holds the C attribute itself), which also
//!   gives each attribute a lockdep class of its own, as for C attributes;
//! - the disk's reference to `T` is released by the `free_disk` callback, when the last
//!   reference to the disk goes.
//!
//! Only data bios (reads and writes) have segments: [`Bio::op`] gives access to them through
//! [`Op::Read`] and [`Op::Write`]. A segment's memory may be written by others while the driver
//! handles it (an `O_DIRECT` buffer is not covered by stable writes), so it is reached only by
//! copies, never as a Rust reference.
//!
//! C headers: [`include/linux/blkdev.h`](srctree/include/linux/blkdev.h),
//! [`include/linux/bio.h`](srctree/include/linux/bio.h)

use crate::{
    alloc::{flags::*, KBox, KVec},
    bindings,
    error::{code::*, from_err_ptr, to_result, Error, Result},
    ffi::{c_char, c_int, c_uint, c_ulong},
    str::CStr,
    sync::Arc,
    sysfs::SysfsBuf,
    types::{ForeignOwnable, Opaque},
    ThisModule,
};
use core::{fmt, marker::PhantomData, pin::Pin, ptr::NonNull};

/// The operation of a [`Bio`]; reads and writes give access to the bio's data.
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
    /// Make previous writes durable.
    Flush,
    /// The sectors' contents are no longer needed.
    Discard,
    /// Make the sectors read as zeroes.
    WriteZeroes,
    /// Any other operation, by its `REQ_OP_*` value.
    Other(u32),
}

/// A bio handed to [`Operations::submit_bio`]; it must be completed with [`Bio::end`].
///
/// Dropping a bio without ending it ends it with an I/O error, so a bio can never be left
/// hanging.
///
/// # Invariants
///
/// `ptr` is a bio submitted to this driver that has not been completed.
pub struct Bio {
    ptr: NonNull<bindings::bio>,
}

// SAFETY: a bio may be completed from any thread.
unsafe impl Send for Bio {}

impl Bio {
    fn raw(&self) -> *mut bindings::bio {
        self.ptr.as_ptr()
    }

    /// Returns the operation, with access to the data for reads and writes.
    pub fn op(&mut self) -> Op<'_> {
        // SAFETY: the bio is valid; `bi_opf` is not changed while the driver owns it.
        let op = unsafe { (*self.raw()).bi_opf } & ((1 << bindings::REQ_OP_BITS) - 1);
        match op {
            // INVARIANT: `Data` is created for reads and writes only.
            bindings::req_op_REQ_OP_READ => Op::Read(Data {
                bio: self,
                _dir: PhantomData,
            }),
            // INVARIANT: as above.
            bindings::req_op_REQ_OP_WRITE => Op::Write(Data {
                bio: self,
                _dir: PhantomData,
            }),
            bindings::req_op_REQ_OP_FLUSH => Op::Flush,
            bindings::req_op_REQ_OP_DISCARD => Op::Discard,
            bindings::req_op_REQ_OP_WRITE_ZEROES => Op::WriteZeroes,
            other => Op::Other(other),
        }
    }

    /// Returns the first sector (512 bytes) the bio addresses.
    pub fn sector(&self) -> u64 {
        // SAFETY: the bio is valid and owned by the driver.
        unsafe { (*self.raw()).bi_iter.bi_sector }
    }

    /// Returns the number of bytes the bio addresses.
    pub fn size(&self) -> u32 {
        // SAFETY: the bio is valid and owned by the driver.
        unsafe { (*self.raw()).bi_iter.bi_size }
    }

    /// Completes the bio: successfully, or with the error's block status.
    pub fn end(self, status: Result) {
        let sts = match status {
            Ok(()) => 0,
            // SAFETY: FFI call without preconditions.
            Err(e) => unsafe { bindings::errno_to_blk_status(e.to_errno()) },
        };
        let ptr = self.raw();
        core::mem::forget(self);
        // SAFETY: the bio is owned by the driver and completed once, here, as `self` is consumed
        // without running `drop`.
        unsafe {
            (*ptr).bi_status = sts;
            bindings::bio_endio(ptr);
        }
    }
}

/// The directions of a data bio, as type parameters of [`Data`] and [`Segment`].
///
/// The direction decides which way a segment's memory may be copied: a read's segments are
/// filled ([`Segment::copy_from_slice`]), a write's are only read ([`Segment::copy_to_slice`]).
/// A write's pages belong to the submitter and may be shared and read-only (the zero page of a
/// write-zeroes done by writes, a read-only file mapping under `O_DIRECT`): writing into them
/// would corrupt memory. Checked by `tests/compile_fail/fail_bio_fill_write_segment.rs`.
pub mod dir {
    /// A read: the driver fills the bio's memory.
    pub enum Read {}
    /// A write: the driver reads the bio's memory.
    pub enum Write {}
}

/// The data of a read or write [`Bio`], from [`Bio::op`]; `D` is its direction (see [`dir`]).
///
/// # Invariants
///
/// `bio` is a `REQ_OP_READ` (`D` is [`dir::Read`]) or `REQ_OP_WRITE` (`D` is [`dir::Write`])
/// bio, whose `bi_io_vec` holds `bi_iter.bi_size` bytes of data.
pub struct Data<'a, D> {
    bio: &'a mut Bio,
    _dir: PhantomData<D>,
}

impl<D> Data<'_, D> {
    /// Calls `f` on each segment of the bio's data, in order, until it returns an error.
    ///
    /// A segment never crosses a page boundary of the bio's memory. It lives only for its call of
    /// `f`: it cannot be kept for later (checked by
    /// `tests/compile_fail/fail_bio_segment_escapes.rs`).
    pub fn for_each_segment(&mut self, mut f: impl FnMut(&mut Segment<'_, D>) -> Result) -> Result {
        let bio = self.bio.raw();
        // SAFETY: the bio is valid; the iterator is a copy, so the bio is not advanced.
        let mut iter = unsafe { (*bio).bi_iter };
        while iter.bi_size > 0 {
            // SAFETY: a data bio (type invariant) has `bi_size` bytes in its vector, and `iter`
            // has not consumed them all, as `bi_size` is not zero.
            let bv = unsafe { bindings::bio_iter_iovec(bio, iter) };
            // INVARIANT: `bio_iter_iovec()` returns a single-page segment of the bio.
            let mut seg = Segment {
                page: bv.bv_page,
                offset: bv.bv_offset,
                len: bv.bv_len,
                sector: iter.bi_sector,
                _bio: PhantomData,
                _dir: PhantomData,
            };
            f(&mut seg)?;
            // SAFETY: as above; advances the copy by the segment just handled.
            unsafe { bindings::bio_advance_iter_single(bio, &mut iter, bv.bv_len) };
        }
        Ok(())
    }
}

impl Drop for Bio {
    fn drop(&mut self) {
        // SAFETY: as in `end`: the bio has not been completed, and is completed once, here.
        unsafe {
            (*self.raw()).bi_status = bindings::errno_to_blk_status(EIO.to_errno());
            bindings::bio_endio(self.raw());
        }
    }
}

/// A piece of a [`Bio`]'s data within one page: its memory and the sector it starts at. `D` is
/// the bio's direction (see [`dir`]).
///
/// # Invariants
///
/// `page` is a page of the bio with `offset + len <= PAGE_SIZE`; the bio (and so the page) stays
/// alive for `'a`. The bio's direction is `D`.
pub struct Segment<'a, D> {
    page: *mut bindings::page,
    offset: u32,
    len: u32,
    sector: u64,
    _bio: PhantomData<&'a mut Bio>,
    _dir: PhantomData<D>,
}

impl<D> Segment<'_, D> {
    /// Returns the sector the segment starts at.
    pub fn sector(&self) -> u64 {
        self.sector
    }

    /// Returns the length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Returns whether the segment is empty (it never is for a data bio).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Returns the offset in the page of `len` bytes from `offset` in the segment, if they are
    /// within it.
    fn range(&self, offset: usize, len: usize) -> Result<usize> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len() => Ok(self.offset as usize + offset),
            _ => Err(EINVAL),
        }
    }
}

impl Segment<'_, dir::Write> {
    /// Copies `dst.len()` bytes of the segment, from `offset` on, into `dst`.
    ///
    /// Fails with [`EINVAL`] if the range is not within the segment. The copy is made by C
    /// (`memcpy_from_page()`): someone else may write the segment's memory meanwhile (an
    /// `O_DIRECT` buffer), which leaves the copied bytes unspecified but never exposes that
    /// memory to Rust.
    pub fn copy_to_slice(&self, offset: usize, dst: &mut [u8]) -> Result {
        let start = self.range(offset, dst.len())?;
        // SAFETY: the page is alive for `'a` (type invariant) and `start + dst.len()` is within
        // it (checked by `range`); `dst` is valid for writes of `dst.len()` bytes.
        unsafe { bindings::memcpy_from_page(dst.as_mut_ptr().cast(), self.page, start, dst.len()) };
        Ok(())
    }
}

impl Segment<'_, dir::Read> {
    /// Copies `src` into the segment, from `offset` on.
    ///
    /// Fails with [`EINVAL`] if the range is not within the segment. The copy is made by C
    /// (`memcpy_to_page()`): others may read or write the memory meanwhile (an `O_DIRECT`
    /// buffer), which Rust never sees. A read's pages are the submitter's buffers for the data,
    /// so filling them is what the bio asks for.
    pub fn copy_from_slice(&mut self, offset: usize, src: &[u8]) -> Result {
        let start = self.range(offset, src.len())?;
        // SAFETY: the page is alive for `'a` (type invariant), and as a read's page it is memory
        // the submitter asked to be filled; `start + src.len()` is within it (checked by
        // `range`); `src` is valid for reads of `src.len()` bytes.
        unsafe { bindings::memcpy_to_page(self.page, start, src.as_ptr().cast(), src.len()) };
        Ok(())
    }
}

/// The operations of a bio-based disk, implemented by the driver's per-disk state.
#[macros::vtable]
pub trait Operations: Sized + Send + Sync + 'static {
    /// Handles `bio`, which must be completed with [`Bio::end`] (dropping it fails it).
    ///
    /// A bio may be completed later, from another thread, but before the [`GenDisk`] is dropped:
    /// as for C bio-based drivers, removing the disk does not wait for bios in flight.
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

/// The `show` function of an [`Attribute`]: writes the value of `T`'s attribute.
pub type ShowFn<T> = fn(&T, &Disk, &mut SysfsBuf<'_>) -> Result;

/// The `store` function of an [`Attribute`]: parses the input and applies it to `T`.
pub type StoreFn<T> = fn(&T, &Disk, &[u8]) -> Result;

/// A sysfs attribute of a disk, in `/sys/block/<disk>/`: the C attribute and the Rust callbacks
/// it forwards to.
///
/// Declare attributes in a `static` table and pass it to [`GenDisk::new`]. The table outlives
/// every disk, as the C attributes must, and each attribute's lockdep key (`attr.skey`, used
/// since `attr.key` is null) is a static object of its own, so each attribute gets a lock class
/// of its own, as C attributes do. (Several attributes sharing one class make lockdep report
/// recursive locking of `kn->active` when removing a disk races with reading its attributes.)
///
/// # Invariants
///
/// `attr` is a `device_attribute` whose `show` and `store` are `show_callback::<T>` and
/// `store_callback::<T>` (or null), and whose name is a static C string.
#[repr(C)]
pub struct Attribute<T: Operations> {
    attr: Opaque<bindings::device_attribute>,
    show: Option<ShowFn<T>>,
    store: Option<StoreFn<T>>,
}

// SAFETY: the C side only reads the attribute (and takes its lockdep key's address); the Rust
// callbacks are plain functions.
unsafe impl<T: Operations> Sync for Attribute<T> {}

impl<T: Operations> Attribute<T> {
    /// An attribute with `mode`, `show` and `store`; a missing callback makes the corresponding
    /// access fail with `EIO`, as in C.
    pub const fn new(
        name: &'static CStr,
        mode: u16,
        show: Option<ShowFn<T>>,
        store: Option<StoreFn<T>>,
    ) -> Self {
        // SAFETY: all zeroes is a valid `device_attribute`: no callbacks, no lockdep key.
        let mut attr: bindings::device_attribute = unsafe { core::mem::zeroed() };
        attr.attr.name = name.as_char_ptr();
        attr.attr.mode = mode;
        if show.is_some() {
            attr.show = Some(show_callback::<T>);
        }
        if store.is_some() {
            attr.store = Some(store_callback::<T>);
        }
        // INVARIANT: the callbacks are ours and the name is static.
        Attribute {
            attr: Opaque::new(attr),
            show,
            store,
        }
    }

    /// A read-only attribute (0444).
    pub const fn ro(name: &'static CStr, show: ShowFn<T>) -> Self {
        Self::new(name, 0o444, Some(show), None)
    }

    /// A write-only attribute (0200).
    pub const fn wo(name: &'static CStr, store: StoreFn<T>) -> Self {
        Self::new(name, 0o200, None, Some(store))
    }

    /// A read-write attribute (0644).
    pub const fn rw(name: &'static CStr, show: ShowFn<T>, store: StoreFn<T>) -> Self {
        Self::new(name, 0o644, Some(show), Some(store))
    }

    fn raw(&self) -> *mut bindings::attribute {
        // SAFETY: `attr` is the first field of the `device_attribute`, which `Opaque` wraps;
        // only its address is taken.
        unsafe { core::ptr::addr_of_mut!((*self.attr.get()).attr) }
    }

    /// Returns the address of the lockdep key sysfs gives this attribute's active reference, or
    /// 0 without `CONFIG_DEBUG_LOCK_ALLOC`. Distinct attributes have distinct keys.
    pub fn lock_class_key(&self) -> usize {
        // SAFETY: `raw` points to the attribute inside `self`.
        unsafe { crate::sysfs::attribute_lock_class_key(self.raw()) }
    }
}

/// Limits and features of a disk.
#[derive(Clone, Copy, Debug)]
pub struct DiskParams {
    /// The smallest unit the disk addresses, in bytes (a power of two, 512 to a page).
    pub logical_block_size: u32,
    /// The unit the disk writes without read-modify-write, in bytes.
    pub physical_block_size: u32,
    /// The smallest preferred I/O size, in bytes.
    pub io_min: u32,
    /// The optimal I/O size, in bytes.
    pub io_opt: u32,
    /// The largest discard, in sectors; 0 disables discard.
    pub max_discard_sectors: u32,
    /// The largest write-zeroes, in sectors; 0 disables it.
    pub max_write_zeroes_sectors: u32,
    /// `BLK_FEAT_SYNCHRONOUS`: I/O completes before `submit_bio` returns, so swap reads without
    /// the swap cache's readahead.
    pub synchronous: bool,
    /// `BLK_FEAT_STABLE_WRITES`: pages must not change while they are written.
    pub stable_writes: bool,
    /// The disk's major number.
    pub major: i32,
    /// The minor number of the whole disk.
    pub first_minor: i32,
    /// Whether the disk may hold partitions.
    pub partitions: bool,
    /// The initial capacity in sectors.
    pub capacity_sectors: u64,
}

/// What a disk's attribute group points to: the pointers to its attributes and the group.
///
/// Read by `device_add_disk()` and by `del_gendisk()` (which removes the attributes, waiting for
/// running callbacks); never afterwards, so it may go once `del_gendisk()` has returned.
struct Group {
    ptrs: KVec<*mut bindings::attribute>,
    group: bindings::attribute_group,
    groups: [*const bindings::attribute_group; 2],
}

/// The `block_device_operations` of disks of `T`: a constant, so it lives in static memory and
/// outlives every reference to a disk.
struct Vtable<T>(PhantomData<T>);

impl<T: Operations> Vtable<T> {
    const FOPS: bindings::block_device_operations = bindings::block_device_operations {
        submit_bio: Some(submit_bio_callback::<T>),
        open: Some(open_callback::<T>),
        free_disk: Some(free_disk_callback::<T>),
        swap_slot_free_notify: if T::HAS_SWAP_SLOT_FREE_NOTIFY {
            Some(swap_notify_callback::<T>)
        } else {
            None
        },
        // A null owner, as for the mq disks: opening the disk takes no module reference. So
        // `GenDisk::new` refuses to register disks for loadable modules.
        owner: core::ptr::null_mut(),
        // SAFETY: all zeroes is a valid `block_device_operations` (no other callbacks).
        ..unsafe { core::mem::zeroed() }
    };
}

/// A registered bio-based disk.
///
/// Dropping it removes the disk (`del_gendisk()`: no new I/O or opens, the sysfs attributes are
/// removed after their running callbacks return) and drops this object's reference to the C
/// disk. So it must not be dropped from one of the disk's own attribute callbacks, which would
/// wait for itself. The disk itself, and its reference to `T`, live until the last reference to it goes,
/// which may be later: `del_gendisk()` does not wait for openers.
///
/// # Invariants
///
/// `disk` was allocated by `__blk_alloc_disk()` and added with `device_add_disk()`, and this
/// object owns one reference to it. Its `private_data` is an `Arc<T>` converted with
/// [`ForeignOwnable::into_foreign`], released by `free_disk_callback`; its `fops` is
/// `Vtable::<T>::FOPS`; its attribute groups point into `group` and to `'static` attributes.
pub struct GenDisk<T: Operations> {
    disk: NonNull<bindings::gendisk>,
    data: Arc<T>,
    group: Pin<KBox<Group>>,
}

// SAFETY: the disk may be used and removed from any thread; `T` is `Send + Sync`.
unsafe impl<T: Operations> Send for GenDisk<T> {}

// SAFETY: the methods taking `&self` call C functions that synchronise internally.
unsafe impl<T: Operations> Sync for GenDisk<T> {}

/// Returns the driver state of `disk`.
///
/// # Safety
///
/// `disk` must be a disk of a [`GenDisk<T>`] to which the caller holds a reference (any block
/// layer callback does) for `'a`.
unsafe fn state<'a, T: Operations>(disk: *mut bindings::gendisk) -> &'a T {
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
    // SAFETY: `private_data` came from `into_foreign` in `GenDisk::new` (type invariant), and no
    // callback can borrow it any more: nobody holds a reference to the disk.
    drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign((*disk).private_data) });
}

/// # Safety
///
/// Called by the block layer with a valid bio submitted to a disk of a `GenDisk<T>`.
unsafe extern "C" fn submit_bio_callback<T: Operations>(bio: *mut bindings::bio) {
    // SAFETY: the block layer calls this with a valid bio of our disk.
    let disk = unsafe { (*(*bio).bi_bdev).bd_disk };
    // SAFETY: the bio holds a reference to its disk, a disk of a `GenDisk<T>` (it uses our fops).
    let t = unsafe { state::<T>(disk) };
    // SAFETY: the block layer never passes a null bio.
    let ptr = unsafe { NonNull::new_unchecked(bio) };
    // INVARIANT: the bio was just submitted to this driver.
    t.submit_bio(Bio { ptr });
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

/// # Safety
///
/// Called by sysfs with the device of a disk of a `GenDisk<T>`, one of the attributes it was
/// registered with, and a page-sized buffer.
unsafe extern "C" fn show_callback<T: Operations>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: sysfs passes one of our static `Attribute<T>`s, whose first field (`repr(C)`) is
    // the `device_attribute` (`Opaque` is transparent).
    let rust = unsafe { &*attr.cast::<Attribute<T>>() };
    // SAFETY: `dev` is the disk's device.
    let disk = unsafe { bindings::dev_to_disk(dev) };
    // SAFETY: sysfs holds a reference to the device, and so to the disk, during the callback.
    let t = unsafe { state::<T>(disk) };
    // SAFETY: as above; `del_gendisk()` waits for this callback before the disk is unregistered.
    let d = unsafe { Disk::from_raw(disk) };
    // SAFETY: sysfs gives show a zeroed page-sized buffer.
    let page = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), crate::page::PAGE_SIZE) };
    let mut out = SysfsBuf::new(page);
    match rust.show {
        Some(show) => match show(t, d, &mut out) {
            Ok(()) => out.len() as isize,
            Err(e) => e.to_errno() as isize,
        },
        None => EIO.to_errno() as isize,
    }
}

/// # Safety
///
/// Called by sysfs with the device of a disk of a `GenDisk<T>`, one of the attributes it was
/// registered with, and `count` readable bytes.
unsafe extern "C" fn store_callback<T: Operations>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: as in `show_callback`.
    let rust = unsafe { &*attr.cast::<Attribute<T>>() };
    // SAFETY: as in `show_callback`.
    let disk = unsafe { bindings::dev_to_disk(dev) };
    // SAFETY: as in `show_callback`.
    let t = unsafe { state::<T>(disk) };
    // SAFETY: as in `show_callback`.
    let d = unsafe { Disk::from_raw(disk) };
    // SAFETY: sysfs passes `count` readable bytes.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    match rust.store {
        Some(store) => match store(t, d, input) {
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        },
        None => EIO.to_errno() as isize,
    }
}

impl<T: Operations> GenDisk<T> {
    /// Allocates the disk `name` with `params`, attaches `data` and `attrs`, and registers it.
    ///
    /// `attrs` is a `static` table (see [`Attribute`]); a local table does not compile (checked by
    /// `tests/compile_fail/fail_bio_attrs_not_static.rs`). On failure everything allocated so far
    /// is released: the group, the C disk (`put_disk()`), and the disk's reference on `data`.
    ///
    /// Fails with [`EINVAL`] when called from a loadable module (`module` is not null): the disk's
    /// operations are a constant whose `owner` is null, so opening the disk would not pin the
    /// module, and the module could be unloaded while the block core still holds the disk and
    /// calls into its code. Built-in drivers only, until the operations carry their module.
    pub fn new(
        module: &'static ThisModule,
        params: &DiskParams,
        name: fmt::Arguments<'_>,
        data: Arc<T>,
        attrs: &'static [Attribute<T>],
    ) -> Result<Self> {
        if !module.as_ptr().is_null() {
            return Err(EINVAL);
        }
        let ptrs = crate::sysfs::attribute_pointers(attrs.iter().map(Attribute::raw))?;
        let mut group = KBox::pin(
            Group {
                ptrs,
                // SAFETY: all zeroes is a valid `attribute_group`.
                group: unsafe { core::mem::zeroed() },
                groups: [core::ptr::null(); 2],
            },
            GFP_KERNEL,
        )?;
        // SAFETY: the group is not structurally pinned as a whole; its fields are filled in place
        // and never moved again.
        let g = unsafe { group.as_mut().get_unchecked_mut() };
        g.group.attrs = g.ptrs.as_mut_ptr();
        g.groups[0] = core::ptr::addr_of!(g.group);

        // SAFETY: all zeroes is a valid `queue_limits`, meaning "defaults".
        let mut lim: bindings::queue_limits = unsafe { core::mem::zeroed() };
        lim.logical_block_size = params.logical_block_size;
        lim.physical_block_size = params.physical_block_size;
        lim.io_min = params.io_min;
        lim.io_opt = params.io_opt;
        lim.max_hw_discard_sectors = params.max_discard_sectors;
        lim.max_write_zeroes_sectors = params.max_write_zeroes_sectors;
        if params.synchronous {
            lim.features |= bindings::BLK_FEAT_SYNCHRONOUS;
        }
        if params.stable_writes {
            lim.features |= bindings::BLK_FEAT_STABLE_WRITES;
        }

        // SAFETY: `lim` is valid; the lock class key is a static.
        let disk = from_err_ptr(unsafe {
            bindings::__blk_alloc_disk(
                &mut lim,
                bindings::NUMA_NO_NODE,
                crate::static_lock_class!().as_ptr(),
            )
        })?;
        // From here until `device_add_disk()` succeeds, failure must `put_disk()`.
        let undo = crate::types::ScopeGuard::new_with_data(disk, |disk| {
            // SAFETY: the disk was allocated above and not added.
            unsafe { bindings::put_disk(disk) }
        });

        // SAFETY: the disk was just allocated and nothing else uses it yet.
        let d = unsafe { &mut *disk };
        let cap = d.disk_name.len();
        // SAFETY: `disk_name` is a writable array of `cap` bytes.
        let mut w = unsafe {
            crate::str::RawFormatter::from_buffer(d.disk_name.as_mut_ptr().cast::<u8>(), cap)
        };
        // The formatter stops writing at `cap` but keeps counting: a name that does not fit with
        // its terminator is refused.
        fmt::Write::write_fmt(&mut w, name).map_err(|_| EINVAL)?;
        fmt::Write::write_str(&mut w, "\0").map_err(|_| EINVAL)?;
        if w.bytes_written() > cap {
            return Err(EINVAL);
        }
        d.major = params.major;
        d.first_minor = params.first_minor;
        d.minors = 1;
        if !params.partitions {
            d.flags |= bindings::GENHD_FL_NO_PART as c_int;
        }
        // Bound first, so that the table's `'static` storage (constant promotion) is checked.
        let fops: &'static bindings::block_device_operations = &Vtable::<T>::FOPS;
        d.fops = fops;

        // SAFETY: the disk is valid and not yet visible.
        unsafe { bindings::set_capacity(disk, params.capacity_sectors) };

        let foreign = data.clone().into_foreign();
        d.private_data = foreign.cast_mut();
        // SAFETY: the disk is fully set up; the group lives until `del_gendisk()` has returned
        // (see `Drop`), and the fops and attributes are static.
        let ret = unsafe {
            bindings::device_add_disk(core::ptr::null_mut(), disk, g.groups.as_ptr().cast_mut())
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: `foreign` came from `into_foreign` above and the disk was not added, so
            // nothing else can have borrowed it.
            drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(foreign) });
            return Err(e);
        }
        undo.dismiss();
        // INVARIANT: the disk was allocated and added above with `data`, `FOPS` and `group`; from
        // now on `free_disk` releases `foreign`.
        Ok(GenDisk {
            // SAFETY: `from_err_ptr` succeeded, so `disk` is not null.
            disk: unsafe { NonNull::new_unchecked(disk) },
            data,
            group,
        })
    }

    fn raw(&self) -> *mut bindings::gendisk {
        self.disk.as_ptr()
    }

    /// Returns the driver state.
    pub fn data(&self) -> &Arc<T> {
        &self.data
    }
}

impl<T: Operations> core::ops::Deref for GenDisk<T> {
    type Target = Disk;

    fn deref(&self) -> &Disk {
        // SAFETY: the disk is valid while `self` lives.
        unsafe { Disk::from_raw(self.raw()) }
    }
}

/// A registered disk, as the attribute callbacks and [`GenDisk`] see it.
///
/// # Invariants
///
/// The wrapped `gendisk` is registered and valid for the lifetime of the reference.
#[repr(transparent)]
pub struct Disk(crate::types::Opaque<bindings::gendisk>);

// SAFETY: `&Disk` only calls C functions that synchronise internally (the capacity's seqcount,
// the open mutex, the block device's own locks).
unsafe impl Sync for Disk {}

impl Disk {
    /// # Safety
    ///
    /// `ptr` must be a registered disk that stays valid for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::gendisk) -> &'a Disk {
        // SAFETY: `Disk` is a transparent wrapper; validity is the caller's promise.
        unsafe { &*ptr.cast::<Disk>() }
    }

    fn raw(&self) -> *mut bindings::gendisk {
        self.0.get()
    }

    /// Returns the disk's name.
    pub fn name(&self) -> &CStr {
        // SAFETY: `disk_name` was written with a terminator in `new` and never changes.
        unsafe { CStr::from_char_ptr((*self.raw()).disk_name.as_ptr()) }
    }

    /// Sets the capacity in sectors and tells user space that it changed.
    ///
    /// Context: process context; may sleep (the uevent allocates).
    pub fn set_capacity(&self, sectors: u64) {
        // SAFETY: the disk is valid; the function takes the locks it needs.
        unsafe { bindings::set_capacity_and_notify(self.raw(), sectors) };
    }

    /// Runs `f` with the disk's open mutex held if nobody has the disk open, so that no open can
    /// slip in meanwhile; otherwise fails with [`EBUSY`].
    ///
    /// [`Operations::open`] runs under the same mutex, so a flag set in `f` is seen by every later
    /// open.
    ///
    /// Context: process context; sleeps (takes a mutex).
    pub fn if_unopened<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        // SAFETY: the disk is valid, so is its open mutex.
        let m = unsafe { core::ptr::addr_of_mut!((*self.raw()).open_mutex) };
        // SAFETY: `m` is a valid mutex, unlocked below.
        unsafe { bindings::mutex_lock(m) };
        // SAFETY: the disk is valid.
        let r = if unsafe { bindings::disk_openers(self.raw()) } == 0 {
            Ok(f())
        } else {
            Err(EBUSY)
        };
        // SAFETY: locked above.
        unsafe { bindings::mutex_unlock(m) };
        r
    }

    /// Writes back and waits for any I/O cached for the disk.
    ///
    /// Context: process context; sleeps.
    pub fn sync(&self) {
        // SAFETY: the disk and its whole-disk block device are valid.
        unsafe { bindings::sync_blockdev((*self.raw()).part0) };
    }
}

impl<T: Operations> Drop for GenDisk<T> {
    fn drop(&mut self) {
        // SAFETY: the disk was added in `new` and is removed once, here. This removes the
        // attributes, waiting for running callbacks, and ends new I/O and opens; the block core
        // may still hold references (openers, swap), which keep `private_data` alive.
        unsafe { bindings::del_gendisk(self.raw()) };
        // SAFETY: drops the reference `__blk_alloc_disk()` returned. If it is the last one, the
        // disk is released now and `free_disk` drops its reference to `T`.
        unsafe { bindings::put_disk(self.raw()) };
        // `group` is dropped after this: since `del_gendisk()`, nothing reads it.
        let _ = &self.group;
    }
}

/// A block device major number, registered with `register_blkdev()`; unregistered on drop.
///
/// # Invariants
///
/// `major` is registered under `name`.
pub struct Major {
    major: u32,
    name: &'static CStr,
}

impl Major {
    /// Registers a dynamically allocated major number for `name`.
    pub fn register(name: &'static CStr) -> Result<Self> {
        // SAFETY: `name` is a static string; no probe callback is given.
        let ret = unsafe { bindings::__register_blkdev(0, name.as_char_ptr(), None) };
        if ret < 0 {
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered just now.
        Ok(Major {
            major: ret as u32,
            name,
        })
    }

    /// Returns the number.
    pub fn number(&self) -> i32 {
        self.major as i32
    }
}

impl Drop for Major {
    fn drop(&mut self) {
        // SAFETY: registered in `register`, unregistered once here.
        unsafe { bindings::unregister_blkdev(self.major as c_uint, self.name.as_char_ptr()) };
    }
}

/// KUnit tests of the disk's lifetime and attributes. Built with rzram's tests, this
/// abstraction's only user.
#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[macros::kunit_tests(rust_block_bio)]
mod tests {
    use super::*;
    use crate::{c_str, kunit_expect, kunit_expect_eq};
    use core::sync::atomic::{AtomicUsize, Ordering};

    // SAFETY: a null module is what a built-in driver's `THIS_MODULE` holds.
    static BUILT_IN: crate::ThisModule =
        unsafe { crate::ThisModule::from_ptr(core::ptr::null_mut()) };

    /// How many `Null`s were dropped.
    static DROPS: AtomicUsize = AtomicUsize::new(0);

    /// A disk that completes every bio at once.
    struct Null;

    impl Drop for Null {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[macros::vtable]
    impl Operations for Null {
        fn submit_bio(&self, bio: Bio) {
            bio.end(Ok(()));
        }
    }

    fn show(_: &Null, _: &Disk, _: &mut SysfsBuf<'_>) -> Result {
        Ok(())
    }

    static ATTRS: [Attribute<Null>; 2] = [
        Attribute::ro(c_str!("first"), show),
        Attribute::ro(c_str!("second"), show),
    ];

    fn params(major: &Major) -> DiskParams {
        DiskParams {
            logical_block_size: 4096,
            physical_block_size: 4096,
            io_min: 4096,
            io_opt: 4096,
            max_discard_sectors: 0,
            max_write_zeroes_sectors: 0,
            synchronous: true,
            stable_writes: false,
            major: major.number(),
            first_minor: 0,
            partitions: false,
            capacity_sectors: 8,
        }
    }

    /// The block core may hold a disk after the driver removes it (an `open()` that failed with
    /// `EBUSY` and has not yet put its reference, swap): the disk's operations and its driver
    /// state must outlive every reference. Before the fix, the last `put_device()` read
    /// `fops->free_disk` from freed memory (a KASAN report) and `T` was dropped while the disk
    /// was still referenced.
    #[test]
    fn disk_outlives_gendisk() -> Result {
        let major = Major::register(c_str!("rust_bio_kunit"))?;
        let disk = GenDisk::new(
            &BUILT_IN,
            &params(&major),
            format_args!("rust_bio_kunit0"),
            Arc::new(Null, GFP_KERNEL)?,
            &ATTRS,
        )?;
        let before = DROPS.load(Ordering::Relaxed);
        // SAFETY: the disk is valid; `part0`'s device is the disk's device, whose reference is
        // taken here as `blkdev_get_no_open()` does, and put below.
        let dev = unsafe { core::ptr::addr_of_mut!((*(*disk.raw()).part0).bd_device) };
        // SAFETY: `dev` is a valid, registered device.
        unsafe { bindings::get_device(dev) };
        drop(disk);
        // Removed, but referenced: the driver state is still there.
        kunit_expect_eq!(DROPS.load(Ordering::Relaxed), before);
        // SAFETY: puts the reference taken above; the last one releases the disk, which calls
        // `fops->free_disk`.
        unsafe { bindings::put_device(dev) };
        kunit_expect_eq!(DROPS.load(Ordering::Relaxed), before + 1);
        Ok(())
    }

    /// Each attribute has a lockdep class of its own.
    #[test]
    fn one_lock_class_per_attribute() {
        kunit_expect!(
            ATTRS[0].lock_class_key() != ATTRS[1].lock_class_key()
                || cfg!(not(CONFIG_DEBUG_LOCK_ALLOC))
        );
        if cfg!(CONFIG_DEBUG_LOCK_ALLOC) {
            kunit_expect!(ATTRS[0].lock_class_key() != 0);
        }
    }
}
