// expect: field `0` of struct `Handle` is private
// expect: field `m` of struct `ReadGuard` is private
// expect: field `ptr` of struct `Pool` is private
// expect: method `free_raw` is private
// SPDX-License-Identifier: GPL-2.0

//! The split of `zsmalloc.rs` into one file per concept made fields and helpers `pub(super)`:
//! visible in `kernel::zsmalloc` and its children, as private items of the single file were, and
//! not outside it. Checked here for the ones that carry invariants.

use kernel::zsmalloc::{Handle, Pool, ReadGuard};

/// Reaches into the abstraction's internals.
pub fn f(pool: &Pool, h: &Handle<'_>, g: &ReadGuard<'_>) {
    let _ = &h.0;
    let _ = &g.m;
    let _ = &pool.ptr;
    pool.free_raw(&mut [1]);
}
