// expect: error[E0599]: no method named `map_read` found for struct `NewObject
// SPDX-License-Identifier: GPL-2.0

//! A `NewObject` is uninitialised memory: it can be written, not read.
//! Documented at `kernel::zsmalloc::NewObject`.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

/// Reads an object before writing it.
pub fn f() -> Result<u8> {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let obj = pool.alloc(3000, GFP_KERNEL)?;
    let b = obj.map_read(3000)?[0];
    Ok(b)
}
