// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_attrs_not_static.rs`: the attribute table is a `static`.

use kernel::{
    block::{
        bio::{Bio, Disk, GenDisk, Operations},
        GenDiskBuilder,
    },
    c_str,
    prelude::*,
    sync::Arc,
    sysfs::{Attribute, SysfsBuf},
};

/// A disk that completes every bio at once.
pub struct Null;

// SAFETY: a null module is what a built-in driver's `THIS_MODULE` holds. (A fixture: this file
// is only compiled.)
static BUILT_IN: ThisModule = unsafe { ThisModule::from_ptr(core::ptr::null_mut()) };

#[vtable]
impl Operations for Null {
    const OWNER: &'static ThisModule = &BUILT_IN;

    fn submit_bio(&self, bio: Bio) {
        bio.end(Ok(()));
    }
}

fn show(_: &Null, _: &Disk, _: &mut SysfsBuf<'_>) -> Result {
    Ok(())
}

static ATTRS: [Attribute<GenDisk<Null>>; 1] = [Attribute::ro(c_str!("a"), show)];

/// Registers a disk with a static attribute table.
pub fn f(builder: GenDiskBuilder) -> Result<GenDisk<Null>> {
    builder.build_bio(format_args!("cf0"), Arc::new(Null, GFP_KERNEL)?, &ATTRS)
}
