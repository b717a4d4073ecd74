//! The one mutator of kvlab's stable fuzz smoke tests.
//!
//! Each crate that parses bytes from outside keeps its fuzz bodies in its own `fuzzing`
//! module (run by cargo-fuzz on nightly where the crate has a `fuzz/` workspace) and a
//! `tests/fuzz_smoke.rs` that runs the same bodies on stable, with a fixed seed, over
//! inputs mutated from real ones. The mutations live here, once: a test supplies its
//! seeds and the tokens that sit on its format's edges, and [`Mutator::mutate`] does the
//! rest — bit flips, random bytes, insertions and deletions, a token inserted or put in
//! place of the word it lands on, truncation, a splice from another seed, an 8-byte field
//! set to an extreme and a chunk of the input repeated.
//!
//! ```
//! use kvlab_fuzzkit::{rounds, Mutator};
//!
//! let seeds = vec![b"key=value\n".to_vec(), b"other=1\n".to_vec()];
//! let mut m = Mutator::new(&seeds, &[b"=", b"\n", b"-1"]);
//! for _ in 0..rounds(100) {
//!     for i in 0..seeds.len() {
//!         let input = m.mutate(i);
//!         // parse(&input) must not panic …
//!         # let _ = input;
//!     }
//! }
//! ```

/// xorshift64*: deterministic and dependency-free.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed` (any value but 0).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// The seed every smoke test starts from.
pub const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// Rounds over every seed: the `KVLAB_FUZZ_ROUNDS` environment variable (to fuzz longer
/// locally), or `default`.
pub fn rounds(default: usize) -> usize {
    std::env::var("KVLAB_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Writes `seeds` to `$KVLAB_FUZZ_SEEDS_OUT/<target>/seed-N` when that variable is set
/// (and does nothing otherwise), so that a cargo-fuzz campaign of `target` starts from
/// the smoke test's real inputs: `KVLAB_FUZZ_SEEDS_OUT=/tmp/seeds cargo test -p CRATE
/// fuzz_smoke`, then `cargo +nightly fuzz run TARGET fuzz/corpus/TARGET /tmp/seeds/TARGET`.
pub fn export_seeds<S: AsRef<[u8]>>(target: &str, seeds: &[S]) {
    let Some(root) = std::env::var_os("KVLAB_FUZZ_SEEDS_OUT") else {
        return;
    };
    let dir = std::path::Path::new(&root).join(target);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for (i, seed) in seeds.iter().enumerate() {
        let path = dir.join(format!("seed-{i}"));
        std::fs::write(&path, seed).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// Extreme values an 8-byte length or count field is set to.
const EXTREMES: [u64; 6] = [0, 1, u64::MAX, u32::MAX as u64, 1 << 31, 1 << 40];

/// Mutates seeds into test inputs, deterministically.
#[derive(Debug)]
pub struct Mutator<'a> {
    seeds: &'a [Vec<u8>],
    tokens: &'a [&'a [u8]],
    /// The generator (public so a test can draw its own choices from the same stream).
    pub rng: Rng,
}

impl<'a> Mutator<'a> {
    /// A mutator of `seeds` (at least one) that inserts `tokens`, started from [`SEED`].
    pub fn new(seeds: &'a [Vec<u8>], tokens: &'a [&'a [u8]]) -> Mutator<'a> {
        assert!(!seeds.is_empty(), "a mutator needs a seed");
        Mutator {
            seeds,
            tokens,
            rng: Rng::new(SEED),
        }
    }

    /// One to four mutations of seed `i`.
    pub fn mutate(&mut self, i: usize) -> Vec<u8> {
        let mut buf = self.seeds[i].clone();
        for _ in 0..1 + self.rng.below(4) {
            self.once(&mut buf);
        }
        buf
    }

    /// One to four mutations of a seed picked at random.
    pub fn mutate_any(&mut self) -> Vec<u8> {
        let i = self.rng.below(self.seeds.len());
        self.mutate(i)
    }

    fn once(&mut self, buf: &mut Vec<u8>) {
        let rng = &mut self.rng;
        let at = rng.below(buf.len() + 1);
        match rng.below(10) {
            0 if !buf.is_empty() => {
                let i = rng.below(buf.len());
                buf[i] ^= 1 << rng.below(8);
            }
            1 if !buf.is_empty() => {
                let i = rng.below(buf.len());
                buf[i] = rng.next_u64() as u8;
            }
            2 => buf.insert(at, rng.next_u64() as u8),
            3 if at < buf.len() => {
                let end = (at + 1 + rng.below(8)).min(buf.len());
                buf.drain(at..end);
            }
            4 | 5 if !self.tokens.is_empty() => {
                let tok = self.tokens[rng.below(self.tokens.len())];
                // Half the time the token replaces the number or word where it lands.
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
            6 => buf.truncate(at),
            7 => {
                let other = &self.seeds[rng.below(self.seeds.len())];
                let from = rng.below(other.len() + 1);
                let to = (from + rng.below(256)).min(other.len());
                buf.splice(at..at, other[from..to].iter().copied());
            }
            8 if at + 8 <= buf.len() => {
                let v = EXTREMES[rng.below(EXTREMES.len())];
                let bytes = if rng.below(2) == 0 {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                };
                buf[at..at + 8].copy_from_slice(&bytes);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_inputs_and_they_differ_from_the_seed() {
        let seeds = vec![b"group.a.threads=4\n".to_vec()];
        let tokens: &[&[u8]] = &[b"=", b"-1"];
        let mut a = Mutator::new(&seeds, tokens);
        let mut b = Mutator::new(&seeds, tokens);
        let inputs: Vec<_> = (0..200).map(|_| a.mutate(0)).collect();
        assert!(inputs
            .iter()
            .eq((0..200).map(|_| b.mutate(0)).collect::<Vec<_>>().iter()));
        let changed = inputs.iter().filter(|i| **i != seeds[0]).count();
        assert!(
            changed > 150,
            "only {changed} of 200 inputs differ from the seed"
        );
        assert!(inputs.iter().any(|i| i.windows(2).any(|w| w == b"-1")));
    }
}
