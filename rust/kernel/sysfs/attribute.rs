// SPDX-License-Identifier: GPL-2.0

//! [`Attribute`]: one static table type for the attributes of disks and classes; see the
//! documentation of [`kernel::sysfs`](crate::sysfs).

use super::SysfsBuf;
use crate::{
    alloc::{flags::*, KBox, KVec},
    bindings,
    error::{code::*, Result},
    ffi::c_char,
    page::PAGE_SIZE,
    str::CStr,
    types::Opaque,
};
use core::{marker::PhantomPinned, pin::Pin};

/// An object that has a table of [`Attribute`]s.
///
/// Implemented by the abstractions that register attributes (disks, classes), not by drivers.
///
/// # Safety
///
/// - `Raw` is the C attribute type (`device_attribute`, `class_attribute`): a `struct attribute`
///   followed by a `show` of type `Option<CShow>` and a `store` of type `Option<CStore>`, which
///   is the layout of `Raw<Self>`.
/// - When sysfs calls `C_SHOW` or `C_STORE` with an attribute of a table registered on an
///   object of `Self`, they call `Attribute::show` or `Attribute::store` on that attribute
///   with the object's data and context, valid for the duration of the call.
pub unsafe trait AttributeOwner: Sized + 'static {
    /// The driver data the callbacks receive; sysfs runs callbacks concurrently.
    type Data: Sync;
    /// What the callbacks receive about the object besides its data (`()` for nothing).
    type Context: Sync;
    /// The C attribute type.
    type Raw;
    /// The C type of the attribute's `show`.
    type CShow: Copy + 'static;
    /// The C type of the attribute's `store`.
    type CStore: Copy + 'static;
    /// The C `show` of every attribute of `Self`.
    const C_SHOW: Self::CShow;
    /// The C `store` of every attribute of `Self`.
    const C_STORE: Self::CStore;
}

/// The `show` of an [`Attribute`]: writes the attribute's value into the buffer.
pub type ShowFn<O> =
    fn(&<O as AttributeOwner>::Data, &<O as AttributeOwner>::Context, &mut SysfsBuf<'_>) -> Result;

/// The `store` of an [`Attribute`]: parses the input and applies it.
///
/// The input is what C code sees of the write: its bytes up to the first `NUL` (sysfs ends every
/// write with one), so that the kernel's parsers ([`kstrtoull`](crate::str::kstrtoull) and the
/// others in [`crate::str`]) take it as it is.
pub type StoreFn<O> =
    fn(&<O as AttributeOwner>::Data, &<O as AttributeOwner>::Context, &CStr) -> Result;

/// The C attribute of an [`Attribute<O>`], laid out as `O::Raw`.
#[repr(C)]
pub(crate) struct Raw<O: AttributeOwner> {
    attr: bindings::attribute,
    show: Option<O::CShow>,
    store: Option<O::CStore>,
}

/// The permissions `MODE` of an [`Attribute`], as a type, so that [`ValidMode`] can tell valid
/// ones when the code that names them is type-checked.
pub struct Mode<const MODE: u16>;

/// Whether sysfs accepts `mode` for an attribute of a group: `VERIFY_OCTAL_PERMISSIONS()` holds
/// for it (at most `0o777`; the owner can read if the group can, and the group if others can; the
/// owner can write if the group can; others cannot write), and it has no bit outside `0o664`
/// (`create_files()` in `fs/sysfs/group.c` warns about, and clears, any other).
const fn is_valid_mode(mode: u16) -> bool {
    let (user, group, other) = ((mode >> 6) & 7, (mode >> 3) & 7, mode & 7);
    mode <= 0o777
        && (user & 4) >= (group & 4)
        && (group & 4) >= (other & 4)
        && (user & 2) >= (group & 2)
        && (other & 2) == 0
        && (mode & !0o664) == 0
}

/// Implemented for `Mode<MODE>` ([`Mode`]) exactly when sysfs accepts `MODE` for an attribute:
/// when `VERIFY_OCTAL_PERMISSIONS()` holds for it (others cannot write, the owner has the group's
/// permissions and the group has others' read) and it has no bit outside `0o664`, which
/// `fs/sysfs/group.c` warns about and clears (no execute bits). That is exactly the 12 modes
/// `0o000`, `0o200`, `0o220`, `0o400`, `0o440`, `0o444`, `0o600`, `0o620`, `0o640`, `0o644`,
/// `0o660` and `0o664`. Other crates can neither implement it nor make more modes valid: both
/// the trait and [`Mode`] are this crate's.
///
/// An invalid mode is a type error at the call of [`Attribute::new`], not a panic nor a
/// post-monomorphization error: it is reported wherever the call is, whether the attribute is
/// built in a `static` or at run time, even by `cargo check`-style builds that emit only
/// metadata.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid sysfs attribute mode",
    label = "sysfs attributes may not be world-writable nor executable, and a mode is one of \
             0o000, 0o200, 0o220, 0o400, 0o440, 0o444, 0o600, 0o620, 0o640, 0o644, 0o660, 0o664",
    note = "sysfs attributes may not be world-writable nor executable, and the owner must have \
            the group's permissions and the group others' read (VERIFY_OCTAL_PERMISSIONS())"
)]
pub trait ValidMode {}

