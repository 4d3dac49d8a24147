// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_sink_escapes.rs`: what the sink says is taken out of the call.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Adds up the lengths of the segments' sinks.
pub fn f(bio: &mut Bio) -> Result<usize> {
    let Op::Read(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    let mut n = 0;
    d.for_each_segment(|seg| {
        n += seg.with_sink(|s| s.len());
        Ok(())
    })?;
    Ok(n)
}
