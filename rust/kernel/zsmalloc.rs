// SPDX-License-Identifier: GPL-2.0

//! zsmalloc, the allocator that stores compressed pages.
//!
//! A [`Pool`] hands out objects of up to one page as owned [`Handle`]s. An object's bytes are
//! reached only through a scoped mapping guard, [`ReadGuard`] or [`WriteGuard`]. A [`Deferred`]
//! queues frees per CPU and hands them in batches to a drain callback that runs on a worker.
//!
//! # Safety model
//!
//! - A [`Handle`] is owned and neither `Copy` nor `Clone`. [`Pool::free`] consumes it, so a double
//!   free or a use after free does not compile.
//! - A handle is bound to the pool that allocated it by the pool's id: every pool gets a 32-bit id
//!   that is never reused, and the handle stores it next to the C handle (12 bytes on 64-bit, with
//!   4-byte alignment, so that a user can keep a 4-byte word next to it in 16 bytes). Every
//!   operation that takes a handle checks the id first. A lifetime would have done the same at
//!   compile time, but it would stop a driver from keeping its pool and its handles in one
//!   structure, which is what block devices do.
//! - zsmalloc maps an object through a per-CPU area shared by all pools, with preemption disabled
//!   until the unmap. A guard therefore borrows its handle (it cannot outlive it), is `!Send`
//!   (it cannot move to another CPU), and the code that holds it runs in atomic context: it must
//!   not sleep. With `CONFIG_DEBUG_ATOMIC_SLEEP` a sleep while mapped is reported at once, since
//!   every sleeping function calls `might_sleep()`. Only one object can be mapped per CPU: a
//!   second map on the same CPU while a guard is alive returns [`EBUSY`] instead of overwriting
//!   the first mapping, and so does mapping from interrupt context, which zsmalloc forbids.
//! - A guard's slice has the length the caller asks for, which is checked against the size class
//!   of the object, so no access can reach past the object.
//!
//! C header: [`include/linux/zsmalloc.h`](srctree/include/linux/zsmalloc.h)

use crate::{
    alloc::{flags::*, Flags, KBox},
    bindings,
    error::{code::*, from_err_ptr, Result},
    ffi::c_void,
    page::PAGE_SIZE,
    str::CStr,
    sync::Arc,
};
use core::{
    marker::{PhantomData, PhantomPinned},
    num::{NonZeroU32, NonZeroUsize},
    pin::Pin,
    ptr::NonNull,
    sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering},
};

/// The largest object a pool stores: one page.
pub const MAX_ALLOC_SIZE: usize = PAGE_SIZE;

/// The next pool id. Ids are never reused; see [`Pool::new`].
static NEXT_POOL_ID: AtomicU32 = AtomicU32::new(1);

/// Whether a CPU has an object mapped, indexed by CPU number.
///
/// Written only by the CPU it describes, with preemption disabled, so relaxed accesses suffice.
static MAPPED: [AtomicBool; bindings::CONFIG_NR_CPUS as usize] =
    [const { AtomicBool::new(false) }; bindings::CONFIG_NR_CPUS as usize];

/// A zsmalloc pool.
///
/// Dropping it destroys the pool if every object has been freed. If not, the pool is leaked
/// (with an error in the log): `zs_destroy_pool()` does not free objects, and their pages would
/// stay reachable by page migration after the pool's memory is gone.
///
/// # Invariants
///
/// `ptr` points to a pool created by `zs_create_pool()` that this object owns; `id` is unique
/// among all pools created since boot; `live` counts the objects allocated and not yet freed.
pub struct Pool {
    ptr: NonNull<bindings::zs_pool>,
    id: NonZeroU32,
    live: AtomicUsize,
}

// SAFETY: every zsmalloc function that takes a pool may be called from any thread; the pool has
// no thread affinity.
unsafe impl Send for Pool {}

// SAFETY: zsmalloc serialises concurrent calls on one pool internally (class locks, the migrate
// lock and atomics).
unsafe impl Sync for Pool {}

/// An object allocated from a [`Pool`].
///
/// Dropping a handle without [`Pool::free`] leaks the object, and then the pool: a pool with live
/// objects is not destroyed when dropped (see [`Pool`]).
///
/// # Invariants
///
/// `raw` is a live zsmalloc handle of the pool whose id is `pool`: it is freed only by
/// [`Pool::free`], which consumes the handle.
#[repr(C, packed(4))]
pub struct Handle {
    raw: NonZeroUsize,
    pool: NonZeroU32,
}

#[cfg(CONFIG_64BIT)]
crate::static_assert!(core::mem::size_of::<Option<Handle>>() == 12);

/// Pool statistics; see [`Pool::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Pages released by compaction over the pool's life.
    pub pages_compacted: usize,
}

