//! A stable, deterministic stand-in for a fuzzer: the body of `kvlab_model::fuzzing` run
//! over inputs mutated from model files as `kvlab model fit` writes them (the ZippyDB
//! example's flags, kvlab's size laws, explicit key ranges, a locality table and fit
//! errors) and from a hand-written one, with a fixed seed.

use kvlab_dist::mixgraph::MixGraphConfig;
use kvlab_model::fuzzing;
use kvlab_model::sizes::SizeModel;
use kvlab_model::{KvlabParams, MixGraphParams, Model};

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

/// Tokens on TOML's and the model's edges.
const INTERESTING: &[&[u8]] = &[
    b"\n",
    b"=",
    b"[",
    b"]",
    b"[[",
    b"\"",
    b"'",
    b"#",
    b",",
    b".",
    b"{",
    b"}",
    b"0",
    b"1",
    b"-1",
    b"0.5",
    b"1.0",
    b"1e308",
    b"1e-320",
    b"nan",
    b"inf",
    b"-inf",
    b"true",
    b"4294967295",
    b"9223372036854775807",
    b"18446744073709551615",
    b"[mixgraph]\n",
    b"[kvlab]\n",
    b"[locality]\n",
    b"[fit]\n",
    b"model = \"lognormal\"",
    b"keyrange_starts = [",
    b"\xff",
];

fn zippy() -> Model {
    let z = MixGraphConfig::zippydb_example();
    Model {
        header: vec!["made by hand from the ZippyDB example".into()],
        mixgraph: MixGraphParams {
            num: Some(z.num),
            reads: Some(z.reads),
            key_size: Some(z.key_size),
            keyrange_num: Some(z.keyrange_num),
            keyrange_dist_a: Some(z.keyrange_dist_a),
            keyrange_dist_b: Some(z.keyrange_dist_b),
            keyrange_dist_c: Some(z.keyrange_dist_c),
            keyrange_dist_d: Some(z.keyrange_dist_d),
            key_dist_a: Some(z.key_dist_a),
            key_dist_b: Some(z.key_dist_b),
            mix_get_ratio: Some(0.85),
            mix_put_ratio: Some(0.14),
            mix_seek_ratio: Some(0.01),
            value_k: Some(1.0),
            sine_mix_rate: Some(false),
            ..MixGraphParams::default()
        },
        kvlab: KvlabParams::default(),
        locality: None,
        fit: toml::Table::new(),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let plain = zippy();
    let mut laws = zippy();
    laws.kvlab.value_model = Some(SizeModel::Lognormal {
        mu: 4.5,
        sigma: 0.75,
    });
    laws.kvlab.scan_model = Some(SizeModel::Exponential { mean: 12.5 });
    laws.kvlab.keyrange_starts = Some(vec![0, 1000, 250_000, 4_000_000]);
    laws.mixgraph.keyrange_num = Some(4);
    laws.fit
        .insert("value_ks".into(), toml::Value::Float(0.0125));
    laws.fit
        .insert("ops".into(), toml::Value::Integer(1_000_000));
    let mut seeds = vec![plain.to_toml().into_bytes(), laws.to_toml().into_bytes()];
    seeds.push(
        b"# A hand-written model.\n\n[mixgraph]\nnum = 10000\nkey_size = 16\nvalue_k = 0.2615\n\
          value_sigma = 25.45\nmix_get_ratio = 0.5\nmix_put_ratio = 0.5\n\n[locality]\n\
          new_share = 0.25\nnew_steps = [[0, 3], [1, 1]]\nreuse = [[1, 8, 0, 5], [9, 64, 1, 2]]\n\
          pure_keys = 1.0\n"
            .to_vec(),
    );
    seeds
}

#[test]
fn model_files_survive_mutation() {
    let seeds = seeds();
    for seed in &seeds {
        assert!(
            fuzzing::model_file(seed),
            "a seed does not read:\n{}",
            String::from_utf8_lossy(seed)
        );
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..rounds(500) {
        for seed in &seeds {
            fuzzing::model_file(&mutate(&mut rng, seed, &seeds));
        }
    }
}
