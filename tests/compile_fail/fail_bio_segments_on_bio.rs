// expect: error[E0599]: no method named `for_each_segment` found for mutable reference `&mut Bio`
// SPDX-License-Identifier: GPL-2.0

//! Segments exist only on a data bio: a `Bio` has no `for_each_segment` of its own, only the
//! `Data` of `Op::Read` and `Op::Write` has. Documented at `kernel::block::bio::Op`.

use kernel::{block::bio::Bio, prelude::*};

/// Walks the segments of a bio whatever its operation.
pub fn f(bio: &mut Bio) -> Result {
    bio.for_each_segment(|_| Ok(()))
}
