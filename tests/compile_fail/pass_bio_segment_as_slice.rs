// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_segment_as_slice.rs`: the bytes are copied out first.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Copies the first byte of a write's memory out.
pub fn f(bio: &mut Bio) -> Result<u8> {
    let Op::Write(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    let mut first = [0u8; 1];
    d.for_each_segment(|seg| seg.copy_to_slice(0, &mut first))?;
    Ok(first[0])
}
