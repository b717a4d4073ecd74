//! The value pool: random bytes generated once, from which every value is a slice at a
//! random offset — no per-operation generation, and values still do not compress across
//! records. Each tool's byte classes are kept ([`ValuePool::ycsb`], [`ValuePool::printable`],
//! [`ValuePool::random`]); the slicing is one.

use std::sync::Arc;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::next_below;

/// Bytes to slice values from, shared (cheaply cloned) by every client of a workload.
#[derive(Clone, Debug)]
pub struct ValuePool {
    bytes: Arc<[u8]>,
}

impl ValuePool {
    /// YCSB `RandomByteIterator`'s character classes: each 6-byte group uses one 32-bit
    /// random word, bytes are `' ' + bits` with 5, 6 or 7 (masked to 95) bits.
    pub fn ycsb(len: usize, seed: u64) -> ValuePool {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut pool = vec![0u8; len];
        for chunk in pool.chunks_mut(6) {
            let bits = rng.next_u32() as i32;
            let group = [
                (bits & 31) as u8,
                ((bits >> 5) & 63) as u8,
                ((bits >> 10) & 95) as u8,
                ((bits >> 15) & 31) as u8,
                ((bits >> 20) & 63) as u8,
                ((bits >> 25) & 95) as u8,
            ];
            for (b, g) in chunk.iter_mut().zip(group) {
                *b = b' ' + g;
            }
        }
        ValuePool::from(pool)
    }

    /// Printable bytes (`' '..='~'`), uniformly: four per 64-bit random word.
    pub fn printable(len: usize, seed: u64) -> ValuePool {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut pool = vec![0u8; len];
        for chunk in pool.chunks_mut(4) {
            let word = rng.next_u64();
            for (k, b) in chunk.iter_mut().enumerate() {
                let bits = (word >> (16 * k)) & 0xFFFF;
                *b = b' ' + ((bits * 95) >> 16) as u8;
            }
        }
        ValuePool::from(pool)
    }

    /// Any bytes (memtier's `--random-data`).
    pub fn random(len: usize, seed: u64) -> ValuePool {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut pool = vec![0u8; len];
        rng.fill_bytes(&mut pool);
        ValuePool::from(pool)
    }

    /// `len` copies of `byte` (memtier's `x…x` values without `--random-data`).
    pub fn filled(len: usize, byte: u8) -> ValuePool {
        ValuePool::from(vec![byte; len])
    }

    /// The pool's size, in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for an empty pool.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The whole pool, shared (for values handed out as ranges of it, without a copy).
    pub fn shared(&self) -> &Arc<[u8]> {
        &self.bytes
    }

    /// A random offset at which `len` bytes fit (`len` at most the pool's size).
    #[inline]
    pub fn offset<R: RngCore>(&self, rng: &mut R, len: usize) -> usize {
        next_below(rng, (self.bytes.len() - len + 1) as u64) as usize
    }

    /// `len` bytes from a random offset.
    #[inline]
    pub fn slice<R: RngCore>(&self, rng: &mut R, len: usize) -> &[u8] {
        let at = self.offset(rng, len);
        &self.bytes[at..at + len]
    }

    /// `len` bytes from `offset`.
    #[inline]
    pub fn at(&self, offset: usize, len: usize) -> &[u8] {
        &self.bytes[offset..offset + len]
    }
}

impl From<Vec<u8>> for ValuePool {
    fn from(bytes: Vec<u8>) -> ValuePool {
        ValuePool {
            bytes: bytes.into(),
        }
    }
}
