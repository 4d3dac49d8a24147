// expect: error[E0521]: borrowed data escapes outside of closure
// SPDX-License-Identifier: GPL-2.0

//! A segment's source lives only for its call of `Segment::with_source`: the page is mapped for that
//! call alone. Documented at `kernel::block::bio::Segment::with_source`.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Keeps each segment's source past the call that lent it.
pub fn f(bio: &mut Bio) -> Result<usize> {
    let Op::Write(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    let mut n = 0;
    d.for_each_segment(|seg| {
        let mut kept = None;
        seg.with_source(|s| kept = Some(s));
        n += kept.map_or(0, |s| s.len());
        Ok(())
    })?;
    Ok(n)
}
