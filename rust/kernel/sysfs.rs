// SPDX-License-Identifier: GPL-2.0

//! sysfs attribute buffers.
//!
//! C header: [`include/linux/sysfs.h`](srctree/include/linux/sysfs.h)

use crate::{
    alloc::{flags::*, KVec},
    bindings,
    error::Result,
    page::PAGE_SIZE,
};
use core::fmt;

/// Returns the address of the lockdep key sysfs gives the active reference of `attr`, a static
/// attribute whose `key` is null (so sysfs uses its `skey`), or 0 without
/// `CONFIG_DEBUG_LOCK_ALLOC`.
///
/// # Safety
///
/// `attr` must point to an `attribute`.
#[allow(unused_variables)]
pub(crate) unsafe fn attribute_lock_class_key(attr: *mut bindings::attribute) -> usize {
    #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
    {
        // SAFETY: by the caller `attr` points to an attribute; only a field's address is taken.
        unsafe { core::ptr::addr_of!((*attr).skey) as usize }
    }
    #[cfg(not(CONFIG_DEBUG_LOCK_ALLOC))]
    0
}

/// Returns the NULL-terminated array of attribute pointers an `attribute_group` points to.
///
/// The pointers must stay valid for as long as the group is registered.
pub(crate) fn attribute_pointers(
    attrs: impl ExactSizeIterator<Item = *mut bindings::attribute>,
) -> Result<KVec<*mut bindings::attribute>> {
    let mut v = KVec::with_capacity(attrs.len() + 1, GFP_KERNEL)?;
    for a in attrs {
        v.push(a, GFP_KERNEL)?;
    }
    v.push(core::ptr::null_mut(), GFP_KERNEL)?;
    Ok(v)
}

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
