// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_deferred_owner_borrows_local.rs`: the owner borrows a `static`.

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

static COUNT: AtomicUsize = AtomicUsize::new(0);

/// Registers an owner that borrows a `static`.
pub fn f() -> Result {
    let pool = Arc::new(Pool::new(c_str!("compile_fail"))?, GFP_KERNEL)?;
    let df = Deferred::new(pool, Borrowing(&COUNT), Default::default())?;
    df.flush();
    Ok(())
}
