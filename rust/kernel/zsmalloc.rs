// SPDX-License-Identifier: GPL-2.0

//! zsmalloc, the allocator that stores compressed pages.
//!
//! A [`Pool`] hands out objects of up to one page. An allocation starts as a [`NewObject`],
//! which can only be written; [`NewObject::write`] turns it into a [`Handle`], which can only be
//! read, through a scoped mapping guard, [`ReadGuard`]. Both free their object when dropped. A
//! [`Table`] keeps objects (or plain words) in slots with a lock each, and owns its pool. A
//! [`Deferred`] queues frees per CPU and hands them in batches to a drain callback that runs on a
//! worker.
//!
//! # Safety model
//!
//! - An allocation is owned: [`NewObject`] and [`Handle`] are neither `Copy` nor `Clone`, and free
//!   their object when dropped, so a double free or a use after free does not compile and an
//!   early return (`?`) does not leak. Leaking an object takes [`core::mem::forget`].
//! - Both borrow their pool (`Handle<'pool>`): an object cannot outlive its pool, and every
//!   operation reaches the pool that allocated the object. A structure that keeps its pool and
//!   its objects together (a block device's slot table) uses a [`Table`], which owns its pool
//!   through an [`Arc`] and stores the objects as bare C handles, 16 bytes per slot with the
//!   slot's lock on 64-bit.
//! - zsmalloc does not initialise objects: their pages come from the page allocator unzeroed, and
//!   an object that spans two pages is mapped through a per-CPU buffer that is never zeroed
//!   either. So a [`NewObject`] has no read method. [`NewObject::write`] copies the caller's bytes
//!   and zeroes the rest of the object up to the capacity of its size class
//!   ([`Handle::capacity`]), and reads are limited to that capacity: every byte a [`ReadGuard`]
//!   shows has been written.
//! - zsmalloc maps an object through a per-CPU area shared by all pools, with preemption disabled
//!   until the unmap. A guard therefore borrows its handle (it cannot outlive it), is `!Send`
//!   (it cannot move to another CPU), and the code that holds it runs in atomic context: it must
//!   not sleep. That is a precondition the types do not enforce, as for every guard that
//!   disables preemption (a spinlock's, RCU's): a thread that sleeps while mapped can migrate,
//!   and another mapping on the old CPU would then overwrite the per-CPU area the guard's slice
//!   points into. It is caught at run time, not compile time: with `CONFIG_DEBUG_ATOMIC_SLEEP`
//!   every sleeping function's `might_sleep()` reports it. Only one object can be mapped per CPU: a
//!   second map on the same CPU while a guard is alive returns [`EBUSY`] instead of overwriting
//!   the first mapping, and so does mapping from interrupt context, which zsmalloc forbids.
//! - A guard's slice has the length the caller asks for, which is checked against the capacity of
//!   the object's size class, so no access can reach past the object.
//!
//! What this says does not compile is checked by `tests/compile_fail/fail_zsmalloc_*.rs` (the
//! kernel's doctests cannot be `compile_fail`).
//!
//! # Context
//!
//! zsmalloc takes its class locks without disabling interrupts, and its deferred-free queue is a
//! per-CPU buffer guarded by disabled preemption only. Every operation of this module is
//! therefore for task context: it may run with preemption disabled or under a spinlock (atomic
//! context) unless it says that it sleeps, but never from interrupt context (hardirq, softirq, or
//! with bottom halves disabled). [`Deferred::push`] and the mappings check this and refuse;
//! the others cannot (an allocation or a free from interrupt context can deadlock on a class
//! lock). While a [`ReadGuard`] is alive, the thread must not allocate or free objects of the
//! same pool nor ask for a class index: those take locks that compaction holds while it waits for
//! the mapping to end.
//!
//! The mappings disable preemption and, on `PREEMPT_RT`, zsmalloc's mapping path takes locks that
//! sleep there: this module is not usable on `PREEMPT_RT`.
//!
//! C header: [`include/linux/zsmalloc.h`](srctree/include/linux/zsmalloc.h)

use crate::{
    alloc::{flags::*, Flags, KBox, KVec},
    bindings,
    error::{code::*, from_err_ptr, Result},
    ffi::c_void,
    page::PAGE_SIZE,
    str::CStr,
    sync::Arc,
};
use core::{
    marker::{PhantomData, PhantomPinned},
    mem::ManuallyDrop,
    num::NonZeroUsize,
    ops::Deref,
    pin::Pin,
    ptr::NonNull,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
};

mod table;
pub use table::{Contents, Slot, SlotGuard, Table};

/// The largest object a pool stores: one page.
pub const MAX_ALLOC_SIZE: usize = PAGE_SIZE;

/// Whether a CPU has an object mapped, indexed by CPU number.
///
/// Written only by the CPU it describes, with preemption disabled, so relaxed accesses suffice.
static MAPPED: [AtomicBool; bindings::CONFIG_NR_CPUS as usize] =
    [const { AtomicBool::new(false) }; bindings::CONFIG_NR_CPUS as usize];

/// A zsmalloc pool.
///
/// Dropping it destroys the pool if every object has been freed. If not (an object was leaked
/// with [`core::mem::forget`]), the pool is leaked, with an error in the log: `zs_destroy_pool()`
/// does not free objects, and their pages would stay reachable by page migration after the
/// pool's memory is gone.
///
/// # Invariants
///
/// - `ptr` points to a pool created by `zs_create_pool()` that this object owns.
/// - `live` counts the objects allocated and not yet freed.
/// - `capacity[i]` is the largest size in `1..=MAX_ALLOC_SIZE` that `zs_malloc()` places in the
///   size class of index `i` (0 if it places none there), so every object of that class has at
///   least that many bytes; every class index the pool returns is below `capacity.len()`.
pub struct Pool {
    ptr: NonNull<bindings::zs_pool>,
    live: AtomicUsize,
    capacity: KVec<u32>,
}

// SAFETY: every zsmalloc function that takes a pool may be called from any thread; the pool has
// no thread affinity.
unsafe impl Send for Pool {}

// SAFETY: zsmalloc serialises concurrent calls on one pool internally (class locks, the migrate
// lock and atomics); `live` is atomic and `capacity` is only read after `new`.
unsafe impl Sync for Pool {}

/// Pool statistics; see [`Pool::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Pages released by compaction over the pool's life.
    pub pages_compacted: usize,
}

