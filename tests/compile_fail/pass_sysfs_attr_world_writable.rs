// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_sysfs_attr_world_writable.rs`: only the owner may write.

use kernel::{c_str, class::Class, prelude::*, sysfs::Attribute};

fn store(_: &u32, _: &(), _: &CStr) -> Result {
    Ok(())
}

/// An attribute only its owner may write.
pub static ATTRS: [Attribute<Class<u32>>; 1] =
    [Attribute::new::<0o644>(c_str!("a"), None, Some(store))];
