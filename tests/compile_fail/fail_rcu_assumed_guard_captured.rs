// expect: borrowed data escapes outside of closure
// SPDX-License-Identifier: GPL-2.0

//! The guard that `rcu::assume_read_side` lends lives only for the closure: a reference read
//! under it cannot be stored in a variable the closure captures. Documented at
//! `kernel::sync::rcu::assume_read_side`.

use kernel::{
    prelude::*,
    sync::{rcu, rcu::RcuArc},
};

/// Stores the value in a captured variable.
pub fn f(cell: &RcuArc<u64>) -> Result<u64> {
    let outer = rcu::read_lock();
    let mut out = None;
    // SAFETY: `outer` holds the RCU read side lock until the end of the function.
    unsafe { rcu::assume_read_side(|guard| out = cell.get(guard)) };
    let v = *out.ok_or(EINVAL)?;
    drop(outer);
    Ok(v)
}
