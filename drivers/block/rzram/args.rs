// SPDX-License-Identifier: GPL-2.0

//! The grammars of zram's attributes that take words or `key=value` arguments (`writeback`,
//! `recompress`, `recomp_algorithm`, `algorithm_params`, an algorithm's name, a path). The words
//! and numbers in them are the kernel's own parsers' (`kernel::str`: `next_arg()`, `kstrtoull()`,
//! `kstrtoint()`), as zram's.

use kernel::{
    compress::Algorithm,
    error::code::*,
    prelude::*,
    str::{kstrtoint, kstrtoull, CStr, NextArgs},
};

/// A copy of a sysfs write that [`NextArgs`] may split in place, as zram's C code splits the
/// write itself (a Rust `store` gets it read-only). The grammars below parse such a copy.
pub(crate) fn copy(input: &CStr) -> Result<KVec<u8>> {
    let mut buf = KVec::with_capacity(input.len_with_nul(), GFP_KERNEL)?;
    buf.extend_from_slice(input.as_bytes_with_nul(), GFP_KERNEL)?;
    Ok(buf)
}

/// The arguments of `buf` (a [`copy`]), as bytes.
fn next_args(buf: &mut [u8]) -> Result<impl Iterator<Item = (&[u8], Option<&CStr>)>> {
    Ok(NextArgs::new(buf)?.map(|(key, val)| (key.as_bytes(), val)))
}

/// `s` without one trailing newline, as zram takes a name or a path.
pub(crate) fn strip_newline(s: &[u8]) -> &[u8] {
    s.strip_suffix(b"\n").unwrap_or(s)
}

/// `kstrtoull(s, 10)` of the bytes of `s`, which are not `NUL`-terminated where they are: the
/// two ends of a `page_indexes` range, which zram splits by writing a `NUL` over the `-`.
fn kstrtoull_bytes(s: &[u8]) -> Result<u64> {
    let mut c = KVec::with_capacity(s.len() + 1, GFP_KERNEL)?;
    c.extend_from_slice(s, GFP_KERNEL)?;
    c.push(0, GFP_KERNEL)?;
    kstrtoull(CStr::from_bytes_with_nul(&c)?, 10)
}

/// A `writeback` write, parsed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct WritebackArgs {
    pub(crate) idle: bool,
    pub(crate) huge: bool,
    pub(crate) incompressible: bool,
    /// The page ranges asked for, `lo..hi`, each with its error for pages beyond the disk:
    /// `EINVAL` for `page_index=` (as zram 6.12), `ERANGE` for `page_indexes=` (as zram since
    /// 6.16). Empty for all pages.
    pub(crate) ranges: KVec<(u64, u64, Error)>,
}

/// `writeback`: a mode (`idle`, `huge`, `huge_idle`, `incompressible`), alone as in zram 6.12 or
/// as `type=MODE` as since 6.16, and/or pages: `page_index=N` (repeatable) and
/// `page_indexes=LOW-HIGH` (inclusive). The first mode ends the arguments, as in zram; other keys
/// are ignored, as in zram. With pages, the mode (if any) filters them (zram 6.16 writes every
/// page named then). `EINVAL` for an unknown mode, a malformed number or range, and for a write
/// that asks for no mode and no page; `ERANGE` for a range whose low end is above its high end.
pub(crate) fn writeback(buf: &mut [u8]) -> Result<WritebackArgs> {
    let mut a = WritebackArgs::default();
    let mut mode = false;
    for (key, val) in next_args(buf)? {
        let m = match val.map(|v| (v, v.as_bytes())) {
            None | Some((_, b"")) => Some(key),
            Some((_, v)) if key == b"type" => Some(v),
            Some((v, bytes)) => {
                match key {
                    b"page_index" => {
                        // As 6.12: EINVAL for anything kstrtol() refuses, overflow included.
                        let n = kstrtoull(v, 10).map_err(|_| EINVAL)?;
                        a.ranges
                            .push((n, n.saturating_add(1), EINVAL), GFP_KERNEL)?;
                    }
                    b"page_indexes" => {
                        let dash = bytes.iter().position(|&b| b == b'-').ok_or(EINVAL)?;
                        let lo = kstrtoull_bytes(&bytes[..dash])?;
                        let hi = kstrtoull_bytes(&bytes[dash + 1..])?;
                        if lo > hi {
                            return Err(ERANGE);
                        }
                        a.ranges
                            .push((lo, hi.saturating_add(1), ERANGE), GFP_KERNEL)?;
                    }
                    _ => {}
                }
                None
            }
        };
        if let Some(m) = m {
            (a.idle, a.huge, a.incompressible) = match m {
                b"idle" => (true, false, false),
                b"huge" => (false, true, false),
                b"huge_idle" => (true, true, false),
                b"incompressible" => (false, false, true),
                _ => return Err(EINVAL),
            };
            mode = true;
            break;
        }
    }
    if !mode && a.ranges.is_empty() {
        return Err(EINVAL);
    }
    Ok(a)
}