impl Pool {
    /// Creates a pool; `name` shows up in `/proc/slabinfo` and the debugfs statistics.
    ///
    /// Fails with [`ENOMEM`] if the pool cannot be allocated. Context: process context; sleeps.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// assert_eq!(pool.total_pages(), 0);
    /// assert_eq!(pool.live_objects(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(name: &CStr) -> Result<Self> {
        // SAFETY: `name` is a valid NUL-terminated string; zsmalloc copies it.
        let ptr = unsafe { bindings::zs_create_pool(name.as_char_ptr()) };
        let ptr = NonNull::new(ptr).ok_or(ENOMEM)?;
        let mut pool = Pool {
            ptr,
            live: AtomicUsize::new(0),
            capacity: KVec::new(),
        };
        // From here an error drops `pool`, which destroys the empty C pool. Class indices grow
        // with the size, so the largest size has the largest index.
        let classes = pool.lookup_class(MAX_ALLOC_SIZE) as usize + 1;
        let mut capacity = KVec::from_elem(0u32, classes, GFP_KERNEL)?;
        for size in 1..=MAX_ALLOC_SIZE {
            // Sizes ascend, so the last size seen for a class is its largest.
            if let Some(c) = capacity.get_mut(pool.lookup_class(size) as usize) {
                *c = size as u32;
            }
        }
        // INVARIANT: the pool was just created, is owned by nobody else and holds no objects;
        // `capacity` was filled from zsmalloc's own class lookup over every size, which is what
        // `zs_malloc()` uses to place an object.
        pool.capacity = capacity;
        Ok(pool)
    }

    fn raw(&self) -> *mut bindings::zs_pool {
        self.ptr.as_ptr()
    }

    /// The class index of `size`, which must be in `1..=MAX_ALLOC_SIZE`.
    fn lookup_class(&self, size: usize) -> u32 {
        // SAFETY: the pool is valid by the type invariant; zsmalloc accepts any size (it clamps
        // sizes above the largest class) and `size` fits in a `u32` since it is at most a page.
        unsafe { bindings::zs_lookup_class_index(self.raw(), size as u32) }
    }

    /// The number of bytes every object of class `index` can hold; 0 for an unknown index.
    fn capacity_of(&self, index: u32) -> usize {
        self.capacity.get(index as usize).map_or(0, |&c| c as usize)
    }

    /// Allocates an object of `size` bytes, which can hold up to its class's capacity.
    ///
    /// The object is uninitialised and cannot be read: write it with [`NewObject::write`]. It is
    /// freed if dropped unwritten. `flags` says how hard to try (for example [`GFP_NOWAIT`] on a
    /// fast path, then [`GFP_KERNEL`]); the pool adds `__GFP_HIGHMEM | __GFP_MOVABLE` itself, since
    /// its pages can always be migrated.
    ///
    /// Fails with [`EINVAL`] if `size` is 0, with [`E2BIG`] if it exceeds [`MAX_ALLOC_SIZE`], and
    /// with [`ENOMEM`] if memory is short.
    ///
    /// Context: task context, never interrupt context; sleeps only if `flags` allow it.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::{Pool, MAX_ALLOC_SIZE}};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let obj = pool.alloc(100, GFP_KERNEL)?;
    /// assert!(obj.capacity() >= 100);
    /// assert_eq!(pool.alloc(0, GFP_KERNEL).err(), Some(EINVAL));
    /// assert_eq!(pool.alloc(MAX_ALLOC_SIZE + 1, GFP_KERNEL).err(), Some(E2BIG));
    /// drop(obj);
    /// assert_eq!(pool.live_objects(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn alloc(&self, size: usize, flags: Flags) -> Result<NewObject<'_>> {
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
        // INVARIANT: `raw` is a new handle of this pool, owned by the result and counted in
        // `live`.
        Ok(NewObject(Object { raw, pool: self }))
    }

    /// Frees many objects, taking each size class's lock once per batch of up to 64.
    ///
    /// Objects of another pool are freed one by one into their own pool.
    ///
    /// Context: task context, never interrupt context; does not sleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let mut v = KVec::new();
    /// for size in 1..200 {
    ///     v.push(pool.alloc(size * 20, GFP_KERNEL)?.write(&[1; 20])?, GFP_KERNEL)?;
    /// }
    /// pool.free_bulk(v);
    /// assert_eq!(pool.total_pages(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn free_bulk<'h>(&self, handles: impl IntoIterator<Item = Handle<'h>>) {
        const BATCH: usize = 64;
        let mut raw = [0usize; BATCH];
        let mut n = 0;
        for h in handles {
            if !core::ptr::eq(h.pool(), self) {
                // Freed into the pool that allocated it.
                drop(h);
                continue;
            }
            // The object's ownership moves into `raw`.
            raw[n] = h.into_raw();
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
        // Each entry was taken with `Handle::into_raw` from a handle of this pool (checked by
        // address: a handle borrows its pool, so no other live pool has that address).
        // SAFETY: the pool is valid and each entry a live handle of it, freed exactly once here;
        // zs_free_bulk() only sorts and frees the array's entries.
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
    /// drop(h);
    /// assert_eq!(pool.live_objects(), 0);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn live_objects(&self) -> usize {
        self.live.load(Ordering::Relaxed)
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
    /// let h = pool.alloc(1000, GFP_KERNEL)?.write(&[7; 1000])?;
    /// assert!(pool.total_pages() >= 1);
    /// drop(h);
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
    /// let obj = pool.alloc(200, GFP_KERNEL)?;
    /// assert_eq!(obj.class_index(), pool.class_index_for(200)?);
    /// assert!(pool.class_index_for(100)? <= pool.class_index_for(200)?);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn class_index_for(&self, size: usize) -> Result<u32> {
        if size == 0 || size > MAX_ALLOC_SIZE {
            return Err(EINVAL);
        }
        Ok(self.lookup_class(size))
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
        // SAFETY: the pool is valid, owned by `self` and empty; nothing can use it after this:
        // every object borrows the pool or is owned by a `Table` that holds a reference to it,
        // and so does every `Deferred` of the pool.
        unsafe { bindings::zs_destroy_pool(self.raw()) };
    }
}

/// An object of a pool, owned; freed when dropped. The common part of [`NewObject`] and
/// [`Handle`].
///
/// # Invariants
///
/// `raw` is a live handle of `pool`, owned by this value and counted in `pool.live`.
struct Object<'a> {
    raw: NonZeroUsize,
    pool: &'a Pool,
}

impl Object<'_> {
    fn class_index(&self) -> u32 {
        // SAFETY: the object is live and cannot be freed while `self` is borrowed.
        unsafe { class_index_raw(self.pool, self.raw.get()) }
    }

    fn capacity(&self) -> usize {
        self.pool.capacity_of(self.class_index())
    }
}

