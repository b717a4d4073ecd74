//! A stable, deterministic stand-in for a fuzzer: the bodies of `kvlab_memtier::fuzzing`
//! run over inputs mutated from import files as memtier writes them and from the
//! `--command` lines kvlab's tests use, with a fixed seed.

use kvlab_memtier::{fuzzing, write_import_item, IMPORT_HEADER};

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
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..rounds(5000) {
        for seed in &seeds {
            fuzzing::import(&mutate(&mut rng, seed, &seeds));
        }
    }
}

#[test]
fn commands_survive_mutation() {
    let seeds: Vec<Vec<u8>> = COMMANDS.iter().map(|c| c.as_bytes().to_vec()).collect();
    for seed in &seeds {
        assert!(fuzzing::command(seed) > 0);
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..rounds(3000) {
        for seed in &seeds {
            fuzzing::command(&mutate(&mut rng, seed, &seeds));
        }
    }
}
