// expect: error[E0382]: use of moved value: `h`
// SPDX-License-Identifier: GPL-2.0

//! A `Handle` owns its object and is neither `Copy` nor `Clone`: it is freed once.
//! Documented in the safety model of `kernel::zsmalloc`.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

/// Frees an object twice.
pub fn f() -> Result {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
    drop(h);
    drop(h);
    Ok(())
}
