//! A stable, deterministic stand-in for the cargo-fuzz targets: their bodies
//! (`kvlab_report::fuzzing`) run over inputs mutated from the committed fixture results
//! (`tests/fixtures/suite`: result.json, timeline.csv, latency.hlog, monitor CSVs), with
//! a fixed seed.

use kvlab_fuzzkit::{rounds, Mutator};
use kvlab_report::fuzzing;

use crate::golden::suite;

/// Tokens on the formats' edges: JSON and CSV punctuation, odd numbers, log tags.
const INTERESTING: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b",",
    b"\"",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b":",
    b"{}",
    b"[]",
    b"null",
    b"true",
    b"-",
    b"-1",
    b"0",
    b"1e308",
    b"1e309",
    b"-0",
    b"1.5",
    b"NaN",
    b"inf",
    b"18446744073709551615",
    b"18446744073709551616",
    b"9223372036854775807",
    b"\"seed\": \"",
    b"Tag=",
    b"#[StartTime: ",
    b"HISTFAAAA",
    b"_ops",
    b"_p99_us",
    b"\xff",
];

/// `file` of the first round of every fixture run.
fn seeds(file: &str) -> Vec<Vec<u8>> {
    [
        "redis/workloada/1x1",
        "redis/workloada/1x4",
        "rocksdb/workloada/2x1",
        "moka/kv-mixed-balanced/1x1",
        "foyer/kv-small-readheavy/1x1",
        "null/workloada/2x1",
    ]
    .iter()
    .map(|run| {
        let path = suite().join(format!("{run}/round-1/{file}"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    })
    .collect()
}

fn run(seeds: &[Vec<u8>], default_rounds: usize, body: fn(&[u8])) {
    let mut m = Mutator::new(seeds, INTERESTING);
    for _ in 0..rounds(default_rounds) {
        for i in 0..seeds.len() {
            body(&m.mutate(i));
        }
    }
}

#[test]
fn result_documents_survive_mutation() {
    let seeds = seeds("result.json");
    for seed in &seeds {
        assert!(fuzzing::result_json(seed));
    }
    kvlab_fuzzkit::export_seeds("result_json", &seeds);
    run(&seeds, 150, |d| {
        fuzzing::result_json(d);
    });
}

#[test]
fn timelines_and_monitor_series_survive_mutation() {
    let seeds = seeds("timeline.csv");
    for seed in &seeds {
        assert!(fuzzing::timeline(seed) > 0);
    }
    run(&seeds, 800, |d| {
        fuzzing::timeline(d);
    });
    let path = suite().join("rocksdb/workloada/2x1/round-1/monitor/process.csv");
    let monitor = vec![
        std::fs::read(path).unwrap(),
        b"time_s,cpu_pct,rss_bytes\n0.5,12.5,1000\n1.0,,2000\n1.5,x,\n".to_vec(),
    ];
    for seed in &monitor {
        assert!(fuzzing::monitor(seed) > 0);
    }
    run(&monitor, 2000, |d| {
        fuzzing::monitor(d);
    });
}

#[test]
fn latency_logs_survive_mutation() {
    let seeds = seeds("latency.hlog");
    for seed in &seeds {
        assert!(fuzzing::latency_log(seed) > 0);
    }
    kvlab_fuzzkit::export_seeds("latency_log", &seeds);
    run(&seeds, 60, |d| {
        fuzzing::latency_log(d);
    });
}
