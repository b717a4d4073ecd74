//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kvlab_workload::{CoreWorkload, Properties, WorkloadError};

/// Names the runner accepts besides CoreWorkload's.
pub const OTHER_KNOWN: &[&str] = &[
    "threadcount",
    "target",
    "db",
    "exporter",
    "measurementtype",
    "status.interval",
];

/// The repository's `workloads/ycsb` directory.
pub fn ycsb_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ycsb")
}

/// Parses `text` as if it were the file `workloads/x`.
pub fn props(text: &str) -> Properties {
    let mut p = Properties::new();
    p.parse_str(text, Path::new("workloads/x"))
        .expect("test properties parse");
    p
}

/// Builds a workload from property text.
pub fn workload(text: &str) -> Result<CoreWorkload, WorkloadError> {
    CoreWorkload::from_properties(&props(text), OTHER_KNOWN, &["rocksdb."])
}

/// Builds a workload from a file of `workloads/ycsb`, with overrides.
pub fn ycsb_workload(name: &str, overrides: &[&str]) -> Arc<CoreWorkload> {
    let mut p = Properties::new();
    p.load_file(&ycsb_dir().join(name))
        .expect("workload file loads");
    for o in overrides {
        p.set_override(o).expect("override parses");
    }
    Arc::new(CoreWorkload::from_properties(&p, OTHER_KNOWN, &[]).expect("workload validates"))
}

/// Pearson's chi-square statistic of `observed` counts against `expected` probabilities
/// (which must sum to 1) over `n = Σ observed` draws.
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
