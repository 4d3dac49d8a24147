// SPDX-License-Identifier: GPL-2.0

//! One value per possible CPU, used with preemption disabled: [`LocalLocked`], the Rust shape of
//! C's per-CPU data under a `local_lock_t`.
//!
//! [`LocalLocked::with`] disables preemption, looks up the CPU it runs on and hands `f` that
//! CPU's value. Nothing else can reach the value meanwhile: another thread would have to run on
//! this CPU, which it cannot until preemption is enabled again, and an interrupt handler that
//! tries (or `f` itself, nested) finds the value busy and gets [`EBUSY`]. So there is no atomic
//! read-modify-write, as with `local_lock()` on a kernel without `PREEMPT_RT`: a preemption count,
//! a CPU number, and an acquire load and a plain and a release store of the value's busy flag
//! (the release and acquire order a value that an `f` which broke the rules by sleeping, and so
//! moved to another CPU, left behind).
//!
//! Lockdep tracks the values of a `LocalLocked` as one lock of the [`PackedLockClass`] it was
//! created with, taken as C's `local_lock()` takes its map (not as a trylock, although it never
//! waits: on `PREEMPT_RT` a local lock is a real lock), except in an interrupt, where it is a
//! trylock (so a use there is not taken for the interrupt-unsafe use of a lock): an order inversion
//! against other locks is reported. A sleep in `f` is reported by the atomic-sleep check
//! (`DEBUG_ATOMIC_SLEEP`), and lockdep's wait-context check reports a sleeping lock taken there.
//! Give each kind of `LocalLocked` a class of its own: two used at once under one class look like
//! recursion.
//!
//! C header: [`include/linux/local_lock.h`](srctree/include/linux/local_lock.h)

use crate::{
    alloc::{flags::*, KBox, KVec},
    bindings,
    cpu::nr_cpu_ids,
    error::{code::*, Result},
    sync::PackedLockClass,
};
use core::{
    cell::UnsafeCell,
    sync::atomic::{compiler_fence, AtomicBool, Ordering},
};

/// A CPU's value and whether it is in use.
///
/// # Invariants
///
/// `value` is reached only by the CPU the slot belongs to, with preemption disabled, while
/// `busy` is set; or through `&mut LocalLocked`.
struct Slot<T> {
    busy: AtomicBool,
    value: UnsafeCell<T>,
}

/// A value per possible CPU, each reached only by its own CPU with preemption disabled.
///
/// # Examples
///
/// ```
/// use kernel::{new_packed_lock_class, sync::LocalLocked};
///
/// let counters = LocalLocked::new(new_packed_lock_class!("doc_counters"), |_cpu| Ok(0u64))?;
/// counters.with(|c| {
///     *c += 1;
///     // Nested use of this CPU's value is refused.
///     assert_eq!(counters.with(|_| Ok(())), Err(EBUSY));
///     Ok(())
/// })?;
/// assert_eq!(counters.into_values()?.iter().sum::<u64>(), 1);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `slots` has one slot for each CPU number below `nr_cpu_ids()`, so at least one.
pub struct LocalLocked<T> {
    slots: KVec<KBox<Slot<T>>>,
    class: &'static PackedLockClass,
}

// SAFETY: a value is created on one thread and used on others (one CPU's at a time, in `with`),
// so `T` must be `Send`; `&LocalLocked` gives no access to a value that another thread may be
// using (type invariant of `Slot`).
unsafe impl<T: Send> Sync for LocalLocked<T> {}

// SAFETY: as above; the values move along with it.
unsafe impl<T: Send> Send for LocalLocked<T> {}

impl<T: Send> LocalLocked<T> {
    /// Creates the values, calling `init` with each CPU number; lockdep knows them as a lock of
    /// `class`.
    pub fn new(
        class: &'static PackedLockClass,
        mut init: impl FnMut(usize) -> Result<T>,
    ) -> Result<Self> {
        let n = nr_cpu_ids() as usize;
        let mut slots = KVec::with_capacity(n, GFP_KERNEL)?;
        for cpu in 0..n {
            let slot = Slot {
                busy: AtomicBool::new(false),
                value: UnsafeCell::new(init(cpu)?),
            };
            slots.push(KBox::new(slot, GFP_KERNEL)?, GFP_KERNEL)?;
        }
        // INVARIANT: one slot per CPU number; `nr_cpu_ids` is at least 1. No value is in use.
        Ok(LocalLocked { slots, class })
    }

    /// Calls `f` with the value of the CPU it runs on, with preemption disabled, and returns what
    /// it returns.
    ///
    /// Fails with [`EBUSY`], without calling `f`, if this CPU's value is in use already: `with`
    /// called again from `f` (of this `LocalLocked`), or from an interrupt that came while `f`
    /// ran. (An `EBUSY` that `f` returns comes back as it is.)
    ///
    /// Context: `f` must not sleep (on `PREEMPT_RT`, not even take a `spinlock_t`).
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> Result<R>) -> Result<R> {
        // SAFETY: FFI call without preconditions; it disables preemption, which the
        // `preempt_enable()` below balances, so the CPU number stays this thread's until then.
        let cpu = unsafe { bindings::preempt_disable_cpu() } as usize;
        // Below `slots.len()` by the invariant; `min` lets the compiler drop the bounds check.
        let slot = &self.slots[cpu.min(self.slots.len() - 1)];
        // Only code running on this CPU, with preemption disabled, sets its slot's flag, and an
        // interrupt runs to completion before the interrupted code goes on: no read-modify-write
        // is needed. The compiler fences keep `f`'s accesses between the two stores, where an
        // interrupt sees the flag set; acquire and release order them after and before the
        // accesses of an `f` that slept in spite of the rules and finished on another CPU.
        let r = if slot.busy.load(Ordering::Acquire) {
            Err(EBUSY)
        } else {
            slot.busy.store(true, Ordering::Relaxed);
            compiler_fence(Ordering::SeqCst);
            // As a trylock in an interrupt, which never waits either: lockdep then does not take
            // the value for one used with interrupts on and off (only with lockdep is this
            // asked, and it costs a call).
            // SAFETY: FFI call without preconditions.
            let in_irq = cfg!(CONFIG_DEBUG_LOCK_ALLOC) && unsafe { bindings::in_interrupt() };
            self.class.acquire(in_irq);
            // SAFETY: this is the slot of the CPU this thread runs on, with preemption disabled,
            // and it was not in use: nothing else reaches `value` until `busy` is cleared below
            // (type invariant of `Slot`). The reference does not outlive `f`'s call.
            let r = f(unsafe { &mut *slot.value.get() });
            self.class.release();
            compiler_fence(Ordering::SeqCst);
            slot.busy.store(false, Ordering::Release);
            r
        };
        // SAFETY: balances the `preempt_disable()` above.
        unsafe { bindings::preempt_enable() };
        r
    }

    /// Returns the values, one per CPU number, once no CPU can be using them.
    pub fn into_values(self) -> Result<KVec<T>> {
        let mut v = KVec::with_capacity(self.slots.len(), GFP_KERNEL)?;
        for s in self.slots {
            // With `self` owned no `with` runs (it borrows `self`).
            v.push(KBox::into_inner(s).value.into_inner(), GFP_KERNEL)?;
        }
        Ok(v)
    }
}
