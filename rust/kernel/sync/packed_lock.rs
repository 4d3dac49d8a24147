// SPDX-License-Identifier: GPL-2.0

//! A spinning lock that shares one 32-bit atomic word with 31 bits of the caller's state.
//!
//! Tables with one lock per entry (zram's slot table, for example) cannot afford a `spinlock_t`
//! per entry, let alone one with lockdep's map. [`PackedLock`] needs four bytes: bit 31 is the lock
//! and bits 0-30 are the caller's (flags, a size), read and written with the lock held through the
//! guard, or read without it as a snapshot. It is the Rust counterpart of `bit_spin_lock()`.
//!
//! Lockdep tracks the locks of a table as one lock: every `lock` and `try_lock` names a
//! `'static` [`PackedLockClass`], which holds one lockdep map (under `CONFIG_DEBUG_LOCK_ALLOC`)
//! with a named class. Lock-order inversions against other locks are reported as for any lock,
//! and so is taking two locks of one class at once, which a table whose users never nest its
//! locks wants reported. The class is a spinning lock for lockdep's wait-context checks: a
//! sleeping lock taken under it is reported. Without lockdep the class is empty.

#[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
use crate::types::Opaque;
use crate::{bindings, str::CStr, sync::LockClassKey};
use core::{
    cell::UnsafeCell,
    marker::PhantomData,
    ops::{Deref, DerefMut},
    sync::atomic::{AtomicU32, Ordering},
};

/// The lockdep class of a group of [`PackedLock`]s, typically all the slots of a kind of table:
/// lockdep sees them as one lock of the class named at creation. Declare it with
/// [`new_packed_lock_class!`], which makes it a `static`.
///
/// The locks take it as `&'static`: lockdep keeps a pointer to the map for as long as a lock is
/// held, and a guard that is leaked with [`core::mem::forget`] holds it for ever.
///
/// [`new_packed_lock_class!`]: crate::new_packed_lock_class
///
/// # Invariants
///
/// With `CONFIG_DEBUG_LOCK_ALLOC`, `map` is a lockdep map with a static key and name, set up
/// as `STATIC_LOCKDEP_MAP_INIT()` does (lockdep fills in the rest on first use).
#[repr(transparent)]
pub struct PackedLockClass {
    #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
    map: Opaque<bindings::lockdep_map>,
    #[cfg(not(CONFIG_DEBUG_LOCK_ALLOC))]
    _none: (),
}

// SAFETY: lockdep synchronises its use of the map internally.
unsafe impl Sync for PackedLockClass {}

// SAFETY: the map is not tied to a thread.
unsafe impl Send for PackedLockClass {}

impl PackedLockClass {
    /// A class named `name` with the static lock class key `key`; see
    /// [`new_packed_lock_class!`](crate::new_packed_lock_class).
    #[allow(unused_variables)]
    pub const fn new(name: &'static CStr, key: &'static LockClassKey) -> Self {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        {
            // SAFETY: all zeroes is a valid `lockdep_map`: no class cached yet.
            let mut map: bindings::lockdep_map = unsafe { core::mem::zeroed() };
            map.key = key.0.get();
            map.name = name.as_char_ptr();
            // A spinning lock, as a bit spinlock: a sleeping lock taken under it is reported.
            map.wait_type_inner = bindings::lockdep_wait_type_LD_WAIT_SPIN as u8;
            // INVARIANT: a static key and name, as `STATIC_LOCKDEP_MAP_INIT()`.
            PackedLockClass {
                map: Opaque::new(map),
            }
        }
        #[cfg(not(CONFIG_DEBUG_LOCK_ALLOC))]
        PackedLockClass { _none: () }
    }

    /// Tells lockdep that this thread is taking (`trylock`: took) a lock of the class.
    #[inline]
    #[allow(unused_variables)]
    pub(crate) fn acquire(&'static self, trylock: bool) {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        // SAFETY: the map is set up (type invariant) and static. Arguments: subclass 0,
        // exclusive (read 0), full checking (check 1), no nest lock, no call site.
        unsafe {
            bindings::lock_acquire(
                self.map.get(),
                0,
                trylock.into(),
                0,
                1,
                core::ptr::null_mut(),
                0,
            )
        };
    }

    /// Tells lockdep that this thread released a lock of the class.
    #[inline]
    pub(crate) fn release(&'static self) {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        // SAFETY: the map is set up (type invariant) and static; `acquire` was called.
        unsafe {
            bindings::lock_release(self.map.get(), 0)
        };
    }
}

