// SPDX-License-Identifier: GPL-2.0

//! Device classes with class attributes: `/sys/class/<name>/<attribute>`.
//!
//! A class's attributes are a static table of [`sysfs::Attribute<Class<T>>`](Attribute), whose
//! callbacks receive the class's data `T` (and `()` as context).
//!
//! C header: [`include/linux/device/class.h`](srctree/include/linux/device/class.h)

use crate::{
    alloc::{flags::*, KBox},
    bindings,
    error::{to_result, Result},
    ffi::c_char,
    str::CStr,
    sysfs::{Attribute, AttributeOwner, Group},
};
use core::{pin::Pin, ptr::NonNull};

/// The C class and what it points to. `class` is the first field, so a `*const class` of ours is
/// a `*const Inner<T>`.
#[repr(C)]
struct Inner<T: Send + Sync + 'static> {
    class: bindings::class,
    group: Pin<KBox<Group>>,
    data: T,
}

/// A registered device class with attributes and driver data `T`.
///
/// The class lives in heap memory that the driver core frees through the class's release
/// callback, which may run after [`Class`] is dropped (when the last reference to the class's
/// kobject goes); `T` is dropped then.
///
/// Dropping it unregisters the class, which waits for running attribute callbacks: it must not be
/// dropped from one of its own attribute callbacks, which would wait for itself.
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

// SAFETY: `class_attribute` is a `struct attribute` followed by `show` and `store` of these
// types; the callbacks below pass the class's data, which lives until the release callback, so
// for the duration of a sysfs callback.
unsafe impl<T: Send + Sync + 'static> AttributeOwner for Class<T> {
    type Data = T;
    type Context = ();
    type Raw = bindings::class_attribute;
    type CShow = unsafe extern "C" fn(
        *const bindings::class,
        *const bindings::class_attribute,
        *mut c_char,
    ) -> isize;
    type CStore = unsafe extern "C" fn(
        *const bindings::class,
        *const bindings::class_attribute,
        *const c_char,
        usize,
    ) -> isize;
    const C_SHOW: Self::CShow = show_callback::<T>;
    const C_STORE: Self::CStore = store_callback::<T>;
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
    // SAFETY: sysfs passes one of the static attributes the class was registered with.
    let a = unsafe { Attribute::<Class<T>>::from_raw(attr) };
    // SAFETY: sysfs passes a page-sized buffer.
    unsafe { a.show(&inner.data, &(), buf) }
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
    let a = unsafe { Attribute::<Class<T>>::from_raw(attr) };
    // SAFETY: sysfs passes `count` bytes that do not change during the call.
    unsafe { a.store(&inner.data, &(), buf, count) }
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
    /// use kernel::{c_str, class::Class, sysfs::Attribute};
    ///
    /// fn show(v: &u32, _: &(), buf: &mut kernel::sysfs::SysfsBuf<'_>) -> Result {
    ///     writeln!(buf, "{v}").map_err(|_| EINVAL)
    /// }
    /// static ATTRS: [Attribute<Class<u32>>; 1] = [Attribute::ro(c_str!("answer"), show)];
    ///
    /// let class = Class::register(c_str!("rust-doc-class"), 42u32, &ATTRS)?;
    /// assert_eq!(*class.data(), 42);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn register(
        name: &'static CStr,
        data: T,
        attrs: &'static [Attribute<Class<T>>],
    ) -> Result<Self> {
        let group = Group::new(attrs)?;
        let b = KBox::new(
            Inner {
                // SAFETY: all zeroes is a valid `class` (no callbacks, no groups).
                class: unsafe { core::mem::zeroed() },
                group,
                data,
            },
            GFP_KERNEL,
        )?;
        let raw = KBox::into_raw(b);
        // SAFETY: `raw` is a valid, uniquely owned `Inner<T>`; the group's list lives as long as
        // it, in its own pinned box.
        unsafe {
            (*raw).class.name = name.as_char_ptr();
            (*raw).class.class_groups = (*raw).group.groups();
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
