//! The bodies of kvlab-dist's fuzz checks, run on stable by the crate's fuzz smoke test.
//! Not part of the supported API.
//!
//! Each body reads arbitrary bytes as one text form and panics only when an invariant
//! breaks: a parser that panics or fails with an error that says nothing; a size
//! distribution whose text form does not read back the same, or whose draws fall
//! outside its range; a histogram error at a line past the end of the text, or a
//! histogram whose draws exceed its largest value.

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::ycsb::Histogram;
use crate::{SizeDist, SizeSampler};

/// Draws taken from each parsed distribution.
const DRAWS: usize = 64;

/// Reads `data` as a [`SizeDist`] text form. A distribution prints as text that reads
/// back the same; its summary, mean and probabilities are computed without panicking;
/// its draws lie within its range. Returns whether it parsed.
pub fn size_dist(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    let dist = match SizeDist::parse(&text) {
        Ok(dist) => dist,
        Err(e) => {
            assert!(!e.trim().is_empty(), "an error that says nothing");
            return false;
        }
    };
    let printed = dist.to_string();
    let again = SizeDist::parse(&printed)
        .unwrap_or_else(|e| panic!("`{printed}` (printed from `{text}`) does not parse: {e}"));
    assert_eq!(
        again.to_string(),
        printed,
        "a text form that does not read back"
    );
    let _ = dist.summary();
    let _ = dist.mean();
    let (min, max) = (dist.min(), dist.max());
    assert!(min <= max, "min {min} > max {max} of `{printed}`");
    let p = dist.probability_in(0, u64::MAX);
    assert!(p.is_nan() || p > 0.999, "P(any size) = {p} for `{printed}`");
    let _ = dist.probability_in(min, min);
    let sampler = SizeSampler::new(&dist);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(data.len() as u64);
    for _ in 0..DRAWS {
        let x = sampler.sample(&mut rng);
        assert!(
            dist.pieces().iter().any(|p| (p.lo..=p.hi).contains(&x)),
            "a draw {x} outside `{printed}`"
        );
    }
    true
}

/// Reads `data` as a YCSB histogram file. An error's line lies within the text; a
/// histogram's draws are at most its largest value. Returns whether it parsed.
pub fn histogram(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    let h = match Histogram::parse(&text) {
        Ok(h) => h,
        Err((line, message)) => {
            assert!(!message.trim().is_empty(), "an error that says nothing");
            let lines = text.lines().count().max(1);
            assert!(
                (1..=lines).contains(&line),
                "an error at line {line} of {lines}: {message}"
            );
            return false;
        }
    };
    let max = h.max_value();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(data.len() as u64);
    for _ in 0..DRAWS {
        let x = h.next(&mut rng);
        assert!(x <= max, "a draw {x} above the largest value {max}");
    }
    true
}
