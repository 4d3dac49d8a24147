// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_op_flush.rs`: every operation a bio-based driver can be handed, matched
//! without a wildcard.

use kernel::{
    block::bio::{Bio, Op},
    prelude::*,
};

/// Completes a bio by its operation.
pub fn f(mut bio: Bio) {
    let r = match bio.op() {
        Op::Read(_) | Op::Write(_) | Op::Discard | Op::WriteZeroes => Ok(()),
        Op::Other(_) => Err(EIO),
    };
    bio.end(r);
}