impl Drop for Object<'_> {
    fn drop(&mut self) {
        // SAFETY: the pool is valid and `raw` is a live handle of it owned by `self`, freed once,
        // here.
        unsafe { bindings::zs_free(self.pool.raw(), self.raw.get()) };
        self.pool.live.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Returns the class index of the object of `raw`.
///
/// # Safety
///
/// `raw` must be a live handle of `pool`, not freed during the call.
unsafe fn class_index_raw(pool: &Pool, raw: usize) -> u32 {
    // SAFETY: the pool is valid and, by the caller, `raw` is a live handle of it.
    unsafe { bindings::zs_handle_class_index(pool.raw(), raw) }
}

/// A new, unwritten object of a pool: it can only be written (or dropped, which frees it).
///
/// Created by [`Pool::alloc`]. Its bytes are uninitialised, so it offers no way to read them.
/// It borrows its pool, so it cannot outlive it.
///
/// Dropping it frees the object. Context of the drop: task context, never interrupt context;
/// does not sleep.
///
/// # Examples
///
/// A new object has nothing to read:
///
/// ```ignore
/// // Does not compile: `NewObject` has no `map_read`.
/// use kernel::{c_str, zsmalloc::Pool};
///
/// let pool = Pool::new(c_str!("doc"))?;
/// let obj = pool.alloc(3000, GFP_KERNEL)?;
/// let _ = obj.map_read(3000)?[0];
/// # Ok::<(), Error>(())
/// ```
///
/// (Marked `ignore` rather than `compile_fail`: the kernel's doctest builder turns every doctest
/// it is given into a KUnit case, so it cannot run `compile_fail` ones yet. Checked instead by
/// `tests/compile_fail/fail_zsmalloc_read_new_object.rs`.)
pub struct NewObject<'a>(Object<'a>);

impl<'a> NewObject<'a> {
    /// Returns the index of the size class that holds the object, as
    /// [`Pool::class_index_for`] of the size it was allocated with.
    ///
    /// Context: task context, never interrupt context; not while this thread holds a
    /// [`ReadGuard`] (on 32-bit this takes the class lock).
    pub fn class_index(&self) -> u32 {
        self.0.class_index()
    }

    /// Returns how many bytes the object can hold: the capacity of its size class, at least the
    /// size it was allocated with and at most [`MAX_ALLOC_SIZE`].
    ///
    /// Context: as [`class_index`](Self::class_index).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::{Pool, MAX_ALLOC_SIZE}};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// for size in [1, 100, 1000, MAX_ALLOC_SIZE] {
    ///     let c = pool.alloc(size, GFP_KERNEL)?.capacity();
    ///     assert!(c >= size && c <= MAX_ALLOC_SIZE);
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Returns the pool the object belongs to.
    pub fn pool(&self) -> &'a Pool {
        self.0.pool
    }

    /// Writes `data` to the start of the object and zeroes the rest of it, up to its
    /// [`capacity`](Self::capacity); returns the written object, which can be read.
    ///
    /// `data` may be shorter than the size the object was allocated with (a caller that
    /// allocated ahead of time may reuse the object for smaller data). Fails with [`EINVAL`] if
    /// `data` is empty or longer than the capacity, and with [`EBUSY`] if this CPU already has an
    /// object mapped or the caller is in interrupt context; on failure the object is freed.
    ///
    /// Context: task context, never interrupt context, and not while this thread holds a
    /// [`ReadGuard`] (the write would fail, and freeing the object while mapped may deadlock
    /// against compaction); does not sleep.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let obj = pool.alloc(3000, GFP_KERNEL)?;
    /// let cap = obj.capacity();
    /// // Fewer bytes than allocated: the rest reads as zeroes.
    /// let h = obj.write(b"hello")?;
    /// let g = h.map_read(cap)?;
    /// assert_eq!(&g[..5], b"hello");
    /// assert!(g[5..].iter().all(|&b| b == 0));
    /// drop(g);
    /// // Too much data: refused, and the object is freed.
    /// let obj = pool.alloc(10, GFP_KERNEL)?;
    /// let too_long = KVec::from_elem(0u8, obj.capacity() + 1, GFP_KERNEL)?;
    /// assert_eq!(obj.write(&too_long).err(), Some(EINVAL));
    /// assert_eq!(pool.live_objects(), 1);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn write(self, data: &[u8]) -> Result<Handle<'a>> {
        if data.is_empty() {
            return Err(EINVAL);
        }
        {
            // SAFETY: `raw` is a live handle of `pool`, which stays live while `self` owns it,
            // that is for the whole block.
            let m = unsafe { Mapping::new(self.0.pool, self.0.raw.get(), None, MODE_WRITE) }?;
            // The whole object is mapped: `m.len` is the capacity of its class.
            let cap = m.len;
            if data.len() > cap {
                // Nothing is written; the object is freed with `self`.
                return Err(EINVAL);
            }
            let dst = m.ptr.as_ptr();
            // SAFETY: by `Mapping`'s invariant `dst` is valid for writes of `cap` bytes until `m`
            // is dropped; the object is new and owned by `self`, so nothing else accesses it, and
            // `data` (borrowed for the call) cannot overlap it. `data.len() <= cap`.
            unsafe {
                core::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len());
                core::ptr::write_bytes(dst.add(data.len()), 0, cap - data.len());
            }
            // Dropping `m` unmaps the object, which for an object that spans two pages copies
            // the per-CPU buffer into it.
        }
        // INVARIANT: the whole mapping, the capacity of the object's class, was written above;
        // the ownership of the object moves to the handle.
        Ok(Handle(self.0))
    }
}

/// A written object of a pool: it can be read; it is freed when dropped.
///
/// Created by [`NewObject::write`]. It borrows its pool, so it cannot outlive it.
///
/// Dropping it frees the object (many at once: [`Pool::free_bulk`]). Context of the drop: task
/// context, never interrupt context, and not while this thread holds a [`ReadGuard`] of the same
/// pool; does not sleep.
///
/// # Invariants
///
/// The object's first [`capacity`](Self::capacity) bytes have been written (by
/// [`NewObject::write`]) and are never written again.
///
/// # Examples
///
/// ```
/// use kernel::{c_str, zsmalloc::Pool};
///
/// let pool = Pool::new(c_str!("doc"))?;
/// let h = pool.alloc(5, GFP_KERNEL)?.write(b"hello")?;
/// assert_eq!(&*h.map_read(5)?, b"hello");
/// assert!(h.capacity() >= 5);
/// drop(h);
/// assert_eq!(pool.live_objects(), 0);
/// # Ok::<(), Error>(())
/// ```
///
/// A handle cannot outlive its pool:
///
/// ```ignore
/// // Does not compile: `pool` is moved (dropped) while `h` borrows it.
/// use kernel::{c_str, zsmalloc::Pool};
///
/// let pool = Pool::new(c_str!("doc"))?;
/// let h = pool.alloc(10, GFP_KERNEL)?.write(b"x")?;
/// drop(pool);
/// let _ = h.capacity();
/// # Ok::<(), Error>(())
/// ```
///
/// (Marked `ignore` for the reason given at [`NewObject`]; checked by
/// `tests/compile_fail/fail_zsmalloc_handle_outlives_pool.rs`.)
pub struct Handle<'a>(Object<'a>);

impl<'a> Handle<'a> {
    /// Returns the index of the size class that holds the object, as
    /// [`Pool::class_index_for`] of the size it was allocated with.
    ///
    /// Context: as [`NewObject::class_index`].
    pub fn class_index(&self) -> u32 {
        self.0.class_index()
    }

