//! Statistics over rounds: what `kvlab compare` and `kvlab report` say about a figure
//! measured several times.
//!
//! - [`median`] and [`bootstrap_median_ci`]: a figure's median over rounds and a
//!   percentile-bootstrap confidence interval of it (Efron & Tibshirani 1993, ch. 13),
//!   resampled with a seeded Xoshiro256++ so the same rounds always print the same
//!   interval.
//! - [`bootstrap_change_ci`]: the interval of the relative change of the median from A
//!   to B, `median(B) / median(A) − 1`, A and B resampled independently.
//! - [`mann_whitney_u`]: the two-sided Mann–Whitney U test, as Go's `benchstat` uses it
//!   (`github.com/aclements/go-moremath/stats/utest.go`): the exact distribution of U for
//!   samples without ties of at most [`EXACT_LIMIT`] values, else the normal
//!   approximation with the tie and continuity corrections (SciPy's
//!   `mannwhitneyu(method="asymptotic")`).
//! - [`mann_kendall`] and [`theil_sen_slope`]: whether a series (a run's interval
//!   throughputs) still trends, and by how much per step — the steady-state check of
//!   [`settling`].
//!
//! Nothing here allocates more than a copy of its input per call, and nothing reads a
//! clock: every function is a pure function of its arguments.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The significance level of a verdict: a difference with a p-value below it is called
/// significant (benchstat's default α).
pub const ALPHA: f64 = 0.05;

/// The confidence of the intervals kvlab prints: 95 %.
pub const CONFIDENCE: f64 = 0.95;

/// Bootstrap resamples per interval. 10 000 puts the Monte Carlo error of a 2.5 %
/// percentile well below the spread of a handful of rounds.
pub const RESAMPLES: usize = 10_000;

/// The seed of every bootstrap kvlab prints, so that the same rounds give the same
/// interval on every run and machine.
pub const BOOTSTRAP_SEED: u64 = 0x6b76_6c61_6273_7461; // "kvlabsta"

/// The fewest rounds on each side for which a verdict is given. With 4 rounds each the
/// smallest two-sided exact Mann–Whitney p-value is 2/70 ≈ 0.029 < [`ALPHA`]; with 3 it is
/// 0.1, so no difference could ever be called significant. (benchstat asks for 4–6.)
pub const MIN_ROUNDS: usize = 4;

/// The largest sample (each side) for which [`mann_whitney_u`] uses the exact
/// distribution of U, when there are no ties (go-moremath's `MannWhitneyExactLimit`).
pub const EXACT_LIMIT: usize = 50;

/// How the interval of [`bootstrap_median_ci`] and [`bootstrap_change_ci`] is made, as
/// reports print it.
pub const BOOTSTRAP_METHOD: &str = "percentile bootstrap, 10000 resamples, seeded";

/// A closed interval `[low, high]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The lower bound.
    pub low: f64,
    /// The upper bound.
    pub high: f64,
}

impl Interval {
    /// True when `x` lies in the interval (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Half the interval's width.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// The interval as a two-element array `[low, high]`, as JSON writes it.
    pub fn to_array(self) -> [f64; 2] {
        [self.low, self.high]
    }
}

/// The median of `values` (the mean of the two middle values for an even count); `None`
/// for no values. NaNs sort last.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    median_sorted(&v)
}

