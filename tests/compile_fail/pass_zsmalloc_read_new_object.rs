// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_read_new_object.rs`: the object is written, then read.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

/// Writes an object, then reads it.
pub fn f() -> Result<u8> {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let obj = pool.alloc(3000, GFP_KERNEL)?;
    let h = obj.write(b"x")?;
    let b = h.map_read(3000)?[0];
    Ok(b)
}
