//! A stable, deterministic stand-in for a fuzzer: the bodies of `kvlab_dist::fuzzing`
//! run over inputs mutated from the size distributions of the repository's cache
//! workloads and from small YCSB histogram files, with a fixed seed.

use std::path::Path;

use kvlab_dist::fuzzing;
use kvlab_fuzzkit::{rounds, Mutator};

/// Tokens on the formats' edges: separators, units, huge, negative and odd numbers.
const INTERESTING: &[&[u8]] = &[
    b"\n",
    b"\t",
    b":",
    b",",
    b"-",
    b" ",
    b"0",
    b"1",
    b"-1",
    b"0.5",
    b"1e308",
    b"1e-320",
    b"NaN",
    b"inf",
    b"KiB",
    b"GiB",
    b"T",
    b"1.5",
    b"4294967295",
    b"9223372036854775807",
    b"18446744073709551615",
    b"18446744073709551616",
    b"0-18446744073709551615",
    b"fixed:",
    b"uniform:",
    b"pieces:",
    b"discrete:",
    b"BlockSize\t",
    b"\xff",
];

/// The size forms of the repository's cache workloads (`cache.key_size=…` and
/// `cache.value_size=…`), and one of each form.
fn size_seeds() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/cache");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            if let Some((key, value)) = line.split_once('=') {
                if key.starts_with("cache.") && key.ends_with("_size") && key != "cache.data_size" {
                    seeds.push(value.as_bytes().to_vec());
                }
            }
        }
    }
    seeds.sort();
    seeds.dedup();
    for form in [
        "100",
        "fixed:4KiB",
        "uniform:16-64",
        "pieces:1-10:0.5,20:1.5,1KiB-2KiB:2",
        "discrete:8:1,16:2,1.5KiB:0",
    ] {
        seeds.push(form.as_bytes().to_vec());
    }
    seeds
}

/// YCSB histogram files (`fieldlengthdistribution=histogram`).
const HISTOGRAMS: &[&[u8]] = &[
    b"BlockSize\t10\n0\t5\n1\t3\n2\t0\n3\t2\n",
    b"BlockSize\t1\n0\t1\n\n",
    b"BlockSize\t4096\n0\t100\n1\t50\n2\t25\n3\t12\n4\t6\n5\t3\n",
];

#[test]
fn size_distributions_survive_mutation() {
    let seeds = size_seeds();
    assert!(seeds.len() > 5);
    for seed in &seeds {
        assert!(
            fuzzing::size_dist(seed),
            "`{}` does not parse",
            String::from_utf8_lossy(seed)
        );
    }
    kvlab_fuzzkit::export_seeds("size_dist", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for _ in 0..rounds(1500) {
        for i in 0..seeds.len() {
            fuzzing::size_dist(&m.mutate(i));
        }
    }
}

#[test]
fn histograms_survive_mutation() {
    let seeds: Vec<Vec<u8>> = HISTOGRAMS.iter().map(|s| s.to_vec()).collect();
    for seed in &seeds {
        assert!(fuzzing::histogram(seed));
    }
    kvlab_fuzzkit::export_seeds("histogram", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for _ in 0..rounds(5000) {
        for i in 0..seeds.len() {
            fuzzing::histogram(&m.mutate(i));
        }
    }
}
