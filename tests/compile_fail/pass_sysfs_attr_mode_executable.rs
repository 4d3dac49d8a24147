// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_sysfs_attr_mode_executable.rs`: the same permissions without execute bits.

use kernel::{c_str, class::Class, prelude::*, sysfs::Attribute};

fn show(_: &u32, _: &(), _: &mut kernel::sysfs::SysfsBuf<'_>) -> Result {
    Ok(())
}

/// An attribute without execute bits.
pub static ATTRS: [Attribute<Class<u32>>; 1] =
    [Attribute::new::<0o644>(c_str!("a"), Some(show), None)];
