// expect: error[E0597]: `count` does not live long enough
// expect: argument requires that `count` is borrowed for `'static`
// SPDX-License-Identifier: GPL-2.0

//! The owner of a deferred-free queue must not borrow anything (`DeferredFree: 'static`): an
//! owner that borrows a local cannot be registered. Documented at
//! `kernel::zsmalloc::DeferredFree`.

use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::{
    c_str,
    prelude::*,
    sync::Arc,
    zsmalloc::{Deferred, DeferredFree, Pool},
};

/// Counts drained items into a counter it borrows.
pub struct Borrowing<'a>(&'a AtomicUsize);

impl DeferredFree for Borrowing<'static> {
    type Item = u32;

    fn drain(&self, items: &[u32]) {
        self.0.fetch_add(items.len(), Ordering::Relaxed);
    }
}

/// Registers an owner that borrows a local.
pub fn f() -> Result {
    let count = AtomicUsize::new(0);
    let pool = Arc::new(Pool::new(c_str!("compile_fail"))?, GFP_KERNEL)?;
    let df = Deferred::new(pool, Borrowing(&count), Default::default())?;
    df.flush();
    Ok(())
}
