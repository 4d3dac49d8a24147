// SPDX-License-Identifier: GPL-2.0

//! Mappings of objects: one per CPU, through zsmalloc's per-CPU area, as scoped guards.

use super::*;
use crate::{
    bindings,
    error::{code::*, Result},
};
use core::{
    marker::PhantomData,
    ops::Deref,
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};

/// Whether a CPU has an object mapped, indexed by CPU number.
///
/// Written only by the CPU it describes, with preemption disabled, so relaxed accesses suffice.
static MAPPED: [AtomicBool; bindings::CONFIG_NR_CPUS as usize] =
    [const { AtomicBool::new(false) }; bindings::CONFIG_NR_CPUS as usize];

/// The mapping mode of [`ReadGuard`]s.
pub(super) const MODE_READ: bindings::zs_mapmode = bindings::zs_mapmode_ZS_MM_RO;
/// The mapping mode of [`NewObject::write`]: nothing is copied in, everything is copied out.
pub(super) const MODE_WRITE: bindings::zs_mapmode = bindings::zs_mapmode_ZS_MM_WO;

/// Maps the first `len` bytes of the object of `raw` for reading.
///
/// # Safety
///
/// `raw` must be a live handle of `pool` whose object has been written by [`NewObject::write`],
/// and must stay live for `'g`.
#[inline]
pub(super) unsafe fn map_read_raw<'g>(
    pool: &'g Pool,
    raw: usize,
    len: usize,
) -> Result<ReadGuard<'g>> {
    // SAFETY: by the caller `raw` is a live handle of `pool` for `'g`.
    let m = unsafe { Mapping::new(pool, raw, Some(len), MODE_READ) }?;
    // INVARIANT: the object was written up to the capacity of its class, and the mapping's
    // length is at most that; written objects are never written again.
    Ok(ReadGuard { m })
}

/// As [`map_read_raw`], for a caller that has preemption disabled already (a holder of a slot
/// lock), which is not disabled a second time.
///
/// # Safety
///
/// As [`map_read_raw`]; also, preemption must be disabled from before the call until it returns.
#[inline]
pub(super) unsafe fn map_read_raw_preempt_off<'g>(
    pool: &'g Pool,
    raw: usize,
    len: usize,
) -> Result<ReadGuard<'g>> {
    // SAFETY: by the caller `raw` is a live handle of `pool` for `'g`, and preemption is disabled
    // until the call returns.
    let m = unsafe { Mapping::new_preempt_off(pool, raw, Some(len), MODE_READ) }?;
    // INVARIANT: as in `map_read_raw`.
    Ok(ReadGuard { m })
}

/// A mapped object; the common part of [`ReadGuard`] and [`NewObject::write`].
///
/// # Invariants
///
/// `ptr` is valid for reads and writes of `len` bytes until `zs_unmap_object()` of `handle`, which
/// only `drop` calls. This CPU's entry of `MAPPED` is set, and preemption is disabled, so the
/// thread stays on this CPU.
pub(super) struct Mapping<'a> {
    pub(super) pool: &'a Pool,
    pub(super) handle: usize,
    pub(super) ptr: NonNull<u8>,
    pub(super) len: usize,
    pub(super) cpu: usize,
    /// Pins the mapping to its thread: it must be dropped on the CPU that mapped it.
    pub(super) _not_send: PhantomData<*mut ()>,
}

impl<'a> Mapping<'a> {
    /// Maps the first `len` bytes of the object of `handle`, or all of it (the capacity of its
    /// class) if `len` is `None`.
    ///
    /// Fails with [`EBUSY`] in interrupt context and if this CPU has an object mapped already,
    /// and with [`EINVAL`] if `len` is 0 or larger than the capacity of the object's class.
    ///
    /// # Safety
    ///
    /// `handle` must be a live handle of `pool` that stays live for `'a`.
    #[inline]
    pub(super) unsafe fn new(
        pool: &'a Pool,
        handle: usize,
        len: Option<usize>,
        mode: bindings::zs_mapmode,
    ) -> Result<Self> {
        // SAFETY: FFI call without preconditions. Outside interrupt context it disables
        // preemption, from here until the object is mapped, so the CPU number stays right.
        let Ok(cpu) = usize::try_from(unsafe { bindings::preempt_disable_cpu_outside_interrupt() })
        else {
            // Interrupt context: zsmalloc's mapping area may be the interrupted thread's.
            return Err(EBUSY);
        };
        // SAFETY: by the caller `handle` is a live handle of `pool` for `'a`; not in interrupt
        // context, and preemption is disabled until after the call.
        let m = unsafe { Self::map_on(pool, handle, len, mode, cpu) };
        // SAFETY: balances the `preempt_disable()` above; a mapping keeps preemption disabled on
        // its own until it is unmapped.
        unsafe { bindings::preempt_enable() };
        m
    }

    /// As [`new`](Self::new), for a caller that has preemption disabled already (a holder of a
    /// slot lock): no second `preempt_disable()`.
    ///
    /// # Safety
    ///
    /// `handle` must be a live handle of `pool` that stays live for `'a`, and preemption must be
    /// disabled from before the call until it returns.
    #[inline]
    pub(super) unsafe fn new_preempt_off(
        pool: &'a Pool,
        handle: usize,
        len: Option<usize>,
        mode: bindings::zs_mapmode,
    ) -> Result<Self> {
        // SAFETY: FFI call without preconditions.
        let Ok(cpu) = usize::try_from(unsafe { bindings::cpu_outside_interrupt() }) else {
            // Interrupt context: zsmalloc's mapping area may be the interrupted thread's.
            return Err(EBUSY);
        };
        // SAFETY: by the caller `handle` is a live handle of `pool` for `'a`, and preemption is
        // disabled until the call returns, so `cpu` stays this CPU; not in interrupt context.
        unsafe { Self::map_on(pool, handle, len, mode, cpu) }
    }

