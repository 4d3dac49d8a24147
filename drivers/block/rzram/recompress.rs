// SPDX-License-Identifier: GPL-2.0

//! Recompression: the `recompress` attribute's candidate pages (`candidates.rs`) compressed again
//! with the secondary algorithms of `recomp_algorithm`, with the storage's streams.
//!
//! Each page is recompressed under its slot lock, then the CPU's compression streams, then a
//! zsmalloc mapping of its object, the order of every other path (`storage.rs`); the smaller
//! object is allocated under all three without sleeping (`GFP_NOWAIT`), as zram allocates it.

use crate::{
    args::RecompressArgs,
    candidates::candidates,
    state::{State, MAX_PRIO},
    storage::Storage,
};
use core::ops::Range;
use kernel::{
    compress::Algorithm,
    error::code::*,
    prelude::*,
    zsmalloc::{Contents, Handle, Pool},
};

/// What `recompress` may do, from the attribute's arguments.
pub(crate) struct Recompress {
    /// Only idle pages.
    idle: bool,
    /// Only huge pages.
    huge: bool,
    /// Only pages of at least this many bytes, and only into fewer; 0 for any.
    threshold: usize,
    /// At most this many pages.
    max_pages: u64,
    /// The priorities to try: `prio..prio_max`.
    prio: usize,
    prio_max: usize,
}

impl Recompress {
    /// `EINVAL` unless the threshold `args` give is below the huge class size of `storage`'s
    /// pool: zram's check, made before it looks for another post-processing.
    pub(crate) fn check_threshold(args: &RecompressArgs<'_>, storage: &Storage) -> Result {
        if args.threshold >= storage.pool().huge_class_size() as u64 {
            return Err(EINVAL);
        }
        Ok(())
    }

    /// What a `recompress` write asks of storage whose algorithms are `algs`; `EINVAL` for an
    /// `algo=` that is not a secondary algorithm (see [`priorities`]).
    pub(crate) fn new(
        args: &RecompressArgs<'_>,
        algs: &[Option<Algorithm>; MAX_PRIO],
    ) -> Result<Self> {
        let prios = priorities(args.priority, args.algo, algs)?;
        Ok(Recompress {
            idle: args.idle,
            huge: args.huge,
            threshold: usize::try_from(args.threshold).unwrap_or(usize::MAX),
            max_pages: args.max_pages,
            prio: prios.start,
            prio_max: prios.end,
        })
    }

    /// Whether a page in state `st` is a candidate (its size aside, a stored one).
    fn eligible(&self, st: State) -> bool {
        st.is_candidate(self.idle, self.huge)
            && !st.is_incompressible()
            && st.size() >= self.threshold
    }

    /// Recompresses stored pages with the secondary algorithms, as zram's `recompress`.
    ///
    /// The candidates are the stored pages that are not same-filled or incompressible, idle and/or
    /// huge as `self` asks, of at least `self.threshold` bytes; they are taken largest first, in
    /// buckets of 64 bytes (zram since 6.13), at most `self.max_pages` of them. Each is
    /// decompressed and compressed again with the secondary algorithms of priorities
    /// `self.prio..self.prio_max` above its own, in order, until one stores it in a smaller size
    /// class (and below the threshold, if one is given); a page no secondary algorithm improves is
    /// marked incompressible when all were tried. Fails with `ENOMEM` if memory for a new object is
    /// short (what was done stays done).
    ///
    /// May race with reads, writes and frees of the same pages: each page is recompressed under
    /// its lock, after its eligibility is checked again.
    pub(crate) fn run(&self, storage: &Storage) -> Result {
        let all = 0..storage.pages();
        let buckets = candidates(storage.table(), core::slice::from_ref(&all), |st| {
            self.eligible(st)
        })?;
        let mut left = self.max_pages;
        for bucket in buckets.iter().rev() {
            for &index in bucket.iter() {
                if left == 0 {
                    return Ok(());
                }
                // As zram, only pages an algorithm was tried on count.
                if self.recompress_page(storage, index as usize)? {
                    left -= 1;
                }
            }
        }
        Ok(())
    }

