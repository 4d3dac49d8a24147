// SPDX-License-Identifier: GPL-2.0

//! debugfs: directories and read-only files of records, formatted when read.
//!
//! A [`Dir`] is a debugfs directory; a [`File`] is a read-only file in one, whose contents are
//! the records of a [`Records`] object, one position at a time, through `seq_file`: a file of
//! a million records never needs a buffer of all of them, and a reader may seek.
//!
//! As debugfs wants, failures are not errors: a directory or file that could not be created
//! (debugfs disabled at boot, no memory) is simply absent, and everything below it too.
//!
//! # Lifetimes
//!
//! A directory is removed (recursively) when the last [`Dir`] or [`File`] below it is dropped:
//! each entry holds a reference to its parent. Dropping a [`File`] removes it with
//! `debugfs_remove()`, which waits for the reads in progress and makes later ones fail, before
//! it drops the file's data. The `file_operations` of a file are a constant per record type,
//! whose `owner` is the record type's module ([`Records::OWNER`], checked when the file is
//! created), so an open file keeps a loadable module in memory until it is closed.
//!
//! C headers: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h),
//! [`include/linux/seq_file.h`](srctree/include/linux/seq_file.h)

use crate::{
    alloc::KBox,
    bindings,
    error::{code::*, Result},
    ffi::{c_int, c_void},
    prelude::*,
    str::CStr,
    sync::Arc,
    ThisModule,
};
use core::{fmt, marker::PhantomData};

/// A read-only debugfs file's contents: records at positions `0..count`, each formatted when read.
///
/// # Examples
///
/// ```
/// use core::fmt;
/// use kernel::{c_str, debugfs::{Dir, Records}, prelude::*, sync::Arc};
///
/// struct Squares;
///
/// // SAFETY: a null module is what built-in code's `THIS_MODULE` holds.
/// static BUILT_IN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };
///
/// impl Records for Squares {
///     const OWNER: &'static ThisModule = &BUILT_IN;
///
///     fn count(&self) -> Result<u64> {
///         Ok(4)
///     }
///
///     fn write(&self, pos: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         writeln!(f, "{pos} {}", pos * pos)
///     }
/// }
///
/// let dir = Dir::new(c_str!("rust_debugfs_doc"));
/// let file = dir.records_file(c_str!("squares"), Arc::new(Squares, GFP_KERNEL)?)?;
/// drop(dir); // The directory stays while the file is in it.
/// drop(file);
/// # Ok::<(), Error>(())
/// ```
pub trait Records: Send + Sync + 'static {
    /// The module of the code that implements this trait: `&THIS_MODULE`, which
    /// [`module!`](macros::module) defines. An open file pins it.
    const OWNER: &'static ThisModule;

    /// Returns the number of records now; an error fails the read with it.
    fn count(&self) -> Result<u64>;

    /// Writes record `pos`, which may be nothing. `pos` may be past the end if the count
    /// shrank since it was read.
    fn write(&self, pos: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// A debugfs entry (directory or file), removed when dropped; it keeps its parent.
///
/// # Invariants
///
/// `dentry` is what `debugfs_create_dir()` or `debugfs_create_file()` returned (a dentry, or an
/// error pointer), under `parent`'s dentry; it is removed only by `drop`.
struct Entry {
    dentry: *mut bindings::dentry,
    _parent: Option<Arc<Entry>>,
}

// SAFETY: debugfs entries may be created and removed from any thread.
unsafe impl Send for Entry {}
// SAFETY: `&Entry` only passes the dentry to debugfs, which synchronises internally.
unsafe impl Sync for Entry {}

impl Drop for Entry {
    fn drop(&mut self) {
        // SAFETY: the dentry (or error pointer, which debugfs ignores) came from debugfs and is
        // removed once, here; its children hold references to `self`, so they are gone.
        unsafe { bindings::debugfs_remove(self.dentry) };
    }
}

/// A debugfs directory; removed when it and every entry below it are dropped.
///
/// A directory that could not be created (no memory for its handle) is absent, and so is
/// everything created in it.
#[derive(Clone)]
pub struct Dir(Option<Arc<Entry>>);

impl Dir {
    /// Creates directory `name` at debugfs's root.
    ///
    /// Context: process context; sleeps.
    pub fn new(name: &CStr) -> Dir {
        Self::create(name, None)
    }

    /// Creates directory `name` in `self`.
    ///
    /// Context: process context; sleeps.
    pub fn subdir(&self, name: &CStr) -> Dir {
        match &self.0 {
            Some(parent) => Self::create(name, Some(parent)),
            None => Dir(None),
        }
    }

    /// Creates directory `name` in `parent`, or at the root.
    fn create(name: &CStr, parent: Option<&Arc<Entry>>) -> Dir {
        let p = parent.map_or(core::ptr::null_mut(), |p| p.dentry);
        // SAFETY: `name` is a valid string; `p` is null or a debugfs dentry (or error pointer,
        // which makes debugfs fail the call) kept alive by `parent`.
        let dentry = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), p) };
        // INVARIANT: `dentry` came from `debugfs_create_dir()` under `parent`. If the `Arc`
        // cannot be allocated, the entry is dropped, which removes the directory, once.
        let entry = Entry {
            dentry,
            _parent: parent.cloned(),
        };
        Dir(Arc::new(entry, GFP_KERNEL).ok())
    }

    /// Creates `name` in `self`, a read-only (0400) file of `data`'s records.
    ///
    /// Fails with [`EINVAL`] if [`Records::OWNER`] is not the module `T`'s code is in (null for
    /// built-in code). A file debugfs could not create, or in an absent directory, is absent,
    /// not an error.
    ///
    /// Context: process context; sleeps.
    pub fn records_file<T: Records>(&self, name: &CStr, data: Arc<T>) -> Result<File<T>> {
        let fops: &'static bindings::file_operations = &FileVtable::<T>::FOPS;
        // SAFETY: FFI call without preconditions; the result is only compared.
        if unsafe { bindings::module_of_address(core::ptr::from_ref(fops).cast()) }
            != T::OWNER.as_ptr()
        {
            return Err(EINVAL);
        }
        let Some(parent) = &self.0 else {
            // INVARIANT: no file.
            return Ok(File {
                _entry: None,
                _data: data,
            });
        };
        // SAFETY: `name` is a valid string; `parent.dentry` is a debugfs dentry (or error
        // pointer) kept alive by `parent`; `fops` is static; the private data is `data`'s `T`,
        // which the returned `File` keeps alive until it has removed the file.
        let dentry = unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                0o400,
                parent.dentry,
                core::ptr::from_ref::<T>(&data).cast_mut().cast(),
                fops,
            )
        };
        // INVARIANT: `dentry` came from `debugfs_create_file()` under `parent`, with `data`'s
        // `T`; the `File` owns its only handle. If the box cannot be allocated, the entry is
        // dropped (removing the file) before `data` is.
        let entry = KBox::new(
            Entry {
                dentry,
                _parent: Some(parent.clone()),
            },
            GFP_KERNEL,
        )?;
        Ok(File {
            _entry: Some(entry),
            _data: data,
        })
    }
}

