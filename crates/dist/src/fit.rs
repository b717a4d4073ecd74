//! Goodness of fit: Pearson's chi-square test of observed counts against expected
//! probabilities — how kvlab's tests check that a chooser draws the distribution it
//! imitates, and how a fitted model can be checked against the counts it was fitted to.

/// Pearson's chi-square statistic of `observed` counts against `expected` probabilities
/// (which must sum to 1) over `n = Σ observed` draws.
///
/// # Panics
///
/// When the two lengths differ, or a bin expects fewer than 5 draws (the test's
/// approximation does not hold there: merge bins first).
pub fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
    assert_eq!(observed.len(), expected.len());
    let n: u64 = observed.iter().sum();
    observed
        .iter()
        .zip(expected)
        .map(|(&o, &p)| {
            let e = p * n as f64;
            assert!(e >= 5.0, "bin with expected count {e} < 5: merge bins");
            (o as f64 - e).powi(2) / e
        })
        .sum()
}

/// The chi-square critical value for `bins − 1` degrees of freedom at p = 0.001
/// (Wilson–Hilferty approximation; z₀.₉₉₉ = 3.0902).
pub fn chi_square_critical(bins: usize) -> f64 {
    let k = (bins - 1) as f64;
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + 3.0902 * a.sqrt()).powi(3)
}

/// Asserts that `observed` fits `expected` at p = 0.001.
///
/// # Panics
///
/// When it does not (naming `what`, the statistic and the counts), or as [`chi_square`].
#[track_caller]
pub fn assert_fits(what: &str, observed: &[u64], expected: &[f64]) {
    let stat = chi_square(observed, expected);
    let critical = chi_square_critical(observed.len());
    assert!(
        stat < critical,
        "{what}: chi-square {stat:.1} ≥ critical {critical:.1} ({} bins)\nobserved {observed:?}",
        observed.len()
    );
}
