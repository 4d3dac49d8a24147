// SPDX-License-Identifier: GPL-2.0

//! The data of a read or write bio: its segments, reached by copies or through an
//! [`io_buf`](crate::io_buf) source or sink, never as Rust references.
//!
//! C header: [`include/linux/bio.h`](srctree/include/linux/bio.h)

use super::Bio;
use crate::{
    bindings,
    error::{code::*, Result},
    io_buf::{Sink, Source},
    page::PAGE_SIZE,
};
use core::marker::PhantomData;

/// Keeps the data cache coherent with `page`'s user mappings after the kernel wrote it.
///
/// # Safety
///
/// `page` is a live page.
#[inline]
unsafe fn flush_dcache_page(page: *mut bindings::page) {
    // A function of its own on arm64, called directly; elsewhere it may be an inline or a macro,
    // reached through a helper.
    #[cfg(CONFIG_ARM64)]
    // SAFETY: by the caller.
    unsafe {
        bindings::flush_dcache_page(page)
    };
    #[cfg(not(CONFIG_ARM64))]
    // SAFETY: by the caller.
    unsafe {
        bindings::bio_flush_dcache_page(page)
    };
}

/// The directions of a data bio, as type parameters of [`Data`] and [`Segment`].
///
/// The direction decides which way a segment's memory may be copied: a read's segments are
/// filled ([`Segment::copy_from_slice`], [`Segment::with_sink`]), a write's are only read
/// ([`Segment::copy_to_slice`], [`Segment::with_source`]).
/// A write's pages belong to the submitter and may be shared and read-only (the zero page of a
/// write-zeroes done by writes, a read-only file mapping under `O_DIRECT`): writing into them
/// would corrupt memory. Checked by `tests/compile_fail/fail_bio_fill_write_segment.rs`.
pub mod dir {
    /// A read: the driver fills the bio's memory.
    pub enum Read {}
    /// A write: the driver reads the bio's memory.
    pub enum Write {}
}

/// The data of a read or write [`Bio`], from [`Bio::op`]; `D` is its direction (see [`dir`]).
///
/// # Invariants
///
/// `bio` is a `REQ_OP_READ` (`D` is [`dir::Read`]) or `REQ_OP_WRITE` (`D` is [`dir::Write`])
/// bio in flight, with the block layer's guarantees for one: its `bi_io_vec` holds
/// `bi_iter.bi_size` bytes of data from entry `bi_iter.bi_idx`, byte `bi_iter.bi_bvec_done` on;
/// each entry's pages are consecutive `struct page`s (as C's `bvec_iter_page()` assumes), and
/// the submitter changes neither the entries nor their pages' lifetime until the bio completes.
pub struct Data<'a, D> {
    bio: &'a mut Bio,
    _dir: PhantomData<D>,
}

impl<'a, D> Data<'a, D> {
    /// The data of `bio`.
    ///
    /// # Safety
    ///
    /// `bio` must be a read if `D` is [`dir::Read`], a write if `D` is [`dir::Write`], submitted
    /// to the driver and not yet completed.
    #[inline]
    pub(super) unsafe fn new(bio: &'a mut Bio) -> Self {
        // INVARIANT: by the caller's promise; the block layer guarantees the rest for a read or
        // write bio in flight.
        Data {
            bio,
            _dir: PhantomData,
        }
    }
}

