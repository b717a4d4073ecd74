//! The size laws kvlab's model fitter chooses among (Cao et al., FAST'20, §5: generalized
//! Pareto, Pareto, Weibull, lognormal, exponential, power), with their CDFs for fitting
//! and their quantiles for drawing: db_bench's mixgraph draws value sizes and scan lengths
//! from a generalized Pareto only, so a model whose best-fitting law is another one runs
//! that law through [`SizeModel::quantile`] (kvlab's `value_model`/`scan_model`).

use serde::{Deserialize, Serialize};

/// One candidate distribution with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum SizeModel {
    /// Generalized Pareto: `F(x) = 1 − (1 + k(x−θ)/σ)^{−1/k}` for `x ≥ θ`
    /// (`1 − e^{−(x−θ)/σ}` for `k = 0`) — db_bench's `ParetoCdfInversion` draws it.
    GeneralizedPareto {
        /// Location θ.
        theta: f64,
        /// Shape k.
        k: f64,
        /// Scale σ.
        sigma: f64,
    },
    /// Pareto (type I): `F(x) = 1 − (x_m/x)^α` for `x ≥ x_m`.
    Pareto {
        /// Scale `x_m`.
        scale: f64,
        /// Shape α.
        shape: f64,
    },
    /// Weibull: `F(x) = 1 − e^{−(x/λ)^k}`.
    Weibull {
        /// Scale λ.
        scale: f64,
        /// Shape k.
        shape: f64,
    },
    /// Lognormal: `F(x) = Φ((ln x − μ)/σ)`.
    Lognormal {
        /// μ of `ln x`.
        mu: f64,
        /// σ of `ln x`.
        sigma: f64,
    },
    /// Exponential: `F(x) = 1 − e^{−x/mean}`.
    Exponential {
        /// The mean.
        mean: f64,
    },
    /// Power: `F(x) = min(1, a·x^b)`.
    Power {
        /// Coefficient a.
        a: f64,
        /// Exponent b.
        b: f64,
    },
}

impl SizeModel {
    /// The candidate's name (`generalized_pareto`, `pareto`, …), as reports and model
    /// files spell it.
    pub fn name(&self) -> &'static str {
        match self {
            SizeModel::GeneralizedPareto { .. } => "generalized_pareto",
            SizeModel::Pareto { .. } => "pareto",
            SizeModel::Weibull { .. } => "weibull",
            SizeModel::Lognormal { .. } => "lognormal",
            SizeModel::Exponential { .. } => "exponential",
            SizeModel::Power { .. } => "power",
        }
    }

    /// The parameters, named, in the order the variant lists them.
    pub fn params(&self) -> Vec<(&'static str, f64)> {
        match *self {
            SizeModel::GeneralizedPareto { theta, k, sigma } => {
                vec![("theta", theta), ("k", k), ("sigma", sigma)]
            }
            SizeModel::Pareto { scale, shape } | SizeModel::Weibull { scale, shape } => {
                vec![("scale", scale), ("shape", shape)]
            }
            SizeModel::Lognormal { mu, sigma } => vec![("mu", mu), ("sigma", sigma)],
            SizeModel::Exponential { mean } => vec![("mean", mean)],
            SizeModel::Power { a, b } => vec![("a", a), ("b", b)],
        }
    }

    /// The CDF at `x`.
    pub fn cdf(&self, x: f64) -> f64 {
        match *self {
            SizeModel::GeneralizedPareto { theta, k, sigma } => {
                if x < theta {
                    return 0.0;
                }
                let z = (x - theta) / sigma;
                if k.abs() < 1e-12 {
                    1.0 - (-z).exp()
                } else {
                    let base = 1.0 + k * z;
                    // k < 0: bounded support, all mass below θ − σ/k.
                    if base <= 0.0 {
                        1.0
                    } else {
                        1.0 - base.powf(-1.0 / k)
                    }
                }
            }
            SizeModel::Pareto { scale, shape } => {
                if x < scale {
                    0.0
                } else {
                    1.0 - (scale / x).powf(shape)
                }
            }
            SizeModel::Weibull { scale, shape } => {
                if x <= 0.0 {
                    0.0
                } else {
                    1.0 - (-(x / scale).powf(shape)).exp()
                }
            }
            SizeModel::Lognormal { mu, sigma } => {
                if x <= 0.0 {
                    0.0
                } else {
                    normal_cdf((x.ln() - mu) / sigma)
                }
            }
            SizeModel::Exponential { mean } => {
                if x <= 0.0 {
                    0.0
                } else {
                    1.0 - (-x / mean).exp()
                }
            }
            SizeModel::Power { a, b } => {
                if x <= 0.0 {
                    0.0
                } else {
                    (a * x.powf(b)).min(1.0)
                }
            }
        }
    }

    /// The quantile `F⁻¹(v)` for a level `v` in `[0, 1]` (`+∞` where the law has no
    /// upper bound and `v = 1`). For the power model it is `(v/a)^{1/b}`, whose top,
    /// `(1/a)^{1/b}`, is where its CDF reaches 1.
    pub fn quantile(&self, v: f64) -> f64 {
        let v = v.clamp(0.0, 1.0);
        match *self {
            SizeModel::GeneralizedPareto { theta, k, sigma } => {
                let s = 1.0 - v;
                if k.abs() < 1e-12 {
                    theta - sigma * s.ln()
                } else {
                    theta + sigma * (s.powf(-k) - 1.0) / k
                }
            }
            SizeModel::Pareto { scale, shape } => scale * (1.0 - v).powf(-1.0 / shape),
            SizeModel::Weibull { scale, shape } => scale * (-(1.0 - v).ln()).powf(1.0 / shape),
            SizeModel::Lognormal { mu, sigma } => (mu + sigma * normal_quantile(v)).exp(),
            SizeModel::Exponential { mean } => -mean * (1.0 - v).ln(),
            SizeModel::Power { a, b } => (v / a).powf(1.0 / b),
        }
    }

    /// Whether the parameters make a distribution over sizes: scales, shapes and means
    /// positive and finite (the generalized Pareto's k any finite number, θ ≥ 0; the power
    /// model's b positive). `Err` names the first bad parameter.
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in self.params() {
            if !value.is_finite() {
                return Err(format!(
                    "{} {name} = {value}: expected a finite number",
                    self.name()
                ));
            }
            let positive = match self {
                SizeModel::GeneralizedPareto { .. } => name == "sigma",
                _ => !matches!((self, name), (SizeModel::Lognormal { .. }, "mu")),
            };
            if positive && value <= 0.0 {
                return Err(format!(
                    "{} {name} = {value}: expected a number above 0",
                    self.name()
                ));
            }
            if let (SizeModel::GeneralizedPareto { .. }, "theta") = (self, name) {
                if value < 0.0 {
                    return Err(format!(
                        "{} theta = {value}: expected 0 or more",
                        self.name()
                    ));
                }
            }
        }
        Ok(())
    }

    /// A size drawn from the level `v`: `⌈F⁻¹(v)⌉`, as db_bench rounds its draws, and
    /// `i64::MAX` where the quantile is unbounded (the caller's wrap applies).
    pub fn size_at(&self, v: f64) -> i64 {
        let x = self.quantile(v).ceil();
        if x.is_nan() || x >= 9.2e18 {
            i64::MAX
        } else if x <= 0.0 {
            0
        } else {
            x as i64
        }
    }
}

