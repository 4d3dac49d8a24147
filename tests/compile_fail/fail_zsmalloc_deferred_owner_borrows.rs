// expect: error[E0478]: lifetime bound not satisfied
// expect: but lifetime parameter must outlive the static lifetime
// SPDX-License-Identifier: GPL-2.0

//! The owner of a deferred-free queue must not borrow anything (`DeferredFree: 'static`): the
//! queue's worker may run as long as the queue exists, and a queue can be leaked.
//! Documented at `kernel::zsmalloc::DeferredFree`.

use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::zsmalloc::DeferredFree;

/// Counts drained items into a counter it borrows.
pub struct Borrowing<'a>(&'a AtomicUsize);

impl<'a> DeferredFree for Borrowing<'a> {
    type Item = u32;

    fn drain(&self, items: &[u32]) {
        self.0.fetch_add(items.len(), Ordering::Relaxed);
    }
}
