// SPDX-License-Identifier: GPL-2.0

//! One rzram device: its state, its block operations and its sysfs attributes.

use crate::{
    io::Meta,
    parse::{algorithm_name, kstrtou16, kstrtoul, memparse},
};
use core::{
    fmt::Write,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
};
use kernel::{
    block::bio::{Attribute, Bio, Disk, Op, Operations},
    c_str,
    compress::Algorithm,
    error::code::*,
    new_mutex, new_spinlock,
    page::PAGE_SIZE,
    percpu::num_online_cpus,
    prelude::*,
    sync::{Arc, Mutex, SpinLock},
    sysfs::SysfsBuf,
};

/// Sectors (512 bytes) per page.
const SECTORS_PER_PAGE: u64 = (PAGE_SIZE / 512) as u64;

/// The algorithm of a new or reset device, as zram's default.
pub(crate) const DEFAULT_ALGORITHM: Algorithm = Algorithm::LzoRle;

/// The state of one device.
#[pin_data]
pub(crate) struct Rzram {
    /// The memory of the initialised device; `None` until `disksize` is written.
    #[pin]
    meta: SpinLock<Option<Arc<Meta>>>,
    /// Serialises configuration (`disksize`, `reset`, `comp_algorithm`, `mem_limit`); holds the
    /// algorithm the next `disksize` will use.
    #[pin]
    config: Mutex<Algorithm>,
    /// The pool limit in pages from `mem_limit`; 0 for none.
    limit_pages: AtomicU64,
    /// Set while a reset or removal is under way: opens fail with `EBUSY`.
    claim: AtomicBool,
}

fn emit(buf: &mut SysfsBuf<'_>, args: core::fmt::Arguments<'_>) -> Result {
    buf.write_fmt(args).map_err(|_| EINVAL)
}

impl Rzram {
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Rzram {
                meta <- new_spinlock!(None, "rzram::meta"),
                config <- new_mutex!(DEFAULT_ALGORITHM, "rzram::config"),
                limit_pages: AtomicU64::new(0),
                claim: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    fn meta(&self) -> Option<Arc<Meta>> {
        self.meta.lock().clone()
    }

    /// Claims the device for a reset or a removal: fails with `EBUSY` if it is open or already
    /// claimed. Opens fail from now until [`unclaim`](Self::unclaim).
    pub(crate) fn claim(&self, disk: &Disk) -> Result {
        if disk.if_unopened(|| self.claim.swap(true, Ordering::AcqRel))? {
            return Err(EBUSY);
        }
        // Whatever the page cache still holds for the device goes out now.
        disk.sync();
        Ok(())
    }

    pub(crate) fn unclaim(&self) {
        self.claim.store(false, Ordering::Release);
    }

    /// Frees the device's memory and statistics and sets its size to 0. The caller has claimed
    /// the device.
    pub(crate) fn reset(&self, disk: &Disk) {
        let mut alg = self.config.lock();
        let meta = self.meta.lock().take();
        // Dropping the last reference flushes the deferred frees, then frees the pool; nothing
        // else holds one: the device is claimed, not open, and synced.
        drop(meta);
        *alg = DEFAULT_ALGORITHM;
        self.limit_pages.store(0, Ordering::Relaxed);
        disk.set_capacity(0);
    }

    /// Reads or writes the part of page `index` at `offset` that `bytes` covers.
    fn rw_chunk(
        meta: &Meta,
        index: usize,
        offset: usize,
        bytes: &mut [u8],
        write: bool,
        limit: u64,
    ) -> Result {
        if offset == 0 && bytes.len() == PAGE_SIZE {
            return if write {
                meta.write_page(index, bytes, limit)
            } else {
                meta.read_page(index, bytes)
            };
        }
        // Partial page: through a bounce page, read-modify-write for writes.
        let mut page = KVec::from_elem(0u8, PAGE_SIZE, GFP_NOIO)?;
        meta.read_page(index, &mut page)?;
        let part = &mut page[offset..offset + bytes.len()];
        if write {
            part.copy_from_slice(bytes);
            meta.write_page(index, &page, limit)
        } else {
            bytes.copy_from_slice(part);
            Ok(())
        }
    }

    fn rw(&self, meta: &Meta, bio: &mut Bio, write: bool) -> Result {
        let limit = self.limit_pages.load(Ordering::Relaxed);
        bio.for_each_segment(|seg| {
            let mut sector = seg.sector();
            seg.with_bytes_mut(|mut bytes| {
                // A segment lies within one page of memory but may straddle two slots.
                while !bytes.is_empty() {
                    let index = (sector / SECTORS_PER_PAGE) as usize;
                    let offset = ((sector % SECTORS_PER_PAGE) * 512) as usize;
                    let n = bytes.len().min(PAGE_SIZE - offset);
                    let (now, rest) = bytes.split_at_mut(n);
                    Self::rw_chunk(meta, index, offset, now, write, limit)?;
                    bytes = rest;
                    sector += (n / 512) as u64;
                }
                Ok(())
            })
        })
    }

    /// Discard and write-zeroes: free the whole pages of the range; for write-zeroes, zero the
    /// partial pages at its ends too.
    fn discard(&self, meta: &Meta, sector: u64, size: u32, zeroes: bool) -> Result {
        let mut index = (sector / SECTORS_PER_PAGE) as usize;
        let mut offset = ((sector % SECTORS_PER_PAGE) * 512) as usize;
        let mut left = size as usize;
        while left > 0 {
            let n = left.min(PAGE_SIZE - offset);
            if n == PAGE_SIZE {
                meta.free_page(index);
            } else if zeroes {
                let mut zero = KVec::from_elem(0u8, n, GFP_NOIO)?;
                Self::rw_chunk(meta, index, offset, &mut zero, true, 0)?;
            }
            left -= n;
            offset = 0;
            index += 1;
        }
        Ok(())
    }
}

#[vtable]
impl Operations for Rzram {
    fn submit_bio(&self, mut bio: Bio) {
        let Some(meta) = self.meta() else {
            bio.end(Err(EIO));
            return;
        };
        let end = bio.sector() + u64::from(bio.size()) / 512;
        let misaligned = bio.sector() % SECTORS_PER_PAGE != 0 || bio.size() % 4096 != 0;
        if end > meta.disksize / 512 || misaligned {
            meta.table.stats.invalid_io.inc();
            bio.end(Err(EIO));
            return;
        }
        let r = match bio.op() {
            Op::Read => {
                let r = self.rw(&meta, &mut bio, false);
                if r.is_err() {
                    meta.table.stats.failed_reads.inc();
                }
                r
            }
            Op::Write => {
                let r = self.rw(&meta, &mut bio, true);
                if r.is_err() {
                    meta.table.stats.failed_writes.inc();
                }
                r
            }
            Op::Discard => self.discard(&meta, bio.sector(), bio.size(), false),
            Op::WriteZeroes => self.discard(&meta, bio.sector(), bio.size(), true),
            Op::Flush => Ok(()),
            Op::Other(_) => Err(EIO),
        };
        bio.end(r);
    }

