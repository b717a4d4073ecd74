//! Small numerical solvers the fits share: Levenberg–Marquardt for nonlinear least
//! squares, Nelder–Mead for any objective, and a dense linear solve. No external solver:
//! the problems have at most four parameters.

#![expect(
    clippy::needless_range_loop,
    reason = "dense linear algebra on small fixed-size arrays reads clearest with indices"
)]

/// Solves `m · x = v` (n ≤ 8) by Gaussian elimination with partial pivoting; `None` when
/// `m` is singular.
pub(crate) fn solve_linear<const N: usize>(
    mut m: [[f64; N]; N],
    mut v: [f64; N],
) -> Option<[f64; N]> {
    for col in 0..N {
        let pivot = (col..N).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 || !m[pivot][col].is_finite() {
            return None;
        }
        m.swap(col, pivot);
        v.swap(col, pivot);
        for row in col + 1..N {
            let f = m[row][col] / m[col][col];
            for k in col..N {
                m[row][k] -= f * m[col][k];
            }
            v[row] -= f * v[col];
        }
    }
    let mut x = [0.0; N];
    for row in (0..N).rev() {
        let mut s = v[row];
        for k in row + 1..N {
            s -= m[row][k] * x[k];
        }
        x[row] = s / m[row][row];
    }
    x.iter().all(|x| x.is_finite()).then_some(x)
}

/// Levenberg–Marquardt (Marquardt's scaling of the diagonal) on `residuals(params, out)`,
/// which fills one residual per point; the Jacobian is taken by forward differences.
/// Starts from `params`, returns the best parameters and their sum of squared residuals.
pub(crate) fn levenberg_marquardt<const N: usize>(
    mut params: [f64; N],
    points: usize,
    residuals: impl Fn(&[f64; N], &mut [f64]),
) -> ([f64; N], f64) {
    let sse = |r: &[f64]| -> f64 {
        let s: f64 = r.iter().map(|x| x * x).sum();
        if s.is_finite() {
            s
        } else {
            f64::INFINITY
        }
    };
    let mut r = vec![0.0; points];
    let mut r_trial = vec![0.0; points];
    let mut jac = vec![[0.0; N]; points];
    residuals(&params, &mut r);
    let mut cost = sse(&r);
    let mut lambda = 1e-3;
    for _ in 0..200 {
        // Forward-difference Jacobian.
        for j in 0..N {
            let h = 1e-7 * params[j].abs().max(1e-7);
            let mut p = params;
            p[j] += h;
            residuals(&p, &mut r_trial);
            for (i, row) in jac.iter_mut().enumerate() {
                row[j] = (r_trial[i] - r[i]) / h;
            }
        }
        let mut jtj = [[0.0; N]; N];
        let mut jtr = [0.0; N];
        for (row, &ri) in jac.iter().zip(&r) {
            for a in 0..N {
                jtr[a] -= row[a] * ri;
                for b in 0..N {
                    jtj[a][b] += row[a] * row[b];
                }
            }
        }
        let mut improved = false;
        while lambda < 1e12 {
            let mut m = jtj;
            for (a, row) in m.iter_mut().enumerate() {
                row[a] += lambda * jtj[a][a].max(1e-12);
            }
            if let Some(step) = solve_linear(m, jtr) {
                let mut trial = params;
                for (t, s) in trial.iter_mut().zip(step) {
                    *t += s;
                }
                residuals(&trial, &mut r_trial);
                let trial_cost = sse(&r_trial);
                if trial_cost < cost {
                    let gain = (cost - trial_cost) / cost.max(1e-300);
                    params = trial;
                    std::mem::swap(&mut r, &mut r_trial);
                    cost = trial_cost;
                    lambda = (lambda / 10.0).max(1e-12);
                    improved = gain > 1e-12;
                    break;
                }
            }
            lambda *= 10.0;
        }
        if !improved {
            break;
        }
    }
    (params, cost)
}