fn median_sorted(v: &[f64]) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// The `q` quantile (0 ≤ q ≤ 1) of sorted values by linear interpolation between order
/// statistics — NumPy's default `percentile` method, which SciPy's percentile bootstrap
/// uses.
fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// A uniform index in `0..n` (Lemire's multiply-shift; the bias for a handful of rounds
/// is below 2⁻⁵⁸).
fn index(rng: &mut Xoshiro256PlusPlus, n: usize) -> usize {
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// The median of a resample (with replacement) of `values`, in `scratch`.
fn resampled_median(rng: &mut Xoshiro256PlusPlus, values: &[f64], scratch: &mut Vec<f64>) -> f64 {
    scratch.clear();
    scratch.extend((0..values.len()).map(|_| values[index(rng, values.len())]));
    scratch.sort_by(f64::total_cmp);
    median_sorted(scratch).expect("a resample has as many values as its sample, at least one")
}

/// The percentile interval of bootstrap statistics.
fn percentile_interval(mut stats: Vec<f64>, confidence: f64) -> Interval {
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Interval {
        low: quantile_sorted(&stats, tail),
        high: quantile_sorted(&stats, 1.0 - tail),
    }
}

/// A percentile-bootstrap `confidence` interval (0.95: 95 %) of the median of `values`:
/// `resamples` resamples with replacement, drawn by Xoshiro256++ seeded with `seed`, and
/// the `(1 − confidence)/2` and `(1 + confidence)/2` quantiles of their medians. SciPy's
/// `scipy.stats.bootstrap(..., method="percentile")` computes the same interval from other
/// random resamples. `None` for fewer than two values or non-finite ones: one round has
/// no interval.
pub fn bootstrap_median_ci(
    values: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if values.len() < 2 || resamples == 0 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut scratch = Vec::with_capacity(values.len());
    let stats = (0..resamples)
        .map(|_| resampled_median(&mut rng, values, &mut scratch))
        .collect();
    Some(percentile_interval(stats, confidence))
}

/// A percentile-bootstrap `confidence` interval of the relative change of the median,
/// `median(b) / median(a) − 1` (0.05: B's median is 5 % above A's): each resample draws A
/// and B independently, with replacement, from one Xoshiro256++ stream seeded with
/// `seed`. `None` when either side has fewer than two values, a non-finite value, or a
/// resampled median of A of 0 (no relative change).
pub fn bootstrap_change_ci(
    a: &[f64],
    b: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let usable = |v: &[f64]| v.len() >= 2 && v.iter().all(|x| x.is_finite());
    if !usable(a) || !usable(b) || resamples == 0 {
        return None;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut sa, mut sb) = (Vec::new(), Vec::new());
    let mut stats = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let ma = resampled_median(&mut rng, a, &mut sa);
        let mb = resampled_median(&mut rng, b, &mut sb);
        if ma == 0.0 {
            return None;
        }
        stats.push(mb / ma - 1.0);
    }
    Some(percentile_interval(stats, confidence))
}

/// How [`mann_whitney_u`] computed its p-value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UMethod {
    /// The exact null distribution of U (no ties, both samples of at most
    /// [`EXACT_LIMIT`] values): SciPy's `method="exact"`.
    Exact,
    /// The normal approximation with tie and continuity corrections: SciPy's
    /// `method="asymptotic"` (its default `use_continuity=True`).
    Normal,
}

/// The result of a two-sided Mann–Whitney U test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MannWhitney {
    /// The smaller of the two U statistics (ties count ½), in `0..=n_a·n_b/2`.
    pub u: f64,
    /// The two-sided p-value: the chance, were A and B drawn from one distribution, of a U
    /// at least this far from its mean `n_a·n_b/2`.
    pub p_value: f64,
    /// How the p-value was computed.
    pub method: UMethod,
}

/// The two-sided Mann–Whitney U test of A and B (Mann & Whitney 1947) as benchstat runs
/// it: ranks over both samples (ties get their average rank), `U_a = R_a − n_a(n_a+1)/2`,
/// and the p-value from the exact distribution of U when neither sample has more than
/// [`EXACT_LIMIT`] values and no value ties another, else from the normal approximation
/// `z = (U − n_a n_b/2 ∓ ½) / σ` with `σ² = n_a n_b/12 · ((N+1) − Σ(t³−t)/(N(N−1)))`.
/// (benchstat uses an exact distribution with ties for samples of up to 9; kvlab's tied
/// samples take the normal approximation, as SciPy's do.) `None` when a sample is empty,
/// a value is NaN, or every value is equal — the test then says nothing.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (na, nb) = (a.len(), b.len());
    if na == 0 || nb == 0 || a.iter().chain(b).any(|v| v.is_nan()) {
        return None;
    }
    // Both samples in one sorted list, each value marked with its side.
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, true))
        .chain(b.iter().map(|&v| (v, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut rank_sum_a = 0.0;
    let mut ties = 0.0; // Σ (t³ − t) over runs of equal values
    let mut runs = 0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && all[j].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j share their average.
        let rank = (i + 1 + j) as f64 / 2.0;
        let in_a = all[i..j].iter().filter(|(_, side)| *side).count();
        rank_sum_a += rank * in_a as f64;
        let t = (j - i) as f64;
        ties += t * t * t - t;
        runs += 1;
        i = j;
    }
    if runs == 1 {
        return None;
    }
    let u_a = rank_sum_a - (na * (na + 1)) as f64 / 2.0;
    let u_b = (na * nb) as f64 - u_a;
    let u = u_a.min(u_b);
    let has_ties = ties > 0.0;
    if !has_ties && na <= EXACT_LIMIT && nb <= EXACT_LIMIT {
        let p = if u_a == u_b {
            1.0
        } else {
            (2.0 * exact_u_cdf(na, nb, u as usize)).min(1.0)
        };
        return Some(MannWhitney {
            u,
            p_value: p,
            method: UMethod::Exact,
        });
    }
    let (naf, nbf, nf) = (na as f64, nb as f64, n as f64);
    let mean = naf * nbf / 2.0;
    let sigma = (naf * nbf / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)))).sqrt();
    if sigma == 0.0 {
        return None;
    }
    let mut diff = u - mean;
    // Continuity correction towards the mean (none at the mean: `signum` of 0 is 1).
    if diff != 0.0 {
        diff -= diff.signum() * 0.5;
    }
    let z = diff / sigma;
    let p = (2.0 * normal_cdf(-z.abs())).min(1.0);
    Some(MannWhitney {
        u,
        p_value: p,
        method: UMethod::Normal,
    })
}

