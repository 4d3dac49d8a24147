// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_rcu_assumed_guard_escapes.rs`: the value is read inside the closure.

use kernel::{
    prelude::*,
    sync::{rcu, rcu::RcuArc},
};

/// Reads the value inside the closure.
pub fn f(cell: &RcuArc<u64>) -> Result<u64> {
    let outer = rcu::read_lock();
    // SAFETY: `outer` holds the RCU read side lock until the end of the function.
    let value = unsafe { rcu::assume_read_side(|guard| cell.get(guard).copied()) };
    drop(outer);
    value.ok_or(EINVAL)
}
