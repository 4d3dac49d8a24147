// expect: compiles
// SPDX-License-Identifier: GPL-2.0

//! Control of `fail_bio_attrs_not_static.rs`: the attribute table is a `static`.

use kernel::{
    block::bio::{Attribute, Bio, Disk, DiskParams, GenDisk, Operations},
    c_str,
    prelude::*,
    sync::Arc,
    sysfs::SysfsBuf,
};

/// A disk that completes every bio at once.
pub struct Null;

#[vtable]
impl Operations for Null {
    fn submit_bio(&self, bio: Bio) {
        bio.end(Ok(()));
    }
}

fn show(_: &Null, _: &Disk, _: &mut SysfsBuf<'_>) -> Result {
    Ok(())
}

static ATTRS: [Attribute<Null>; 1] = [Attribute::ro(c_str!("a"), show)];

/// Registers a disk with a static attribute table.
pub fn f(module: &'static ThisModule, params: &DiskParams) -> Result<GenDisk<Null>> {
    GenDisk::new(
        module,
        params,
        format_args!("cf0"),
        Arc::new(Null, GFP_KERNEL)?,
        &ATTRS,
    )
}
