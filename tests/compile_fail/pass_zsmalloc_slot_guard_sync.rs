// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_slot_guard_sync.rs`: the table, whose slots are shared between
//! threads, is `Sync`.

use kernel::{
    c_str,
    prelude::*,
    sync::Arc,
    zsmalloc::{Pool, Table},
};

fn assert_sync<T: Sync>(_: &T) {}

/// Shares the table, not a guard.
pub fn f() -> Result {
    let table = Table::new(Arc::new(Pool::new(c_str!("compile_fail"))?, GFP_KERNEL)?, 1)?;
    assert_sync(&table);
    Ok(())
}
