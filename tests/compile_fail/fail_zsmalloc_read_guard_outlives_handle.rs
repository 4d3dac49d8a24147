// expect: error[E0505]: cannot move out of `h` because it is borrowed
// SPDX-License-Identifier: GPL-2.0

//! A `ReadGuard` borrows its handle: the object cannot be freed while it is mapped.
//! Documented in the safety model of `kernel::zsmalloc`.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

/// Frees an object while a mapping of it is alive.
pub fn f() -> Result<u8> {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
    let g = h.map_read(1)?;
    drop(h);
    Ok(g[0])
}