/// An `algorithm_params` write, parsed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct AlgorithmParams<'a> {
    pub(crate) algo: Option<&'a [u8]>,
    pub(crate) priority: Option<i32>,
    pub(crate) level: Option<i32>,
    pub(crate) dict: Option<&'a [u8]>,
    pub(crate) deflate_winbits: Option<i32>,
}

/// Parses `algorithm_params`: the keys of zram since 6.16, `algo`, `priority`, `level`, `dict`
/// and `deflate.winbits`, each with a value (`EINVAL` for a missing or empty one, as zram); the
/// numbers' own errors (`kstrtoint`) as they are. rzram's own differences, also `EINVAL`: an
/// unknown key (zram ignores it), a repeated one (zram lets the last win), a `dict` path that is
/// not absolute, and a write with no key (zram takes it). `deflate.winbits` is not range-checked
/// here: `kernel::compress` takes 9 to 15 or -15 to -9 (the same raw window) when the device is
/// initialised, and refuses any other there.
pub(crate) fn algorithm_params(buf: &mut [u8]) -> Result<AlgorithmParams<'_>> {
    let mut p = AlgorithmParams::default();
    let mut seen = 0u32;
    for (key, val) in next_args(buf)? {
        let val = val.filter(|v| !v.is_empty()).ok_or(EINVAL)?;
        let bit = match key {
            b"algo" => {
                p.algo = Some(val.as_bytes());
                1
            }
            b"priority" => {
                p.priority = Some(kstrtoint(val, 10)?);
                2
            }
            b"level" => {
                p.level = Some(kstrtoint(val, 10)?);
                4
            }
            b"dict" => {
                if val.as_bytes().first() != Some(&b'/') {
                    return Err(EINVAL);
                }
                p.dict = Some(val.as_bytes());
                8
            }
            b"deflate.winbits" => {
                p.deflate_winbits = Some(kstrtoint(val, 10)?);
                16
            }
            _ => return Err(EINVAL),
        };
        if seen & bit != 0 {
            return Err(EINVAL);
        }
        seen |= bit;
    }
    if seen == 0 {
        return Err(EINVAL);
    }
    Ok(p)
}

/// `recomp_algorithm`: `algo=NAME` and `priority=N` (1 by default), as zram: `EINVAL` without
/// `algo=` or for a key without a value; other keys are ignored.
pub(crate) fn recomp_algorithm(buf: &mut [u8]) -> Result<(&[u8], i32)> {
    let (mut algo, mut prio) = (None, 1);
    for (key, val) in next_args(buf)? {
        let val = val.filter(|v| !v.is_empty()).ok_or(EINVAL)?;
        match key {
            b"algo" => algo = Some(val.as_bytes()),
            b"priority" => prio = kstrtoint(val, 10)?,
            _ => {}
        }
    }
    Ok((algo.ok_or(EINVAL)?, prio))
}

