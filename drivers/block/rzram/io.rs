// SPDX-License-Identifier: GPL-2.0

//! The I/O path: pages into and out of the slot table of an initialised device.

use crate::slots::{Freer, Table, Word, HUGE, PENDING, SAME};
use kernel::{
    compress::{Algorithm, Stream},
    error::code::*,
    page::PAGE_SIZE,
    percpu::PerCpu,
    prelude::*,
    str::CStr,
    sync::Arc,
    zsmalloc::{Deferred, Entry, Handle, Pool},
};

/// A CPU's compression stream and its output buffer (two pages, as zram's).
struct Comp {
    stream: Stream,
    buf: KVec<u8>,
}

/// The memory of an initialised device: its table, its deferred-free queue and its streams.
///
/// Replaced as a whole by `disksize` and dropped by `reset`; I/O holds a reference for its
/// duration, so a reset never frees memory that a bio is using.
pub(crate) struct Meta {
    pub(crate) table: Arc<Table>,
    pub(crate) deferred: Pin<KBox<Deferred<Freer>>>,
    streams: PerCpu<Comp>,
    pub(crate) alg: Algorithm,
    pub(crate) disksize: u64,
}

/// Returns the word a page repeats, if it is one word repeated.
pub(crate) fn same_filled(page: &[u8]) -> Option<usize> {
    const W: usize = core::mem::size_of::<usize>();
    let mut words = page
        .chunks_exact(W)
        .map(|c| usize::from_ne_bytes(c.try_into().unwrap_or([0; W])));
    let first = words.next()?;
    if page.len() % W == 0 && words.all(|w| w == first) {
        Some(first)
    } else {
        None
    }
}

/// Fills `dst` with the word `w` repeated.
pub(crate) fn fill(dst: &mut [u8], w: usize) {
    let bytes = w.to_ne_bytes();
    for c in dst.chunks_mut(bytes.len()) {
        c.copy_from_slice(&bytes[..c.len()]);
    }
}

/// Where a compressed page goes.
enum Placed {
    /// Copied into this object, of this many bytes; huge if stored uncompressed.
    Stored(Handle, usize, bool),
    /// No memory without sleeping: allocate this many bytes, then retry.
    NeedMemory(usize),
}

impl Meta {
    pub(crate) fn new(name: &CStr, disksize: u64, alg: Algorithm) -> Result<Arc<Meta>> {
        let pages = usize::try_from(disksize / PAGE_SIZE as u64).map_err(|_| ENOMEM)?;
        // Slot indices travel through the deferred-free queue as `u32`.
        if u32::try_from(pages).is_err() {
            return Err(ENOMEM);
        }
        let pool = Arc::new(Pool::new(name)?, GFP_KERNEL)?;
        let table = Arc::new(Table::new(pool.clone(), pages)?, GFP_KERNEL)?;
        let deferred = Deferred::new(pool, Freer(table.clone()), 0)?;
        let streams = PerCpu::new(|_| {
            Ok(Comp {
                stream: Stream::new(alg)?,
                buf: KVec::from_elem(0u8, 2 * PAGE_SIZE, GFP_KERNEL)?,
            })
        })?;
        Ok(Arc::new(
            Meta {
                table,
                deferred,
                streams,
                alg,
                disksize,
            },
            GFP_KERNEL,
        )?)
    }

    /// Reads page `index` into `dst`, one page long.
    pub(crate) fn read_page(&self, index: usize, dst: &mut [u8]) -> Result {
        let t = &*self.table;
        let g = t.slots.get(index).ok_or(EIO)?.lock();
        let size = Word(g.bits()).size();
        let h = match (g.as_word(), g.as_handle()) {
            (Some(w), _) => {
                fill(dst, w);
                return Ok(());
            }
            (None, Some(h)) => h,
            (None, None) => return Err(EIO),
        };
        if size == PAGE_SIZE {
            dst.copy_from_slice(&t.pool.map_read(h, size)?);
            return Ok(());
        }
        // Stream, then mapping: the order of the write path, so that the two never wait on
        // each other.
        let n = self.streams.with(|c| {
            let obj = t.pool.map_read(h, size)?;
            c.stream.decompress(&obj, dst)
        })?;
        if n == PAGE_SIZE {
            Ok(())
        } else {
            Err(EIO)
        }
    }

