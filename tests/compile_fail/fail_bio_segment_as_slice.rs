// expect: error[E0599]: no method named `with_bytes` found
// SPDX-License-Identifier: GPL-2.0

//! A segment's memory is never handed out as `&[u8]`: others may write it meanwhile (an
//! `O_DIRECT` buffer is not covered by stable writes). It is reached only by copies, or as an
//! `io_buf` source or sink that only C and volatile loads touch. Documented at
//! `kernel::block::bio::Segment::copy_to_slice`.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Looks at a write's memory in place.
pub fn f(bio: &mut Bio) -> Result<u8> {
    let Op::Write(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    let mut first = 0;
    d.for_each_segment(|seg| {
        first = seg.with_bytes(|b: &[u8]| b[0]);
        Ok(())
    })?;
    Ok(first)
}
