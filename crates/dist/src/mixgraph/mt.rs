//! [`Mt19937_64`]: the 64-bit Mersenne Twister exactly as C++'s `std::mt19937_64`
//! (Matsumoto & Nishimura, ACM TOMACS 8(1), 1998; parameters of C++11
//! [rand.predef]) — the generator behind RocksDB's `Random64` (`util/random.h`), which
//! db_bench gives every thread and re-seeds for every power-model key.
//!
//! db_bench's power model seeds a fresh `Random64` with the key's rank and keeps only its
//! first output, so [`Mt19937_64::first_output`] computes that output from the three
//! state words it depends on, and [`Mt19937_64::first_outputs`] does so for several
//! seeds at once, interleaved, so the multiplications of independent seeds overlap.

use rand_core::{impls, RngCore};

const N: usize = 312;
const M: usize = 156;
const MATRIX_A: u64 = 0xB502_6F5A_A966_19E9;
const UPPER_MASK: u64 = 0xFFFF_FFFF_8000_0000;
const LOWER_MASK: u64 = 0x7FFF_FFFF;
const INIT_MULTIPLIER: u64 = 6_364_136_223_846_793_005;

/// `std::mt19937_64`: the same outputs as the C++ standard library's for the same seed
/// (the standard requires the 10000th output of the default seed 5489 to be
/// 9981545732273789042).
#[derive(Clone)]
pub struct Mt19937_64 {
    state: [u64; N],
    index: usize,
}

impl std::fmt::Debug for Mt19937_64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mt19937_64")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// One step of the seeding recurrence: word `i` from word `i − 1`.
#[inline(always)]
fn init_step(previous: u64, i: u64) -> u64 {
    INIT_MULTIPLIER
        .wrapping_mul(previous ^ (previous >> 62))
        .wrapping_add(i)
}

/// The twist of one word from words `i`, `i + 1` and `i + M`.
#[inline(always)]
fn twist(current: u64, next: u64, far: u64) -> u64 {
    let y = (current & UPPER_MASK) | (next & LOWER_MASK);
    far ^ (y >> 1) ^ if y & 1 == 1 { MATRIX_A } else { 0 }
}

/// The output tempering.
#[inline(always)]
fn temper(mut y: u64) -> u64 {
    y ^= (y >> 29) & 0x5555_5555_5555_5555;
    y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
    y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
    y ^ (y >> 43)
}

impl Mt19937_64 {
    /// The default seed of `std::mt19937_64`.
    pub const DEFAULT_SEED: u64 = 5489;

    /// The generator `std::mt19937_64(seed)`.
    pub fn new(seed: u64) -> Mt19937_64 {
        let mut state = [0u64; N];
        state[0] = seed;
        for i in 1..N {
            state[i] = init_step(state[i - 1], i as u64);
        }
        Mt19937_64 { state, index: N }
    }

    /// The next output (`operator()`).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        if self.index >= N {
            self.refill();
        }
        let y = self.state[self.index];
        self.index += 1;
        temper(y)
    }

    /// Twists the whole state (all `N` words at once, as libstdc++ does).
    fn refill(&mut self) {
        let s = &mut self.state;
        for i in 0..N - M {
            s[i] = twist(s[i], s[i + 1], s[i + M]);
        }
        for i in N - M..N - 1 {
            s[i] = twist(s[i], s[i + 1], s[i + M - N]);
        }
        s[N - 1] = twist(s[N - 1], s[0], s[M - 1]);
        self.index = 0;
    }

    /// The first output of `std::mt19937_64(seed)`, without building the state: the
    /// first output is the twist of words 0, 1 and 156, so only the seeding recurrence
    /// up to word 156 is needed.
    #[inline]
    pub fn first_output(seed: u64) -> u64 {
        let word1 = init_step(seed, 1);
        let mut word = word1;
        for i in 2..=M as u64 {
            word = init_step(word, i);
        }
        temper(twist(seed, word1, word))
    }

    /// [`Mt19937_64::first_output`] of each seed, the `K` recurrences interleaved so
    /// that a core overlaps their multiplications (the recurrence of one seed is a
    /// chain of dependent multiplications).
    #[inline]
    pub fn first_outputs<const K: usize>(seeds: &[u64; K]) -> [u64; K] {
        let mut word1 = [0u64; K];
        for (w, &s) in word1.iter_mut().zip(seeds) {
            *w = init_step(s, 1);
        }
        let mut word = word1;
        for i in 2..=M as u64 {
            for w in &mut word {
                *w = init_step(*w, i);
            }
        }
        let mut out = [0u64; K];
        for k in 0..K {
            out[k] = temper(twist(seeds[k], word1[k], word[k]));
        }
        out
    }
}

impl RngCore for Mt19937_64 {
    /// The upper half of [`Mt19937_64::next_u64`] (`std::mt19937_64` has no 32-bit
    /// output).
    #[inline]
    fn next_u32(&mut self) -> u32 {
        (Mt19937_64::next_u64(self) >> 32) as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        Mt19937_64::next_u64(self)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        impls::fill_bytes_via_next(self, dest);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standards_10000th_output() {
        // C++11 [rand.predef]/6: "Required behavior: The 10000th consecutive invocation
        // of a default-constructed object of type mt19937_64 shall produce the value
        // 9981545732273789042."
        let mut mt = Mt19937_64::new(Mt19937_64::DEFAULT_SEED);
        let mut last = 0;
        for _ in 0..10_000 {
            last = mt.next_u64();
        }
        assert_eq!(last, 9_981_545_732_273_789_042);
    }

    #[test]
    fn first_output_is_the_generators_first() {
        let seeds = [0, 1, 2, 5489, u64::MAX, 1 << 63, 0x1234_5678_9ABC_DEF0, 42];
        for s in seeds {
            assert_eq!(
                Mt19937_64::first_output(s),
                Mt19937_64::new(s).next_u64(),
                "{s}"
            );
        }
        let batch = Mt19937_64::first_outputs(&seeds);
        for (s, out) in seeds.iter().zip(batch) {
            assert_eq!(out, Mt19937_64::new(*s).next_u64(), "{s}");
        }
    }
}
