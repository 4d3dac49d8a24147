// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_segments_on_bio.rs`: the segments of a read or a write.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Walks the segments of a data bio.
pub fn f(bio: &mut Bio) -> Result {
    match bio.op() {
        Op::Read(mut d) => d.for_each_segment(|_| Ok(())),
        Op::Write(mut d) => d.for_each_segment(|_| Ok(())),
        _ => Ok(()),
    }
}
