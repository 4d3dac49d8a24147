// expect: sysfs attributes may not be world-writable
// expect: is not a valid sysfs attribute mode
// SPDX-License-Identifier: GPL-2.0

//! An attribute others may write is refused even when it is built at run time, in a function
//! rather than a static: the mode is checked when the call is type-checked, not evaluated (a
//! run-time `assert!` would panic, and a post-monomorphization check would escape builds that
//! emit only metadata, as this test's). Documented at `kernel::sysfs::Attribute::new`.

use kernel::{c_str, class::Class, prelude::*, sysfs::Attribute};

fn store(_: &u32, _: &(), _: &CStr) -> Result {
    Ok(())
}

/// Builds a world-writable attribute on the stack, at run time.
pub fn attr() -> Attribute<Class<u32>> {
    Attribute::new::<0o666>(c_str!("a"), None, Some(store))
}
