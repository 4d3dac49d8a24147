// expect: error[E0597]: `guard` does not live long enough
// SPDX-License-Identifier: GPL-2.0

//! A reference from `RcuArc::get` borrows the RCU read-side guard: it cannot outlive the
//! critical section, after which a `replace` may drop the value. Documented at
//! `kernel::sync::rcu::RcuArc::get`.

use kernel::{
    prelude::*,
    sync::{rcu, rcu::RcuArc},
};

/// Keeps the value past the end of the read-side critical section.
pub fn f(cell: &RcuArc<u64>) -> Result<u64> {
    let value;
    {
        let guard = rcu::read_lock();
        value = cell.get(&guard);
    }
    Ok(*value.ok_or(EINVAL)?)
}