/// P(U ≤ u) under the null hypothesis for samples of `m` and `n` values without ties:
/// the number of the `C(m+n, m)` orderings of the two samples whose U is at most `u`,
/// over `C(m+n, m)`. The counts follow the recurrence `f(m, n, u) = f(m−1, n, u−n) +
/// f(m, n−1, u)` (Mann & Whitney 1947), built up in `f64` (C(100, 50) ≈ 1.0e29 is exact
/// enough in a double for a p-value).
fn exact_u_cdf(m: usize, n: usize, u: usize) -> f64 {
    let max_u = m * n;
    // column[i][k] = f(i, j, k) for the current number j of B values; with j = 0 every
    // ordering has U = 0.
    let mut column: Vec<Vec<f64>> = (0..=m)
        .map(|_| {
            let mut counts = vec![0.0; max_u + 1];
            counts[0] = 1.0;
            counts
        })
        .collect();
    for j in 1..=n {
        // f(0, j, ·) stays one ordering with U = 0. Row i − 1 is already at j when row i
        // is updated, and row i still holds f(i, j − 1, ·).
        for i in 1..=m {
            let (done, rest) = column.split_at_mut(i);
            let (below, row) = (&done[i - 1], &mut rest[0]);
            for k in (j..=i * j).rev() {
                row[k] += below[k - j];
            }
        }
    }
    let counts = &column[m];
    let total: f64 = counts.iter().sum();
    let below: f64 = counts[..=u.min(max_u)].iter().sum();
    below / total
}

/// The standard normal distribution function Φ(z).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// The complementary error function, to about 1e-15 relative: the Maclaurin series of
/// erf for |x| < 2.5, the continued fraction of erfc beyond (Abramowitz & Stegun 7.1.5
/// and 7.1.14), evaluated by the modified Lentz method.
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.5 {
        // erf x = 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n+1))
        let mut term = x; // (−1)ⁿ x^(2n+1) / n!
        let mut sum = x;
        let x2 = x * x;
        for n in 1..200 {
            term *= -x2 / n as f64;
            let add = term / (2 * n + 1) as f64;
            sum += add;
            if add.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        return 1.0 - 2.0 / std::f64::consts::PI.sqrt() * sum;
    }
    // erfc x = exp(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …)))))
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..500 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        d = if d == 0.0 { tiny } else { d };
        c = x + a / c;
        c = if c == 0.0 { tiny } else { c };
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

/// The Mann–Kendall trend test of a series (Mann 1945, Kendall 1975).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    /// Kendall's S: Σ sign(xⱼ − xᵢ) over all pairs i < j; positive for a rising series.
    pub s: i64,
    /// The two-sided p-value of S under "no trend", from the normal approximation with the
    /// tie correction (SciPy's `kendalltau(range(n), x, method="asymptotic")`).
    pub p_value: f64,
    /// The Theil–Sen slope ([`theil_sen_slope`]): change per step.
    pub slope: f64,
}

