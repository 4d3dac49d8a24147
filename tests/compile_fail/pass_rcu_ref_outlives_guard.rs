// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_rcu_ref_outlives_guard.rs`: the value is read inside the critical section.

use kernel::{
    prelude::*,
    sync::{rcu, rcu::RcuArc},
};

/// Reads the value inside the read-side critical section.
pub fn f(cell: &RcuArc<u64>) -> Result<u64> {
    let value;
    {
        let guard = rcu::read_lock();
        value = *cell.get(&guard).ok_or(EINVAL)?;
    }
    Ok(value)
}
