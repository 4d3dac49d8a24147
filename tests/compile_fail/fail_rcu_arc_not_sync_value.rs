// expect: error[E0277]
// expect: cannot be shared between threads safely
// SPDX-License-Identifier: GPL-2.0

//! `RcuArc<T>` hands `&T` to readers on any thread: `T` must be `Sync`. Documented at
//! `kernel::sync::rcu::RcuArc`.

use core::cell::Cell;
use kernel::{prelude::*, sync::rcu::RcuArc};

/// Puts a `Cell`, which is not `Sync`, in an `RcuArc`.
pub fn f() -> Result {
    let _cell: RcuArc<Cell<u32>> = RcuArc::new(None);
    Ok(())
}
