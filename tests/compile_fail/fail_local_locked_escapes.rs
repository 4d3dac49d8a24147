// expect: error[E0521]: borrowed data escapes outside of closure
// SPDX-License-Identifier: GPL-2.0

//! The `&mut` to a CPU's value lives only for the call of `with`'s closure, while preemption is
//! disabled and the value is marked busy. Documented at `kernel::sync::LocalLocked::with`.

use kernel::{prelude::*, sync::LocalLocked};

/// Keeps this CPU's value past the call.
pub fn f(l: &LocalLocked<u64>) -> Result<u64> {
    let mut kept = None;
    l.with(|v| {
        kept = Some(v);
        Ok(())
    })?;
    Ok(kept.map_or(0, |v| *v))
}
