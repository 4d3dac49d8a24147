// SPDX-License-Identifier: GPL-2.0

//! Rust zsmalloc sample: stores objects of varied sizes in the slots of a table, reads them back,
//! frees some, compacts the pool and prints its statistics.

use kernel::{
    c_str,
    prelude::*,
    sync::Arc,
    zsmalloc::{Contents, Pool, Table, MAX_ALLOC_SIZE},
};

module! {
    type: RustZsmalloc,
    name: "rust_zsmalloc",
    author: "rzram developers",
    description: "Rust zsmalloc sample",
    license: "GPL",
}

const OBJECTS: usize = 600;

/// The module keeps its objects in a table, which owns the pool; slot `i` holds object `i`, and
/// its caller bits hold the object's length.
struct RustZsmalloc {
    pool: Arc<Pool>,
    table: Option<Table>,
}

/// Object `i` is between 16 bytes and a full page long.
fn len_of(i: usize) -> usize {
    16 + (i * 997) % (MAX_ALLOC_SIZE - 15)
}

fn byte(seed: usize, i: usize) -> u8 {
    (seed ^ (i * 13) ^ (i >> 7)) as u8
}

/// Stores object `i` in slot `i`, through `buf` (a page); returns its length.
fn store(table: &Table, buf: &mut [u8], i: usize) -> Result<usize> {
    let len = len_of(i);
    let data = buf.get_mut(..len).ok_or(EINVAL)?;
    for (j, b) in data.iter_mut().enumerate() {
        *b = byte(i, j);
    }
    // Allocate and write first: the slot lock disables preemption, and allocation may sleep.
    let handle = table.pool().alloc(len, GFP_KERNEL)?.write(data)?;
    let mut slot = table.lock(i).ok_or(EINVAL)?;
    slot.replace(Contents::Object(handle))?;
    slot.set_bits(len as u32);
    Ok(len)
}

/// Whether slot `i` holds object `i`, intact.
fn intact(table: &Table, i: usize) -> Result<bool> {
    let slot = table.lock(i).ok_or(EINVAL)?;
    let len = slot.bits() as usize;
    let data = slot.map_read(len)?;
    Ok(data.iter().enumerate().all(|(j, &b)| b == byte(i, j)))
}

/// Counts the intact objects among the slots that hold one.
fn count_intact(table: &Table) -> Result<(usize, usize)> {
    let (mut ok, mut all) = (0, 0);
    for i in 0..table.len() {
        if table.lock(i).is_some_and(|s| s.has_object()) {
            all += 1;
            if intact(table, i)? {
                ok += 1;
            }
        }
    }
    Ok((ok, all))
}

impl kernel::Module for RustZsmalloc {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let pool = Arc::new(Pool::new(c_str!("rust_zsmalloc_sample"))?, GFP_KERNEL)?;
        let table = Table::new(pool.clone(), OBJECTS)?;
        let mut buf = KVec::from_elem(0u8, MAX_ALLOC_SIZE, GFP_KERNEL)?;
        let mut bytes = 0;
        for i in 0..OBJECTS {
            bytes += store(&table, &mut buf, i)?;
        }
        pr_info!(
            "stored {} objects ({} bytes) in {} pages; huge class from {} bytes\n",
            OBJECTS,
            bytes,
            pool.total_pages(),
            pool.huge_class_size()
        );
        let (ok, all) = count_intact(&table)?;
        pr_info!("verified {} of {} objects\n", ok, all);

        // Free two objects of every three, then compact what that left sparse.
        for i in (0..OBJECTS).filter(|i| i % 3 != 0) {
            if let Some(mut slot) = table.lock(i) {
                // Dropping the object frees it.
                drop(slot.take());
                slot.set_bits(0);
            }
        }
        let before = pool.total_pages();
        let freed = pool.compact();
        let (ok, all) = count_intact(&table)?;
        pr_info!(
            "kept {} objects: {} pages before compaction, {} freed by it, {} now; \
             pages_compacted {}\n",
            all,
            before,
            freed,
            pool.total_pages(),
            pool.stats().pages_compacted
        );
        pr_info!("verified {} of {} objects after compaction\n", ok, all);
        Ok(RustZsmalloc {
            pool,
            table: Some(table),
        })
    }
}

impl Drop for RustZsmalloc {
    fn drop(&mut self) {
        // Dropping the table frees every object it holds.
        drop(self.table.take());
        pr_info!(
            "freed everything; {} objects and {} pages left\n",
            self.pool.live_objects(),
            self.pool.total_pages()
        );
    }
}