impl Pool {
    /// Creates a pool; `name` shows up in `/proc/slabinfo` and the debugfs statistics.
    ///
    /// Fails with [`ENOMEM`] if the pool cannot be allocated and with [`ENOSPC`] once 2^32 - 1
    /// pools have been created since boot, so that no two pools ever share an id.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// assert_eq!(pool.total_pages(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(name: &CStr) -> Result<Self> {
        let id = NEXT_POOL_ID
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |id| id.checked_add(1))
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or(ENOSPC)?;
        // SAFETY: `name` is a valid NUL-terminated string; zsmalloc copies it.
        let ptr = unsafe { bindings::zs_create_pool(name.as_char_ptr()) };
        let ptr = NonNull::new(ptr).ok_or(ENOMEM)?;
        // INVARIANT: the pool was just created and is owned by nobody else; `id` came from a
        // counter that never wraps; it holds no objects.
        Ok(Pool {
            ptr,
            id,
            live: AtomicUsize::new(0),
        })
    }

    fn raw(&self) -> *mut bindings::zs_pool {
        self.ptr.as_ptr()
    }

    fn check(&self, handle: &Handle) -> Result {
        if handle.pool == self.id {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }

    /// Allocates an object of `size` bytes.
    ///
    /// `flags` says how hard to try (for example [`GFP_NOWAIT`] on a fast path, then
    /// [`GFP_KERNEL`]); the pool adds `__GFP_HIGHMEM | __GFP_MOVABLE` itself, since its pages can
    /// always be migrated. The new object's contents are unspecified.
    ///
    /// Fails with [`EINVAL`] if `size` is 0, with [`E2BIG`] if it exceeds [`MAX_ALLOC_SIZE`], and
    /// with [`ENOMEM`] if memory is short.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, error::code::*, zsmalloc::{Pool, MAX_ALLOC_SIZE}};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let h = pool.alloc(100, GFP_KERNEL)?;
    /// assert_eq!(pool.alloc(0, GFP_KERNEL).err(), Some(EINVAL));
    /// assert_eq!(pool.alloc(MAX_ALLOC_SIZE + 1, GFP_KERNEL).err(), Some(E2BIG));
    /// pool.free(h);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn alloc(&self, size: usize, flags: Flags) -> Result<Handle> {
        if size == 0 {
            return Err(EINVAL);
        }
        if size > MAX_ALLOC_SIZE {
            return Err(E2BIG);
        }
        let gfp = flags.as_raw() | bindings::__GFP_HIGHMEM | bindings::__GFP_MOVABLE;
        // SAFETY: `self.raw()` is a valid pool by the type invariant; `size` is in range.
        let raw = unsafe { bindings::zs_malloc(self.raw(), size, gfp) };
        // zs_malloc() returns an error pointer on failure.
        from_err_ptr(raw as *mut c_void)?;
        let raw = NonZeroUsize::new(raw).ok_or(ENOMEM)?;
        self.live.fetch_add(1, Ordering::Relaxed);
        // INVARIANT: `raw` is a new handle of this pool, counted in `live`.
        Ok(Handle { raw, pool: self.id })
    }

    /// Frees `handle`'s object.
    ///
    /// A handle of another pool is not freed: the mistake is logged and the object stays
    /// allocated until its own pool is dropped.
    ///
    /// Context: any context but NMI; does not sleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let h = pool.alloc(64, GFP_KERNEL)?;
    /// pool.free(h);
    /// // `h` has moved: using it again does not compile.
    /// assert_eq!(pool.total_pages(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn free(&self, handle: Handle) {
        if self.check(&handle).is_err() {
            crate::pr_err!("zsmalloc: handle freed into a pool that did not allocate it\n");
            return;
        }
        // SAFETY: the pool is valid, and by `Handle`'s invariant and the check above `raw` is a
        // live handle of it, which is freed exactly once because `handle` is consumed here.
        unsafe { bindings::zs_free(self.raw(), handle.raw.get()) };
        self.live.fetch_sub(1, Ordering::Relaxed);
    }

    /// Frees many objects, taking each size class's lock once per batch of up to 64.
    ///
    /// Handles of other pools are skipped as in [`free`](Self::free).
    ///
    /// Context: any context but NMI; does not sleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let mut v = KVec::new();
    /// for size in 1..200 {
    ///     v.push(pool.alloc(size * 20, GFP_KERNEL)?, GFP_KERNEL)?;
    /// }
    /// pool.free_bulk(v);
    /// assert_eq!(pool.total_pages(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn free_bulk(&self, handles: impl IntoIterator<Item = Handle>) {
        const BATCH: usize = 64;
        let mut raw = [0usize; BATCH];
        let mut n = 0;
        for h in handles {
            if self.check(&h).is_err() {
                crate::pr_err!("zsmalloc: handle freed into a pool that did not allocate it\n");
                continue;
            }
            raw[n] = h.raw.get();
            n += 1;
            if n == BATCH {
                self.free_raw(&mut raw);
                n = 0;
            }
        }
        self.free_raw(&mut raw[..n]);
    }

    /// Frees the handles in `raw`, which the caller took out of [`Handle`]s of this pool.
    fn free_raw(&self, raw: &mut [usize]) {
        if raw.is_empty() {
            return;
        }
        // SAFETY: the pool is valid; each entry is a live handle of it, taken from a consumed
        // `Handle` after the pool check, so each is freed exactly once. zs_free_bulk() only sorts
        // and frees the array's entries.
        unsafe { bindings::zs_free_bulk(self.raw(), raw.as_mut_ptr(), raw.len() as u32) };
        self.live.fetch_sub(raw.len(), Ordering::Relaxed);
    }

    /// Returns the number of objects allocated and not yet freed.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let h = pool.alloc(10, GFP_KERNEL)?;
    /// assert_eq!(pool.live_objects(), 1);
    /// pool.free(h);
    /// assert_eq!(pool.live_objects(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn live_objects(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// Maps the first `len` bytes of `handle`'s object for reading.
    ///
    /// Context: the returned guard disables preemption; see the [module docs](self) for what may
    /// be done while it lives.
    ///
    /// Fails with [`EINVAL`] if `handle` belongs to another pool or `len` is 0 or larger than the
    /// object's size class, and with [`EBUSY`] if this CPU already has an object mapped or the
    /// caller is in interrupt context.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let mut h = pool.alloc(5, GFP_KERNEL)?;
    /// pool.map_write(&mut h, 5)?.copy_from_slice(b"hello");
    /// assert_eq!(&*pool.map_read(&h, 5)?, b"hello");
    /// pool.free(h);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn map_read<'a>(&'a self, handle: &'a Handle, len: usize) -> Result<ReadGuard<'a>> {
        let m = Mapping::new(self, handle, len, bindings::zs_mapmode_ZS_MM_RO)?;
        Ok(ReadGuard { m, _h: PhantomData })
    }

    /// Maps the first `len` bytes of `handle`'s object for writing.
    ///
    /// The bytes seen through the guard are unspecified until written; what is written reaches
    /// the object when the guard is dropped. Context and errors are those of
    /// [`map_read`](Self::map_read).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let mut h = pool.alloc(3000, GFP_KERNEL)?;
    /// pool.map_write(&mut h, 3000)?.fill(0x5a);
    /// assert!(pool.map_read(&h, 3000)?.iter().all(|&b| b == 0x5a));
    /// pool.free(h);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn map_write<'a>(&'a self, handle: &'a mut Handle, len: usize) -> Result<WriteGuard<'a>> {
        let m = Mapping::new(self, handle, len, bindings::zs_mapmode_ZS_MM_WO)?;
        Ok(WriteGuard { m, _h: PhantomData })
    }

    /// Moves objects out of sparsely used pages and frees the pages this empties.
    ///
    /// Returns the number of pages freed. Context: process context; may sleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// assert_eq!(pool.compact(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn compact(&self) -> usize {
        // SAFETY: the pool is valid.
        unsafe { bindings::zs_compact(self.raw()) as usize }
    }

    /// Returns the number of pages the pool holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let h = pool.alloc(1000, GFP_KERNEL)?;
    /// assert!(pool.total_pages() >= 1);
    /// pool.free(h);
    /// assert_eq!(pool.total_pages(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn total_pages(&self) -> usize {
        // SAFETY: the pool is valid.
        unsafe { bindings::zs_get_total_pages(self.raw()) as usize }
    }

    /// Returns the pool's statistics.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// assert_eq!(pool.stats().pages_compacted, 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let mut s = bindings::zs_pool_stats::default();
        // SAFETY: the pool is valid and `s` is a writable `zs_pool_stats`.
        unsafe { bindings::zs_pool_stats(self.raw(), &mut s) };
        Stats {
            pages_compacted: s.pages_compacted.counter as usize,
        }
    }

    /// Returns the smallest object size that the pool stores in a class of its own, one object
    /// per page ("huge"). Objects at least this large gain nothing from compression.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::{Pool, MAX_ALLOC_SIZE}};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// assert!(pool.huge_class_size() <= MAX_ALLOC_SIZE);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn huge_class_size(&self) -> usize {
        // SAFETY: the pool is valid.
        unsafe { bindings::zs_huge_class_size(self.raw()) }
    }

    /// Returns the index of the size class that stores objects of `size` bytes.
    ///
    /// Fails with [`EINVAL`] if `size` is 0 or larger than [`MAX_ALLOC_SIZE`].
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let h = pool.alloc(200, GFP_KERNEL)?;
    /// assert_eq!(h.class_index(&pool)?, pool.class_index_for(200)?);
    /// assert!(pool.class_index_for(100)? <= pool.class_index_for(200)?);
    /// pool.free(h);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn class_index_for(&self, size: usize) -> Result<u32> {
        if size == 0 || size > MAX_ALLOC_SIZE {
            return Err(EINVAL);
        }
        // SAFETY: the pool is valid and `size` is in range.
        Ok(unsafe { bindings::zs_lookup_class_index(self.raw(), size as u32) })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let live = *self.live.get_mut();
        if live != 0 {
            // zs_destroy_pool() does not free objects: their pages would stay reachable by
            // migration after the pool is gone. Leaking the pool is the only safe choice.
            crate::pr_err!("zsmalloc: pool dropped with {live} objects allocated; leaking it\n");
            return;
        }
        // SAFETY: the pool is valid, owned by `self` and empty; nothing can use it after this.
        // Every `Deferred` of the pool holds a reference to it, so none is left to drain into it.
        unsafe { bindings::zs_destroy_pool(self.raw()) };
    }
}

