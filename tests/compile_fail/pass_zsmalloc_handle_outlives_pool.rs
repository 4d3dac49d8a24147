// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_handle_outlives_pool.rs`: the handle is dropped before its pool.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

/// Drops the handle, then the pool.
pub fn f() -> Result<usize> {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
    let cap = h.capacity();
    drop(h);
    drop(pool);
    Ok(cap)
}