    /// Compresses `src` into a new object; the object is taken from `spare` if it fits.
    fn place(&self, src: &[u8], spare: &mut Option<Handle>) -> Result<Placed> {
        let t = &*self.table;
        let huge_size = t.pool.huge_class_size();
        self.streams.with(|c| {
            let (data, len, huge) = match c.stream.compress(src, &mut c.buf) {
                Ok(n) if n < huge_size => (&c.buf[..n], n, false),
                Ok(_) | Err(E2BIG) => (src, PAGE_SIZE, true),
                Err(e) => return Err(e),
            };
            // The page may have changed since `spare` was allocated for it (a write that is
            // not stable): use the object only if the new length fits its class.
            let fits = |h: &Handle| {
                matches!(
                    (h.class_index(&t.pool), t.pool.class_index_for(len)),
                    (Ok(have), Ok(need)) if have >= need
                )
            };
            let mut h = match spare.take() {
                Some(h) if fits(&h) => h,
                other => {
                    if let Some(h) = other {
                        t.pool.free(h);
                    }
                    match t.pool.alloc(len, GFP_NOWAIT | __GFP_NOWARN) {
                        Ok(h) => h,
                        Err(_) => return Ok(Placed::NeedMemory(len)),
                    }
                }
            };
            let copied = t
                .pool
                .map_write(&mut h, len)
                .map(|mut obj| obj.copy_from_slice(data));
            if let Err(e) = copied {
                t.pool.free(h);
                return Err(e);
            }
            Ok(Placed::Stored(h, len, huge))
        })
    }

    /// Writes `src`, one page, to page `index`. With `limit_pages` not 0, fails with `ENOMEM`
    /// rather than let the pool grow beyond it.
    pub(crate) fn write_page(&self, index: usize, src: &[u8], limit_pages: u64) -> Result {
        let t = &*self.table;
        let slot = t.slots.get(index).ok_or(EIO)?;
        if let Some(w) = same_filled(src) {
            let mut g = slot.lock();
            t.clear(&mut g);
            let _ = g.replace(Entry::word(w));
            g.set_bits(SAME);
            t.stats.same_pages.inc();
            t.stats.pages_stored.inc();
            return Ok(());
        }

        let mut spare = None;
        let (h, len, huge) = loop {
            match self.place(src, &mut spare)? {
                Placed::Stored(h, len, huge) => break (h, len, huge),
                Placed::NeedMemory(len) => {
                    // The slow path may sleep, so it runs without the stream.
                    t.stats.writestall.inc();
                    spare = Some(t.pool.alloc(len, GFP_NOIO | __GFP_NOWARN)?);
                }
            }
        };

        let used = t.pool.total_pages() as u64;
        if limit_pages != 0 && used > limit_pages {
            t.pool.free(h);
            return Err(ENOMEM);
        }
        t.stats.max_used_pages.raise_to(used);

        // Free the old contents and install the new ones under one lock.
        let mut g = slot.lock();
        t.clear(&mut g);
        let _ = g.replace(Entry::handle(h));
        g.set_bits(Word::new(len, if huge { HUGE } else { 0 }).0);
        t.stats.compr_data_size.add(len as u64);
        t.stats.pages_stored.inc();
        if huge {
            t.stats.huge_pages.inc();
            t.stats.huge_pages_since.inc();
        }
        Ok(())
    }

    /// Empties page `index`.
    pub(crate) fn free_page(&self, index: usize) {
        if let Some(slot) = self.table.slots.get(index) {
            self.table.clear(&mut slot.lock());
        }
    }

    /// Swap freed page `index`: mark it and queue it for the deferred free. Returns `false` if
    /// the slot was busy (being read or written) and nothing was done, as zram counts in
    /// `miss_free`.
    pub(crate) fn notify_free(&self, index: usize) -> bool {
        let Some(slot) = self.table.slots.get(index) else {
            return true;
        };
        let Some(mut g) = slot.try_lock() else {
            return false;
        };
        let w = Word(g.bits());
        if !w.has(SAME) && g.as_handle().is_none() {
            // Never written, or already freed.
            return true;
        }
        g.set_bits(w.0 | PENDING);
        drop(g);
        // Queued, or freed at once if the queue is full.
        self.deferred.push(index as u32);
        true
    }
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_io)]
mod tests {
    use super::*;
    use kernel::{c_str, kunit_expect, kunit_expect_eq};

