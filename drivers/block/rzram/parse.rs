// SPDX-License-Identifier: GPL-2.0

//! Parsers for sysfs input: pure functions with the semantics, and the errors, of the C parsers
//! zram uses (`memparse()`, `kstrtou16()`, `kstrtoint()`, `kstrtoul()`, `kstrtoull()`,
//! `sysfs_streq()`, `next_arg()`).

use kernel::{error::code::*, prelude::*};

/// What C sees of a sysfs write: the bytes before the first NUL.
pub(crate) fn c_str(input: &[u8]) -> &[u8] {
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
pub(crate) fn next_args(input: &[u8]) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
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
}
