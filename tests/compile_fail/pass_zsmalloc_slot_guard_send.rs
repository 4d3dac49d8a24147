// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_slot_guard_send.rs`: what is read under the lock, and the table
//! itself, are `Send`.

use kernel::{
    c_str,
    prelude::*,
    sync::Arc,
    zsmalloc::{Pool, Table},
};

fn assert_send<T: Send>(_: T) {}

/// Sends the slot's word and a reference to the table, not the guard.
pub fn f() -> Result {
    let table = Table::new(Arc::new(Pool::new(c_str!("compile_fail"))?, GFP_KERNEL)?, 1)?;
    assert_send(table.lock(0).ok_or(EINVAL)?.word());
    assert_send(&table);
    Ok(())
}
