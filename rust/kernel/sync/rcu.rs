// SPDX-License-Identifier: GPL-2.0

//! RCU: read-side critical sections, and an optional [`Arc`] that readers follow under one
//! without touching its reference count.
//!
//! C header: [`include/linux/rcupdate.h`](srctree/include/linux/rcupdate.h)

use crate::{bindings, sync::Arc};
use core::{
    marker::PhantomData,
    ptr,
    sync::atomic::{AtomicPtr, Ordering},
};

/// Evidence that the RCU read side lock is held on the current thread/CPU.
///
/// The type is neither `Send` nor `Sync`: the read side lock is per thread/CPU. Sleeping while a
/// guard lives is a bug, as in C: without `CONFIG_PREEMPT_RCU` it ends the read-side critical
/// section, so that references obtained under the guard may be freed (`CONFIG_DEBUG_ATOMIC_SLEEP`
/// reports it). [`RcuArc::replace`], which sleeps, checks that it is not called under a guard.
///
/// # Invariants
///
/// The current task is in an RCU read-side critical section while instances of this guard exist:
/// one the guard entered, or, for the guard that [`assume_read_side`] lends, the caller's own.
/// Only guards made by [`Guard::new`] are ever dropped: the lent one lives in a
/// [`ManuallyDrop`](core::mem::ManuallyDrop) that only lends it by reference.
pub struct Guard(PhantomData<*mut ()>);

impl Guard {
    /// Acquires the RCU read side lock and returns a guard.
    #[inline]
    pub fn new() -> Self {
        raw_read_lock();
        // INVARIANT: The RCU read side lock was just acquired above.
        Self(PhantomData)
    }

    /// Explicitly releases the RCU read side lock.
    #[inline]
    pub fn unlock(self) {}
}

impl Default for Guard {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, a guard that is dropped was made by `Guard::new`, which
        // took the RCU read side lock: it is held, and may be released.
        unsafe { raw_read_unlock() };
    }
}

// `rcu_read_lock()` and `rcu_read_unlock()` are C inline functions, reached through helpers. With
// `CONFIG_PREEMPT_RCU`, and without lockdep's RCU annotations, each is exactly one call of the
// exported `__rcu_read_lock()` / `__rcu_read_unlock()`, which are then called directly: the
// helper would add a call frame to read-side sections that are whole hot paths. Without
// `CONFIG_DEBUG_LOCK_ALLOC`, `rcu_lock_acquire()`/`rcu_lock_release()` are empty;
// `RCU_LOCKDEP_WARN()` needs `CONFIG_PROVE_RCU` (which `CONFIG_PROVE_LOCKING`, selecting
// `CONFIG_DEBUG_LOCK_ALLOC`, implies; spelled out here anyway); `__acquire()`/`__release()` exist
// for sparse only. Re-check this when include/linux/rcupdate.h changes.
#[cfg(all(
    CONFIG_PREEMPT_RCU,
    not(CONFIG_DEBUG_LOCK_ALLOC),
    not(CONFIG_PROVE_RCU)
))]
use bindings::{__rcu_read_lock as ffi_read_lock, __rcu_read_unlock as ffi_read_unlock};
#[cfg(not(all(
    CONFIG_PREEMPT_RCU,
    not(CONFIG_DEBUG_LOCK_ALLOC),
    not(CONFIG_PROVE_RCU)
)))]
use bindings::{rcu_read_lock as ffi_read_lock, rcu_read_unlock as ffi_read_unlock};

/// `rcu_read_lock()`.
#[inline(always)]
fn raw_read_lock() {
    // SAFETY: An FFI call with no additional requirements.
    unsafe { ffi_read_lock() };
}

/// `rcu_read_unlock()`.
///
/// # Safety
///
/// The current thread/CPU must hold the RCU read side lock, which [`raw_read_lock`] took.
#[inline(always)]
unsafe fn raw_read_unlock() {
    // SAFETY: The caller holds the read side lock.
    unsafe { ffi_read_unlock() };
}