impl Handle {
    /// Returns the index of the size class that holds the object, as
    /// [`Pool::class_index_for`] of the size it was allocated with.
    ///
    /// Fails with [`EINVAL`] if `pool` did not allocate the handle.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let other = Pool::new(c_str!("doc2"))?;
    /// let h = pool.alloc(4096, GFP_KERNEL)?;
    /// assert_eq!(h.class_index(&pool)?, pool.class_index_for(4096)?);
    /// assert!(h.class_index(&other).is_err());
    /// pool.free(h);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn class_index(&self, pool: &Pool) -> Result<u32> {
        pool.check(self)?;
        // SAFETY: the pool is valid and, by the check, `raw` is a live handle of it that cannot
        // be freed while `self` is borrowed.
        Ok(unsafe { bindings::zs_handle_class_index(pool.raw(), self.raw.get()) })
    }
}

/// A [`Handle`] or a machine word, in the space of a handle (12 bytes on 64-bit, 4-byte
/// aligned).
///
/// Tables that store most entries as zsmalloc objects but some as a plain value (zram stores a
/// page filled with one repeated word as that word) keep one `Entry` per element. A new entry is
/// the word 0.
///
/// # Invariants
///
/// If `pool` is not zero, `raw` and `pool` are the fields of a [`Handle`] owned by the entry;
/// otherwise `raw` is a plain word.
///
/// # Examples
///
/// ```
/// use kernel::{c_str, zsmalloc::{Entry, Pool}};
///
/// let pool = Pool::new(c_str!("doc"))?;
/// let mut e = Entry::word(0x5a5a);
/// assert_eq!(e.as_word(), Some(0x5a5a));
/// let old = e.replace(Entry::handle(pool.alloc(10, GFP_KERNEL)?));
/// assert!(old.into_handle().is_none());
/// assert!(e.as_handle().is_some());
/// if let Some(h) = e.take_handle() {
///     pool.free(h);
/// }
/// assert_eq!(e.as_word(), Some(0));
/// # Ok::<(), Error>(())
/// ```
#[repr(C, packed(4))]
pub struct Entry {
    raw: usize,
    pool: u32,
}

