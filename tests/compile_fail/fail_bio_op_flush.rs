// expect: named `Flush` found for enum `Op
// SPDX-License-Identifier: GPL-2.0

//! A bio-based driver is never handed a flush: `submit_bio_noacct()` refuses `REQ_OP_FLUSH` bios
//! (only blk-mq makes flush requests), and a disk without a volatile write cache, which is every
//! disk `GenDiskBuilder` builds, gets no flush or FUA flags either. So `Op` has no `Flush` for a
//! driver to handle. Documented at `kernel::block::bio::Op`.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Completes a bio as if it could be a flush.
pub fn f(mut bio: Bio) {
    let r = match bio.op() {
        Op::Flush => Ok(()),
        _ => Err(EIO),
    };
    bio.end(r);
}
