// SPDX-License-Identifier: GPL-2.0

//! Recompression: the `recompress` attribute's pages compressed again with the secondary
//! algorithms of `recomp_algorithm`, through the storage's candidates, slots and streams.

use crate::{
    state::{State, MAX_PRIO},
    storage::Storage,
};
use kernel::{
    error::code::*,
    prelude::*,
    zsmalloc::{Contents, Handle, Pool},
};

/// What `recompress` may do, from the attribute's arguments.
pub(crate) struct Recompress {
    /// Only idle pages.
    pub(crate) idle: bool,
    /// Only huge pages.
    pub(crate) huge: bool,
    /// Only pages of at least this many bytes, and only into fewer; 0 for any.
    pub(crate) threshold: usize,
    /// At most this many pages.
    pub(crate) max_pages: u64,
    /// The priorities to try: `prio..prio_max`.
    pub(crate) prio: usize,
    pub(crate) prio_max: usize,
}

impl Recompress {
    /// Whether a page in state `st` is a candidate (its size aside, a stored one).
    fn eligible(&self, st: State) -> bool {
        !st.is_same()
            && !st.is_wb()
            && !st.is_under_wb()
            && !st.is_incompressible()
            && (!self.idle || st.is_idle())
            && (!self.huge || st.is_huge())
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
        let all = 0..storage.table.slots.len();
        let buckets = storage.candidates(core::slice::from_ref(&all), |st| self.eligible(st))?;
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
        let t = &*storage.table;
        let pool: &Pool = &t.pool;
        let mut g = t.slots.lock(index).ok_or(EIO)?;
        let st = State::of(&g);
        // A slot swap freed waits for its deferred free.
        if !g.has_object() || !self.eligible(st) || t.is_stale(&g) {
            return Ok(false);
        }
        let old_size = st.size();
        let old_class = g.class_index().ok_or(EIO)?;
        // The secondary algorithms configured: a page all of them tried is incompressible.
        let secondaries = storage.secondaries();
        let outcome = storage.streams().with(|c| -> Result<Recompressed<'_>> {
            c.load_page(st.prio(), &g.map_read(old_size)?)?;
            let mut tried = 0;
            for prio in self.prio.max(st.prio() + 1)..self.prio_max.min(MAX_PRIO) {
                let Some(compressed) = c.compress_loaded(prio) else {
                    continue;
                };
                tried += 1;
                let data = match compressed {
                    Ok(data) => data,
                    Err(e) if e == E2BIG => continue,
                    Err(e) => return Err(e),
                };
                let len = data.len();
                if len >= pool.huge_class_size()
                    || pool.class_index_for(len)? >= old_class
                    || (self.threshold != 0 && len >= self.threshold)
                {
                    continue;
                }
                // Under the slot lock and the stream: no sleeping (zram allocates without
                // direct reclaim here too).
                let obj = pool.alloc(len, GFP_NOWAIT | __GFP_NOWARN)?;
                return Ok(Recompressed::Smaller(obj.write(data)?, len, prio));
            }
            Ok(Recompressed::NotSmaller {
                tried,
                all_tried: secondaries != 0 && tried == secondaries,
            })
        })?;
        let mut tried = 1;
        match outcome {
            Recompressed::Smaller(h, len, prio) => {
                let old = g.take();
                g.replace(Contents::Object(h))?;
                // The access time stays; the idle mark goes, as zram clears it.
                State::stored(len, false).with_prio(prio).set(&mut g);
                t.stats.compr_data_size.sub(old_size as u64);
                t.stats.compr_data_size.add(len as u64);
                if st.is_huge() {
                    t.stats.huge_pages.dec();
                }
                // Freed under the slot lock, as a write frees the old contents.
                drop(old);
            }
            Recompressed::NotSmaller {
                tried: n,
                all_tried,
            } => {
                tried = n;
                let st = st.with_idle(false);
                let st = if all_tried { st.incompressible() } else { st };
                st.set(&mut g);
            }
        }
        Ok(tried != 0)
    }
}

/// What recompressing a page gave.
enum Recompressed<'a> {
    /// A smaller object: the handle, its size and the priority of its algorithm.
    Smaller(Handle<'a>, usize, usize),
    /// Nothing smaller, with `tried` algorithms; `all_tried` if they were every secondary one.
    NotSmaller { tried: usize, all_tried: bool },
}
