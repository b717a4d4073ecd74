//! A stable, deterministic stand-in for the cargo-fuzz targets: their bodies
//! (`kvlab_report::fuzzing`) run over inputs mutated from the committed fixture results
//! (`tests/fixtures/suite`: result.json, timeline.csv, latency.hlog, monitor CSVs), with
//! a fixed seed.

use std::path::{Path, PathBuf};

use kvlab_report::fuzzing;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, seed: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut buf = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(buf.len() + 1);
        match rng.below(9) {
            0 if !buf.is_empty() => {
                let i = rng.below(buf.len());
                buf[i] ^= 1 << rng.below(8);
            }
            1 if !buf.is_empty() => {
                let i = rng.below(buf.len());
                buf[i] = rng.next() as u8;
            }
            2 => buf.insert(at, rng.next() as u8),
            3 if at < buf.len() => {
                let end = (at + 1 + rng.below(8)).min(buf.len());
                buf.drain(at..end);
            }
            4 | 7 => {
                let tok = INTERESTING[rng.below(INTERESTING.len())];
                // Half the time the token replaces a number or word where it lands.
                let end = if rng.below(2) == 0 {
                    buf[at..]
                        .iter()
                        .position(|b| !b.is_ascii_alphanumeric() && *b != b'.')
                        .map_or(buf.len(), |n| at + n)
                } else {
                    at
                };
                buf.splice(at..end, tok.iter().copied());
            }
            5 => buf.truncate(at),
            6 => {
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len() + 1);
                let to = (from + rng.below(256)).min(other.len());
                buf.splice(at..at, other[from..to].iter().copied());
            }
            _ => {
                let i = rng.below(buf.len() + 1);
                let j = rng.below(buf.len() + 1);
                let (a, b) = (i.min(j), i.max(j));
                let chunk = buf[a..b.min(a + 64)].to_vec();
                buf.splice(at..at, chunk);
            }
        }
    }
    buf
}

/// Rounds over every seed: `KVLAB_FUZZ_ROUNDS`, or `default`.
fn rounds(default: usize) -> usize {
    std::env::var("KVLAB_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

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

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/suite")
        .join(rel)
}

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
        let path = fixture(&format!("{run}/round-1/{file}"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    })
    .collect()
}

fn run(seeds: &[Vec<u8>], default_rounds: usize, rng_seed: u64, body: fn(&[u8])) {
    let mut rng = Rng(rng_seed);
    for _ in 0..rounds(default_rounds) {
        for seed in seeds {
            body(&mutate(&mut rng, seed, seeds));
        }
    }
}

#[test]
fn result_documents_survive_mutation() {
    let seeds = seeds("result.json");
    for seed in &seeds {
        assert!(fuzzing::result_json(seed));
    }
    run(&seeds, 150, 0x9e37_79b9_7f4a_7c15, |d| {
        fuzzing::result_json(d);
    });
}

#[test]
fn timelines_and_monitor_series_survive_mutation() {
    let seeds = seeds("timeline.csv");
    for seed in &seeds {
        assert!(fuzzing::timeline(seed) > 0);
    }
    run(&seeds, 800, 0x2545_f491_4f6c_dd1d, |d| {
        fuzzing::timeline(d);
    });
    let path = fixture("rocksdb/workloada/2x1/round-1/monitor/process.csv");
    let monitor = vec![
        std::fs::read(path).unwrap(),
        b"time_s,cpu_pct,rss_bytes\n0.5,12.5,1000\n1.0,,2000\n1.5,x,\n".to_vec(),
    ];
    for seed in &monitor {
        assert!(fuzzing::monitor(seed) > 0);
    }
    run(&monitor, 2000, 0x5eed_f00d_dead_beef, |d| {
        fuzzing::monitor(d);
    });
}

#[test]
fn latency_logs_survive_mutation() {
    let seeds = seeds("latency.hlog");
    for seed in &seeds {
        assert!(fuzzing::latency_log(seed) > 0);
    }
    run(&seeds, 60, 0x0123_4567_89ab_cdef, |d| {
        fuzzing::latency_log(d);
    });
}