    /// Returns how many bytes can be read: the capacity of the object's size class.
    ///
    /// Context: as [`NewObject::class_index`].
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Returns the pool the object belongs to.
    pub fn pool(&self) -> &'a Pool {
        self.0.pool
    }

    /// Maps the first `len` bytes of the object for reading.
    ///
    /// Bytes past the data given to [`NewObject::write`] read as zeroes.
    ///
    /// Context: task context, never interrupt context. The returned guard disables preemption;
    /// see the [module docs](self) for what may be done while it lives.
    ///
    /// Fails with [`EINVAL`] if `len` is 0 or larger than [`capacity`](Self::capacity), and with
    /// [`EBUSY`] if this CPU already has an object mapped or the caller is in interrupt context.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let a = pool.alloc(100, GFP_KERNEL)?.write(&[0x5a; 100])?;
    /// let b = pool.alloc(100, GFP_KERNEL)?.write(&[0xa5; 100])?;
    /// assert_eq!(a.map_read(0).err(), Some(EINVAL));
    /// assert_eq!(a.map_read(a.capacity() + 1).err(), Some(EINVAL));
    /// let g = a.map_read(100)?;
    /// assert!(g.iter().all(|&x| x == 0x5a));
    /// // One mapping per CPU.
    /// assert_eq!(b.map_read(100).err(), Some(EBUSY));
    /// drop(g);
    /// assert_eq!(b.map_read(100)?[99], 0xa5);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn map_read(&self, len: usize) -> Result<ReadGuard<'_>> {
        // SAFETY: `raw` is a live handle of `pool` whose object was written (type invariants);
        // it stays live while `self` is borrowed, which the guard does.
        unsafe { map_read_raw(self.0.pool, self.0.raw.get(), len) }
    }

    /// Gives up ownership of the object and returns its C handle.
    ///
    /// The object stays allocated (and counted in [`Pool::live_objects`]); [`Handle::from_raw`]
    /// takes it back.
    fn into_raw(self) -> usize {
        let this = ManuallyDrop::new(self);
        this.0.raw.get()
    }

    /// Takes back the ownership of an object given up with [`Handle::into_raw`]; `None` if `raw`
    /// is 0.
    ///
    /// # Safety
    ///
    /// `raw` must come from [`Handle::into_raw`] of a handle of `pool`, and this must be the only
    /// `from_raw` of that `into_raw`.
    unsafe fn from_raw(raw: usize, pool: &'a Pool) -> Option<Handle<'a>> {
        // INVARIANT: by the caller, `raw` is a live, written object of `pool` whose ownership
        // (counted in `live`) comes back from `into_raw` exactly once.
        Some(Handle(Object {
            raw: NonZeroUsize::new(raw)?,
            pool,
        }))
    }
}

/// The mapping mode of [`ReadGuard`]s.
const MODE_READ: bindings::zs_mapmode = bindings::zs_mapmode_ZS_MM_RO;
/// The mapping mode of [`NewObject::write`]: nothing is copied in, everything is copied out.
const MODE_WRITE: bindings::zs_mapmode = bindings::zs_mapmode_ZS_MM_WO;

/// Maps the first `len` bytes of the object of `raw` for reading.
///
/// # Safety
///
/// `raw` must be a live handle of `pool` whose object has been written by [`NewObject::write`],
/// and must stay live for `'g`.
unsafe fn map_read_raw<'g>(pool: &'g Pool, raw: usize, len: usize) -> Result<ReadGuard<'g>> {
    // SAFETY: by the caller `raw` is a live handle of `pool` for `'g`.
    let m = unsafe { Mapping::new(pool, raw, Some(len), MODE_READ) }?;
    // INVARIANT: the object was written up to the capacity of its class, and the mapping's
    // length is at most that; written objects are never written again.
    Ok(ReadGuard { m })
}

/// A mapped object; the common part of [`ReadGuard`] and [`NewObject::write`].
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
    /// Pins the mapping to its thread: it must be dropped on the CPU that mapped it.
    _not_send: PhantomData<*mut ()>,
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
    unsafe fn new(
        pool: &'a Pool,
        handle: usize,
        len: Option<usize>,
        mode: bindings::zs_mapmode,
    ) -> Result<Self> {
        // SAFETY: FFI calls without preconditions. Preemption stays disabled from here until the
        // object is mapped, so the CPU number stays right.
        let cpu = unsafe {
            bindings::preempt_disable();
            bindings::raw_smp_processor_id() as usize
        };
        // SAFETY: by the caller `handle` is a live handle of `pool`; preemption is disabled.
        let len = match unsafe { Self::check(pool, handle, len, cpu) } {
            Ok(len) => len,
            Err(e) => {
                // SAFETY: matches the `preempt_disable()` above.
                unsafe { bindings::preempt_enable() };
                return Err(e);
            }
        };
        MAPPED[cpu].store(true, Ordering::Relaxed);
        // SAFETY: the pool is valid and, by the caller, `handle` a live handle of it; not in
        // interrupt context and no other object mapped on this CPU, as zsmalloc requires.
        let ptr = unsafe { bindings::zs_map_object(pool.raw(), handle, mode) };
        // SAFETY: the mapping keeps preemption disabled on its own until it is unmapped.
        unsafe { bindings::preempt_enable() };
        let Some(ptr) = NonNull::new(ptr.cast::<u8>()) else {
            // zs_map_object() does not fail; a null pointer would be a zsmalloc bug.
            MAPPED[cpu].store(false, Ordering::Relaxed);
            // SAFETY: the object was mapped above and is unmapped once, here.
            unsafe { bindings::zs_unmap_object(pool.raw(), handle) };
            return Err(EINVAL);
        };
        // INVARIANT: zsmalloc mapped the object, of at least `len` bytes since `len` is at most
        // the capacity of its class (both modes give read and write access to the mapping);
        // `MAPPED[cpu]` was set above.
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
    /// `handle` must be a live handle of `pool`, and preemption must be disabled since `cpu` was
    /// read.
    unsafe fn check(pool: &Pool, handle: usize, len: Option<usize>, cpu: usize) -> Result<usize> {
        // SAFETY: FFI call without preconditions.
        if unsafe { bindings::in_interrupt() } || MAPPED[cpu].load(Ordering::Relaxed) {
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
/// the [module docs](self)). It is `!Send`: it must be dropped on the CPU that mapped it.
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
    m: Mapping<'a>,
}

impl Deref for ReadGuard<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: by `Mapping`'s invariant the bytes are valid until the guard drops; by the
        // type invariant they are initialised and nothing writes them meanwhile.
        unsafe { core::slice::from_raw_parts(self.m.ptr.as_ptr(), self.m.len) }
    }
}

