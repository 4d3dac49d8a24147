// expect: error[E0277]
// expect: within `kernel::sync::rcu::Guard`, the trait `Send` is not implemented for
// SPDX-License-Identifier: GPL-2.0

//! An RCU read-side critical section belongs to the thread that entered it: `rcu::Guard` is
//! `!Send`. Documented at `kernel::sync::rcu::Guard`.

use kernel::{prelude::*, sync::rcu};

fn assert_send<T: Send>(_: T) {}

/// Requires a read-side guard to be `Send`.
pub fn f() -> Result {
    assert_send(rcu::read_lock());
    Ok(())
}
