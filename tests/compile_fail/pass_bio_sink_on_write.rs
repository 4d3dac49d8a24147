// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_sink_on_write.rs`: a read's memory is filled.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Fills a read's memory with zeroes.
pub fn f(bio: &mut Bio) -> Result {
    let Op::Read(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    d.for_each_segment(|seg| {
        seg.with_sink(|mut s| s.fill_word(0));
        Ok(())
    })
}
