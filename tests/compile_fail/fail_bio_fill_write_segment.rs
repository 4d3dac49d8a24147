// expect: error[E0599]: no method named `copy_from_slice` found
// SPDX-License-Identifier: GPL-2.0

//! A write's segments can only be read: its pages belong to the submitter and may be shared and
//! read-only (the zero page). Documented at `kernel::block::bio::dir`.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Writes into the memory of a write bio.
pub fn f(bio: &mut Bio) -> Result {
    let Op::Write(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    d.for_each_segment(|seg| seg.copy_from_slice(0, &[0xff; 512]))
}