/// Declares a `static` [`PackedLockClass`] with an optional name and a lock class key of its own,
/// and returns a `&'static` reference to it.
///
/// # Examples
///
/// ```
/// use kernel::{new_packed_lock_class, sync::{PackedLock, PackedLockClass}};
///
/// let class: &'static PackedLockClass = new_packed_lock_class!("doc_table");
/// let slot = PackedLock::new(0, 0u32);
/// *slot.lock(class) += 1;
/// ```
#[macro_export]
macro_rules! new_packed_lock_class {
    ($($name:literal)?) => {{
        static CLASS: $crate::sync::PackedLockClass = $crate::sync::PackedLockClass::new(
            $crate::optional_name!($($name)?),
            $crate::static_lock_class!(),
        );
        &CLASS
    }};
}

/// The lock bit.
const LOCKED: u32 = 1 << 31;

/// A lock bit and 31 bits of state in one `AtomicU32`, guarding a `T`.
///
/// Locking disables preemption until the guard is dropped, as `bit_spin_lock()` does, so code
/// holding the guard must not sleep. Lockdep tracks the lock through the [`PackedLockClass`]
/// each `lock` and `try_lock` names; use one class for all the locks of a table. Acquiring has
/// acquire semantics and releasing has release semantics: everything written under the lock is
/// seen by the next holder.
///
/// Context: task context only, never an interrupt (hard or soft) or NMI handler. The lock disables
/// preemption, not interrupts nor bottom halves: a handler that spun on a lock held by the task it
/// interrupted would never return. (A holder may run with interrupts or bottom halves disabled.)
/// With `CONFIG_RUST_DEBUG_ASSERTIONS`, `lock` and `try_lock` check it (`in_task()`, a
/// `debug_assert!`) and panic otherwise, a `BUG()` even in a hard interrupt handler; lockdep, which
/// the lock informs, also reports a class taken both in interrupt context and with interrupts
/// enabled. Breaking the rule is a deadlock, not memory unsafety.
///
/// # Invariants
///
/// `data` is accessed only through a [`PackedGuard`], which exists only while bit 31 of `word`
/// was set by its creator, or through `&mut self`.
///
/// # Examples
///
/// ```
/// use kernel::{new_packed_lock_class, sync::PackedLock};
///
/// let class = new_packed_lock_class!("doc_slots");
/// let slot = PackedLock::new(0, 0u64);
/// {
///     let mut g = slot.lock(class);
///     *g = 42;
///     g.set_bits(7);
/// }
/// assert_eq!(slot.bits(), 7);
/// assert_eq!(*slot.lock(class), 42);
/// let held = slot.lock(class);
/// assert!(slot.is_locked());
/// drop(held);
/// assert!(slot.try_lock(class).is_some());
/// ```
// `repr(C)`: the lock word comes first, so that a `T` of 4-byte alignment (the zsmalloc table's
// slot) can start at offset 4 and keep its 8-byte fields naturally aligned.
#[repr(C)]
pub struct PackedLock<T> {
    word: AtomicU32,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands `&mut T` to one thread at a time, so it can be shared if `T` can be sent.
unsafe impl<T: Send> Sync for PackedLock<T> {}

// SAFETY: moving the lock moves the `T`.
unsafe impl<T: Send> Send for PackedLock<T> {}

impl<T> PackedLock<T> {
    /// The largest value of the caller's bits.
    pub const MAX_BITS: u32 = LOCKED - 1;

    /// Creates an unlocked lock holding `data`, with the caller's bits set to `bits`
    /// (masked to 31 bits).
    pub const fn new(bits: u32, data: T) -> Self {
        // INVARIANT: unlocked, and no guard exists yet.
        Self {
            word: AtomicU32::new(bits & Self::MAX_BITS),
            data: UnsafeCell::new(data),
        }
    }

    /// Returns a snapshot of the caller's bits, which a holder of the lock may change at any time.
    #[inline]
    pub fn bits(&self) -> u32 {
        self.word.load(Ordering::Relaxed) & Self::MAX_BITS
    }

    /// Returns whether the lock is held, as a snapshot.
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & LOCKED != 0
    }

    /// Sets the lock bit once if it is clear; on success preemption stays disabled.
    #[inline]
    fn raw_try_lock(&self) -> Option<u32> {
        // Balanced below or by the guard's drop.
        preempt_disable();
        let cur = self.word.load(Ordering::Relaxed);
        if cur & LOCKED == 0
            && self
                .word
                .compare_exchange(cur, cur | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return Some(cur);
        }
        // Balances the `preempt_disable()` above.
        preempt_enable();
        None
    }

