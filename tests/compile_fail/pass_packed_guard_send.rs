// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_packed_guard_send.rs`: the data read under the lock, and the lock itself,
//! are `Send`.

use kernel::{new_packed_lock_class, prelude::*, sync::PackedLock};

fn assert_send<T: Send>(_: T) {}

/// Sends the data read under the lock and a reference to the lock, not the guard.
pub fn f() -> Result {
    let class = new_packed_lock_class!("compile_fail");
    let lock = PackedLock::new(0, 0u64);
    assert_send(*lock.lock(class));
    assert_send(&lock);
    Ok(())
}
