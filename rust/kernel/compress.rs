// SPDX-License-Identifier: GPL-2.0

//! The compression libraries of `lib/`: lzo, lzo-rle, lz4, lz4hc, zstd, deflate and 842.
//!
//! Each algorithm is a type implementing [`Compressor`], which owns its workspace. [`Stream`]
//! selects one at run time by [`Algorithm`]; with [`LocalLocked`](crate::sync::LocalLocked) a
//! driver keeps one stream per CPU, as zram does. The names are those zram uses.
//!
//! A compressor reads a [`Source`] and writes a slice of the caller's; a decompressor
//! reads a slice and writes a [`Sink`]. Sources and sinks may be memory that others
//! write meanwhile (a bio's pages under `O_DIRECT`), so that a block driver compresses from and
//! decompresses into the bio's memory without a copy, as zram does; a slice converts into
//! either. No input, and no change of it during the call, can make a call read or write out of
//! bounds:
//!
//! - every decompressor is the bounded (`_safe`) variant: it checks each length and offset of
//!   the compressed data against the output's and the input's ends, and it reads back only
//!   what it wrote (a match), so a sink that others write meanwhile holds unspecified bytes
//!   afterwards, nothing worse;
//! - every compressor bounds what it writes by the destination's length, except lzo and lzo-rle
//!   when the destination holds `lzo1x_worst_compress()` of the input's length: then the plain
//!   variant runs, as zram runs it, whose output cannot exceed that bound whatever the bytes
//!   read (it encodes each input position once, as a literal or in a match), so a source that
//!   changes meanwhile gives a compressed page of unspecified contents and never an overrun.
//!
//! Built with `CONFIG_RUST_COMPRESS`, which selects the libraries.
//!
//! C headers: [`include/linux/lzo.h`](srctree/include/linux/lzo.h),
//! [`include/linux/lz4.h`](srctree/include/linux/lz4.h),
//! [`include/linux/zstd.h`](srctree/include/linux/zstd.h),
//! [`include/linux/zlib.h`](srctree/include/linux/zlib.h),
//! [`include/linux/sw842.h`](srctree/include/linux/sw842.h)

use crate::{
    alloc::{flags::*, KBox, KVVec},
    bindings,
    error::{code::*, Result},
    ffi::{c_char, c_int, c_uint, c_void},
    io_buf::{Sink, Source},
    types::Opaque,
};
use core::{pin::Pin, ptr::NonNull};

/// The tunables of an algorithm, as zram's `algorithm_params` sets them; `None` is the
/// algorithm's default. An algorithm ignores what it has no use for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Params {
    /// The compression level: zstd's, lz4hc's and deflate's level, lz4's acceleration.
    pub level: Option<i32>,
    /// deflate's window, 2^|`deflate_winbits`| bytes: 9 to 15, or -15 to -9, the same window
    /// (newer zram passes a negative window to zlib as raw deflate, and raw deflate is all
    /// [`Deflate`] does); 11 by default, as zram's `-11`.
    pub deflate_winbits: Option<i32>,
}

/// A compression algorithm.
pub trait Compressor: Sized + Send {
    /// The name zram and rzram show in `comp_algorithm`.
    const NAME: &'static str;

    /// Allocates a stream, the algorithm's workspace, with `params`.
    ///
    /// Fails with [`EINVAL`] if the algorithm refuses the parameters (deflate's level, -1 to 9,
    /// and window, 9 to 15 or -15 to -9); the others clamp the level to their ranges (lz4's
    /// acceleration to 1 to 65537, lz4hc's level and zstd's as their libraries do).
    fn new(params: &Params) -> Result<Self>;

