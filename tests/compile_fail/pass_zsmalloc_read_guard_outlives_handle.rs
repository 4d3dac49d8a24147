// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_read_guard_outlives_handle.rs`: the guard goes before the handle.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

/// Unmaps, then frees.
pub fn f() -> Result<u8> {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
    let g = h.map_read(1)?;
    let b = g[0];
    drop(g);
    drop(h);
    Ok(b)
}
