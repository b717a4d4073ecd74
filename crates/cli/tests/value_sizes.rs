//! `kvlab model fit` on traces Debian's `db_bench` 7.8.3 writes with known value-size
//! flags gives them back: db_bench writes `max(⌈X⌉, 10)` (a third of the draws with its
//! default `-value_k=0.2615 -value_sigma=25.45`) and wraps sizes over
//! `-mix_max_value_size`, and the fit counts the clamped sizes as censored.
//! [`check_value_fit`] is the reusable check: db_bench, then `kvlab model fit`, then
//! the model's `value_k` and `value_sigma` against the flags.

use std::path::Path;
use std::process::Command;

use crate::common::{ok, text};

/// One db_bench mixgraph setting whose value-size flags the fit must give back.
struct Setting<'a> {
    value_k: f64,
    value_sigma: f64,
    /// db_bench's `-num` (also given to `kvlab model fit --db-bench-num`).
    num: u64,
    /// Operations (`-reads`).
    reads: u64,
    /// Further db_bench flags (op mix, keys).
    flags: &'a [&'a str],
}

/// Runs db_bench's mixgraph with `setting` writing a trace into `dir`, fits it with
/// `kvlab model fit --db-bench-num`, and checks the model's `value_k` and `value_sigma`
/// against the flags within `tolerance` (relative). Returns the fitted `(k, σ)`.
fn check_value_fit(dir: &Path, setting: &Setting, tolerance: f64) -> (f64, f64) {
    let trace = dir.join("mixgraph.trace");
    let o = Command::new("db_bench")
        .arg("--benchmarks=mixgraph")
        .arg(format!("--db={}", dir.join("db").display()))
        .arg(format!("--trace_file={}", trace.display()))
        .arg(format!("--num={}", setting.num))
        .arg(format!("--reads={}", setting.reads))
        .arg(format!("--value_k={}", setting.value_k))
        .arg(format!("--value_sigma={}", setting.value_sigma))
        .args(setting.flags)
        .output()
        .expect("db_bench runs (Debian's rocksdb-tools: apt-get install -y rocksdb-tools)");
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "db_bench:\n{stdout}\n{stderr}");
    let model = dir.join("model.toml");
    let num = setting.num.to_string();
    ok(&[
        "model",
        "fit",
        trace.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
        "--db-bench-num",
        &num,
        "--no-locality",
    ]);
    let text = std::fs::read_to_string(&model).unwrap();
    let table: toml::Table = text.parse().unwrap();
    let mixgraph = table["mixgraph"].as_table().expect("[mixgraph]");
    let get = |name: &str| {
        mixgraph
            .get(name)
            .and_then(toml::Value::as_float)
            .unwrap_or_else(|| panic!("{name} in the model:\n{text}"))
    };
    let (k, sigma, theta) = (get("value_k"), get("value_sigma"), get("value_theta"));
    let what = format!(
        "-value_k={} -value_sigma={} -num={} -reads={} {:?}: fitted θ {theta} k {k} σ {sigma}",
        setting.value_k, setting.value_sigma, setting.num, setting.reads, setting.flags
    );
    eprintln!("{what}");
    assert_eq!(theta, 0.0, "{what}");
    assert!(
        (k / setting.value_k - 1.0).abs() < tolerance,
        "value_k off by over {tolerance}: {what}"
    );
    assert!(
        (sigma / setting.value_sigma - 1.0).abs() < tolerance,
        "value_sigma off by over {tolerance}: {what}"
    );
    (k, sigma)
}

#[test]
fn model_fit_gives_back_db_benchs_value_flags() {
    let mix: &[&str] = &[
        "--mix_get_ratio=0.83",
        "--mix_put_ratio=0.14",
        "--mix_seek_ratio=0.03",
        "--seed=7",
    ];
    let settings = [
        // db_bench's default sizes: a third of the Puts written as 10 bytes.
        Setting {
            value_k: 0.2615,
            value_sigma: 25.45,
            num: 1_000_000,
            reads: 100_000,
            flags: mix,
        },
        // A small key space: Put sizes are drawn from u ≥ 830/50000, the tail cut at
        // 185 bytes.
        Setting {
            value_k: 0.2615,
            value_sigma: 25.45,
            num: 50_000,
            reads: 100_000,
            flags: mix,
        },
        // A heavier tail and larger values.
        Setting {
            value_k: 0.5,
            value_sigma: 40.0,
            num: 500_000,
            reads: 150_000,
            flags: mix,
        },
        // Small values: two thirds at the floor; half the operations Puts.
        Setting {
            value_k: 0.35,
            value_sigma: 8.0,
            num: 200_000,
            reads: 100_000,
            flags: &[
                "--mix_get_ratio=0.5",
                "--mix_put_ratio=0.5",
                "--mix_seek_ratio=0",
                "--seed=3",
            ],
        },
    ];
    for setting in &settings {
        let dir = tempfile::tempdir().unwrap();
        check_value_fit(dir.path(), setting, 0.1);
    }
}