/// A `recompress` write, parsed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RecompressArgs<'a> {
    pub(crate) idle: bool,
    pub(crate) huge: bool,
    pub(crate) threshold: u64,
    pub(crate) max_pages: u64,
    pub(crate) algo: Option<&'a [u8]>,
    pub(crate) priority: Option<u32>,
}

/// `recompress`: `type=idle|huge|huge_idle`, `threshold=N` (bytes), `max_pages=N`, `algo=NAME`,
/// `priority=N`. As zram: `EINVAL` for a key without a value, the numbers' own errors
/// (`kstrtouint`, `kstrtoull`), other keys ignored. An unknown `type` is `EINVAL` (6.12 ignored
/// it and recompressed every page).
pub(crate) fn recompress(buf: &mut [u8]) -> Result<RecompressArgs<'_>> {
    let mut a = RecompressArgs {
        idle: false,
        huge: false,
        threshold: 0,
        max_pages: u64::MAX,
        algo: None,
        priority: None,
    };
    for (key, val) in next_args(buf)? {
        let val = val.filter(|v| !v.is_empty()).ok_or(EINVAL)?;
        match key {
            b"type" => {
                (a.idle, a.huge) = match val.as_bytes() {
                    b"idle" => (true, false),
                    b"huge" => (false, true),
                    b"huge_idle" => (true, true),
                    _ => return Err(EINVAL),
                }
            }
            b"max_pages" => a.max_pages = kstrtoull(val, 10)?,
            b"threshold" => {
                a.threshold = u64::from(u32::try_from(kstrtoull(val, 10)?).map_err(|_| ERANGE)?)
            }
            b"algo" => a.algo = Some(val.as_bytes()),
            b"priority" => {
                a.priority = Some(u32::try_from(kstrtoull(val, 10)?).map_err(|_| ERANGE)?)
            }
            _ => {}
        }
    }
    Ok(a)
}

/// The algorithm name of a `comp_algorithm` write: the input without one trailing newline.
/// `E2BIG` if it is 128 bytes or longer (`CRYPTO_MAX_ALG_NAME`), as zram checks.
pub(crate) fn algorithm_name(input: &[u8]) -> Result<&[u8]> {
    if input.len() >= 128 {
        return Err(E2BIG);
    }
    Ok(strip_newline(input))
}

/// The algorithm called `name` (without a trailing newline): `E2BIG` for 128 bytes or more,
/// `EINVAL` for an unknown name.
///
/// As zram, which strips one newline and then looks the name up with `sysfs_streq()`, a second
/// newline is ignored too (`"lz4\n\n"` is lz4). zram then stores the name with that newline, so
/// that its `comp_algorithm` shows no algorithm selected; rzram shows lz4.
pub(crate) fn algorithm(name: &[u8]) -> Result<Algorithm> {
    let name = strip_newline(algorithm_name(name)?);
    core::str::from_utf8(name)
        .ok()
        .and_then(Algorithm::from_name)
        .ok_or(EINVAL)
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_args)]
mod tests {
    use super::*;
    use kernel::{kunit_expect, kunit_expect_eq};

    /// `input` as a [`copy`] of a write holds it.
    fn buf(input: &[u8]) -> KVec<u8> {
        let mut b = KVec::new();
        // A test's input is short; a failed allocation fails the test.
        let _ = b.extend_from_slice(input, GFP_KERNEL);
        let _ = b.push(0, GFP_KERNEL);
        b
    }

