// SPDX-License-Identifier: GPL-2.0

//! The device's sysfs attributes, in `/sys/block/<disk>/`, with zram's names, modes, formats and
//! errors. Each parses its input (the kernel's parsers in `kernel::str`, and zram's grammars in
//! `args.rs`) and delegates to the device (`device.rs`) or its configuration (`config.rs`); a
//! `show` formats what the device reports (its statistics as `stats.rs` takes them).

use crate::{
    args::{self, algorithm, algorithm_params, recomp_algorithm, recompress},
    device::Rzram,
    slots,
    state::{self, MAX_PRIO},
};
use core::{fmt::Write, num::NonZeroU32};
use kernel::{
    block::bio::{Disk, GenDisk},
    c_str,
    compress::Algorithm,
    cpu::num_online_cpus,
    error::code::*,
    page::PAGE_SIZE,
    prelude::*,
    str::{kstrtobool, kstrtou16, kstrtoul, kstrtoull, memparse, sysfs_streq, CStr},
    sysfs::{Attribute, SysfsBuf},
};

/// What zram logs when an algorithm is set on an initialised device.
const ALGORITHM_BUSY: &str = "Can't change algorithm for initialized device";

fn emit(buf: &mut SysfsBuf<'_>, args: core::fmt::Arguments<'_>) -> Result {
    buf.write_fmt(args).map_err(|_| EINVAL)
}

fn disksize_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let size = rz.storage().map_or(0, |s| s.disksize());
    emit(buf, format_args!("{size}\n"))
}

fn disksize_store(rz: &Rzram, d: &Disk, input: &CStr) -> Result {
    let (size, _) = memparse(input);
    if size == 0 {
        return Err(EINVAL);
    }
    rz.init(d, size)
}

fn initstate_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    emit(buf, format_args!("{}\n", u32::from(rz.storage().is_some())))
}

fn reset_store(rz: &Rzram, d: &Disk, input: &CStr) -> Result {
    if kstrtou16(input, 10)? == 0 {
        return Err(EINVAL);
    }
    rz.reset_unless_open(d)
}

/// Every algorithm, `cur` in brackets, as zram lists them.
fn emit_algorithms(buf: &mut SysfsBuf<'_>, cur: Option<Algorithm>) -> Result {
    for a in Algorithm::ALL {
        if Some(a) == cur {
            emit(buf, format_args!("[{}] ", a.name()))?;
        } else {
            emit(buf, format_args!("{} ", a.name()))?;
        }
    }
    emit(buf, format_args!("\n"))
}

fn comp_algorithm_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    emit_algorithms(buf, rz.algorithms()[0])
}

/// `recomp_algorithm`: for each secondary algorithm, `#<priority>: ` and the list of
/// `comp_algorithm`.
fn recomp_algorithm_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    for (prio, a) in rz.algorithms().into_iter().enumerate().skip(1) {
        if a.is_some() {
            emit(buf, format_args!("#{prio}: "))?;
            emit_algorithms(buf, a)?;
        }
    }
    Ok(())
}

/// `recomp_algorithm`: `algo=NAME [priority=N]` (1 to 3, 1 by default) sets a secondary
/// algorithm, as zram: `EINVAL` without `algo=`, for another key without a value, an unknown
/// name or a priority out of range, `EBUSY` once initialised.
fn recomp_algorithm_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let mut buf = args::copy(input)?;
    let (name, prio) = recomp_algorithm(&mut buf)?;
    let prio = usize::try_from(prio)
        .ok()
        .filter(|p| (1..MAX_PRIO).contains(p))
        .ok_or(EINVAL)?;
    let alg = algorithm(name)?;
    rz.configure(Some(ALGORITHM_BUSY), |cfg| cfg.set_algorithm(prio, alg))
}

/// `recompress`: recompresses stored pages with the secondary algorithms; see
/// `args::recompress` and `Rzram::recompress`. A priority with no algorithm does nothing, as in
/// zram.
fn recompress_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let mut buf = args::copy(input)?;
    rz.recompress(&recompress(&mut buf)?)
}

fn comp_algorithm_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let alg = algorithm(input.as_bytes())?;
    rz.configure(Some(ALGORITHM_BUSY), |cfg| cfg.set_algorithm(0, alg))
}

