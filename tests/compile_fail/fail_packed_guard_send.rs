// expect: error[E0277]
// expect: within `PackedGuard<'_, u64>`, the trait `Send` is not implemented for
// SPDX-License-Identifier: GPL-2.0

//! A `PackedGuard` keeps preemption disabled on the CPU that took the lock: it is `!Send`.
//! Documented at `kernel::sync::PackedGuard`.

use kernel::{new_packed_lock_class, prelude::*, sync::PackedLock};

fn assert_send<T: Send>(_: T) {}

/// Requires a lock guard to be `Send`.
pub fn f() -> Result {
    let class = new_packed_lock_class!("compile_fail");
    let lock = PackedLock::new(0, 0u64);
    assert_send(lock.lock(class));
    Ok(())
}
