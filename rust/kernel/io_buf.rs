// SPDX-License-Identifier: GPL-2.0

//! Buffers of I/O that others may use meanwhile: [`Source`] to read from and [`Sink`] to write
//! into.
//!
//! A block driver's bio pages, under `O_DIRECT`, are user memory that the submitter (or any
//! thread that maps it) may write while the driver reads or fills them: stable writes do not
//! cover them. Such memory cannot be handed to Rust as `&[u8]` or `&mut [u8]`, whose contents
//! must not change under a shared borrow and must not be observed by others under an exclusive
//! one. A [`Source`] or a [`Sink`] carries the pointer and the length instead, and never becomes
//! a slice: C reads and writes it (compressors, `memcpy()`, `copy_page()`, `memset()`), and the
//! few reads Rust makes of it ([`Source::same_filled`]) are volatile word loads, the kernel's
//! `READ_ONCE()`.
//!
//! What a concurrent writer can do is the exposure C accepts for the same memory: the bytes read
//! are unspecified (a compressor may store a page that never existed whole, which the writer's own
//! next read then sees; or, with 842, whose stored checksum is of the bytes as read, a page whose
//! next read fails its check), and so are the bytes a [`Sink`] holds afterwards if someone else
//! wrote them meanwhile. It can never make an access go out of bounds: every consumer bounds what
//! it reads and writes by the length, not by the contents (a decompressor writing a sink is the
//! bounded `_safe` variant, since it reads back what it wrote; a compressor writes a slice of its
//! caller's, bounded by its length, and runs unbounded only where that length holds the worst case
//! for the input's length, whatever the bytes: see [`compress`](crate::compress)).
//!
//! A slice converts into either (`From`), so that one path serves private buffers and shared
//! memory alike. Shared memory is lent only for the duration of a closure (see
//! [`Segment::with_source`](crate::block::bio::Segment::with_source)), so a source or a sink
//! cannot outlive its mapping.
//!
//! ```ignore
//! // Does not compile: a source is not a slice.
//! use kernel::io_buf::Source;
//! fn f(src: Source<'_>) -> u8 {
//!     src[0]
//! }
//! ```
//!
//! (Marked `ignore` because the kernel's doctests cannot be `compile_fail`; checked by
//! `tests/compile_fail/fail_io_buf_source_as_slice.rs`.)
//!
//! C header: [`include/linux/string.h`](srctree/include/linux/string.h)

use crate::{
    alloc::{Allocator, Vec},
    bindings,
    error::{code::*, Result},
};
use core::{marker::PhantomData, ptr::NonNull};

/// The bytes of a machine word, the unit of [`Source::same_filled`] and [`Sink::fill_word`].
const WORD: usize = core::mem::size_of::<usize>();

/// Whether `p` is aligned for a machine word.
#[inline]
fn word_aligned(p: *const u8) -> bool {
    (p as usize) % core::mem::align_of::<usize>() == 0
}

/// Copies `len` bytes from `src` to `dst`: a whole page between page-aligned addresses with
/// `copy_page()`, as zram reads a huge page, anything else with `memcpy()`.
///
/// # Safety
///
/// `src` is valid for reads and `dst` for writes of `len` bytes, and they do not overlap.
#[inline]
pub(crate) unsafe fn copy(dst: *mut u8, src: *const u8, len: usize) {
    // `copy_page()` is a function of its own on these (on UML, for one, it is a macro of
    // `memcpy()`, which bindgen does not see).
    #[cfg(any(CONFIG_ARM64, all(CONFIG_X86_64, not(CONFIG_UML))))]
    if len == crate::page::PAGE_SIZE && (dst as usize | src as usize) % crate::page::PAGE_SIZE == 0
    {
        // SAFETY: by the caller, a page's worth of each, and both are page-aligned.
        unsafe { bindings::copy_page(dst.cast(), src.cast_mut().cast::<core::ffi::c_void>()) };
        return;
    }
    // SAFETY: by the caller.
    unsafe { bindings::memcpy(dst.cast(), src.cast(), len) };
}

/// The address of a [`Source`] or a [`Sink`]: `ptr`, or a dangling pointer for no bytes.
#[inline]
fn address(ptr: *mut u8, len: usize) -> NonNull<u8> {
    debug_assert!(len == 0 || !ptr.is_null());
    // A dangling pointer is never read or written: `len` is then 0.
    NonNull::new(ptr).unwrap_or(NonNull::dangling())
}

/// Memory to read from, which others may write meanwhile.
///
/// # Invariants
///
/// `ptr` is valid for reads of `len` bytes for `'a`: it is neither freed nor unmapped, though
/// others may write it.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    ptr: NonNull<u8>,
    len: usize,
    /// Borrows the memory for `'a`; not `Send` nor `Sync`, as the mapping may be this thread's
    /// own (`kmap_local_page()`).
    _p: PhantomData<(&'a [u8], *const u8)>,
}