// Exactly the modes for which `is_valid_mode` holds, as `Attribute::new` checks.
impl ValidMode for Mode<0o000> {}
impl ValidMode for Mode<0o200> {}
impl ValidMode for Mode<0o220> {}
impl ValidMode for Mode<0o400> {}
impl ValidMode for Mode<0o440> {}
impl ValidMode for Mode<0o444> {}
impl ValidMode for Mode<0o600> {}
impl ValidMode for Mode<0o620> {}
impl ValidMode for Mode<0o640> {}
impl ValidMode for Mode<0o644> {}
impl ValidMode for Mode<0o660> {}
impl ValidMode for Mode<0o664> {}

/// A sysfs attribute: the C attribute and the Rust `show` and `store` it forwards to.
///
/// Declare attributes in a `static` table (see [`kernel::sysfs`](crate::sysfs)); registering a
/// table that is not `'static` does not compile (checked by
/// `tests/compile_fail/fail_bio_attrs_not_static.rs`).
///
/// # Examples
///
/// ```
/// use core::fmt::Write;
/// use kernel::{c_str, class::Class, sysfs::Attribute};
///
/// fn show(v: &u32, _: &(), buf: &mut kernel::sysfs::SysfsBuf<'_>) -> Result {
///     writeln!(buf, "{v}").map_err(|_| EINVAL)
/// }
/// static ATTRS: [Attribute<Class<u32>>; 1] = [Attribute::ro(c_str!("answer"), show)];
/// ```
///
/// # Invariants
///
/// `raw`'s `show` and `store` are `O::C_SHOW` and `O::C_STORE` exactly when `show` and `store`
/// are set, and its name is a static C string.
#[repr(C)]
pub struct Attribute<O: AttributeOwner> {
    raw: Opaque<Raw<O>>,
    show: Option<ShowFn<O>>,
    store: Option<StoreFn<O>>,
}

// SAFETY: the C side only reads the attribute (and takes its lockdep key's address); the Rust
// callbacks are plain functions.
unsafe impl<O: AttributeOwner> Sync for Attribute<O> {}

