// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_fill_write_segment.rs`: a read's segments are filled, a write's are read.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Fills a read bio's memory, or copies a write bio's memory out.
pub fn f(bio: &mut Bio) -> Result {
    let mut buf = [0u8; 512];
    match bio.op() {
        Op::Read(mut d) => d.for_each_segment(|seg| seg.copy_from_slice(0, &buf)),
        Op::Write(mut d) => d.for_each_segment(|seg| seg.copy_to_slice(0, &mut buf)),
        _ => Ok(()),
    }
}
