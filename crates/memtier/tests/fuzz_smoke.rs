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
    let mut m = Mutator::new(&seeds, INTERESTING);
    for _ in 0..rounds(3000) {
        for i in 0..seeds.len() {
            fuzzing::command(&m.mutate(i));
        }
    }
}
