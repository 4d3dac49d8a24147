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
    init::InPlaceInit,
    new_condvar, new_spinlock, pin_init,
    str::CStr,
    sync::{Arc, CondVar, SpinLock},
    sysfs::{Attribute, AttributeOwner, Group},
};
use core::{pin::Pin, ptr::NonNull};
use macros::pin_data;

/// Whether a class has been released, shared by the [`Class`] (which waits for it) and the C
/// class (whose release callback signals it).
#[pin_data]
struct Released {
    #[pin]
    done: SpinLock<bool>,
    #[pin]
    cond: CondVar,
}

impl Released {
    fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Released {
                done <- new_spinlock!(false, "Class::released"),
                cond <- new_condvar!("Class::released"),
            }),
            GFP_KERNEL,
        )
    }

    /// Records that the class was released, and wakes the waiter.
    fn complete(&self) {
        *self.done.lock() = true;
        self.cond.notify_all();
    }

    /// Waits until [`Released::complete`] has been called.
    ///
    /// Context: process context; sleeps.
    fn wait(&self) {
        let mut done = self.done.lock();
        while !*done {
            self.cond.wait(&mut done);
        }
    }
}

/// The start of every class [`Class::register`] makes, whatever its `T`: the C class, and what
/// the release callback, which is not generic, needs. `class` is its first field, and it the
/// first field of `Inner<T>`, so a `*const class` of ours is a `*const Head` and a
/// `*const Inner<T>`.
#[repr(C)]
struct Head {
    class: bindings::class,
    /// `free::<T>`, which frees the `Inner<T>` this heads.
    free: unsafe fn(*mut Head),
    /// The [`Class`]'s, which the release callback completes once `free` has returned.
    released: Arc<Released>,
}

/// The C class and what it points to.
#[repr(C)]
struct Inner<T: Send + Sync + 'static> {
    head: Head,
    group: Pin<KBox<Group>>,
    data: T,
}

/// A registered device class with attributes and driver data `T`.
///
/// The class lives in heap memory that the driver core frees through the class's release
/// callback, when the last reference to the class's kobject goes; `T` is dropped then.
///
/// Dropping it unregisters the class, which waits for running attribute callbacks: it must not be
/// dropped from one of its own attribute callbacks, which would wait for itself. The drop then
/// waits for the release: other references to the class (taken by `class_to_subsys()` callers,
/// such as the driver core's class iterators, or held back by `CONFIG_DEBUG_KOBJECT_RELEASE`) may
/// outlive `class_unregister()`, and the release runs the code of the module that registered the
/// class (it drops `T`), which must still be loaded: a module's `Class` is dropped before the
/// module's memory goes. (A bio-based `GenDisk` instead pins a live module and returns, since user
/// space can hold a disk open for ever; nothing holds a class for long, so the drop always waits,
/// and need not know its module.) Context: process context; sleeps.
///
/// A `Class` of a module must not be leaked: a leaked class is never unregistered, and would
/// outlive the module's unloading, as any leaked registration would.
///
/// # Invariants
///
/// `inner` points to an `Inner<T>` whose `head.class` is registered, whose `head.free` is
/// `free::<T>` and whose `head.released` is `released`; it stays valid until the class's release
/// callback, which cannot run before `drop` unregisters the class, and which completes `released`
/// once it has freed the `Inner<T>`.
pub struct Class<T: Send + Sync + 'static> {
    inner: NonNull<Inner<T>>,
    released: Arc<Released>,
}

// SAFETY: the class may be unregistered from any thread; `T` is `Send + Sync`.
unsafe impl<T: Send + Sync> Send for Class<T> {}

// SAFETY: `&Class` only gives `&T`, and `T` is `Sync`.
unsafe impl<T: Send + Sync> Sync for Class<T> {}

