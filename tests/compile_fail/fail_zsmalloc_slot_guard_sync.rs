// expect: error[E0277]
// expect: cannot be shared between threads safely
// SPDX-License-Identifier: GPL-2.0

//! A `SlotGuard` is `!Sync` too: `SlotGuard::map_read` relies on the slot lock having preemption
//! disabled on the calling thread's CPU, which a `&SlotGuard` on another thread would not have.
//! Documented at `kernel::zsmalloc::SlotGuard`.

use kernel::{
    c_str,
    prelude::*,
    sync::Arc,
    zsmalloc::{Pool, Table},
};

fn assert_sync<T: Sync>(_: &T) {}

/// Requires a slot guard to be `Sync`.
pub fn f() -> Result {
    let table = Table::new(Arc::new(Pool::new(c_str!("compile_fail"))?, GFP_KERNEL)?, 1)?;
    let guard = table.lock(0).ok_or(EINVAL)?;
    assert_sync(&guard);
    Ok(())
}