impl<O: AttributeOwner> Attribute<O> {
    /// An attribute `name` with permissions `MODE`, `show` and `store`. Reading an attribute
    /// that has no `show`, or writing one that has no `store`, fails with `EIO`, as in C.
    ///
    /// `MODE` must be a mode sysfs accepts: one that `VERIFY_OCTAL_PERMISSIONS()` allows for C
    /// attributes (others cannot write; the owner has the group's permissions, and the group
    /// others' read) with no bit outside `0o664`, which sysfs's groups warn about and clear (no
    /// execute bits). The bound `Mode<MODE>: ValidMode` (see [`ValidMode`], which lists the 12
    /// such modes) checks it when the caller is type-checked, wherever the attribute is built: in
    /// a `static`, in a function run at any time, or in code that is never run (checked by
    /// `tests/compile_fail/fail_sysfs_attr_world_writable.rs`, `fail_sysfs_attr_mode_runtime.rs`
    /// and `fail_sysfs_attr_mode_executable.rs`).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, class::Class, str::CStr, sysfs::Attribute};
    ///
    /// fn store(_: &u32, _: &(), _: &CStr) -> Result {
    ///     Ok(())
    /// }
    /// // Only its owner may write it; it cannot be read.
    /// static ATTRS: [Attribute<Class<u32>>; 1] =
    ///     [Attribute::new::<0o200>(c_str!("poke"), None, Some(store))];
    /// ```
    pub const fn new<const MODE: u16>(
        name: &'static CStr,
        show: Option<ShowFn<O>>,
        store: Option<StoreFn<O>>,
    ) -> Self
    where
        Mode<MODE>: ValidMode,
    {
        const {
            assert!(core::mem::size_of::<Raw<O>>() == core::mem::size_of::<O::Raw>());
            assert!(core::mem::align_of::<Raw<O>>() == core::mem::align_of::<O::Raw>());
            // The bound already guarantees it; this checks the impls of `ValidMode` too.
            assert!(is_valid_mode(MODE), "not a mode sysfs accepts");
        }
        // SAFETY: all zeroes is a valid `attribute`: no name, no lockdep key.
        let mut attr: bindings::attribute = unsafe { core::mem::zeroed() };
        attr.name = name.as_char_ptr();
        attr.mode = MODE;
        // INVARIANT: the C callbacks are set exactly for the Rust ones; the name is static.
        Attribute {
            raw: Opaque::new(Raw {
                attr,
                show: if show.is_some() {
                    Some(O::C_SHOW)
                } else {
                    None
                },
                store: if store.is_some() {
                    Some(O::C_STORE)
                } else {
                    None
                },
            }),
            show,
            store,
        }
    }

    /// A read-only attribute (0444).
    pub const fn ro(name: &'static CStr, show: ShowFn<O>) -> Self {
        Self::new::<0o444>(name, Some(show), None)
    }

    /// A write-only attribute (0200).
    pub const fn wo(name: &'static CStr, store: StoreFn<O>) -> Self {
        Self::new::<0o200>(name, None, Some(store))
    }

    /// A read-write attribute (0644).
    pub const fn rw(name: &'static CStr, show: ShowFn<O>, store: StoreFn<O>) -> Self {
        Self::new::<0o644>(name, Some(show), Some(store))
    }

    /// Returns the `struct attribute` inside the C attribute.
    fn as_raw(&self) -> *mut bindings::attribute {
        // The `attribute` is the first field of `Raw`, which `Opaque` wraps transparently.
        self.raw.get().cast()
    }

    /// Returns the address of the lockdep key sysfs gives this attribute's active reference, or
    /// 0 without `CONFIG_DEBUG_LOCK_ALLOC`. Distinct attributes have distinct keys.
    pub fn lock_class_key(&self) -> usize {
        #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
        {
            // SAFETY: `as_raw` points to the attribute inside `self`; only a field's address is
            // taken.
            unsafe { core::ptr::addr_of!((*self.as_raw()).skey) as usize }
        }
        #[cfg(not(CONFIG_DEBUG_LOCK_ALLOC))]
        0
    }

    /// Returns the attribute whose C attribute `raw` is.
    ///
    /// # Safety
    ///
    /// `raw` must point to the C attribute of an `Attribute<O>` that lives for `'a` (sysfs passes
    /// its callbacks one of the attributes registered, which are `'static`).
    pub(crate) unsafe fn from_raw<'a>(raw: *const O::Raw) -> &'a Self {
        // SAFETY: the C attribute is the first field of the `#[repr(C)]` `Attribute<O>` (`Opaque`
        // is transparent); it lives for `'a` by the caller's promise.
        unsafe { &*raw.cast::<Self>() }
    }