    /// Compresses `src` into `dst`; returns the compressed length.
    ///
    /// Fails with [`E2BIG`] if the result does not fit in `dst`, and [`EINVAL`] on other errors.
    fn compress(&mut self, src: Source<'_>, dst: &mut [u8]) -> Result<usize>;

    /// Decompresses `src` into `dst`; returns the decompressed length.
    ///
    /// Fails with [`EINVAL`] if `src` is not valid compressed data or does not fit in `dst`.
    fn decompress(&mut self, src: &[u8], dst: Sink<'_>) -> Result<usize>;
}

fn zeroed_workspace(len: usize) -> Result<KVVec<u8>> {
    Ok(KVVec::from_elem(0u8, len, GFP_KERNEL)?)
}

// Inlined into the callers' read paths, as zram's glue is one call deep.
#[inline]
fn lzo_decompress(src: &[u8], mut dst: Sink<'_>) -> Result<usize> {
    let mut len = dst.len();
    // SAFETY: the slice and the sink are valid for their lengths; the `_safe` decompressor
    // writes at most `len` bytes and reads at most `src.len()`.
    let ret = unsafe {
        bindings::lzo1x_decompress_safe(src.as_ptr(), src.len(), dst.as_mut_ptr(), &mut len)
    };
    if ret == bindings::LZO_E_OK as c_int {
        Ok(len)
    } else {
        Err(EINVAL)
    }
}

/// An lzo compressor entry point (`lzo1x_1_compress()`, its RLE variant, and their `_safe`
/// variants).
type LzoCompressFn =
    unsafe extern "C" fn(*const u8, usize, *mut u8, *mut usize, *mut c_void) -> c_int;

/// The most bytes lzo or lzo-rle makes of `len` bytes, whatever they are:
/// `lzo1x_worst_compress()`; `None` if that overflows.
fn lzo_worst_compress(len: usize) -> Option<usize> {
    len.checked_add(len / 16)?.checked_add(64 + 3 + 2)
}

/// Compresses with `fast`, or with `bounded`, its `_safe` variant, if `dst` may be too short for
/// `fast` (see the [module docs](self)); `wrk` is the lzo workspace.
fn lzo_compress(
    fast: LzoCompressFn,
    bounded: LzoCompressFn,
    wrk: &mut [u8],
    src: Source<'_>,
    dst: &mut [u8],
) -> Result<usize> {
    if wrk.len() < bindings::LZO1X_1_MEM_COMPRESS {
        return Err(EINVAL);
    }
    let mut len = dst.len();
    let f = match lzo_worst_compress(src.len()) {
        Some(worst) if worst <= len => fast,
        _ => bounded,
    };
    // `f` is `bounded`, which writes at most `len` bytes, or `fast`, whose output for
    // `src.len()` bytes of input, whatever they are, is at most `lzo1x_worst_compress()` of it.
    // SAFETY: the source and `dst` are valid for their lengths; `f`'s output fits in `dst`
    // (checked above), and the workspace has the size lzo needs (checked above).
    let ret = unsafe {
        f(
            src.as_ptr(),
            src.len(),
            dst.as_mut_ptr(),
            &mut len,
            wrk.as_mut_ptr().cast::<c_void>(),
        )
    };
    match ret {
        r if r == bindings::LZO_E_OK as c_int => Ok(len),
        r if r == bindings::LZO_E_OUTPUT_OVERRUN => Err(E2BIG),
        _ => Err(EINVAL),
    }
}

/// Declares an lzo compressor type: `$name`, shown as `$shown`, compressing with `$fast` or, into
/// a destination that may be too short for it, `$bounded`.
macro_rules! lzo_type {
    ($(#[$doc:meta])* $name:ident, $shown:literal, $fast:path, $bounded:path) => {
        $(#[$doc])*
        pub struct $name {
            wrk: KVVec<u8>,
        }

        impl Compressor for $name {
            const NAME: &'static str = $shown;

            fn new(_params: &Params) -> Result<Self> {
                Ok($name {
                    wrk: zeroed_workspace(bindings::LZO1X_1_MEM_COMPRESS)?,
                })
            }

            fn compress(&mut self, src: Source<'_>, dst: &mut [u8]) -> Result<usize> {
                lzo_compress($fast, $bounded, &mut self.wrk, src, dst)
            }

            #[inline]
            fn decompress(&mut self, src: &[u8], dst: Sink<'_>) -> Result<usize> {
                // One decompressor reads both formats.
                lzo_decompress(src, dst)
            }
        }
    };
}

lzo_type!(
    /// LZO (`lzo1x_1`), named `lzo`.
    Lzo,
    "lzo",
    bindings::lzo1x_1_compress,
    bindings::lzo1x_1_compress_safe
);
lzo_type!(
    /// LZO with run-length encoding of zero runs, named `lzo-rle`; zram's default.
    LzoRle,
    "lzo-rle",
    bindings::lzorle1x_1_compress,
    bindings::lzorle1x_1_compress_safe
);

#[inline]
fn to_int(len: usize) -> Result<c_int> {
    c_int::try_from(len).map_err(|_| EINVAL)
}

// Inlined into the callers' read paths, as zram's glue is one call deep.
#[inline]
fn lz4_decompress(src: &[u8], mut dst: Sink<'_>) -> Result<usize> {
    // SAFETY: the slice and the sink are valid for their lengths, which bound what the `_safe`
    // decompressor reads and writes.
    let ret = unsafe {
        bindings::LZ4_decompress_safe(
            src.as_ptr().cast::<c_char>(),
            dst.as_mut_ptr().cast::<c_char>(),
            to_int(src.len())?,
            to_int(dst.len())?,
        )
    };
    usize::try_from(ret).map_err(|_| EINVAL)
}

/// LZ4 (`HC` false, named `lz4`, with the level as its acceleration, 1 by default) or LZ4 high
/// compression (`HC` true, named `lz4hc`, at zram's default level, 9). The two share the
/// decompressor.
pub struct Lz4Family<const HC: bool> {
    wrk: KVVec<u8>,
    /// lz4's acceleration or lz4hc's level.
    level: c_int,
}

/// LZ4, named `lz4`.
pub type Lz4 = Lz4Family<false>;

/// LZ4 high compression, named `lz4hc`.
pub type Lz4hc = Lz4Family<true>;

impl<const HC: bool> Compressor for Lz4Family<HC> {
    const NAME: &'static str = if HC { "lz4hc" } else { "lz4" };

    fn new(params: &Params) -> Result<Self> {
        let size = if HC {
            bindings::LZ4HC_MEM_COMPRESS as usize
        } else {
            bindings::LZ4_MEM_COMPRESS
        };
        let level = match (HC, params.level) {
            (true, l) => l.unwrap_or(bindings::LZ4HC_DEFAULT_CLEVEL as c_int),
            // lz4 does not bound the acceleration, and a large one makes its step overflow:
            // upstream lz4's LZ4_ACCELERATION_MAX.
            (false, l) => l.unwrap_or(1).clamp(1, 65537),
        };
        Ok(Lz4Family {
            wrk: zeroed_workspace(size)?,
            level,
        })
    }

    fn compress(&mut self, src: Source<'_>, dst: &mut [u8]) -> Result<usize> {
        let (s, d) = (
            src.as_ptr().cast::<c_char>(),
            dst.as_mut_ptr().cast::<c_char>(),
        );
        let (slen, dlen) = (to_int(src.len())?, to_int(dst.len())?);
        let wrk = self.wrk.as_mut_ptr().cast::<c_void>();
        // lz4 runs unbounded only when `dst` holds `LZ4_compressBound()` of the input, which
        // nothing the source holds can exceed.
        // SAFETY: the source and `dst` are valid for their lengths; the output is bounded by
        // `dst.len()`; the workspace has the size the variant needs (allocated in `new`).
        let ret = unsafe {
            if HC {
                bindings::LZ4_compress_HC(s, d, slen, dlen, self.level, wrk)
            } else {
                bindings::LZ4_compress_fast(s, d, slen, dlen, self.level, wrk)
            }
        };
        // lz4 returns 0 when the output does not fit.
        match usize::try_from(ret) {
            Ok(0) | Err(_) => Err(E2BIG),
            Ok(n) => Ok(n),
        }
    }

    #[inline]
    fn decompress(&mut self, src: &[u8], dst: Sink<'_>) -> Result<usize> {
        lz4_decompress(src, dst)
    }
}

/// Zstandard, named `zstd`, at its default level unless told otherwise, tuned for page-sized
/// inputs.
///
/// # Invariants
///
/// `cctx` and `dctx` were initialised in `_cws` and `_dws`, which they point into and which live
/// as long as `self` (they are held only for that).
pub struct Zstd {
    _cws: KVVec<u8>,
    _dws: KVVec<u8>,
    cctx: NonNull<bindings::zstd_cctx>,
    dctx: NonNull<bindings::zstd_dctx>,
    params: bindings::zstd_parameters,
}

// SAFETY: the contexts are plain memory in the workspaces, owned by `self`; nothing ties them to
// a thread.
unsafe impl Send for Zstd {}

impl Compressor for Zstd {
    const NAME: &'static str = "zstd";

    fn new(p: &Params) -> Result<Self> {
        // SAFETY: FFI call without preconditions.
        let level = p
            .level
            .unwrap_or_else(|| unsafe { bindings::zstd_default_clevel() });
        // SAFETY: FFI call without preconditions (zstd clamps the level).
        let params = unsafe { bindings::zstd_get_params(level, crate::page::PAGE_SIZE as u64) };
        // SAFETY: `params.cParams` is valid.
        let mut cws =
            zeroed_workspace(unsafe { bindings::zstd_cctx_workspace_bound(&params.cParams) })?;
        // SAFETY: FFI call without preconditions.
        let mut dws = zeroed_workspace(unsafe { bindings::zstd_dctx_workspace_bound() })?;
        // SAFETY: `cws` is a writable, suitably aligned (by kvmalloc) workspace of its length.
        let cctx = unsafe { bindings::zstd_init_cctx(cws.as_mut_ptr().cast(), cws.len()) };
        // SAFETY: as above, for `dws`.
        let dctx = unsafe { bindings::zstd_init_dctx(dws.as_mut_ptr().cast(), dws.len()) };
        // INVARIANT: both contexts were initialised in their workspaces, moved along with them
        // (the heap buffers do not move).
        Ok(Zstd {
            cctx: NonNull::new(cctx).ok_or(ENOMEM)?,
            dctx: NonNull::new(dctx).ok_or(ENOMEM)?,
            _cws: cws,
            _dws: dws,
            params,
        })
    }

    fn compress(&mut self, src: Source<'_>, dst: &mut [u8]) -> Result<usize> {
        // SAFETY: the context is valid (invariant); the source and `dst` are valid for their
        // lengths, which bound what is read and written.
        let ret = unsafe {
            bindings::zstd_compress_cctx(
                self.cctx.as_ptr(),
                dst.as_mut_ptr().cast(),
                dst.len(),
                src.as_ptr().cast(),
                src.len(),
                &self.params,
            )
        };
        // SAFETY: FFI call without preconditions.
        if unsafe { bindings::zstd_is_error(ret) } != 0 {
            return Err(E2BIG);
        }
        Ok(ret)
    }

    fn decompress(&mut self, src: &[u8], mut dst: Sink<'_>) -> Result<usize> {
        // SAFETY: as in `compress`, for the slice and the sink.
        let ret = unsafe {
            bindings::zstd_decompress_dctx(
                self.dctx.as_ptr(),
                dst.as_mut_ptr().cast(),
                dst.len(),
                src.as_ptr().cast(),
                src.len(),
            )
        };
        // SAFETY: FFI call without preconditions.
        if unsafe { bindings::zstd_is_error(ret) } != 0 {
            return Err(EINVAL);
        }
        Ok(ret)
    }
}

/// The default window of [`Deflate`]: 2^11 bytes, raw deflate (no zlib header), as zram and the
/// crypto API use.
const DEFLATE_WINBITS: c_int = 11;

/// The window, in bits, that [`Params::deflate_winbits`] asks for: 9 to 15 as they are, and -15
/// to -9, zlib's spelling of a raw stream (newer zram's default is `-11`), as their absolute value;
/// `None` for any other, which the kernel's zlib cannot take (its workspace size `BUG()`s).
fn deflate_window(winbits: c_int) -> Option<c_int> {
    match winbits {
        9..=15 => Some(winbits),
        -15..=-9 => Some(-winbits),
        _ => None,
    }
}

/// Deflate (`lib/zlib_deflate` and `lib/zlib_inflate`), named `deflate`: raw deflate with, by
/// default, a 2^11-byte window and zlib's default level, as zram. Always raw: a window given as
/// 9 to 15 or as -15 to -9 is the same raw window, where newer zram would add a zlib header for
/// the positive spelling (the compressed data stays in memory, so no one else reads it).
///
/// # Invariants
///
/// `cstream` was initialised for deflate with `_cws` as its workspace and `dstream` for inflate
/// with `_dws`; the workspaces live as long as `self`. The streams are pinned on the heap, since
/// zlib's state points back to its stream, and are reached only through raw pointers (`Opaque`),
/// since C holds that pointer while Rust uses the stream.
pub struct Deflate {
    cstream: Pin<KBox<Opaque<bindings::z_stream_s>>>,
    dstream: Pin<KBox<Opaque<bindings::z_stream_s>>>,
    _cws: KVVec<u8>,
    _dws: KVVec<u8>,
}

// SAFETY: the streams and their states are plain memory owned by `self`; nothing ties them to a
// thread.
unsafe impl Send for Deflate {}

impl Deflate {
    /// A zeroed stream on the heap with `ws` as its workspace.
    fn stream(ws: &mut KVVec<u8>) -> Result<Pin<KBox<Opaque<bindings::z_stream_s>>>> {
        // SAFETY: all zeroes is a valid `z_stream_s` (null pointers, zero counts).
        let zeroed: bindings::z_stream_s = unsafe { core::mem::zeroed() };
        let z = KBox::pin(Opaque::new(zeroed), GFP_KERNEL)?;
        // SAFETY: the stream is ours alone, not yet known to zlib.
        unsafe { (*z.get()).workspace = ws.as_mut_ptr().cast() };
        Ok(z)
    }

    /// Points `z`'s input at `src` and its output at `dst`.
    ///
    /// # Safety
    ///
    /// `z` must be a stream of `self`, not in use by another call.
    unsafe fn set_buffers(
        z: *mut bindings::z_stream_s,
        src: (*const u8, usize),
        dst: (*mut u8, usize),
    ) {
        // SAFETY: by the caller's promise `z` is valid and ours alone for the call.
        unsafe {
            (*z).next_in = src.0;
            (*z).avail_in = src.1;
            (*z).next_out = dst.0;
            (*z).avail_out = dst.1;
        }
    }
}

impl Compressor for Deflate {
    const NAME: &'static str = "deflate";

    fn new(params: &Params) -> Result<Self> {
        let mem_level = bindings::MAX_MEM_LEVEL as c_int;
        // The kernel zlib's range (its workspace size `BUG()`s outside 9 to 15), in either
        // spelling; `winbits` is then the window, 9 to 15.
        let winbits =
            deflate_window(params.deflate_winbits.unwrap_or(DEFLATE_WINBITS)).ok_or(EINVAL)?;
        let level = params.level.unwrap_or(bindings::Z_DEFAULT_COMPRESSION);
        // Its preconditions are the arguments' ranges, which it `BUG()`s outside of. It takes the
        // absolute value of the window it is given, `-winbits` (negated: a raw stream).
        // SAFETY: FFI call; that window is `winbits`, in 9..=15 by `deflate_window`, and
        // `mem_level` is `MAX_MEM_LEVEL`, in 1..=MAX_MEM_LEVEL.
        let csize = unsafe { bindings::zlib_deflate_workspacesize(-winbits, mem_level) };
        let mut cws = zeroed_workspace(usize::try_from(csize).map_err(|_| EINVAL)?)?;
        // SAFETY: FFI call without preconditions.
        let dsize = unsafe { bindings::zlib_inflate_workspacesize() };
        let mut dws = zeroed_workspace(usize::try_from(dsize).map_err(|_| EINVAL)?)?;
        let cstream = Self::stream(&mut cws)?;
        let dstream = Self::stream(&mut dws)?;
        // SAFETY: the stream is zeroed, with a workspace of the size deflate asked for these
        // parameters, allocated by kvmalloc (aligned for any of zlib's structures); it is pinned,
        // so it stays where it is initialised.
        let ret = unsafe {
            bindings::zlib_deflateInit2(
                cstream.get(),
                level,
                bindings::Z_DEFLATED as c_int,
                -winbits,
                mem_level,
                bindings::Z_DEFAULT_STRATEGY as c_int,
            )
        };
        if ret != bindings::Z_OK as c_int {
            return Err(EINVAL);
        }
        // SAFETY: as above, for inflate.
        let ret = unsafe { bindings::zlib_inflateInit2(dstream.get(), -winbits) };
        if ret != bindings::Z_OK as c_int {
            return Err(EINVAL);
        }
        // INVARIANT: both streams were initialised above, on their workspaces.
        Ok(Deflate {
            cstream,
            dstream,
            _cws: cws,
            _dws: dws,
        })
    }

    fn compress(&mut self, src: Source<'_>, dst: &mut [u8]) -> Result<usize> {
        let z = self.cstream.get();
        // SAFETY: the stream is initialised (type invariant), and ours alone: `&mut self`.
        if unsafe { bindings::zlib_deflateReset(z) } != bindings::Z_OK as c_int {
            return Err(EINVAL);
        }
        // SAFETY: as above.
        unsafe { Self::set_buffers(z, (src.as_ptr(), src.len()), (dst.as_mut_ptr(), dst.len())) };
        // SAFETY: the stream is initialised; its input and output are the source and `dst`, valid
        // for the lengths given, which bound what deflate reads and writes. The pointers are not
        // used after the call (the next call sets them again).
        let ret = unsafe { bindings::zlib_deflate(z, bindings::Z_FINISH as c_int) };
        // SAFETY: as above; deflate has returned.
        let left = unsafe { (*z).avail_out };
        match ret {
            r if r == bindings::Z_STREAM_END as c_int => dst.len().checked_sub(left).ok_or(EINVAL),
            // Not finished: the output is full.
            r if r == bindings::Z_OK as c_int || r == bindings::Z_BUF_ERROR => Err(E2BIG),
            _ => Err(EINVAL),
        }
    }

    fn decompress(&mut self, src: &[u8], mut dst: Sink<'_>) -> Result<usize> {
        let z = self.dstream.get();
        // SAFETY: the stream is initialised (type invariant), and ours alone: `&mut self`.
        if unsafe { bindings::zlib_inflateReset(z) } != bindings::Z_OK as c_int {
            return Err(EINVAL);
        }
        // SAFETY: as above.
        unsafe { Self::set_buffers(z, (src.as_ptr(), src.len()), (dst.as_mut_ptr(), dst.len())) };
        // SAFETY: as in `compress`; inflate checks its input and stops at the output's end.
        let ret = unsafe { bindings::zlib_inflate(z, bindings::Z_SYNC_FLUSH as c_int) };
        // SAFETY: as above; inflate has returned.
        let left = unsafe { (*z).avail_out };
        if ret == bindings::Z_STREAM_END as c_int {
            dst.len().checked_sub(left).ok_or(EINVAL)
        } else {
            Err(EINVAL)
        }
    }
}

impl Drop for Deflate {
    fn drop(&mut self) {
        // SAFETY: both streams are initialised (type invariant); ending them releases nothing
        // (the workspaces are ours and freed with `self`) and they are not used again.
        unsafe {
            bindings::zlib_deflateEnd(self.cstream.get());
            bindings::zlib_inflateEnd(self.dstream.get());
        }
    }
}

/// 842 (`lib/842`, the software implementation of the format of IBM's hardware compressor),
/// named `842`.
///
/// # Invariants
///
/// `wrk` holds `SW842_MEM_COMPRESS` bytes, allocated by kvmalloc (so aligned for the
/// compressor's state, a structure of pointers and integers).
pub struct Sw842 {
    wrk: KVVec<u8>,
}

impl Compressor for Sw842 {
    const NAME: &'static str = "842";

    fn new(_params: &Params) -> Result<Self> {
        // INVARIANT: the size 842 asks for, from kvmalloc.
        Ok(Sw842 {
            wrk: zeroed_workspace(bindings::SW842_MEM_COMPRESS as usize)?,
        })
    }

    fn compress(&mut self, src: Source<'_>, dst: &mut [u8]) -> Result<usize> {
        let mut len = c_uint::try_from(dst.len()).map_err(|_| EINVAL)?;
        // SAFETY: the source and `dst` are valid for their lengths; 842 writes at most `len` bytes
        // (`ENOSPC` past it); the workspace has `SW842_MEM_COMPRESS` suitably aligned bytes (type
        // invariant).
        let ret = unsafe {
            bindings::sw842_compress(
                src.as_ptr(),
                c_uint::try_from(src.len()).map_err(|_| EINVAL)?,
                dst.as_mut_ptr(),
                &mut len,
                self.wrk.as_mut_ptr().cast(),
            )
        };
        match ret {
            0 => Ok(len as usize),
            r if r == -(bindings::ENOSPC as c_int) => Err(E2BIG),
            _ => Err(EINVAL),
        }
    }

    fn decompress(&mut self, src: &[u8], mut dst: Sink<'_>) -> Result<usize> {
        let mut len = c_uint::try_from(dst.len()).map_err(|_| EINVAL)?;
        // SAFETY: the slice and the sink are valid for their lengths; 842 checks its input and
        // writes at most `len` bytes.
        let ret = unsafe {
            bindings::sw842_decompress(
                src.as_ptr(),
                c_uint::try_from(src.len()).map_err(|_| EINVAL)?,
                dst.as_mut_ptr(),
                &mut len,
            )
        };
        if ret == 0 {
            Ok(len as usize)
        } else {
            Err(EINVAL)
        }
    }
}

/// The algorithms, in the order zram lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// [`LzoRle`].
    LzoRle,
    /// [`Lzo`].
    Lzo,
    /// [`Lz4`].
    Lz4,
    /// [`Lz4hc`].
    Lz4hc,
    /// [`Zstd`].
    Zstd,
    /// [`Deflate`].
    Deflate,
    /// [`Sw842`].
    Sw842,
}

impl Algorithm {
    /// Every algorithm, in the order zram lists them.
    pub const ALL: [Algorithm; 7] = [
        Algorithm::LzoRle,
        Algorithm::Lzo,
        Algorithm::Lz4,
        Algorithm::Lz4hc,
        Algorithm::Zstd,
        Algorithm::Deflate,
        Algorithm::Sw842,
    ];

    /// Returns the algorithm's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::compress::Algorithm;
    ///
    /// assert_eq!(Algorithm::LzoRle.name(), "lzo-rle");
    /// assert_eq!(Algorithm::from_name("zstd"), Some(Algorithm::Zstd));
    /// assert_eq!(Algorithm::from_name("842"), Some(Algorithm::Sw842));
    /// assert_eq!(Algorithm::from_name("lzma"), None);
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::LzoRle => LzoRle::NAME,
            Algorithm::Lzo => Lzo::NAME,
            Algorithm::Lz4 => Lz4::NAME,
            Algorithm::Lz4hc => Lz4hc::NAME,
            Algorithm::Zstd => Zstd::NAME,
            Algorithm::Deflate => Deflate::NAME,
            Algorithm::Sw842 => Sw842::NAME,
        }
    }

    /// Returns the algorithm called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// A stream of any [`Algorithm`].
///
/// # Examples
///
/// ```
/// use kernel::compress::{Algorithm, Stream};
///
/// let page = [7u8; 4096];
/// for alg in Algorithm::ALL {
///     let mut s = Stream::new(alg)?;
///     let mut c = KVec::from_elem(0u8, 8192, GFP_KERNEL)?;
///     let n = s.compress(&page, &mut c)?;
///     assert!(n < 4096);
///     let mut d = KVec::from_elem(0u8, 4096, GFP_KERNEL)?;
///     assert_eq!(s.decompress(&c[..n], &mut d)?, 4096);
///     assert!(d.iter().all(|&b| b == 7));
/// }
///
/// // Parameters: zstd at level 19 compresses at least as well as at its default; deflate
/// // takes a window of 9 to 15 bits, also spelt -15 to -9 (raw deflate, newer zram's way), and
/// // refuses any other.
/// use kernel::compress::Params;
/// let mut text = KVec::from_elem(0u8, 4096, GFP_KERNEL)?;
/// for (i, b) in text.iter_mut().enumerate() {
///     *b = (i % 251) as u8 ^ (i / 512) as u8;
/// }
/// let mut c = KVec::from_elem(0u8, 8192, GFP_KERNEL)?;
/// let default = Stream::new(Algorithm::Zstd)?.compress(&text, &mut c)?;
/// let high = Params { level: Some(19), ..Params::default() };
/// assert!(Stream::with_params(Algorithm::Zstd, &high)?.compress(&text, &mut c)? <= default);
/// for winbits in [9, 15, -9, -12, -15] {
///     let good = Params { deflate_winbits: Some(winbits), ..Params::default() };
///     let mut s = Stream::with_params(Algorithm::Deflate, &good)?;
///     let n = s.compress(&text, &mut c)?;
///     let mut d = KVec::from_elem(0u8, 4096, GFP_KERNEL)?;
///     assert_eq!(s.decompress(&c[..n], &mut d)?, 4096);
///     assert!(d[..] == text[..]);
/// }
/// for winbits in [8, 16, -1, -8, -16, 0] {
///     let bad = Params { deflate_winbits: Some(winbits), ..Params::default() };
///     assert_eq!(Stream::with_params(Algorithm::Deflate, &bad).err(), Some(EINVAL));
/// }
/// # Ok::<(), Error>(())
/// ```
pub enum Stream {
    /// An lzo-rle stream.
    LzoRle(LzoRle),
    /// An lzo stream.
    Lzo(Lzo),
    /// An lz4 stream.
    Lz4(Lz4),
    /// An lz4hc stream.
    Lz4hc(Lz4hc),
    /// A zstd stream.
    Zstd(Zstd),
    /// A deflate stream.
    Deflate(Deflate),
    /// An 842 stream.
    Sw842(Sw842),
}

impl Stream {
    /// Allocates a stream of `alg` with its default parameters.
    pub fn new(alg: Algorithm) -> Result<Self> {
        Self::with_params(alg, &Params::default())
    }

    /// Allocates a stream of `alg` with `params`; see [`Compressor::new`].
    pub fn with_params(alg: Algorithm, params: &Params) -> Result<Self> {
        Ok(match alg {
            Algorithm::LzoRle => Stream::LzoRle(LzoRle::new(params)?),
            Algorithm::Lzo => Stream::Lzo(Lzo::new(params)?),
            Algorithm::Lz4 => Stream::Lz4(Lz4::new(params)?),
            Algorithm::Lz4hc => Stream::Lz4hc(Lz4hc::new(params)?),
            Algorithm::Zstd => Stream::Zstd(Zstd::new(params)?),
            Algorithm::Deflate => Stream::Deflate(Deflate::new(params)?),
            Algorithm::Sw842 => Stream::Sw842(Sw842::new(params)?),
        })
    }

    /// Compresses; see [`Compressor::compress`].
    ///
    /// `src` is a [`Source`] or a slice.
    pub fn compress<'s>(&mut self, src: impl Into<Source<'s>>, dst: &mut [u8]) -> Result<usize> {
        let src = src.into();
        match self {
            Stream::LzoRle(s) => s.compress(src, dst),
            Stream::Lzo(s) => s.compress(src, dst),
            Stream::Lz4(s) => s.compress(src, dst),
            Stream::Lz4hc(s) => s.compress(src, dst),
            Stream::Zstd(s) => s.compress(src, dst),
            Stream::Deflate(s) => s.compress(src, dst),
            Stream::Sw842(s) => s.compress(src, dst),
        }
    }

    /// Decompresses; see [`Compressor::decompress`].
    ///
    /// `dst` is a [`Sink`] or a mutable slice.
    pub fn decompress<'d>(&mut self, src: &[u8], dst: impl Into<Sink<'d>>) -> Result<usize> {
        let dst = dst.into();
        match self {
            Stream::LzoRle(s) => s.decompress(src, dst),
            Stream::Lzo(s) => s.decompress(src, dst),
            Stream::Lz4(s) => s.decompress(src, dst),
            Stream::Lz4hc(s) => s.decompress(src, dst),
            Stream::Zstd(s) => s.decompress(src, dst),
            Stream::Deflate(s) => s.decompress(src, dst),
            Stream::Sw842(s) => s.decompress(src, dst),
        }
    }
}