/// `algorithm_params`: parameters for an algorithm (`args::algorithm_params` has the keys and
/// rzram's differences from zram), applied by the next `disksize`: `EBUSY` once initialised (zram
/// does not check), `EINVAL` for a `priority=` or `algo=` that names no configured algorithm or
/// two different ones, and for `dict=` (zram's errno for a dictionary it cannot load: rzram does
/// not load dictionaries yet). `deflate.winbits=` is checked by `disksize`.
fn algorithm_params_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let mut buf = args::copy(input)?;
    let p = algorithm_params(&mut buf)?;
    rz.configure(None, |cfg| cfg.set_algorithm_params(&p))
}

fn mm_stat_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let [orig, compr, used, limit, max_used, same, compacted, huge, huge_since] =
        rz.stats().mm_stat(rz.limit_pages());
    emit(
        buf,
        format_args!(
            "{orig:8} {compr:8} {used:8} {limit:8} {max_used:8} {same:8} {compacted:8} {huge:8} \
             {huge_since:8}\n"
        ),
    )
}

fn io_stat_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let [r, w, n] = rz.stats().io_stat();
    emit(buf, format_args!("{r:8} {w:8} 0 {n:8}\n"))
}

fn debug_stat_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let [stall, miss_free] = rz.stats().debug_stat();
    emit(buf, format_args!("version: 1\n{stall:8} {miss_free:8}\n"))
}

fn compact_store(rz: &Rzram, _d: &Disk, _input: &CStr) -> Result {
    rz.compact()
}

fn mem_limit_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let (limit, rest) = memparse(input);
    if rest.len() == input.len() {
        return Err(EINVAL);
    }
    rz.set_limit_pages(limit.div_ceil(PAGE_SIZE as u64));
    Ok(())
}

fn mem_used_max_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    match kstrtoul(input, 10) {
        Ok(0) => {}
        _ => return Err(EINVAL),
    }
    rz.reset_max_used();
    Ok(())
}

/// `idle`: `all` marks every stored page idle; a number of seconds marks those not accessed for
/// that long and clears the mark of the others. `EINVAL` for anything else (overflow included, as
/// zram), before `disksize`, and for a number without `CONFIG_RZRAM_TRACK_ENTRY_ACTIME` (as zram
/// without `CONFIG_ZRAM_TRACK_ENTRY_ACTIME`).
fn idle_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let cutoff = if sysfs_streq(input, c_str!("all")) {
        i64::MAX
    } else if cfg!(not(CONFIG_RZRAM_TRACK_ENTRY_ACTIME)) {
        return Err(EINVAL);
    } else {
        let age = kstrtoull(input, 0).map_err(|_| EINVAL)?;
        let age = i64::try_from(age).unwrap_or(i64::MAX);
        i64::from(state::now_secs()).saturating_sub(age)
    };
    rz.mark_idle(cutoff)
}

/// `backing_dev`: the path of the backing device, or `none`.
fn backing_dev_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    rz.with_config(|cfg| {
        let Some(file) = cfg.backing() else {
            return emit(buf, format_args!("none\n"));
        };
        let mut path = KVec::from_elem(0u8, PAGE_SIZE, GFP_KERNEL)?;
        // The bytes as they are, as zram shows them.
        buf.write_bytes(file.path(&mut path)?);
        emit(buf, format_args!("\n"))
    })
}

/// `backing_dev`: opens the block device at the path written (up to a NUL, without a trailing
/// newline), read-write and exclusively, as the device to write pages back to, replacing the
/// one set before. As zram: `EBUSY` once initialised, the open's error (`ENOENT`, `EBUSY` if the
/// device is in use, ...), `ENOTBLK` for a file that is not a block device, `EINVAL` for an
/// empty device.
fn backing_dev_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let busy = "Can't setup backing device for initialized device";
    let path = args::strip_newline(input.as_bytes());
    rz.configure(Some(busy), |cfg| cfg.open_backing(path))
}

/// `writeback`: writes pages back to the backing device; see `args::writeback` for the forms
/// (`EINVAL` for bad input, as zram) and `Rzram::writeback`.
fn writeback_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let mut buf = args::copy(input)?;
    rz.writeback(&args::writeback(&mut buf)?)
}

fn writeback_limit_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let l = rz.wb_limit().limit();
    emit(buf, format_args!("{l}\n"))
}

