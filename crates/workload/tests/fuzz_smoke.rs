//! A stable, deterministic stand-in for the cargo-fuzz targets: their bodies
//! (`kvlab_workload::fuzzing`) run over inputs mutated from the repository's workload
//! files, the shared CacheBench configs and small key files and thread plans, with a
//! fixed seed.

use std::path::{Path, PathBuf};

use kvlab_fuzzkit::{rounds, Mutator};
use kvlab_workload::fuzzing;

use crate::common::{self, workloads_dir};

/// Tokens on the formats' edges: separators, escapes, huge, negative and odd numbers,
/// the names that select other workloads and distributions.
const INTERESTING: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"=",
    b":",
    b"\\",
    b"\\u",
    b"\\\n",
    b"#",
    b" ",
    b"\t",
    b"\"",
    b",",
    b"-",
    b"-1",
    b"0",
    b"1",
    b"0.5",
    b"1e308",
    b"1e-320",
    b"NaN",
    b"inf",
    b"4294967295",
    b"4294967296",
    b"2147483647",
    b"9223372036854775807",
    b"18446744073709551615",
    b"18446744073709551616",
    b"[]",
    b"{}",
    b"null",
    b"\\x",
    b"\\xff",
    b"\0",
    b"\xff",
    b"zipfian",
    b"latest",
    b"hotspot",
    b"exponential",
    b"sequential",
    b"histogram",
    b"uniform",
    b"kvlab.cache",
    b"kvlab.mixgraph",
    b"workload=",
    b"requestdistribution=",
    b"group.a.threads=",
];

fn files_in(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// Property files: every workload of the repository, and small ones for the rest.
fn property_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for dir in ["ycsb", "cache", "mixgraph"] {
        seeds.extend(files_in(&workloads_dir().join(dir)));
    }
    seeds.push(
        b"recordcount=1000\noperationcount=1000\nrequestdistribution=hotspot\n\
          hotspotdatafraction=0.3\nfieldlengthdistribution=zipfian\nminfieldlength=10\n\
          scanlengthdistribution=zipfian\nscanproportion=0.5\nreadproportion=0.5\n"
            .to_vec(),
    );
    seeds.push(
        b"recordcount=100\ninsertstart=10\ninsertcount=50\nrequestdistribution=exponential\n\
          insertorder=ordered\nzeropadding=8\ntable=a\\u0041\\\n  b\n"
            .to_vec(),
    );
    seeds
}

/// CacheBench configs, each with its path (for its distribution files).
fn cachebench_seeds() -> Vec<(PathBuf, Vec<u8>)> {
    let mut dirs: Vec<_> = common::cachebench_dir().map_or_else(Vec::new, |root| {
        std::fs::read_dir(&root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("config.json").is_file())
            .collect()
    });
    dirs.sort();
    let mut seeds: Vec<_> = dirs
        .iter()
        .map(|d| {
            let path = d.join("config.json");
            let text = std::fs::read(&path).unwrap();
            (path, text)
        })
        .collect();
    // One with everything inline.
    seeds.push((
        PathBuf::from("inline.json"),
        br#"{ // comment
  "cache_config": { "cacheSizeMB": 64 },
  "test_config": {
    "numOps": 100, "numThreads": 2, "numKeys": 1000, "opDelayNs": 10, "opDelayBatch": 1,
    "keySizeRange": [8, 16], "keySizeRangeProbability": [1.0],
    "valSizeRange": [100, 200, 400], "valSizeRangeProbability": [0.5, 0.5],
    "ttlSecsRange": [1, 10], "ttlSecsRangeProbability": [1.0],
    "popularityBuckets": [10, 990], "popularityWeights": [0.9, 0.1],
    "getRatio": 0.8, "setRatio": 0.2, /* inline */ "delRatio": 0.0
  }
}"#
        .to_vec(),
    ));
    seeds
}

const KEY_FILES: &[&[u8]] = &[
    b"user1\nuser2\r\nuser3\n\nkey with\ttab\n",
    b"a\\\\b\nc\\nd\\r\\x00\\x7f\n\xc3\xa9t\xc3\xa9\n",
];

const PLANS: &[&[u8]] = &[
    b"# Two readers, one writer.\ngroup.readers.threads = 2\ngroup.readers.readproportion = 1\n\
      group.writers.threads: 1\ngroup.writers.insertproportion = 1\n",
    b"group.a-1.threads=3\ngroup.a-1.readproportion=0.5\ngroup.a-1.scanproportion=0.25\n\
      group.a-1.deleteproportion=0.25\n! comment\ngroup.b_2.threads=1\n\
      group.b_2.readmodifywriteproportion=1\ngroup.b_2.updateproportion=0\n",
];

#[test]
fn property_files_and_their_workloads_survive_mutation() {
    let seeds = property_seeds();
    for seed in &seeds {
        assert!(
            fuzzing::properties(seed),
            "a seed builds no workload:\n{}",
            String::from_utf8_lossy(seed)
        );
    }
    kvlab_fuzzkit::export_seeds("properties", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for _ in 0..rounds(15) {
        for i in 0..seeds.len() {
            fuzzing::properties(&m.mutate(i));
        }
    }
}

#[test]
fn cachebench_configs_survive_mutation() {
    let seeds = cachebench_seeds();
    let bytes: Vec<Vec<u8>> = seeds.iter().map(|(_, b)| b.clone()).collect();
    for (path, seed) in &seeds {
        assert!(
            fuzzing::cachebench(seed, path),
            "{} builds no workload",
            path.display()
        );
    }
    kvlab_fuzzkit::export_seeds("cachebench", &bytes);
    let mut m = Mutator::new(&bytes, INTERESTING);
    for _ in 0..rounds(100) {
        for (i, (path, _)) in seeds.iter().enumerate() {
            fuzzing::cachebench(&m.mutate(i), path);
        }
    }
}

#[test]
fn key_files_and_plans_survive_mutation() {
    let keys: Vec<Vec<u8>> = KEY_FILES.iter().map(|s| s.to_vec()).collect();
    let plans: Vec<Vec<u8>> = PLANS.iter().map(|s| s.to_vec()).collect();
    for seed in &keys {
        assert!(fuzzing::key_file(seed) > 0);
    }
    for seed in &plans {
        assert!(fuzzing::plan(seed) > 0);
    }
    kvlab_fuzzkit::export_seeds("key_file", &keys);
    let mut mk = Mutator::new(&keys, INTERESTING);
    kvlab_fuzzkit::export_seeds("plan", &plans);
    let mut mp = Mutator::new(&plans, INTERESTING);
    for _ in 0..rounds(150) {
        for i in 0..keys.len() {
            fuzzing::key_file(&mk.mutate(i));
        }
        for i in 0..plans.len() {
            fuzzing::plan(&mp.mutate(i));
        }
    }
}
