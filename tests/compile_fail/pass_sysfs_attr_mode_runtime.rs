// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_sysfs_attr_mode_runtime.rs`: only the owner may write.

use kernel::{c_str, class::Class, prelude::*, sysfs::Attribute};

fn store(_: &u32, _: &(), _: &CStr) -> Result {
    Ok(())
}

/// Builds an attribute only its owner may write on the stack, at run time.
pub fn attr() -> Attribute<Class<u32>> {
    Attribute::new::<0o644>(c_str!("a"), None, Some(store))
}
