// expect: error[E0597]: `attrs` does not live long enough
// expect: argument requires that `attrs` is borrowed for `'static`
// SPDX-License-Identifier: GPL-2.0

//! A disk's attribute table must be `'static`: the block core uses the C attributes after the
//! `GenDisk` is dropped. Documented at `kernel::sysfs::Attribute` and `GenDiskBuilder::build_bio`.

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

/// Registers a disk with an attribute table on the stack.
pub fn f(builder: GenDiskBuilder) -> Result<GenDisk<Null>> {
    let attrs = [Attribute::ro(c_str!("a"), show)];
    builder.build_bio(format_args!("cf0"), Arc::new(Null, GFP_KERNEL)?, &attrs)
}
