// SPDX-License-Identifier: GPL-2.0

//! One value per possible CPU, each behind its own spinlock.
//!
//! [`PerCpu::with`] locks the value of the CPU the caller runs on. The lock is uncontended unless
//! the caller migrates between looking up its CPU and locking (or another thread does the same),
//! and it keeps the access correct when that happens, which a bare per-CPU pointer would not.
//! While the value is locked preemption is disabled, so `f` must not sleep.
//!
//! C header: [`include/linux/smp.h`](srctree/include/linux/smp.h)

use crate::{
    alloc::{flags::*, KBox, KVec},
    bindings,
    error::Result,
    init::InPlaceInit,
    new_spinlock,
    sync::SpinLock,
};
use core::pin::Pin;

/// A value per possible CPU.
///
/// # Examples
///
/// ```
/// use kernel::percpu::PerCpu;
///
/// let counters = PerCpu::new(|_cpu| Ok(0u64))?;
/// counters.with(|c| *c += 1);
/// let mut total = 0;
/// counters.for_each(|c| total += *c);
/// assert_eq!(total, 1);
/// # Ok::<(), Error>(())
/// ```
pub struct PerCpu<T> {
    slots: KVec<Pin<KBox<SpinLock<T>>>>,
}

/// Returns the number of CPU ids (`nr_cpu_ids`): every CPU number is below it.
pub fn nr_cpu_ids() -> usize {
    // SAFETY: `nr_cpu_ids` is set during early boot and read-only afterwards.
    unsafe { bindings::nr_cpu_ids as usize }
}

/// Returns the number of the CPU the caller runs on, which may change at once unless preemption
/// is disabled.
pub fn current_cpu() -> usize {
    // SAFETY: FFI call without preconditions.
    unsafe { bindings::raw_smp_processor_id() as usize }
}

impl<T: Send> PerCpu<T> {
    /// Creates the values, calling `init` with each CPU number.
    pub fn new(mut init: impl FnMut(usize) -> Result<T>) -> Result<Self> {
        let n = nr_cpu_ids();
        let mut slots = KVec::with_capacity(n, GFP_KERNEL)?;
        for cpu in 0..n {
            let v = init(cpu)?;
            slots.push(
                KBox::pin_init(new_spinlock!(v, "PerCpu"), GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
        }
        Ok(PerCpu { slots })
    }

    /// Calls `f` with the value of the current CPU locked.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let cpu = current_cpu().min(self.slots.len() - 1);
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

/// Returns the number of online CPUs, which may change at any time.
pub fn num_online_cpus() -> usize {
    // SAFETY: FFI call without preconditions.
    unsafe { bindings::num_online_cpus() as usize }
}
