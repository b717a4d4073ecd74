//! Allocation-free decimal formatting and parsing shared by both protocols.

use std::fmt::Write as _;

const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The two ASCII digits of `n` (below 100).
#[inline(always)]
pub(crate) fn two_digits(n: usize) -> [u8; 2] {
    let i = (n % 100) * 2;
    [DIGIT_PAIRS[i], DIGIT_PAIRS[i + 1]]
}

/// Formats `n` in decimal into the end of `buf`, returning the start index of the digits.
#[inline]
pub(crate) fn fmt_u64(buf: &mut [u8; 20], mut n: u64) -> usize {
    let mut i = 20;
    while n >= 100 {
        let r = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i] = DIGIT_PAIRS[r];
        buf[i + 1] = DIGIT_PAIRS[r + 1];
    }
    if n >= 10 {
        let r = n as usize * 2;
        i -= 2;
        buf[i] = DIGIT_PAIRS[r];
        buf[i + 1] = DIGIT_PAIRS[r + 1];
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    i
}

/// Appends `n` in decimal.
#[inline]
pub(crate) fn put_u64(out: &mut Vec<u8>, n: u64) {
    if n < 10 {
        out.push(b'0' + n as u8);
        return;
    }
    if n < 100 {
        out.extend_from_slice(&two_digits(n as usize));
        return;
    }
    let mut buf = [0u8; 20];
    let start = fmt_u64(&mut buf, n);
    out.extend_from_slice(&buf[start..]);
}

/// Appends `n` in decimal, with a `-` when negative.
#[inline]
pub(crate) fn put_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    put_u64(out, n.unsigned_abs());
}

/// A fixed stack buffer that `fmt::Write` can fill; fails when full.
struct StackBuf {
    buf: [u8; 64],
    len: usize,
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Formats a double the shortest way that reads back to the same value (`1.5`, `1e300`,
/// `inf`, `-inf`, `NaN`), in a stack buffer, and hands the bytes to `f`.
pub(crate) fn with_f64<R>(x: f64, f: impl FnOnce(&[u8]) -> R) -> R {
    let mut sb = StackBuf {
        buf: [0; 64],
        len: 0,
    };
    // Debug is the shortest round-tripping form and switches to exponents for very large
    // and very small magnitudes, so it always fits in 64 bytes; the fallback is defensive.
    if write!(sb, "{x:?}").is_ok() {
        f(&sb.buf[..sb.len])
    } else {
        f(format!("{x:e}").as_bytes())
    }
}

/// Parses an unsigned decimal (digits only, at most 19 so it cannot overflow `u64`).
#[inline]
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return parse_u64_long(s);
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

/// The slow path of [`parse_u64`]: 20 digits (with leading zeros or up to `u64::MAX`).
#[cold]
fn parse_u64_long(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Parses a signed decimal with an optional leading `-` or `+`.
pub(crate) fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let v = parse_u64(digits)?;
    if neg {
        if v <= i64::MAX as u64 + 1 {
            Some(0i64.wrapping_sub(v as i64))
        } else {
            None
        }
    } else {
        i64::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_display() {
        for n in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            101,
            999,
            1000,
            12345,
            u32::MAX as u64,
            u64::MAX,
            u64::MAX - 1,
            10u64.pow(19),
        ] {
            let mut out = Vec::new();
            put_u64(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
        for n in [0i64, -1, -10, i64::MIN, i64::MAX, 42] {
            let mut out = Vec::new();
            put_i64(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }

    #[test]
    fn doubles_round_trip() {
        for x in [
            0.0,
            -0.0,
            1.5,
            1e300,
            -1e-300,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
        ] {
            let s = with_f64(x, |b| String::from_utf8(b.to_vec()).unwrap());
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), x.to_bits(), "{s}");
        }
        assert_eq!(with_f64(f64::INFINITY, |b| b.to_vec()), b"inf");
        assert_eq!(with_f64(f64::NEG_INFINITY, |b| b.to_vec()), b"-inf");
    }

    #[test]
    fn parses_integers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"000000000000000000001"), Some(1));
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        assert_eq!(parse_i64(b"+5"), Some(5));
        assert_eq!(parse_i64(b"-"), None);
    }
}
