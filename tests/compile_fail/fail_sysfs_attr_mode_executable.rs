// expect: is not a valid sysfs attribute mode
// expect: sysfs attributes may not be world-writable nor executable
// SPDX-License-Identifier: GPL-2.0

//! A mode that others cannot write but that has execute bits (`0o755`, a directory's) is refused
//! at type-check time: `create_files()` in `fs/sysfs/group.c` warns about any bit outside
//! `0o664` and clears it. Documented at `kernel::sysfs::ValidMode`.

use kernel::{c_str, class::Class, prelude::*, sysfs::Attribute};

fn show(_: &u32, _: &(), _: &mut kernel::sysfs::SysfsBuf<'_>) -> Result {
    Ok(())
}

/// An attribute with execute bits.
pub static ATTRS: [Attribute<Class<u32>>; 1] =
    [Attribute::new::<0o755>(c_str!("a"), Some(show), None)];
