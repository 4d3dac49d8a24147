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
};
use core::ptr::NonNull;

/// An attribute of a class; see [`Class::register`].
pub struct ClassAttribute<T> {
    name: &'static CStr,
    mode: u16,
    show: Option<fn(&T, &mut SysfsBuf<'_>) -> Result>,
    store: Option<fn(&T, &[u8]) -> Result>,
}

impl<T> ClassAttribute<T> {
    /// An attribute with `mode`, `show` and `store`. A read of an attribute with no `show`, or a
    /// write of one with no `store`, fails with `EIO`.
    pub const fn new(
        name: &'static CStr,
        mode: u16,
        show: Option<fn(&T, &mut SysfsBuf<'_>) -> Result>,
        store: Option<fn(&T, &[u8]) -> Result>,
    ) -> Self {
        ClassAttribute {
            name,
            mode,
            show,
            store,
        }
    }
}

#[repr(C)]
struct ClassAttr<T: 'static> {
    attr: bindings::class_attribute,
    rust: &'static ClassAttribute<T>,
}

/// The C class and what it points to. `class` is the first field, so a `*const class` of ours is
/// a `*const Inner<T>`.
#[repr(C)]
struct Inner<T: 'static> {
    class: bindings::class,
    attrs: KVec<ClassAttr<T>>,
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
unsafe fn inner<'a, T>(class: *const bindings::class) -> &'a Inner<T> {
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
    // SAFETY: the attribute is the first field of one of our `ClassAttr<T>`s.
    let rust = unsafe { (*attr.cast::<ClassAttr<T>>()).rust };
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
    let rust = unsafe { (*attr.cast::<ClassAttr<T>>()).rust };
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
        let mut b = KBox::new(
            Inner {
                // SAFETY: all zeroes is a valid `class` (no callbacks, no groups).
                class: unsafe { core::mem::zeroed() },
                attrs: KVec::with_capacity(attrs.len(), GFP_KERNEL)?,
                ptrs: KVec::new(),
                // SAFETY: all zeroes is a valid `attribute_group`.
                group: unsafe { core::mem::zeroed() },
                groups: [core::ptr::null(); 2],
                data,
            },
            GFP_KERNEL,
        )?;
        for a in attrs {
            // SAFETY: all zeroes is a valid `class_attribute`.
            let mut attr: bindings::class_attribute = unsafe { core::mem::zeroed() };
            crate::sysfs::init_attribute(&mut attr.attr, a.name, a.mode);
            attr.show = a.show.map(|_| show_callback::<T> as _);
            attr.store = a.store.map(|_| store_callback::<T> as _);
            b.attrs.push(ClassAttr { attr, rust: a }, GFP_KERNEL)?;
        }
        // `attrs` has its final size: the pointers into it stay valid.
        b.ptrs = crate::sysfs::attribute_pointers(
            b.attrs
                .iter_mut()
                .map(|a| core::ptr::addr_of_mut!(a.attr.attr)),
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
