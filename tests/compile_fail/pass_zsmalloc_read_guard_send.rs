// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_read_guard_send.rs`: the handle, and bytes copied out of the
//! guard, are `Send`.

use kernel::{c_str, prelude::*, zsmalloc::Pool};

fn assert_send<T: Send>(_: T) {}

/// Sends what was read, and the handle, not the guard.
pub fn f() -> Result {
    let pool = Pool::new(c_str!("compile_fail"))?;
    let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
    assert_send(h.map_read(1)?[0]);
    assert_send(h);
    Ok(())
}