    fn page(mut f: impl FnMut(usize) -> u8) -> Result<KVec<u8>> {
        let mut v = KVec::with_capacity(PAGE_SIZE, GFP_KERNEL)?;
        for i in 0..PAGE_SIZE {
            v.push(f(i), GFP_KERNEL)?;
        }
        Ok(v)
    }

    /// A page of pseudo-random bytes, which no algorithm compresses.
    fn random_page() -> Result<KVec<u8>> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        page(|_| {
            // SplitMix64.
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
    }

    #[test]
    fn same_fill_detection() -> Result {
        kunit_expect_eq!(same_filled(&page(|_| 0)?), Some(0));
        let w = usize::from_ne_bytes([0xab; core::mem::size_of::<usize>()]);
        kunit_expect_eq!(same_filled(&page(|_| 0xab)?), Some(w));
        // A repeated word that is not a repeated byte.
        let p = page(|i| (i % core::mem::size_of::<usize>()) as u8)?;
        kunit_expect!(same_filled(&p).is_some());
        // One byte off anywhere, the first word or the last.
        for at in [0, 1, PAGE_SIZE / 2, PAGE_SIZE - 1] {
            let p = page(|i| u8::from(i == at))?;
            kunit_expect_eq!(same_filled(&p), None);
        }
        let mut out = page(|_| 1)?;
        fill(&mut out, w);
        kunit_expect!(out.iter().all(|&b| b == 0xab));
        Ok(())
    }

    #[test]
    fn round_trip_every_algorithm() -> Result {
        let pages = [
            page(|i| (i / 64) as u8)?,              // compressible
            random_page()?,                         // incompressible
            page(|_| 0)?,                           // zero
            page(|i| if i < 100 { 0 } else { 7 })?, // nearly same-filled
        ];
        for alg in Algorithm::ALL {
            let meta = Meta::new(c_str!("rzram_kunit"), 16 * PAGE_SIZE as u64, alg)?;
            let mut out = page(|_| 0x55)?;
            // A never-written page reads as zeroes.
            meta.read_page(5, &mut out)?;
            kunit_expect!(out.iter().all(|&b| b == 0));
            for (i, p) in pages.iter().enumerate() {
                meta.write_page(i, p, 0)?;
            }
            for (i, p) in pages.iter().enumerate() {
                meta.read_page(i, &mut out)?;
                kunit_expect!(out == *p);
            }
            let s = &meta.table.stats;
            kunit_expect_eq!(s.pages_stored.get(), 4);
            kunit_expect_eq!(s.same_pages.get(), 1);
            kunit_expect_eq!(s.huge_pages.get(), 1);
            // Overwrite and free: the accounting follows.
            meta.write_page(0, &pages[2], 0)?;
            kunit_expect_eq!(s.same_pages.get(), 2);
            for i in 0..4 {
                meta.free_page(i);
            }
            kunit_expect_eq!(s.pages_stored.get(), 0);
            kunit_expect_eq!(s.compr_data_size.get(), 0);
            kunit_expect_eq!(meta.table.pool.total_pages(), 0);
        }
        Ok(())
    }

    #[test]
    fn notify_free_then_write() -> Result {
        let meta = Meta::new(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, Algorithm::Lz4)?;
        let a = page(|i| (i / 32) as u8)?;
        let b = page(|i| (i / 16) as u8)?;
        meta.write_page(1, &a, 0)?;
        kunit_expect!(meta.notify_free(1));
        // A write after the notify and before the drain must survive the drain.
        meta.write_page(1, &b, 0)?;
        meta.deferred.flush();
        let mut out = page(|_| 0)?;
        meta.read_page(1, &mut out)?;
        kunit_expect!(out == b);
        // Without a write the drain frees the slot.
        kunit_expect!(meta.notify_free(1));
        meta.deferred.flush();
        kunit_expect_eq!(meta.table.stats.pages_stored.get(), 0);
        meta.read_page(1, &mut out)?;
        kunit_expect!(out.iter().all(|&b| b == 0));
        Ok(())
    }
}
