// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_packed_guard_outlives_lock.rs`: the value is read inside the lock's scope.

use kernel::{new_packed_lock_class, prelude::*, sync::PackedLock};

/// Reads the data under the lock, within the lock's scope.
pub fn f() -> Result<u64> {
    let class = new_packed_lock_class!("compile_fail");
    let value;
    {
        let lock = PackedLock::new(0, 7u64);
        let guard = lock.lock(class);
        value = *guard;
    }
    Ok(value)
}
