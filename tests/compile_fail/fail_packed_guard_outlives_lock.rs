// expect: error[E0597]: `lock` does not live long enough
// SPDX-License-Identifier: GPL-2.0

//! A `PackedGuard` borrows its lock: it cannot outlive it. Documented at
//! `kernel::sync::PackedGuard`.

use kernel::{new_packed_lock_class, prelude::*, sync::PackedLock};

/// Keeps a guard past the end of its lock's scope.
pub fn f() -> Result<u64> {
    let class = new_packed_lock_class!("compile_fail");
    let guard;
    {
        let lock = PackedLock::new(0, 7u64);
        guard = lock.lock(class);
    }
    Ok(*guard)
}