/// Acquires the RCU read side lock.
#[inline]
pub fn read_lock() -> Guard {
    Guard::new()
}

/// Runs `f` with a [`Guard`] for the RCU read-side critical section that the caller is already
/// in, without entering another one.
///
/// Since the RCU flavours were consolidated, a region with a spinlock held, or with preemption,
/// bottom halves or interrupts disabled, is an RCU read-side critical section as much as one
/// between `rcu_read_lock()` and `rcu_read_unlock()` (on `CONFIG_PREEMPT_RT` a spinlock takes
/// `rcu_read_lock()` itself). A C callback documented to run under a spinlock can so lend its
/// callee a guard that costs nothing, where [`read_lock`] would cost two calls. `f` gets the
/// guard by reference only: it can neither drop it nor let it, or anything borrowed from it,
/// outlive the call.
///
/// [`RcuArc::replace`] still sees the critical section and refuses to wait in it: with
/// `CONFIG_PREEMPT_COUNT` through `!preemptible()` or, on `CONFIG_PREEMPT_RT`, where a spinlock
/// region is preemptible, through `rcu_preempt_depth()`; without `CONFIG_PREEMPT_COUNT` (and so
/// without `CONFIG_PREEMPT_RCU`) this function enters a read-side critical section of its own,
/// which `replace` counts, and only there costs a call. With `CONFIG_PROVE_RCU` it checks the
/// caller's claim (`rcu_read_lock_any_held()`) and warns once if it is false.
///
/// The lent guard proves a read-side critical section of any kind, which is what
/// [`RcuArc::get`] needs; it does not make `rcu_read_lock_held()` true, so it must not be taken as
/// evidence for C code that checks that (such as `rcu_dereference()` under `CONFIG_PROVE_RCU`).
///
/// # Safety
///
/// The current task must be in an RCU read-side critical section (a spinlock held, preemption,
/// bottom halves or interrupts disabled, or `rcu_read_lock()` held), on a CPU that RCU watches
/// (not in the idle loop nor in CPU bring-up or tear-down), from the call until `f` returns.
///
/// # Examples
///
/// ```
/// use kernel::sync::{new_spinlock, rcu::{self, RcuArc}, Arc};
///
/// let cell = RcuArc::new(Some(Arc::new(7u32, GFP_KERNEL)?));
/// let lock = KBox::pin_init(new_spinlock!(()), GFP_KERNEL)?;
/// let held = lock.lock();
/// // SAFETY: `held` keeps the spinlock, and so the read-side critical section, until the end.
/// let seven = unsafe {
///     rcu::assume_read_side(|guard| {
///         let v = cell.get(guard).copied();
///         // The critical section is seen: `replace` leaks rather than wait in it.
///         assert!(cell.replace(None).is_none());
///         v
///     })
/// };
/// drop(held);
/// assert_eq!(seven, Some(7));
/// assert!(cell.get_arc().is_none());
/// # Ok::<(), Error>(())
/// ```
#[inline(always)]
pub unsafe fn assume_read_side<R>(f: impl FnOnce(&Guard) -> R) -> R {
    #[cfg(CONFIG_PREEMPT_COUNT)]
    {
        #[cfg(CONFIG_PROVE_RCU)]
        // SAFETY: an FFI call with no requirements.
        unsafe {
            bindings::rcu_check_any_held()
        };
        // INVARIANT: the caller is in a read-side critical section until `f` returns, and the
        // guard, never dropped (so never unlocked), is gone when `f` returns.
        let guard = core::mem::ManuallyDrop::new(Guard(PhantomData));
        f(&guard)
    }
    #[cfg(not(CONFIG_PREEMPT_COUNT))]
    {
        f(&Guard::new())
    }
}

