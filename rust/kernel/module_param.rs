// SPDX-License-Identifier: GPL-2.0

//! Module parameters: `name=value` on `insmod`/`modprobe`, or `module.name=value` on the kernel
//! command line when the module is built in.
//!
//! Parameters are declared in the `params` section of [`module!`](macros::module), in the shape
//! of the module parameters upstream has since merged, so that a rebase onto them is a deletion:
//!
//! ```ignore
//! module! {
//!     type: MyModule,
//!     name: "my_module",
//!     license: "GPL",
//!     params: {
//!         num_devices: u32 {
//!             default: 1,
//!             description: "Number of devices created at load",
//!         },
//!     },
//! }
//!
//! let n = *module_parameters::num_devices.value();
//! ```
//!
//! The kernel parses them with the same parsers as C's `module_param()` (`param_ops_uint`,
//! `param_ops_bool`, ...) before the module's `init` runs, and shows them read-only in
//! `/sys/module/<module>/parameters/<name>`; `modinfo` lists them with their descriptions.
//!
//! C header: [`include/linux/moduleparam.h`](srctree/include/linux/moduleparam.h)

use crate::{bindings, ffi::c_void, str::CStr};
use core::cell::UnsafeCell;

/// A type a module parameter can have: its value is what the C parser of `OPS` writes.
///
/// # Safety
///
/// `OPS` points to a static `kernel_param_ops` whose `set` writes a valid `Self` to `kp->arg` and
/// whose `get` reads one from there.
pub unsafe trait ModuleParam: Copy + Send + Sync + 'static {
    /// The C parser and printer of the type.
    const OPS: *const bindings::kernel_param_ops;
}

macro_rules! impl_module_param {
    ($($t:ty => $ops:ident),* $(,)?) => {
        $(
            // SAFETY: the C parser writes, and the printer reads, a C value of the same size,
            // signedness and validity as the Rust type.
            unsafe impl ModuleParam for $t {
                const OPS: *const bindings::kernel_param_ops = &raw const bindings::$ops;
            }
        )*
    };
}

impl_module_param!(
    u8 => param_ops_byte,
    i16 => param_ops_short,
    u16 => param_ops_ushort,
    i32 => param_ops_int,
    u32 => param_ops_uint,
    u64 => param_ops_ullong,
    isize => param_ops_long,
    usize => param_ops_ulong,
    bool => param_ops_bool,
);

/// The value of a module parameter, as [`module!`](macros::module) declares it in the module's
/// `module_parameters`.
///
/// # Invariants
///
/// `value` is written only by the kernel's parameter parsing, which finishes before the module's
/// code runs: at boot for a built-in module (`parse_args()` in `start_kernel()`), before `init` for
/// a loadable one (`load_module()`). Nothing writes it afterwards: its `kernel_param` has no write
/// permission, so sysfs installs no `store` for it (`add_sysfs_param()` in `kernel/params.c`; a
/// later `chmod` of the file does not add one).
pub struct ModuleParamAccess<T> {
    value: UnsafeCell<T>,
}

// SAFETY: the value is not written while the module's code can read it (type invariant).
unsafe impl<T: ModuleParam> Sync for ModuleParamAccess<T> {}

impl<T: ModuleParam> ModuleParamAccess<T> {
    /// The storage of a parameter, holding `default` until the kernel parses a value.
    #[doc(hidden)]
    pub const fn new(default: T) -> Self {
        // INVARIANT: nothing writes the value but the parser its `KernelParam`, read-only, sets
        // up (`KernelParam::new`'s contract).
        ModuleParamAccess {
            value: UnsafeCell::new(default),
        }
    }

    /// Returns the value: the default, or what was given on the command line or at load.
    pub fn value(&self) -> &T {
        // SAFETY: nothing writes the value any more once the module's code runs (type
        // invariant).
        unsafe { &*self.value.get() }
    }
}

/// An entry of the `__param` section, which the kernel parses parameters with; emitted by
/// [`module!`](macros::module).
#[doc(hidden)]
#[repr(transparent)]
pub struct KernelParam(bindings::kernel_param);

// SAFETY: the entry is immutable after construction; the kernel only reads it.
unsafe impl Sync for KernelParam {}

impl KernelParam {
    /// The entry of the parameter `name` of `module` (null when built in), stored in `value`,
    /// readable by everyone in sysfs and writable by nobody.
    ///
    /// # Safety
    ///
    /// `module` is null or points to the `struct module` of the module the entry is in (C
    /// dereferences it to find the module's parameter lock), and `value` is registered by this
    /// entry only.
    #[doc(hidden)]
    pub const unsafe fn new<T: ModuleParam>(
        name: &'static CStr,
        module: *mut bindings::module,
        value: &'static ModuleParamAccess<T>,
    ) -> Self {
        KernelParam(bindings::kernel_param {
            name: name.as_char_ptr(),
            mod_: module,
            ops: T::OPS,
            // Read-only: the value must not change once the module's code runs.
            perm: 0o444,
            level: -1,
            flags: 0,
            __bindgen_anon_1: bindings::kernel_param__bindgen_ty_1 {
                arg: value.value.get().cast::<c_void>(),
            },
        })
    }
}
