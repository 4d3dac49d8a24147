// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_rcu_arc_not_sync_value.rs`: an atomic instead of a `Cell`.

use core::sync::atomic::AtomicU32;
use kernel::{prelude::*, sync::rcu::RcuArc};

/// Puts an atomic, which is `Sync`, in an `RcuArc`.
pub fn f() -> Result {
    let _cell: RcuArc<AtomicU32> = RcuArc::new(None);
    Ok(())
}