#[cfg(CONFIG_64BIT)]
crate::static_assert!(core::mem::size_of::<Entry>() == 12);

impl Default for Entry {
    fn default() -> Self {
        Entry::word(0)
    }
}

impl Entry {
    /// An entry holding the word `v`.
    pub const fn word(v: usize) -> Self {
        // INVARIANT: `pool` is zero, so `raw` is a word.
        Entry { raw: v, pool: 0 }
    }

    /// An entry owning `h`.
    pub fn handle(h: Handle) -> Self {
        // INVARIANT: the fields of `h`, which the entry now owns; `pool` is not zero.
        Entry {
            raw: h.raw.get(),
            pool: h.pool.get(),
        }
    }

    /// Returns the word, if the entry holds one.
    pub fn as_word(&self) -> Option<usize> {
        if self.pool == 0 {
            Some(self.raw)
        } else {
            None
        }
    }

    /// Returns the handle, if the entry holds one.
    pub fn as_handle(&self) -> Option<&Handle> {
        if self.pool == 0 {
            return None;
        }
        // SAFETY: by the invariant the fields are those of a `Handle`, which has the same layout
        // (`repr(C, packed(4))`, a `usize` then a `u32`).
        Some(unsafe { &*core::ptr::from_ref(self).cast::<Handle>() })
    }

    /// Returns the handle mutably, if the entry holds one (for [`Pool::map_write`]).
    pub fn as_handle_mut(&mut self) -> Option<&mut Handle> {
        if self.pool == 0 {
            return None;
        }
        // SAFETY: as in `as_handle`; `&mut self` is unique.
        Some(unsafe { &mut *core::ptr::from_mut(self).cast::<Handle>() })
    }

    /// Replaces the entry with `new` and returns the old one.
    pub fn replace(&mut self, new: Entry) -> Entry {
        core::mem::replace(self, new)
    }

    /// Takes the handle out, leaving the word 0; `None` (and no change) if it holds a word.
    pub fn take_handle(&mut self) -> Option<Handle> {
        if self.pool == 0 {
            return None;
        }
        self.replace(Entry::word(0)).into_handle()
    }

    /// Converts the entry into its handle, if it holds one.
    pub fn into_handle(self) -> Option<Handle> {
        // INVARIANT: the handle's ownership moves from the entry to the result.
        Some(Handle {
            raw: NonZeroUsize::new(self.raw)?,
            pool: NonZeroU32::new(self.pool)?,
        })
    }
}

/// A mapped object; the common part of [`ReadGuard`] and [`WriteGuard`].
///
/// # Invariants
///
/// `ptr` is valid for reads and writes of `len` bytes until `zs_unmap_object()` of `handle`, which
/// only `drop` calls. This CPU's entry of `MAPPED` is set, and preemption is disabled, so the
/// thread stays on this CPU.
struct Mapping<'a> {
    pool: &'a Pool,
    handle: usize,
    ptr: NonNull<u8>,
    len: usize,
    cpu: usize,
    /// Pins the guard to its thread: it must be dropped on the CPU that mapped it.
    _not_send: PhantomData<*mut ()>,
}

impl<'a> Mapping<'a> {
    fn new(
        pool: &'a Pool,
        handle: &'a Handle,
        len: usize,
        mode: bindings::zs_mapmode,
    ) -> Result<Self> {
        pool.check(handle)?;
        let raw = handle.raw.get();
        // The object was allocated at a size of its class; `len` must fit the class. Classes are
        // ordered by size, so this holds exactly when `len`'s class is not above the object's.
        if pool.class_index_for(len)? > handle.class_index(pool)? {
            return Err(EINVAL);
        }
        // SAFETY: FFI calls without preconditions. Preemption stays disabled from here until the
        // object is mapped, so the CPU number stays right.
        let cpu = unsafe {
            bindings::preempt_disable();
            bindings::raw_smp_processor_id() as usize
        };
        // SAFETY: FFI call without preconditions.
        let busy = unsafe { bindings::in_interrupt() } || MAPPED[cpu].load(Ordering::Relaxed);
        if busy {
            // SAFETY: matches the `preempt_disable()` above.
            unsafe { bindings::preempt_enable() };
            return Err(EBUSY);
        }
        MAPPED[cpu].store(true, Ordering::Relaxed);
        // SAFETY: the pool is valid and `raw` a live handle of it, which cannot be freed while
        // `handle` is borrowed; not in interrupt context and no other object mapped on this CPU,
        // as zsmalloc requires.
        let ptr = unsafe { bindings::zs_map_object(pool.raw(), raw, mode) };
        // SAFETY: the mapping keeps preemption disabled on its own until it is unmapped.
        unsafe { bindings::preempt_enable() };
        // `zs_map_object()` does not fail; a null pointer would be a zsmalloc bug.
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or(EINVAL)?;
        // INVARIANT: zsmalloc mapped the object, of at least `len` bytes by the class check
        // (both modes give read and write access to the mapping); `MAPPED[cpu]` was set above.
        Ok(Mapping {
            pool,
            handle: raw,
            ptr,
            len,
            cpu,
            _not_send: PhantomData,
        })
    }
}

impl Drop for Mapping<'_> {
    fn drop(&mut self) {
        // Still on `self.cpu`: preemption has been disabled since the map.
        MAPPED[self.cpu].store(false, Ordering::Relaxed);
        // SAFETY: `handle` was mapped by `new` and is unmapped once, here.
        unsafe { bindings::zs_unmap_object(self.pool.raw(), self.handle) };
    }
}