/// The owner of a deferred-free queue: what it queues, and how it frees a batch.
///
/// The owner usually holds the [`Table`] that maps its items (slot numbers, say) to objects, and
/// frees those objects in [`drain`](Self::drain). The owner and its items are `'static`: the
/// queue's worker may run as long as the queue exists, and a queue can be leaked (with
/// [`core::mem::forget`] or a reference cycle), so the owner must not borrow anything (checked
/// by `tests/compile_fail/fail_zsmalloc_deferred_owner_borrows.rs` and
/// `tests/compile_fail/fail_zsmalloc_deferred_owner_borrows_local.rs`).
pub trait DeferredFree: Send + Sync + 'static {
    /// What is queued: typically an index into the owner's table. At most one page.
    type Item: Copy + Send + 'static;

    /// Frees the objects that `items` name.
    ///
    /// Runs on a worker of an unbound workqueue, and also in the caller of [`Deferred::push`]
    /// when the queue is full (then in the caller's context, which may be atomic, and under the
    /// caller's locks); so it can run concurrently with itself and must not sleep.
    ///
    /// It must not push to its own queue (with the queue full, each push would drain inline
    /// again, without bound), and must not drop the last reference to its own [`Deferred`]
    /// (dropping the queue waits for its worker, which is running the drain).
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

/// What [`Deferred::push`] did with an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushed {
    /// Queued: a worker will hand it to the drain.
    Queued,
    /// The queue was full: the drain already ran with it, in the caller.
    Drained,
}

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
    // The queue stores items of `size_of::<T::Item>()` bytes at that stride from a page-aligned
    // address; `push` never runs from interrupt context, so no push interrupts another.
    // SAFETY: so `elems` holds `nr` aligned `T::Item`s, each copied whole from a valid `T::Item`
    // by `push`.
    let items = unsafe { core::slice::from_raw_parts(elems.cast::<T::Item>(), nr as usize) };
    owner.drain(items);
}

impl<T: DeferredFree> Deferred<T> {
    /// Registers `owner` on `pool` with a bound of `max_pages` buffer pages.
    ///
    /// With `max_pages` 0 the bound scales with the pool: one buffer page per 512 pool pages, and
    /// at least four per CPU. Context: process context; sleeps.
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
    ///     assert!(df.push(i).is_ok());
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
        // which outlives the queue because `drop` destroys the queue first (and if the queue is
        // leaked, so is the box that holds the owner, and the owner borrows nothing).
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

    /// Queues `item` for the drain.
    ///
    /// Returns [`Pushed::Queued`] if the item was queued, and [`Pushed::Drained`] if the queue
    /// was full and the drain ran at once, in this thread, with `item` alone. From interrupt
    /// context the queue is not touched and nothing is drained: the item comes back as the
    /// error, and the caller keeps whatever it names.
    ///
    /// Context: task context; may be called with preemption disabled or under a spinlock
    /// (atomic), never from interrupt context (hardirq, softirq, or with bottom halves disabled);
    /// does not sleep. Since the drain may run inline, the caller must not hold a lock that the
    /// drain takes.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, prelude::*, sync::Arc};
    /// use kernel::zsmalloc::{Deferred, DeferredFree, Pool, Pushed};
    /// use core::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// struct Sum(AtomicUsize);
    ///
    /// impl DeferredFree for Sum {
    ///     type Item = usize;
    ///     fn drain(&self, items: &[usize]) {
    ///         self.0.fetch_add(items.iter().sum(), Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let pool = Arc::new(Pool::new(c_str!("doc"))?, GFP_KERNEL)?;
    /// let df = Deferred::new(pool, Sum(AtomicUsize::new(0)), 0)?;
    /// match df.push(5) {
    ///     Ok(Pushed::Queued) => df.flush(),
    ///     Ok(Pushed::Drained) => {}
    ///     // Only from interrupt context.
    ///     Err(_) => return Err(EBUSY),
    /// }
    /// assert_eq!(df.owner().0.load(Ordering::Relaxed), 5);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn push(&self, item: T::Item) -> core::result::Result<Pushed, T::Item> {
        // zs_deferred_push() writes this CPU's buffer with only preemption disabled: a push from
        // an interrupt that interrupted a push on the same CPU would corrupt it.
        // SAFETY: FFI call without preconditions.
        if unsafe { bindings::in_interrupt() } {
            return Err(item);
        }
        // SAFETY: `raw` is live; `item` is `size_of::<T::Item>()` readable bytes, which the queue
        // copies; not in interrupt context, as zs_deferred_push() requires.
        let queued =
            unsafe { bindings::zs_deferred_push(self.raw, core::ptr::from_ref(&item).cast()) };
        if queued {
            Ok(Pushed::Queued)
        } else {
            self.owner.drain(core::slice::from_ref(&item));
            Ok(Pushed::Drained)
        }
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
    use crate::{alloc::KVec, c_str, kunit_expect, kunit_expect_eq, types::Opaque};
    use core::sync::atomic::{AtomicU32, AtomicUsize};

    fn byte(seed: usize, i: usize) -> u8 {
        (seed.wrapping_mul(131) ^ i.wrapping_mul(7) ^ (i >> 8) ^ 0x80) as u8
    }

    /// `len` bytes of pattern `seed`; never all zeroes.
    fn pattern(len: usize, seed: usize) -> Result<KVec<u8>> {
        let mut v = KVec::with_capacity(len, GFP_KERNEL)?;
        for i in 0..len {
            v.push(byte(seed, i), GFP_KERNEL)?;
        }
        Ok(v)
    }

    /// Whether `bytes` are the start of pattern `seed`.
    fn is_pattern(bytes: &[u8], seed: usize) -> bool {
        bytes.iter().enumerate().all(|(i, &b)| b == byte(seed, i))
    }