    #[test]
    fn writeback_args() -> Result {
        let mode = |i: &[u8]| writeback(&mut buf(i)).map(|a| (a.idle, a.huge, a.incompressible));
        for form in [&b"idle"[..], b"idle\n", b"type=idle", b" type=idle \n"] {
            kunit_expect_eq!(mode(form), Ok((true, false, false)));
        }
        kunit_expect_eq!(mode(b"huge"), Ok((false, true, false)));
        kunit_expect_eq!(mode(b"type=huge_idle"), Ok((true, true, false)));
        kunit_expect_eq!(mode(b"incompressible"), Ok((false, false, true)));
        // The first mode ends the arguments; other keys are ignored.
        kunit_expect_eq!(mode(b"huge idle"), Ok((false, true, false)));
        kunit_expect_eq!(mode(b"foo=bar type=idle"), Ok((true, false, false)));
        for bad in [
            &b""[..],
            b"\n",
            b"all",
            b"type=",
            b"type=all",
            b"IDLE",
            b"foo=bar",
        ] {
            kunit_expect_eq!(writeback(&mut buf(bad)).err(), Some(EINVAL));
        }
        let a = writeback(&mut buf(b"page_index=5 page_index=7 page_indexes=10-12"))?;
        kunit_expect!(!a.idle && !a.huge && !a.incompressible);
        // The indexes below rely on it.
        assert_eq!(a.ranges.len(), 3);
        for (&(lo, hi, _), want) in a.ranges.iter().zip([(5, 6), (7, 8), (10, 13)]) {
            kunit_expect_eq!((lo, hi), want);
        }
        kunit_expect_eq!(a.ranges[0].2, EINVAL);
        kunit_expect_eq!(a.ranges[2].2, ERANGE);
        // Pages filtered by a mode.
        let a = writeback(&mut buf(b"page_indexes=0-3 type=idle"))?;
        kunit_expect!(a.idle && a.ranges.len() == 1);
        kunit_expect_eq!(writeback(&mut buf(b"page_indexes=4-3")).err(), Some(ERANGE));
        for bad in [
            &b"page_index=x"[..],
            b"page_index=-1",
            b"page_indexes=4",
            b"page_indexes=a-3",
        ] {
            kunit_expect_eq!(writeback(&mut buf(bad)).err(), Some(EINVAL));
        }
        // Overflow: EINVAL for page_index (as 6.12), ERANGE for page_indexes (as 6.16).
        let huge = b"page_index=99999999999999999999";
        kunit_expect_eq!(writeback(&mut buf(huge)).err(), Some(EINVAL));
        let huge = b"page_indexes=0-99999999999999999999";
        kunit_expect_eq!(writeback(&mut buf(huge)).err(), Some(ERANGE));
        Ok(())
    }

    #[test]
    fn algorithm_params_syntax() {
        let mut b = buf(b"algo=zstd level=8\n");
        kunit_expect_eq!(
            algorithm_params(&mut b),
            Ok(AlgorithmParams {
                algo: Some(b"zstd"),
                level: Some(8),
                ..Default::default()
            })
        );
        let mut b = buf(b"  priority=0   deflate.winbits=12 dict=\"/etc/a b\"");
        kunit_expect_eq!(
            algorithm_params(&mut b),
            Ok(AlgorithmParams {
                priority: Some(0),
                deflate_winbits: Some(12),
                dict: Some(b"/etc/a b"),
                ..Default::default()
            })
        );
        let level = algorithm_params(&mut buf(b"level=-3")).map(|p| p.level);
        kunit_expect_eq!(level, Ok(Some(-3)));
        for bad in [
            &b""[..],
            b"\n",
            b"level",
            b"level=",
            b"level=x",
            b"level=1 level=2",
            b"colour=blue",
            b"dict=relative/path",
            b"algo=",
        ] {
            kunit_expect_eq!(algorithm_params(&mut buf(bad)).err(), Some(EINVAL));
        }
        let huge = algorithm_params(&mut buf(b"level=99999999999")).err();
        kunit_expect_eq!(huge, Some(ERANGE));
    }