/// A read-only mapping of an object; derefs to `&[u8]`. Unmaps on drop.
///
/// Created by [`Pool::map_read`]. While it lives, the thread must not sleep.
pub struct ReadGuard<'a> {
    m: Mapping<'a>,
    _h: PhantomData<&'a Handle>,
}

impl core::ops::Deref for ReadGuard<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: by `Mapping`'s invariant the bytes are valid until the guard drops, and a read
        // guard never hands out mutable access.
        unsafe { core::slice::from_raw_parts(self.m.ptr.as_ptr(), self.m.len) }
    }
}

/// A writable mapping of an object; derefs to `&mut [u8]`. Writes back and unmaps on drop.
///
/// Created by [`Pool::map_write`]. While it lives, the thread must not sleep.
pub struct WriteGuard<'a> {
    m: Mapping<'a>,
    _h: PhantomData<&'a mut Handle>,
}

impl core::ops::Deref for WriteGuard<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: by `Mapping`'s invariant the bytes are valid until the guard drops.
        unsafe { core::slice::from_raw_parts(self.m.ptr.as_ptr(), self.m.len) }
    }
}

impl core::ops::DerefMut for WriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: by `Mapping`'s invariant the bytes are valid until the guard drops; the guard
        // was created from `&mut Handle`, so nobody else maps the object meanwhile.
        unsafe { core::slice::from_raw_parts_mut(self.m.ptr.as_ptr(), self.m.len) }
    }
}

/// The owner of a deferred-free queue: what it queues, and how it frees a batch.
///
/// The owner usually holds the table that maps its items (slot numbers, say) to handles, and
/// frees those handles in [`drain`](Self::drain).
pub trait DeferredFree: Send + Sync {
    /// What is queued: typically an index into the owner's table. At most one page.
    type Item: Copy + Send;

    /// Frees the objects that `items` name.
    ///
    /// Runs on a worker of an unbound workqueue, and also in the caller of [`Deferred::push`]
    /// when the queue is full; so it can run concurrently with itself and must not sleep.
    fn drain(&self, items: &[Self::Item]);
}

/// A per-CPU deferred-free queue registered on a pool.
///
/// [`push`](Self::push) writes the item into this CPU's buffer page without taking a lock. Full
/// pages go to a worker that calls [`DeferredFree::drain`]. When no buffer page is free the item
/// is drained at once in the caller; [`DeferredStats::sync_frees`] counts how often.
///
/// It holds a reference to its pool, so the pool outlives it; dropping it drains whatever is
/// still queued, then unregisters, then drops the owner: the drain never runs after its owner is
/// gone.
///
/// # Invariants
///
/// Once [`Deferred::new`] has returned, `raw` is a live `zs_deferred` of `pool` whose drain gets a
/// pointer to `owner`, which is pinned. Before that it may be null.
pub struct Deferred<T: DeferredFree> {
    raw: *mut bindings::zs_deferred,
    owner: T,
    pool: Arc<Pool>,
    _pin: PhantomPinned,
}

// SAFETY: the C queue may be used from any thread; `T` is `Send + Sync`.
unsafe impl<T: DeferredFree> Send for Deferred<T> {}

// SAFETY: `push`, `flush` and `stats` may be called concurrently; `T` is `Sync`.
unsafe impl<T: DeferredFree> Sync for Deferred<T> {}

/// Counters of a [`Deferred`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeferredStats {
    /// Items queued by [`Deferred::push`].
    pub pushed: u64,
    /// Items handed to the drain, from the queue.
    pub drained: u64,
    /// Pushes that found the queue full and drained at once.
    pub sync_frees: u64,
    /// Buffer pages held now.
    pub pages: usize,
    /// The bound on buffer pages.
    pub max_pages: usize,
}

struct Vtable<T>(PhantomData<T>);

impl<T: DeferredFree> Vtable<T> {
    const OPS: bindings::zs_deferred_ops = bindings::zs_deferred_ops {
        drain: Some(drain_callback::<T>),
    };
}

/// # Safety
///
/// `owner` must point to a live `T` and `elems` to `nr` consecutive `T::Item`s.
unsafe extern "C" fn drain_callback<T: DeferredFree>(
    owner: *mut c_void,
    elems: *const c_void,
    nr: crate::ffi::c_uint,
) {
    // SAFETY: `owner` is the pinned owner of a live `Deferred<T>`, which outlives its C queue.
    let owner = unsafe { &*owner.cast::<T>() };
    // SAFETY: the queue stores items of `size_of::<T::Item>()` bytes at that stride from a
    // page-aligned address, so they are aligned `T::Item`s, written by `push`.
    let items = unsafe { core::slice::from_raw_parts(elems.cast::<T::Item>(), nr as usize) };
    owner.drain(items);
}

