// SPDX-License-Identifier: GPL-2.0

//! A CPU's compression streams, zcomp's counterpart: one stream per configured priority (the
//! primary algorithm and the secondary ones of `recomp_algorithm`), with the buffers they work
//! in. The storage keeps one set per CPU, behind a local lock (`storage.rs`).

use crate::{config::Config, state::MAX_PRIO};
use kernel::{
    compress::Stream,
    error::code::*,
    io_buf::{Sink, Source},
    page::PAGE_SIZE,
    prelude::*,
    zsmalloc::{Handle, NewObject, Pool},
};

/// A CPU's compression streams, its output buffer (two pages, as zram's: lzo's worst case fits,
/// so it runs unbounded) and the page recompression decompresses into.
pub(crate) struct Streams {
    streams: [Option<Stream>; MAX_PRIO],
    buf: KVec<u8>,
    page: KVec<u8>,
}

/// Where a compressed page goes.
pub(crate) enum Compressed<'a> {
    /// Written to this object, of this many bytes; huge if stored uncompressed.
    Stored(Handle<'a>, usize, bool),
    /// No memory without sleeping: allocate this many bytes, then retry.
    NeedMemory(usize),
}

impl Streams {
    /// The streams of the algorithms of `cfg`, with their parameters; `EINVAL` if an algorithm
    /// refuses its parameters.
    pub(crate) fn new(cfg: &Config) -> Result<Self> {
        let mut streams = [None, None, None, None];
        for (prio, (s, alg)) in streams.iter_mut().zip(cfg.algorithms()).enumerate() {
            if let Some(a) = alg {
                *s = Some(Stream::with_params(a, &cfg.params(prio))?);
            }
        }
        Ok(Streams {
            streams,
            buf: KVec::from_elem(0u8, 2 * PAGE_SIZE, GFP_KERNEL)?,
            page: KVec::from_elem(0u8, PAGE_SIZE, GFP_KERNEL)?,
        })
    }

    /// Decompresses `src`, stored with priority `prio`, into `dst`; `EIO` unless it makes a
    /// whole page.
    #[inline]
    pub(crate) fn decompress_page<'d>(
        &mut self,
        prio: usize,
        src: &[u8],
        dst: impl Into<Sink<'d>>,
    ) -> Result {
        decompress_whole(stream_of(&mut self.streams, prio)?, src, dst.into())
    }

    /// Compresses `src`, one page, with the primary stream, and writes the result (or `src`
    /// itself, if it does not compress below the huge size) to a new object of `pool`: `spare`
    /// if it is large enough, else one allocated without sleeping.
    #[inline]
    pub(crate) fn compress_page<'a>(
        &mut self,
        pool: &'a Pool,
        src: Source<'_>,
        spare: &mut Option<NewObject<'a>>,
    ) -> Result<Compressed<'a>> {
        let huge_size = pool.huge_class_size();
        let stream = stream_of(&mut self.streams, 0)?;
        let buf = &mut self.buf[..];
        let (data, len, huge) = match stream.compress(src, buf) {
            Ok(n) if n < huge_size => (Source::from(buf.get(..n).ok_or(EIO)?), n, false),
            Ok(_) | Err(E2BIG) => (src, PAGE_SIZE, true),
            Err(e) => return Err(e),
        };
        // The page may have changed since `spare` was allocated for it (a write that is not
        // stable): use the object only if the new length fits it.
        let obj = match spare.take() {
            Some(obj) if obj.capacity() >= len => obj,
            other => {
                // Too small: freed.
                drop(other);
                match pool.alloc(len, GFP_NOWAIT | __GFP_NOWARN) {
                    Ok(obj) => obj,
                    Err(_) => return Ok(Compressed::NeedMemory(len)),
                }
            }
        };
        // Bytes past `len` up to the object's capacity are zeroed.
        Ok(Compressed::Stored(obj.write_from(data)?, len, huge))
    }

    /// Loads a stored page of `size` bytes (`obj`), compressed with priority `prio` unless it is
    /// a whole page, into this CPU's page, for [`compress_loaded`](Self::compress_loaded).
    pub(crate) fn load_page(&mut self, prio: usize, obj: &[u8]) -> Result {
        if obj.len() == PAGE_SIZE {
            self.page.copy_from_slice(obj);
            return Ok(());
        }
        decompress_whole(
            stream_of(&mut self.streams, prio)?,
            obj,
            (&mut self.page[..]).into(),
        )
    }

    /// Compresses the page [`load_page`](Self::load_page) loaded with the stream of priority
    /// `prio`: `None` if there is none, `Some(Err(E2BIG))` if the output does not fit its
    /// buffer, the compressed bytes otherwise.
    pub(crate) fn compress_loaded(&mut self, prio: usize) -> Option<Result<&[u8]>> {
        let stream = self.streams.get_mut(prio)?.as_mut()?;
        Some(
            stream
                .compress(&self.page[..], &mut self.buf)
                .and_then(|n| self.buf.get(..n).ok_or(EIO)),
        )
    }
}

/// The stream of priority `prio` of `streams`; `EIO` if there is none (a stored page's priority
/// always has one). A function of the field alone, so that a stream and the other buffers can be
/// borrowed at once.
fn stream_of(streams: &mut [Option<Stream>; MAX_PRIO], prio: usize) -> Result<&mut Stream> {
    streams.get_mut(prio).and_then(Option::as_mut).ok_or(EIO)
}

/// Decompresses `src` with `stream` into `dst`; `EIO` unless it makes a whole page.
#[inline]
fn decompress_whole(stream: &mut Stream, src: &[u8], dst: Sink<'_>) -> Result {
    if stream.decompress(src, dst)? != PAGE_SIZE {
        return Err(EIO);
    }
    Ok(())
}
