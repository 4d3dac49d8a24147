// expect: lifetime may not live long enough
// SPDX-License-Identifier: GPL-2.0

//! The guard that `rcu::assume_read_side` lends lives only for the closure: a reference read
//! under it cannot leave the closure, after which the caller's critical section may end.
//! Documented at `kernel::sync::rcu::assume_read_side`.

use kernel::{
    prelude::*,
    sync::{rcu, rcu::RcuArc},
};

/// Takes the value out of the closure.
pub fn f(cell: &RcuArc<u64>) -> Result<u64> {
    let outer = rcu::read_lock();
    // SAFETY: `outer` holds the RCU read side lock until the end of the function.
    let value = unsafe { rcu::assume_read_side(|guard| cell.get(guard)) };
    let v = *value.ok_or(EINVAL)?;
    drop(outer);
    Ok(v)
}
