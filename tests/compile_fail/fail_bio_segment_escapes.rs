// expect: error[E0521]: borrowed data escapes outside of closure
// SPDX-License-Identifier: GPL-2.0

//! A `Segment` lives only for its call of the `for_each_segment` closure: it cannot be kept for
//! later. Documented at `kernel::block::bio::Data::for_each_segment`.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Keeps the last segment of a read past the walk.
pub fn f(bio: &mut Bio) -> Result<u64> {
    let Op::Read(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    let mut last = None;
    d.for_each_segment(|seg| {
        last = Some(seg);
        Ok(())
    })?;
    Ok(last.map_or(0, |seg| seg.sector()))
}