impl<T: DeferredFree> Deferred<T> {
    /// Registers `owner` on `pool` with a bound of `max_pages` buffer pages.
    ///
    /// With `max_pages` 0 the bound scales with the pool: one buffer page per 512 pool pages, and
    /// at least four per CPU.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, prelude::*, sync::Arc, zsmalloc::{Deferred, DeferredFree, Pool}};
    /// use core::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// struct Counter(AtomicUsize);
    ///
    /// impl DeferredFree for Counter {
    ///     type Item = u32;
    ///     fn drain(&self, items: &[u32]) {
    ///         self.0.fetch_add(items.len(), Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let pool = Arc::new(Pool::new(c_str!("doc"))?, GFP_KERNEL)?;
    /// let df = Deferred::new(pool, Counter(AtomicUsize::new(0)), 0)?;
    /// for i in 0..1000 {
    ///     df.push(i);
    /// }
    /// df.flush();
    /// assert_eq!(df.owner().0.load(Ordering::Relaxed), 1000);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(pool: Arc<Pool>, owner: T, max_pages: usize) -> Result<Pin<KBox<Self>>> {
        crate::build_assert!(core::mem::size_of::<T::Item>() > 0);
        crate::build_assert!(core::mem::size_of::<T::Item>() <= PAGE_SIZE);
        let mut this = KBox::pin(
            Deferred {
                raw: core::ptr::null_mut(),
                owner,
                pool,
                _pin: PhantomPinned,
            },
            GFP_KERNEL,
        )?;
        // SAFETY: only `raw` is written, which is not structurally pinned; nothing moves.
        let inner = unsafe { this.as_mut().get_unchecked_mut() };
        let owner_ptr = core::ptr::from_ref(&inner.owner)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: the pool is valid; `OPS` is a static; `owner_ptr` points to the pinned owner,
        // which outlives the queue because `drop` destroys the queue first.
        let raw = unsafe {
            bindings::zs_deferred_create(
                inner.pool.raw(),
                &Vtable::<T>::OPS,
                owner_ptr,
                core::mem::size_of::<T::Item>(),
                max_pages as _,
            )
        };
        // On failure `raw` stays null, which `drop` skips.
        let raw = from_err_ptr(raw)?;
        // INVARIANT: the queue was just created with `owner` as its drain's argument.
        inner.raw = raw;
        Ok(this)
    }

    /// Returns the owner.
    pub fn owner(&self) -> &T {
        &self.owner
    }

    /// Returns the pool the queue is registered on.
    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// Queues `item` for the drain; returns `true` if it was queued and `false` if the queue was
    /// full and `item` was drained at once, in this thread.
    ///
    /// Context: any context but NMI; does not sleep (unless the drain does, which it must not).
    pub fn push(&self, item: T::Item) -> bool {
        // SAFETY: `raw` is live; `item` is `size_of::<T::Item>()` readable bytes, which the queue
        // copies.
        let queued =
            unsafe { bindings::zs_deferred_push(self.raw, core::ptr::from_ref(&item).cast()) };
        if !queued {
            self.owner.drain(core::slice::from_ref(&item));
        }
        queued
    }

    /// Waits until every item pushed before the call has been drained.
    ///
    /// Context: process context; sleeps.
    pub fn flush(&self) {
        // SAFETY: `raw` is live.
        unsafe { bindings::zs_deferred_flush(self.raw) };
    }

    /// Returns the queue's counters.
    pub fn stats(&self) -> DeferredStats {
        let mut s = bindings::zs_deferred_stats::default();
        // SAFETY: `raw` is live and `s` is writable.
        unsafe { bindings::zs_deferred_stats(self.raw, &mut s) };
        DeferredStats {
            pushed: s.pushed,
            drained: s.drained,
            sync_frees: s.sync_frees,
            pages: s.pages,
            max_pages: s.max_pages,
        }
    }
}

impl<T: DeferredFree> Drop for Deferred<T> {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        // SAFETY: `raw` is live and destroyed once, here. The destroy drains what is queued, then
        // stops the worker; `owner` is dropped only after this returns.
        unsafe { bindings::zs_deferred_destroy(self.raw) };
    }
}

#[cfg(CONFIG_RUST_ZSMALLOC_KUNIT_TEST)]
#[macros::kunit_tests(rust_zsmalloc)]
mod tests {
    use super::*;
    use crate::{
        alloc::KVec, c_str, init::InPlaceInit, kunit_expect, kunit_expect_eq, sync::SpinLock,
    };
    use core::sync::atomic::AtomicUsize;

    fn byte(seed: usize, i: usize) -> u8 {
        (seed.wrapping_mul(131) ^ i.wrapping_mul(7) ^ (i >> 8)) as u8
    }

    fn fill(pool: &Pool, h: &mut Handle, len: usize, seed: usize) -> Result {
        let mut g = pool.map_write(h, len)?;
        for (i, b) in g.iter_mut().enumerate() {
            *b = byte(seed, i);
        }
        Ok(())
    }

    fn intact(pool: &Pool, h: &Handle, len: usize, seed: usize) -> Result<bool> {
        let g = pool.map_read(h, len)?;
        Ok(g.len() == len && g.iter().enumerate().all(|(i, &b)| b == byte(seed, i)))
    }

    /// Sizes from 1 byte to a full page, crossing every size class and the huge classes.
    fn sizes() -> impl Iterator<Item = usize> {
        (1..MAX_ALLOC_SIZE)
            .step_by(29)
            .chain([MAX_ALLOC_SIZE - 1, MAX_ALLOC_SIZE])
    }

