// SPDX-License-Identifier: GPL-2.0

//! Rust zsmalloc sample: stores objects of varied sizes in a pool, reads them back, frees some,
//! compacts the pool and prints its statistics.

use kernel::{
    c_str,
    prelude::*,
    zsmalloc::{Handle, Pool, MAX_ALLOC_SIZE},
};

module! {
    type: RustZsmalloc,
    name: "rust_zsmalloc",
    author: "rzram developers",
    description: "Rust zsmalloc sample",
    license: "GPL",
}

const OBJECTS: usize = 600;

struct Object {
    handle: Handle,
    len: usize,
    seed: usize,
}

struct RustZsmalloc {
    pool: Pool,
    objects: KVec<Object>,
}

/// Object `i` is between 16 bytes and a full page long.
fn len_of(i: usize) -> usize {
    16 + (i * 997) % (MAX_ALLOC_SIZE - 15)
}

fn byte(seed: usize, i: usize) -> u8 {
    (seed ^ (i * 13) ^ (i >> 7)) as u8
}

fn store(pool: &Pool, i: usize) -> Result<Object> {
    let len = len_of(i);
    let mut handle = pool.alloc(len, GFP_KERNEL)?;
    for (j, b) in pool.map_write(&mut handle, len)?.iter_mut().enumerate() {
        *b = byte(i, j);
    }
    Ok(Object {
        handle,
        len,
        seed: i,
    })
}

fn intact(pool: &Pool, o: &Object) -> Result<bool> {
    let data = pool.map_read(&o.handle, o.len)?;
    Ok(data.iter().enumerate().all(|(j, &b)| b == byte(o.seed, j)))
}

fn count_intact(pool: &Pool, objects: &[Object]) -> Result<usize> {
    let mut n = 0;
    for o in objects {
        if intact(pool, o)? {
            n += 1;
        }
    }
    Ok(n)
}

impl kernel::Module for RustZsmalloc {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let pool = Pool::new(c_str!("rust_zsmalloc_sample"))?;
        let mut objects = KVec::with_capacity(OBJECTS, GFP_KERNEL)?;
        let mut bytes = 0;
        for i in 0..OBJECTS {
            let o = store(&pool, i)?;
            bytes += o.len;
            objects.push(o, GFP_KERNEL)?;
        }
        pr_info!(
            "stored {} objects ({} bytes) in {} pages; huge class from {} bytes\n",
            OBJECTS,
            bytes,
            pool.total_pages(),
            pool.huge_class_size()
        );
        pr_info!(
            "verified {} of {} objects\n",
            count_intact(&pool, &objects)?,
            objects.len()
        );

        // Free two objects of every three, then compact what that left sparse.
        let mut kept = KVec::with_capacity(OBJECTS / 3 + 1, GFP_KERNEL)?;
        for (i, o) in IntoIterator::into_iter(objects).enumerate() {
            if i % 3 == 0 {
                kept.push(o, GFP_KERNEL)?;
            } else {
                pool.free(o.handle);
            }
        }
        let before = pool.total_pages();
        let freed = pool.compact();
        pr_info!(
            "kept {} objects: {} pages before compaction, {} freed by it, {} now; pages_compacted {}\n",
            kept.len(),
            before,
            freed,
            pool.total_pages(),
            pool.stats().pages_compacted
        );
        pr_info!(
            "verified {} of {} objects after compaction\n",
            count_intact(&pool, &kept)?,
            kept.len()
        );
        Ok(RustZsmalloc {
            pool,
            objects: kept,
        })
    }
}

impl Drop for RustZsmalloc {
    fn drop(&mut self) {
        let objects = core::mem::take(&mut self.objects);
        for o in objects {
            self.pool.free(o.handle);
        }
        pr_info!("freed everything; {} pages left\n", self.pool.total_pages());
    }
}
