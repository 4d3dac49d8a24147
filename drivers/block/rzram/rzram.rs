// SPDX-License-Identifier: GPL-2.0

//! rzram: a compressed RAM block device in Rust, compatible with zram's sysfs interface.
//!
//! Pages written to `/dev/rzram<N>` are compressed and stored in a zsmalloc pool; the device
//! works as swap (with `swap_slot_free_notify` and deferred frees) and as a disk. See
//! `Documentation/admin-guide/blockdev/rzram.rst`.
//!
//! This file is the module: its parameters and the control class with `hot_add` and
//! `hot_remove`. The other files, each using only those listed before it:
//!
//! - `args.rs`: the attributes' grammars, on the kernel's parsers (`kernel::str`);
//!   `state.rs`: a slot's state in its lock word; `stats.rs`: the statistics; `bitmaps.rs`: the
//!   backing device's blocks in use and the stale slots;
//! - `slots.rs`: the slot table; `candidates.rs`: post-processing's candidates in it;
//!   `config.rs`: what `disksize` initialises with; `streams.rs`: a CPU's compression streams;
//!   `swap_free.rs`: swap's frees, deferred;
//! - `storage.rs`: a device's compressed memory, pages in and out, written-back ones included
//!   (its KUnit tests in `storage_tests.rs`);
//! - `recompress.rs`: recompression; `writeback.rs`: writeback to a backing device;
//! - `device.rs`: a device's state and lifecycle; `io.rs`: its bios; `attrs.rs`: its sysfs
//!   attributes; `block_state.rs`: its `block_state` debugfs file.
//!
//! # Lock order
//!
//! The device list mutex (`Control::devices`), held by `hot_add` and `hot_remove` and at unload,
//! comes before every lock of a device (`device.rs`).

mod args;
mod attrs;
mod bitmaps;
#[cfg(CONFIG_DEBUG_FS)]
mod block_state;
mod candidates;
mod config;
mod device;
mod io;
mod recompress;
mod slots;
mod state;
mod stats;
mod storage;
#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
mod storage_tests;
mod streams;
mod swap_free;
mod writeback;

use core::fmt::Write;
use device::Rzram;
use kernel::{
    block::{bio::GenDisk, major::Major, GenDiskBuilder},
    c_str,
    class::Class,
    error::code::*,
    new_mutex,
    page::PAGE_SIZE,
    prelude::*,
    str::kstrtoint,
    sync::Arc,
    sync::Mutex,
    sysfs::{Attribute, SysfsBuf},
};

/// The module's declaration: `$name` is the module's name, `$test_params` the parameters of test
/// builds.
macro_rules! rzram_module {
    ($name:tt $($test_params:tt)*) => {
        module! {
            type: RzramModule,
            name: $name,
            author: "rzram developers",
            description: "Compressed RAM block device (Rust)",
            license: "GPL",
            params: {
                num_devices: u32 {
                    default: 1,
                    description: "Number of pre-created devices",
                },
                compat: bool {
                    default: cfg!(CONFIG_ZRAM_DRIVER_RUST),
                    description: "Devices zram<N>, class zram-control (no C zram)",
                },
                $($test_params)*
            },
        }
    };
}

/// [`rzram_module`] with the test-only parameter `lockdep_selftest` if
/// `CONFIG_RZRAM_LOCKDEP_SELFTEST` is set.
#[cfg(CONFIG_RZRAM_LOCKDEP_SELFTEST)]
macro_rules! rzram_module_for_this_build {
    ($name:tt) => {
        rzram_module!($name
            lockdep_selftest: bool {
                default: false,
                description: "Provoke a lockdep report on the slot lock (tests)",
            },
        );
    };
}
#[cfg(not(CONFIG_RZRAM_LOCKDEP_SELFTEST))]
macro_rules! rzram_module_for_this_build {
    ($name:tt) => {
        rzram_module!($name);
    };
}

// As zram's driver (`CONFIG_ZRAM_DRIVER_RUST`: `zram.ko`, or built in as zram) the module is
// zram, with zram's names by default; otherwise it is rzram.
#[cfg(CONFIG_ZRAM_DRIVER_RUST)]
rzram_module_for_this_build!("zram");
#[cfg(not(CONFIG_ZRAM_DRIVER_RUST))]
rzram_module_for_this_build!("rzram");