/// An optional [`Arc<T>`] that readers reach under the RCU read side lock, without taking a
/// reference, and that writers replace.
///
/// [`get`](Self::get) is one load: the reference it returns lives as long as the reader's
/// [`Guard`]. [`replace`](Self::replace) waits for an RCU grace period before it hands the
/// previous `Arc` back, so no reader can still be using it when its caller drops it; called
/// where it cannot wait (under a guard, or in atomic context that it can detect), it warns and
/// leaks the previous value instead. This is the C pattern of `rcu_dereference()` on the read
/// side and `rcu_replace_pointer()` followed by `synchronize_rcu()` on the update side, with the
/// freeing left to the `Arc`.
///
/// # Invariants
///
/// `ptr` is null or a pointer returned by [`Arc::into_raw`] whose reference this object owns. A
/// pointer that [`replace`](Self::replace) took out of `ptr` keeps its reference until an RCU
/// grace period has elapsed since it was taken out, or forever.
///
/// # Examples
///
/// ```
/// use kernel::sync::{rcu::{self, RcuArc}, Arc};
///
/// let cell = RcuArc::new(Some(Arc::new(1u32, GFP_KERNEL)?));
/// {
///     let guard = rcu::read_lock();
///     assert_eq!(cell.get(&guard), Some(&1));
/// }
/// let old = cell.replace(Some(Arc::new(2u32, GFP_KERNEL)?));
/// assert_eq!(old.as_deref(), Some(&1));
/// assert_eq!(cell.get_arc().as_deref(), Some(&2));
/// assert_eq!(cell.replace(None).as_deref(), Some(&2));
/// assert!(cell.get(&rcu::read_lock()).is_none());
///
/// // Under a guard `replace` cannot wait for readers, this thread among them: it leaks the
/// // previous value rather than free it under the reference.
/// let cell = RcuArc::new(Some(Arc::new(3u32, GFP_KERNEL)?));
/// let guard = rcu::read_lock();
/// let three = cell.get(&guard).ok_or(EINVAL)?;
/// assert!(cell.replace(None).is_none());
/// assert_eq!(*three, 3);
/// drop(guard);
/// # Ok::<(), Error>(())
/// ```
pub struct RcuArc<T: Send + Sync> {
    ptr: AtomicPtr<T>,
    _owns: PhantomData<Arc<T>>,
}

// SAFETY: `RcuArc<T>` owns an `Arc<T>`, which may be sent to another thread since `T` is
// `Send + Sync`.
unsafe impl<T: Send + Sync> Send for RcuArc<T> {}

// SAFETY: Through `&RcuArc<T>` other threads get `&T` (fine, `T: Sync`) and swap `Arc<T>`s in and
// out with atomic operations (fine, `Arc<T>` is `Send` for `T: Send + Sync`).
unsafe impl<T: Send + Sync> Sync for RcuArc<T> {}

impl<T: Send + Sync> RcuArc<T> {
    /// Creates a new `RcuArc` holding `value`.
    pub fn new(value: Option<Arc<T>>) -> Self {
        // INVARIANT: the pointer comes from `Arc::into_raw` (or is null), and its reference moves
        // into the new object.
        Self {
            ptr: AtomicPtr::new(Self::into_ptr(value)),
            _owns: PhantomData,
        }
    }

    fn into_ptr(value: Option<Arc<T>>) -> *mut T {
        value.map_or(ptr::null_mut(), |a| Arc::into_raw(a).cast_mut())
    }

    /// Returns the value now held, for as long as `guard` holds the RCU read side lock.
    ///
    /// A [`replace`](Self::replace) that runs meanwhile does not affect the value returned: it
    /// stays valid until `guard` is dropped.
    #[inline]
    pub fn get<'a>(&'a self, _guard: &'a Guard) -> Option<&'a T> {
        // Acquire: pairs with the release of `replace`, so the new value's initialisation is
        // visible, as `rcu_dereference()` orders it.
        let p = self.ptr.load(Ordering::Acquire);
        // By the type invariants `p` is null or comes from `Arc::into_raw`, and its reference is
        // owned by `self` or held by a `replace` until a grace period has elapsed (or forever, if
        // that `replace` runs under a guard); the grace period cannot end while `_guard`, a
        // read-side critical section begun before this load, exists and the thread does not
        // sleep (a documented bug, as in C).
        // SAFETY: so `p` is null or valid while `_guard` lives, and the result borrows `_guard`.
        unsafe { p.as_ref() }
    }

