//! Cache sizes: absolute (`1000`, `64MiB`) or a fraction of the working set (`5%`).

use std::str::FromStr;

use crate::error::SimError;
use crate::trace::SimTrace;
use crate::Mode;

/// A cache size as given by a user.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Capacity {
    /// Objects (object mode) or bytes (byte mode).
    Absolute(u64),
    /// A fraction of the working set, in (0, 1].
    Fraction(f64),
}

impl Capacity {
    /// The size in objects or bytes for `trace` in `mode`: a fraction becomes
    /// `max(1, int(frac × working set))`, libCacheSim's rule.
    pub fn resolve(self, trace: &SimTrace, mode: Mode) -> u64 {
        self.of_working_set(trace.working_set(mode))
    }

    /// The size for a working set of `working_set` objects or bytes (as
    /// [`Capacity::resolve`]; a stream counts it in a pass before the simulation).
    pub fn of_working_set(self, working_set: u64) -> u64 {
        match self {
            Capacity::Absolute(n) => n,
            Capacity::Fraction(f) => ((f * working_set as f64) as u64).max(1),
        }
    }

    /// True for a share of the working set (which must be known before simulating).
    pub fn is_fraction(self) -> bool {
        matches!(self, Capacity::Fraction(_))
    }
}

impl FromStr for Capacity {
    type Err = SimError;

    /// `1000` (a count), `64KiB`/`64MiB`/`1GiB`/`1TiB` (powers of 1024), `64KB`/`64MB`/
    /// `1GB`/`1TB` (powers of 1000), `64k`/`64m`/`1g` (powers of 1024, as libCacheSim's
    /// cachesim reads them), `5%` or `0.05` (a fraction of the working set).
    fn from_str(s: &str) -> Result<Capacity, SimError> {
        let err = |reason| SimError::Capacity {
            text: s.to_string(),
            reason,
        };
        let t = s.trim();
        if let Some(p) = t.strip_suffix('%') {
            let v: f64 = p.trim().parse().map_err(|_| err("not a number before %"))?;
            if !(v > 0.0 && v <= 100.0) {
                return Err(err("a percentage must be in (0, 100]"));
            }
            return Ok(Capacity::Fraction(v / 100.0));
        }
        if t.contains('.') && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
            let v: f64 = t.parse().map_err(|_| err("not a number"))?;
            if !(v > 0.0 && v <= 1.0) {
                return Err(err("a fraction must be in (0, 1]"));
            }
            return Ok(Capacity::Fraction(v));
        }
        let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(digits_end);
        let n: u64 = num.parse().map_err(|_| err("expected digits"))?;
        let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kib" => 1 << 10,
            "m" | "mib" => 1 << 20,
            "g" | "gib" => 1 << 30,
            "t" | "tib" => 1 << 40,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            "tb" => 1_000_000_000_000,
            _ => return Err(err("unknown unit")),
        };
        let v = n.checked_mul(mult).ok_or_else(|| err("too large"))?;
        if v == 0 {
            return Err(err("a cache size must be positive"));
        }
        Ok(Capacity::Absolute(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counts_units_and_fractions() {
        assert_eq!(
            "1000".parse::<Capacity>().unwrap(),
            Capacity::Absolute(1000)
        );
        assert_eq!(
            "64MiB".parse::<Capacity>().unwrap(),
            Capacity::Absolute(64 << 20)
        );
        assert_eq!(
            "2GB".parse::<Capacity>().unwrap(),
            Capacity::Absolute(2_000_000_000)
        );
        assert_eq!(
            "1g".parse::<Capacity>().unwrap(),
            Capacity::Absolute(1 << 30)
        );
        assert_eq!("5%".parse::<Capacity>().unwrap(), Capacity::Fraction(0.05));
        assert_eq!("0.1".parse::<Capacity>().unwrap(), Capacity::Fraction(0.1));
        for bad in ["", "0", "12XB", "150%", "1.5", "-3"] {
            assert!(bad.parse::<Capacity>().is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn a_fraction_is_at_least_one() {
        let t = SimTrace::from_ids([1, 2, 3]);
        assert_eq!(Capacity::Fraction(0.01).resolve(&t, Mode::Object), 1);
        assert_eq!(Capacity::Fraction(0.7).resolve(&t, Mode::Object), 2);
    }
}
