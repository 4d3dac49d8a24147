// expect: error[E0277]
// expect: within `SlotGuard<'_>`, the trait `Send` is not implemented for
// SPDX-License-Identifier: GPL-2.0

//! A `SlotGuard` holds a slot lock, with preemption disabled on its CPU: it is `!Send`.
//! Documented at `kernel::zsmalloc::SlotGuard`.

use kernel::{
    c_str,
    prelude::*,
    sync::Arc,
    zsmalloc::{Pool, Table},
};

fn assert_send<T: Send>(_: T) {}

/// Requires a slot guard to be `Send`.
pub fn f() -> Result {
    let table = Table::new(Arc::new(Pool::new(c_str!("compile_fail"))?, GFP_KERNEL)?, 1)?;
    assert_send(table.lock(0).ok_or(EINVAL)?);
    Ok(())
}