/// The Mann–Kendall test of `values` (in time order) for a monotonic trend:
/// `Var S = (n(n−1)(2n+5) − Σ t(t−1)(2t+5)) / 18` over runs of t equal values, and
/// `z = S/√Var S` — Kendall's τ-b test of the values against their index, as SciPy's
/// `kendalltau(range(n), x, method="asymptotic")` computes it. `None` for fewer than 3
/// values, a NaN, or all values equal.
pub fn mann_kendall(values: &[f64]) -> Option<Trend> {
    let n = values.len();
    if n < 3 || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match values[j].partial_cmp(&values[i]) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && sorted[j] == sorted[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        tie_term += t * (t - 1.0) * (2.0 * t + 5.0);
        i = j;
    }
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - tie_term) / 18.0;
    if var <= 0.0 {
        return None;
    }
    let z = s as f64 / var.sqrt();
    Some(Trend {
        s,
        p_value: (2.0 * normal_cdf(-z.abs())).min(1.0),
        slope: theil_sen_slope(values)?,
    })
}

/// The Theil–Sen estimate of the slope of `values` against their index (Sen 1968): the
/// median of `(xⱼ − xᵢ)/(j − i)` over all pairs i < j. `None` for fewer than 2 values.
pub fn theil_sen_slope(values: &[f64]) -> Option<f64> {
    let n = values.len();
    let mut slopes = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            slopes.push((values[j] - values[i]) / (j - i) as f64);
        }
    }
    median(&slopes)
}

/// The least number of intervals in the examined half of a timeline for the steady-state
/// check; with fewer, [`settling`] says nothing.
pub const SETTLING_MIN_INTERVALS: usize = 6;

/// How much the trend line may move over the examined half, relative to its median,
/// before a significant trend counts as "not settled": 5 %. A smaller drift is within
/// what a machine's noise does to a run; a larger one means the run measured a
/// transition (a warm-up too short, a cache still filling, compactions piling up).
pub const SETTLING_DRIFT: f64 = 0.05;

/// The significance level of the steady-state check: 1 %. Stricter than [`ALPHA`]
/// because every round is tested twice (throughput and p99) and a report holds many
/// rounds: at 5 % one steady round in ten would be flagged for its p99's noise alone.
pub const SETTLING_ALPHA: f64 = 0.01;

/// A series that had not settled: the trend in its last half.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unsettled {
    /// How far the Theil–Sen line moved over the examined half, relative to the half's
    /// median (0.08: it rose by 8 %; negative: it fell).
    pub drift: f64,
    /// The Mann–Kendall p-value of the trend.
    pub p_value: f64,
    /// How many values (intervals) were examined.
    pub n: usize,
}

/// The steady-state check of a run: the last half of `values` (interval throughputs or
/// p99s, in time order) still trends — the Mann–Kendall test is significant at
/// [`SETTLING_ALPHA`] and the Theil–Sen line moves by more than [`SETTLING_DRIFT`] of the
/// median across the half. `None` when it settled, or when the half has fewer than
/// [`SETTLING_MIN_INTERVALS`] values to judge by.
pub fn settling(values: &[f64]) -> Option<Unsettled> {
    let half = &values[values.len() / 2..];
    if half.len() < SETTLING_MIN_INTERVALS {
        return None;
    }
    let trend = mann_kendall(half)?;
    let level = median(half)?;
    if level == 0.0 || trend.p_value >= SETTLING_ALPHA {
        return None;
    }
    let drift = trend.slope * (half.len() - 1) as f64 / level.abs();
    (drift.abs() > SETTLING_DRIFT).then_some(Unsettled {
        drift,
        p_value: trend.p_value,
        n: half.len(),
    })
}

/// A change point found by [`e_divisive`]: the series' distribution changes at `index`
/// (the first value of the new regime).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangePoint {
    /// The index of the first value after the change.
    pub index: usize,
    /// The permutation-test p-value of the split.
    pub p_value: f64,
    /// The split's energy statistic q̂ (larger: a clearer change).
    pub q: f64,
}

