// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_rcu_guard_send.rs`: the guard stays on its thread.

use kernel::{prelude::*, sync::rcu};

fn use_here<T>(_: T) {}

/// Uses a read-side guard on the thread that took it.
pub fn f() -> Result {
    use_here(rcu::read_lock());
    Ok(())
}