impl<'a> Source<'a> {
    /// A source of the `len` bytes at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of `len` bytes for `'a`, and not freed or unmapped
    /// meanwhile. Others may write the memory during `'a`, but Rust must hold no exclusive
    /// reference to it.
    #[inline]
    pub unsafe fn from_raw(ptr: *const u8, len: usize) -> Self {
        // INVARIANT: by the caller's promise.
        Source {
            ptr: address(ptr.cast_mut(), len),
            len,
            _p: PhantomData,
        }
    }

    /// Returns the length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Returns whether the source is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Returns the address, for C to read `len()` bytes from while the source lives.
    #[inline]
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    /// Returns the word the source repeats, if it is one machine word repeated: zram's
    /// same-filled page. `None` for an empty source, or one whose address or length is not a
    /// multiple of a word.
    ///
    /// Each word is read with a volatile load (the last one twice: first, as zram, so that a page
    /// that only starts alike is refused at once): if others write the memory meanwhile, the
    /// answer is about some mix of old and new words, as in C.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::io_buf::Source;
    ///
    /// let w = 0x0102_0304_0506_0708u64;
    /// let mut v = KVec::new();
    /// for _ in 0..512 {
    ///     v.extend_from_slice(&w.to_ne_bytes(), GFP_KERNEL)?;
    /// }
    /// assert_eq!(Source::from(&v[..]).same_filled(), Some(w as usize));
    /// v[4095] ^= 1;
    /// assert_eq!(Source::from(&v[..]).same_filled(), None);
    /// assert_eq!(Source::from(&v[..0]).same_filled(), None);
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub fn same_filled(&self) -> Option<usize> {
        let words = self.len / WORD;
        let p = self.ptr.as_ptr().cast::<usize>();
        if words == 0 || self.len % WORD != 0 || !word_aligned(p.cast()) {
            return None;
        }
        // A volatile load is the kernel's `READ_ONCE()`: under the kernel's memory model (not
        // Rust's, which has no notion of it), a concurrent plain write by C leaves the value read
        // unspecified, nothing else; Rust holds no reference to the memory.
        // SAFETY: for `i < words`, `p + i` is an aligned word within the `len` bytes valid for
        // reads (type invariant); a racing write only makes the value unspecified (above).
        let rd = |i: usize| unsafe { p.add(i).read_volatile() };
        let w = rd(0);
        // The last word first, as zram: a page that only starts alike is refused at once.
        if rd(words - 1) != w {
            return None;
        }
        let mut i = 1;
        // Four words a round, one branch for them.
        while i + 4 <= words {
            if (rd(i) ^ w) | (rd(i + 1) ^ w) | (rd(i + 2) ^ w) | (rd(i + 3) ^ w) != 0 {
                return None;
            }
            i += 4;
        }
        while i < words {
            if rd(i) != w {
                return None;
            }
            i += 1;
        }
        Some(w)
    }

    /// Copies the source into `dst`, which must have its length (`EINVAL` otherwise).
    ///
    /// The copy is C's: `memcpy()`, or `copy_page()` for a whole, page-aligned page.
    #[inline]
    pub fn copy_to_slice(&self, dst: &mut [u8]) -> Result {
        if dst.len() != self.len {
            return Err(EINVAL);
        }
        // SAFETY: the source is valid for reads of `len` bytes (type invariant), `dst` for writes
        // of as many, and they cannot overlap: `dst` is exclusively borrowed, which the source's
        // memory never is while it lives.
        unsafe { copy(dst.as_mut_ptr(), self.ptr.as_ptr(), self.len) };
        Ok(())
    }
}

impl<'a> From<&'a [u8]> for Source<'a> {
    #[inline]
    fn from(s: &'a [u8]) -> Self {
        // SAFETY: a shared slice is valid for reads of its length for `'a`, and no one writes it
        // meanwhile.
        unsafe { Source::from_raw(s.as_ptr(), s.len()) }
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Source<'a> {
    #[inline]
    fn from(a: &'a [u8; N]) -> Self {
        Source::from(&a[..])
    }
}

impl<'a, A: Allocator> From<&'a Vec<u8, A>> for Source<'a> {
    #[inline]
    fn from(v: &'a Vec<u8, A>) -> Self {
        Source::from(&v[..])
    }
}