impl<D> Data<'_, D> {
    /// Counts the bio in the disk's I/O statistics (`/sys/block/<disk>/stat`,
    /// `/proc/diskstats`, `inflight`) until it is completed, as a C bio-based driver does with
    /// `bio_start_io_acct()` and `bio_end_io_acct()`. Calling it again does nothing.
    #[inline]
    pub fn start_io_acct(&mut self) {
        self.bio.start_io_acct();
    }

    /// Calls `f` on each segment of the bio's data, in order, until it returns an error.
    ///
    /// A segment never crosses a page boundary of the bio's memory. It lives only for its call of
    /// `f`: it cannot be kept for later (checked by
    /// `tests/compile_fail/fail_bio_segment_escapes.rs`).
    pub fn for_each_segment(&mut self, mut f: impl FnMut(&mut Segment<'_, D>) -> Result) -> Result {
        let bio = self.bio.raw();
        // SAFETY: the bio is valid; the iterator is a copy, so the bio is not advanced.
        let mut iter = unsafe { (*bio).bi_iter };
        // C's `bio_iter_iovec()` and `bio_advance_iter_single()`, in Rust so that they inline: a
        // read or write bio always advances through its vector (`bio_no_advance_iter()` is false).
        // The arithmetic wraps, as C's, on the block layer's invariants of a valid iterator.
        while iter.bi_size > 0 {
            // SAFETY: the bio's vector holds `bi_size` bytes from `bi_idx` on (type invariant),
            // and `iter` has not consumed them all, as `bi_size` is not zero: `bi_idx` indexes a
            // valid entry, which the submitter leaves unchanged while the bio is in flight.
            let bv = unsafe { (*bio).bi_io_vec.add(iter.bi_idx as usize).read() };
            let mp_offset = bv.bv_offset.wrapping_add(iter.bi_bvec_done) as usize;
            let offset = (mp_offset % PAGE_SIZE) as u32;
            let len = iter
                .bi_size
                .min(bv.bv_len.wrapping_sub(iter.bi_bvec_done))
                .min(PAGE_SIZE as u32 - offset);
            // An entry that `iter` has consumed whole (`bi_bvec_done == bv_len`, as only an empty
            // entry can be here) gives no segment: `f` never sees an empty one.
            if len == 0 {
                iter.bi_bvec_done = 0;
                iter.bi_idx = iter.bi_idx.wrapping_add(1);
                continue;
            }
            // INVARIANT: the page of the multi-page entry that holds byte `bi_bvec_done` of it (an
            // entry's pages are consecutive `struct page`s, type invariant of `Data`), and the
            // part of the entry within that page.
            let mut seg = Segment {
                page: bv.bv_page.wrapping_add(mp_offset / PAGE_SIZE),
                offset,
                len,
                sector: iter.bi_sector,
                _bio: PhantomData,
                _dir: PhantomData,
            };
            f(&mut seg)?;
            // `bvec_iter_advance_single()`, by the segment just handled.
            iter.bi_sector = iter.bi_sector.wrapping_add(u64::from(len >> 9));
            let done = iter.bi_bvec_done.wrapping_add(len);
            if done == bv.bv_len {
                iter.bi_bvec_done = 0;
                iter.bi_idx = iter.bi_idx.wrapping_add(1);
            } else {
                iter.bi_bvec_done = done;
            }
            iter.bi_size = iter.bi_size.wrapping_sub(len);
        }
        Ok(())
    }
}

/// A piece of a [`Bio`]'s data within one page: its memory and the sector it starts at. `D` is
/// the bio's direction (see [`dir`]).
///
/// # Invariants
///
/// `page` is a page of the bio with `offset + len <= PAGE_SIZE`; the bio (and so the page) stays
/// alive for `'a`. The bio's direction is `D`.
pub struct Segment<'a, D> {
    page: *mut bindings::page,
    offset: u32,
    len: u32,
    sector: u64,
    _bio: PhantomData<&'a mut Bio>,
    _dir: PhantomData<D>,
}

impl<D> Segment<'_, D> {
    /// Returns the sector the segment starts at.
    #[inline]
    pub fn sector(&self) -> u64 {
        self.sector
    }

    /// Returns the length in bytes; never 0.
    #[inline]
    pub fn bytes(&self) -> usize {
        self.len as usize
    }

    /// Returns the offset in the page of `len` bytes from `offset` in the segment, if they are
    /// within it.
    #[inline]
    fn range(&self, offset: usize, len: usize) -> Result<usize> {
        match offset.checked_add(len) {
            Some(end) if end <= self.bytes() => Ok(self.offset as usize + offset),
            _ => Err(EINVAL),
        }
    }
}

