// SPDX-License-Identifier: GPL-2.0

//! sysfs attributes: static tables of attributes whose callbacks are safe Rust
//! ([`Attribute`], in `sysfs/attribute.rs`), and the buffer a `show` writes into ([`SysfsBuf`]).
//!
//! C header: [`include/linux/sysfs.h`](srctree/include/linux/sysfs.h)

use crate::page::PAGE_SIZE;
use core::fmt;

mod attribute;
pub(crate) use attribute::Group;
pub use attribute::{Attribute, AttributeOwner, ShowFn, StoreFn};

/// The page a sysfs `show` callback writes into, as a [`fmt::Write`] sink.
///
/// Output beyond one page less one byte is cut off, as `sysfs_emit()` does.
///
/// # Examples
///
/// ```
/// use core::fmt::Write;
/// use kernel::sysfs::SysfsBuf;
///
/// let mut page = [0u8; 4096];
/// let mut buf = SysfsBuf::new(&mut page);
/// writeln!(buf, "{:8} {:8}", 1, 2)?;
/// assert_eq!(buf.as_bytes(), b"       1        2\n");
/// # Ok::<(), core::fmt::Error>(())
/// ```
pub struct SysfsBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SysfsBuf<'a> {
    /// Wraps `buf`, of which at most one page less one byte is used: sysfs wants a `show` to
    /// return less than a page, as `sysfs_emit()` makes sure.
    pub fn new(buf: &'a mut [u8]) -> Self {
        let n = buf.len().min(PAGE_SIZE - 1);
        SysfsBuf {
            buf: &mut buf[..n],
            len: 0,
        }
    }

    /// Returns the bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Returns the number of bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Returns whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Write for SysfsBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.buf.len() - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}