/// The most devices `hot_add` creates, as a bound on minor numbers.
const MAX_DEVICES: usize = 1 << 16;

/// A device as the module registered it: its disk and its debugfs file; dropping it removes
/// both.
struct Registration {
    /// Removed before the disk (fields drop in order).
    #[cfg(CONFIG_DEBUG_FS)]
    _block_state: kernel::debugfs::File<block_state::BlockState>,
    disk: GenDisk<Rzram>,
}

/// debugfs's directory of the module's devices: nothing without debugfs.
#[cfg(CONFIG_DEBUG_FS)]
type DebugfsDir = kernel::debugfs::Dir;
#[cfg(not(CONFIG_DEBUG_FS))]
type DebugfsDir = ();

#[cfg(CONFIG_DEBUG_FS)]
fn debugfs_dir(name: &CStr) -> DebugfsDir {
    kernel::debugfs::Dir::new(name)
}
#[cfg(not(CONFIG_DEBUG_FS))]
fn debugfs_dir(_name: &CStr) -> DebugfsDir {}

/// The module's devices and what creating one needs.
#[pin_data]
struct Control {
    major: Major,
    prefix: &'static str,
    /// debugfs's `zram` or `rzram` directory, as the devices are named.
    debugfs: DebugfsDir,
    /// Index `i` holds device `i`; removed devices leave `None`, reused by the next `hot_add`.
    #[pin]
    devices: Mutex<KVec<Option<Registration>>>,
}

impl Control {
    /// Creates a device with the lowest free id and returns the id.
    fn add(&self) -> Result<usize> {
        let mut devs = self.devices.lock();
        let id = devs.iter().position(Option::is_none).unwrap_or(devs.len());
        if id >= MAX_DEVICES {
            return Err(ENOSPC);
        }
        // zram's limits: a page is the logical block, discard and write-zeroes of any size.
        let disk = GenDiskBuilder::new()
            .logical_block_size(PAGE_SIZE as u32)?
            .physical_block_size(PAGE_SIZE as u32)?
            .io_min(PAGE_SIZE as u32)?
            .io_opt(PAGE_SIZE as u32)?
            .max_discard_sectors(u32::MAX)
            .max_write_zeroes_sectors(u32::MAX)
            .synchronous(true)
            .stable_writes(true)
            .devt(&self.major, id as u32)?
            .build_bio(
                format_args!("{}{}", self.prefix, id),
                Rzram::new()?,
                &attrs::ATTRS,
            )?;
        let dev = Registration {
            #[cfg(CONFIG_DEBUG_FS)]
            _block_state: self.debugfs.subdir(disk.name()).records_file(
                c_str!("block_state"),
                Arc::new(block_state::BlockState(disk.data().clone()), GFP_KERNEL)?,
            )?,
            disk,
        };
        if id == devs.len() {
            devs.push(Some(dev), GFP_KERNEL)?;
        } else {
            devs[id] = Some(dev);
        }
        pr_info!("Added device: {}{}\n", self.prefix, id);
        Ok(id)
    }

    /// Removes device `id`: `ENODEV` if there is none, `EBUSY` if it is open. A reset under way
    /// finishes first, as in zram.
    fn remove(&self, id: usize) -> Result {
        let mut devs = self.devices.lock();
        let dev = devs.get_mut(id).and_then(Option::take).ok_or(ENODEV)?;
        let rz = dev.disk.data().clone();
        if let Err(e) = rz.claim_for_removal(&dev.disk) {
            devs[id] = Some(dev);
            return Err(e);
        }
        rz.reset(&dev.disk);
        drop(dev);
        pr_info!("Removed device: {}{}\n", self.prefix, id);
        Ok(())
    }
}

fn hot_add_show(c: &Arc<Control>, _: &(), buf: &mut SysfsBuf<'_>) -> Result {
    let id = c.add()?;
    writeln!(buf, "{id}").map_err(|_| EINVAL)
}

