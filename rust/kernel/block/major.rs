// SPDX-License-Identifier: GPL-2.0

//! Block device major numbers.
//!
//! C header: [`include/linux/blkdev.h`](srctree/include/linux/blkdev.h)

use crate::{
    bindings,
    error::{Error, Result},
    ffi::c_uint,
    str::CStr,
};

/// A block device major number, registered with `register_blkdev()`; unregistered on drop.
///
/// Give it to [`GenDiskBuilder::devt`](crate::block::GenDiskBuilder::devt) to number a disk
/// `major:minor`.
///
/// # Invariants
///
/// `major` is registered under `name`.
pub struct Major {
    major: u32,
    name: &'static CStr,
}

impl Major {
    /// Registers a dynamically allocated major number for `name`.
    pub fn register(name: &'static CStr) -> Result<Self> {
        // SAFETY: `name` is a static string; no probe callback is given.
        let ret = unsafe { bindings::__register_blkdev(0, name.as_char_ptr(), None) };
        if ret < 0 {
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered just now.
        Ok(Major {
            major: ret as u32,
            name,
        })
    }

    /// Returns the number.
    pub fn number(&self) -> u32 {
        self.major
    }
}

impl Drop for Major {
    fn drop(&mut self) {
        // SAFETY: registered in `register`, unregistered once here.
        unsafe { bindings::unregister_blkdev(self.major as c_uint, self.name.as_char_ptr()) };
    }
}
