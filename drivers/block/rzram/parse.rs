// SPDX-License-Identifier: GPL-2.0

//! Parsers for sysfs input: pure functions with the semantics, and the errors, of the C parsers
//! zram uses (`memparse()`, `kstrtou16()`, `kstrtoint()`, `kstrtoul()`, `kstrtoull()`,
//! `sysfs_streq()`, `next_arg()`).

use kernel::{error::code::*, prelude::*};

/// What C sees of a sysfs write: the bytes before the first NUL.
fn c_str(input: &[u8]) -> &[u8] {
    input.split(|&b| b == 0).next().unwrap_or(&[])
}

/// `kstrtoull(s, 10)`: an optional `+`, decimal digits, an optional newline, nothing else.
///
/// `EINVAL` for anything else (including no digits), `ERANGE` if the value overflows `u64`, even
/// if something follows the digits (C checks the overflow first).
pub(crate) fn kstrtoull(input: &[u8]) -> Result<u64> {
    kstrtoull_base(input, 10)
}

/// `kstrtoull(s, base)`, for a base of 8, 10 or 16, or 0: then, as in C, `0x` followed by a hex
/// digit means hex, another leading `0` octal, and anything else decimal. With base 16 a `0x`
/// prefix is skipped.
pub(crate) fn kstrtoull_base(input: &[u8], base: u32) -> Result<u64> {
    let mut s = c_str(input);
    if let [b'+', rest @ ..] = s {
        s = rest;
    }
    let is_x = |b: &u8| b.eq_ignore_ascii_case(&b'x');
    let base = match (base, s) {
        (0, [b'0', x, h, ..]) if is_x(x) && h.is_ascii_hexdigit() => 16,
        (0, [b'0', ..]) => 8,
        (0, _) => 10,
        (b, _) => b,
    };
    if let (16, [b'0', x, rest @ ..]) = (base, s) {
        if is_x(x) {
            s = rest;
        }
    }
    let digit = |b: &u8| char::from(*b).to_digit(base);
    let digits = s.iter().take_while(|b| digit(b).is_some()).count();
    if digits == 0 {
        return Err(EINVAL);
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for d in s[..digits].iter().filter_map(digit) {
        match v
            .checked_mul(u64::from(base))
            .and_then(|x| x.checked_add(u64::from(d)))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
    }
    // As C reports an overflow before what follows the digits.
    if overflow {
        return Err(ERANGE);
    }
    match &s[digits..] {
        [] | [b'\n'] => Ok(v),
        _ => Err(EINVAL),
    }
}

/// `sysfs_streq(s, word)`: the input up to a NUL equals `word`, but for one trailing newline.
pub(crate) fn sysfs_streq(input: &[u8], word: &[u8]) -> bool {
    let s = c_str(input);
    s.strip_suffix(b"\n").unwrap_or(s) == word
}

/// `kstrtou16(s, 10)`.
pub(crate) fn kstrtou16(input: &[u8]) -> Result<u16> {
    u16::try_from(kstrtoull(input)?).map_err(|_| ERANGE)
}

/// `kstrtoul(s, 10)`: as [`kstrtoull`], and `ERANGE` beyond `unsigned long` (32 bits on 32-bit).
pub(crate) fn kstrtoul(input: &[u8]) -> Result<usize> {
    usize::try_from(kstrtoull(input)?).map_err(|_| ERANGE)
}

/// `kstrtoint(s, 10)`: as [`kstrtoull`] with an optional leading `-`.
pub(crate) fn kstrtoint(input: &[u8]) -> Result<i32> {
    let s = c_str(input);
    if let [b'-', rest @ ..] = s {
        // kstrtoll() parses the digits after "-" without accepting another sign.
        if rest.first() == Some(&b'+') {
            return Err(EINVAL);
        }
        let v = kstrtoull(rest)?;
        return i32::try_from(-(i64::try_from(v).map_err(|_| ERANGE)?)).map_err(|_| ERANGE);
    }
    i32::try_from(kstrtoull(s)?).map_err(|_| ERANGE)
}

/// The kernel's `isspace()`: ASCII white space, vertical tab included, and Latin-1's no-break
/// space (0xa0), as `lib/ctype.c` classifies it.
fn is_c_space(b: &u8) -> bool {
    matches!(*b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0xa0)
}

/// The arguments of a `key=value ...` write, split as `next_arg()` does: separated by spaces
/// (not inside double quotes), each at its first `=` that is not its first character (C's
/// `next_arg()` takes an `=` at index 0 for "no `=`"). An argument that starts with a quote
/// loses it, and its last character too if that is a quote; so does a value that starts with a
/// quote. A quote at the end of anything else stays. `None` for an argument without such an `=`.
fn next_args(input: &[u8]) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
    let mut rest = c_str(input);
    core::iter::from_fn(move || {
        let start = rest.iter().position(|b| !is_c_space(b))?;
        rest = &rest[start..];
        let mut quoted = false;
        let end = rest
            .iter()
            .position(|&b| {
                if b == b'"' {
                    quoted = !quoted;
                }
                !quoted && is_c_space(&b)
            })
            .unwrap_or(rest.len());
        let (arg, tail) = rest.split_at(end);
        rest = tail;
        /// `s` without one closing quote, if `quoted`.
        fn close(s: &[u8], quoted: bool) -> &[u8] {
            match s.strip_suffix(b"\"") {
                Some(t) if quoted => t,
                _ => s,
            }
        }
        // C's key and indexes start after an opening quote.
        let (quoted, body) = match arg.strip_prefix(b"\"") {
            Some(body) => (true, body),
            None => (false, arg),
        };
        let eq = body.iter().skip(1).position(|&b| b == b'=').map(|i| i + 1);
        Some(match eq {
            Some(eq) => {
                let (key, val) = body.split_at(eq);
                let val = val.get(1..).unwrap_or_default();
                match val.strip_prefix(b"\"") {
                    Some(val) => (key, Some(close(val, true))),
                    None => (key, Some(close(val, quoted))),
                }
            }
            None => (close(body, quoted), None),
        })
    })
}

