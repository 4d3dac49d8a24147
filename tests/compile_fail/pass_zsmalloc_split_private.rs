// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_split_private.rs`: the same values through the public API.

use kernel::zsmalloc::{Handle, Pool, ReadGuard};

/// Uses only what the abstraction exports.
pub fn f(pool: &Pool, h: &Handle<'_>, g: &ReadGuard<'_>) -> usize {
    h.capacity() + g.len() + pool.live_objects()
}
