//! A stable, deterministic stand-in for a fuzzer: the bodies of `kvlab_dist::fuzzing`
//! run over inputs mutated from the size distributions of the repository's cache
//! workloads and from small YCSB histogram files, with a fixed seed.

use std::path::Path;

use kvlab_dist::fuzzing;

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
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..rounds(1500) {
        for seed in &seeds {
            fuzzing::size_dist(&mutate(&mut rng, seed, &seeds));
        }
    }
}

#[test]
fn histograms_survive_mutation() {
    let seeds: Vec<Vec<u8>> = HISTOGRAMS.iter().map(|s| s.to_vec()).collect();
    for seed in &seeds {
        assert!(fuzzing::histogram(seed));
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..rounds(5000) {
        for seed in &seeds {
            fuzzing::histogram(&mutate(&mut rng, seed, &seeds));
        }
    }
}
