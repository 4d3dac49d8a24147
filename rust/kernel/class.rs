// SPDX-License-Identifier: GPL-2.0

//! Device classes with class attributes: `/sys/class/<name>/<attribute>`.
//!
//! C header: [`include/linux/device/class.h`](srctree/include/linux/device/class.h)

use crate::{
    alloc::{flags::*, KBox, KVec},
    bindings,
    error::{code::*, to_result, Result},
    ffi::c_char,
    str::CStr,
    sysfs::SysfsBuf,
    types::Opaque,
};
use core::ptr::NonNull;

/// The `show` function of a [`ClassAttribute`].
pub type ClassShowFn<T> = fn(&T, &mut SysfsBuf<'_>) -> Result;

/// The `store` function of a [`ClassAttribute`].
pub type ClassStoreFn<T> = fn(&T, &[u8]) -> Result;

/// An attribute of a class, `/sys/class/<name>/<attribute>`: the C attribute and the Rust
/// callbacks it forwards to; see [`Class::register`].
///
/// Declare attributes in a `static` table. Each attribute's lockdep key (`attr.skey`, used since
/// `attr.key` is null) is then a static object of its own, so each gets a lock class of its own,
/// as C attributes do.
///
/// # Invariants
///
/// `attr`'s `show` and `store` are `show_callback::<T>` and `store_callback::<T>` (or null),
/// and its name is a static C string.
#[repr(C)]
pub struct ClassAttribute<T: Send + Sync + 'static> {
    attr: Opaque<bindings::class_attribute>,
    show: Option<ClassShowFn<T>>,
    store: Option<ClassStoreFn<T>>,
}

// SAFETY: the C side only reads the attribute (and takes its lockdep key's address); the Rust
// callbacks are plain functions.
unsafe impl<T: Send + Sync + 'static> Sync for ClassAttribute<T> {}

impl<T: Send + Sync + 'static> ClassAttribute<T> {
    /// An attribute with `mode`, `show` and `store`. A read of an attribute with no `show`, or a
    /// write of one with no `store`, fails with `EIO`.
    pub const fn new(
        name: &'static CStr,
        mode: u16,
        show: Option<ClassShowFn<T>>,
        store: Option<ClassStoreFn<T>>,
    ) -> Self {
        // SAFETY: all zeroes is a valid `class_attribute`: no callbacks, no lockdep key.
        let mut attr: bindings::class_attribute = unsafe { core::mem::zeroed() };
        attr.attr.name = name.as_char_ptr();
        attr.attr.mode = mode;
        if show.is_some() {
            attr.show = Some(show_callback::<T>);
        }
        if store.is_some() {
            attr.store = Some(store_callback::<T>);
        }
        // INVARIANT: the callbacks are ours and the name is static.
        ClassAttribute {
            attr: Opaque::new(attr),
            show,
            store,
        }
    }

    fn raw(&self) -> *mut bindings::attribute {
        // SAFETY: only the address of the `attribute` inside the `class_attribute` is taken.
        unsafe { core::ptr::addr_of_mut!((*self.attr.get()).attr) }
    }

    /// Returns the address of the lockdep key sysfs gives this attribute's active reference, or
    /// 0 without `CONFIG_DEBUG_LOCK_ALLOC`. Distinct attributes have distinct keys.
    pub fn lock_class_key(&self) -> usize {
        // SAFETY: `raw` points to the attribute inside `self`.
        unsafe { crate::sysfs::attribute_lock_class_key(self.raw()) }
    }
}

/// The C class and what it points to. `class` is the first field, so a `*const class` of ours is
/// a `*const Inner<T>`.
#[repr(C)]
struct Inner<T: Send + Sync + 'static> {
    class: bindings::class,
    ptrs: KVec<*mut bindings::attribute>,
    group: bindings::attribute_group,
    groups: [*const bindings::attribute_group; 2],
    data: T,
}

/// A registered device class with attributes and driver data `T`.
///
/// The class lives in heap memory that the driver core frees through the class's release
/// callback, which may run after [`Class`] is dropped (when the last reference to the class's
/// kobject goes); `T` is dropped then.
///
/// # Invariants
///
/// `inner` points to an `Inner<T>` whose `class` is registered; it stays valid until the class's
/// release callback, which cannot run before `drop` unregisters the class.
pub struct Class<T: Send + Sync + 'static> {
    inner: NonNull<Inner<T>>,
}

// SAFETY: the class may be unregistered from any thread; `T` is `Send + Sync`.
unsafe impl<T: Send + Sync> Send for Class<T> {}

// SAFETY: `&Class` only gives `&T`, and `T` is `Sync`.
unsafe impl<T: Send + Sync> Sync for Class<T> {}

/// # Safety
///
/// `class` must be the `class` field of a live `Inner<T>`.
unsafe fn inner<'a, T: Send + Sync + 'static>(class: *const bindings::class) -> &'a Inner<T> {
    // SAFETY: `class` is the first field of a `#[repr(C)]` `Inner<T>`.
    unsafe { &*class.cast::<Inner<T>>() }
}

