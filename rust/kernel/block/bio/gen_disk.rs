// SPDX-License-Identifier: GPL-2.0

//! A registered bio-based disk, built by [`GenDiskBuilder::build_bio`], and its sysfs attributes.
//!
//! C header: [`include/linux/blkdev.h`](srctree/include/linux/blkdev.h)

use super::operations::{state, DiskData, Operations, Vtable};
use crate::{
    alloc::KBox,
    bindings,
    block::GenDiskBuilder,
    error::{code::*, from_err_ptr, to_result, Result},
    ffi::c_char,
    str::CStr,
    sync::Arc,
    sysfs::{Attribute, AttributeOwner, Group},
    types::{Opaque, ScopeGuard},
};
use core::{fmt, pin::Pin, ptr::NonNull};

/// A registered bio-based disk.
///
/// Dropping it removes the disk (`del_gendisk()`: no new I/O or opens, the sysfs attributes are
/// removed after their running callbacks return) and drops this object's reference to the C
/// disk. So it must not be dropped from one of the disk's own attribute callbacks, which would
/// wait for itself. The disk itself, and its reference to `T`, live until the last reference to
/// it goes, which may be later: `del_gendisk()` does not wait for openers.
///
/// In a loadable module the module's code and data must outlive the disk (see `DiskData` in
/// `operations.rs`): dropped while the module is live, the disk keeps the module loaded until its
/// last reference goes; dropped while the module is being unloaded (from its `Drop`), the drop
/// waits for that last reference. Nothing is open then (an open disk pins the module), so the wait
/// is short; but a disk dropped because the module's init failed may have been opened meanwhile (a
/// module being loaded can be pinned), and the drop then waits for that close, as a forced unload
/// (`rmmod -f`) of a module with open disks waits for ever. A `GenDisk` of a module must not be
/// leaked: a leaked disk is never removed, and would outlive the module's unloading, as any leaked
/// registration would (a known limit of Rust's module model, not one of this type).
///
/// # Invariants
///
/// `disk` was allocated by `__blk_alloc_disk()` and added with `device_add_disk()`, and this
/// object owns one reference to it. Its `private_data` is `dd`, converted with
/// [`Arc::into_raw`] and released by the `free_disk` callback, and `dd` holds a
/// reference to `data`; its `fops` is `Vtable::<T>::FOPS`, whose owner is `T::OWNER`, the
/// module of the code that built it (null if built in); its attribute groups point into `_group`
/// and to `'static` attributes.
pub struct GenDisk<T: Operations> {
    disk: NonNull<bindings::gendisk>,
    data: Arc<T>,
    dd: Arc<DiskData>,
    /// Kept, not read, for the disk's sysfs groups: dropped after `del_gendisk()` (see `Drop`).
    _group: Pin<KBox<Group>>,
}

// SAFETY: the disk may be used and removed from any thread; `T` is `Send + Sync`.
unsafe impl<T: Operations> Send for GenDisk<T> {}

// SAFETY: the methods taking `&self` call C functions that synchronise internally.
unsafe impl<T: Operations> Sync for GenDisk<T> {}

