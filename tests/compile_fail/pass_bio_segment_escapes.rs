// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_segment_escapes.rs`: what the segment says is copied out of it.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Keeps the sector of the last segment of a read past the walk.
pub fn f(bio: &mut Bio) -> Result<u64> {
    let Op::Read(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    let mut last = None;
    d.for_each_segment(|seg| {
        last = Some(seg.sector());
        Ok(())
    })?;
    Ok(last.unwrap_or(0))
}
