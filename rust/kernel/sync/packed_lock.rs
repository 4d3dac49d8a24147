// SPDX-License-Identifier: GPL-2.0

//! A spinning lock that shares one 32-bit atomic word with 31 bits of the caller's state.
//!
//! Tables with one lock per entry (zram's slot table, for example) cannot afford a `spinlock_t`
//! per entry, let alone one with lockdep's map. [`PackedLock`] needs four bytes: bit 31 is the lock
//! and bits 0-30 are the caller's (flags, a size), read and written with the lock held through the
//! guard, or read without it as a snapshot. It is the Rust counterpart of `bit_spin_lock()`.

use crate::bindings;
use core::{
    cell::UnsafeCell,
    marker::PhantomData,
    ops::{Deref, DerefMut},
    sync::atomic::{AtomicU32, Ordering},
};

/// The lock bit.
const LOCKED: u32 = 1 << 31;

/// A lock bit and 31 bits of state in one `AtomicU32`, guarding a `T`.
///
/// Locking disables preemption until the guard is dropped, as `bit_spin_lock()` does, so code
/// holding the guard must not sleep. The lock is not tracked by lockdep. Acquiring has acquire
/// semantics and releasing has release semantics: everything written under the lock is seen by
/// the next holder.
///
/// # Invariants
///
/// `data` is accessed only through a [`PackedGuard`], which exists only while bit 31 of `word`
/// was set by its creator, or through `&mut self`.
///
/// # Examples
///
/// ```
/// use kernel::sync::PackedLock;
///
/// let slot = PackedLock::new(0, 0u64);
/// {
///     let mut g = slot.lock();
///     *g = 42;
///     g.set_bits(7);
/// }
/// assert_eq!(slot.bits(), 7);
/// assert_eq!(*slot.lock(), 42);
/// let held = slot.lock();
/// assert!(slot.try_lock().is_none());
/// drop(held);
/// assert!(slot.try_lock().is_some());
/// ```
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
    pub fn bits(&self) -> u32 {
        self.word.load(Ordering::Relaxed) & Self::MAX_BITS
    }

    /// Returns whether the lock is held, as a snapshot.
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & LOCKED != 0
    }

    /// Tries to take the lock once.
    pub fn try_lock(&self) -> Option<PackedGuard<'_, T>> {
        // SAFETY: FFI call without preconditions; balanced below or by the guard's drop.
        unsafe { bindings::preempt_disable() };
        let cur = self.word.load(Ordering::Relaxed);
        if cur & LOCKED == 0
            && self
                .word
                .compare_exchange(cur, cur | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            // INVARIANT: this thread set the lock bit.
            return Some(PackedGuard {
                lock: self,
                bits: cur,
                _not_send: PhantomData,
            });
        }
        // SAFETY: balances the `preempt_disable()` above.
        unsafe { bindings::preempt_enable() };
        None
    }

    /// Takes the lock, spinning (with preemption enabled) while someone else holds it.
    pub fn lock(&self) -> PackedGuard<'_, T> {
        loop {
            if let Some(g) = self.try_lock() {
                return g;
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
/// guard is `!Send`: preemption is disabled on the CPU that took the lock.
///
/// # Invariants
///
/// This thread set the lock bit of `lock.word` and has preemption disabled.
pub struct PackedGuard<'a, T> {
    lock: &'a PackedLock<T>,
    bits: u32,
    _not_send: PhantomData<*mut ()>,
}

impl<T> PackedGuard<'_, T> {
    /// Returns the caller's bits as they will be when the lock is released.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Sets the caller's bits (masked to 31 bits); they are stored when the lock is released.
    pub fn set_bits(&mut self, bits: u32) {
        self.bits = bits & PackedLock::<T>::MAX_BITS;
    }
}

impl<T> Deref for PackedGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the lock is held, so no other reference to the data exists.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for PackedGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the lock is held, so no other reference to the data exists.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for PackedGuard<'_, T> {
    fn drop(&mut self) {
        // Clears the lock bit and publishes the bits and the data to the next holder.
        self.lock.word.store(self.bits, Ordering::Release);
        // SAFETY: balances the `preempt_disable()` of `try_lock()`.
        unsafe { bindings::preempt_enable() };
    }
}