    /// Tries to take the lock once; `class` is the lockdep class of the lock's table.
    ///
    /// Context: task context (see [`PackedLock`]).
    #[inline]
    pub fn try_lock(&self, class: &'static PackedLockClass) -> Option<PackedGuard<'_, T>> {
        check_context();
        let bits = self.raw_try_lock()?;
        class.acquire(true);
        // INVARIANT: this thread set the lock bit, and told lockdep.
        Some(PackedGuard {
            lock: self,
            class,
            bits,
            _not_send: PhantomData,
        })
    }

    /// Takes the lock, spinning (with preemption enabled) while someone else holds it; `class` is
    /// the lockdep class of the lock's table.
    ///
    /// Lockdep is told before spinning, so a deadlock is reported rather than hung in.
    ///
    /// Context: task context (see [`PackedLock`]).
    #[inline]
    pub fn lock(&self, class: &'static PackedLockClass) -> PackedGuard<'_, T> {
        check_context();
        class.acquire(false);
        loop {
            if let Some(bits) = self.raw_try_lock() {
                // INVARIANT: this thread set the lock bit, and told lockdep.
                return PackedGuard {
                    lock: self,
                    class,
                    bits,
                    _not_send: PhantomData,
                };
            }
            while self.is_locked() {
                core::hint::spin_loop();
            }
        }
    }

    /// Returns the data; no locking is needed with exclusive access.
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }
}

/// Proof that a [`PackedLock`] is held; gives access to the data and the caller's bits.
///
/// The bits set with [`set_bits`](Self::set_bits) are published when the guard is dropped. The
/// guard is `!Send`: preemption is disabled on the CPU that took the lock. It borrows its lock,
/// so it cannot outlive it. Both are checked by `tests/compile_fail/fail_packed_guard_send.rs`
/// and `tests/compile_fail/fail_packed_guard_outlives_lock.rs`.
///
/// # Invariants
///
/// This thread set the lock bit of `lock.word`, has preemption disabled, and told lockdep it
/// holds a lock of `class`.
pub struct PackedGuard<'a, T> {
    lock: &'a PackedLock<T>,
    class: &'static PackedLockClass,
    bits: u32,
    _not_send: PhantomData<*mut ()>,
}

impl<T> PackedGuard<'_, T> {
    /// Returns the caller's bits as they will be when the lock is released.
    #[inline]
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Sets the caller's bits (masked to 31 bits); they are stored when the lock is released.
    #[inline]
    pub fn set_bits(&mut self, bits: u32) {
        self.bits = bits & PackedLock::<T>::MAX_BITS;
    }
}

impl<T> Deref for PackedGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // By the type invariants of `PackedGuard`, this thread set the lock bit of `self.lock` and
        // has not cleared it (only the guard's drop does). No other guard can exist while the bit
        // is set, and `&mut PackedLock` cannot coexist with the guard's borrow of it.
        // SAFETY: so `data` is reached only through this guard (invariants of `PackedLock`): the
        // shared reference, which borrows the guard, aliases no mutable one.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for PackedGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, `data` is reached only through this guard, and the mutable
        // reference borrows the guard mutably, so it is the only reference to `data` while it
        // lives.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for PackedGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.class.release();
        // Clears the lock bit and publishes the bits and the data to the next holder.
        self.lock.word.store(self.bits, Ordering::Release);
        // Balances the `preempt_disable()` of `try_lock()`.
        preempt_enable();
    }
}

/// Checks, with `CONFIG_RUST_DEBUG_ASSERTIONS`, that the caller runs in task context, as the locks
/// require (see [`PackedLock`]). A failed check panics, which is a `BUG()` in an interrupt handler
/// too: 6.12's kernel crate has no `WARN_ON` for Rust code. Without debug assertions `in_task()` is
/// not called.
#[inline(always)]
fn check_context() {
    debug_assert!(
        // SAFETY: FFI call without preconditions.
        unsafe { bindings::in_task() },
        "a PackedLock taken in interrupt context"
    );
}

/// `preempt_disable()`. Without `CONFIG_PREEMPT_COUNT` the C macro is only a compiler barrier,
/// and so is this: no out-of-line call on the lock's fast path.
#[inline(always)]
fn preempt_disable() {
    #[cfg(CONFIG_PREEMPT_COUNT)]
    // SAFETY: FFI call without preconditions; the callers balance it with `preempt_enable()`.
    unsafe {
        bindings::preempt_disable()
    };
    #[cfg(not(CONFIG_PREEMPT_COUNT))]
    core::sync::atomic::compiler_fence(Ordering::SeqCst);
}

/// `preempt_enable()`, a compiler barrier only without `CONFIG_PREEMPT_COUNT`, as in C (where
/// nothing can be preempted, so there is no rescheduling to check for either).
#[inline(always)]
fn preempt_enable() {
    #[cfg(CONFIG_PREEMPT_COUNT)]
    // SAFETY: FFI call; the callers balance an earlier `preempt_disable()`.
    unsafe {
        bindings::preempt_enable()
    };
    #[cfg(not(CONFIG_PREEMPT_COUNT))]
    core::sync::atomic::compiler_fence(Ordering::SeqCst);
}
