// expect: error[E0599]: no method named `with_sink` found
// SPDX-License-Identifier: GPL-2.0

//! A write's pages are only read: they may be shared and read-only (the zero page, a read-only
//! file mapping under `O_DIRECT`), so a write's segment lends no sink. Documented at
//! `kernel::block::bio::dir`.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Fills a write's memory with zeroes.
pub fn f(bio: &mut Bio) -> Result {
    let Op::Write(mut d) = bio.op() else {
        return Err(EINVAL);
    };
    d.for_each_segment(|seg| {
        seg.with_sink(|mut s| s.fill_word(0));
        Ok(())
    })
}