    fn open(&self) -> Result {
        if self.claim.load(Ordering::Acquire) {
            Err(EBUSY)
        } else {
            Ok(())
        }
    }

    fn swap_slot_free_notify(&self, slot: usize) {
        // Under the spinlock the device cannot be reset, and no reference is dropped in this
        // atomic context.
        let guard = self.meta.lock();
        let Some(meta) = guard.as_ref() else {
            return;
        };
        meta.table.stats.notify_free.inc();
        if !meta.notify_free(slot) {
            meta.table.stats.miss_free.inc();
        }
    }
}

// The sysfs attributes, with zram's names, modes, formats and errors.

fn disksize_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let size = rz.meta().map_or(0, |m| m.disksize);
    emit(buf, format_args!("{size}\n"))
}

fn disksize_store(rz: &Rzram, d: &Disk, input: &[u8]) -> Result {
    let (size, _) = memparse(input);
    if size == 0 {
        return Err(EINVAL);
    }
    let alg = rz.config.lock();
    if rz.meta.lock().is_some() {
        pr_info!("Cannot change disksize for initialized device\n");
        return Err(EBUSY);
    }
    let size = size
        .checked_next_multiple_of(PAGE_SIZE as u64)
        .ok_or(ENOMEM)?;
    let meta = Meta::new(d.name(), size, *alg)?;
    *rz.meta.lock() = Some(meta);
    d.set_capacity(size / 512);
    Ok(())
}

fn initstate_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    emit(buf, format_args!("{}\n", u32::from(rz.meta().is_some())))
}

fn reset_store(rz: &Rzram, d: &Disk, input: &[u8]) -> Result {
    if kstrtou16(input)? == 0 {
        return Err(EINVAL);
    }
    rz.claim(d)?;
    rz.reset(d);
    rz.unclaim();
    Ok(())
}

fn comp_algorithm_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let cur = match rz.meta() {
        Some(m) => m.alg,
        None => *rz.config.lock(),
    };
    for a in Algorithm::ALL {
        if a == cur {
            emit(buf, format_args!("[{}] ", a.name()))?;
        } else {
            emit(buf, format_args!("{} ", a.name()))?;
        }
    }
    emit(buf, format_args!("\n"))
}