/// # Safety
///
/// `class` must be the `class` of the `head` of a live `Inner<T>`.
unsafe fn inner<'a, T: Send + Sync + 'static>(class: *const bindings::class) -> &'a Inner<T> {
    // SAFETY: `class` is the first field of a `#[repr(C)]` `Head`, which is the first field of a
    // `#[repr(C)]` `Inner<T>`, live by the caller's promise.
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
/// `count` readable bytes followed by a `NUL`.
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
    // SAFETY: sysfs passes `count` bytes and a `NUL` after them that do not change during the
    // call.
    unsafe { a.store(&inner.data, &(), buf, count) }
}

/// Frees the `Inner<T>` that `head` starts: its group and its `T`.
///
/// # Safety
///
/// `head` must be the `head` of an `Inner<T>` made by [`Class::register`] (from
/// `KBox::into_raw`) that nothing uses any more, and is not used after this.
unsafe fn free<T: Send + Sync + 'static>(head: *mut Head) {
    // SAFETY: `head` is the first field of a `#[repr(C)]` `Inner<T>` that came from
    // `KBox::into_raw`, and nothing uses it, by the caller's promise.
    drop(unsafe { KBox::from_raw(head.cast::<Inner<T>>()) });
}

/// The `class_release` of every class [`Class::register`] makes.
///
/// It is not generic, and `#[inline(never)]` so that it is never copied into a module: it is
/// built-in code (the kernel crate's). It calls the `T`-specific `free` (the module's code, which
/// the waiting [`Class::drop`] keeps loaded) and only then lets the drop return; what runs after
/// that, until this function returns, is built-in code on memory it holds a reference to.
///
/// # Safety
///
/// Called by the driver core once, when the last reference to a class registered by
/// [`Class::register`] is gone.
#[inline(never)]
unsafe extern "C" fn release_callback(class: *const bindings::class) {
    let head = class.cast::<Head>().cast_mut();
    // SAFETY: `class` is the first field of a `#[repr(C)]` `Head` (see `Head`), valid until it is
    // freed below.
    let released = unsafe { (*head).released.clone() };
    // SAFETY: the class's last reference is gone, so nothing uses its `Inner<T>` any more, and
    // `free` is that `Inner<T>`'s `free::<T>` (type invariant of `Class`); `head` is not used
    // after the call.
    unsafe { ((*head).free)(head) };
    released.complete();
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
        let released = Released::new()?;
        let group = Group::new(attrs)?;
        let b = KBox::new(
            Inner {
                head: Head {
                    // SAFETY: all zeroes is a valid `class` (no callbacks, no groups).
                    class: unsafe { core::mem::zeroed() },
                    free: free::<T>,
                    released: released.clone(),
                },
                group,
                data,
            },
            GFP_KERNEL,
        )?;
        let raw = KBox::into_raw(b);
        // SAFETY: `raw` is a valid, uniquely owned `Inner<T>`; the group's list lives as long as
        // it, in its own pinned box.
        unsafe {
            (*raw).head.class.name = name.as_char_ptr();
            (*raw).head.class.class_groups = (*raw).group.groups();
            (*raw).head.class.class_release = Some(release_callback);
        }
        // SAFETY: the class is fully set up and lives until its release callback.
        let ret = unsafe { bindings::class_register(core::ptr::addr_of!((*raw).head.class)) };
        if let Err(e) = to_result(ret) {
            // SAFETY: registration failed, so the driver core holds no reference and never calls
            // the release callback: free it here.
            drop(unsafe { KBox::from_raw(raw) });
            return Err(e);
        }
        // INVARIANT: registered above, with `free::<T>` and `released`.
        Ok(Class {
            // SAFETY: `into_raw` never returns null.
            inner: unsafe { NonNull::new_unchecked(raw) },
            released,
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
        unsafe {
            bindings::class_unregister(core::ptr::addr_of!((*self.inner.as_ptr()).head.class))
        };
        // Other references to the class may still be held: wait until the release callback has
        // freed it and dropped `T` (see `Class`). `released` is ours, so it outlives the wait.
        self.released.wait();
    }
}
