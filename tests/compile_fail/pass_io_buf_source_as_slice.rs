// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_io_buf_source_as_slice.rs`: the source is copied out, then read.

use kernel::{io_buf::Source, prelude::*};

/// Reads the first byte of a copy of a source.
pub fn f(src: Source<'_>) -> Result<u8> {
    let mut v = KVec::from_elem(0u8, src.len(), GFP_KERNEL)?;
    src.copy_to_slice(&mut v)?;
    v.first().copied().ok_or(EINVAL)
}
