// expect: sysfs attributes may not be world-writable
// SPDX-License-Identifier: GPL-2.0

//! An attribute others may write is refused in a static table, at type-check time, as sysfs's
//! `VERIFY_OCTAL_PERMISSIONS()` refuses it in C. Documented at `kernel::sysfs::Attribute::new`;
//! `fail_sysfs_attr_mode_runtime.rs` builds one at run time.

use kernel::{c_str, class::Class, prelude::*, sysfs::Attribute};

fn store(_: &u32, _: &(), _: &CStr) -> Result {
    Ok(())
}

/// A world-writable attribute.
pub static ATTRS: [Attribute<Class<u32>>; 1] =
    [Attribute::new::<0o666>(c_str!("a"), None, Some(store))];
