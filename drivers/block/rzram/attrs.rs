// SPDX-License-Identifier: GPL-2.0

//! The device's sysfs attributes, in `/sys/block/<disk>/`, with zram's names, modes, formats and
//! errors. Each is a thin wrapper: parsers are in `parse.rs`, the device's state and lifecycle in
//! `device.rs`.

use crate::{
    device::Rzram,
    parse::{
        algorithm_name, algorithm_params, kstrtou16, kstrtoul, kstrtoull_base, memparse,
        sysfs_streq,
    },
    slots,
    storage::Storage,
};
use core::{fmt::Write, sync::atomic::Ordering};
use kernel::{
    block::bio::{Disk, GenDisk},
    c_str,
    compress::{Algorithm, Params},
    cpu::num_online_cpus,
    error::code::*,
    page::PAGE_SIZE,
    prelude::*,
    sysfs::{Attribute, SysfsBuf},
};

fn emit(buf: &mut SysfsBuf<'_>, args: core::fmt::Arguments<'_>) -> Result {
    buf.write_fmt(args).map_err(|_| EINVAL)
}

fn disksize_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let size = rz.storage().map_or(0, |m| m.disksize);
    emit(buf, format_args!("{size}\n"))
}

fn disksize_store(rz: &Rzram, d: &Disk, input: &[u8]) -> Result {
    let (size, _) = memparse(input);
    if size == 0 {
        return Err(EINVAL);
    }
    let cfg = rz.config.lock();
    if rz.storage.lock().is_some() {
        pr_info!("Cannot change disksize for initialized device\n");
        return Err(EBUSY);
    }
    let size = size
        .checked_next_multiple_of(PAGE_SIZE as u64)
        .ok_or(ENOMEM)?;
    let storage = Storage::with_params(d.name(), size, cfg.alg, &cfg.params)?;
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
        None => rz.config.lock().alg,
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
    cfg.alg = alg;
    Ok(())
}

/// `algorithm_params`: `key=value` pairs for the primary algorithm, applied by the next
/// `disksize`: `level=`, `deflate.winbits=`, and `algo=` or `priority=` to choose the algorithm
/// (the primary one: rzram has no secondary algorithms yet). As zram since 6.16: `EINVAL` for an
/// unknown, repeated, empty or missing key and for an algorithm or priority that is not
/// configured, `EBUSY` once initialised. `dict=` (a dictionary file) is refused with `EINVAL`,
/// zram's errno for a dictionary it cannot load: rzram does not load dictionaries yet.
fn algorithm_params_store(rz: &Rzram, _d: &Disk, input: &[u8]) -> Result {
    let p = algorithm_params(input)?;
    let mut cfg = rz.config.lock();
    if rz.storage.lock().is_some() {
        return Err(EBUSY);
    }
    if p.priority.is_some_and(|prio| prio != 0) {
        return Err(EINVAL);
    }
    if p.algo.is_some_and(|a| a != cfg.alg.name().as_bytes()) {
        return Err(EINVAL);
    }
    if p.dict.is_some() {
        // zram's errno for a dictionary it cannot load.
        pr_info!("dict=: rzram does not load compression dictionaries\n");
        return Err(EINVAL);
    }
    cfg.params = Params {
        level: p.level,
        deflate_winbits: p.deflate_winbits,
    };
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

/// `idle`: `all` marks every stored page idle; a number of seconds marks those not accessed for
/// that long and clears the mark of the others. `EINVAL` for anything else (overflow included, as
/// zram) and before `disksize`.
fn idle_store(rz: &Rzram, _d: &Disk, input: &[u8]) -> Result {
    let cutoff = if sysfs_streq(input, b"all") {
        i64::MAX
    } else {
        let age = kstrtoull_base(input, 0).map_err(|_| EINVAL)?;
        let age = i64::try_from(age).unwrap_or(i64::MAX);
        i64::from(slots::now_secs()).saturating_sub(age)
    };
    let m = rz.storage().ok_or(EINVAL)?;
    m.mark_idle(cutoff);
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
pub(crate) static ATTRS: [Attribute<GenDisk<Rzram>>; 14] = [
    Attribute::wo(c_str!("compact"), compact_store),
    Attribute::rw(c_str!("disksize"), disksize_show, disksize_store),
    Attribute::ro(c_str!("initstate"), initstate_show),
    Attribute::wo(c_str!("reset"), reset_store),
    Attribute::wo(c_str!("mem_limit"), mem_limit_store),
    Attribute::wo(c_str!("mem_used_max"), mem_used_max_store),
    Attribute::wo(c_str!("idle"), idle_store),
    Attribute::wo(c_str!("algorithm_params"), algorithm_params_store),
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