    /// Returns a new reference to the value now held.
    #[inline]
    pub fn get_arc(&self) -> Option<Arc<T>> {
        let guard = Guard::new();
        let p = self.ptr.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` comes from `Arc::into_raw` (type invariants); its reference count cannot
        // reach zero before `guard` is dropped, which is after the new reference is taken (see
        // `get`); no `UniqueArc` to the value exists, since references to it are shared.
        let arc = Arc::from(unsafe { crate::sync::ArcBorrow::from_raw(p) });
        drop(guard);
        Some(arc)
    }

    /// Replaces the value held with `value`, and returns the previous one once no reader can
    /// still be using it.
    ///
    /// Context: process context, not under a [`Guard`]; sleeps (an RCU grace period). Under a
    /// guard (the thread may hold a reference to the previous value) it cannot wait: it warns and
    /// leaks the previous value, returning `None`. It does the same in atomic context where it
    /// can tell: in every configuration in interrupt context (hard or soft interrupt, NMI) and
    /// with bottom halves or interrupts disabled, and with `CONFIG_PREEMPT_COUNT` also with
    /// preemption disabled or a spinlock held. Without `CONFIG_PREEMPT_COUNT`, calling it under a
    /// spinlock or with preemption disabled, and with no guard, is a sleep in atomic context, a
    /// bug as in C, but frees nothing a reference uses (every reference from [`get`](Self::get)
    /// borrows a guard, which it sees).
    pub fn replace(&self, value: Option<Arc<T>>) -> Option<Arc<T>> {
        // INVARIANT: the new pointer comes from `Arc::into_raw`, and its reference moves into
        // `self`; the old one's reference is held by this call until after the grace period.
        // Release: pairs with the acquire loads of readers.
        let old = self.ptr.swap(Self::into_ptr(value), Ordering::AcqRel);
        if old.is_null() {
            return None;
        }
        // SAFETY: an FFI call with no additional requirements.
        if unsafe { bindings::rcu_cannot_sync() } {
            // Under a guard, this thread may hold a reference to the old value, which a grace
            // period would not protect (without `CONFIG_PREEMPT_RCU` the wait itself ends the
            // read-side critical section); in atomic context it must not sleep. Either way the
            // reference `old` owns is never released.
            crate::pr_warn!("RcuArc::replace() in an RCU read-side or atomic context: leaking\n");
            return None;
        }
        // The check above found the task not in interrupt context nor with bottom halves or
        // interrupts disabled (nor, with `CONFIG_PREEMPT_COUNT`, in any atomic context). What it
        // cannot see without `CONFIG_PREEMPT_COUNT`, a spinlock held or preemption disabled, is a
        // sleep in atomic context, the same bug as in C, which breaks no reference Rust holds.
        // SAFETY: an FFI call; the check above found the task under no `Guard`, so none of its
        // references from `get` can be ended by the wait.
        unsafe { bindings::synchronize_rcu() };
        // SAFETY: `old` came from `Arc::into_raw` and its reference is ours (type invariants); the
        // grace period has elapsed, so no reader still holds a reference obtained from it.
        Some(unsafe { Arc::from_raw(old) })
    }
}

impl<T: Send + Sync> Drop for RcuArc<T> {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: `p` comes from `Arc::into_raw` and its reference is owned by `self` (type
            // invariants). No reader can hold a reference from `get`: each borrows `self`, which
            // is borrowed mutably here.
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}
