// SPDX-License-Identifier: GPL-2.0

//! rzram: a compressed RAM block device in Rust, compatible with zram's sysfs interface.
//!
//! Pages written to `/dev/rzram<N>` are compressed and stored in a zsmalloc pool; the device
//! works as swap (with `swap_slot_free_notify` and deferred frees) and as a disk. See
//! `Documentation/admin-guide/blockdev/rzram.rst`.
//!
//! This file is the module: its parameters and the control class with `hot_add` and
//! `hot_remove`. The device is in `device.rs`, the I/O path in `io.rs`, the slot table in
//! `slots.rs`, the statistics in `stats.rs` and the sysfs parsers in `parse.rs`.

mod device;
mod io;
mod parse;
mod slots;
mod stats;

use core::fmt::Write;
use device::Rzram;
use kernel::{
    block::bio::{DiskParams, GenDisk, Major},
    c_str,
    class::{Class, ClassAttribute},
    error::code::*,
    new_mutex,
    page::PAGE_SIZE,
    prelude::*,
    sync::Arc,
    sync::Mutex,
    sysfs::SysfsBuf,
};

module! {
    type: RzramModule,
    name: "rzram",
    author: "rzram developers",
    description: "Compressed RAM block device (Rust)",
    license: "GPL",
}

kernel::module_param!(
    rzram,
    num_devices,
    NUM_DEVICES: u32 = 1,
    0o444,
    "Number of pre-created rzram devices"
);
kernel::module_param!(
    rzram,
    compat,
    COMPAT: bool = false,
    0o444,
    "Name the devices zram<N> and the class zram-control (only without the C zram)"
);

#[cfg(CONFIG_PROVE_LOCKING)]
kernel::module_param!(
    rzram,
    lockdep_selftest,
    LOCKDEP_SELFTEST: bool = false,
    0o444,
    "Provoke a lockdep report on the slot lock at load (lockdep kernels; for tests)"
);

/// The most devices `hot_add` creates, as a bound on minor numbers.
const MAX_DEVICES: usize = 1 << 16;

/// The module's devices and what creating one needs.
#[pin_data]
struct Control {
    module: &'static ThisModule,
    major: Major,
    prefix: &'static str,
    /// Index `i` holds device `i`; removed devices leave `None`, reused by the next `hot_add`.
    #[pin]
    devices: Mutex<KVec<Option<GenDisk<Rzram>>>>,
}

impl Control {
    /// Creates a device with the lowest free id and returns the id.
    fn add(&self) -> Result<usize> {
        let mut devs = self.devices.lock();
        let id = devs.iter().position(Option::is_none).unwrap_or(devs.len());
        if id >= MAX_DEVICES {
            return Err(ENOSPC);
        }
        let params = DiskParams {
            logical_block_size: PAGE_SIZE as u32,
            physical_block_size: PAGE_SIZE as u32,
            io_min: PAGE_SIZE as u32,
            io_opt: PAGE_SIZE as u32,
            max_discard_sectors: u32::MAX,
            max_write_zeroes_sectors: u32::MAX,
            synchronous: true,
            stable_writes: true,
            major: self.major.number(),
            first_minor: id as i32,
            partitions: false,
            capacity_sectors: 0,
        };
        let disk = GenDisk::new(
            self.module,
            &params,
            format_args!("{}{}", self.prefix, id),
            Rzram::new()?,
            &device::ATTRS,
        )?;
        if id == devs.len() {
            devs.push(Some(disk), GFP_KERNEL)?;
        } else {
            devs[id] = Some(disk);
        }
        Ok(id)
    }

    /// Removes device `id`: `ENODEV` if there is none, `EBUSY` if it is open.
    fn remove(&self, id: usize) -> Result {
        let mut devs = self.devices.lock();
        let disk = devs.get_mut(id).and_then(Option::take).ok_or(ENODEV)?;
        let rz = disk.data().clone();
        if let Err(e) = rz.claim(&disk) {
            devs[id] = Some(disk);
            return Err(e);
        }
        rz.reset(&disk);
        drop(disk);
        Ok(())
    }
}

