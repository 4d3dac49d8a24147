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
    types::ForeignOwnable,
    ThisModule,
};
use core::{fmt, marker::PhantomData, pin::Pin, ptr::NonNull};

/// The operation of a [`Bio`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read data into the bio's pages.
    Read,
    /// Write the bio's pages.
    Write,
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

    /// Returns the operation.
    pub fn op(&self) -> Op {
        // SAFETY: the bio is valid; `bi_opf` is not changed while the driver owns it.
        let op = unsafe { (*self.raw()).bi_opf } & ((1 << bindings::REQ_OP_BITS) - 1);
        match op {
            bindings::req_op_REQ_OP_READ => Op::Read,
            bindings::req_op_REQ_OP_WRITE => Op::Write,
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

    /// Calls `f` on each segment of the bio's data, in order, until it returns an error.
    ///
    /// A segment never crosses a page boundary of the bio's memory.
    pub fn for_each_segment(&mut self, mut f: impl FnMut(&mut Segment<'_>) -> Result) -> Result {
        // SAFETY: the bio is valid; the iterator is a copy, so the bio is not advanced.
        let mut iter = unsafe { (*self.raw()).bi_iter };
        while iter.bi_size > 0 {
            // SAFETY: `iter` is within the bio's vector, as `bi_size` is not zero.
            let bv = unsafe { bindings::bio_iter_iovec(self.raw(), iter) };
            let mut seg = Segment {
                page: bv.bv_page,
                offset: bv.bv_offset,
                len: bv.bv_len,
                sector: iter.bi_sector,
                _bio: PhantomData,
            };
            f(&mut seg)?;
            // SAFETY: as above; advances the copy by the segment just handled.
            unsafe { bindings::bio_advance_iter_single(self.raw(), &mut iter, bv.bv_len) };
        }
        Ok(())
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

impl Drop for Bio {
    fn drop(&mut self) {
        // SAFETY: as in `end`: the bio has not been completed, and is completed once, here.
        unsafe {
            (*self.raw()).bi_status = bindings::errno_to_blk_status(EIO.to_errno());
            bindings::bio_endio(self.raw());
        }
    }
}

/// A piece of a [`Bio`]'s data within one page: its memory and the sector it starts at.
///
/// # Invariants
///
/// `page` is a page of the bio with `offset + len <= PAGE_SIZE`; the bio (and so the page) stays
/// alive for `'a`.
pub struct Segment<'a> {
    page: *mut bindings::page,
    offset: u32,
    len: u32,
    sector: u64,
    _bio: PhantomData<&'a mut Bio>,
}

impl Segment<'_> {
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

    /// Calls `f` with the segment's bytes mapped for reading.
    ///
    /// The mapping is `kmap_local_page()`; with `CONFIG_HIGHMEM`, mappings created inside `f` must
    /// be dropped inside `f`, since local mappings are released in reverse order.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        // SAFETY: the page is alive (type invariant); the mapping is released below.
        let base = unsafe { bindings::kmap_local_page(self.page) };
        // SAFETY: the page is mapped at `base` and `offset + len` is within it; the driver owns
        // the bio's memory for the duration of the I/O.
        let bytes = unsafe {
            core::slice::from_raw_parts(base.cast::<u8>().add(self.offset as usize), self.len())
        };
        let r = f(bytes);
        // SAFETY: `base` was mapped above; `bytes` is no longer used.
        unsafe { bindings::kunmap_local(base) };
        r
    }

    /// Calls `f` with the segment's bytes mapped for writing. See [`with_bytes`](Self::with_bytes).
    pub fn with_bytes_mut<R>(&mut self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        // SAFETY: the page is alive (type invariant); the mapping is released below.
        let base = unsafe { bindings::kmap_local_page(self.page) };
        // SAFETY: as in `with_bytes`; `&mut self` makes this the only access through the bio.
        let bytes = unsafe {
            core::slice::from_raw_parts_mut(base.cast::<u8>().add(self.offset as usize), self.len())
        };
        let r = f(bytes);
        // SAFETY: `base` was mapped above; `bytes` is no longer used.
        unsafe { bindings::kunmap_local(base) };
        r
    }
}

/// The operations of a bio-based disk, implemented by the driver's per-disk state.
#[macros::vtable]
pub trait Operations: Sized + Send + Sync + 'static {
    /// Handles `bio`, which must be completed with [`Bio::end`] (dropping it fails it).
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

/// A sysfs attribute of a disk, in `/sys/block/<disk>/`.
pub struct Attribute<T> {
    name: &'static CStr,
    mode: u16,
    show: Option<ShowFn<T>>,
    store: Option<StoreFn<T>>,
}

impl<T> Attribute<T> {
    /// An attribute with `mode`, `show` and `store`; a missing callback makes the corresponding
    /// access fail with `EIO`, as in C.
    pub const fn new(
        name: &'static CStr,
        mode: u16,
        show: Option<ShowFn<T>>,
        store: Option<StoreFn<T>>,
    ) -> Self {
        Attribute {
            name,
            mode,
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

/// A sysfs attribute as C sees it, with the Rust attribute it forwards to.
#[repr(C)]
struct DevAttr<T: 'static> {
    attr: bindings::device_attribute,
    rust: &'static Attribute<T>,
}

/// What the C disk points to and must outlive it: operations and sysfs tables.
struct Tables<T: 'static> {
    fops: bindings::block_device_operations,
    attrs: KVec<DevAttr<T>>,
    ptrs: KVec<*mut bindings::attribute>,
    group: bindings::attribute_group,
    groups: [*const bindings::attribute_group; 2],
}

/// A registered bio-based disk.
///
/// Dropping it removes the disk (`del_gendisk()`), which waits for open files and sysfs
/// callbacks to finish, then drops the disk's reference on `T` and the last C reference on the
/// disk (`put_disk()`).
///
/// # Invariants
///
/// `disk` was allocated by `__blk_alloc_disk()` and added with `device_add_disk()`; its
/// `private_data` is `data` converted with [`ForeignOwnable::into_foreign`], and its `fops` and
/// attribute groups point into `tables`.
pub struct GenDisk<T: Operations> {
    disk: NonNull<bindings::gendisk>,
    data: Arc<T>,
    tables: Pin<KBox<Tables<T>>>,
}

// SAFETY: the disk may be used and removed from any thread; `T` is `Send + Sync`.
unsafe impl<T: Operations> Send for GenDisk<T> {}

// SAFETY: the methods taking `&self` call C functions that synchronise internally.
unsafe impl<T: Operations> Sync for GenDisk<T> {}

/// Returns the driver state of `disk`.
///
/// # Safety
///
/// `disk` must belong to a live `GenDisk<T>`.
unsafe fn state<'a, T: Operations>(disk: *mut bindings::gendisk) -> &'a T {
    // SAFETY: `private_data` holds an `Arc<T>` owned by the disk until `GenDisk::drop` removes
    // the disk, which waits for every callback.
    let b = unsafe { <Arc<T> as ForeignOwnable>::borrow((*disk).private_data) };
    // SAFETY: the `Arc` outlives the callback, as argued above.
    unsafe { &*core::ptr::from_ref::<T>(&b) }
}

/// # Safety
///
/// Called by the block layer with a valid bio submitted to a disk of a live `GenDisk<T>`.
unsafe extern "C" fn submit_bio_callback<T: Operations>(bio: *mut bindings::bio) {
    // SAFETY: the block layer calls this with a valid bio of our disk.
    let disk = unsafe { (*(*bio).bi_bdev).bd_disk };
    // SAFETY: the disk belongs to a live `GenDisk<T>` while I/O is submitted to it.
    let t = unsafe { state::<T>(disk) };
    // SAFETY: the block layer never passes a null bio.
    let ptr = unsafe { NonNull::new_unchecked(bio) };
    // INVARIANT: the bio was just submitted to this driver.
    t.submit_bio(Bio { ptr });
}

/// # Safety
///
/// Called by the block layer with a disk of a live `GenDisk<T>`.
unsafe extern "C" fn open_callback<T: Operations>(
    disk: *mut bindings::gendisk,
    _mode: bindings::blk_mode_t,
) -> c_int {
    // SAFETY: the disk belongs to a live `GenDisk<T>` while it can be opened.
    let t = unsafe { state::<T>(disk) };
    match t.open() {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by swap with a block device of a disk of a live `GenDisk<T>`, which it holds open.
unsafe extern "C" fn swap_notify_callback<T: Operations>(
    bdev: *mut bindings::block_device,
    slot: c_ulong,
) {
    // SAFETY: swap holds the device open while it calls this.
    let t = unsafe { state::<T>((*bdev).bd_disk) };
    t.swap_slot_free_notify(slot);
}

/// # Safety
///
/// Called by sysfs with the device of a disk of a live `GenDisk<T>`, one of its `DevAttr<T>`s
/// and a page-sized buffer.
unsafe extern "C" fn show_callback<T: Operations>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: sysfs passes one of our `DevAttr<T>`s, whose first field is `attr`.
    let rust = unsafe { (*attr.cast::<DevAttr<T>>()).rust };
    // SAFETY: `dev` is the disk's device; the attribute is removed before the disk goes.
    let disk = unsafe { bindings::dev_to_disk(dev) };
    // SAFETY: as above.
    let t = unsafe { state::<T>(disk) };
    // SAFETY: as above.
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
/// Called by sysfs with the device of a disk of a live `GenDisk<T>`, one of its `DevAttr<T>`s
/// and `count` readable bytes.
unsafe extern "C" fn store_callback<T: Operations>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: as in `show_callback`.
    let rust = unsafe { (*attr.cast::<DevAttr<T>>()).rust };
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
    /// On failure everything allocated so far is released: the tables, the C disk
    /// (`put_disk()`), and the disk's reference on `data`.
    pub fn new(
        module: &'static ThisModule,
        params: &DiskParams,
        name: fmt::Arguments<'_>,
        data: Arc<T>,
        attrs: &'static [Attribute<T>],
    ) -> Result<Self> {
        let mut tables = KBox::pin(
            Tables {
                // SAFETY: all zeroes is a valid `block_device_operations` (no callbacks).
                fops: unsafe { core::mem::zeroed() },
                attrs: KVec::with_capacity(attrs.len(), GFP_KERNEL)?,
                ptrs: KVec::new(),
                // SAFETY: all zeroes is a valid `attribute_group`.
                group: unsafe { core::mem::zeroed() },
                groups: [core::ptr::null(); 2],
            },
            GFP_KERNEL,
        )?;
        // SAFETY: the tables are not structurally pinned as a whole; the fields are filled in
        // place and never moved again.
        let t = unsafe { tables.as_mut().get_unchecked_mut() };
        t.fops.owner = module.as_ptr();
        t.fops.submit_bio = Some(submit_bio_callback::<T>);
        t.fops.open = Some(open_callback::<T>);
        if T::HAS_SWAP_SLOT_FREE_NOTIFY {
            t.fops.swap_slot_free_notify = Some(swap_notify_callback::<T>);
        }
        for a in attrs {
            // SAFETY: all zeroes is a valid `device_attribute`.
            let mut attr: bindings::device_attribute = unsafe { core::mem::zeroed() };
            crate::sysfs::init_attribute(&mut attr.attr, a.name, a.mode);
            attr.show = a.show.map(|_| show_callback::<T> as _);
            attr.store = a.store.map(|_| store_callback::<T> as _);
            t.attrs.push(DevAttr { attr, rust: a }, GFP_KERNEL)?;
        }
        // `attrs` has its final size: the pointers into it stay valid.
        t.ptrs = crate::sysfs::attribute_pointers(
            t.attrs
                .iter_mut()
                .map(|a| core::ptr::addr_of_mut!(a.attr.attr)),
        )?;
        t.group.attrs = t.ptrs.as_mut_ptr();
        t.groups[0] = core::ptr::addr_of!(t.group);

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
        d.fops = &t.fops;

        // SAFETY: the disk is valid and not yet visible.
        unsafe { bindings::set_capacity(disk, params.capacity_sectors) };

        let foreign = data.clone().into_foreign();
        d.private_data = foreign.cast_mut();
        // SAFETY: the disk is fully set up; the tables outlive it (they are dropped after
        // `del_gendisk()`).
        let ret = unsafe {
            bindings::device_add_disk(core::ptr::null_mut(), disk, t.groups.as_ptr().cast_mut())
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: `foreign` came from `into_foreign` above and the disk was not added, so
            // nothing else can have borrowed it.
            drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(foreign) });
            return Err(e);
        }
        undo.dismiss();
        // INVARIANT: the disk was allocated and added above with `data` and `tables`.
        Ok(GenDisk {
            // SAFETY: `from_err_ptr` succeeded, so `disk` is not null.
            disk: unsafe { NonNull::new_unchecked(disk) },
            data,
            tables,
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

    /// Returns the capacity in sectors.
    pub fn capacity(&self) -> u64 {
        // SAFETY: the disk is valid.
        unsafe { bindings::get_capacity(self.raw()) }
    }

    /// Sets the capacity in sectors and tells user space that it changed.
    pub fn set_capacity(&self, sectors: u64) {
        // SAFETY: the disk is valid; the function takes the locks it needs.
        unsafe { bindings::set_capacity_and_notify(self.raw(), sectors) };
    }

    /// Runs `f` with the disk's open mutex held if nobody has the disk open, so that no open can
    /// slip in meanwhile; otherwise fails with [`EBUSY`].
    ///
    /// [`Operations::open`] runs under the same mutex, so a flag set in `f` is seen by every later
    /// open.
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
    pub fn sync(&self) {
        // SAFETY: the disk and its whole-disk block device are valid.
        unsafe { bindings::sync_blockdev((*self.raw()).part0) };
    }
}

impl<T: Operations> Drop for GenDisk<T> {
    fn drop(&mut self) {
        // SAFETY: the disk was added in `new`; `del_gendisk()` removes it and its attributes and
        // waits for open files and callbacks, so `private_data` is unused afterwards.
        unsafe { bindings::del_gendisk(self.raw()) };
        // SAFETY: `private_data` came from `into_foreign` in `new` and nothing borrows it now.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign((*self.raw()).private_data) });
        // SAFETY: drops the reference `__blk_alloc_disk()` returned; `tables` is dropped after
        // this, when nothing refers to it.
        unsafe { bindings::put_disk(self.raw()) };
        let _ = &self.tables;
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