/// The standard normal CDF, through `erfc` (W. J. Cody's rational approximation as in
/// Numerical Recipes' `erfcc`, relative error below 1.2·10⁻⁷).
fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The standard normal quantile `Φ⁻¹(p)`: P. J. Acklam's rational approximation
/// (relative error below 1.2·10⁻⁹ over the open unit interval), `∓∞` at 0 and 1.
fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const LOW: f64 = 0.024_25;
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laws() -> [SizeModel; 6] {
        [
            SizeModel::GeneralizedPareto {
                theta: 0.0,
                k: 0.2,
                sigma: 25.0,
            },
            SizeModel::GeneralizedPareto {
                theta: 5.0,
                k: 0.0,
                sigma: 10.0,
            },
            SizeModel::Pareto {
                scale: 10.0,
                shape: 1.5,
            },
            SizeModel::Weibull {
                scale: 100.0,
                shape: 0.7,
            },
            SizeModel::Lognormal {
                mu: 4.0,
                sigma: 1.2,
            },
            SizeModel::Exponential { mean: 300.0 },
        ]
    }

    #[test]
    fn normal_cdf_and_quantile_match_tables() {
        // Φ(0) = 0.5, Φ(1) = 0.841344746, Φ(−1.96) = 0.024997895.
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.0) - 0.841_344_746).abs() < 1e-6);
        assert!((normal_cdf(-1.96) - 0.024_997_895).abs() < 1e-6);
        assert!((normal_quantile(0.975) - 1.959_963_985).abs() < 1e-8);
        assert!((normal_quantile(0.001) + 3.090_232_306).abs() < 1e-8);
        assert_eq!(normal_quantile(0.5), 0.0);
    }

    #[test]
    fn each_quantile_inverts_its_cdf() {
        let mut all = laws().to_vec();
        all.push(SizeModel::Power { a: 0.01, b: 0.8 });
        for law in all {
            for v in [1e-6, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999_999] {
                let x = law.quantile(v);
                assert!(
                    (law.cdf(x) - v).abs() < 5e-7,
                    "{law:?}: cdf(quantile({v})) = {} at x = {x}",
                    law.cdf(x)
                );
            }
            law.validate().unwrap();
        }
    }

    #[test]
    fn the_generalized_pareto_quantile_is_db_benchs_inversion_of_one_minus_the_level() {
        // db_bench's ParetoCdfInversion(u) is the quantile at 1 − u.
        for (theta, k, sigma) in [(0.0, 0.2, 25.45), (0.0, 0.0, 14.236), (3.0, -0.1, 9.0)] {
            let law = SizeModel::GeneralizedPareto { theta, k, sigma };
            for u in [0.001, 0.1, 0.5, 0.9, 0.999] {
                let ours = law.size_at(1.0 - u);
                let db_bench = super::super::pareto_cdf_inversion(u, theta, k, sigma);
                assert!((ours - db_bench).abs() <= 1, "u {u}: {ours} vs {db_bench}");
            }
        }
    }

    #[test]
    fn unbounded_tops_and_bad_parameters() {
        assert_eq!(SizeModel::Exponential { mean: 5.0 }.size_at(1.0), i64::MAX);
        assert_eq!(
            SizeModel::Weibull {
                scale: 5.0,
                shape: 1.0
            }
            .size_at(0.0),
            0
        );
        let bad = SizeModel::Weibull {
            scale: -1.0,
            shape: 1.0,
        };
        assert!(bad.validate().unwrap_err().contains("scale"));
        let bad = SizeModel::Lognormal {
            mu: f64::NAN,
            sigma: 1.0,
        };
        assert!(bad.validate().unwrap_err().contains("mu"));
        assert!(SizeModel::Lognormal {
            mu: -2.0,
            sigma: 1.0
        }
        .validate()
        .is_ok());
        let bad = SizeModel::GeneralizedPareto {
            theta: -1.0,
            k: 0.1,
            sigma: 1.0,
        };
        assert!(bad.validate().unwrap_err().contains("theta"));
    }
}