fn comp_algorithm_store(rz: &Rzram, _d: &Disk, input: &[u8]) -> Result {
    let name = algorithm_name(input)?;
    let alg = core::str::from_utf8(name)
        .ok()
        .and_then(Algorithm::from_name)
        .ok_or(EINVAL)?;
    let mut cfg = rz.config.lock();
    if rz.meta.lock().is_some() {
        pr_info!("Can't change algorithm for initialized device\n");
        return Err(EBUSY);
    }
    *cfg = alg;
    Ok(())
}

fn mm_stat_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let shift = PAGE_SIZE.trailing_zeros();
    let limit = rz.limit_pages.load(Ordering::Relaxed) << shift;
    let Some(m) = rz.meta() else {
        return emit(
            buf,
            format_args!(
                "{:8} {:8} {:8} {:8} {:8} {:8} {:8} {:8} {:8}\n",
                0, 0, 0, limit, 0, 0, 0, 0, 0
            ),
        );
    };
    let s = &m.table.stats;
    let pool = &m.table.pool;
    emit(
        buf,
        format_args!(
            "{:8} {:8} {:8} {:8} {:8} {:8} {:8} {:8} {:8}\n",
            s.pages_stored.get() << shift,
            s.compr_data_size.get(),
            (pool.total_pages() as u64) << shift,
            limit,
            s.max_used_pages.get() << shift,
            s.same_pages.get(),
            pool.stats().pages_compacted,
            s.huge_pages.get(),
            s.huge_pages_since.get()
        ),
    )
}

fn io_stat_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let (r, w, n) = rz.meta().map_or((0, 0, 0), |m| {
        let s = &m.table.stats;
        (
            s.failed_reads.get(),
            s.failed_writes.get(),
            s.notify_free.get(),
        )
    });
    emit(buf, format_args!("{r:8} {w:8} 0 {n:8}\n"))
}

fn debug_stat_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let (stall, miss) = rz.meta().map_or((0, 0), |m| {
        let s = &m.table.stats;
        (s.writestall.get(), s.miss_free.get())
    });
    emit(buf, format_args!("version: 1\n{stall:8} {miss:8}\n"))
}

fn compact_store(rz: &Rzram, _d: &Disk, _input: &[u8]) -> Result {
    let _cfg = rz.config.lock();
    let m = rz.meta().ok_or(EINVAL)?;
    m.table.pool.compact();
    Ok(())
}

fn mem_limit_store(rz: &Rzram, _d: &Disk, input: &[u8]) -> Result {
    let (limit, parsed) = memparse(input);
    if !parsed {
        return Err(EINVAL);
    }
    let _cfg = rz.config.lock();
    let pages = limit.div_ceil(PAGE_SIZE as u64);
    rz.limit_pages.store(pages, Ordering::Relaxed);
    Ok(())
}

fn mem_used_max_store(rz: &Rzram, _d: &Disk, input: &[u8]) -> Result {
    match kstrtoul(input) {
        Ok(0) => {}
        _ => return Err(EINVAL),
    }
    let _cfg = rz.config.lock();
    if let Some(m) = rz.meta() {
        m.table
            .stats
            .max_used_pages
            .set(m.table.pool.total_pages() as u64);
    }
    Ok(())
}

fn max_comp_streams_show(_rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    emit(buf, format_args!("{}\n", num_online_cpus()))
}

fn max_comp_streams_store(_rz: &Rzram, _d: &Disk, _input: &[u8]) -> Result {
    // Accepted and ignored, as by zram since streams became per-CPU.
    Ok(())
}

/// The attributes in `/sys/block/<disk>/`.
pub(crate) static ATTRS: [Attribute<Rzram>; 12] = [
    Attribute::wo(c_str!("compact"), compact_store),
    Attribute::rw(c_str!("disksize"), disksize_show, disksize_store),
    Attribute::ro(c_str!("initstate"), initstate_show),
    Attribute::wo(c_str!("reset"), reset_store),
    Attribute::wo(c_str!("mem_limit"), mem_limit_store),
    Attribute::wo(c_str!("mem_used_max"), mem_used_max_store),
    Attribute::rw(
        c_str!("max_comp_streams"),
        max_comp_streams_show,
        max_comp_streams_store,
    ),
    Attribute::rw(
        c_str!("comp_algorithm"),
        comp_algorithm_show,
        comp_algorithm_store,
    ),
    Attribute::ro(c_str!("io_stat"), io_stat_show),
    Attribute::ro(c_str!("mm_stat"), mm_stat_show),
    Attribute::ro(c_str!("debug_stat"), debug_stat_show),
    Attribute::ro(c_str!("slot_bytes"), slot_bytes_show),
];

/// rzram's own, read-only: the bytes of metadata per page of the disk (the slot size).
fn slot_bytes_show(_rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    emit(
        buf,
        format_args!("{}\n", core::mem::size_of::<crate::slots::Slot>()),
    )
}