impl Segment<'_, dir::Write> {
    /// Copies `dst.len()` bytes of the segment, from `offset` on, into `dst`.
    ///
    /// Fails with [`EINVAL`] if the range is not within the segment. The copy is made by C
    /// (`memcpy_from_page()`): someone else may write the segment's memory meanwhile (an
    /// `O_DIRECT` buffer), which leaves the copied bytes unspecified but never exposes that
    /// memory to Rust.
    pub fn copy_to_slice(&self, offset: usize, dst: &mut [u8]) -> Result {
        let start = self.range(offset, dst.len())?;
        // SAFETY: the page is alive for `'a` (type invariant) and `start + dst.len()` is within
        // it (checked by `range`); `dst` is valid for writes of `dst.len()` bytes.
        unsafe { bindings::memcpy_from_page(dst.as_mut_ptr().cast(), self.page, start, dst.len()) };
        Ok(())
    }

    /// Calls `f` with the segment's memory as a [`Source`], mapped for the call
    /// (`kmap_local_page()`), and returns what it returns.
    ///
    /// Others may write the memory meanwhile (an `O_DIRECT` buffer): a source is read only by C
    /// or by volatile loads (see [`io_buf`](crate::io_buf)). `f` may sleep. The source cannot
    /// outlive the call (checked by `tests/compile_fail/fail_bio_source_escapes.rs`).
    ///
    /// Only without `CONFIG_KMAP_LOCAL` (no highmem, no forced local mappings): there every page
    /// is in the linear map and `kmap_local_page()` maps nothing, so the lent memory is not a
    /// local mapping that must be undone in order with others (a zsmalloc `ReadGuard` made in
    /// `f` may outlive it, one made before may be dropped in it).
    #[cfg(not(CONFIG_KMAP_LOCAL))]
    #[inline]
    pub fn with_source<R>(&self, f: impl FnOnce(Source<'_>) -> R) -> R {
        // SAFETY: the page is alive for `'a` (type invariant). Without `CONFIG_KMAP_LOCAL` this
        // is its linear-map address, and nothing is mapped that `f`'s own mappings could undo
        // out of order.
        let base = unsafe { bindings::kmap_local_page(self.page) }.cast::<u8>();
        // SAFETY: `offset + len <= PAGE_SIZE` (type invariant), so the bytes are within the
        // page, which stays alive and addressable until after `f` returns, and the source cannot
        // outlive `f`'s call. Rust holds no reference to a bio's memory.
        let r = f(unsafe { Source::from_raw(base.add(self.offset as usize), self.bytes()) });
        // SAFETY: from `kmap_local_page()` above, on this thread; nothing uses it any more.
        unsafe { bindings::kunmap_local(base.cast()) };
        r
    }
}

impl Segment<'_, dir::Read> {
    /// Copies `src` into the segment, from `offset` on.
    ///
    /// Fails with [`EINVAL`] if the range is not within the segment. The copy is made by C
    /// (`memcpy_to_page()`): others may read or write the memory meanwhile (an `O_DIRECT`
    /// buffer), which Rust never sees. A read's pages are the submitter's buffers for the data,
    /// so filling them is what the bio asks for.
    pub fn copy_from_slice(&mut self, offset: usize, src: &[u8]) -> Result {
        let start = self.range(offset, src.len())?;
        // SAFETY: the page is alive for `'a` (type invariant), and as a read's page it is memory
        // the submitter asked to be filled; `start + src.len()` is within it (checked by
        // `range`); `src` is valid for reads of `src.len()` bytes.
        unsafe { bindings::memcpy_to_page(self.page, start, src.as_ptr().cast(), src.len()) };
        Ok(())
    }

    /// Calls `f` with the segment's memory as a [`Sink`], mapped for the call
    /// (`kmap_local_page()`), and returns what it returns; the data cache is then kept coherent
    /// with the page's user mappings (`flush_dcache_page()`), as after `memcpy_to_page()`.
    ///
    /// Others may read or write the memory meanwhile (an `O_DIRECT` buffer): a sink is written
    /// only by C (see [`io_buf`](crate::io_buf)). `f` may sleep. The sink cannot outlive the call
    /// (checked by `tests/compile_fail/fail_bio_sink_escapes.rs`).
    ///
    /// Only without `CONFIG_KMAP_LOCAL`, as [`with_source`](Segment::with_source).
    #[cfg(not(CONFIG_KMAP_LOCAL))]
    #[inline]
    pub fn with_sink<R>(&mut self, f: impl FnOnce(Sink<'_>) -> R) -> R {
        // SAFETY: as in `with_source`.
        let base = unsafe { bindings::kmap_local_page(self.page) }.cast::<u8>();
        // SAFETY: as in `with_source`; a read's pages are the submitter's buffers for the data,
        // so any bytes written there are what the bio asks for.
        let r = f(unsafe { Sink::from_raw(base.add(self.offset as usize), self.bytes()) });
        // SAFETY: the page is alive; `base` from `kmap_local_page()` above, on this thread, and
        // no longer used.
        unsafe {
            flush_dcache_page(self.page);
            bindings::kunmap_local(base.cast());
        }
        r
    }
}
