// expect: error[E0277]
// expect: within `ReadGuard<'_>`, the trait `Send` is not implemented for
// SPDX-License-Identifier: GPL-2.0

//! A `ReadGuard` keeps preemption disabled on the CPU that mapped the object: it is `!Send`.
//! Documented at `kernel::zsmalloc::ReadGuard`.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

fn assert_send<T: Send>(_: T) {}

/// Requires a mapping guard to be `Send`.
pub fn f() -> Result {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
    assert_send(h.map_read(1)?);
    Ok(())
}
