// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_local_locked_escapes.rs`: the value is copied out of the call.

use kernel::{prelude::*, sync::LocalLocked};

/// Reads this CPU's value.
pub fn f(l: &LocalLocked<u64>) -> Result<u64> {
    l.with(|v| Ok(*v))
}
