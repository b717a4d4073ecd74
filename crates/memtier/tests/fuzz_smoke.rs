//! A stable, deterministic stand-in for a fuzzer: the bodies of `kvlab_memtier::fuzzing`
//! run over inputs mutated from import files as memtier writes them and from the
//! `--command` lines kvlab's tests use, with a fixed seed.

use kvlab_fuzzkit::{rounds, Mutator};
use kvlab_memtier::{fuzzing, write_import_item, IMPORT_HEADER};

/// Tokens on the formats' edges: separators, quotes, escapes, placeholders and numbers.
const INTERESTING: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b",",
    b", ",
    b" ",
    b"\t",
    b"\"",
    b"\"\"",
    b"'",
    b"\\",
    b"\\x",
    b"\\xff",
    b"\\'",
    b"\0",
    b"0",
    b"1",
    b"2",
    b"-1",
    b"4294967295",
    b"4294967296",
    b"18446744073709551615",
    b"__key__",
    b"__data__",
    b"h:__key__:x",
    b"\xff",
];

/// Import files: memtier's own output (quoted, with quotes, commas and CRLF inside),
/// and bare columns with CRLF lines.
fn import_seeds() -> Vec<Vec<u8>> {
    let mut quoted = format!("{IMPORT_HEADER}\n").into_bytes();
    write_import_item(&mut quoted, b"key1", b"value", 0).unwrap();
    write_import_item(&mut quoted, b"k\"2", b"a,\"b\"\r\nc\0", 300).unwrap();
    write_import_item(&mut quoted, b"memtier-1", &[b'x'; 40], 60).unwrap();
    let bare =
        format!("{IMPORT_HEADER}\r\n1, 2, 60, 5, 0, 0, 1, 3, abc, xyz\r\n0,0,0,2,0,0,0,1,k, \n")
            .into_bytes();
    vec![quoted, bare]
}

/// `--command` lines.
const COMMANDS: &[&str] = &[
    "set __key__ __data__",
    "get __key__",
    "hset h:__key__:x field __data__",
    "zadd z 1 \"a b\\x41\\n\" '\\'q'",
    "eval \"return redis.call('get', KEYS[1])\" 1 __key__",
    "  mset __key__ __data__ __key__ __data__ ",
];

#[test]
fn import_files_survive_mutation() {
    let seeds = import_seeds();
    for seed in &seeds {
        assert!(fuzzing::import(seed) > 0);
    }
    kvlab_fuzzkit::export_seeds("import", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for _ in 0..rounds(5000) {
        for i in 0..seeds.len() {
            fuzzing::import(&m.mutate(i));
        }
    }
}

#[test]
fn commands_survive_mutation() {
    let seeds: Vec<Vec<u8>> = COMMANDS.iter().map(|c| c.as_bytes().to_vec()).collect();
    for seed in &seeds {
        assert!(fuzzing::command(seed) > 0);
    }
    kvlab_fuzzkit::export_seeds("command", &seeds);
    let mut m = Mutator::new(&seeds, INTERESTING);
    for _ in 0..rounds(3000) {
        for i in 0..seeds.len() {
            fuzzing::command(&m.mutate(i));
        }
    }
}

/// `kvlab memtier` command lines of docs/memtier.md and the README, one word a line (the
/// target takes words between NUL bytes).
const COMMAND_LINES: &[&[&str]] = &[
    &[
        "-s",
        "127.0.0.1",
        "-p",
        "6379",
        "-t",
        "2",
        "-c",
        "16",
        "--ratio=1:10",
        "--key-maximum=500000",
        "--data-size=128",
        "--test-time=10",
    ],
    &[
        "-s",
        "127.0.0.1",
        "-p",
        "6379",
        "-t",
        "32",
        "-c",
        "4",
        "--distinct-client-seed",
        "--ratio=1:10",
        "--key-prefix=kv_",
        "--key-minimum=1",
        "--key-maximum=5000000",
        "--random-data",
        "--data-size=128",
        "--hide-histogram",
        "--test-time=300",
    ],
    &[
        "-s",
        "127.0.0.1",
        "-p",
        "6379",
        "-t",
        "2",
        "-c",
        "10",
        "-n",
        "10000",
        "--command=set __key__ __data__",
        "--command-ratio=2",
        "--command-key-pattern=S",
        "--command=get __key__",
        "--command-ratio=3",
        "--command=hset __key__ 'a field' __data__",
        "--key-maximum=100000",
        "-d",
        "64",
    ],
    &[
        "-s",
        "127.0.0.1",
        "-p",
        "6379",
        "--wait-ratio=10:1",
        "--num-slaves=1-1",
        "--wait-timeout=100-500",
    ],
    &[
        "-P",
        "memcache_binary",
        "--data-size-list=32:60,1024:40",
        "--key-pattern=G:G",
        "--key-stddev=10",
        "--expiry-range=10-100",
        "-n",
        "allkeys",
        "--pipeline=4",
    ],
    &[
        "--uri=redis://user:pw@localhost:6380/1",
        "--print-percentiles=50,99.5",
        "--data-size-range=10-1000",
        "--data-size-pattern=S",
        "--randomize",
        "--key-pattern=Z:Z",
        "--key-zipf-exp=0.9",
    ],
];

/// Tokens of memtier's command line: flags, separators and numbers on the edges.
const ARG_TOKENS: &[&[u8]] = &[
    b"\0",
    b"=",
    b":",
    b"-",
    b",",
    b"--ratio=",
    b"--key-pattern=",
    b"P:P",
    b"R:R",
    b"--key-minimum=",
    b"--key-maximum=",
    b"--data-size-list=",
    b"--data-size-range=",
    b"--command=",
    b"--command-ratio=",
    b"--command-key-pattern=",
    b"allkeys",
    b"--requests=",
    b"-S\0/tmp/s",
    b"--unix-socket=",
    b"0",
    b"1",
    b"-1",
    b"4294967295",
    b"4294967296",
    b"18446744073709551615",
    b"1e308",
    b"NaN",
    b"\xff",
];

#[test]
fn command_lines_survive_mutation() {
    let seeds: Vec<Vec<u8>> = COMMAND_LINES
        .iter()
        .map(|w| w.join("\0").into_bytes())
        .collect();
    for seed in &seeds {
        assert!(fuzzing::args(seed), "{:?}", String::from_utf8_lossy(seed));
    }
    kvlab_fuzzkit::export_seeds("args", &seeds);
    let mut m = Mutator::new(&seeds, ARG_TOKENS);
    // Fewer rounds than the others: a command line builds a whole workload.
    for _ in 0..rounds(300) {
        for i in 0..seeds.len() {
            fuzzing::args(&m.mutate(i));
        }
    }
}
