//! A stable, deterministic stand-in for a fuzzer: the body of `kvlab_model::fuzzing` run
//! over inputs mutated from model files as `kvlab model fit` writes them (the ZippyDB
//! example's flags, kvlab's size laws, explicit key ranges, a locality table and fit
//! errors) and from a hand-written one, with a fixed seed.

use kvlab_fuzzkit::{rounds, Mutator};
use kvlab_model::fuzzing;
use kvlab_model::sizes::SizeModel;

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

fn seeds() -> Vec<Vec<u8>> {
    let plain = crate::model::zippy_model();
    let mut laws = crate::model::zippy_model();
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
    kvlab_fuzzkit::export_seeds("model_file", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for _ in 0..rounds(500) {
        for i in 0..seeds.len() {
            fuzzing::model_file(&m.mutate(i));
        }
    }
}