/// Memory to write into, which others may read or write meanwhile.
///
/// # Invariants
///
/// `ptr` is valid for writes of `len` bytes for `'a`, memory its lender asked to be filled: it
/// is neither freed nor unmapped, though others may read or write it.
pub struct Sink<'a> {
    ptr: NonNull<u8>,
    len: usize,
    /// Borrows the memory exclusively for `'a` as far as Rust is concerned; not `Send` nor
    /// `Sync`, as the mapping may be this thread's own (`kmap_local_page()`).
    _p: PhantomData<(&'a mut [u8], *mut u8)>,
}

impl<'a> Sink<'a> {
    /// A sink of the `len` bytes at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for writes of `len` bytes for `'a`, and not freed or unmapped
    /// meanwhile; any bytes written there must be acceptable to its owner (it is a buffer given
    /// to be filled). Others may read or write the memory during `'a`, but Rust must hold no
    /// reference to it.
    #[inline]
    pub unsafe fn from_raw(ptr: *mut u8, len: usize) -> Self {
        // INVARIANT: by the caller's promise.
        Sink {
            ptr: address(ptr, len),
            len,
            _p: PhantomData,
        }
    }

    /// Returns the length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Returns whether the sink is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Returns the address, for C to write at most `len()` bytes to while the sink lives.
    #[inline]
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Copies `src`, which must have the sink's length (`EINVAL` otherwise), into the sink.
    ///
    /// The copy is C's: `memcpy()`, or `copy_page()` for a whole, page-aligned page.
    #[inline]
    pub fn copy_from_slice(&mut self, src: &[u8]) -> Result {
        if src.len() != self.len {
            return Err(EINVAL);
        }
        // SAFETY: the sink is valid for writes of `len` bytes (type invariant), `src` for reads
        // of as many, and they cannot overlap: Rust holds no reference to the sink's memory.
        unsafe { copy(self.ptr.as_ptr(), src.as_ptr(), self.len) };
        Ok(())
    }

    /// Fills the sink with the word `w` repeated (the last one cut short if the length is not a
    /// multiple of a word): zram's fill of a same-filled page.
    ///
    /// A word of one byte repeated, zero above all, is C's `memset()`; any other word, on an
    /// aligned sink, is `memset_l()`'s, as zram's fill.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::io_buf::Sink;
    ///
    /// let mut v = KVec::from_elem(0u8, 4096, GFP_KERNEL)?;
    /// Sink::from(&mut v[..]).fill_word(0x5a5a_5a5a_5a5a_5a5a_u64 as usize);
    /// assert!(v.iter().all(|&b| b == 0x5a));
    /// let w = 0x0102_0304_0506_0708_u64 as usize;
    /// Sink::from(&mut v[1..12]).fill_word(w);
    /// assert_eq!(v[1..9], w.to_ne_bytes());
    /// assert_eq!(v[9..12], w.to_ne_bytes()[..3]);
    /// assert_eq!(v[12], 0x5a);
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub fn fill_word(&mut self, w: usize) {
        let bytes = w.to_ne_bytes();
        let p = self.ptr.as_ptr();
        if bytes.iter().all(|&b| b == bytes[0]) {
            // SAFETY: the sink is valid for writes of `len` bytes (type invariant).
            unsafe { bindings::memset(p.cast(), bytes[0].into(), self.len) };
            return;
        }
        let (words, rest) = (self.len / WORD, self.len % WORD);
        if word_aligned(p) {
            // SAFETY: as above: `words` aligned words from `p` are within the `len` bytes.
            unsafe { bindings::memset_l(p.cast(), w as _, words) };
        } else {
            for i in 0..words {
                // SAFETY: word `i` is within the `len` bytes valid for writes; `bytes` cannot
                // overlap the sink (it is on this stack frame).
                unsafe { bindings::memcpy(p.add(i * WORD).cast(), bytes.as_ptr().cast(), WORD) };
            }
        }
        // SAFETY: the last `rest` bytes are within the sink, after the whole words.
        unsafe { bindings::memcpy(p.add(words * WORD).cast(), bytes.as_ptr().cast(), rest) };
    }
}

impl<'a> From<&'a mut [u8]> for Sink<'a> {
    #[inline]
    fn from(s: &'a mut [u8]) -> Self {
        // SAFETY: an exclusive slice is valid for writes of its length for `'a`, any bytes are
        // valid `u8`s, and nothing else uses it meanwhile.
        unsafe { Sink::from_raw(s.as_mut_ptr(), s.len()) }
    }
}

impl<'a, const N: usize> From<&'a mut [u8; N]> for Sink<'a> {
    #[inline]
    fn from(a: &'a mut [u8; N]) -> Self {
        Sink::from(&mut a[..])
    }
}

impl<'a, A: Allocator> From<&'a mut Vec<u8, A>> for Sink<'a> {
    #[inline]
    fn from(v: &'a mut Vec<u8, A>) -> Self {
        Sink::from(&mut v[..])
    }
}
