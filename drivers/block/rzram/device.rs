// SPDX-License-Identifier: GPL-2.0

//! One rzram device: its state, its block operations and its sysfs attributes.

use crate::{
    io::Storage,
    parse::{algorithm_name, kstrtou16, kstrtoul, memparse},
};
use core::{
    fmt::Write,
    ops::Range,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
};
use kernel::{
    block::bio::{dir, Attribute, Bio, Data, Disk, Op, Operations, Segment},
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
    storage: SpinLock<Option<Arc<Storage>>>,
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
                storage <- new_spinlock!(None, "rzram::storage"),
                config <- new_mutex!(DEFAULT_ALGORITHM, "rzram::config"),
                limit_pages: AtomicU64::new(0),
                claim: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    fn storage(&self) -> Option<Arc<Storage>> {
        self.storage.lock().clone()
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
        let storage = self.storage.lock().take();
        // No I/O holds a reference: the device is claimed, not open, and synced. A sysfs `show`
        // running now may still hold one (it clones the `Arc` to read the statistics); then the
        // memory goes when that `show` returns, and its drop flushes the deferred frees and
        // frees the pool there, in process context.
        drop(storage);
        *alg = DEFAULT_ALGORITHM;
        self.limit_pages.store(0, Ordering::Relaxed);
        disk.set_capacity(0);
    }

    /// Calls `f(segment, offset in the segment, page index, byte range in the page)` for each
    /// part of the bio's data that lies in one page of the device: a segment lies within one
    /// page of memory but may straddle two of the device.
    fn for_each_page<D>(
        data: &mut Data<'_, D>,
        mut f: impl FnMut(&mut Segment<'_, D>, usize, usize, Range<usize>) -> Result,
    ) -> Result {
        data.for_each_segment(|seg| {
            let mut sector = seg.sector();
            let mut done = 0;
            while done < seg.len() {
                let index = (sector / SECTORS_PER_PAGE) as usize;
                let offset = ((sector % SECTORS_PER_PAGE) * 512) as usize;
                let n = (seg.len() - done).min(PAGE_SIZE - offset);
                f(seg, done, index, offset..offset + n)?;
                done += n;
                sector += (n / 512) as u64;
            }
            Ok(())
        })
    }

    /// Reads the bio's data, page by page, through a private page: the bio's memory is reached
    /// only by copies, since others may use it meanwhile (an `O_DIRECT` buffer).
    fn read(storage: &Storage, data: &mut Data<'_, dir::Read>) -> Result {
        let mut page = KVec::from_elem(0u8, PAGE_SIZE, GFP_NOIO)?;
        Self::for_each_page(data, |seg, done, index, part| {
            storage.read_page(index, &mut page)?;
            seg.copy_from_slice(done, &page[part])
        })
    }

    /// Writes the bio's data, page by page, through a private page: what is compressed (and
    /// checked for being same-filled) is a copy that nobody else can change, since others may
    /// write the bio's memory meanwhile (`O_DIRECT` buffers are not covered by stable writes).
    /// Partial pages are read, modified and written back.
    fn write(&self, storage: &Storage, data: &mut Data<'_, dir::Write>) -> Result {
        let limit = self.limit_pages.load(Ordering::Relaxed);
        let mut page = KVec::from_elem(0u8, PAGE_SIZE, GFP_NOIO)?;
        Self::for_each_page(data, |seg, done, index, part| {
            if part.len() < PAGE_SIZE {
                storage.read_page(index, &mut page)?;
            }
            seg.copy_to_slice(done, &mut page[part])?;
            storage.write_page(index, &page, limit)
        })
    }

    /// Discard and write-zeroes: free the pages of the range, which is page-aligned (the
    /// logical block size is a page). Each page counts in `notify_free`, as in zram.
    fn discard(&self, storage: &Storage, sector: u64, size: u32) {
        let first = (sector / SECTORS_PER_PAGE) as usize;
        for index in first..first + size as usize / PAGE_SIZE {
            storage.free_page(index);
            storage.table.stats.notify_free.inc();
        }
    }
}

#[vtable]
impl Operations for Rzram {
    fn submit_bio(&self, mut bio: Bio) {
        let Some(storage) = self.storage() else {
            bio.end(Err(EIO));
            return;
        };
        let (sector, size) = (bio.sector(), bio.size());
        let end = sector + u64::from(size) / 512;
        let misaligned = sector % SECTORS_PER_PAGE != 0 || size as usize % PAGE_SIZE != 0;
        let stats = &storage.table.stats;
        if end > storage.disksize / 512 || misaligned {
            bio.end(Err(EIO));
            return;
        }
        let r = match bio.op() {
            Op::Read(mut data) => {
                Self::read(&storage, &mut data).inspect_err(|_| stats.failed_reads.inc())
            }
            Op::Write(mut data) => self
                .write(&storage, &mut data)
                .inspect_err(|_| stats.failed_writes.inc()),
            Op::Discard | Op::WriteZeroes => {
                self.discard(&storage, sector, size);
                Ok(())
            }
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
        let guard = self.storage.lock();
        let Some(storage) = guard.as_ref() else {
            return;
        };
        storage.table.stats.notify_free.inc();
        if !storage.notify_free(slot) {
            storage.table.stats.miss_free.inc();
        }
    }
}

// The sysfs attributes, with zram's names, modes, formats and errors.

fn disksize_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let size = rz.storage().map_or(0, |m| m.disksize);
    emit(buf, format_args!("{size}\n"))
}

fn disksize_store(rz: &Rzram, d: &Disk, input: &[u8]) -> Result {
    let (size, _) = memparse(input);
    if size == 0 {
        return Err(EINVAL);
    }
    let alg = rz.config.lock();
    if rz.storage.lock().is_some() {
        pr_info!("Cannot change disksize for initialized device\n");
        return Err(EBUSY);
    }
    let size = size
        .checked_next_multiple_of(PAGE_SIZE as u64)
        .ok_or(ENOMEM)?;
    let storage = Storage::new(d.name(), size, *alg)?;
    *rz.storage.lock() = Some(storage);
    d.set_capacity(size / 512);
    Ok(())
}

fn initstate_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    emit(buf, format_args!("{}\n", u32::from(rz.storage().is_some())))
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
    let cur = match rz.storage() {
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
    if rz.storage.lock().is_some() {
        pr_info!("Can't change algorithm for initialized device\n");
        return Err(EBUSY);
    }
    *cfg = alg;
    Ok(())
}

fn mm_stat_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let shift = PAGE_SIZE.trailing_zeros();
    let limit = rz.limit_pages.load(Ordering::Relaxed) << shift;
    let Some(m) = rz.storage() else {
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
    let (r, w, n) = rz.storage().map_or((0, 0, 0), |m| {
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
    let (stall, miss) = rz.storage().map_or((0, 0), |m| {
        let s = &m.table.stats;
        (s.writestall.get(), s.miss_free.get())
    });
    emit(buf, format_args!("version: 1\n{stall:8} {miss:8}\n"))
}

fn compact_store(rz: &Rzram, _d: &Disk, _input: &[u8]) -> Result {
    let _cfg = rz.config.lock();
    let m = rz.storage().ok_or(EINVAL)?;
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
    if let Some(m) = rz.storage() {
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
