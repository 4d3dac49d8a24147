// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_source_escapes.rs`: what the source says is taken out of the call.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Adds up the lengths of the segments' sources.
pub fn f(bio: &mut Bio) -> Result<usize> {
    let Op::Write(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    let mut n = 0;
    d.for_each_segment(|seg| {
        n += seg.with_source(|s| s.len());
        Ok(())
    })?;
    Ok(n)
}