    fn store<'a>(pool: &'a Pool, len: usize, seed: usize) -> Result<Handle<'a>> {
        pool.alloc(len, GFP_KERNEL)?.write(&pattern(len, seed)?)
    }

    /// Whether the object holds pattern `seed` for `len` bytes, then zeroes up to its capacity.
    fn intact(h: &Handle<'_>, len: usize, seed: usize) -> Result<bool> {
        let cap = h.capacity();
        let g = h.map_read(cap)?;
        Ok(g.len() == cap && is_pattern(&g[..len], seed) && g[len..].iter().all(|&b| b == 0))
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
            objs.push((store(&pool, size, seed)?, size, seed), GFP_KERNEL)?;
        }
        kunit_expect!(pool.total_pages() > 0);
        kunit_expect_eq!(pool.live_objects(), objs.len());
        let mut bad = 0;
        for (h, size, seed) in objs.iter() {
            if !intact(h, *size, *seed)? {
                bad += 1;
            }
        }
        kunit_expect_eq!(bad, 0);
        drop(objs);
        kunit_expect_eq!(pool.live_objects(), 0);
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    /// Every size reads back exactly what was written, and zeroes from there to the capacity,
    /// also in memory that held other data: before each object, one of the same size is filled
    /// with 0xff and freed, and zsmalloc hands a freed slot out again first.
    #[test]
    fn read_back_every_size() -> Result {
        let pool = Pool::new(c_str!("rust_zs_every"))?;
        let ones = KVec::from_elem(0xffu8, MAX_ALLOC_SIZE, GFP_KERNEL)?;
        let data = pattern(MAX_ALLOC_SIZE, 3)?;
        // Every size with 4 KiB pages; as many sizes, evenly spread, with larger pages.
        let step = (MAX_ALLOC_SIZE / 4096).max(1);
        let mut bad = 0;
        for size in (1..=MAX_ALLOC_SIZE).step_by(step) {
            let dirty = pool.alloc(size, GFP_KERNEL)?;
            let cap = dirty.capacity();
            kunit_expect!(cap >= size && cap <= MAX_ALLOC_SIZE);
            drop(dirty.write(&ones[..cap])?);
            // A spare allocated for `size` bytes but given fewer, as rzram does.
            let len = if size % 2 == 0 { size / 2 } else { size };
            let h = pool.alloc(size, GFP_KERNEL)?.write(&data[..len])?;
            if h.capacity() != cap || !intact(&h, len, 3)? {
                bad += 1;
            }
        }
        kunit_expect_eq!(bad, 0);
        kunit_expect_eq!(pool.live_objects(), 0);
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    #[test]
    fn class_index() -> Result {
        let pool = Pool::new(c_str!("rust_zs_class"))?;
        let mut last: Option<(u32, usize)> = None;
        for size in sizes() {
            let obj = pool.alloc(size, GFP_KERNEL)?;
            let idx = pool.class_index_for(size)?;
            kunit_expect_eq!(obj.class_index(), idx);
            let cap = obj.capacity();
            kunit_expect!(cap >= size);
            // Classes and capacities grow with the size; one class has one capacity.
            if let Some((last_idx, last_cap)) = last {
                kunit_expect!(idx >= last_idx && cap >= last_cap);
                kunit_expect!(idx != last_idx || cap == last_cap);
            }
            // The capacity is the largest size of the class.
            kunit_expect_eq!(pool.class_index_for(cap)?, idx);
            if cap < MAX_ALLOC_SIZE {
                kunit_expect!(pool.class_index_for(cap + 1)? > idx);
            }
            let h = obj.write(&[1])?;
            kunit_expect_eq!(h.class_index(), idx);
            kunit_expect_eq!(h.capacity(), cap);
            last = Some((idx, cap));
        }
        // The largest objects are in the last class, which is huge: one object per page.
        kunit_expect_eq!(
            last,
            Some((pool.class_index_for(MAX_ALLOC_SIZE)?, MAX_ALLOC_SIZE))
        );
        kunit_expect!(pool.huge_class_size() <= MAX_ALLOC_SIZE);
        Ok(())
    }

    #[test]
    fn bad_input() -> Result {
        let pool = Pool::new(c_str!("rust_zs_bad"))?;
        kunit_expect_eq!(pool.alloc(0, GFP_KERNEL).err(), Some(EINVAL));
        kunit_expect_eq!(
            pool.alloc(MAX_ALLOC_SIZE + 1, GFP_KERNEL).err(),
            Some(E2BIG)
        );
        kunit_expect_eq!(pool.alloc(usize::MAX, GFP_KERNEL).err(), Some(E2BIG));
        kunit_expect_eq!(pool.class_index_for(0).err(), Some(EINVAL));
        kunit_expect_eq!(pool.class_index_for(MAX_ALLOC_SIZE + 1).err(), Some(EINVAL));

        // Writes that are empty or longer than the capacity; the object is freed.
        kunit_expect_eq!(pool.alloc(100, GFP_KERNEL)?.write(&[]).err(), Some(EINVAL));
        let obj = pool.alloc(100, GFP_KERNEL)?;
        let long = pattern(obj.capacity() + 1, 0)?;
        kunit_expect_eq!(obj.write(&long).err(), Some(EINVAL));
        kunit_expect_eq!(pool.live_objects(), 0);

        // Mappings longer than the object's class, or empty.
        let h = store(&pool, 100, 1)?;
        kunit_expect_eq!(h.map_read(0).err(), Some(EINVAL));
        kunit_expect_eq!(h.map_read(h.capacity() + 1).err(), Some(EINVAL));
        kunit_expect_eq!(h.map_read(MAX_ALLOC_SIZE + 1).err(), Some(EINVAL));

        // One mapping per CPU: a second one is refused, not corrupted. (Allocate before mapping:
        // a mapping disables preemption. A write is not tried here: it would fail the same way
        // and free its object while this thread holds a mapping, which may deadlock against
        // compaction.)
        let h2 = store(&pool, 100, 2)?;
        {
            let _g = h.map_read(100)?;
            kunit_expect_eq!(h2.map_read(100).err(), Some(EBUSY));
        }
        kunit_expect!(intact(&h2, 100, 2)?);
        kunit_expect_eq!(pool.live_objects(), 2);
        drop((h, h2));
        kunit_expect_eq!(pool.live_objects(), 0);
        Ok(())
    }

    /// Holds two objects and fails at the third allocation.
    fn fails_midway(pool: &Pool) -> Result {
        let _new = pool.alloc(100, GFP_KERNEL)?;
        let _written = store(pool, 2000, 1)?;
        let _never = pool.alloc(0, GFP_KERNEL)?;
        Ok(())
    }

    #[test]
    fn freed_on_drop() -> Result {
        let pool = Pool::new(c_str!("rust_zs_drop"))?;
        kunit_expect_eq!(fails_midway(&pool).err(), Some(EINVAL));
        kunit_expect_eq!(pool.live_objects(), 0);
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    #[test]
    fn compaction() -> Result {
        let pool = Pool::new(c_str!("rust_zs_compact"))?;
        let mut objs = KVec::new();
        for seed in 0..4000 {
            objs.push(Some(store(&pool, 700, seed)?), GFP_KERNEL)?;
        }
        // Free three objects of every four, leaving each page sparsely used.
        for (i, slot) in objs.iter_mut().enumerate() {
            if i % 4 != 0 {
                *slot = None;
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
                if !intact(h, 700, seed)? {
                    bad += 1;
                }
            }
        }
        kunit_expect_eq!(bad, 0);
        drop(objs);
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    /// A table of `n` slots of `pool`: objects of pattern `i` in the even slots, the word `i` in
    /// the odd ones; the caller bits hold the object's length.
    fn filled_table(pool: &Arc<Pool>, n: usize) -> Result<Table> {
        let table = Table::new(pool.clone(), n)?;
        for i in 0..n {
            let new = if i % 2 == 0 {
                Contents::Object(store(pool, 300, i)?)
            } else {
                Contents::Word(i)
            };
            let mut slot = table.lock(i).ok_or(EINVAL)?;
            slot.replace(new)?;
            slot.set_bits(300);
        }
        Ok(table)
    }

    #[test]
    fn table_slots() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rust_zs_table"))?, GFP_KERNEL)?;
        let table = filled_table(&pool, 64)?;
        kunit_expect_eq!(table.len(), 64);
        kunit_expect_eq!(pool.live_objects(), 32);
        kunit_expect!(table.lock(64).is_none());
        kunit_expect_eq!(table.try_lock(64).err(), Some(EINVAL));
        kunit_expect_eq!(table.bits(64), None);
        let mut bad = 0;
        for i in 0..64 {
            let slot = table.lock(i).ok_or(EINVAL)?;
            let ok = if i % 2 == 0 {
                slot.word().is_none()
                    && slot.has_object()
                    && slot.class_index() == Some(pool.class_index_for(300)?)
                    && is_pattern(&slot.map_read(300)?, i)
            } else {
                slot.word() == Some(i)
                    && slot.class_index().is_none()
                    && slot.map_read(1).err() == Some(EINVAL)
            };
            if !ok || slot.bits() != 300 {
                bad += 1;
            }
        }
        kunit_expect_eq!(bad, 0);
        // The caller bits are 30 bits wide; the table's own bit is not theirs.
        {
            let mut slot = table.lock(0).ok_or(EINVAL)?;
            slot.set_bits(u32::MAX);
            kunit_expect_eq!(slot.bits(), Table::MAX_BITS);
            kunit_expect!(slot.has_object());
            kunit_expect_eq!(table.try_lock(0).err(), Some(EBUSY));
        }
        kunit_expect_eq!(table.bits(0), Some(Table::MAX_BITS));
        // Taking an object leaves the word 0; a replaced object comes back.
        {
            let mut slot = table.lock(2).ok_or(EINVAL)?;
            let h = slot.take();
            kunit_expect!(h.is_some());
            kunit_expect_eq!(slot.word(), Some(0));
            kunit_expect!(slot.take().is_none());
            if let Some(h) = h {
                kunit_expect!(matches!(
                    slot.replace(Contents::Object(h))?,
                    Contents::Word(0)
                ));
            }
            kunit_expect!(matches!(
                slot.replace(Contents::Word(5))?,
                Contents::Object(_)
            ));
        }
        kunit_expect_eq!(pool.live_objects(), 31);
        Ok(())
    }

    #[test]
    fn table_drop_frees_all() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rust_zs_tdrop"))?, GFP_KERNEL)?;
        let table = filled_table(&pool, 1000)?;
        kunit_expect_eq!(pool.live_objects(), 500);
        kunit_expect!(pool.total_pages() > 0);
        drop(table);
        kunit_expect_eq!(pool.live_objects(), 0);
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    #[test]
    fn table_refuses_other_pool() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rust_zs_tmine"))?, GFP_KERNEL)?;
        let other = Pool::new(c_str!("rust_zs_tother"))?;
        let table = filled_table(&pool, 2)?;
        let theirs = store(&other, 300, 9)?;
        {
            let mut slot = table.lock(0).ok_or(EINVAL)?;
            kunit_expect_eq!(slot.replace(Contents::Object(theirs)).err(), Some(EINVAL));
            // The slot is unchanged; the refused object went back to its own pool.
            kunit_expect!(is_pattern(&slot.map_read(300)?, 0));
        }
        kunit_expect_eq!(other.live_objects(), 0);
        kunit_expect_eq!(other.total_pages(), 0);
        kunit_expect_eq!(pool.live_objects(), 1);
        // The same for `free_bulk`: each object goes to its own pool.
        let v = [store(&other, 10, 1)?, store(&pool, 10, 2)?];
        pool.free_bulk(v);
        kunit_expect_eq!(other.live_objects(), 0);
        kunit_expect_eq!(pool.live_objects(), 1);
        Ok(())
    }

    #[test]
    fn table_size() -> Result {
        let slot = core::mem::size_of::<Slot>();
        #[cfg(CONFIG_64BIT)]
        {
            kunit_expect_eq!(slot, 16);
            // A 1 TiB device: 4 GiB of slots, above kvmalloc()'s INT_MAX limit, is fine.
            let slots = (1usize << 40) / PAGE_SIZE;
            let bytes = Table::bytes_for(slots);
            kunit_expect_eq!(bytes, Ok(slots * 16));
            kunit_expect!(bytes.is_ok_and(|b| b > i32::MAX as usize));
            // 2^40 slots (16 TiB of table) fail quietly with ENOMEM, without a warning.
            let pool = Arc::new(Pool::new(c_str!("rust_zs_tsize"))?, GFP_KERNEL)?;
            kunit_expect_eq!(Table::new(pool, 1usize << 40).err(), Some(ENOMEM));
        }
        #[cfg(not(CONFIG_64BIT))]
        {
            // The table of a 1 TiB device would not fit the address space.
            kunit_expect_eq!(Table::bytes_for(1usize << 28).err(), Some(ENOMEM));
        }
        kunit_expect_eq!(Table::bytes_for(usize::MAX / 2).err(), Some(ENOMEM));
        kunit_expect_eq!(Table::bytes_for(0), Ok(0));
        kunit_expect_eq!(Table::bytes_for(3), Ok(3 * slot));
        Ok(())
    }

    /// Frees the objects of a table by slot number; the batch drain can be held back.
    struct Slots {
        table: Table,
        drained: AtomicUsize,
        batches: AtomicUsize,
        hold: AtomicBool,
    }

    impl DeferredFree for Slots {
        type Item = u32;

        fn drain(&self, items: &[u32]) {
            if items.len() > 1 {
                self.batches.fetch_add(1, Ordering::Relaxed);
                while self.hold.load(Ordering::Acquire) {
                    core::hint::spin_loop();
                }
            }
            let t = &self.table;
            let taken = items
                .iter()
                .filter_map(|&i| t.lock(i as usize)?.take())
                .inspect(|_| {
                    self.drained.fetch_add(1, Ordering::Relaxed);
                });
            t.pool().free_bulk(taken);
        }
    }

    fn slots(pool: &Arc<Pool>, n: usize) -> Result<Slots> {
        let table = Table::new(pool.clone(), n)?;
        for i in 0..n {
            let h = store(pool, 300, i)?;
            table.lock(i).ok_or(EINVAL)?.replace(Contents::Object(h))?;
        }
        Ok(Slots {
            table,
            drained: AtomicUsize::new(0),
            batches: AtomicUsize::new(0),
            hold: AtomicBool::new(false),
        })
    }

    #[test]
    fn deferred_drain_and_flush() -> Result {
        const N: usize = 5000;
        let pool = Arc::new(Pool::new(c_str!("rust_zs_df"))?, GFP_KERNEL)?;
        let df = Deferred::new(pool.clone(), slots(&pool, N)?, 0)?;
        let mut refused = 0;
        for i in 0..N {
            if df.push(i as u32).is_err() {
                refused += 1;
            }
        }
        kunit_expect_eq!(refused, 0);
        df.flush();
        // Everything pushed before the flush has been freed, exactly once.
        kunit_expect_eq!(df.owner().drained.load(Ordering::Relaxed), N);
        kunit_expect_eq!(pool.live_objects(), 0);
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
        let df = Deferred::new(pool.clone(), slots(&pool, N)?, 1)?;
        df.owner().hold.store(true, Ordering::Release);
        let mut sync = 0;
        for i in 0..N {
            if df.push(i as u32) == Ok(Pushed::Drained) {
                sync += 1;
            }
        }
        let s = df.stats();
        kunit_expect!(sync > 0);
        kunit_expect_eq!(s.sync_frees, sync as u64);
        kunit_expect!(s.pages <= s.max_pages);
        df.owner().hold.store(false, Ordering::Release);
        // Dropping the queue drains what is left, before the owner (and its table) goes.
        drop(df);
        kunit_expect_eq!(pool.live_objects(), 0);
        kunit_expect_eq!(pool.total_pages(), 0);
        Ok(())
    }

    /// Counts what its drain sees.
    struct Counter(AtomicUsize);

    impl DeferredFree for Counter {
        type Item = u32;

        fn drain(&self, items: &[u32]) {
            self.0.fetch_add(items.len(), Ordering::Relaxed);
        }
    }

    /// A timer whose callback, in softirq context, pushes onto a queue.
    ///
    /// `timer` is the first field of this `repr(C)` struct, so a pointer to it is a pointer to
    /// the whole.
    #[repr(C)]
    struct InSoftirq {
        timer: Opaque<bindings::timer_list>,
        df: *const Deferred<Counter>,
        /// 0: not run yet; 1: the push was refused with the item back; 2: anything else.
        outcome: AtomicU32,
    }

    /// # Safety
    ///
    /// `t` must be the `timer` of a live [`InSoftirq`] whose `df` points to a live queue.
    unsafe extern "C" fn push_in_softirq(t: *mut bindings::timer_list) {
        // SAFETY: by the caller `t` is the first field of a live `InSoftirq` (`repr(C)`); only
        // its atomics and `df` are used, through a shared reference.
        let this = unsafe { &*t.cast::<InSoftirq>() };
        // SAFETY: by the caller `df` points to a live queue.
        let df = unsafe { &*this.df };
        let outcome = match df.push(7) {
            Err(7) => 1,
            _ => 2,
        };
        this.outcome.store(outcome, Ordering::Release);
    }

    #[test]
    fn deferred_push_from_interrupt_refused() -> Result {
        let pool = Arc::new(Pool::new(c_str!("rust_zs_df_irq"))?, GFP_KERNEL)?;
        let df = Deferred::new(pool, Counter(AtomicUsize::new(0)), 0)?;
        let t = KBox::new(
            InSoftirq {
                timer: Opaque::uninit(),
                df: &*df,
                outcome: AtomicU32::new(0),
            },
            GFP_KERNEL,
        )?;
        // SAFETY: `t.timer` is a writable `timer_list`, initialised here before any other use;
        // the name and the lock class key are static. The callback's requirements hold until
        // `timer_delete_sync()` below: `t` and `df` outlive it.
        unsafe {
            bindings::init_timer_key(
                t.timer.get(),
                Some(push_in_softirq),
                0,
                c_str!("rust_zs_df_irq").as_char_ptr(),
                crate::static_lock_class!().as_ptr(),
            );
            let now = core::ptr::read_volatile(core::ptr::addr_of!(bindings::jiffies));
            (*t.timer.get()).expires = now;
            bindings::add_timer(t.timer.get());
        }
        // The timer fires at the next tick.
        for _ in 0..5000 {
            if t.outcome.load(Ordering::Acquire) != 0 {
                break;
            }
            // SAFETY: FFI call; a test case runs in process context and may sleep.
            unsafe { bindings::msleep(1) };
        }
        // SAFETY: the timer was initialised above; after this it is not running nor queued.
        unsafe { bindings::timer_delete_sync(t.timer.get()) };
        kunit_expect_eq!(t.outcome.load(Ordering::Acquire), 1);
        // Nothing was queued nor drained.
        df.flush();
        kunit_expect_eq!(df.owner().0.load(Ordering::Relaxed), 0);
        let s = df.stats();
        kunit_expect_eq!(s.pushed, 0);
        kunit_expect_eq!(s.sync_frees, 0);
        Ok(())
    }

    #[test]
    fn concurrent_frees() -> Result {
        const N: usize = 3000;
        let pool = Arc::new(Pool::new(c_str!("rust_zs_conc"))?, GFP_KERNEL)?;
        let done = Arc::new(AtomicUsize::new(0), GFP_KERNEL)?;
        for w in 0..2 {
            let table = Table::new(pool.clone(), N)?;
            for i in 0..N {
                let size = 64 + (i * 37 + w * 11) % 3000;
                let h = store(&pool, size, i)?;
                table.lock(i).ok_or(EINVAL)?.replace(Contents::Object(h))?;
            }
            let done = done.clone();
            crate::workqueue::system_unbound().try_spawn(GFP_KERNEL, move || {
                for i in 0..N {
                    if let Some(mut slot) = table.lock(i) {
                        drop(slot.take());
                    }
                }
                drop(table);
                done.fetch_add(1, Ordering::Release);
            })?;
        }
        // Compact while the two workers free.
        while done.load(Ordering::Acquire) < 2 {
            pool.compact();
            // SAFETY: FFI call; a test case runs in process context and may sleep.
            unsafe { bindings::msleep(1) };
        }
        kunit_expect_eq!(pool.live_objects(), 0);
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

    /// Through the binding: the write also zeroes the object's tail up to its class capacity.
    fn through_binding(pool: &Pool, data: &[u8]) -> Result<i64> {
        let start = now();
        for i in 0..CYCLES {
            let size = SIZES[i % SIZES.len()].min(data.len());
            let h = pool.alloc(size, GFP_KERNEL)?.write(&data[..size])?;
            drop(h);
        }
        Ok(now() - start)
    }

    fn through_c(pool: &Pool, data: &[u8]) -> Result<i64> {
        let gfp = GFP_KERNEL.as_raw() | bindings::__GFP_HIGHMEM | bindings::__GFP_MOVABLE;
        let start = now();
        for i in 0..CYCLES {
            let size = SIZES[i % SIZES.len()].min(data.len());
            // SAFETY: the pool is valid; each handle is mapped once, unmapped and freed once,
            // as zsmalloc requires, with nothing else mapped on this CPU; `size` bytes fit the
            // object and `data`.
            unsafe {
                let h = bindings::zs_malloc(pool.raw(), size, gfp);
                if h == 0 || from_err_ptr(h as *mut c_void).is_err() {
                    return Err(ENOMEM);
                }
                let p = bindings::zs_map_object(pool.raw(), h, MODE_WRITE);
                core::ptr::copy_nonoverlapping(data.as_ptr(), p.cast::<u8>(), size);
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
        let data = KVec::from_elem(0x5au8, MAX_ALLOC_SIZE, GFP_KERNEL)?;
        // Warm the pool's classes up so that both variants reuse pages.
        through_c(&pool, &data)?;
        let mut rust = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
        let mut c = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
        for _ in 0..ROUNDS {
            c.push(through_c(&pool, &data)?, GFP_KERNEL)?;
            rust.push(through_binding(&pool, &data)?, GFP_KERNEL)?;
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