/// The divergence q̂ of the best split of `x` into `x[..τ]` and `x[τ..]` with both parts
/// at least `min_size` long, from the energy distance with exponent 1 (Matteson & James
/// 2014, eq. 5): `q̂ = n₁n₂/(n₁+n₂) · (2/(n₁n₂) Σ|xᵢ−yⱼ| − Σ|xᵢ−xₖ|/C(n₁,2) −
/// Σ|yⱼ−yₗ|/C(n₂,2))`. `None` when no split is possible. O(n²): moving the split by one
/// moves one value's distances between the three sums.
fn best_split(x: &[f64], min_size: usize) -> Option<(usize, f64)> {
    let n = x.len();
    let min_size = min_size.max(2);
    if n < 2 * min_size {
        return None;
    }
    let d = |i: usize, j: usize| (x[i] - x[j]).abs();
    // τ = min_size: left x[..τ], right x[τ..].
    let tau0 = min_size;
    let mut within_left = 0.0;
    for i in 0..tau0 {
        for k in i + 1..tau0 {
            within_left += d(i, k);
        }
    }
    let mut within_right = 0.0;
    for j in tau0..n {
        for l in j + 1..n {
            within_right += d(j, l);
        }
    }
    let mut between = 0.0;
    for i in 0..tau0 {
        for j in tau0..n {
            between += d(i, j);
        }
    }
    let q = |tau: usize, between: f64, left: f64, right: f64| {
        let (n1, n2) = (tau as f64, (n - tau) as f64);
        let pairs = |m: f64| m * (m - 1.0) / 2.0;
        n1 * n2 / (n1 + n2) * (2.0 * between / (n1 * n2) - left / pairs(n1) - right / pairs(n2))
    };
    let mut best = (tau0, q(tau0, between, within_left, within_right));
    for tau in tau0 + 1..=n - min_size {
        // x[tau − 1] moves from the right part to the left.
        let m = tau - 1;
        let to_left: f64 = (0..m).map(|i| d(i, m)).sum();
        let to_right: f64 = (m + 1..n).map(|j| d(m, j)).sum();
        between += to_right - to_left;
        within_left += to_left;
        within_right -= to_right;
        let v = q(tau, between, within_left, within_right);
        if v > best.1 {
            best = (tau, v);
        }
    }
    Some(best)
}