    /// Recompresses page `index` if it is still a candidate; see [`run`](Self::run).
    /// Returns whether an algorithm was tried on it.
    fn recompress_page(&self, storage: &Storage, index: usize) -> Result<bool> {
        let t = storage.table();
        let pool: &Pool = t.pool();
        let mut g = t.lock(index).ok_or(EIO)?;
        let st = State::of(&g);
        // A slot swap freed waits for its deferred free.
        if !g.has_object() || !self.eligible(st) || t.is_stale(&g) {
            return Ok(false);
        }
        let old_size = st.size();
        let old_class = g.class_index().ok_or(EIO)?;
        // The secondary algorithms configured: a page all of them tried is incompressible.
        let secondaries = storage.algorithms()[1..].iter().flatten().count();
        let outcome = storage.streams().with(|c| -> Result<Recompressed<'_>> {
            c.load_page(st.prio(), &g.map_read(old_size)?)?;
            let mut tried = 0;
            // Whether the last algorithm tried reached a smaller class (but not the threshold).
            let mut last_smaller = false;
            for prio in self.prio.max(st.prio() + 1)..self.prio_max.min(MAX_PRIO) {
                let Some(compressed) = c.compress_loaded(prio) else {
                    continue;
                };
                tried += 1;
                last_smaller = false;
                let data = match compressed {
                    Ok(data) => data,
                    Err(e) if e == E2BIG => continue,
                    Err(e) => return Err(e),
                };
                let len = data.len();
                if len >= pool.huge_class_size() || pool.class_index_for(len)? >= old_class {
                    continue;
                }
                if self.threshold != 0 && len >= self.threshold {
                    last_smaller = true;
                    continue;
                }
                // Under the slot lock and the stream: no sleeping (zram allocates without
                // direct reclaim here too).
                let obj = pool.alloc(len, GFP_NOWAIT | __GFP_NOWARN)?;
                return Ok(Recompressed::Smaller(obj.write(data)?, len, prio));
            }
            // As zram: incompressible when every secondary algorithm was tried and the last
            // did not reach a smaller class.
            Ok(Recompressed::NotSmaller {
                tried,
                incompressible: secondaries != 0 && tried == secondaries && !last_smaller,
            })
        })?;
        let mut tried = 1;
        match outcome {
            Recompressed::Smaller(h, len, prio) => {
                let old = g.replace(Contents::Object(h))?;
                // The access time stays; the idle mark goes, as zram clears it.
                State::stored(len, false).with_prio(prio).set(&mut g);
                t.stats().object_shrunk(old_size, st.is_huge(), len);
                // Freed under the slot lock, as a write frees the old contents.
                drop(old);
            }
            Recompressed::NotSmaller {
                tried: n,
                incompressible,
            } => {
                tried = n;
                let st = st.with_idle(false);
                let st = if incompressible {
                    st.incompressible()
                } else {
                    st
                };
                st.set(&mut g);
            }
        }
        Ok(tried != 0)
    }
}

/// The priorities `recompress` tries, from its `priority=` and `algo=`, as zram 6.12 takes them:
/// every secondary one by default, only `N` for `priority=N` (0 means 1), and with `algo=NAME`
/// the first secondary algorithm of that name from the priority on, `EINVAL` if there is none.
///
/// A priority from [`MAX_PRIO`] on tries nothing (an empty range; zram's `u32` `prio + 1` wraps
/// to 0 for 4294967295, which is empty too), and with `algo=` is `EINVAL`. It is clamped before
/// `+ 1`, which then cannot overflow, on 32-bit either.
pub(crate) fn priorities(
    priority: Option<u32>,
    algo: Option<&[u8]>,
    algs: &[Option<Algorithm>; MAX_PRIO],
) -> Result<Range<usize>> {
    let prio = priority.map_or(1, |p| {
        usize::try_from(p.max(1)).map_or(MAX_PRIO, |p| p.min(MAX_PRIO))
    });
    let Some(name) = algo else {
        let prio_max = priority.map_or(MAX_PRIO, |_| (prio + 1).min(MAX_PRIO));
        return Ok(prio..prio_max);
    };
    let p = (prio..MAX_PRIO)
        .find(|&p| algs[p].is_some_and(|a| a.name().as_bytes() == name))
        .ok_or(EINVAL)?;
    Ok(p..p + 1)
}

/// What recompressing a page gave.
enum Recompressed<'a> {
    /// A smaller object: the handle, its size and the priority of its algorithm.
    Smaller(Handle<'a>, usize, usize),
    /// Nothing smaller, with `tried` algorithms; `incompressible` if the page is to be marked so.
    NotSmaller { tried: usize, incompressible: bool },
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_recompress)]
mod tests {
    use super::*;
    use crate::{
        candidates::BUCKET_BYTES,
        config::Config,
        storage_tests::{page, random_page},
    };
    use kernel::{c_str, compress::Algorithm, kunit_expect, kunit_expect_eq, page::PAGE_SIZE};

