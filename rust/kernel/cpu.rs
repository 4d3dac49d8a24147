// SPDX-License-Identifier: GPL-2.0

//! CPU numbers.
//!
//! The names follow the `kernel::cpu` module that upstream has since merged (`nr_cpu_ids()`,
//! [`CpuId::current`]), so that a rebase onto it is a deletion.
//!
//! C header: [`include/linux/cpumask.h`](srctree/include/linux/cpumask.h)

use crate::bindings;

/// Returns the number of CPU ids (`nr_cpu_ids`): every CPU number is below it.
pub fn nr_cpu_ids() -> u32 {
    // `nr_cpu_ids` is a macro for the constant when there can be only one CPU id.
    #[cfg(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS))]
    {
        bindings::CONFIG_NR_CPUS
    }
    #[cfg(not(any(CONFIG_NR_CPUS = "1", CONFIG_FORCE_NR_CPUS)))]
    // SAFETY: `nr_cpu_ids` is set during early boot and read-only afterwards.
    unsafe {
        bindings::nr_cpu_ids
    }
}

/// Returns the number of online CPUs, which may change at any time.
pub fn num_online_cpus() -> u32 {
    // SAFETY: FFI call without preconditions.
    unsafe { bindings::num_online_cpus() }
}

/// The number of a CPU.
///
/// # Invariants
///
/// The number is below [`nr_cpu_ids()`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuId(u32);

impl CpuId {
    /// Returns the CPU the caller runs on. Unless preemption is disabled the caller may migrate
    /// at once, so the answer may already be stale.
    #[inline]
    pub fn current() -> Self {
        // SAFETY: FFI call without preconditions.
        let cpu = unsafe { bindings::raw_smp_processor_id() };
        // INVARIANT: the CPU the caller runs on has a number below `nr_cpu_ids`.
        CpuId(cpu)
    }

    /// Returns the number as an index.
    #[inline]
    pub fn as_usize(self) -> usize {
        self.0 as usize
    }
}