/// A read-only debugfs file of records; removed when dropped.
///
/// It must not be dropped from its own [`Records`] callbacks: the removal waits for them. In a
/// loadable module it must be dropped before the module is unloaded (a leaked file would call
/// the module's code after it is gone, as any leaked registration would).
///
/// # Invariants
///
/// `_entry`, if any, is the only handle of a file created with `FileVtable::<T>::FOPS` and
/// `_data`'s `T` as its private data.
pub struct File<T: Records> {
    // Dropped first: the file is removed, and its reads are over, before `_data` goes.
    _entry: Option<KBox<Entry>>,
    _data: Arc<T>,
}

/// The `file_operations` and `seq_operations` of files of `T`: constants, in static memory.
struct FileVtable<T>(PhantomData<T>);

impl<T: Records> FileVtable<T> {
    const SEQ_OPS: bindings::seq_operations = bindings::seq_operations {
        start: Some(seq_start::<T>),
        next: Some(seq_next::<T>),
        stop: Some(seq_stop),
        show: Some(seq_show::<T>),
    };

    const FOPS: bindings::file_operations = bindings::file_operations {
        owner: T::OWNER.0,
        open: Some(open_callback::<T>),
        read: Some(bindings::seq_read),
        llseek: Some(bindings::seq_lseek),
        release: Some(bindings::seq_release),
        // SAFETY: all zeroes is a valid `file_operations` (no other callbacks).
        ..unsafe { core::mem::zeroed() }
    };
}