/// Change points of a series by E-divisive means (Matteson & James 2014, as MongoDB's
/// and Apache Otava's performance-regression tracking use it): the best split of each
/// segment by the energy statistic (the paper's eq. 5, exponent 1), the strongest
/// segment's split kept while its permutation test (`permutations` shuffles of the
/// segment, drawn by Xoshiro256++ seeded with `seed`) gives p < `alpha`; segments are at
/// least `min_size` values. Returned in index order.
pub fn e_divisive(
    series: &[f64],
    min_size: usize,
    permutations: usize,
    alpha: f64,
    seed: u64,
) -> Vec<ChangePoint> {
    if series.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut cuts: Vec<usize> = vec![0, series.len()];
    let mut found = Vec::new();
    loop {
        // The strongest split over every current segment.
        let mut best: Option<(usize, usize, usize, f64)> = None; // (start, end, τ, q)
        for w in cuts.windows(2) {
            let (s, e) = (w[0], w[1]);
            if let Some((tau, q)) = best_split(&series[s..e], min_size) {
                if best.is_none_or(|b| q > b.3) {
                    best = Some((s, e, s + tau, q));
                }
            }
        }
        let Some((s, e, tau, q)) = best else {
            break;
        };
        // Permutation test: how often a shuffled segment splits as clearly.
        let mut segment = series[s..e].to_vec();
        let mut as_clear = 0;
        for _ in 0..permutations {
            for i in (1..segment.len()).rev() {
                segment.swap(i, index(&mut rng, i + 1));
            }
            if best_split(&segment, min_size).is_some_and(|(_, v)| v >= q) {
                as_clear += 1;
            }
        }
        let p_value = (as_clear + 1) as f64 / (permutations + 1) as f64;
        if p_value >= alpha {
            break;
        }
        found.push(ChangePoint {
            index: tau,
            p_value,
            q,
        });
        cuts.push(tau);
        cuts.sort_unstable();
    }
    found.sort_by_key(|c| c.index);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) {
        assert!(
            (got - want).abs() <= rel * want.abs().max(1e-300),
            "got {got}, want {want}"
        );
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn normal_distribution_matches_scipy() {
        // scipy.stats.norm.cdf(-1.959963984540054), norm.cdf(-5.0), norm.cdf(0.3),
        // norm.cdf(-8.2) (SciPy 1.17.1)
        close(normal_cdf(-1.959963984540054), 0.025, 1e-13);
        close(normal_cdf(-5.0), 2.866515718791933e-07, 1e-12);
        close(normal_cdf(0.3), 0.6179114221889526, 1e-14);
        close(normal_cdf(-8.2), 1.2019351542735735e-16, 1e-11);
        assert_eq!(normal_cdf(0.0), 0.5);
    }

    #[test]
    fn exact_mann_whitney_matches_scipy() {
        // scipy.stats.mannwhitneyu(a, b, alternative="two-sided", method="exact")
        // (SciPy 1.17.1) on each pair below; SciPy reports U of the first sample, kvlab
        // the smaller U.
        let a = [101.2, 99.8, 100.5, 102.1, 98.9];
        let b = [104.3, 103.1, 105.0, 102.8, 104.9];
        let t = mann_whitney_u(&a, &b).unwrap();
        assert_eq!((t.u, t.method), (0.0, UMethod::Exact));
        close(t.p_value, 0.007936507936507936, 1e-12);

        let c = [10.0, 11.5, 9.7, 10.4, 12.2, 10.9];
        let d = [10.8, 12.1, 11.9, 10.6, 12.5, 11.3, 12.0];
        let t = mann_whitney_u(&c, &d).unwrap();
        assert_eq!(t.u, 11.0);
        close(t.p_value, 0.18065268065268064, 1e-12);
        // Symmetric: A and B swapped give the same p-value.
        assert_eq!(mann_whitney_u(&d, &c).unwrap().p_value, t.p_value);

        // The smallest p-value of 4 rounds against 4: 2/70.
        let t = mann_whitney_u(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        close(t.p_value, 0.02857142857142857, 1e-12);

        // At the exact limit's scale: 40 and 45 distinct values,
        // a = [(i*37 % 101) + 0.1 for i in range(40)],
        // b = [(i*53 % 103) + 0.35 for i in range(45)], then b shifted by 12.
        let a: Vec<f64> = (0..40).map(|i| ((i * 37) % 101) as f64 + 0.1).collect();
        let b: Vec<f64> = (0..45).map(|i| ((i * 53) % 103) as f64 + 0.35).collect();
        let t = mann_whitney_u(&a, &b).unwrap();
        assert_eq!(t.method, UMethod::Exact);
        close(t.p_value, 0.6966773272524351, 1e-9);
        let shifted: Vec<f64> = b.iter().map(|v| v + 12.0).collect();
        close(
            mann_whitney_u(&a, &shifted).unwrap().p_value,
            0.18909412056422933,
            1e-9,
        );
    }

    #[test]
    fn tied_samples_take_the_normal_approximation_as_scipy() {
        // scipy.stats.mannwhitneyu(e, f, alternative="two-sided", method="asymptotic")
        // (SciPy 1.17.1): tie and continuity corrections.
        let e = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0];
        let f = [3.0, 4.0, 4.0, 5.0, 5.0, 6.0, 7.0, 7.0, 8.0];
        let t = mann_whitney_u(&e, &f).unwrap();
        assert_eq!((t.u, t.method), (7.5, UMethod::Normal));
        close(t.p_value, 0.006373133838085873, 1e-9);
        let t = mann_whitney_u(&[3.0; 4], &[3.0, 3.0, 3.0, 4.0]).unwrap();
        close(t.p_value, 0.4532547047537364, 1e-9);
        // Past the exact limit: x = arange(60), y = arange(55) + 7.5.
        let x: Vec<f64> = (0..60).map(f64::from).collect();
        let y: Vec<f64> = (0..55).map(|i| f64::from(i) + 7.5).collect();
        let t = mann_whitney_u(&x, &y).unwrap();
        assert_eq!(t.method, UMethod::Normal);
        close(t.p_value, 0.12848379227750423, 1e-9);
    }

    #[test]
    fn mann_whitney_says_nothing_of_equal_or_empty_samples() {
        assert_eq!(mann_whitney_u(&[], &[1.0]), None);
        assert_eq!(mann_whitney_u(&[2.0, 2.0], &[2.0]), None);
        assert_eq!(mann_whitney_u(&[f64::NAN], &[1.0]), None);
        // Identical samples: U at its mean, p = 1.
        let s = [1.0, 2.0, 3.0];
        assert_eq!(mann_whitney_u(&s, &s).unwrap().p_value, 1.0);
    }

    #[test]
    fn bootstrap_median_interval_agrees_with_scipy() {
        // scipy.stats.bootstrap((s,), np.median, confidence_level=0.95,
        // n_resamples=100000, method="percentile",
        // random_state=np.random.default_rng(1)) (SciPy 1.17.1) gave [98.9, 101.6] for s
        // and [98.9, 102.1] for a. The median of a resample is one of a few sample values
        // (or a mean of two), so the seeded resamples land on the same ones.
        let s = [
            98.1, 101.3, 99.7, 100.2, 103.9, 97.5, 100.8, 99.1, 102.4, 100.0,
        ];
        let ci = bootstrap_median_ci(&s, CONFIDENCE, RESAMPLES, BOOTSTRAP_SEED).unwrap();
        close(ci.low, 98.9, 0.002);
        close(ci.high, 101.6, 0.002);
        let a = [101.2, 99.8, 100.5, 102.1, 98.9];
        let ci = bootstrap_median_ci(&a, CONFIDENCE, RESAMPLES, BOOTSTRAP_SEED).unwrap();
        assert_eq!((ci.low, ci.high), (98.9, 102.1));
        // Seeded: the same every time; another seed, nearly the same.
        assert_eq!(
            bootstrap_median_ci(&s, CONFIDENCE, RESAMPLES, BOOTSTRAP_SEED),
            bootstrap_median_ci(&s, CONFIDENCE, RESAMPLES, BOOTSTRAP_SEED)
        );
        assert_eq!(bootstrap_median_ci(&[1.0], CONFIDENCE, RESAMPLES, 1), None);
    }

    #[test]
    fn bootstrap_change_interval_agrees_with_scipy() {
        // scipy.stats.bootstrap((a, b), lambda x, y: np.median(y)/np.median(x) - 1,
        // confidence_level=0.95, n_resamples=100000, method="percentile",
        // vectorized=False, random_state=np.random.default_rng(1)) (SciPy 1.17.1):
        // [0.015810276679841806, 0.05460060667340749]; the point estimate is
        // 0.03781094527363171.
        let a = [101.2, 99.8, 100.5, 102.1, 98.9];
        let b = [104.3, 103.1, 105.0, 102.8, 104.9];
        let ci = bootstrap_change_ci(&a, &b, CONFIDENCE, RESAMPLES, BOOTSTRAP_SEED).unwrap();
        assert!((ci.low - 0.015810276679841806).abs() < 0.002, "{ci:?}");
        assert!((ci.high - 0.05460060667340749).abs() < 0.002, "{ci:?}");
        assert!(ci.contains(0.03781094527363171));
    }

    #[test]
    fn bootstrap_intervals_cover_the_true_median() {
        // Coverage: of 200 samples of 9 from a known distribution (uniform on 0..1,
        // median 0.5), about 95 % of the intervals hold 0.5. The percentile bootstrap of
        // a median is a little conservative on small samples; anything from 88 % up is
        // an interval doing its job.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(29);
        let mut covered = 0;
        for round in 0..200 {
            let sample: Vec<f64> = (0..9)
                .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
                .collect();
            let ci = bootstrap_median_ci(&sample, CONFIDENCE, 2_000, round).unwrap();
            covered += usize::from(ci.contains(0.5));
        }
        assert!((176..=200).contains(&covered), "covered {covered} of 200");
    }

    #[test]
    fn trend_test_and_slope_match_scipy() {
        // scipy.stats.kendalltau(range(len(t)), t, method="asymptotic") and
        // scipy.stats.theilslopes(t).slope (SciPy 1.17.1).
        let t = [
            100.0, 102.0, 101.0, 103.0, 105.0, 104.0, 107.0, 108.0, 107.0, 110.0, 111.0,
        ];
        let trend = mann_kendall(&t).unwrap();
        close(trend.p_value, 0.0001781293054554629, 1e-9);
        assert_eq!(trend.slope, 1.0);
        assert!(trend.s > 0);
        let flat = [
            100.0, 99.0, 101.0, 100.0, 102.0, 100.0, 99.0, 101.0, 100.0, 100.0,
        ];
        let trend = mann_kendall(&flat).unwrap();
        close(trend.p_value, 0.9227452730991282, 1e-9);
        assert_eq!(trend.slope, 0.0);
        assert_eq!(mann_kendall(&[1.0, 1.0, 1.0]), None);
    }

    #[test]
    fn settling_flags_a_run_still_climbing_and_not_a_noisy_flat_one() {
        // Throughput still rising 1 % per interval through the second half.
        let climbing: Vec<f64> = (0..20).map(|i| 1000.0 * (1.0 + 0.01 * i as f64)).collect();
        let u = settling(&climbing).unwrap();
        assert!(u.drift > 0.05 && u.p_value < SETTLING_ALPHA, "{u:?}");
        // Rising fast at first, then flat with noise: settled.
        let settled: Vec<f64> = (0..20)
            .map(|i| {
                let noise = [3.0, -2.0, 1.0, -4.0, 2.0][i % 5];
                1000.0 - 500.0 * (-(i as f64)).exp() + noise
            })
            .collect();
        assert_eq!(settling(&settled), None);
        // A significant but tiny drift (0.05 % per interval) is within noise.
        let creeping: Vec<f64> = (0..40).map(|i| 1000.0 + 0.5 * i as f64).collect();
        assert_eq!(settling(&creeping), None);
        // Too few intervals to judge.
        assert_eq!(settling(&climbing[..10]), None);
    }

    /// A series of `n` values around `level` with deterministic noise of ±`spread`.
    fn noisy(rng: &mut Xoshiro256PlusPlus, n: usize, level: f64, spread: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                level + spread * (2.0 * u - 1.0)
            })
            .collect()
    }

    #[test]
    fn e_divisive_finds_a_step_where_it_is() {
        // Throughput of nightly results: 40 nights at 100, then 30 at 90 (a 10 %
        // regression), noise ±3.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut series = noisy(&mut rng, 40, 100.0, 3.0);
        series.extend(noisy(&mut rng, 30, 90.0, 3.0));
        let found = e_divisive(&series, 3, 199, ALPHA, BOOTSTRAP_SEED);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].index.abs_diff(40) <= 2, "{found:?}");
        assert!(found[0].p_value < ALPHA);
        // Two steps, up then down.
        let mut series = noisy(&mut rng, 25, 50.0, 2.0);
        series.extend(noisy(&mut rng, 25, 60.0, 2.0));
        series.extend(noisy(&mut rng, 25, 45.0, 2.0));
        let at: Vec<usize> = e_divisive(&series, 3, 199, ALPHA, BOOTSTRAP_SEED)
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(at.len(), 2, "{at:?}");
        assert!(at[0].abs_diff(25) <= 2 && at[1].abs_diff(50) <= 2, "{at:?}");
    }

    #[test]
    fn e_divisive_finds_nothing_in_stationary_noise() {
        for seed in 0..5 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let series = noisy(&mut rng, 60, 100.0, 5.0);
            let found = e_divisive(&series, 3, 199, 0.01, BOOTSTRAP_SEED);
            assert!(found.is_empty(), "seed {seed}: {found:?}");
        }
        assert!(e_divisive(&[1.0, 2.0], 3, 99, ALPHA, 1).is_empty());
    }

    #[test]
    fn the_energy_split_statistic_is_the_direct_sum() {
        // The incremental sums against the formula evaluated directly at every split.
        let x: [f64; 10] = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0];
        let direct = |tau: usize| {
            let (a, b) = x.split_at(tau);
            let (n1, n2) = (a.len() as f64, b.len() as f64);
            let mut between = 0.0;
            for p in a {
                for q in b {
                    between += (p - q).abs();
                }
            }
            let within = |v: &[f64]| {
                let mut s = 0.0;
                for i in 0..v.len() {
                    for j in i + 1..v.len() {
                        s += (v[i] - v[j]).abs();
                    }
                }
                s / (v.len() as f64 * (v.len() as f64 - 1.0) / 2.0)
            };
            n1 * n2 / (n1 + n2) * (2.0 * between / (n1 * n2) - within(a) - within(b))
        };
        let (tau, q) = best_split(&x, 2).unwrap();
        let want =
            (2..=8).map(|t| (t, direct(t))).fold(
                (0, f64::MIN),
                |m, v| {
                    if v.1 > m.1 {
                        v
                    } else {
                        m
                    }
                },
            );
        assert_eq!(tau, want.0);
        assert!((q - want.1).abs() < 1e-9, "{q} vs {}", want.1);
    }
}