/// A path as zram takes it from a sysfs write: the bytes up to a NUL, without one trailing
/// newline.
pub(crate) fn path(input: &[u8]) -> &[u8] {
    let s = c_str(input);
    s.strip_suffix(b"\n").unwrap_or(s)
}

/// `kstrtobool()`: `y`, `Y`, `t`, `T`, `1`, `on` for true, `n`, `N`, `f`, `F`, `0`, `off` for
/// false, judged by the first characters only (`yes` is true); `EINVAL` for anything else.
pub(crate) fn kstrtobool(input: &[u8]) -> Result<bool> {
    match c_str(input) {
        [b'y' | b'Y' | b't' | b'T' | b'1', ..] | [b'o' | b'O', b'n' | b'N', ..] => Ok(true),
        [b'n' | b'N' | b'f' | b'F' | b'0', ..] | [b'o' | b'O', b'f' | b'F', ..] => Ok(false),
        _ => Err(EINVAL),
    }
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
/// are ignored, as in zram. With pages, the mode (if any) filters them. `EINVAL` for an unknown
/// mode, a malformed number or range, and for a write that asks for no mode and no page;
/// `ERANGE` for a range whose low end is above its high end.
pub(crate) fn writeback(input: &[u8]) -> Result<WritebackArgs> {
    let mut a = WritebackArgs::default();
    let mut mode = false;
    for (key, val) in next_args(input) {
        let m = match val {
            None | Some(b"") => Some(key),
            Some(v) if key == b"type" => Some(v),
            Some(v) => {
                match key {
                    b"page_index" => {
                        // As 6.12: EINVAL for anything kstrtol() refuses, overflow included.
                        let n = kstrtoull(v).map_err(|_| EINVAL)?;
                        a.ranges
                            .push((n, n.saturating_add(1), EINVAL), GFP_KERNEL)?;
                    }
                    b"page_indexes" => {
                        let dash = v.iter().position(|&b| b == b'-').ok_or(EINVAL)?;
                        let lo = kstrtoull(&v[..dash])?;
                        let hi = kstrtoull(&v[dash + 1..])?;
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
pub(crate) fn algorithm_params(input: &[u8]) -> Result<AlgorithmParams<'_>> {
    let mut p = AlgorithmParams::default();
    let mut seen = 0u32;
    for (key, val) in next_args(input) {
        let val = val.filter(|v| !v.is_empty()).ok_or(EINVAL)?;
        let bit = match key {
            b"algo" => {
                p.algo = Some(val);
                1
            }
            b"priority" => {
                p.priority = Some(kstrtoint(val)?);
                2
            }
            b"level" => {
                p.level = Some(kstrtoint(val)?);
                4
            }
            b"dict" => {
                if val.first() != Some(&b'/') {
                    return Err(EINVAL);
                }
                p.dict = Some(val);
                8
            }
            b"deflate.winbits" => {
                p.deflate_winbits = Some(kstrtoint(val)?);
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
pub(crate) fn recomp_algorithm(input: &[u8]) -> Result<(&[u8], i32)> {
    let (mut algo, mut prio) = (None, 1);
    for (key, val) in next_args(input) {
        let val = val.filter(|v| !v.is_empty()).ok_or(EINVAL)?;
        match key {
            b"algo" => algo = Some(val),
            b"priority" => prio = kstrtoint(val)?,
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
pub(crate) fn recompress(input: &[u8]) -> Result<RecompressArgs<'_>> {
    let mut a = RecompressArgs {
        idle: false,
        huge: false,
        threshold: 0,
        max_pages: u64::MAX,
        algo: None,
        priority: None,
    };
    for (key, val) in next_args(input) {
        let val = val.filter(|v| !v.is_empty()).ok_or(EINVAL)?;
        match key {
            b"type" => {
                (a.idle, a.huge) = match val {
                    b"idle" => (true, false),
                    b"huge" => (false, true),
                    b"huge_idle" => (true, true),
                    _ => return Err(EINVAL),
                }
            }
            b"max_pages" => a.max_pages = kstrtoull(val)?,
            b"threshold" => {
                a.threshold = u64::from(u32::try_from(kstrtoull(val)?).map_err(|_| ERANGE)?)
            }
            b"algo" => a.algo = Some(val),
            b"priority" => a.priority = Some(u32::try_from(kstrtoull(val)?).map_err(|_| ERANGE)?),
            _ => {}
        }
    }
    Ok(a)
}

/// `memparse(s, &end)`: a number in C notation (decimal, `0x` hex, `0` octal) with an optional
/// K, M, G, T, P or E suffix (either case). Returns the value and whether any character was
/// consumed; like C, overflow wraps and parsing stops at the first character that does not fit,
/// and a suffix with no digits before it is consumed as 0 (`"K"`, and `"true"` for its `t`).
pub(crate) fn memparse(input: &[u8]) -> (u64, bool) {
    let s = c_str(input);
    let (base, mut i) = match s {
        [b'0', b'x' | b'X', d, ..] if d.is_ascii_hexdigit() => (16, 2),
        [b'0', ..] => (8, 0),
        _ => (10, 0),
    };
    let start = i;
    let mut v: u64 = 0;
    while let Some(&c) = s.get(i) {
        let d = match c {
            b'0'..=b'9' => u64::from(c - b'0'),
            b'a'..=b'f' => u64::from(c - b'a' + 10),
            b'A'..=b'F' => u64::from(c - b'A' + 10),
            _ => break,
        };
        if d >= base {
            break;
        }
        v = v.wrapping_mul(base).wrapping_add(d);
        i += 1;
    }
    // The suffix counts even without digits: C's `memparse("K")` consumes it and returns 0.
    let shift = match s.get(i) {
        Some(b'E' | b'e') => Some(60),
        Some(b'P' | b'p') => Some(50),
        Some(b'T' | b't') => Some(40),
        Some(b'G' | b'g') => Some(30),
        Some(b'M' | b'm') => Some(20),
        Some(b'K' | b'k') => Some(10),
        _ => None,
    };
    (
        v.wrapping_shl(shift.unwrap_or(0)),
        i > start || shift.is_some(),
    )
}

/// The algorithm name of a `comp_algorithm` write: the input up to a NUL, without one trailing
/// newline. `E2BIG` if it is 128 bytes or longer (`CRYPTO_MAX_ALG_NAME`), as zram checks.
pub(crate) fn algorithm_name(input: &[u8]) -> Result<&[u8]> {
    let s = c_str(input);
    if s.len() >= 128 {
        return Err(E2BIG);
    }
    Ok(s.strip_suffix(b"\n").unwrap_or(s))
}

#[cfg(CONFIG_RZRAM_KUNIT_TEST)]
#[kunit_tests(rzram_parse)]
mod tests {
    use super::*;
    use kernel::{kunit_expect, kunit_expect_eq};

    #[test]
    fn kstrtobool_forms() {
        for t in [&b"1"[..], b"y", b"Y\n", b"yes", b"t", b"true", b"on", b"ON"] {
            kunit_expect_eq!(kstrtobool(t), Ok(true));
        }
        for f in [&b"0"[..], b"n", b"no", b"f", b"false", b"off", b"Off\n"] {
            kunit_expect_eq!(kstrtobool(f), Ok(false));
        }
        for bad in [&b""[..], b"\n", b"2", b"o", b"ok", b"x", b" 1"] {
            kunit_expect_eq!(kstrtobool(bad), Err(EINVAL));
        }
    }

    #[test]
    fn writeback_args() -> Result {
        let mode = |i: &[u8]| writeback(i).map(|a| (a.idle, a.huge, a.incompressible));
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
            kunit_expect_eq!(writeback(bad).err(), Some(EINVAL));
        }
        let a = writeback(b"page_index=5 page_index=7 page_indexes=10-12")?;
        kunit_expect!(!a.idle && !a.huge && !a.incompressible);
        // The indexes below rely on it.
        assert_eq!(a.ranges.len(), 3);
        for (&(lo, hi, _), want) in a.ranges.iter().zip([(5, 6), (7, 8), (10, 13)]) {
            kunit_expect_eq!((lo, hi), want);
        }
        kunit_expect_eq!(a.ranges[0].2, EINVAL);
        kunit_expect_eq!(a.ranges[2].2, ERANGE);
        // Pages filtered by a mode.
        let a = writeback(b"page_indexes=0-3 type=idle")?;
        kunit_expect!(a.idle && a.ranges.len() == 1);
        kunit_expect_eq!(writeback(b"page_indexes=4-3").err(), Some(ERANGE));
        for bad in [
            &b"page_index=x"[..],
            b"page_index=-1",
            b"page_indexes=4",
            b"page_indexes=a-3",
        ] {
            kunit_expect_eq!(writeback(bad).err(), Some(EINVAL));
        }
        // Overflow: EINVAL for page_index (as 6.12), ERANGE for page_indexes (as 6.16).
        let huge = b"page_index=99999999999999999999";
        kunit_expect_eq!(writeback(huge).err(), Some(EINVAL));
        let huge = b"page_indexes=0-99999999999999999999";
        kunit_expect_eq!(writeback(huge).err(), Some(ERANGE));
        Ok(())
    }

    #[test]
    fn kstrto() {
        kunit_expect_eq!(kstrtoull(b"0"), Ok(0));
        kunit_expect_eq!(kstrtoull(b"+12\n"), Ok(12));
        kunit_expect_eq!(kstrtoull(b"18446744073709551615"), Ok(u64::MAX));
        kunit_expect_eq!(kstrtoull(b"18446744073709551616"), Err(ERANGE));
        // The overflow is reported before the junk after it, as by C (reset, hot_remove).
        kunit_expect_eq!(kstrtoull(b"18446744073709551616x"), Err(ERANGE));
        kunit_expect_eq!(kstrtou16(b"99999999999999999999 1"), Err(ERANGE));
        kunit_expect_eq!(kstrtoint(b"-99999999999999999999junk"), Err(ERANGE));
        kunit_expect_eq!(kstrtoull(b""), Err(EINVAL));
        kunit_expect_eq!(kstrtoull(b"\n"), Err(EINVAL));
        kunit_expect_eq!(kstrtoull(b"1 "), Err(EINVAL));
        kunit_expect_eq!(kstrtoull(b"1\n\n"), Err(EINVAL));
        kunit_expect_eq!(kstrtoull(b"0x10"), Err(EINVAL));
        kunit_expect_eq!(kstrtoull(b"-1"), Err(EINVAL));
        kunit_expect_eq!(kstrtoull(b"7\0junk"), Ok(7));
        kunit_expect_eq!(kstrtou16(b"65535"), Ok(65535));
        kunit_expect_eq!(kstrtou16(b"65536"), Err(ERANGE));
        kunit_expect_eq!(kstrtou16(b"1\n"), Ok(1));
        kunit_expect_eq!(kstrtoint(b"-5\n"), Ok(-5));
        kunit_expect_eq!(kstrtoint(b"2147483647"), Ok(i32::MAX));
        kunit_expect_eq!(kstrtoint(b"2147483648"), Err(ERANGE));
        kunit_expect_eq!(kstrtoint(b"-2147483648"), Ok(i32::MIN));
        kunit_expect_eq!(kstrtoint(b"--1"), Err(EINVAL));
        kunit_expect_eq!(kstrtoint(b"-+1"), Err(EINVAL));
        kunit_expect_eq!(kstrtoint(b"abc"), Err(EINVAL));
        // `unsigned long`: 32 bits on 32-bit, where C's kstrtoul() says ERANGE beyond them.
        kunit_expect_eq!(kstrtoul(b"4294967295\n"), Ok(u32::MAX as usize));
        let big = kstrtoul(b"4294967296").map(|v| v as u64);
        if usize::BITS == 32 {
            kunit_expect_eq!(big, Err(ERANGE));
        } else {
            kunit_expect_eq!(big, Ok(1 << 32));
        }
        kunit_expect_eq!(kstrtoul(b"18446744073709551616"), Err(ERANGE));
    }

    #[test]
    fn kstrtoull_bases() {
        kunit_expect_eq!(kstrtoull_base(b"0x1f\n", 0), Ok(31));
        kunit_expect_eq!(kstrtoull_base(b"0X1F", 0), Ok(31));
        kunit_expect_eq!(kstrtoull_base(b"010", 0), Ok(8));
        kunit_expect_eq!(kstrtoull_base(b"0", 0), Ok(0));
        kunit_expect_eq!(kstrtoull_base(b"+90", 0), Ok(90));
        kunit_expect_eq!(kstrtoull_base(b"09", 0), Err(EINVAL));
        kunit_expect_eq!(kstrtoull_base(b"0x", 0), Err(EINVAL));
        kunit_expect_eq!(kstrtoull_base(b"0xg", 0), Err(EINVAL));
        kunit_expect_eq!(kstrtoull_base(b"ff", 16), Ok(255));
        kunit_expect_eq!(kstrtoull_base(b"0xff", 16), Ok(255));
        kunit_expect_eq!(kstrtoull_base(b"0x10000000000000000", 0), Err(ERANGE));
        kunit_expect_eq!(kstrtoull_base(b"-1", 0), Err(EINVAL));
        kunit_expect_eq!(kstrtoull_base(b"all", 0), Err(EINVAL));
        kunit_expect!(sysfs_streq(b"all", b"all"));
        kunit_expect!(sysfs_streq(b"all\n", b"all"));
        kunit_expect!(sysfs_streq(b"all\0x", b"all"));
        kunit_expect!(!sysfs_streq(b"all\n\n", b"all"));
        kunit_expect!(!sysfs_streq(b"al", b"all"));
        kunit_expect!(!sysfs_streq(b" all", b"all"));
    }

    #[test]
    fn algorithm_params_syntax() {
        let p = algorithm_params(b"algo=zstd level=8\n");
        kunit_expect_eq!(
            p,
            Ok(AlgorithmParams {
                algo: Some(b"zstd"),
                level: Some(8),
                ..Default::default()
            })
        );
        let p = algorithm_params(b"  priority=0   deflate.winbits=12 dict=\"/etc/a b\"");
        kunit_expect_eq!(
            p,
            Ok(AlgorithmParams {
                priority: Some(0),
                deflate_winbits: Some(12),
                dict: Some(b"/etc/a b"),
                ..Default::default()
            })
        );
        kunit_expect_eq!(algorithm_params(b"level=-3").map(|p| p.level), Ok(Some(-3)));
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
            kunit_expect_eq!(algorithm_params(bad).err(), Some(EINVAL));
        }
        kunit_expect_eq!(algorithm_params(b"level=99999999999").err(), Some(ERANGE));
    }

    #[test]
    fn recompression_syntax() {
        kunit_expect_eq!(recomp_algorithm(b"algo=zstd"), Ok((&b"zstd"[..], 1)));
        kunit_expect_eq!(
            recomp_algorithm(b"algo=lz4hc priority=3\n"),
            Ok((&b"lz4hc"[..], 3))
        );
        kunit_expect_eq!(recomp_algorithm(b"priority=2").err(), Some(EINVAL));
        kunit_expect_eq!(recomp_algorithm(b"algo=").err(), Some(EINVAL));
        kunit_expect_eq!(
            recomp_algorithm(b"algo=zstd priority=x").err(),
            Some(EINVAL)
        );
        let r = recompress(b"type=huge_idle threshold=1000 max_pages=7 algo=zstd priority=2");
        kunit_expect_eq!(
            r,
            Ok(RecompressArgs {
                idle: true,
                huge: true,
                threshold: 1000,
                max_pages: 7,
                algo: Some(b"zstd"),
                priority: Some(2),
            })
        );
        let r = recompress(b"type=idle");
        kunit_expect!(r.is_ok_and(|r| r.idle && !r.huge && r.max_pages == u64::MAX));
        kunit_expect_eq!(recompress(b"type=colder").err(), Some(EINVAL));
        kunit_expect_eq!(recompress(b"type").err(), Some(EINVAL));
        kunit_expect_eq!(recompress(b"threshold=-1").err(), Some(EINVAL));
        kunit_expect_eq!(recompress(b"threshold=4294967296").err(), Some(ERANGE));
        kunit_expect_eq!(recompress(b"max_pages=x").err(), Some(EINVAL));
        // An `=` first in an argument is no separator to next_arg(): "=1" has no value.
        kunit_expect_eq!(recompress(b"=1").err(), Some(EINVAL));
        kunit_expect!(recompress(b"colour=1").is_ok());
        kunit_expect_eq!(
            next_args(b"=a=b").next(),
            Some((&b"=a"[..], Some(&b"b"[..])))
        );
        // Quotes as next_arg() takes them: an opening quote goes from the key too, and a closing
        // one only goes with an opening one (of the argument or of the value).
        let mut it = next_args(b"\"algo=zstd\" type=\"a b\" k=v");
        kunit_expect_eq!(it.next(), Some((&b"algo"[..], Some(&b"zstd"[..]))));
        kunit_expect_eq!(it.next(), Some((&b"type"[..], Some(&b"a b"[..]))));
        kunit_expect_eq!(it.next(), Some((&b"k"[..], Some(&b"v"[..]))));
        kunit_expect_eq!(it.next(), None);
        kunit_expect_eq!(next_args(b"idle\"").next(), Some((&b"idle\""[..], None)));
        kunit_expect_eq!(
            next_args(b"algo=lz4\"").next(),
            Some((&b"algo"[..], Some(&b"lz4\""[..])))
        );
        kunit_expect_eq!(next_args(b"\"idle\"").next(), Some((&b"idle"[..], None)));
        kunit_expect_eq!(next_args(b"a=\"").next(), Some((&b"a"[..], Some(&b""[..]))));
        kunit_expect_eq!(next_args(b"\"").next(), Some((&b""[..], None)));
        kunit_expect_eq!(
            next_args(b"\"=a=\"b\"\"").next(),
            Some((&b"=a"[..], Some(&b"b\""[..])))
        );
        // The kernel's isspace() takes vertical tab and Latin-1's no-break space.
        kunit_expect_eq!(
            next_args(b"\xa0k=v\x0b").next(),
            Some((&b"k"[..], Some(&b"v"[..])))
        );
    }

    #[test]
    fn memparse_suffixes() {
        kunit_expect_eq!(memparse(b"4096"), (4096, true));
        kunit_expect_eq!(memparse(b"1K"), (1024, true));
        kunit_expect_eq!(memparse(b"256M\n"), (256 << 20, true));
        kunit_expect_eq!(memparse(b"1g"), (1 << 30, true));
        kunit_expect_eq!(memparse(b"2T"), (2 << 40, true));
        kunit_expect_eq!(memparse(b"0x1000"), (4096, true));
        kunit_expect_eq!(memparse(b"010"), (8, true));
        kunit_expect_eq!(memparse(b"0"), (0, true));
        kunit_expect_eq!(memparse(b""), (0, false));
        kunit_expect_eq!(memparse(b"abc"), (0, false));
        kunit_expect_eq!(memparse(b"-1"), (0, false));
        kunit_expect_eq!(memparse(b"12Q"), (12, true));
        // A suffix alone is consumed, as by C: zram's mem_limit takes these as 0.
        kunit_expect_eq!(memparse(b"K"), (0, true));
        kunit_expect_eq!(memparse(b"true"), (0, true));
        kunit_expect_eq!(memparse(b"e"), (0, true));
        kunit_expect_eq!(memparse(b"x"), (0, false));
    }

    /// The largest numbers each parser takes, and the next: the value, an error, or (memparse) a
    /// value wrapped as by C, never an overflow.
    #[test]
    fn extreme_numbers() -> Result {
        let a = writeback(b"page_index=18446744073709551615")?;
        // The index below relies on it.
        assert_eq!(a.ranges.len(), 1);
        kunit_expect_eq!((a.ranges[0].0, a.ranges[0].1), (u64::MAX, u64::MAX));
        let a = writeback(b"page_indexes=18446744073709551615-18446744073709551615")?;
        assert_eq!(a.ranges.len(), 1);
        kunit_expect_eq!((a.ranges[0].0, a.ranges[0].1), (u64::MAX, u64::MAX));
        let r = recompress(b"priority=4294967295 threshold=4294967295")?;
        kunit_expect_eq!(
            (r.priority, r.threshold),
            (Some(u32::MAX), u64::from(u32::MAX))
        );
        let r = recompress(b"max_pages=18446744073709551615")?;
        kunit_expect_eq!(r.max_pages, u64::MAX);
        kunit_expect_eq!(recompress(b"priority=4294967296").err(), Some(ERANGE));
        kunit_expect_eq!(recompress(b"priority=-1").err(), Some(EINVAL));
        kunit_expect_eq!(
            recomp_algorithm(b"algo=zstd priority=-2147483648"),
            Ok((&b"zstd"[..], i32::MIN))
        );
        let p = algorithm_params(b"priority=2147483647 level=-2147483648");
        kunit_expect_eq!(
            p.map(|p| (p.priority, p.level)),
            Ok((Some(i32::MAX), Some(i32::MIN)))
        );
        let p = algorithm_params(b"deflate.winbits=-2147483649");
        kunit_expect_eq!(p.err(), Some(ERANGE));
        kunit_expect_eq!(memparse(b"18446744073709551615"), (u64::MAX, true));
        kunit_expect_eq!(memparse(b"18446744073709551616"), (0, true));
        kunit_expect_eq!(memparse(b"16E"), (0, true));
        kunit_expect_eq!(memparse(b"0xffffffffffffffffK"), (u64::MAX << 10, true));
        kunit_expect_eq!(kstrtoull_base(b"01777777777777777777777", 0), Ok(u64::MAX));
        kunit_expect_eq!(kstrtoull_base(b"02000000000000000000000", 0), Err(ERANGE));
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
