//! [`rfc3339`] and [`parse_rfc3339`]: UTC timestamps without a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// Formats `t` as an RFC 3339 UTC timestamp with milliseconds:
/// `2023-11-14T22:13:20.000Z`. Times before 1970 are formatted too.
pub fn rfc3339(t: SystemTime) -> String {
    let ms: i128 = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i128,
        Err(e) => -(e.duration().as_millis() as i128),
    };
    let days = ms.div_euclid(86_400_000) as i64;
    let ms_of_day = ms.rem_euclid(86_400_000) as i64;
    let (year, month, day) = civil_from_days(days);
    let (h, m, s, milli) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// Reads an RFC 3339 timestamp in UTC as [`rfc3339`] writes it —
/// `2023-11-14T22:13:20.123Z`, the fraction optional and of any length, `Z` or `+00:00`
/// (`z`, a space for the `T`, and other offsets are read too). `None` when it is not one.
pub fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, m, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let mut at = 19;
    let mut nanos: i128 = 0;
    if b[at] == b'.' {
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 {
            return None;
        }
        let frac = &s[at + 1..at + 1 + digits.min(9)];
        nanos = frac.parse::<i128>().ok()? * 10i128.pow(9 - frac.len() as u32);
        at += 1 + digits;
    }
    let offset_s: i64 = match &s[at..] {
        "Z" | "z" => 0,
        zone if zone.len() == 6 && matches!(&zone[..1], "+" | "-") && &zone[3..4] == ":" => {
            let (zh, zm) = (num(at + 1..at + 3)?, num(at + 4..at + 6)?);
            let o = zh * 3600 + zm * 60;
            if &zone[..1] == "-" {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month as u32, day as u32);
    let secs = days * 86_400 + h * 3600 + m * 60 + sec - offset_s;
    let total = i128::from(secs) * 1_000_000_000 + nanos;
    let d = std::time::Duration::from_nanos(total.unsigned_abs().try_into().ok()?);
    if total >= 0 {
        UNIX_EPOCH.checked_add(d)
    } else {
        UNIX_EPOCH.checked_sub(d)
    }
}

/// The day number counted from 1970-01-01 of a proleptic Gregorian date — Howard
/// Hinnant's `days_from_civil`, the inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400); // [0, 399]
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 }); // [0, 11]
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day number counted from 1970-01-01 — Howard Hinnant's
/// `civil_from_days` (<https://howardhinnant.github.io/date_algorithms.html>).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32; // [1, 12]
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// What `rfc3339` writes reads back to the same instant; offsets and fractions of
    /// any length are read; what is not a timestamp is refused.
    #[test]
    fn timestamps_read_back() {
        for ms in [0u64, 951_782_400_000, 1_700_000_000_123, 4_102_444_799_999] {
            let t = UNIX_EPOCH + Duration::from_millis(ms);
            assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t), "{ms}");
        }
        let before = UNIX_EPOCH - Duration::from_millis(1);
        assert_eq!(parse_rfc3339(&rfc3339(before)), Some(before));
        let t = UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
        assert_eq!(parse_rfc3339("2023-11-14T22:13:20.123456789Z"), Some(t));
        assert_eq!(
            parse_rfc3339("2023-11-14T23:13:20.123456789+01:00"),
            Some(t)
        );
        let whole = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_rfc3339("2023-11-14T22:13:20Z"), Some(whole));
        for bad in [
            "",
            "2023-11-14",
            "2023-11-14T22:13:20",
            "2023-13-14T22:13:20Z",
            "2023-11-14T22:13:20.Z",
            "2023-11-14T22:13:20+0100",
            "2023-11-14T22:1x:20Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn known_instants() {
        let at = |ms: u64| rfc3339(UNIX_EPOCH + Duration::from_millis(ms));
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(at(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH - Duration::from_millis(1)),
            "1969-12-31T23:59:59.999Z"
        );
    }
}
