// expect: error[E0608]: cannot index into a value of type `kernel::io_buf::Source<'_>`
// SPDX-License-Identifier: GPL-2.0

//! A source is never a slice: its memory may be written by others meanwhile (a bio's page under
//! `O_DIRECT`), so Rust reads it only through C and volatile loads. Documented at
//! `kernel::io_buf`.

use kernel::io_buf::Source;

/// Reads the first byte of a source in place.
pub fn f(src: Source<'_>) -> u8 {
    src[0]
}
