//! Seeds and per-key random streams, from SplitMix64 (Steele et al., "Fast splittable
//! pseudorandom number generators", OOPSLA 2014): the one mix every derived seed goes
//! through.

use rand_core::{impls, RngCore};

/// A counter-based random source (SplitMix64, Steele et al., OOPSLA 2014) seeded per
/// key, so a key's size, padding and TTL are functions of the key alone.
#[derive(Clone, Debug)]
pub struct KeyRng {
    state: u64,
}

impl KeyRng {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// The stream of key `index` for the purpose `salt`.
    #[inline]
    pub fn new(index: u64, salt: u64) -> KeyRng {
        KeyRng {
            state: mix64(index ^ salt),
        }
    }
}

/// SplitMix64's output function (a bijection on `u64`).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl RngCore for KeyRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        mix64(self.state)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        impls::fill_bytes_via_next(self, dest);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}