impl GenDiskBuilder {
    /// Builds a bio-based disk `name` with the builder's limits, features, number and capacity,
    /// attaches `data` and `attrs`, and adds it to the VFS.
    ///
    /// The disk never has partitions (`GENHD_FL_NO_PART`, as zram), whether or not it was given
    /// a number with [`devt`](GenDiskBuilder::devt): the block layer neither scans for a
    /// partition table nor lets user space add partitions. Its only block device is the whole
    /// disk, so every sector and swap slot the driver is handed counts from the disk's start
    /// (see [`Operations::swap_slot_free_notify`]).
    ///
    /// `attrs` is a `static` table (see [`Attribute`]); a local table does not compile (checked by
    /// `tests/compile_fail/fail_bio_attrs_not_static.rs`). On failure everything allocated so far
    /// is released: the group, the C disk (`put_disk()`), and the disk's reference on `data`.
    ///
    /// Fails with [`EINVAL`] if [`Operations::OWNER`] is not the module that `T`'s operations
    /// belong to (null for built-in code): opening the disk must pin that module.
    pub fn build_bio<T: Operations>(
        self,
        name: fmt::Arguments<'_>,
        data: Arc<T>,
        attrs: &'static [Attribute<GenDisk<T>>],
    ) -> Result<GenDisk<T>> {
        // Bound first, so that the table's `'static` storage (constant promotion) is checked.
        let fops: &'static bindings::block_device_operations = &Vtable::<T>::FOPS;
        if !is_owner(fops, T::OWNER.as_ptr()) {
            return Err(EINVAL);
        }
        let group = Group::new(attrs)?;
        let mut lim = self.queue_limits();
        // SAFETY: `lim` is valid; the lock class key is a static.
        let disk = from_err_ptr(unsafe {
            bindings::__blk_alloc_disk(
                &mut lim,
                bindings::NUMA_NO_NODE,
                crate::static_lock_class!().as_ptr(),
            )
        })?;
        // From here until `device_add_disk()` succeeds, failure must `put_disk()`.
        let undo = ScopeGuard::new_with_data(disk, |disk| {
            // SAFETY: the disk was allocated above and not added.
            unsafe { bindings::put_disk(disk) }
        });
        // SAFETY: the disk was just allocated, is not added, and nothing else uses it yet.
        unsafe { self.setup_disk(disk, name)? };
        let dd = DiskData::new(data.clone())?;
        let foreign = Arc::into_raw(dd.clone());
        // SAFETY: as above: the disk is ours alone until it is added.
        unsafe {
            (*disk).fops = fops;
            (*disk).private_data = foreign.cast_mut().cast();
            // No partitions: see above and `Operations::swap_slot_free_notify`.
            (*disk).flags |= bindings::GENHD_FL_NO_PART as i32;
        }
        // SAFETY: the disk is fully set up; the group lives until `del_gendisk()` has returned
        // (see `Drop`), and the fops and attributes are static.
        let ret = unsafe { bindings::device_add_disk(core::ptr::null_mut(), disk, group.groups()) };
        if let Err(e) = to_result(ret) {
            // SAFETY: `foreign` came from `into_raw` above and the disk was not added:
            // `device_add_disk()` failed, and on its way out `device_del()` waited for any show
            // or store of the attributes it had made visible, so nothing still borrows it.
            let dd = unsafe { Arc::from_raw(foreign) };
            // SAFETY: the disk was not added, so its `free_disk` never runs: the disk's
            // reference to `data` is released here, once.
            unsafe { dd.release() };
            return Err(e);
        }
        undo.dismiss();
        // INVARIANT: the disk was allocated and added above with `data`, `FOPS` and `group`; from
        // now on `free_disk` releases `foreign`.
        Ok(GenDisk {
            // SAFETY: `from_err_ptr` succeeded, so `disk` is not null.
            disk: unsafe { NonNull::new_unchecked(disk) },
            data,
            dd,
            _group: group,
        })
    }
}

/// Whether `owner` is the module whose memory holds `fops`, null standing for built-in code: the
/// check [`GenDiskBuilder::build_bio`] makes of [`Operations::OWNER`].
///
/// `owner` is only compared, never dereferenced, so it may be any pointer.
pub(super) fn is_owner(
    fops: &'static bindings::block_device_operations,
    owner: *mut bindings::module,
) -> bool {
    // SAFETY: FFI call without preconditions: the helper looks the address up among the loaded
    // modules' memory (with preemption disabled, as `__module_address()` needs) and never
    // dereferences it; the result is only compared.
    let module = unsafe { bindings::module_of_address(core::ptr::from_ref(fops).cast()) };
    module == owner
}

impl<T: Operations> GenDisk<T> {
    pub(super) fn raw(&self) -> *mut bindings::gendisk {
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
        // SAFETY: the disk is valid and registered while `self` lives.
        unsafe { Disk::from_raw(self.raw()) }
    }
}

impl<T: Operations> Drop for GenDisk<T> {
    fn drop(&mut self) {
        // SAFETY: the disk was added in `build_bio` and is removed once, here. This removes the
        // attributes, waiting for running callbacks, and ends new I/O and opens; the block core
        // may still hold references (openers, swap), which keep `private_data` alive.
        unsafe { bindings::del_gendisk(self.raw()) };
        let owner = T::OWNER.as_ptr();
        // A module's code and operations must outlive the disk (see `DiskData`): a live module
        // is pinned by the disk until it is released; one being unloaded waits for the release.
        let held = self.dd.hold_module(owner);
        // SAFETY: drops the reference `__blk_alloc_disk()` returned. If it is the last one, the
        // disk is released now and `free_disk` drops its reference to `T`.
        unsafe { bindings::put_disk(self.raw()) };
        if !owner.is_null() && !held {
            self.dd.wait_released();
        }
        // `_group` is dropped after this: since `del_gendisk()`, nothing reads it.
    }
}