    #[test]
    fn alloc_free_all_sizes() -> Result {
        let pool = Pool::new(c_str!("rust_zs_sizes"))?;
        let mut objs = KVec::new();
        for (seed, size) in sizes().enumerate() {
            let mut h = pool.alloc(size, GFP_KERNEL)?;
            fill(&pool, &mut h, size, seed)?;
            objs.push((h, size, seed), GFP_KERNEL)?;
        }
        kunit_expect!(pool.total_pages() > 0);
        let mut bad = 0;
        for (h, size, seed) in objs.iter() {
            if !intact(&pool, h, *size, *seed)? {
                bad += 1;
            }
        }
        kunit_expect_eq!(bad, 0);
        for (h, _, _) in objs {
            pool.free(h);
        }
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    #[test]
    fn round_trip_partial_and_rewrite() -> Result {
        let pool = Pool::new(c_str!("rust_zs_rw"))?;
        let mut h = pool.alloc(3000, GFP_KERNEL)?;
        fill(&pool, &mut h, 3000, 1)?;
        // A shorter mapping sees the prefix; a rewrite replaces the contents.
        kunit_expect!(intact(&pool, &h, 100, 1)?);
        fill(&pool, &mut h, 3000, 2)?;
        kunit_expect!(intact(&pool, &h, 3000, 2)?);
        pool.free(h);
        Ok(())
    }

    #[test]
    fn class_index() -> Result {
        let pool = Pool::new(c_str!("rust_zs_class"))?;
        let mut last = 0;
        for size in sizes() {
            let h = pool.alloc(size, GFP_KERNEL)?;
            let idx = pool.class_index_for(size)?;
            kunit_expect_eq!(h.class_index(&pool)?, idx);
            kunit_expect!(idx >= last);
            last = idx;
            pool.free(h);
        }
        // The largest objects are in the last class, which is huge: one object per page.
        kunit_expect_eq!(last, pool.class_index_for(MAX_ALLOC_SIZE)?);
        kunit_expect!(pool.huge_class_size() <= MAX_ALLOC_SIZE);
        Ok(())
    }

    #[test]
    fn bad_input() -> Result {
        let pool = Pool::new(c_str!("rust_zs_bad"))?;
        let other = Pool::new(c_str!("rust_zs_other"))?;
        kunit_expect_eq!(pool.alloc(0, GFP_KERNEL).err(), Some(EINVAL));
        kunit_expect_eq!(
            pool.alloc(MAX_ALLOC_SIZE + 1, GFP_KERNEL).err(),
            Some(E2BIG)
        );
        kunit_expect_eq!(pool.alloc(usize::MAX, GFP_KERNEL).err(), Some(E2BIG));
        kunit_expect_eq!(pool.class_index_for(0).err(), Some(EINVAL));
        kunit_expect_eq!(pool.class_index_for(MAX_ALLOC_SIZE + 1).err(), Some(EINVAL));

        let mut h = pool.alloc(100, GFP_KERNEL)?;
        // Mappings longer than the object's class, empty, or through the wrong pool.
        kunit_expect_eq!(pool.map_read(&h, 0).err(), Some(EINVAL));
        kunit_expect_eq!(pool.map_read(&h, MAX_ALLOC_SIZE).err(), Some(EINVAL));
        kunit_expect_eq!(pool.map_write(&mut h, 2000).err(), Some(EINVAL));
        kunit_expect_eq!(other.map_read(&h, 100).err(), Some(EINVAL));
        kunit_expect_eq!(h.class_index(&other).err(), Some(EINVAL));

        // One mapping per CPU: a second one is refused, not corrupted.
        let mut h2 = pool.alloc(100, GFP_KERNEL)?;
        {
            let _g = pool.map_read(&h, 100)?;
            kunit_expect_eq!(pool.map_write(&mut h2, 100).err(), Some(EBUSY));
        }
        kunit_expect!(pool.map_write(&mut h2, 100).is_ok());

        pool.free(h);
        pool.free(h2);
        kunit_expect_eq!(pool.live_objects(), 0);
        Ok(())
    }

    #[test]
    fn compaction() -> Result {
        let pool = Pool::new(c_str!("rust_zs_compact"))?;
        let mut objs = KVec::new();
        for seed in 0..4000 {
            let mut h = pool.alloc(700, GFP_KERNEL)?;
            fill(&pool, &mut h, 700, seed)?;
            objs.push(Some(h), GFP_KERNEL)?;
        }
        // Free three objects of every four, leaving each page sparsely used.
        for (i, slot) in objs.iter_mut().enumerate() {
            if i % 4 != 0 {
                if let Some(h) = slot.take() {
                    pool.free(h);
                }
            }
        }
        let before = pool.total_pages();
        let freed = pool.compact();
        kunit_expect!(freed > 0);
        kunit_expect_eq!(pool.total_pages(), before - freed);
        kunit_expect!(pool.stats().pages_compacted >= freed);
        let mut bad = 0;
        for (seed, slot) in objs.iter().enumerate() {
            if let Some(h) = slot {
                if !intact(&pool, h, 700, seed)? {
                    bad += 1;
                }
            }
        }
        kunit_expect_eq!(bad, 0);
        for h in IntoIterator::into_iter(objs).flatten() {
            pool.free(h);
        }
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    /// Frees the handles of a table by index; the batch drain can be held back.
    struct Table {
        pool: Arc<Pool>,
        handles: Pin<KBox<SpinLock<KVec<Option<Handle>>>>>,
        drained: AtomicUsize,
        batches: AtomicUsize,
        hold: AtomicBool,
    }

    impl DeferredFree for Table {
        type Item = u32;

        fn drain(&self, items: &[u32]) {
            if items.len() > 1 {
                self.batches.fetch_add(1, Ordering::Relaxed);
                while self.hold.load(Ordering::Acquire) {
                    core::hint::spin_loop();
                }
            }
            let mut t = self.handles.lock();
            let taken = items
                .iter()
                .filter_map(|&i| t.get_mut(i as usize).and_then(Option::take))
                .inspect(|_| {
                    self.drained.fetch_add(1, Ordering::Relaxed);
                });
            self.pool.free_bulk(taken);
        }
    }

    fn table(pool: &Arc<Pool>, n: usize) -> Result<Table> {
        let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            v.push(Some(pool.alloc(300, GFP_KERNEL)?), GFP_KERNEL)?;
        }
        Ok(Table {
            pool: pool.clone(),
            handles: KBox::pin_init(crate::new_spinlock!(v), GFP_KERNEL)?,
            drained: AtomicUsize::new(0),
            batches: AtomicUsize::new(0),
            hold: AtomicBool::new(false),
        })
    }

    #[test]
    fn deferred_drain_and_flush() -> Result {
        const N: usize = 5000;
        let pool = Arc::new(Pool::new(c_str!("rust_zs_df"))?, GFP_KERNEL)?;
        let df = Deferred::new(pool.clone(), table(&pool, N)?, 0)?;
        for i in 0..N {
            df.push(i as u32);
        }
        df.flush();
        // Everything pushed before the flush has been freed, exactly once.
        kunit_expect_eq!(df.owner().drained.load(Ordering::Relaxed), N);
        kunit_expect_eq!(pool.total_pages(), 0);
        let s = df.stats();
        kunit_expect_eq!(s.pushed + s.sync_frees, N as u64);
        kunit_expect_eq!(s.drained, s.pushed);
        kunit_expect!(s.pages <= s.max_pages);
        Ok(())
    }

    #[test]
    fn deferred_fallback_and_drop() -> Result {
        const N: usize = 20000;
        let pool = Arc::new(Pool::new(c_str!("rust_zs_df_full"))?, GFP_KERNEL)?;
        // The smallest bound, and a drain held back: the queue fills up, and pushes then free
        // synchronously.
        let df = Deferred::new(pool.clone(), table(&pool, N)?, 1)?;
        df.owner().hold.store(true, Ordering::Release);
        let mut sync = 0;
        for i in 0..N {
            if !df.push(i as u32) {
                sync += 1;
            }
        }
        let s = df.stats();
        kunit_expect!(sync > 0);
        kunit_expect_eq!(s.sync_frees, sync as u64);
        kunit_expect!(s.pages <= s.max_pages);
        df.owner().hold.store(false, Ordering::Release);
        // Dropping the queue drains what is left, before the owner goes.
        drop(df);
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    #[test]
    fn concurrent_frees() -> Result {
        const N: usize = 3000;
        let pool = Arc::new(Pool::new(c_str!("rust_zs_conc"))?, GFP_KERNEL)?;
        let done = Arc::new(AtomicUsize::new(0), GFP_KERNEL)?;
        for w in 0..2 {
            let mut v = KVec::with_capacity(N, GFP_KERNEL)?;
            for i in 0..N {
                let size = 64 + (i * 37 + w * 11) % 3000;
                v.push(pool.alloc(size, GFP_KERNEL)?, GFP_KERNEL)?;
            }
            let (pool, done) = (pool.clone(), done.clone());
            crate::workqueue::system_unbound().try_spawn(GFP_KERNEL, move || {
                for h in v {
                    pool.free(h);
                }
                done.fetch_add(1, Ordering::Release);
            })?;
        }
        // Compact while the two workers free.
        while done.load(Ordering::Acquire) < 2 {
            pool.compact();
            // SAFETY: FFI call; a test case runs in process context and may sleep.
            unsafe { bindings::msleep(1) };
        }
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }
}

/// The cost of the binding: an alloc, write and free cycle through it and through direct C calls,
/// over the same size mix. Prints its figures; asserts nothing (`make bench` collects them).
#[cfg(CONFIG_RUST_ZSMALLOC_KUNIT_TEST)]
#[macros::kunit_tests(rust_zsmalloc_bench)]
mod bench {
    use super::*;
    use crate::{alloc::KVec, c_str};

    const SIZES: [usize; 8] = [64, 200, 512, 700, 1500, 2400, 3000, 4096];
    const CYCLES: usize = 20_000;
    const ROUNDS: usize = 7;

    fn now() -> i64 {
        // SAFETY: FFI call without preconditions.
        unsafe { bindings::ktime_get() }
    }

    fn through_binding(pool: &Pool) -> Result<i64> {
        let start = now();
        for i in 0..CYCLES {
            let size = SIZES[i % SIZES.len()];
            let mut h = pool.alloc(size, GFP_KERNEL)?;
            pool.map_write(&mut h, size)?.fill(i as u8);
            pool.free(h);
        }
        Ok(now() - start)
    }

    fn through_c(pool: &Pool) -> Result<i64> {
        let gfp = GFP_KERNEL.as_raw() | bindings::__GFP_HIGHMEM | bindings::__GFP_MOVABLE;
        let start = now();
        for i in 0..CYCLES {
            let size = SIZES[i % SIZES.len()];
            // SAFETY: the pool is valid; each handle is mapped once, unmapped and freed once,
            // as zsmalloc requires, with nothing else mapped on this CPU.
            unsafe {
                let h = bindings::zs_malloc(pool.raw(), size, gfp);
                if h == 0 || from_err_ptr(h as *mut c_void).is_err() {
                    return Err(ENOMEM);
                }
                let p = bindings::zs_map_object(pool.raw(), h, bindings::zs_mapmode_ZS_MM_WO);
                core::ptr::write_bytes(p.cast::<u8>(), i as u8, size);
                bindings::zs_unmap_object(pool.raw(), h);
                bindings::zs_free(pool.raw(), h);
            }
        }
        Ok(now() - start)
    }

    fn median(v: &mut [i64]) -> i64 {
        v.sort_unstable();
        v[v.len() / 2]
    }

    #[test]
    fn binding_vs_c() -> Result {
        let pool = Pool::new(c_str!("rust_zs_bench"))?;
        // Warm the pool's classes up so that both variants reuse pages.
        through_c(&pool)?;
        let mut rust = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
        let mut c = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
        for _ in 0..ROUNDS {
            c.push(through_c(&pool)?, GFP_KERNEL)?;
            rust.push(through_binding(&pool)?, GFP_KERNEL)?;
        }
        let (r, c) = (median(&mut rust), median(&mut c));
        let n = CYCLES as i64;
        crate::pr_info!(
            "zsmalloc bench: cycles={} rounds={} binding_ns={} c_ns={} ratio_permille={}\n",
            CYCLES,
            ROUNDS,
            r / n,
            c / n,
            r * 1000 / c.max(1)
        );
        Ok(())
    }
}
