//! Size distributions ([`SizeDist`]) and the samplers behind the cache workload: Walker's
//! alias table, a per-key random source, and the popularity choosers that
//! [`crate::generator`] does not have (Zipf with θ ≥ 1, CacheBench's truncated normal).

use std::fmt;

use rand_core::{impls, RngCore};

use crate::generator::{next_below, next_f64};

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
/// Sizes accept the binary unit suffixes of [`crate::CacheSpec::parse_bytes`] (`4KiB`, `1M`);
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
                    p.weight * (b - a + 1) as f64 / (p.hi - p.lo + 1) as f64
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

/// Parses a byte count with an optional binary unit suffix, case-insensitive: `B`,
/// `K`/`KB`/`KiB` (2¹⁰), `M`/`MB`/`MiB` (2²⁰), `G`/`GB`/`GiB` (2³⁰), `T`/`TB`/`TiB` (2⁴⁰).
/// Every suffix is binary, as memcached's `-m` and RocksDB's options read them. A
/// fractional number is allowed with a suffix (`1.5GiB`) and rounded down to bytes.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    if number.is_empty() {
        return None;
    }
    if let Ok(n) = number.parse::<u64>() {
        return n.checked_mul(1u64 << shift);
    }
    if shift == 0 {
        return None;
    }
    let x: f64 = number.parse().ok()?;
    let bytes = x * (1u64 << shift) as f64;
    (bytes.is_finite() && bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// Walker's alias table (Vose's construction, "A linear algorithm for generating random
/// numbers with a given distribution", IEEE TSE 1991): one 64-bit random word `x` picks
/// an entry in O(1) — `x · columns / 2⁶⁴` the column, the high 32 bits of the
/// fraction the coin (so every column is equally likely to within 2⁻⁶⁴ · columns).
#[derive(Clone, Debug)]
pub(crate) struct Alias {
    /// Per column: the coin below which the column itself is taken, in units of 2⁻³²,
    /// and the column's alias — side by side, so a draw reads one cache line.
    columns: Vec<(u32, u32)>,
}

impl Alias {
    /// The caller guarantees: `weights` is non-empty, has at most `u32::MAX` entries,
    /// every weight is finite and ≥ 0, and their sum is positive.
    pub(crate) fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut threshold = vec![u32::MAX; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            threshold[s] = (scaled[s] * 4_294_967_296.0).min(u32::MAX as f64) as u32;
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // What is left has (up to rounding) probability 1: keeps itself.
        Alias {
            columns: threshold.into_iter().zip(alias).collect(),
        }
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.columns.len()
    }

    /// The entry for the random word `x`.
    #[inline]
    pub(crate) fn sample(&self, x: u64) -> usize {
        let wide = u128::from(x) * self.columns.len() as u128;
        let i = (wide >> 64) as usize;
        let coin = ((wide as u64) >> 32) as u32;
        let (threshold, alias) = self.columns[i];
        if coin < threshold {
            i
        } else {
            alias as usize
        }
    }
}

/// Draws from a [`SizeDist`]: an alias table over the pieces, then a uniform draw
/// within the piece.
#[derive(Clone, Debug)]
pub(crate) struct SizeSampler {
    alias: Alias,
    /// Per piece: its low end and its number of sizes (`hi − lo + 1`, 0 for the full
    /// `u64` range, which never occurs for sizes).
    pieces: Vec<(u64, u64)>,
}

impl SizeSampler {
    pub(crate) fn new(dist: &SizeDist) -> SizeSampler {
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

    #[inline]
    pub(crate) fn sample<R: RngCore>(&self, rng: &mut R) -> u64 {
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

/// A counter-based random source (SplitMix64, Steele et al., OOPSLA 2014) seeded per
/// key, so a key's size, padding and TTL are functions of the key alone.
#[derive(Clone, Debug)]
pub(crate) struct KeyRng {
    state: u64,
}

impl KeyRng {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// The stream of key `index` for the purpose `salt`.
    #[inline]
    pub(crate) fn new(index: u64, salt: u64) -> KeyRng {
        KeyRng {
            state: mix64(index ^ salt),
        }
    }
}

/// SplitMix64's output function (a bijection on `u64`).
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl RngCore for KeyRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        mix64(self.state)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        impls::fill_bytes_via_next(self, dest);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

/// Zipf-distributed ranks `0..n` (rank 0 the most popular, P(k) ∝ 1/(k+1)^s) for any
/// exponent `s > 0` (the cache workload uses it for s ≥ 1), exactly, in two parts:
///
/// - the **head**, the first [`ZipfMixture::HEAD`] ranks (all of them when `n` is no
///   larger), and one more entry standing for the whole tail, with weights `1/k^s` and
///   the tail's `Σ_{k>head} 1/k^s`, in a Walker alias table: one random word and one
///   memory read per draw (the table takes 8 bytes per entry, 512 KiB in all);
/// - the **tail**, drawn only when the alias table picks its entry (6 % of draws for
///   s = 1.2 over 10⁷ keys), by rejection-inversion restricted to the tail's ranks
///   ([`ZipfRejection`]).
///
/// Each rank's probability is its weight over the total, as for one sampler over all
/// ranks; the tail's weight is summed directly up to 10⁵ terms and by Euler–Maclaurin
/// beyond (relative error far below 10⁻¹⁵ from rank 2¹⁶ on).
#[derive(Clone, Debug)]
pub(crate) struct ZipfMixture {
    alias: Alias,
    /// Ranks in the alias table; the entry at `head` (when present) is the tail.
    head: u64,
    tail: Option<ZipfRejection>,
}

impl ZipfMixture {
    /// Ranks drawn from the alias table.
    pub(crate) const HEAD: u64 = 1 << 16;
    /// Up to this many tail terms are summed directly.
    const DIRECT_TAIL_TERMS: u64 = 100_000;

    /// The caller guarantees `n ≥ 1` and a finite `exponent > 0`.
    pub(crate) fn new(n: u64, exponent: f64) -> ZipfMixture {
        ZipfMixture::with_head(n, exponent, Self::HEAD)
    }

    /// As [`ZipfMixture::new`] with `head ≥ 1` ranks in the alias table.
    pub(crate) fn with_head(n: u64, exponent: f64, head: u64) -> ZipfMixture {
        let head = head.clamp(1, n);
        let mut weights: Vec<f64> = (1..=head).map(|k| (k as f64).powf(-exponent)).collect();
        let tail = (head < n).then(|| {
            let tail_weight = if n - head <= Self::DIRECT_TAIL_TERMS {
                (head + 1..=n).map(|k| (k as f64).powf(-exponent)).sum()
            } else {
                crate::generator::euler_maclaurin(head + 1, n, exponent)
            };
            weights.push(tail_weight);
            ZipfRejection::from_rank(head + 1, n, exponent)
        });
        ZipfMixture {
            alias: Alias::new(&weights),
            head,
            tail,
        }
    }

    #[inline]
    pub(crate) fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        let i = self.alias.sample(rng.next_u64()) as u64;
        match &self.tail {
            Some(tail) if i == self.head => tail.next(rng),
            _ => i,
        }
    }
}

/// Zipf-distributed ranks `first − 1 .. n` (0-based: 1-based rank `k` is drawn with
/// probability ∝ 1/k^s for `first ≤ k ≤ n`) for any exponent `s > 0`, by
/// rejection-inversion (Hörmann & Derflinger, "Rejection-inversion to generate variates
/// from monotone discrete distributions", ACM TOMACS 1996; the formulation of Apache
/// Commons RNG's `RejectionInversionZipfSampler`, which starts at rank 1). Expected O(1)
/// per draw with no normalisation constant, so it also serves θ ≥ 1, where the
/// algorithm of [`crate::generator::Zipfian`] does not apply.
#[derive(Clone, Debug)]
pub(crate) struct ZipfRejection {
    first: f64,
    n: f64,
    exponent: f64,
    h_integral_first: f64,
    h_integral_n: f64,
    s: f64,
}

impl ZipfRejection {
    /// Ranks `0..n`. The caller guarantees `n ≥ 1` and a finite `exponent > 0`.
    #[cfg(test)]
    pub(crate) fn new(n: u64, exponent: f64) -> ZipfRejection {
        ZipfRejection::from_rank(1, n, exponent)
    }

    /// 1-based ranks `first..=n`, returned 0-based. The caller guarantees
    /// `1 ≤ first ≤ n` and a finite `exponent > 0`.
    pub(crate) fn from_rank(first: u64, n: u64, exponent: f64) -> ZipfRejection {
        let first = first as f64;
        let mut z = ZipfRejection {
            first,
            n: n as f64,
            exponent,
            h_integral_first: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        // Rank `first` takes [H(first + ½) − h(first), H(first + ½)], always accepted;
        // rank k > first takes [H(k − ½), H(k + ½)], accepted on the last h(k) of it.
        z.h_integral_first = z.h_integral(first + 0.5) - z.h(first);
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        // The quick-accept bound f(first + 1), f(x) = x − H⁻¹(H(x + ½) − h(x)) being
        // non-decreasing (Theorem 2 of the paper).
        let next = first + 1.0;
        z.s = next - z.h_integral_inverse(z.h_integral(next + 0.5) - z.h(next));
        z
    }

    #[inline]
    pub(crate) fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        loop {
            let u = self.h_integral_n + next_f64(rng) * (self.h_integral_first - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(self.first, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }

    /// h(x) = x^(−s).
    #[inline]
    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    /// H(x) = ∫₁ˣ h = (x^(1−s) − 1)/(1 − s), continuous at s = 1 (ln x).
    #[inline]
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.exponent) * log_x) * log_x
    }

    /// H⁻¹.
    #[inline]
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// ln(1 + x)/x, accurate near 0.
#[inline]
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (eˣ − 1)/x, accurate near 0.
#[inline]
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// CacheBench's popularity when a config has no popularity buckets
/// (`cachebench/workload/FastDiscrete.h`, `NormalDistribution`): a normal with mean
/// (n−1)/2 and standard deviation (n−1)/4, rounded, redrawn while outside `0..n`.
#[derive(Clone, Debug)]
pub(crate) struct TruncatedNormal {
    mean: f64,
    sd: f64,
    max: f64,
}

impl TruncatedNormal {
    pub(crate) fn new(n: u64) -> TruncatedNormal {
        let max = (n - 1) as f64;
        TruncatedNormal {
            mean: max / 2.0,
            sd: max / 4.0,
            max,
        }
    }

    #[inline]
    pub(crate) fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        loop {
            // Marsaglia's polar method; one of the pair is used.
            let (u, s) = loop {
                let u = 2.0 * next_f64(rng) - 1.0;
                let v = 2.0 * next_f64(rng) - 1.0;
                let s = u * u + v * v;
                if s > 0.0 && s < 1.0 {
                    break (u, s);
                }
            };
            let z = u * (-2.0 * s.ln() / s).sqrt();
            let x = (self.mean + self.sd * z).round();
            if (0.0..=self.max).contains(&x) {
                return x as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn parse_forms_and_display_round_trip() {
        for text in [
            "fixed:16",
            "uniform:16-255",
            "pieces:1-7:0.3,8-63:0.7",
            "discrete:100:1,200:3",
            "pieces:5:1,10-20:2",
        ] {
            let d = SizeDist::parse(text).unwrap();
            assert_eq!(SizeDist::parse(&d.to_string()).unwrap(), d, "{text}");
        }
        assert_eq!(SizeDist::parse("42").unwrap(), SizeDist::fixed(42));
        assert_eq!(
            SizeDist::parse("uniform:1KiB-4k").unwrap(),
            SizeDist::uniform(1024, 4096).unwrap()
        );
        for bad in [
            "uniform:9-3",
            "pieces:1-2",
            "pieces:1-2:-1",
            "pieces:1-2:0",
            "zipf:3",
            "fixed:x",
            "discrete:",
        ] {
            assert!(SizeDist::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn means_and_ranges() {
        let d = SizeDist::parse("pieces:0-10:1,100:3").unwrap();
        assert!((d.mean() - (5.0 + 300.0) / 4.0).abs() < 1e-9);
        assert_eq!((d.min(), d.max()), (0, 100));
        assert!((d.probability_in(0, 4) - 0.25 * 5.0 / 11.0).abs() < 1e-12);
        assert!((d.probability_in(0, 1000) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn bytes_units() {
        assert_eq!(parse_bytes("256MiB"), Some(256 << 20));
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("20gb"), Some(20 << 30));
        assert_eq!(parse_bytes("1.5KiB"), Some(1536));
        assert_eq!(parse_bytes("17"), Some(17));
        assert_eq!(parse_bytes("1.5"), None);
        assert_eq!(parse_bytes("GiB"), None);
        assert_eq!(parse_bytes("3 parsecs"), None);
    }

    #[test]
    fn alias_table_matches_weights() {
        let weights = [1.0, 0.0, 5.0, 2.0, 0.5];
        let alias = Alias::new(&weights);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut counts = [0u64; 5];
        let n = 850_000;
        for _ in 0..n {
            counts[alias.sample(rng.next_u64())] += 1;
        }
        assert_eq!(counts[1], 0, "a zero weight is never drawn");
        let total: f64 = weights.iter().sum();
        for (c, w) in counts.iter().zip(weights) {
            let expected = n as f64 * w / total;
            assert!(
                (*c as f64 - expected).abs() <= 5.0 * expected.sqrt() + 1.0,
                "{counts:?}"
            );
        }
    }

    /// Pearson's chi-square of `draws` ranks against the exact Zipf pmf over `0..n`,
    /// with bins of single ranks merged until each expects at least 20 draws; returns
    /// the statistic and the critical value at p = 0.001 (Wilson–Hilferty).
    fn zipf_chi_square(draws: &[u64], n: u64, exponent: f64) -> (f64, f64) {
        let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-exponent)).collect();
        let total: f64 = weights.iter().sum();
        let mut counts = vec![0u64; n as usize];
        for &d in draws {
            counts[d as usize] += 1;
        }
        let draws_f = draws.len() as f64;
        let (mut stat, mut bins) = (0.0, 0usize);
        let (mut observed, mut expected) = (0u64, 0.0);
        for (c, w) in counts.iter().zip(&weights) {
            observed += c;
            expected += w / total * draws_f;
            if expected >= 20.0 {
                stat += (observed as f64 - expected).powi(2) / expected;
                bins += 1;
                (observed, expected) = (0, 0.0);
            }
        }
        // The last, short bin joins the statistic as is (expected > 0 when non-empty).
        if expected > 0.0 {
            stat += (observed as f64 - expected).powi(2) / expected;
            bins += 1;
        }
        let k = (bins - 1) as f64;
        let a = 2.0 / (9.0 * k);
        (stat, k * (1.0 - a + 3.0902 * a.sqrt()).powi(3))
    }

    #[test]
    fn zipf_mixture_fits_the_exact_pmf() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        // Small heads, so that head, seam and tail all carry many draws.
        for (n, exponent, head) in [
            (3000u64, 1.0, 100u64),
            (3000, 1.2, 100),
            (3000, 2.0, 10),
            (500, 1.5, 1),
            (200, 1.2, 1 << 16),
        ] {
            let z = ZipfMixture::with_head(n, exponent, head);
            let draws: Vec<u64> = (0..1_000_000).map(|_| z.next(&mut rng)).collect();
            assert!(draws.iter().all(|&d| d < n));
            let (stat, critical) = zipf_chi_square(&draws, n, exponent);
            assert!(
                stat < critical,
                "n={n} s={exponent} head={head}: chi-square {stat:.1} ≥ {critical:.1}"
            );
        }
    }

    #[test]
    fn zipf_mixture_tail_mass_on_many_keys() {
        // The default head of 2¹⁶ ranks over 10⁷ keys: the share of draws past the head,
        // and past 10× the head, against direct sums of the pmf.
        let (n, exponent) = (10_000_000u64, 1.2);
        let z = ZipfMixture::new(n, exponent);
        let head = ZipfMixture::HEAD;
        let sum = |a: u64, b: u64| (a..=b).map(|k| (k as f64).powf(-exponent)).sum::<f64>();
        let total = sum(1, n);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
        let draws = 2_000_000u64;
        let (mut past_head, mut past_ten) = (0u64, 0u64);
        for _ in 0..draws {
            let r = z.next(&mut rng);
            past_head += u64::from(r >= head);
            past_ten += u64::from(r >= 10 * head);
        }
        for (what, got, p) in [
            ("past the head", past_head, sum(head + 1, n) / total),
            ("past 10× the head", past_ten, sum(10 * head + 1, n) / total),
        ] {
            let expected = p * draws as f64;
            let sd = (expected * (1.0 - p)).sqrt();
            assert!(
                (got as f64 - expected).abs() < 5.0 * sd,
                "{what}: {got} draws, expected {expected:.0} ± {sd:.0}"
            );
        }
    }

    #[test]
    fn zipf_rejection_head_frequencies() {
        for exponent in [0.7, 1.0, 1.5] {
            let n = 1000u64;
            let z = ZipfRejection::new(n, exponent);
            let norm: f64 = (1..=n).map(|k| (k as f64).powf(-exponent)).sum();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
            let draws = 400_000;
            let mut counts = [0u64; 4];
            for _ in 0..draws {
                let k = z.next(&mut rng);
                assert!(k < n);
                if k < 4 {
                    counts[k as usize] += 1;
                }
            }
            for (k, c) in counts.iter().enumerate() {
                let expected = draws as f64 * ((k + 1) as f64).powf(-exponent) / norm;
                assert!(
                    (*c as f64 - expected).abs() <= 5.0 * expected.sqrt(),
                    "s={exponent} rank {k}: {c} vs {expected:.0}"
                );
            }
        }
    }
}
