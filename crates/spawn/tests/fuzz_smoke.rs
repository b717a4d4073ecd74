//! A stable, deterministic stand-in for a fuzzer: the body of `kvlab_spawn::fuzzing` run
//! over inputs mutated from the `--spawn` arguments of kvlab's docs and tests, with a
//! fixed seed.

use kvlab_fuzzkit::{rounds, Mutator};
use kvlab_spawn::fuzzing;

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
    kvlab_fuzzkit::export_seeds("spawn_spec", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for _ in 0..rounds(3000) {
        for i in 0..seeds.len() {
            fuzzing::spawn_spec(&m.mutate(i));
        }
    }
}
