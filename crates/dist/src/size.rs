//! Size distributions ([`SizeDist`]: fixed, uniform, pieces, discrete — CacheBench's
//! value-size and TTL forms) and their sampler, and byte sizes with units
//! ([`parse_bytes`]).

use std::fmt;

use rand_core::RngCore;

use kvlab_core::parse_bytes;

use crate::{next_below, Alias};

/// One piece of a [`SizeDist`]: every size in `lo..=hi` is equally likely, and the piece
/// is chosen with probability `weight / Σ weights`.
#[derive(Clone, Debug, PartialEq)]
pub struct SizePiece {
    /// Smallest size of the piece, in bytes (or seconds for a TTL).
    pub lo: u64,
    /// Largest size of the piece, inclusive.
    pub hi: u64,
    /// Relative weight (need not be normalised).
    pub weight: f64,
}

/// A distribution of sizes (key, value or TTL): a weighted mix of uniform integer ranges.
///
/// A fixed size is one piece `n..=n`; a uniform range one piece; a discrete distribution
/// (CacheBench's `valSizeRange` with as many probabilities as values) is pieces with
/// `lo == hi`; a piecewise-uniform one (`valSizeRange` with one more boundary than
/// probabilities) is pieces `r[i]..=r[i+1]-1`.
///
/// Text form ([`SizeDist::parse`], and what `Display` prints):
///
/// - `N` or `fixed:N`
/// - `uniform:A-B` (both inclusive)
/// - `pieces:A-B:W,C-D:W,…` (a piece may be a single size `A:W`)
/// - `discrete:V:W,V:W,…`
///
/// Sizes accept the binary unit suffixes of [`kvlab_core::parse_bytes`] (`4KiB`, `1M`);
/// weights are
/// non-negative numbers with a positive sum.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeDist {
    pieces: Vec<SizePiece>,
}

impl SizeDist {
    /// Always `n`.
    pub fn fixed(n: u64) -> SizeDist {
        SizeDist {
            pieces: vec![SizePiece {
                lo: n,
                hi: n,
                weight: 1.0,
            }],
        }
    }

    /// Uniform over `lo..=hi`; `None` when `lo > hi`.
    pub fn uniform(lo: u64, hi: u64) -> Option<SizeDist> {
        (lo <= hi).then(|| SizeDist {
            pieces: vec![SizePiece {
                lo,
                hi,
                weight: 1.0,
            }],
        })
    }

    /// A mix of pieces. Errors (as "what was expected") when there is no piece, a piece
    /// has `lo > hi`, a weight is negative or not finite, or the weights sum to 0.
    pub fn from_pieces(pieces: Vec<SizePiece>) -> Result<SizeDist, String> {
        if pieces.is_empty() {
            return Err("at least one size".into());
        }
        if pieces.len() > u32::MAX as usize {
            return Err("at most 4294967295 pieces".into());
        }
        for p in &pieces {
            if p.lo > p.hi {
                return Err(format!("ranges with low ≤ high (got {}-{})", p.lo, p.hi));
            }
            if !(p.weight.is_finite() && p.weight >= 0.0) {
                return Err(format!("non-negative finite weights (got {})", p.weight));
            }
        }
        if pieces.iter().map(|p| p.weight).sum::<f64>() <= 0.0 {
            return Err("weights with a positive sum".into());
        }
        Ok(SizeDist { pieces })
    }

    /// Parses the text form (see the type's docs). The error says what was expected.
    pub fn parse(text: &str) -> Result<SizeDist, String> {
        const EXPECTED: &str = "`N`, `fixed:N`, `uniform:A-B`, `pieces:A-B:W,…` or \
                                `discrete:V:W,…` (sizes may carry KiB/MiB/GiB suffixes)";
        let text = text.trim();
        let (form, rest) = match text.split_once(':') {
            Some((form, rest)) => (form.trim(), rest.trim()),
            None => ("fixed", text),
        };
        let bytes = |s: &str| parse_bytes(s).ok_or_else(|| format!("{EXPECTED}; bad size `{s}`"));
        let range = |s: &str| -> Result<(u64, u64), String> {
            match s.split_once('-') {
                Some((a, b)) => Ok((bytes(a)?, bytes(b)?)),
                None => {
                    let n = bytes(s)?;
                    Ok((n, n))
                }
            }
        };
        match form {
            "fixed" => Ok(SizeDist::fixed(bytes(rest)?)),
            "uniform" => {
                let (lo, hi) = range(rest)?;
                SizeDist::uniform(lo, hi).ok_or_else(|| format!("{EXPECTED}; low > high"))
            }
            "pieces" | "discrete" => {
                let mut pieces = Vec::new();
                for item in rest.split(',') {
                    let (r, w) = item
                        .rsplit_once(':')
                        .ok_or_else(|| format!("{EXPECTED}; `{item}` has no `:weight`"))?;
                    let (lo, hi) = if form == "pieces" {
                        range(r.trim())?
                    } else {
                        let n = bytes(r.trim())?;
                        (n, n)
                    };
                    let weight: f64 = w
                        .trim()
                        .parse()
                        .map_err(|_| format!("{EXPECTED}; bad weight `{}`", w.trim()))?;
                    pieces.push(SizePiece { lo, hi, weight });
                }
                SizeDist::from_pieces(pieces).map_err(|e| format!("{EXPECTED}, with {e}"))
            }
            _ => Err(EXPECTED.to_string()),
        }
    }