fn hot_remove_store(c: &Arc<Control>, _: &(), input: &CStr) -> Result {
    let id = kstrtoint(input, 10)?;
    let id = usize::try_from(id).map_err(|_| EINVAL)?;
    c.remove(id)
}

/// `hot_add` is 0400: reading it creates a device, so only root may.
static CONTROL_ATTRS: [Attribute<Class<Arc<Control>>>; 2] = [
    Attribute::new::<0o400>(c_str!("hot_add"), Some(hot_add_show), None),
    Attribute::wo(c_str!("hot_remove"), hot_remove_store),
];

struct RzramModule {
    class: Option<Class<Arc<Control>>>,
    control: Arc<Control>,
}

impl kernel::Module for RzramModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let mut compat = *module_parameters::compat.value();
        // The C zram, built in or a module: `CONFIG_ZRAM` is set for both (and for zram of either
        // driver).
        if compat && cfg!(CONFIG_ZRAM) && !cfg!(CONFIG_ZRAM_DRIVER_RUST) {
            pr_warn!("compat=1 ignored: this kernel has the C zram, whose names would clash\n");
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
                major,
                prefix: if compat { "zram" } else { "rzram" },
                debugfs: debugfs_dir(name),
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
        let num_devices = *module_parameters::num_devices.value();
        for _ in 0..num_devices {
            this.control.add()?;
        }
        #[cfg(CONFIG_RZRAM_LOCKDEP_SELFTEST)]
        if *module_parameters::lockdep_selftest.value() {
            lockdep_selftest()?;
        }
        pr_info!(
            "{} device(s) as {}<N>, control in /sys/class/{}\n",
            num_devices,
            this.control.prefix,
            class_name
        );
        Ok(this)
    }
}

/// `rzram.lockdep_selftest=1` (`CONFIG_RZRAM_LOCKDEP_SELFTEST`, a test build's): takes a slot
/// lock and then a CPU's compression stream, the documented order (a read does it), then the
/// stream and then a slot lock, so that lockdep reports the inversion: the test of the slot
/// lock's lockdep annotation. The report turns lockdep off for the rest of the boot.
#[cfg(CONFIG_RZRAM_LOCKDEP_SELFTEST)]
fn lockdep_selftest() -> Result {
    let storage = storage::Storage::new(
        c_str!("rzram_lockdep"),
        16 * PAGE_SIZE as u64,
        config::DEFAULT_ALGORITHM,
    )?;
    let mut page = KVec::from_elem(0x5au8, PAGE_SIZE, GFP_KERNEL)?;
    let mut out = KVec::from_elem(0u8, PAGE_SIZE, GFP_KERNEL)?;
    // Compressible but not same-filled, so that the read takes the stream under the slot lock.
    page[0] = 1;
    storage.write_page(0, &page, 0)?;
    storage.read_page(0, &mut out)?;
    pr_info!("lockdep self-test: inverted order: stream, then slot lock\n");
    storage.streams().with(|_| {
        drop(storage.table().lock(0));
        Ok(())
    })
}

impl Drop for RzramModule {
    fn drop(&mut self) {
        // No more hot_add or hot_remove, then the devices go.
        drop(self.class.take());
        let devices = core::mem::take(&mut *self.control.devices.lock());
        for (id, dev) in devices.into_iter().enumerate() {
            if let Some(dev) = dev {
                drop(dev);
                pr_info!("Removed device: {}{}\n", self.control.prefix, id);
            }
        }
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
        for a in attrs::ATTRS.iter() {
            keys.push(a.lock_class_key(), GFP_KERNEL)?;
        }
        for a in CONTROL_ATTRS.iter() {
            keys.push(a.lock_class_key(), GFP_KERNEL)?;
        }
        kunit_expect_eq!(keys.len(), attrs::ATTRS.len() + CONTROL_ATTRS.len());
        if cfg!(CONFIG_DEBUG_LOCK_ALLOC) {
            for (i, k) in keys.iter().enumerate() {
                kunit_expect!(*k != 0);
                kunit_expect!(!keys[..i].contains(k));
            }
        }
        Ok(())
    }
}
