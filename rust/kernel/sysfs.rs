// SPDX-License-Identifier: GPL-2.0

//! Static tables of sysfs attributes whose `show` and `store` are safe Rust functions.
//!
//! One [`Attribute`] type serves every object that has attributes. What it is attached to is its
//! type parameter, an [`AttributeOwner`]: a device class ([`Class`](crate::class::Class),
//! `/sys/class/<name>/`) or a bio-based disk (`block::bio::GenDisk`, `/sys/block/<disk>/`). The
//! owner decides which C attribute the table holds (`device_attribute`, `class_attribute`) and
//! what the callbacks receive: the owner's driver data and a context (the disk itself; nothing for
//! a class).
//!
//! # Lifetimes
//!
//! sysfs keeps pointers to the C attributes for as long as the object has its attributes, and
//! the block core may use a disk after its driver removed it. So a table is `'static`: the C
//! attributes then outlive every object they are attached to. Declare it as a `static` item: that
//! also gives each attribute a lockdep class of its own, since sysfs keys an attribute's active
//! reference with `attr.skey`, an object inside the attribute, when `attr.key` is null, as here
//! (with one class for several attributes lockdep reports recursive locking of `kn->active` when
//! an object is removed while its attributes are read). The types only ask for `'static`: a
//! table leaked from the heap is memory-safe too, but lockdep refuses keys outside static memory
//! ("key not registered") and turns itself off.
//!
//! A `show` writes into a [`SysfsBuf`], the page sysfs hands it.
//!
//! C header: [`include/linux/sysfs.h`](srctree/include/linux/sysfs.h)

use crate::page::PAGE_SIZE;
use core::fmt;

mod attribute;
pub(crate) use attribute::Group;
pub use attribute::{Attribute, AttributeOwner, Mode, ShowFn, StoreFn, ValidMode};

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

    /// Appends `bytes` as they are (a path need not be UTF-8), truncated to the room left, as
    /// text written through [`fmt::Write`] is.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        let room = self.buf.len() - self.len;
        let n = bytes.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }
}

impl fmt::Write for SysfsBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write_bytes(s.as_bytes());
        Ok(())
    }
}