    /// Maps the object of `handle` on this CPU, `cpu`: the common part of [`new`](Self::new) and
    /// [`new_preempt_off`](Self::new_preempt_off).
    ///
    /// # Safety
    ///
    /// `handle` must be a live handle of `pool` that stays live for `'a`; the caller must not be
    /// in interrupt context, and must have had preemption disabled since it read `cpu`, the
    /// number of the CPU it runs on, until the call returns.
    #[inline(always)]
    unsafe fn map_on(
        pool: &'a Pool,
        handle: usize,
        len: Option<usize>,
        mode: bindings::zs_mapmode,
        cpu: usize,
    ) -> Result<Self> {
        // SAFETY: by the caller `handle` is a live handle of `pool`; not in interrupt context, and
        // preemption is disabled.
        let len = unsafe { Self::check(pool, handle, len, cpu) }?;
        MAPPED[cpu].store(true, Ordering::Relaxed);
        // SAFETY: the pool is valid and, by the caller, `handle` a live handle of it; not in
        // interrupt context and no other object mapped on this CPU, as zsmalloc requires.
        let ptr = unsafe { bindings::zs_map_object(pool.raw(), handle, mode) };
        let Some(ptr) = NonNull::new(ptr.cast::<u8>()) else {
            // zs_map_object() does not fail; a null pointer would be a zsmalloc bug.
            MAPPED[cpu].store(false, Ordering::Relaxed);
            // SAFETY: the object was mapped above and is unmapped once, here.
            unsafe { bindings::zs_unmap_object(pool.raw(), handle) };
            return Err(EINVAL);
        };
        // INVARIANT: zsmalloc mapped the object, of at least `len` bytes since `len` is at most
        // the capacity of its class (both modes give read and write access to the mapping), and
        // keeps preemption disabled until it is unmapped; `MAPPED[cpu]` was set above.
        Ok(Mapping {
            pool,
            handle,
            ptr,
            len,
            cpu,
            _not_send: PhantomData,
        })
    }

    /// Checks that this CPU, `cpu`, may map the object of `handle` and returns the length to map.
    ///
    /// # Safety
    ///
    /// `handle` must be a live handle of `pool`, the caller must not be in interrupt context, and
    /// preemption must be disabled since `cpu` was read.
    #[inline]
    unsafe fn check(pool: &Pool, handle: usize, len: Option<usize>, cpu: usize) -> Result<usize> {
        if MAPPED[cpu].load(Ordering::Relaxed) {
            return Err(EBUSY);
        }
        // Only with no object mapped on this CPU: on 32-bit the class index takes the class lock,
        // which compaction holds while it waits for mappings to end.
        // SAFETY: by the caller `handle` is a live handle of `pool`.
        let cap = pool.capacity_of(unsafe { class_index_raw(pool, handle) });
        let len = len.unwrap_or(cap);
        if len == 0 || len > cap {
            return Err(EINVAL);
        }
        Ok(len)
    }
}

impl Drop for Mapping<'_> {
    #[inline]
    fn drop(&mut self) {
        // Still on `self.cpu`: preemption has been disabled since the map.
        MAPPED[self.cpu].store(false, Ordering::Relaxed);
        // SAFETY: `handle` was mapped by `new` and is unmapped once, here.
        unsafe { bindings::zs_unmap_object(self.pool.raw(), self.handle) };
    }
}

/// A read-only mapping of an object; derefs to `&[u8]`. Unmaps on drop.
///
/// Created by [`Handle::map_read`] and [`SlotGuard::map_read`]. While it lives, preemption is
/// disabled: the thread must not sleep, and must not allocate or free objects of the pool (see
/// the [module docs](crate::zsmalloc)). It is `!Send`: it must be dropped on the CPU that mapped
/// it.
/// Leaking it (with [`core::mem::forget`]) is memory-safe but leaves preemption disabled and the
/// CPU's mapping taken: later mappings on that CPU fail with [`EBUSY`], and compaction of that
/// object's page waits for ever.
///
/// # Invariants
///
/// The first `m.len` bytes of the mapping have been written and are not written while the guard
/// lives.
///
/// # Examples
///
/// A guard stays on its CPU:
///
/// ```ignore
/// // Does not compile: `ReadGuard` is not `Send`.
/// use kernel::{c_str, zsmalloc::Pool};
///
/// fn send<T: Send>(_: T) {}
///
/// let pool = Pool::new(c_str!("doc"))?;
/// let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
/// send(h.map_read(1)?);
/// # Ok::<(), Error>(())
/// ```
///
/// (Marked `ignore` for the reason given at [`NewObject`]; checked by
/// `tests/compile_fail/fail_zsmalloc_read_guard_send.rs`.)
pub struct ReadGuard<'a> {
    pub(super) m: Mapping<'a>,
}

impl Deref for ReadGuard<'_> {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: by `Mapping`'s invariant the bytes are valid until the guard drops; by the
        // type invariant they are initialised and nothing writes them meanwhile.
        unsafe { core::slice::from_raw_parts(self.m.ptr.as_ptr(), self.m.len) }
    }
}
