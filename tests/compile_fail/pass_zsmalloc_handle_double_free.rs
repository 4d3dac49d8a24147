// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_handle_double_free.rs`: the object is freed once.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

/// Frees an object once.
pub fn f() -> Result {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
    drop(h);
    Ok(())
}