/// # Safety
///
/// Called by debugfs's open of a file of `FileVtable::<T>::FOPS`, whose `i_private` is a `T`
/// alive while the file exists (and debugfs keeps it existing during the call).
unsafe extern "C" fn open_callback<T: Records>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    let ops: &'static bindings::seq_operations = &FileVtable::<T>::SEQ_OPS;
    // SAFETY: `file` is being opened; `ops` is static.
    let ret = unsafe { bindings::seq_open(file, ops) };
    if ret == 0 {
        // SAFETY: `seq_open()` succeeded, so `private_data` is the file's `seq_file`, which
        // nothing else uses yet; `i_private` is the file's `T`.
        unsafe {
            let m = (*file).private_data.cast::<bindings::seq_file>();
            (*m).private = (*inode).i_private;
        }
    }
    ret
}

/// Returns the records of `m`.
///
/// # Safety
///
/// `m` must be the `seq_file` of a file of `FileVtable::<T>::FOPS`, in one of its callbacks,
/// which debugfs runs only while the file exists.
unsafe fn records<'a, T: Records>(m: *mut bindings::seq_file) -> &'a T {
    // SAFETY: `open_callback` set `private` to the file's `T`, which lives while the file does
    // (the `File` drops it after removing the file, which waits for the callbacks).
    unsafe { &*(*m).private.cast::<T>() }
}

/// The token of position `pos`: a non-null pointer that is not an error pointer, from which
/// `seq_show` recovers the position; `None` if `pos` has none (it is then past the file's end).
fn token(pos: i64) -> Option<*mut c_void> {
    let p = usize::try_from(pos)
        .ok()
        .filter(|&p| p < usize::MAX - bindings::MAX_ERRNO as usize - 1)?;
    Some(core::ptr::null_mut::<u8>().wrapping_add(p + 1).cast())
}

/// # Safety
///
/// Called by `seq_read()` with a file of `FileVtable::<T>::FOPS` and its position.
unsafe extern "C" fn seq_start<T: Records>(
    m: *mut bindings::seq_file,
    pos: *mut i64,
) -> *mut c_void {
    // SAFETY: by the caller's promise.
    let t = unsafe { records::<T>(m) };
    // SAFETY: `pos` is valid.
    let p = unsafe { *pos };
    match t.count() {
        Ok(n) if p >= 0 && (p as u64) < n => token(p).unwrap_or(core::ptr::null_mut()),
        Ok(_) => core::ptr::null_mut(),
        Err(e) => e.to_ptr(),
    }
}

/// # Safety
///
/// As [`seq_start`].
unsafe extern "C" fn seq_next<T: Records>(
    m: *mut bindings::seq_file,
    _v: *mut c_void,
    pos: *mut i64,
) -> *mut c_void {
    // SAFETY: `pos` is valid.
    unsafe { *pos = (*pos).saturating_add(1) };
    // `seq_read()` calls this once per record without rescheduling, and records may be empty:
    // a file of many empty records would otherwise hold the CPU for the whole read. It runs
    // under the `seq_file`'s mutex only, so it may sleep.
    // SAFETY: FFI call without preconditions in sleepable context.
    unsafe { bindings::cond_resched() };
    // SAFETY: as for `seq_start`.
    unsafe { seq_start::<T>(m, pos) }
}

/// # Safety
///
/// None: it does nothing (called by `seq_read()` at the end of a batch of records).
unsafe extern "C" fn seq_stop(_m: *mut bindings::seq_file, _v: *mut c_void) {}

/// Formats record `pos` of `t`.
struct Record<'a, T>(&'a T, u64);

impl<T: Records> fmt::Display for Record<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write(self.1, f)
    }
}

/// # Safety
///
/// As [`seq_start`], with `v` a token `seq_start` or `seq_next` returned.
unsafe extern "C" fn seq_show<T: Records>(m: *mut bindings::seq_file, v: *mut c_void) -> c_int {
    // SAFETY: by the caller's promise.
    let t = unsafe { records::<T>(m) };
    let pos = (v as usize as u64).wrapping_sub(1);
    let args = format_args!("{}", Record(t, pos));
    // SAFETY: `%pA` formats the `fmt::Arguments` it is given, which live for the call; the
    // format string is a valid C string.
    unsafe {
        bindings::seq_printf(
            m,
            c"%pA".as_ptr().cast(),
            core::ptr::from_ref(&args).cast::<c_void>(),
        )
    };
    0
}