    /// `recompress`'s priorities, as zram 6.12 takes them. `priority=4294967295` overflowed
    /// `prio + 1` on 32-bit; zram's `u32` arithmetic wraps there, and tries nothing.
    #[test]
    fn recompress_priorities() {
        use kernel::compress::Algorithm::{Lz4hc, LzoRle, Zstd};
        let algs = [Some(LzoRle), Some(Zstd), None, Some(Lz4hc)];
        kunit_expect_eq!(priorities(None, None, &algs), Ok(1..MAX_PRIO));
        // Priority 0 is 1; a priority alone is tried alone, with an algorithm or not.
        kunit_expect_eq!(priorities(Some(0), None, &algs), Ok(1..2));
        kunit_expect_eq!(priorities(Some(2), None, &algs), Ok(2..3));
        kunit_expect_eq!(priorities(Some(3), None, &algs), Ok(3..4));
        // Out of range: nothing to try, and no algorithm to find.
        for p in [4, 5, i32::MAX as u32, u32::MAX - 1, u32::MAX] {
            kunit_expect!(priorities(Some(p), None, &algs).is_ok_and(|r| r.is_empty()));
            kunit_expect_eq!(priorities(Some(p), Some(b"zstd"), &algs), Err(EINVAL));
        }
        // `algo=`: the first secondary algorithm of that name from the priority on.
        kunit_expect_eq!(priorities(None, Some(b"lz4hc"), &algs), Ok(3..4));
        kunit_expect_eq!(priorities(Some(0), Some(b"zstd"), &algs), Ok(1..2));
        kunit_expect_eq!(priorities(Some(2), Some(b"lz4hc"), &algs), Ok(3..4));
        kunit_expect_eq!(priorities(Some(2), Some(b"zstd"), &algs), Err(EINVAL));
        kunit_expect_eq!(priorities(None, Some(b"lzo-rle"), &algs), Err(EINVAL));
    }

    /// Pages written with lzo-rle and recompressed with zstd, by `type=idle` and by
    /// `threshold=`: the contents stay, the compressed size shrinks, the slot records the
    /// priority; a page zstd cannot shrink is marked incompressible and skipped next time.
    #[test]
    fn recompression() -> Result {
        let mut cfg = Config::default();
        cfg.set_algorithm(2, Algorithm::Zstd)?;
        let storage = Storage::with_config(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, &cfg)?;
        let s = &storage.stats();
        let text =
            |seed: usize| page(move |i| b"rzram recompresses idle pages "[(i * 7 + seed) % 30]);
        // Page 2 compresses less well than page 1: one byte in 32 is random.
        let mut p2 = text(5)?;
        let noise = random_page()?;
        for (i, b) in p2.iter_mut().enumerate().filter(|(i, _)| i % 32 == 0) {
            *b = noise[i];
        }
        let pages = [text(0)?, text(3)?, p2, random_page()?];
        for (i, p) in pages.iter().enumerate() {
            storage.write_page(i, p, 0)?;
        }
        let state = |i| storage.table().state(i).ok_or(EINVAL);
        let before = s.compr_data_size.get();
        let all = |idle, huge, threshold| Recompress {
            idle,
            huge,
            threshold,
            max_pages: u64::MAX,
            prio: 1,
            prio_max: MAX_PRIO,
        };
        // Nothing is idle yet: type=idle does nothing.
        all(true, false, 0).run(&storage)?;
        assert_eq!(s.compr_data_size.get(), before);
        // Page 0 idle only.
        storage.table().mark_idle(i64::MAX);
        storage.write_page(1, &pages[1], 0)?;
        storage.write_page(2, &pages[2], 0)?;
        all(true, false, 0).run(&storage)?;
        assert_eq!(state(0)?.prio(), 2);
        assert!(!state(0)?.is_idle());
        assert_eq!((state(1)?.prio(), state(2)?.prio()), (0, 0));
        // The huge page (3) was idle too: not shrunk, so incompressible.
        assert!(state(3)?.is_incompressible() && state(3)?.is_huge());
        // By size, without a threshold, at most one page: the largest bucket goes first (then
        // index order). Page 0 (done) and 3 (incompressible) have nothing left to try.
        let (s1, s2) = (state(1)?.size(), state(2)?.size());
        let mut one = all(false, false, 0);
        one.max_pages = 1;
        one.run(&storage)?;
        let done = if s2 / BUCKET_BYTES > s1 / BUCKET_BYTES {
            2
        } else {
            1
        };
        let other = 3 - done;
        assert_eq!(state(done)?.prio(), 2);
        assert_eq!(state(other)?.prio(), 0);
        // A threshold above the other page's size: it is not a candidate.
        let size = state(other)?.size();
        all(false, false, size + 1).run(&storage)?;
        assert_eq!(state(other)?.prio(), 0);
        // At its size: a candidate, recompressed below it.
        all(false, false, size).run(&storage)?;
        assert_eq!(state(other)?.prio(), 2);
        assert!(state(other)?.size() < size);
        assert!(s.compr_data_size.get() < before);
        let mut out = page(|_| 0)?;
        for (i, p) in pages.iter().enumerate() {
            storage.read_page(i, &mut out)?;
            assert!(out == *p);
        }
        assert_eq!(s.pages_stored.get(), 4);
        assert_eq!(s.huge_pages.get(), 1);
        // A write makes the page new: primary algorithm, not incompressible.
        storage.write_page(3, &pages[0], 0)?;
        assert_eq!(state(3)?.prio(), 0);
        assert!(!state(3)?.is_incompressible());
        Ok(())
    }
}