    #[test]
    fn recompression_syntax() {
        let mut b = buf(b"algo=zstd");
        kunit_expect_eq!(recomp_algorithm(&mut b), Ok((&b"zstd"[..], 1)));
        let mut b = buf(b"algo=lz4hc priority=3\n");
        kunit_expect_eq!(recomp_algorithm(&mut b), Ok((&b"lz4hc"[..], 3)));
        for bad in [&b"priority=2"[..], b"algo=", b"algo=zstd priority=x"] {
            kunit_expect_eq!(recomp_algorithm(&mut buf(bad)).err(), Some(EINVAL));
        }
        let mut b = buf(b"type=huge_idle threshold=1000 max_pages=7 algo=zstd priority=2");
        kunit_expect_eq!(
            recompress(&mut b),
            Ok(RecompressArgs {
                idle: true,
                huge: true,
                threshold: 1000,
                max_pages: 7,
                algo: Some(b"zstd"),
                priority: Some(2),
            })
        );
        let r = recompress(&mut buf(b"type=idle")).map(|r| (r.idle, r.huge, r.max_pages));
        kunit_expect_eq!(r, Ok((true, false, u64::MAX)));
        // An `=` first in an argument is no separator to next_arg(): "=1" has no value.
        for bad in [
            &b"type=colder"[..],
            b"type",
            b"threshold=-1",
            b"max_pages=x",
            b"=1",
        ] {
            kunit_expect_eq!(recompress(&mut buf(bad)).err(), Some(EINVAL));
        }
        let big = recompress(&mut buf(b"threshold=4294967296")).err();
        kunit_expect_eq!(big, Some(ERANGE));
        kunit_expect!(recompress(&mut buf(b"colour=1")).is_ok());
    }

    /// The largest numbers each grammar takes, and the next: the value or an error, never an
    /// overflow.
    #[test]
    fn extreme_numbers() -> Result {
        let a = writeback(&mut buf(b"page_index=18446744073709551615"))?;
        // The index below relies on it.
        assert_eq!(a.ranges.len(), 1);
        kunit_expect_eq!((a.ranges[0].0, a.ranges[0].1), (u64::MAX, u64::MAX));
        let max = b"page_indexes=18446744073709551615-18446744073709551615";
        let a = writeback(&mut buf(max))?;
        assert_eq!(a.ranges.len(), 1);
        kunit_expect_eq!((a.ranges[0].0, a.ranges[0].1), (u64::MAX, u64::MAX));
        let mut b = buf(b"priority=4294967295 threshold=4294967295");
        let r = recompress(&mut b)?;
        kunit_expect_eq!(
            (r.priority, r.threshold),
            (Some(u32::MAX), u64::from(u32::MAX))
        );
        let mut b = buf(b"max_pages=18446744073709551615");
        kunit_expect_eq!(recompress(&mut b)?.max_pages, u64::MAX);
        let big = recompress(&mut buf(b"priority=4294967296")).err();
        kunit_expect_eq!(big, Some(ERANGE));
        let neg = recompress(&mut buf(b"priority=-1")).err();
        kunit_expect_eq!(neg, Some(EINVAL));
        let mut b = buf(b"algo=zstd priority=-2147483648");
        kunit_expect_eq!(recomp_algorithm(&mut b), Ok((&b"zstd"[..], i32::MIN)));
        let mut b = buf(b"priority=2147483647 level=-2147483648");
        kunit_expect_eq!(
            algorithm_params(&mut b).map(|p| (p.priority, p.level)),
            Ok((Some(i32::MAX), Some(i32::MIN)))
        );
        let p = algorithm_params(&mut buf(b"deflate.winbits=-2147483649")).err();
        kunit_expect_eq!(p, Some(ERANGE));
        Ok(())
    }

    #[test]
    fn algorithm_names() {
        kunit_expect_eq!(algorithm_name(b"lz4\n"), Ok(&b"lz4"[..]));
        kunit_expect_eq!(algorithm_name(b"zstd"), Ok(&b"zstd"[..]));
        kunit_expect_eq!(algorithm_name(b"lz4\n\n"), Ok(&b"lz4\n"[..]));
        kunit_expect!(algorithm_name(&[b'a'; 128]).is_err());
        kunit_expect_eq!(algorithm_name(&[b'a'; 127]).map(|s| s.len()), Ok(127));
    }
}
