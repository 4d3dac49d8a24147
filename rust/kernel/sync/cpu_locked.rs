// SPDX-License-Identifier: GPL-2.0

//! One value per possible CPU, each behind its own spinlock: [`CpuLocked`].
//!
//! This is not per-CPU memory (`alloc_percpu()`): the values are ordinary allocations, and the
//! CPU only chooses which one a caller locks. [`CpuLocked::with`] locks the value of the CPU the
//! caller runs on. The lock is uncontended unless the caller migrates between looking up its CPU
//! and locking (or another thread does the same), and it keeps the access correct when that
//! happens, which a bare per-CPU pointer would not.
//! While the value is locked preemption is disabled (except on `PREEMPT_RT`, where the spinlock
//! sleeps), so `f` must not sleep. The locks do not disable interrupts: never from interrupt
//! context. All the locks of all `CpuLocked`s are one lockdep class, so holding two at once
//! (of two `CpuLocked`s, or two CPUs' values of one) is reported as recursive locking.
//!
//! C header: [`include/linux/smp.h`](srctree/include/linux/smp.h)

use crate::{
    alloc::{flags::*, KBox, KVec},
    cpu::{nr_cpu_ids, CpuId},
    error::Result,
    init::InPlaceInit,
    str::CStr,
    sync::SpinLock,
};
use core::pin::Pin;

/// A value per possible CPU, each behind its own spinlock.
///
/// # Examples
///
/// ```
/// use kernel::sync::CpuLocked;
///
/// let counters = CpuLocked::new(|_cpu| Ok(0u64))?;
/// counters.with(|c| *c += 1);
/// let mut total = 0;
/// counters.for_each(|c| total += *c);
/// assert_eq!(total, 1);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `slots` has one value for each CPU number below `nr_cpu_ids()`, so at least one.
pub struct CpuLocked<T> {
    slots: KVec<Pin<KBox<SpinLock<T>>>>,
}

impl<T: Send> CpuLocked<T> {
    /// Creates the values, calling `init` with each CPU number.
    pub fn new(mut init: impl FnMut(usize) -> Result<T>) -> Result<Self> {
        // One name for the one lock class key of these locks, whatever `T` is and whichever crate
        // instantiates this function: a static is not duplicated by monomorphization, but a
        // string constant is, and lockdep warns when one key comes with two name pointers.
        static NAME: &CStr = crate::c_str!("CpuLocked");
        let n = nr_cpu_ids() as usize;
        let mut slots = KVec::with_capacity(n, GFP_KERNEL)?;
        for cpu in 0..n {
            let v = init(cpu)?;
            slots.push(
                KBox::pin_init(
                    SpinLock::new(v, NAME, crate::static_lock_class!()),
                    GFP_KERNEL,
                )?,
                GFP_KERNEL,
            )?;
        }
        // INVARIANT: one value per CPU number; `nr_cpu_ids` is at least 1.
        Ok(CpuLocked { slots })
    }

    /// Calls `f` with the value of the current CPU locked.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // Below `slots.len()` by the invariants of `CpuId` and `Self`.
        let cpu = CpuId::current().as_usize().min(self.slots.len() - 1);
        let mut g = self.slots[cpu].lock();
        f(&mut g)
    }

    /// Calls `f` with each value locked in turn.
    pub fn for_each(&self, mut f: impl FnMut(&mut T)) {
        for s in self.slots.iter() {
            f(&mut s.lock());
        }
    }
}