/// `writeback_limit`: how much may be written back while the limit is enabled, in 4 KiB units.
fn writeback_limit_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let l = kstrtoull(input, 10).map_err(|_| EINVAL)?;
    rz.wb_limit().set_limit(l);
    Ok(())
}

fn writeback_limit_enable_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let on = rz.wb_limit().enabled();
    emit(buf, format_args!("{}\n", u32::from(on)))
}

/// `writeback_limit_enable`: a number, not 0 to enable, as zram.
fn writeback_limit_enable_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let on = kstrtoull(input, 10).map_err(|_| EINVAL)? != 0;
    rz.wb_limit().set_enabled(on);
    Ok(())
}

fn writeback_batch_size_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let b = rz.wb_batch();
    emit(buf, format_args!("{b}\n"))
}

/// `writeback_batch_size`: the writes `writeback` keeps in flight, as zram since 6.19; `EINVAL`
/// for 0 or anything but a number that fits 32 bits.
fn writeback_batch_size_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let b = kstrtoull(input, 10).map_err(|_| EINVAL)?;
    let b = u32::try_from(b)
        .ok()
        .and_then(NonZeroU32::new)
        .ok_or(EINVAL)?;
    rz.set_wb_batch(b);
    Ok(())
}

fn compressed_writeback_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let on = rz.with_config(|cfg| cfg.compressed_writeback());
    emit(buf, format_args!("{}\n", u32::from(on)))
}

/// `compressed_writeback`: write pages back as stored, compressed, and decompress them when read
/// back, as zram since 7.0; a boolean (`kstrtobool`), `EBUSY` once initialised.
fn compressed_writeback_store(rz: &Rzram, _d: &Disk, input: &CStr) -> Result {
    let on = kstrtobool(input)?;
    rz.configure(None, |cfg| {
        cfg.set_compressed_writeback(on);
        Ok(())
    })
}

/// `bd_stat`: the backing device's blocks in use, pages read from it and pages written to it,
/// in 4 KiB units, as zram.
fn bd_stat_show(rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    let [count, reads, writes] = rz.stats().bd_stat();
    emit(buf, format_args!("{count:8} {reads:8} {writes:8}\n"))
}

fn max_comp_streams_show(_rz: &Rzram, _d: &Disk, buf: &mut SysfsBuf<'_>) -> Result {
    emit(buf, format_args!("{}\n", num_online_cpus()))
}

fn max_comp_streams_store(_rz: &Rzram, _d: &Disk, _input: &CStr) -> Result {
    // Accepted and ignored, as by zram since streams became per-CPU.
    Ok(())
}

/// The attributes in `/sys/block/<disk>/`.
pub(crate) static ATTRS: [Attribute<GenDisk<Rzram>>; 23] = [
    Attribute::wo(c_str!("compact"), compact_store),
    Attribute::rw(c_str!("disksize"), disksize_show, disksize_store),
    Attribute::ro(c_str!("initstate"), initstate_show),
    Attribute::wo(c_str!("reset"), reset_store),
    Attribute::wo(c_str!("mem_limit"), mem_limit_store),
    Attribute::wo(c_str!("mem_used_max"), mem_used_max_store),
    Attribute::wo(c_str!("idle"), idle_store),
    Attribute::wo(c_str!("algorithm_params"), algorithm_params_store),
    Attribute::rw(
        c_str!("recomp_algorithm"),
        recomp_algorithm_show,
        recomp_algorithm_store,
    ),
    Attribute::wo(c_str!("recompress"), recompress_store),
    Attribute::rw(c_str!("backing_dev"), backing_dev_show, backing_dev_store),
    Attribute::wo(c_str!("writeback"), writeback_store),
    Attribute::rw(
        c_str!("writeback_limit"),
        writeback_limit_show,
        writeback_limit_store,
    ),
    Attribute::rw(
        c_str!("writeback_limit_enable"),
        writeback_limit_enable_show,
        writeback_limit_enable_store,
    ),
    Attribute::rw(
        c_str!("writeback_batch_size"),
        writeback_batch_size_show,
        writeback_batch_size_store,
    ),
    Attribute::rw(
        c_str!("compressed_writeback"),
        compressed_writeback_show,
        compressed_writeback_store,
    ),
    Attribute::ro(c_str!("bd_stat"), bd_stat_show),
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
        format_args!("{}\n", core::mem::size_of::<slots::Slot>()),
    )
}