fn hot_add_show(c: &Arc<Control>, buf: &mut SysfsBuf<'_>) -> Result {
    let id = c.add()?;
    writeln!(buf, "{id}").map_err(|_| EINVAL)
}

fn hot_remove_store(c: &Arc<Control>, input: &[u8]) -> Result {
    let id = parse::kstrtoint(input)?;
    let id = usize::try_from(id).map_err(|_| EINVAL)?;
    c.remove(id)
}

/// `hot_add` is 0400: reading it creates a device, so only root may.
static CONTROL_ATTRS: [ClassAttribute<Arc<Control>>; 2] = [
    ClassAttribute::new(c_str!("hot_add"), 0o400, Some(hot_add_show), None),
    ClassAttribute::new(c_str!("hot_remove"), 0o200, None, Some(hot_remove_store)),
];

struct RzramModule {
    class: Option<Class<Arc<Control>>>,
    control: Arc<Control>,
}

impl kernel::Module for RzramModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let mut compat = COMPAT.get();
        if compat && cfg!(CONFIG_ZRAM) {
            pr_warn!("compat=1 ignored: the C zram is built into this kernel\n");
            compat = false;
        }
        let (name, class_name) = if compat {
            (c_str!("zram"), c_str!("zram-control"))
        } else {
            (c_str!("rzram"), c_str!("rzram-control"))
        };
        let major = Major::register(name)?;
        let control = Arc::pin_init(
            pin_init!(Control {
                module,
                major,
                prefix: if compat { "zram" } else { "rzram" },
                devices <- new_mutex!(KVec::new(), "rzram::devices"),
            }),
            GFP_KERNEL,
        )?;
        let class = Class::register(class_name, control.clone(), &CONTROL_ATTRS)?;
        // From here, an error drops `this`, which removes what was created.
        let this = RzramModule {
            class: Some(class),
            control,
        };
        for _ in 0..NUM_DEVICES.get() {
            this.control.add()?;
        }
        #[cfg(CONFIG_PROVE_LOCKING)]
        if LOCKDEP_SELFTEST.get() {
            io::Storage::new(
                c_str!("rzram_lockdep"),
                16 * PAGE_SIZE as u64,
                device::DEFAULT_ALGORITHM,
            )?
            .invert_lock_order()?;
        }
        pr_info!(
            "{} device(s) as {}<N>, control in /sys/class/{}\n",
            NUM_DEVICES.get(),
            this.control.prefix,
            class_name
        );
        Ok(this)
    }
}

impl Drop for RzramModule {
    fn drop(&mut self) {
        // No more hot_add or hot_remove, then the devices go.
        drop(self.class.take());
        let devices = core::mem::take(&mut *self.control.devices.lock());
        drop(devices);
    }
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_attrs)]
mod tests {
    use super::*;
    use kernel::{kunit_expect, kunit_expect_eq};

    /// Every sysfs attribute has a lockdep class of its own: with one class for all, removing a
    /// disk while its attributes are read is reported as recursive locking of `kn->active`.
    #[test]
    fn one_lock_class_per_attribute() -> Result {
        let mut keys = KVec::new();
        for a in device::ATTRS.iter() {
            keys.push(a.lock_class_key(), GFP_KERNEL)?;
        }
        for a in CONTROL_ATTRS.iter() {
            keys.push(a.lock_class_key(), GFP_KERNEL)?;
        }
        kunit_expect_eq!(keys.len(), device::ATTRS.len() + CONTROL_ATTRS.len());
        if cfg!(CONFIG_DEBUG_LOCK_ALLOC) {
            for (i, k) in keys.iter().enumerate() {
                kunit_expect!(*k != 0);
                kunit_expect!(!keys[..i].contains(k));
            }
        }
        Ok(())
    }
}
