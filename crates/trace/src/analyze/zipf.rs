//! The Zipf fit of a popularity curve, as libCacheSim's trace analyzer computes it
//! (`libCacheSim/traceAnalyzer/popularity.cpp` with `utils/include/linReg.h`).
//!
//! Request counts are sorted in decreasing order and `ln(count) = -alpha * ln(rank) + c`
//! is fitted by ordinary least squares over **every** rank (1 to the number of objects,
//! one-hit objects included, none skipped); R² is the square of Pearson's r of the same
//! points. Like libCacheSim, no fit is made with fewer than 200 objects, nor when the
//! regression is singular (all points on one rank).

/// A fitted Zipf popularity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZipfFit {
    /// The exponent: minus the slope of ln(count) on ln(rank).
    pub alpha: f64,
    /// The intercept (ln of the fitted count at rank 1).
    pub intercept: f64,
    /// The square of Pearson's r (0 when r is not finite).
    pub r2: f64,
}

/// Why no fit was made, or the fit.
pub fn fit(sorted_desc: &[u64]) -> Result<ZipfFit, String> {
    let n = sorted_desc.len();
    if n < 200 {
        return Err(format!(
            "too few objects ({n}) for a Zipf fit; libCacheSim needs 200"
        ));
    }
    // The sums in the order linReg.h adds them, so the figures agree to the last digits.
    let (mut sx, mut sx2, mut sxy, mut sy, mut sy2) = (0.0f64, 0.0, 0.0, 0.0, 0.0);
    for (i, &count) in sorted_desc.iter().enumerate() {
        let x = ((i + 1) as f64).ln();
        let y = (count as f64).ln();
        sx += x;
        sx2 += x * x;
        sxy += x * y;
        sy += y;
        sy2 += y * y;
    }
    let nf = n as f64;
    let denom = nf * sx2 - sx * sx;
    if denom.abs() <= 1e-8 {
        return Err("singular regression (e.g. a uniform popularity)".into());
    }
    let slope = (nf * sxy - sx * sy) / denom;
    let intercept = (sy * sx2 - sx * sxy) / denom;
    let r = (sxy - sx * sy / nf) / ((sx2 - sx * sx / nf) * (sy2 - sy * sy / nf)).sqrt();
    Ok(ZipfFit {
        alpha: -slope,
        intercept,
        r2: if r.is_finite() { r * r } else { 0.0 },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_power_law_gives_its_exponent_and_r2_one() {
        // count = 1e6 * rank^-0.8, kept as integers: close to, not exactly, alpha 0.8.
        let counts: Vec<u64> = (1..=1000u64)
            .map(|r| (1e6 * (r as f64).powf(-0.8)).round() as u64)
            .collect();
        let f = fit(&counts).expect("1000 ranks fit");
        assert!((f.alpha - 0.8).abs() < 1e-4, "{f:?}");
        assert!(f.r2 > 0.9999, "{f:?}");
    }

    #[test]
    fn too_few_objects_is_no_fit() {
        assert!(fit(&[5; 199]).is_err());
        // Equal counts: the ranks differ, so the regression is not singular, and the
        // slope is 0 up to rounding.
        let f = fit(&[5; 200]).expect("ranks differ, so the regression is not singular");
        assert!(f.alpha.abs() < 1e-9, "{f:?}");
    }
}
