// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_rcu_assumed_guard_captured.rs`: a copy of the value is stored.

use kernel::{
    prelude::*,
    sync::{rcu, rcu::RcuArc},
};

/// Stores a copy of the value in a captured variable.
pub fn f(cell: &RcuArc<u64>) -> Result<u64> {
    let outer = rcu::read_lock();
    let mut out = None;
    // SAFETY: `outer` holds the RCU read side lock until the end of the function.
    unsafe { rcu::assume_read_side(|guard| out = cell.get(guard).copied()) };
    drop(outer);
    out.ok_or(EINVAL)
}
