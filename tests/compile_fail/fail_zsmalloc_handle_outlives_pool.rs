// expect: error[E0505]: cannot move out of `pool` because it is borrowed
// SPDX-License-Identifier: GPL-2.0

//! A `Handle` borrows its `Pool`: it cannot be used after the pool is dropped.
//! Documented at `kernel::zsmalloc::Handle`.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

/// Drops the pool while a handle of it is alive.
pub fn f() -> Result<usize> {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
    drop(pool);
    Ok(h.capacity())
}
