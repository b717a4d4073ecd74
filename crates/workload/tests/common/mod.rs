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

/// The repository's `workloads` directory.
pub fn workloads_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads")
}

/// The repository's `workloads/ycsb` directory.
pub fn ycsb_dir() -> PathBuf {
    workloads_dir().join("ycsb")
}

/// The shared CacheBench configs beside the project, or `None` (said on stdout) when
/// they are absent.
pub fn cachebench_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/cachebench");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "note: {} is absent; skipping the real CacheBench configs",
            dir.display()
        );
        None
    }
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

pub use kvlab_dist::fit::{assert_fits, chi_square, chi_square_critical};