    /// The pieces, in the order given.
    pub fn pieces(&self) -> &[SizePiece] {
        &self.pieces
    }

    /// The mean size: Σ wᵢ·(loᵢ+hiᵢ)/2 / Σ wᵢ.
    pub fn mean(&self) -> f64 {
        let total: f64 = self.pieces.iter().map(|p| p.weight).sum();
        self.pieces
            .iter()
            .map(|p| p.weight * (p.lo as f64 + p.hi as f64) / 2.0)
            .sum::<f64>()
            / total
    }

    /// The smallest size with a nonzero probability.
    pub fn min(&self) -> u64 {
        self.live().map(|p| p.lo).min().unwrap_or(0)
    }

    /// The largest size with a nonzero probability.
    pub fn max(&self) -> u64 {
        self.live().map(|p| p.hi).max().unwrap_or(0)
    }

    /// The probability that a draw lies in `lo..=hi`.
    pub fn probability_in(&self, lo: u64, hi: u64) -> f64 {
        let total: f64 = self.pieces.iter().map(|p| p.weight).sum();
        self.pieces
            .iter()
            .map(|p| {
                let a = p.lo.max(lo);
                let b = p.hi.min(hi);
                if a > b {
                    0.0
                } else {
                    // In f64: a piece may span every u64, whose count of sizes is not one.
                    p.weight * ((b - a) as f64 + 1.0) / ((p.hi - p.lo) as f64 + 1.0)
                }
            })
            .sum::<f64>()
            / total
    }

    /// A short description for result documents: the full text form for up to 16
    /// pieces, otherwise a summary with the piece count, range and mean.
    pub fn summary(&self) -> String {
        if self.pieces.len() <= 16 {
            self.to_string()
        } else {
            format!(
                "{} pieces over {}-{}, mean {:.1}",
                self.pieces.len(),
                self.min(),
                self.max(),
                self.mean()
            )
        }
    }

    fn live(&self) -> impl Iterator<Item = &SizePiece> {
        self.pieces.iter().filter(|p| p.weight > 0.0)
    }
}

impl fmt::Display for SizeDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pieces.as_slice() {
            [p] if p.lo == p.hi => write!(f, "fixed:{}", p.lo),
            [p] => write!(f, "uniform:{}-{}", p.lo, p.hi),
            pieces => {
                let discrete = pieces.iter().all(|p| p.lo == p.hi);
                f.write_str(if discrete { "discrete:" } else { "pieces:" })?;
                for (i, p) in pieces.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    if p.lo == p.hi {
                        write!(f, "{}:{}", p.lo, p.weight)?;
                    } else {
                        write!(f, "{}-{}:{}", p.lo, p.hi, p.weight)?;
                    }
                }
                Ok(())
            }
        }
    }
}

/// Draws from a [`SizeDist`]: an alias table over the pieces, then a uniform draw
/// within the piece.
#[derive(Clone, Debug)]
pub struct SizeSampler {
    alias: Alias,
    /// Per piece: its low end and its number of sizes (`hi − lo + 1`, 0 for the full
    /// `u64` range, which never occurs for sizes).
    pieces: Vec<(u64, u64)>,
}

impl SizeSampler {
    /// A sampler of `dist`.
    pub fn new(dist: &SizeDist) -> SizeSampler {
        let weights: Vec<f64> = dist.pieces.iter().map(|p| p.weight).collect();
        SizeSampler {
            alias: Alias::new(&weights),
            pieces: dist
                .pieces
                .iter()
                .map(|p| (p.lo, (p.hi - p.lo).wrapping_add(1)))
                .collect(),
        }
    }

    /// The next size.
    #[inline]
    pub fn sample<R: RngCore>(&self, rng: &mut R) -> u64 {
        let piece = if self.alias.len() == 1 {
            0
        } else {
            self.alias.sample(rng.next_u64())
        };
        let (lo, span) = self.pieces[piece];
        if span == 1 {
            lo
        } else {
            lo + next_below(rng, span)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probability_over_every_u64_size() {
        let all = SizeDist::parse("uniform:0-18446744073709551615").unwrap();
        assert_eq!(all.probability_in(0, u64::MAX), 1.0);
        assert_eq!(all.probability_in(0, (1 << 63) - 1), 0.5);
    }
}