/// # Safety
///
/// Called by sysfs with a class registered by [`Class::register`], one of its attributes and a
/// page-sized buffer.
unsafe extern "C" fn show_callback<T: Send + Sync + 'static>(
    class: *const bindings::class,
    attr: *const bindings::class_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: sysfs calls this on our class while the attribute exists, so before release.
    let inner = unsafe { inner::<T>(class) };
    // SAFETY: sysfs passes one of our static `ClassAttribute<T>`s, whose first field
    // (`repr(C)`) is the `class_attribute` (`Opaque` is transparent).
    let rust = unsafe { &*attr.cast::<ClassAttribute<T>>() };
    // SAFETY: sysfs gives show a page-sized buffer.
    let page = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), crate::page::PAGE_SIZE) };
    let mut out = SysfsBuf::new(page);
    match rust.show.map(|f| f(&inner.data, &mut out)) {
        Some(Ok(())) => out.len() as isize,
        Some(Err(e)) => e.to_errno() as isize,
        None => EIO.to_errno() as isize,
    }
}

/// # Safety
///
/// Called by sysfs with a class registered by [`Class::register`], one of its attributes and
/// `count` readable bytes.
unsafe extern "C" fn store_callback<T: Send + Sync + 'static>(
    class: *const bindings::class,
    attr: *const bindings::class_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: as in `show_callback`.
    let inner = unsafe { inner::<T>(class) };
    // SAFETY: as in `show_callback`.
    let rust = unsafe { &*attr.cast::<ClassAttribute<T>>() };
    // SAFETY: sysfs passes `count` readable bytes.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    match rust.store.map(|f| f(&inner.data, input)) {
        Some(Ok(())) => count as isize,
        Some(Err(e)) => e.to_errno() as isize,
        None => EIO.to_errno() as isize,
    }
}

/// # Safety
///
/// Called by the driver core once, when the last reference to a class registered by
/// [`Class::register`] is gone.
unsafe extern "C" fn release_callback<T: Send + Sync + 'static>(class: *const bindings::class) {
    // SAFETY: the driver core calls this once, when the class is gone; the memory came from
    // `KBox::into_raw` in `register`.
    drop(unsafe { KBox::from_raw(class.cast::<Inner<T>>().cast_mut()) });
}

impl<T: Send + Sync + 'static> Class<T> {
    /// Registers the class `name` with `attrs` (in `/sys/class/<name>/`) and `data`, which the
    /// attributes' callbacks receive.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::fmt::Write;
    /// use kernel::{c_str, class::{Class, ClassAttribute}};
    ///
    /// fn show(v: &u32, buf: &mut kernel::sysfs::SysfsBuf<'_>) -> Result {
    ///     writeln!(buf, "{v}").map_err(|_| EINVAL)
    /// }
    /// static ATTRS: [ClassAttribute<u32>; 1] =
    ///     [ClassAttribute::new(c_str!("answer"), 0o444, Some(show), None)];
    ///
    /// let class = Class::register(c_str!("rust-doc-class"), 42u32, &ATTRS)?;
    /// assert_eq!(*class.data(), 42);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn register(
        name: &'static CStr,
        data: T,
        attrs: &'static [ClassAttribute<T>],
    ) -> Result<Self> {
        let b = KBox::new(
            Inner {
                // SAFETY: all zeroes is a valid `class` (no callbacks, no groups).
                class: unsafe { core::mem::zeroed() },
                ptrs: crate::sysfs::attribute_pointers(attrs.iter().map(ClassAttribute::raw))?,
                // SAFETY: all zeroes is a valid `attribute_group`.
                group: unsafe { core::mem::zeroed() },
                groups: [core::ptr::null(); 2],
                data,
            },
            GFP_KERNEL,
        )?;
        let raw = KBox::into_raw(b);
        // SAFETY: `raw` is a valid, uniquely owned `Inner<T>`; heap memory does not move, so the
        // pointers into it stay valid.
        unsafe {
            (*raw).group.attrs = (*raw).ptrs.as_mut_ptr();
            (*raw).groups[0] = core::ptr::addr_of!((*raw).group);
            (*raw).class.name = name.as_char_ptr();
            (*raw).class.class_groups = (*raw).groups.as_ptr().cast_mut();
            (*raw).class.class_release = Some(release_callback::<T>);
        }
        // SAFETY: the class is fully set up and lives until its release callback.
        let ret = unsafe { bindings::class_register(core::ptr::addr_of!((*raw).class)) };
        if let Err(e) = to_result(ret) {
            // SAFETY: registration failed, so the driver core holds no reference: free it here.
            drop(unsafe { KBox::from_raw(raw) });
            return Err(e);
        }
        // INVARIANT: registered above.
        Ok(Class {
            // SAFETY: `into_raw` never returns null.
            inner: unsafe { NonNull::new_unchecked(raw) },
        })
    }

    /// Returns the driver data.
    pub fn data(&self) -> &T {
        // SAFETY: the class is registered, so `inner` is valid (type invariant).
        unsafe { &(*self.inner.as_ptr()).data }
    }
}

impl<T: Send + Sync + 'static> Drop for Class<T> {
    fn drop(&mut self) {
        // SAFETY: registered in `register`, unregistered once here. This removes the attributes,
        // waiting for running callbacks; the memory is freed by the release callback.
        unsafe { bindings::class_unregister(core::ptr::addr_of!((*self.inner.as_ptr()).class)) };
    }
}
