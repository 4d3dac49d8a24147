// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of a device's storage (`storage.rs`): reads and writes through the streams, the
//! memory limit, algorithm parameters, idle marking and the swap notify, on storage made as
//! `disksize` makes it.

use kernel::{page::PAGE_SIZE, prelude::*};

/// A page of `f(i)` at each offset `i`.
pub(crate) fn page(mut f: impl FnMut(usize) -> u8) -> Result<KVec<u8>> {
    let mut v = KVec::with_capacity(PAGE_SIZE, GFP_KERNEL)?;
    for i in 0..PAGE_SIZE {
        v.push(f(i), GFP_KERNEL)?;
    }
    Ok(v)
}

/// A page of pseudo-random bytes, which no algorithm compresses.
pub(crate) fn random_page() -> Result<KVec<u8>> {
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

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kernel::prelude::kunit_tests(rzram_storage)]
mod tests {
    use super::{page, random_page};
    use crate::{
        config::Config,
        state,
        storage::{ReadOutcome, Storage, WriteOutcome},
    };
    use kernel::{c_str, compress::Params, kunit_expect, kunit_expect_eq};
    use kernel::{
        compress::Algorithm,
        io_buf::{Sink, Source},
        page::PAGE_SIZE,
        prelude::*,
    };

    #[test]
    fn same_fill_detection() -> Result {
        let same = |p: &KVec<u8>| Source::from(p).same_filled();
        kunit_expect_eq!(same(&page(|_| 0)?), Some(0));
        let w = usize::from_ne_bytes([0xab; core::mem::size_of::<usize>()]);
        kunit_expect_eq!(same(&page(|_| 0xab)?), Some(w));
        // A repeated word that is not a repeated byte.
        let p = page(|i| (i % core::mem::size_of::<usize>()) as u8)?;
        kunit_expect!(same(&p).is_some());
        // One byte off anywhere: the first word, the last, or a word of each unrolled round.
        for at in [
            0,
            1,
            8,
            17,
            26,
            35,
            PAGE_SIZE / 2,
            PAGE_SIZE - 9,
            PAGE_SIZE - 1,
        ] {
            let p = page(|i| u8::from(i == at))?;
            kunit_expect_eq!(same(&p), None);
        }
        let mut out = page(|_| 1)?;
        Sink::from(&mut out).fill_word(w);
        kunit_expect!(out.iter().all(|&b| b == 0xab));
        // A word that is not one byte repeated.
        let w = usize::from_ne_bytes(core::array::from_fn(|i| i as u8 + 1));
        Sink::from(&mut out).fill_word(w);
        kunit_expect_eq!(same(&out), Some(w));
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
            let storage = Storage::new(c_str!("rzram_kunit"), 16 * PAGE_SIZE as u64, alg)?;
            let mut out = page(|_| 0x55)?;
            // A never-written page reads as zeroes.
            storage.read_page(5, &mut out)?;
            assert!(out.iter().all(|&b| b == 0));
            for (i, p) in pages.iter().enumerate() {
                storage.write_page(i, p, 0)?;
            }
            for (i, p) in pages.iter().enumerate() {
                storage.read_page(i, &mut out)?;
                assert!(out == *p);
            }
            let s = &storage.stats();
            assert_eq!(s.pages_stored.get(), 4);
            assert_eq!(s.same_pages.get(), 1);
            assert_eq!(s.huge_pages.get(), 1);
            // Overwrite and free: the accounting follows.
            storage.write_page(0, &pages[2], 0)?;
            assert_eq!(s.same_pages.get(), 2);
            for i in 0..4 {
                storage.free_page(i);
            }
            assert_eq!(s.pages_stored.get(), 0);
            assert_eq!(s.compr_data_size.get(), 0);
            assert_eq!(storage.pool().total_pages(), 0);
        }
        Ok(())
    }

    /// A write the memory limit refuses leaves the slot as it was and the pool as before, but
    /// counts in the peak (`mem_used_max`), as zram's: the pool held the new object when the
    /// limit was checked.
    #[test]
    fn memory_limit_refusal() -> Result {
        let storage = Storage::new(
            c_str!("rzram_kunit"),
            8 * PAGE_SIZE as u64,
            Algorithm::LzoRle,
        )?;
        let (a, b) = (random_page()?, page(|i| (i * 7) as u8 ^ 0x5a)?);
        // A huge page takes a pool page of its own: the first fits a limit of one page.
        storage.write_page(0, &a, 1)?;
        let s = &storage.stats();
        assert_eq!(s.max_used_pages.get(), 1);
        assert_eq!(storage.write_page(1, &random_page()?, 1), Err(ENOMEM));
        assert_eq!(s.max_used_pages.get(), 2);
        assert_eq!(storage.pool().total_pages(), 1);
        assert_eq!(s.pages_stored.get(), 1);
        // Nothing stored was lost, and a refused overwrite keeps the old page.
        storage.write_page(1, &b, 0)?;
        assert_eq!(storage.write_page(1, &random_page()?, 1), Err(ENOMEM));
        let mut out = page(|_| 0)?;
        storage.read_page(0, &mut out)?;
        assert!(out == a);
        storage.read_page(1, &mut out)?;
        assert!(out == b);
        Ok(())
    }

    /// What is not a page is refused, and past the end is an I/O error, before anything is
    /// stored: the slots keep their contents.
    #[test]
    fn bad_requests() -> Result {
        let storage = Storage::new(
            c_str!("rzram_kunit"),
            8 * PAGE_SIZE as u64,
            Algorithm::LzoRle,
        )?;
        let p = page(|i| (i / 64) as u8)?;
        storage.write_page(0, &p, 0)?;
        assert_eq!(storage.write_page(0, &p[..100], 0), Err(EINVAL));
        assert_eq!(storage.write_page(8, &p, 0), Err(EIO));
        let mut out = page(|_| 0)?;
        assert_eq!(storage.read_page(0, &mut out[..100]), Err(EINVAL));
        assert_eq!(storage.read_page(8, &mut out), Err(EIO));
        storage.read_page(0, &mut out)?;
        assert!(out == p);
        assert_eq!(storage.stats().pages_stored.get(), 1);
        Ok(())
    }

    /// The no-sleep forms (a bio's, in an RCU read-side critical section) store and read what
    /// the sleeping ones do; after a stall the page is stored as written, counted, and a huge
    /// page stored whole.
    #[test]
    fn no_sleep_and_stalled_paths() -> Result {
        let pages = [
            page(|i| (i / 64) as u8)?, // compressible
            random_page()?,            // incompressible: stored whole
            page(|_| 0x3c)?,           // same-filled
        ];
        let storage = Storage::new(
            c_str!("rzram_kunit"),
            8 * PAGE_SIZE as u64,
            Algorithm::LzoRle,
        )?;
        for (i, p) in pages.iter().enumerate() {
            assert_eq!(
                storage.try_write_page(i, Source::from(p), 0)?,
                WriteOutcome::Done
            );
        }
        let mut out = page(|_| 0)?;
        for (i, p) in pages.iter().enumerate() {
            assert_eq!(
                storage.try_read_page(i, Sink::from(&mut out))?,
                ReadOutcome::Done
            );
            assert!(out == *p);
        }
        let s = &storage.stats();
        assert_eq!(s.pages_stored.get(), 3);
        assert_eq!(s.same_pages.get(), 1);
        assert_eq!(s.huge_pages.get(), 1);
        assert_eq!(s.writestall.get(), 0);
        // After a stall: compressed again into the object (here too small: allocated again).
        storage.write_page_stalled(3, Source::from(&pages[0]), 0, 100)?;
        // Huge the first time: stored whole, without compressing again.
        storage.write_page_stalled(4, Source::from(&pages[1]), 0, PAGE_SIZE)?;
        assert_eq!(s.writestall.get(), 2);
        assert_eq!(s.huge_pages.get(), 2);
        for (i, p) in [(3, &pages[0]), (4, &pages[1])] {
            storage.read_page(i, &mut out)?;
            assert!(out == *p);
        }
        // Not a page: refused.
        assert_eq!(
            storage.try_write_page(0, Source::from(&pages[0][..100]), 0),
            Err(EINVAL)
        );
        assert_eq!(
            storage.try_read_page(0, Sink::from(&mut out[..100])),
            Err(EINVAL)
        );
        Ok(())
    }

    /// A configuration with `alg` as the primary algorithm, with `params`.
    fn config(alg: Algorithm, params: Params) -> Config {
        let mut cfg = Config::default();
        let _ = cfg.set_algorithm(0, alg);
        let _ = cfg.set_params(0, params);
        cfg
    }

    /// `algorithm_params` reach the streams: every algorithm round-trips with a level, deflate
    /// with another window, and a window deflate refuses fails the initialisation.
    #[test]
    fn algorithm_params_apply() -> Result {
        let data = page(|i| (i / 32) as u8 ^ (i % 7) as u8)?;
        let mut out = page(|_| 0)?;
        for alg in Algorithm::ALL {
            for params in [
                Params {
                    level: Some(1),
                    ..Params::default()
                },
                Params {
                    level: Some(9),
                    deflate_winbits: Some(9),
                },
            ] {
                let name = c_str!("rzram_kunit");
                let cfg = config(alg, params);
                let storage = Storage::with_config(name, 4 * PAGE_SIZE as u64, &cfg)?;
                storage.write_page(0, &data, 0)?;
                storage.read_page(0, &mut out)?;
                assert!(out == data);
            }
        }
        let bad = Params {
            deflate_winbits: Some(16),
            ..Params::default()
        };
        let name = c_str!("rzram_kunit");
        let cfg = config(Algorithm::Deflate, bad);
        let r = Storage::with_config(name, 4 * PAGE_SIZE as u64, &cfg);
        assert_eq!(r.err(), Some(EINVAL));
        Ok(())
    }

    #[test]
    fn idle_marking_and_access_times() -> Result {
        let storage = Storage::new(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, Algorithm::Lz4)?;
        let data = page(|i| (i / 32) as u8)?;
        for i in 0..3 {
            storage.write_page(i, &data, 0)?;
        }
        // Same-filled and empty slots are never idle.
        storage.write_page(3, &page(|_| 9)?, 0)?;
        let state = |i| storage.table().state(i).ok_or(EINVAL);
        let now = i64::from(state::now_secs());
        let at =
            |i| -> Result<u32> { Ok(state::access_time(&storage.table().lock(i).ok_or(EINVAL)?)) };
        if cfg!(CONFIG_RZRAM_TRACK_ENTRY_ACTIME) {
            assert!(i64::from(at(0)?) <= now && i64::from(at(0)?) >= now - 1);
        } else {
            // No access time without the option: nothing reads the clock.
            assert_eq!(at(0)?, 0);
        }
        // "all".
        storage.table().mark_idle(i64::MAX);
        for i in 0..3 {
            assert!(state(i)?.is_idle());
        }
        assert!(!state(3)?.is_idle() && !state(4)?.is_idle());
        // A read and a write clear the mark; the size and flags stay.
        let mut out = page(|_| 0)?;
        storage.read_page(0, &mut out)?;
        assert!(out == data);
        storage.write_page(1, &data, 0)?;
        assert!(!state(0)?.is_idle() && !state(1)?.is_idle() && state(2)?.is_idle());
        assert_eq!(state(0)?.size(), state(2)?.size());
        // An age older than every access (every access time is at least 0) marks nothing and
        // clears the marks.
        storage.table().mark_idle(-1);
        for i in 0..4 {
            assert!(!state(i)?.is_idle());
        }
        // A cutoff at the access time marks the page (accessed at or before it).
        storage.table().mark_idle(i64::from(at(2)?));
        assert!(state(2)?.is_idle());
        // Freeing clears the access time.
        storage.free_page(2);
        assert_eq!(at(2)?, 0);
        assert!(!state(2)?.is_idle());
        Ok(())
    }

    #[test]
    fn notify_free_then_write() -> Result {
        let storage = Storage::new(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, Algorithm::Lz4)?;
        let a = page(|i| (i / 32) as u8)?;
        let b = page(|i| (i / 16) as u8)?;
        storage.write_page(1, &a, 0)?;
        storage.notify_free(1);
        // A write after the notify and before the drain must survive the drain.
        storage.write_page(1, &b, 0)?;
        storage.swap_frees().deferred().flush();
        let mut out = page(|_| 0)?;
        storage.read_page(1, &mut out)?;
        assert!(out == b);
        // Without a write the drain frees the slot.
        storage.notify_free(1);
        storage.swap_frees().deferred().flush();
        assert_eq!(storage.stats().pages_stored.get(), 0);
        storage.read_page(1, &mut out)?;
        assert!(out.iter().all(|&b| b == 0));
        // Both notifies count: the first when the write cleared its bit, the second when the
        // drain did.
        assert_eq!(storage.stats().notify_free.get(), 2);
        storage.notify_free(1);
        storage.swap_frees().deferred().flush();
        assert_eq!(storage.stats().notify_free.get(), 3);
        Ok(())
    }

    #[test]
    fn notify_free_same_held_and_out_of_range() -> Result {
        let storage = Storage::new(c_str!("rzram_kunit"), 8 * PAGE_SIZE as u64, Algorithm::Lz4)?;
        let s = &storage.stats();
        // A same-filled page is queued and emptied by the drain, like any other.
        storage.write_page(2, &page(|_| 0x11)?, 0)?;
        assert_eq!(s.same_pages.get(), 1);
        storage.notify_free(2);
        storage.swap_frees().deferred().flush();
        assert_eq!(s.same_pages.get(), 0);
        assert_eq!(s.pages_stored.get(), 0);
        assert_eq!(storage.swap_frees().deferred().stats().pushed, 1);
        let mut out = page(|_| 0x55)?;
        storage.read_page(2, &mut out)?;
        assert!(out.iter().all(|&b| b == 0));
        // A notify while the slot is held (as by a reader) takes no lock: the page is freed by
        // the drain, after the holder is done. (The push is the queue's second: a new queue has
        // spare pages, so it cannot fall back to draining inline, which would wait for the
        // lock held here.)
        storage.write_page(3, &page(|i| (i / 32) as u8)?, 0)?;
        {
            let held = storage.table().lock(3).ok_or(EINVAL)?;
            storage.notify_free(3);
            assert!(held.has_object());
        }
        storage.swap_frees().deferred().flush();
        assert_eq!(s.pages_stored.get(), 0);
        // An index past the bitmap has nothing to free and queues nothing; one past the last
        // slot but in the last word is queued, and the drain finds nothing to free.
        storage.notify_free(32);
        assert_eq!(storage.swap_frees().deferred().stats().pushed, 2);
        storage.notify_free(8);
        storage.swap_frees().deferred().flush();
        assert_eq!(storage.swap_frees().deferred().stats().pushed, 3);
        assert_eq!(storage.stats().notify_free.get(), 4);
        Ok(())
    }
}
