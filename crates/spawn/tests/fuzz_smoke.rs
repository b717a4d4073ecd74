//! A stable, deterministic stand-in for a fuzzer: the body of `kvlab_spawn::fuzzing` run
//! over inputs mutated from the `--spawn` arguments of kvlab's docs and tests, with a
//! fixed seed.

use kvlab_spawn::fuzzing;

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

/// Tokens on the format's edges: separators, quotes, kvlab's own and reserved keys.
const INTERESTING: &[&[u8]] = &[
    b",",
    b"=",
    b"\"",
    b"\"\"",
    b" ",
    b"\t",
    b"bin=",
    b"tls=",
    b"tls-port",
    b"tls-cert-file=/c",
    b"port",
    b"L",
    b"ext_path=",
    b"0",
    b"-1",
    b"\xff",
];

const SPECS: &[&str] = &[
    "maxmemory=64mb,maxmemory-policy=allkeys-lru",
    "save=\"\",appendonly=yes,io-threads=4,save=\"900 1\"",
    "bin=/usr/bin/redis-server,tls=yes,tls-cert-file=/c,tls-key-file=/k,tls-ca-cert-file=/a",
    "m=64,t=4,c=1024,I=2m,L,ext_path=\"ext/file:64m\",modern",
    ",, no_lru_crawler ,",
];

#[test]
fn spawn_specs_survive_mutation() {
    let seeds: Vec<Vec<u8>> = SPECS.iter().map(|s| s.as_bytes().to_vec()).collect();
    for seed in &seeds {
        assert!(fuzzing::spawn_spec(seed) > 0);
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..rounds(3000) {
        for seed in &seeds {
            fuzzing::spawn_spec(&mutate(&mut rng, seed, &seeds));
        }
    }
}
