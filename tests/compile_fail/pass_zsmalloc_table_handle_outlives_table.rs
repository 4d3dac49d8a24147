// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_table_handle_outlives_table.rs`: the object goes before the table.

use kernel::{
    c_str,
    prelude::*,
    sync::Arc,
    zsmalloc::{Pool, Table},
};

/// Uses and drops the object taken out of a table, then drops the table.
pub fn f() -> Result<usize> {
    let table = Table::new(Arc::new(Pool::new(c_str!("compile_fail"))?, GFP_KERNEL)?, 1)?;
    let h = table.lock(0).ok_or(EINVAL)?.take();
    let cap = h.map_or(0, |h| h.capacity());
    drop(table);
    Ok(cap)
}