    /// Runs `show` for sysfs: returns the length written into `buf`, or an error code.
    ///
    /// # Safety
    ///
    /// `buf` must be the page-sized buffer sysfs hands a `show`.
    pub(crate) unsafe fn show(&self, data: &O::Data, ctx: &O::Context, buf: *mut c_char) -> isize {
        let Some(show) = self.show else {
            return EIO.to_errno() as isize;
        };
        // SAFETY: sysfs gives a `show` a page-sized buffer, by the caller's promise, which
        // nothing else uses during the call.
        let page = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), PAGE_SIZE) };
        let mut out = SysfsBuf::new(page);
        match show(data, ctx, &mut out) {
            Ok(()) => out.len() as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// Runs `store` for sysfs: returns `count`, or an error code.
    ///
    /// # Safety
    ///
    /// `buf` must point to `count` bytes and a `NUL` after them, that stay unchanged during the
    /// call, as sysfs hands a `store` (`kernfs_fop_write_iter()` adds the `NUL`).
    pub(crate) unsafe fn store(
        &self,
        data: &O::Data,
        ctx: &O::Context,
        buf: *const c_char,
        count: usize,
    ) -> isize {
        let Some(store) = self.store else {
            return EIO.to_errno() as isize;
        };
        // SAFETY: `buf` is a `NUL`-terminated string (of at most `count` bytes before its first
        // `NUL`) that stays unchanged during the call, by the caller's promise.
        let input = unsafe { CStr::from_char_ptr(buf) };
        match store(data, ctx, input) {
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }
}

/// The attribute group of a table, and the null-terminated group list that points to it, as
/// `device_add_disk()` and `class_register()` take them.
///
/// # Invariants
///
/// `group.attrs` points to `ptrs`, which holds the C attributes of a `'static` table followed by
/// a null pointer, and `groups` holds `&group` followed by a null pointer. It is pinned, so these
/// pointers stay valid while it lives.
pub(crate) struct Group {
    ptrs: KVec<*mut bindings::attribute>,
    group: bindings::attribute_group,
    groups: [*const bindings::attribute_group; 2],
    _pin: PhantomPinned,
}

// SAFETY: the group is only read, by sysfs, after it is set up.
unsafe impl Send for Group {}

// SAFETY: as above.
unsafe impl Sync for Group {}

impl Group {
    /// A group of the attributes of `attrs`.
    pub(crate) fn new<O: AttributeOwner>(
        attrs: &'static [Attribute<O>],
    ) -> Result<Pin<KBox<Self>>> {
        let mut ptrs = KVec::with_capacity(attrs.len() + 1, GFP_KERNEL)?;
        for a in attrs {
            ptrs.push(a.as_raw(), GFP_KERNEL)?;
        }
        ptrs.push(core::ptr::null_mut(), GFP_KERNEL)?;
        let mut g = KBox::pin(
            Group {
                ptrs,
                // SAFETY: all zeroes is a valid `attribute_group`: no name, no callbacks.
                group: unsafe { core::mem::zeroed() },
                groups: [core::ptr::null(); 2],
                _pin: PhantomPinned,
            },
            GFP_KERNEL,
        )?;
        // SAFETY: the fields are filled in place and the group is never moved out of its box.
        let this = unsafe { g.as_mut().get_unchecked_mut() };
        this.group.attrs = this.ptrs.as_mut_ptr();
        this.groups[0] = core::ptr::addr_of!(this.group);
        // INVARIANT: the pointers were set up just now, in the pinned box.
        Ok(g)
    }

    /// Returns the null-terminated list of groups, valid while `self` lives.
    pub(crate) fn groups(&self) -> *mut *const bindings::attribute_group {
        self.groups.as_ptr().cast_mut()
    }
}