/// Nelder–Mead simplex minimisation of `f` from `start` with initial steps `step`;
/// returns the best point and its value.
pub(crate) fn nelder_mead<const N: usize>(
    start: [f64; N],
    step: [f64; N],
    iterations: usize,
    f: impl Fn(&[f64; N]) -> f64,
) -> ([f64; N], f64) {
    let eval = |x: &[f64; N]| {
        let v = f(x);
        if v.is_nan() {
            f64::INFINITY
        } else {
            v
        }
    };
    let mut simplex: Vec<([f64; N], f64)> = Vec::with_capacity(N + 1);
    simplex.push((start, eval(&start)));
    for i in 0..N {
        let mut x = start;
        x[i] += step[i];
        simplex.push((x, eval(&x)));
    }
    for _ in 0..iterations {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[N].1);
        if (worst - best).abs() <= 1e-12 * (best.abs() + 1e-300) {
            break;
        }
        let mut centroid = [0.0; N];
        for (x, _) in &simplex[..N] {
            for (c, xi) in centroid.iter_mut().zip(x) {
                *c += xi / N as f64;
            }
        }
        let along = |t: f64| {
            let mut x = [0.0; N];
            for i in 0..N {
                x[i] = centroid[i] + t * (simplex[N].0[i] - centroid[i]);
            }
            x
        };
        let reflected = along(-1.0);
        let fr = eval(&reflected);
        if fr < simplex[0].1 {
            let expanded = along(-2.0);
            let fe = eval(&expanded);
            simplex[N] = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < simplex[N - 1].1 {
            simplex[N] = (reflected, fr);
        } else {
            let contracted = if fr < simplex[N].1 {
                along(-0.5)
            } else {
                along(0.5)
            };
            let fc = eval(&contracted);
            if fc < simplex[N].1.min(fr) {
                simplex[N] = (contracted, fc);
            } else {
                let best = simplex[0].0;
                for (x, fx) in simplex.iter_mut().skip(1) {
                    for i in 0..N {
                        x[i] = best[i] + 0.5 * (x[i] - best[i]);
                    }
                    *fx = eval(x);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex[0]
}

/// Ordinary least squares of `y = α + β·x`: `(α, β)`; `None` with fewer than two
/// distinct `x`.
pub(crate) fn linear_regression(points: impl Iterator<Item = (f64, f64)>) -> Option<(f64, f64)> {
    let (mut n, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (x, y) in points {
        n += 1.0;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    let det = n * sxx - sx * sx;
    if n < 2.0 || det.abs() < 1e-300 {
        return None;
    }
    let beta = (n * sxy - sx * sy) / det;
    Some(((sy - beta * sx) / n, beta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lm_fits_an_exponential() {
        let xs: Vec<f64> = (0..50).map(|i| i as f64 / 5.0).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 3.0 * (-0.7 * x).exp() + 0.5).collect();
        let (p, cost) = levenberg_marquardt([1.0, -0.1, 0.0], xs.len(), |p, r| {
            for (i, (x, y)) in xs.iter().zip(&ys).enumerate() {
                r[i] = p[0] * (p[1] * x).exp() + p[2] - y;
            }
        });
        assert!(cost < 1e-12, "{cost}");
        assert!(
            (p[0] - 3.0).abs() < 1e-5 && (p[1] + 0.7).abs() < 1e-5,
            "{p:?}"
        );
    }

    #[test]
    fn nelder_mead_finds_rosenbrock_minimum() {
        let (x, v) = nelder_mead([-1.2, 1.0], [0.5, 0.5], 5000, |p| {
            (1.0 - p[0]).powi(2) + 100.0 * (p[1] - p[0] * p[0]).powi(2)
        });
        assert!(v < 1e-8 && (x[0] - 1.0).abs() < 1e-3, "{x:?} {v}");
    }

    #[test]
    fn linear_solve_and_regression() {
        let x = solve_linear([[2.0, 1.0], [1.0, 3.0]], [3.0, 5.0]).expect("regular");
        assert!((x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12);
        let (a, b) = linear_regression((0..10).map(|i| (i as f64, 2.0 + 0.5 * i as f64)))
            .expect("distinct x");
        assert!((a - 2.0).abs() < 1e-12 && (b - 0.5).abs() < 1e-12);
    }
}
