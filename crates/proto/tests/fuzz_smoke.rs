//! A stable, deterministic stand-in for the cargo-fuzz targets: the same target bodies
//! (`kvlab_proto::fuzzing`) run over a few hundred thousand inputs mutated from valid
//! replies and requests, with a fixed seed.

use kvlab_fuzzkit::{Mutator, Rng};
use kvlab_proto::fuzzing;

const INTERESTING: &[&[u8]] = &[
    b"\r",
    b"\n",
    b"\r\n",
    b"*",
    b"$",
    b"%",
    b"|",
    b">",
    b"~",
    b"-1",
    b"-2",
    b"0",
    b"9",
    b"99999999999999999999",
    b"536870913",
    b"*1\r\n",
    b"|1\r\n",
    b"$-1\r\n",
    b" ",
    b"END\r\n",
    b"VALUE ",
    b"VA ",
    b"noreply",
    b"{",
    b"}",
    b"\0",
    b"\xff",
];

fn resp_seeds() -> Vec<Vec<u8>> {
    [
        &b"+OK\r\n"[..],
        b"-MOVED 3999 127.0.0.1:6381\r\n",
        b"-ASK 1 [::1]:7000\r\n",
        b":-42\r\n",
        b"$5\r\nhello\r\n",
        b"$-1\r\n",
        b"*-1\r\n",
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
        b"*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Hello\r\n-World\r\n",
        b"_\r\n",
        b"#t\r\n",
        b",-1.5e10\r\n",
        b",nan\r\n",
        b"(-12345678901234567890\r\n",
        b"!5\r\nERR x\r\n",
        b"=8\r\ntxt:abcd\r\n",
        b"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n_\r\n",
        b"~2\r\n#f\r\n,1\r\n",
        b">2\r\n+message\r\n$1\r\nx\r\n",
        b"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n",
        b"*1\r\n|1\r\n+a\r\n+b\r\n*0\r\n",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect()
}

fn memcache_seeds() -> Vec<Vec<u8>> {
    [
        &b"VALUE foo 0 3\r\nbar\r\nEND\r\n"[..],
        b"VALUE k 7 5 123\r\na\r\nb\r\r\n",
        b"STORED\r\n",
        b"NOT_FOUND\r\n",
        b"STAT pid 1\r\n",
        b"VERSION 1.6\r\n",
        b"CLIENT_ERROR bad\r\n",
        b"42\r\n",
        b"VA 3 f0 Oab kfoo\r\nbar\r\n",
        b"HD c5\r\n",
        b"EN\r\n",
        b"MN\r\n",
        b"ME k a=1\r\n",
        b"get a b c\r\n",
        b"set k 1 2 3 noreply\r\nabc\r\n",
        b"cas k 1 2 3 4\r\nabc\r\n",
        b"touch k 10\r\n",
        b"incr k 5\r\n",
        b"flush_all 1 noreply\r\n",
        b"mg k v f O1\r\n",
        b"ms k 2 T0 MS\r\nab\r\n",
        b"md k q\r\n",
        b"mn\r\n",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect()
}

/// Binary protocol responses as memcached 1.6 sends them: a hit (flags extras), a
/// GETK hit (key), a miss with its message, a store, a NOOP, a STAT pair and its end.
fn memcache_binary_seeds() -> Vec<Vec<u8>> {
    use kvlab_proto::memcache::binary::{Opcode, Response, Status};
    let response = |opcode, status, extras: &[u8], key: &[u8], value: &[u8]| {
        let mut out = Vec::new();
        Response {
            opcode,
            status,
            opaque: 0x0102_0304,
            cas: 42,
            extras,
            key,
            value,
        }
        .write(&mut out);
        out
    };
    vec![
        response(Opcode::GET, Status::OK, &[0, 0, 0, 7], b"", b"value"),
        response(Opcode::GETKQ, Status::OK, &[0, 0, 0, 0], b"key", b"v"),
        response(Opcode::GET, Status::KEY_NOT_FOUND, b"", b"", b"Not found"),
        response(Opcode::SET, Status::OK, b"", b"", b""),
        response(Opcode::NOOP, Status::OK, b"", b"", b""),
        response(Opcode::STAT, Status::OK, b"", b"pid", b"123"),
        response(Opcode::STAT, Status::OK, b"", b"", b""),
        response(
            Opcode::SET,
            Status::VALUE_TOO_LARGE,
            b"",
            b"",
            b"Too large.",
        ),
    ]
}

const ITERATIONS: usize = 200_000;

#[test]
fn resp_parse_survives_mutated_replies() {
    let seeds = resp_seeds();
    kvlab_fuzzkit::export_seeds("resp_parse", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for seed in &seeds {
        assert!(
            fuzzing::resp_parse(seed),
            "{:?}",
            String::from_utf8_lossy(seed)
        );
    }
    let mut whole = 0;
    for _ in 0..ITERATIONS {
        whole += fuzzing::resp_parse(&m.mutate_any()) as usize;
    }
    // The mutations must keep a good share of inputs valid, or the deep checks never run.
    assert!(whole > ITERATIONS / 10, "only {whole} valid inputs");
}

#[test]
fn memcache_parse_survives_mutated_replies() {
    let seeds = memcache_seeds();
    kvlab_fuzzkit::export_seeds("memcache_parse", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for seed in &seeds {
        assert!(
            fuzzing::memcache_parse(seed) > 0,
            "{:?}",
            String::from_utf8_lossy(seed)
        );
    }
    let mut whole = 0;
    for _ in 0..ITERATIONS {
        whole += fuzzing::memcache_parse(&m.mutate_any());
    }
    assert!(whole > ITERATIONS / 10, "only {whole} valid inputs");
}

#[test]
fn memcache_binary_parse_survives_mutated_responses() {
    let seeds = memcache_binary_seeds();
    kvlab_fuzzkit::export_seeds("memcache_binary_parse", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for seed in &seeds {
        assert!(fuzzing::memcache_binary_parse(seed), "{seed:?}");
    }
    let mut whole = 0;
    for _ in 0..ITERATIONS {
        whole += fuzzing::memcache_binary_parse(&m.mutate_any()) as usize;
    }
    assert!(whole > ITERATIONS / 20, "only {whole} valid inputs");
}

#[test]
fn pure_random_bytes_over_a_type_alphabet() {
    // Bytes drawn from the protocols' own alphabet reach deeper than uniform noise.
    let alphabet = b"+-:$*_#,(!=%~|>\r\n0123456789tfVAHDENMOk ";
    let mut rng = Rng::new(42);
    for _ in 0..50_000 {
        let len = rng.below(48);
        let buf: Vec<u8> = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        fuzzing::resp_parse(&buf);
        fuzzing::memcache_parse(&buf);
    }
}

/// `n` arrays of one element nested in each other around `+a`.
fn nested_arrays(n: usize) -> Vec<u8> {
    let mut buf = b"*1\r\n".repeat(n);
    buf.extend_from_slice(b"+a\r\n");
    buf
}

/// Found by the first `resp_parse` campaign: the harness counted the scalar at the bottom
/// of a legal 64-deep reply as a 65th level. Only aggregates are levels: 64 nested arrays
/// are legal, 65 are an error of the parser (not of the harness).
#[test]
fn resp_parse_a_scalar_at_the_bottom_of_the_deepest_legal_reply() {
    let deepest = nested_arrays(kvlab_proto::resp::MAX_DEPTH);
    assert!(fuzzing::resp_parse(&deepest));
    let too_deep = nested_arrays(kvlab_proto::resp::MAX_DEPTH + 1);
    assert!(!fuzzing::resp_parse(&too_deep));
    assert!(matches!(
        kvlab_proto::resp::parse(&too_deep),
        Err(kvlab_proto::ProtoError::TooDeep { max: 64, .. })
    ));
    // The same depths reached through maps and sets.
    let mut mixed = b"%1\r\n+k\r\n~1\r\n".repeat(kvlab_proto::resp::MAX_DEPTH / 2);
    mixed.extend_from_slice(b"_\r\n");
    assert!(fuzzing::resp_parse(&mixed));
}
