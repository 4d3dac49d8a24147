// SPDX-License-Identifier: GPL-2.0

//! Objects of a pool: [`NewObject`] (unwritten) and [`Handle`] (written), freed on drop.

use super::*;
use crate::{
    bindings,
    error::{code::*, Result},
    io_buf::Source,
};
use core::{mem::ManuallyDrop, num::NonZeroUsize};

/// An object of a pool, owned; freed when dropped. The common part of [`NewObject`] and
/// [`Handle`].
///
/// # Invariants
///
/// `raw` is a live handle of `pool`, owned by this value.
pub(super) struct Object<'a> {
    pub(super) raw: NonZeroUsize,
    pub(super) pool: &'a Pool,
}

impl Object<'_> {
    #[inline]
    pub(super) fn class_index(&self) -> u32 {
        // SAFETY: the object is live and cannot be freed while `self` is borrowed.
        unsafe { class_index_raw(self.pool, self.raw.get()) }
    }

    #[inline]
    pub(super) fn capacity(&self) -> usize {
        self.pool.capacity_of(self.class_index())
    }
}

impl Drop for Object<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the pool is valid and `raw` is a live handle of it owned by `self`, freed once,
        // here.
        unsafe { bindings::zs_free(self.pool.raw(), self.raw.get()) };
    }
}

/// Returns the class index of the object of `raw`.
///
/// # Safety
///
/// `raw` must be a live handle of `pool`, not freed during the call.
#[inline]
pub(super) unsafe fn class_index_raw(pool: &Pool, raw: usize) -> u32 {
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
pub struct NewObject<'a>(pub(super) Object<'a>);

impl<'a> NewObject<'a> {
    /// Returns the index of the size class that holds the object, as
    /// [`Pool::class_index_for`] of the size it was allocated with.
    ///
    /// Context: task context, never interrupt context; not while this thread holds a
    /// [`ReadGuard`] (on 32-bit this takes the class lock).
    #[inline]
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
    #[inline]
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Returns the pool the object belongs to.
    #[inline]
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
    #[inline]
    pub fn write(self, data: &[u8]) -> Result<Handle<'a>> {
        self.write_from(Source::from(data))
    }

    /// As [`write`](Self::write), from a [`Source`]: memory that others may write meanwhile,
    /// such as a bio's page, copied by C (`memcpy()`, or `copy_page()` for a whole, page-aligned
    /// page; what the object then holds is unspecified if the source changed during the copy, but
    /// it is written whole).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::{c_str, io_buf::Source, zsmalloc::Pool};
    ///
    /// let pool = Pool::new(c_str!("doc"))?;
    /// let page = KVec::from_elem(0x5au8, 4096, GFP_KERNEL)?;
    /// let h = pool.alloc(4096, GFP_KERNEL)?.write_from(Source::from(&page))?;
    /// assert!(h.map_read(4096)?.iter().all(|&b| b == 0x5a));
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub fn write_from(self, src: Source<'_>) -> Result<Handle<'a>> {
        let len = src.len();
        if len == 0 {
            return Err(EINVAL);
        }
        {
            // SAFETY: `raw` is a live handle of `pool`, which stays live while `self` owns it,
            // that is for the whole block.
            let m = unsafe { Mapping::new(self.0.pool, self.0.raw.get(), None, MODE_WRITE) }?;
            // The whole object is mapped: `m.len` is the capacity of its class.
            let cap = m.len;
            if len > cap {
                // Nothing is written; the object is freed with `self`.
                return Err(EINVAL);
            }
            let dst = m.ptr.as_ptr();
            let tail = cap - len;
            // The tail past `len` is zeroed first: a short one (classes are often 16 bytes apart,
            // with 4 KiB pages) by one 16-byte store over the object's last bytes, which the copy
            // then partly overwrites, rather than a call of `memset()` on every write. (No class
            // is smaller than 32 bytes: the `cap < 16` case is for completeness.)
            // SAFETY: `dst` is valid for writes of `cap >= len` bytes until `m` drops (`Mapping`),
            // a new object only `self` reaches, which the source cannot overlap; the source is
            // valid for reads of `len` bytes (`Source`'s invariant); the store needs `cap >= 16`.
            unsafe {
                if tail > 16 || (tail > 0 && cap < 16) {
                    core::ptr::write_bytes(dst.add(len), 0, tail);
                } else if tail > 0 {
                    dst.add(cap - 16).cast::<[u64; 2]>().write_unaligned([0; 2]);
                }
                crate::io_buf::copy(dst, src.as_ptr(), len);
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
pub struct Handle<'a>(pub(super) Object<'a>);

impl<'a> Handle<'a> {
    /// Returns the index of the size class that holds the object, as
    /// [`Pool::class_index_for`] of the size it was allocated with.
    ///
    /// Context: as [`NewObject::class_index`].
    #[inline]
    pub fn class_index(&self) -> u32 {
        self.0.class_index()
    }

    /// Returns how many bytes can be read: the capacity of the object's size class.
    ///
    /// Context: as [`NewObject::class_index`].
    #[inline]
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Returns the pool the object belongs to.
    #[inline]
    pub fn pool(&self) -> &'a Pool {
        self.0.pool
    }

    /// Maps the first `len` bytes of the object for reading.
    ///
    /// Bytes past the data given to [`NewObject::write`] read as zeroes.
    ///
    /// Context: task context, never interrupt context. The returned guard disables preemption;
    /// see the [module docs](crate::zsmalloc) for what may be done while it lives.
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
    #[inline]
    pub fn map_read(&self, len: usize) -> Result<ReadGuard<'_>> {
        // SAFETY: `raw` is a live handle of `pool` whose object was written (type invariants);
        // it stays live while `self` is borrowed, which the guard does.
        unsafe { map_read_raw(self.0.pool, self.0.raw.get(), len) }
    }

    /// Gives up ownership of the object and returns its C handle.
    ///
    /// The object stays allocated (and counted in [`Pool::live_objects`]); [`Handle::from_raw`]
    /// takes it back.
    #[inline]
    pub(super) fn into_raw(self) -> usize {
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
    #[inline]
    pub(super) unsafe fn from_raw(raw: usize, pool: &'a Pool) -> Option<Handle<'a>> {
        // INVARIANT: by the caller, `raw` is a live, written object of `pool` whose ownership
        // comes back from `into_raw` exactly once.
        Some(Handle(Object {
            raw: NonZeroUsize::new(raw)?,
            pool,
        }))
    }
}
