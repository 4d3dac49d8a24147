// SPDX-License-Identifier: GPL-2.0

//! The candidates of post-processing (`recompress`, `writeback`): the pages of a slot table in
//! buckets by size, as zram since 6.13, so that the largest go first.

use crate::{slots::Table, state::State};
use core::ops::Range;
use kernel::{page::PAGE_SIZE, prelude::*};

/// The size range of a bucket of candidates.
pub(crate) const BUCKET_BYTES: usize = 64;

/// The post-processing candidates among the slots of table `t` in `ranges`: those whose state
/// satisfies `eligible` and that hold a page of some size, in buckets of 64 bytes by size, as
/// zram since 6.13 (the last bucket has the largest pages), each bucket in index order. A slot
/// is a candidate once, however many ranges hold it: an operation visits each page once, so a
/// mark it leaves on a page (`UNDER_WB`) is its own. The states are snapshots: each candidate is
/// checked again under its lock.
pub(crate) fn candidates(
    t: &Table,
    ranges: &[Range<usize>],
    eligible: impl Fn(State) -> bool,
) -> Result<KVec<KVec<u32>>> {
    let mut buckets = KVec::new();
    for _ in 0..=PAGE_SIZE / BUCKET_BYTES {
        buckets.push(KVec::<u32>::new(), GFP_KERNEL)?;
    }
    let mut seen = KVVec::from_elem(0u64, t.pages().div_ceil(64), GFP_KERNEL)?;
    for r in ranges {
        for index in r.clone() {
            let Some(st) = t.state(index) else {
                break;
            };
            let Some(w) = seen.get_mut(index / 64) else {
                break;
            };
            let bit = 1u64 << (index % 64);
            if *w & bit != 0 {
                continue;
            }
            *w |= bit;
            if st.size() != 0 && eligible(st) {
                if let Some(b) = buckets.get_mut(st.size() / BUCKET_BYTES) {
                    // Slot indices fit in `u32` (`Storage::with_config`).
                    b.push(index as u32, GFP_KERNEL)?;
                }
            }
        }
    }
    Ok(buckets)
}
