// SPDX-License-Identifier: GPL-2.0

//! The pool: allocation, bulk free, compaction and statistics.

use super::*;
use crate::{
    alloc::{flags::*, Flags, KVec},
    bindings,
    error::{code::*, Error, Result},
    ffi::c_int,
    page::PAGE_SIZE,
    str::CStr,
};
use core::{num::NonZeroUsize, ptr::NonNull};

/// The largest object a pool stores: one page.
pub const MAX_ALLOC_SIZE: usize = PAGE_SIZE;

/// A zsmalloc pool.
///
/// Dropping it destroys the pool if every object has been freed. If not (an object was leaked
/// with [`core::mem::forget`]), the pool is leaked, with an error in the log: `zs_destroy_pool()`
/// does not free objects, and their pages would stay reachable by page migration after the
/// pool's memory is gone. Context of the drop: process context; may sleep.
///
/// # Invariants
///
/// - `ptr` points to a pool created by `zs_create_pool()` that this object owns.
/// - `capacity[i]` is the largest size in `1..=MAX_ALLOC_SIZE` that `zs_malloc()` places in the
///   size class of index `i` (0 if it places none there), so every object of that class has at
///   least that many bytes; every class index the pool returns is below `capacity.len()`.
/// - `huge_size` is `zs_huge_class_size()` of the pool, which does not change after creation.
pub struct Pool {
    pub(super) ptr: NonNull<bindings::zs_pool>,
    pub(super) capacity: KVec<u32>,
    huge_size: usize,
}

// SAFETY: every zsmalloc function that takes a pool may be called from any thread; the pool has
// no thread affinity.
unsafe impl Send for Pool {}

// SAFETY: zsmalloc serialises concurrent calls on one pool internally (class locks, the migrate
// lock and atomics); `capacity` is only read after `new`.
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
            capacity: KVec::new(),
            // SAFETY: the pool is valid.
            huge_size: unsafe { bindings::zs_huge_class_size(ptr.as_ptr()) },
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

    #[inline]
    pub(super) fn raw(&self) -> *mut bindings::zs_pool {
        self.ptr.as_ptr()
    }

    /// The class index of `size`, which must be in `1..=MAX_ALLOC_SIZE`.
    #[inline]
    pub(super) fn lookup_class(&self, size: usize) -> u32 {
        // SAFETY: the pool is valid by the type invariant; zsmalloc accepts any size (it clamps
        // sizes above the largest class) and `size` fits in a `u32` since it is at most a page.
        unsafe { bindings::zs_lookup_class_index(self.raw(), size as u32) }
    }

    /// The number of bytes every object of class `index` can hold; 0 for an unknown index.
    #[inline]
    pub(super) fn capacity_of(&self, index: u32) -> usize {
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
    #[inline]
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
        // zs_malloc() returns an error pointer's value on failure: the last `MAX_ERRNO` values
        // (`IS_ERR_VALUE()`), checked here rather than through two helper calls.
        if raw > usize::MAX - bindings::MAX_ERRNO as usize {
            // The value is `-errno` as an `unsigned long`: the cast gives the negative errno.
            return Err(Error::from_errno(raw as isize as c_int));
        }
        let raw = NonZeroUsize::new(raw).ok_or(ENOMEM)?;
        // INVARIANT: `raw` is a new handle of this pool, owned by the result.
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
                // SAFETY: each entry was given up by `Handle::into_raw` of a handle of this pool
                // (checked by address above: a handle borrows its pool, so no other live pool
                // has that address), once.
                unsafe { self.free_raw(&mut raw) };
                n = 0;
            }
        }
        // SAFETY: as above.
        unsafe { self.free_raw(&mut raw[..n]) };
    }

    /// Frees the handles in `raw`.
    ///
    /// # Safety
    ///
    /// Each entry must have been given up by [`Handle::into_raw`] of a handle of this pool, and
    /// nothing else may own it: the objects are freed here.
    unsafe fn free_raw(&self, raw: &mut [usize]) {
        match raw {
            [] => (),
            // One object: freed directly, without the bulk free's grouping by class.
            // SAFETY: the pool is valid and `h` a live handle of it (from `Handle::into_raw`, so
            // neither null nor an error value) that the caller gave up, freed once, here.
            [h] => unsafe { bindings::zs_free(self.raw(), *h) },
            // SAFETY: the pool is valid and each entry a live handle of it that the caller gave
            // up, freed exactly once here; zs_free_bulk() frees the array's entries and leaves its
            // contents undefined; nothing reads it again.
            _ => unsafe { bindings::zs_free_bulk(self.raw(), raw.as_mut_ptr(), raw.len() as u32) },
        }
    }

    /// Returns the number of objects allocated and not yet freed, as zsmalloc counts them (per
    /// size class, so the allocation and free paths keep no count of their own): a snapshot,
    /// read without the class locks, exact when no allocation or free of the pool runs
    /// meanwhile. It reads every size class: a diagnostic, not for a hot path.
    ///
    /// Context: any context, a [`ReadGuard`] of the pool held or not; takes no lock.
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
        // SAFETY: the pool is valid by the type invariant.
        unsafe { bindings::zs_pool_objects(self.raw()) }
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
    #[inline]
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
    /// Read once, when the pool was created (zsmalloc fixes it then), as zram caches it: this is
    /// a field load, cheap enough for every write.
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
    #[inline]
    pub fn huge_class_size(&self) -> usize {
        self.huge_size
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
        // Exact: with `&mut self`, no object of the pool is being allocated or freed (each
        // borrows the pool).
        let live = self.live_objects();
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
