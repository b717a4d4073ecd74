//! [`KeyChooser`]: the one interface of every key-number distribution, so that a
//! workload (or a model fitted to a trace) picks keys without knowing which
//! distribution it holds.

use std::sync::Arc;

use rand_core::RngCore;

use crate::ycsb::{Hotspot, ScrambledZipfian, Sequential, SkewedLatest, Uniform, Zipfian};
use crate::{CacheBenchNormal, Zipf, ZipfMixture, ZipfRejection};

/// Chooses key numbers (or ranks) from a random source.
///
/// YCSB's choosers implement it over their `[min, max]` range, the Zipf samplers over
/// their ranks. A chooser whose key space grows as records are inserted (YCSB's
/// `latest`, or a Zipfian over a growing count) keeps that state itself.
pub trait KeyChooser {
    /// The next key number.
    fn next_key<R: RngCore>(&mut self, rng: &mut R) -> u64;
}

macro_rules! chooser_by_next {
    ($($t:ty),* $(,)?) => {
        $(
            impl KeyChooser for $t {
                #[inline]
                fn next_key<R: RngCore>(&mut self, rng: &mut R) -> u64 {
                    self.next(rng)
                }
            }
        )*
    };
}

chooser_by_next!(
    Uniform,
    Zipfian,
    ScrambledZipfian,
    SkewedLatest,
    Hotspot,
    ZipfRejection,
    ZipfMixture,
    Zipf,
    CacheBenchNormal,
);

/// YCSB's `sequential` key chooser, shared by every worker (one counter, as YCSB shares
/// one generator object between client threads).
impl KeyChooser for Arc<Sequential> {
    #[inline]
    fn next_key<R: RngCore>(&mut self, _rng: &mut R) -> u64 {
        self.next()
    }
}

#[cfg(test)]
mod tests {
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    use super::*;

    /// Draws through the trait, generically.
    fn draw<C: KeyChooser>(c: &mut C, n: usize) -> Vec<u64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        (0..n).map(|_| c.next_key(&mut rng)).collect()
    }

    #[test]
    fn the_trait_draws_the_choosers_own_stream() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let z = ScrambledZipfian::new(0, 999, 0.99);
        let direct: Vec<u64> = (0..100).map(|_| z.next(&mut rng)).collect();
        assert_eq!(draw(&mut z.clone(), 100), direct);
        let keys = draw(&mut Uniform::new(10, 19), 1000);
        assert!(keys.iter().all(|k| (10..=19).contains(k)));
        let seq = Arc::new(Sequential::new(5, 9));
        assert_eq!(draw(&mut seq.clone(), 3), [5, 6, 7]);
    }
}
