// expect: error[E0505]: cannot move out of `table` because it is borrowed
// SPDX-License-Identifier: GPL-2.0

//! A `Handle` taken out of a `Table` borrows the table (which owns the pool): it cannot outlive
//! it. Documented at `kernel::zsmalloc::Table`.

use kernel::{
    c_str,
    prelude::*,
    sync::Arc,
    zsmalloc::{Pool, Table},
};

/// Drops a table while an object taken out of it is alive.
pub fn f() -> Result<usize> {
    let table = Table::new(Arc::new(Pool::new(c_str!("compile_fail"))?, GFP_KERNEL)?, 1)?;
    let h = table.lock(0).ok_or(EINVAL)?.take();
    drop(table);
    Ok(h.map_or(0, |h| h.capacity()))
}