/// A registered disk, as the attribute callbacks and [`GenDisk`] see it.
///
/// # Invariants
///
/// The wrapped `gendisk` is registered and valid for the lifetime of the reference.
#[repr(transparent)]
pub struct Disk(Opaque<bindings::gendisk>);

// SAFETY: `&Disk` only calls C functions that synchronise internally (the capacity's seqcount,
// the open mutex, the block device's own locks).
unsafe impl Sync for Disk {}

impl Disk {
    /// # Safety
    ///
    /// `ptr` must be a registered disk that stays valid for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::gendisk) -> &'a Disk {
        // SAFETY: `Disk` is a transparent wrapper; validity is the caller's promise.
        unsafe { &*ptr.cast::<Disk>() }
    }

    fn raw(&self) -> *mut bindings::gendisk {
        self.0.get()
    }

    /// Returns the disk's name.
    pub fn name(&self) -> &CStr {
        // SAFETY: `disk_name` was written with a terminator before the disk was added and never
        // changes.
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

    /// Writes back the dirty pages of the disk's block device page cache and waits for their
    /// writeback (`sync_blockdev()`).
    ///
    /// That cache holds what was written through the block device file (`/dev/<disk>`) without
    /// `O_DIRECT`, and the metadata buffers of a filesystem mounted on the disk, not its file
    /// data. It is the disk's only one: the disk has no partitions (see
    /// [`GenDiskBuilder::build_bio`]), so the whole-disk block device is its only block device.
    /// Other bios in flight are not waited for, and a writeback error is not reported.
    ///
    /// Context: process context; sleeps.
    pub fn sync(&self) {
        // SAFETY: the disk and its whole-disk block device are valid (type invariant).
        unsafe { bindings::sync_blockdev((*self.raw()).part0) };
    }
}

// SAFETY: `device_attribute` is a `struct attribute` followed by `show` and `store` of these
// types; the callbacks below pass the disk's driver state and the disk, which sysfs keeps alive
// during the call.
unsafe impl<T: Operations> AttributeOwner for GenDisk<T> {
    type Data = T;
    type Context = Disk;
    type Raw = bindings::device_attribute;
    type CShow = unsafe extern "C" fn(
        *mut bindings::device,
        *mut bindings::device_attribute,
        *mut c_char,
    ) -> isize;
    type CStore = unsafe extern "C" fn(
        *mut bindings::device,
        *mut bindings::device_attribute,
        *const c_char,
        usize,
    ) -> isize;
    const C_SHOW: Self::CShow = show_callback::<T>;
    const C_STORE: Self::CStore = store_callback::<T>;
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
    // SAFETY: sysfs passes one of the static attributes the disk was registered with.
    let a = unsafe { Attribute::<GenDisk<T>>::from_raw(attr) };
    // SAFETY: `dev` is the disk's device.
    let disk = unsafe { bindings::dev_to_disk(dev) };
    // SAFETY: sysfs holds a reference to the device, and so to the disk, during the callback.
    let t = unsafe { state::<T>(disk) };
    // SAFETY: as above; `del_gendisk()` waits for this callback before the disk is unregistered.
    let d = unsafe { Disk::from_raw(disk) };
    // SAFETY: sysfs passes a page-sized buffer.
    unsafe { a.show(t, d, buf) }
}

/// # Safety
///
/// Called by sysfs with the device of a disk of a `GenDisk<T>`, one of the attributes it was
/// registered with, and `count` readable bytes followed by a `NUL`.
unsafe extern "C" fn store_callback<T: Operations>(
    dev: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: as in `show_callback`.
    let a = unsafe { Attribute::<GenDisk<T>>::from_raw(attr) };
    // SAFETY: as in `show_callback`.
    let disk = unsafe { bindings::dev_to_disk(dev) };
    // SAFETY: as in `show_callback`.
    let t = unsafe { state::<T>(disk) };
    // SAFETY: as in `show_callback`.
    let d = unsafe { Disk::from_raw(disk) };
    // SAFETY: sysfs passes `count` bytes and a `NUL` after them that do not change during the
    // call.
    unsafe { a.store(t, d, buf, count) }
}
