// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_zsmalloc_deferred_owner_borrows.rs`: the owner shares the counter through an
//! `Arc` instead of borrowing it.

use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::{sync::Arc, zsmalloc::DeferredFree};

/// Counts drained items into a counter it holds a reference to.
pub struct Sharing(pub Arc<AtomicUsize>);

impl DeferredFree for Sharing {
    type Item = u32;

    fn drain(&self, items: &[u32]) {
        self.0.fetch_add(items.len(), Ordering::Relaxed);
    }
}
