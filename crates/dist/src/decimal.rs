//! Decimal formatting of integers, two digits per division from one table of digit
//! pairs: key names (YCSB's `user` + number, memtier's prefix + number) are formatted
//! on every operation, so these are the hot paths' formatters. (`kvlab-proto` keeps its
//! own for RESP lengths: it depends on nothing.)

/// Two-digit decimal pairs "00".."99": pair `p` is `DIGIT_PAIRS[2p..2p + 2]`.
pub const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes `n` in decimal at the end of `buf` and returns where the digits start. Two
/// digits per division; a number of more than ten digits is split in two first, so
/// that its halves' digits are computed in parallel (key names are formatted on every
/// operation, and YCSB's hashed key numbers have 19 digits).
#[inline]
pub fn format_u64(n: u64, buf: &mut [u8; 20]) -> usize {
    const E10: u64 = 10_000_000_000;
    let put = |buf: &mut [u8; 20], at: usize, two: u64| {
        let i = two as usize * 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[i..i + 2]);
    };
    let mut at = buf.len();
    let mut high = n;
    if n >= E10 {
        // The low ten digits, zeros included.
        let mut low = n % E10;
        high = n / E10;
        for _ in 0..5 {
            at -= 2;
            put(buf, at, low % 100);
            low /= 100;
        }
    }
    while high >= 100 {
        at -= 2;
        put(buf, at, high % 100);
        high /= 100;
    }
    if high >= 10 {
        at -= 2;
        put(buf, at, high);
    } else {
        at -= 1;
        buf[at] = b'0' + high as u8;
    }
    at
}

/// Appends `n` in decimal, two digits per division: a key is formatted per request.
/// The digits are written straight into the vector's spare capacity: through a stack
/// buffer they would cost a copy (a call to `memcpy` for 1–20 bytes, or a wide load
/// that stalls on the narrow stores just made).
#[inline]
pub fn push_u64(mut n: u64, out: &mut Vec<u8>) {
    let digits = n.checked_ilog10().map_or(1, |d| d as usize + 1);
    let len = out.len();
    out.reserve(digits);
    let dst = &mut out.spare_capacity_mut()[..digits];
    let mut at = digits;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        dst[at].write(DIGIT_PAIRS[pair]);
        dst[at + 1].write(DIGIT_PAIRS[pair + 1]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        dst[0].write(DIGIT_PAIRS[pair]);
        dst[1].write(DIGIT_PAIRS[pair + 1]);
    } else {
        dst[0].write(b'0' + n as u8);
    }
    // SAFETY: the `digits` bytes after `len` are within the capacity reserved above and
    // were all written: pairs from the end down to index 2 or 1, then the first one or
    // two digits.
    unsafe { out.set_len(len + digits) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formatters_agree_with_std_at_every_magnitude() {
        let mut n = 1u64;
        let mut samples = vec![0, u64::MAX];
        for _ in 0..20 {
            samples.extend([
                n.saturating_sub(1),
                n,
                n.saturating_add(1),
                n.saturating_mul(7),
            ]);
            n = n.saturating_mul(10);
        }
        for n in samples {
            let mut buf = [0u8; 20];
            let at = format_u64(n, &mut buf);
            assert_eq!(&buf[at..], n.to_string().as_bytes(), "format_u64({n})");
            let mut out = b"key:".to_vec();
            push_u64(n, &mut out);
            assert_eq!(out, format!("key:{n}").as_bytes(), "push_u64({n})");
        }
    }
}
