// SPDX-License-Identifier: GPL-2.0

//! Module parameters: `name=value` on `insmod`, or `module.name=value` on the kernel command line
//! when the module is built in.
//!
//! [`module_param!`](macro@crate::module_param) declares a parameter backed by a static of one of the
//! types here. The kernel parses it before the module's `init` runs, with the same parsers as C's
//! `module_param()`, and shows it in `/sys/module/<module>/parameters/<name>` with the given
//! permissions.
//!
//! C header: [`include/linux/moduleparam.h`](srctree/include/linux/moduleparam.h)

use crate::{bindings, str::CStr};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// An entry of the `__param` section that the kernel parses parameters with.
#[repr(transparent)]
pub struct KernelParam(bindings::kernel_param);

// SAFETY: the entry is immutable after construction; the kernel only reads it.
unsafe impl Sync for KernelParam {}

impl KernelParam {
    /// An entry for the `u32` parameter `name` of `module` (null when built in) stored in `value`,
    /// with sysfs permissions `perm`.
    ///
    /// # Safety
    ///
    /// `module` is null or points to the `struct module` of the module the entry is in (C
    /// dereferences it to find the module's parameter lock).
    pub const unsafe fn new_u32(
        name: &'static CStr,
        value: &'static ParamU32,
        perm: u16,
        module: *mut bindings::module,
    ) -> Self {
        Self::new(
            name,
            module,
            &raw const bindings::param_ops_uint,
            value.0.as_ptr().cast(),
            perm,
        )
    }

    /// An entry for the `bool` parameter `name` of `module` (null when built in) stored in
    /// `value`.
    ///
    /// # Safety
    ///
    /// As for [`new_u32`](Self::new_u32).
    pub const unsafe fn new_bool(
        name: &'static CStr,
        value: &'static ParamBool,
        perm: u16,
        module: *mut bindings::module,
    ) -> Self {
        Self::new(
            name,
            module,
            &raw const bindings::param_ops_bool,
            value.0.as_ptr().cast(),
            perm,
        )
    }

    const fn new(
        name: &'static CStr,
        module: *mut bindings::module,
        ops: *const bindings::kernel_param_ops,
        arg: *mut crate::ffi::c_void,
        perm: u16,
    ) -> Self {
        KernelParam(bindings::kernel_param {
            name: name.as_char_ptr(),
            // The owning module: the parameter's sysfs file takes its parameter lock.
            mod_: module,
            ops,
            perm,
            level: -1,
            flags: 0,
            __bindgen_anon_1: bindings::kernel_param__bindgen_ty_1 { arg },
        })
    }
}

/// The storage of a `u32` parameter (`param_ops_uint`).
pub struct ParamU32(AtomicU32);

impl ParamU32 {
    /// Creates the storage with the default value.
    pub const fn new(default: u32) -> Self {
        ParamU32(AtomicU32::new(default))
    }

    /// Returns the value.
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The storage of a `bool` parameter (`param_ops_bool`: `y`, `n`, `1`, `0`, ...).
pub struct ParamBool(AtomicBool);

impl ParamBool {
    /// Creates the storage with the default value.
    pub const fn new(default: bool) -> Self {
        ParamBool(AtomicBool::new(default))
    }

    /// Returns the value.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Declares a module parameter.
///
/// `module_param!(module, name, NAME: u32 = default, perm, "description")` defines the static
/// `NAME` (a [`ParamU32`]; `bool` gives a [`ParamBool`]) and registers it as the parameter `name`:
/// `module.name=` on the command line when built in, `name=` when loaded. The description becomes
/// the static's documentation; `modinfo` does not show it.
///
/// # Examples
///
/// ```ignore
/// kernel::module_param!(rzram, num_devices, NUM_DEVICES: u32 = 1, 0o444, "devices at load");
///
/// let n = NUM_DEVICES.get();
/// ```
#[macro_export]
macro_rules! module_param {
    ($module:ident, $pname:ident, $name:ident : u32 = $default:expr, $perm:expr, $desc:literal) => {
        #[doc = $desc]
        static $name: $crate::module_param::ParamU32 = $crate::module_param::ParamU32::new($default);
        $crate::module_param!(@entry $module, $pname, $name, new_u32, $perm);
    };
    ($module:ident, $pname:ident, $name:ident : bool = $default:expr, $perm:expr, $desc:literal) => {
        #[doc = $desc]
        static $name: $crate::module_param::ParamBool =
            $crate::module_param::ParamBool::new($default);
        $crate::module_param!(@entry $module, $pname, $name, new_bool, $perm);
    };
    (@entry $module:ident, $pname:ident, $name:ident, $new:ident, $perm:expr) => {
        const _: () = {
            #[used]
            #[link_section = "__param"]
            static PARAM: $crate::module_param::KernelParam = {
                let module = $crate::module_param!(@this_module);
                let name = if cfg!(MODULE) {
                    $crate::c_str!(::core::stringify!($pname))
                } else {
                    $crate::c_str!(::core::concat!(
                        ::core::stringify!($module),
                        ".",
                        ::core::stringify!($pname)
                    ))
                };
                // SAFETY: `module` is this module's `__this_module`, or null when built in.
                unsafe { $crate::module_param::KernelParam::$new(name, &$name, $perm, module) }
            };
        };
    };
    // The module the parameter belongs to, as `THIS_MODULE` in C: `__this_module` when built as
    // a module, null when built in.
    (@this_module) => {{
        #[cfg(MODULE)]
        let module = {
            extern "C" {
                static __this_module: $crate::types::Opaque<$crate::bindings::module>;
            }
            // SAFETY: only the address of the module's `struct module` is taken; the module
            // loader provides it, and it lives as long as the module.
            unsafe { __this_module.get() }
        };
        #[cfg(not(MODULE))]
        let module = ::core::ptr::null_mut();
        module
    }};
}
