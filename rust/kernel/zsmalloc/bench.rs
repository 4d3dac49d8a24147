// SPDX-License-Identifier: GPL-2.0

//! The binding's cost, as a KUnit case (`CONFIG_RUST_ZSMALLOC_BENCH`, built by `make bench`):
//! allocate, write and free through [`Pool`] against the same C calls made directly.

#[macros::kunit_tests(rust_zsmalloc_bench)]
mod cases {
    use super::super::*;
    use crate::{
        alloc::{flags::*, KVec},
        bindings, c_str,
        error::{code::*, from_err_ptr, Result},
        ffi::c_void,
    };

    const SIZES: [usize; 8] = [64, 200, 512, 700, 1500, 2400, 3000, 4096];
    const CYCLES: usize = 20_000;
    const ROUNDS: usize = 7;

    fn now() -> i64 {
        // SAFETY: FFI call without preconditions.
        unsafe { bindings::ktime_get() }
    }

    /// Through the binding: the write also zeroes the object's tail up to its class capacity.
    fn through_binding(pool: &Pool, data: &[u8]) -> Result<i64> {
        let start = now();
        for i in 0..CYCLES {
            let size = SIZES[i % SIZES.len()].min(data.len());
            let h = pool.alloc(size, GFP_KERNEL)?.write(&data[..size])?;
            drop(h);
        }
        Ok(now() - start)
    }

    fn through_c(pool: &Pool, data: &[u8]) -> Result<i64> {
        let gfp = GFP_KERNEL.as_raw() | bindings::__GFP_HIGHMEM | bindings::__GFP_MOVABLE;
        let start = now();
        for i in 0..CYCLES {
            let size = SIZES[i % SIZES.len()].min(data.len());
            // SAFETY: the pool is valid; each handle is mapped once, unmapped and freed once,
            // as zsmalloc requires, with nothing else mapped on this CPU; `size` bytes fit the
            // object and `data`.
            unsafe {
                let h = bindings::zs_malloc(pool.raw(), size, gfp);
                if h == 0 || from_err_ptr(h as *mut c_void).is_err() {
                    return Err(ENOMEM);
                }
                let p = bindings::zs_map_object(pool.raw(), h, MODE_WRITE);
                core::ptr::copy_nonoverlapping(data.as_ptr(), p.cast::<u8>(), size);
                bindings::zs_unmap_object(pool.raw(), h);
                bindings::zs_free(pool.raw(), h);
            }
        }
        Ok(now() - start)
    }

    fn median(v: &mut [i64]) -> i64 {
        v.sort_unstable();
        v[v.len() / 2]
    }

    #[test]
    fn binding_vs_c() -> Result {
        let pool = Pool::new(c_str!("rust_zs_bench"))?;
        let data = KVec::from_elem(0x5au8, MAX_ALLOC_SIZE, GFP_KERNEL)?;
        // Warm the pool's classes up so that both variants reuse pages.
        through_c(&pool, &data)?;
        let mut rust = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
        let mut c = KVec::with_capacity(ROUNDS, GFP_KERNEL)?;
        for _ in 0..ROUNDS {
            c.push(through_c(&pool, &data)?, GFP_KERNEL)?;
            rust.push(through_binding(&pool, &data)?, GFP_KERNEL)?;
        }
        let (r, c) = (median(&mut rust), median(&mut c));
        let n = CYCLES as i64;
        crate::pr_info!(
            "zsmalloc bench: cycles={} rounds={} binding_ns={} c_ns={} ratio_permille={}\n",
            CYCLES,
            ROUNDS,
            r / n,
            c / n,
            r * 1000 / c.max(1)
        );
        Ok(())
    }
}
