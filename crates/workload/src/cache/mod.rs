//! [`CacheWorkload`]: CacheBench-style cache workloads — a fixed key population with
//! per-key key and value sizes, a popularity distribution, a get/set/delete mix with
//! one-hit ("lone") requests, and look-aside fills.
//!
//! A [`CacheSpec`] (plain data) describes the workload; it comes from a kvlab property
//! file ([`CacheSpec::from_properties`], `workloads/cache/…`) or from a CacheLib
//! CacheBench JSON config ([`crate::CacheBenchConfig`]). [`CacheWorkload::new`]
//! validates it and precomputes the samplers; each client then gets a [`CacheSource`]
//! (through [`Workload`]) that fills requests without allocating. The model is
//! described on [`CacheWorkload`].

pub(crate) mod cachebench;
mod props;

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use kvlab_core::{OpKind, Outcome, Request, Slot};
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

pub(crate) use kvlab_core::parse_bytes;
use kvlab_dist::{mix64, Alias, CacheBenchNormal, KeyRng, SizeSampler, ValuePool, ZipfMixture};
pub use kvlab_dist::{SizeDist, SizePiece};

use crate::generator::{next_below, next_f64, Zipfian};
use crate::{worker_seed, WorkloadError};
use kvlab_core::{Needs, OpSource, Ticket, Verdict, Workload};

/// How keys are chosen for gets, sets and deletes.
#[derive(Clone, Debug, PartialEq)]
pub enum Popularity {
    /// Every key equally likely.
    Uniform,
    /// Zipf over key indices: index `k` is drawn with probability ∝ 1/(k+1)^θ. For
    /// 0 < θ < 1 this is [`Zipfian`] (YCSB's algorithm, as CoreWorkload's `zipfian`);
    /// for θ ≥ 1 an alias table over the 2¹⁶ most popular keys and rejection-inversion
    /// (Hörmann & Derflinger 1996) for the rest. Indices are not
    /// scrambled, but key bytes are, so the hot keys are spread over the key space.
    Zipfian {
        /// The exponent θ (> 0).
        theta: f64,
    },
    /// CacheBench's discrete popularity (`popularityBuckets` / `popularityWeights`):
    /// bucket `b` is chosen with probability ∝ `weights[b]`, then a key uniformly
    /// within it. Bucket `b` holds `sizes[b]` keys when `keys = Σ sizes`; otherwise the
    /// sizes are scaled to `keys` (see [`CacheWorkload::bucket_ranges`]).
    Buckets {
        /// Relative number of keys per bucket (each ≥ 1).
        sizes: Vec<u64>,
        /// Relative weight of each bucket (≥ 0, positive sum).
        weights: Vec<f64>,
    },
    /// CacheBench's popularity when a config has no buckets: a normal over the key
    /// indices with mean (keys−1)/2 and standard deviation (keys−1)/4, rounded and
    /// redrawn while outside the key range.
    Normal,
}

/// Relative shares of the operations (normalised when the workload is built).
///
/// A get, set or delete chooses a population key by [`Popularity`]. A lone get reads,
/// and a lone set writes, a fresh key outside the population that no other request
/// uses: CacheBench's `loneGetRatio` / `loneSetRatio`. CacheBench normalises all ratios
/// together, so `loneGetRatio` is in addition to `getRatio`, not a part of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpMix {
    /// Gets of population keys.
    pub get: f64,
    /// Sets of population keys.
    pub set: f64,
    /// Deletes of population keys.
    pub delete: f64,
    /// Gets of fresh keys (guaranteed misses).
    pub lone_get: f64,
    /// Sets of fresh keys.
    pub lone_set: f64,
}

impl OpMix {
    /// Shares in `[get, set, delete, lone_get, lone_set]` order.
    pub fn shares(&self) -> [f64; 5] {
        [
            self.get,
            self.set,
            self.delete,
            self.lone_get,
            self.lone_set,
        ]
    }

    /// The mix scaled to sum to 1; `None` when a share is negative or not finite, or
    /// they sum to 0.
    pub fn normalised(&self) -> Option<OpMix> {
        let shares = self.shares();
        if shares.iter().any(|s| !(s.is_finite() && *s >= 0.0)) {
            return None;
        }
        let total: f64 = shares.iter().sum();
        (total > 0.0).then(|| OpMix {
            get: self.get / total,
            set: self.set / total,
            delete: self.delete / total,
            lone_get: self.lone_get / total,
            lone_set: self.lone_set / total,
        })
    }
}

/// Everything that defines a cache workload, before validation by
/// [`CacheWorkload::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct CacheSpec {
    /// Number of keys in the population (CacheBench `numKeys`).
    pub keys: u64,
    /// Operations to run when the run plan gives neither a count nor a duration
    /// (CacheBench `numOps × numThreads`). Every request counts, look-aside fills
    /// included.
    pub operations: u64,
    /// How keys are chosen.
    pub popularity: Popularity,
    /// Key sizes in bytes (per key).
    pub key_size: SizeDist,
    /// Value sizes in bytes (per key).
    pub value_size: SizeDist,
    /// Time to live in seconds of written values (per key); `None` for no expiry.
    pub ttl_s: Option<SizeDist>,
    /// The operation mix.
    pub mix: OpMix,
    /// Follow every get that misses with a set of that key (CacheBench
    /// `enableLookaside`).
    pub lookaside: bool,
}

impl Default for CacheSpec {
    /// The defaults of the `cache.*` properties (see `docs/cache-workloads.md`).
    fn default() -> CacheSpec {
        CacheSpec {
            keys: 1_000_000,
            operations: 1_000_000,
            popularity: Popularity::Zipfian { theta: 0.99 },
            key_size: SizeDist::fixed(16),
            value_size: SizeDist::fixed(100),
            ttl_s: None,
            mix: OpMix {
                get: 0.9,
                set: 0.1,
                delete: 0.0,
                lone_get: 0.0,
                lone_set: 0.0,
            },
            lookaside: false,
        }
    }
}

impl CacheSpec {
    /// The mean size of a key-value pair, key plus value, in bytes, from the
    /// distributions' means.
    pub fn mean_kv_bytes(&self) -> f64 {
        self.key_size.mean() + self.value_size.mean()
    }

    /// Parses a byte count such as `cache.data_size`'s: a number with an optional
    /// binary unit suffix, case-insensitive — `B`, `K`/`KB`/`KiB` (2¹⁰), `M`/`MB`/`MiB`
    /// (2²⁰), `G`/`GB`/`GiB` (2³⁰), `T`/`TB`/`TiB` (2⁴⁰); every suffix is binary, as
    /// memcached's `-m` reads it. A fraction is allowed with a suffix (`1.5GiB`) and
    /// rounded down to bytes. `None` for anything else.
    pub fn parse_bytes(text: &str) -> Option<u64> {
        parse_bytes(text)
    }

    /// The number of keys whose data fills `data_size_bytes`:
    /// `max(1, ⌊data_size / (mean key size + mean value size)⌋)`.
    pub fn keys_for_data_size(
        data_size_bytes: u64,
        key_size: &SizeDist,
        value_size: &SizeDist,
    ) -> u64 {
        let mean = key_size.mean() + value_size.mean();
        if mean <= 0.0 {
            return 1;
        }
        ((data_size_bytes as f64 / mean).floor() as u64).max(1)
    }
}

/// The 64 digits of key names: base64url, printable and free of spaces.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/// The first byte of lone keys: outside [`ALPHABET`], so never a population key.
const LONE_MARK: u8 = b'#';
/// Distinct padding offsets in the key filler.
const FILL_OFFSETS: usize = 1024;
/// Keys up to this size are copied from the filler in one constant-length copy.
const SHORT_KEY: usize = 64;
/// Room in the value pool besides one maximal value, so offsets vary.
const VALUE_POOL_SLACK: usize = 256 << 10;
/// Seeds of the shared byte pools: fixed, never the clock.
const VALUE_POOL_SEED: u64 = 0x6b76_6c61_625f_6376;
const KEY_FILL_SEED: u64 = 0x6b76_6c61_625f_6b66;
/// Salts of the per-key random sources.
const KEY_SALT: u64 = 0x4b45_5953_495a_4531;
const VALUE_SALT: u64 = 0x5641_4c53_495a_4531;
const TTL_SALT: u64 = 0x5454_4c53_4543_5331;
const LONE_SALT: u64 = 0x4c4f_4e45_4b45_5931;
const TAG_SALT: u64 = 0x5441_4752_554e_3031;
/// Ticket bit of a lone get (the rest is the lone counter); a population get's ticket
/// is its key index (< 2⁶⁰).
const LONE_TICKET: u64 = 1 << 63;

/// The operation kinds of [`OpMix`], in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CacheOp {
    Get,
    Set,
    Delete,
    LoneGet,
    LoneSet,
}

const CACHE_OPS: [CacheOp; 5] = [
    CacheOp::Get,
    CacheOp::Set,
    CacheOp::Delete,
    CacheOp::LoneGet,
    CacheOp::LoneSet,
];

/// The key chooser built from a [`Popularity`].
#[derive(Clone, Debug)]
enum Chooser {
    Uniform(u64),
    Zipfian(Zipfian),
    ZipfHeavy(ZipfMixture),
    Buckets {
        alias: Alias,
        /// Per bucket: first key index and number of keys.
        ranges: Vec<(u64, u64)>,
    },
    Normal(CacheBenchNormal),
}

/// The bijection between key indices and the number spelled by a key's digits.
#[derive(Clone, Copy, Debug)]
struct Scramble {
    digits: usize,
    mask: u64,
    shift: u32,
}

impl Scramble {
    const M1: u64 = 0x9E37_79B9_7F4A_7C15;
    const M2: u64 = 0xBF58_476D_1CE4_E5B9;

    fn new(keys: u64) -> Scramble {
        let needed = 64 - (keys - 1).leading_zeros();
        let digits = (needed.div_ceil(6)).max(1) as usize;
        let bits = 6 * digits as u32;
        Scramble {
            digits,
            mask: if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
            shift: bits.div_ceil(2),
        }
    }

    /// Multiply by an odd constant and xor-shift, twice: each step is invertible on
    /// `bits` bits.
    #[inline]
    fn forward(&self, i: u64) -> u64 {
        let mut x = i.wrapping_mul(Self::M1) & self.mask;
        x ^= x >> self.shift;
        x = x.wrapping_mul(Self::M2) & self.mask;
        x ^ (x >> self.shift)
    }

    fn inverse(&self, x: u64) -> u64 {
        // With shift ≥ bits/2, x ^ (x >> shift) is its own inverse.
        let mut x = x ^ (x >> self.shift);
        x = x.wrapping_mul(inverse_mod_2_64(Self::M2)) & self.mask;
        x ^= x >> self.shift;
        x.wrapping_mul(inverse_mod_2_64(Self::M1)) & self.mask
    }
}

/// The inverse of an odd `a` modulo 2⁶⁴ (Newton's iteration doubles the correct bits).
fn inverse_mod_2_64(a: u64) -> u64 {
    let mut x = a;
    for _ in 0..6 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
    }
    x
}

/// A validated cache workload shared by every client (behind an `Arc`), built from a
/// [`CacheSpec`] by [`CacheWorkload::new`] or from `cache.*` properties by
/// [`CacheWorkload::from_properties`]; each client draws from a [`CacheSource`].
///
/// # The model
///
/// - **Keys.** Key `i` (`0 ≤ i < keys`) has a size drawn from the key-size distribution
///   by a random source seeded with `i`, so a key always has the same size. Its bytes
///   are the `d = ⌈log₆₄ keys⌉` base64url digits of a bijective scramble of `i` — so
///   keys are distinct and popular keys are spread over the key space — followed by
///   base64url padding (chosen by `i`) up to the size. A key is never shorter than its
///   `d` digits. Keys are printable and contain no space, as memcached requires.
/// - **Values.** Key `i` also has a fixed value size (and TTL, if any), drawn the same
///   way, as CacheBench assigns sizes per key. Value bytes are slices of a shared pool
///   of random printable bytes, at a random offset per write, named by
///   [`Request::value`] rather than copied into the request.
/// - **Popularity** picks the key index of gets, sets and deletes: see [`Popularity`].
/// - **Operations** (see [`OpMix`]): a get is an [`OpKind::Read`], a set an
///   [`OpKind::Insert`] (the unconditional write: a blob `Update` only replaces an
///   existing value), a delete an [`OpKind::Delete`]; every request is a blob
///   ([`Request::value`] and [`Request::read`]). Lone gets and lone sets use keys outside the population
///   (starting with `#`), unique to the request.
/// - **Look-aside** ([`CacheSpec::lookaside`]): a get that ends in [`Outcome::Miss`] is
///   followed by a set of the same key with its value size and TTL, returned by the
///   source's next call to `next` — exactly one set per missed get, as CacheBench's
///   `CacheStressor` does. As there, lone gets miss and are filled too (their keys are
///   never requested again, so the fills are one-hit wonders that occupy cache space).
pub struct CacheWorkload {
    spec: CacheSpec,
    /// Cumulative thresholds of the normalised mix, in [`CACHE_OPS`] order.
    op_thresholds: [f64; 5],
    chooser: Chooser,
    key_size: SizeSampler,
    value_size: SizeSampler,
    ttl: Option<SizeSampler>,
    scramble: Scramble,
    key_fill: Vec<u8>,
    /// Value bytes: sets name a range of it ([`Request::value`]), not a copy.
    pool: ValuePool,
}

impl fmt::Debug for CacheWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheWorkload")
            .field("keys", &self.spec.keys)
            .field("operations", &self.spec.operations)
            .field("popularity", &self.popularity_name())
            .field("key_size", &self.spec.key_size.summary())
            .field("value_size", &self.spec.value_size.summary())
            .field("mix", &self.spec.mix)
            .field("lookaside", &self.spec.lookaside)
            .finish_non_exhaustive()
    }
}

impl CacheWorkload {
    /// The value of the `workload` property that names this workload in a property file.
    pub const CLASS: &'static str = "kvlab.cache";
    /// The largest key population: key digits stay within 60 bits.
    pub const MAX_KEYS: u64 = 1 << 60;
    /// The largest key size, in bytes.
    pub const MAX_KEY_BYTES: u64 = 65_535;
    /// The largest value size, in bytes (the value pool holds one maximal value).
    pub const MAX_VALUE_BYTES: u64 = 256 << 20;

    /// Validates `spec` and precomputes the samplers and byte pools.
    ///
    /// Errors ([`WorkloadError::Inconsistent`]) name the field: no keys or more than
    /// [`CacheWorkload::MAX_KEYS`], a mix that is negative or sums to 0, θ not positive, bucket lists
    /// of different lengths, a zero-sized bucket, fewer keys than buckets, keys above
    /// [`CacheWorkload::MAX_KEY_BYTES`], values above [`CacheWorkload::MAX_VALUE_BYTES`], TTLs above `u32::MAX`.
    pub fn new(spec: CacheSpec) -> Result<CacheWorkload, WorkloadError> {
        let inconsistent = |m: String| WorkloadError::Inconsistent(format!("cache workload: {m}"));
        let bad = |m: String| Err(inconsistent(m));
        if spec.keys == 0 || spec.keys > Self::MAX_KEYS {
            return bad(format!("keys = {}: expected 1 to 2^60", spec.keys));
        }
        let Some(mix) = spec.mix.normalised() else {
            return bad(format!(
                "operation mix {:?}: expected non-negative shares with a positive sum",
                spec.mix
            ));
        };
        let mut op_thresholds = [0.0; 5];
        let mut cumulative = 0.0;
        for (t, share) in op_thresholds.iter_mut().zip(mix.shares()) {
            cumulative += share;
            *t = cumulative;
        }
        if spec.key_size.max() > Self::MAX_KEY_BYTES {
            return bad(format!(
                "key sizes up to {} bytes: at most {} supported",
                spec.key_size.max(),
                Self::MAX_KEY_BYTES
            ));
        }
        if spec.value_size.max() > Self::MAX_VALUE_BYTES {
            return bad(format!(
                "value sizes up to {} bytes: at most {} supported",
                spec.value_size.max(),
                Self::MAX_VALUE_BYTES
            ));
        }
        if let Some(ttl) = &spec.ttl_s {
            if ttl.max() > u64::from(u32::MAX) {
                return bad(format!(
                    "TTLs up to {} s: at most {} s",
                    ttl.max(),
                    u32::MAX
                ));
            }
        }
        let chooser = match &spec.popularity {
            Popularity::Uniform => Chooser::Uniform(spec.keys),
            Popularity::Zipfian { theta } => {
                if !(theta.is_finite() && *theta > 0.0) {
                    return bad(format!("zipfian θ = {theta}: expected a number > 0"));
                }
                if *theta < 1.0 {
                    Chooser::Zipfian(Zipfian::new(0, spec.keys - 1, *theta))
                } else {
                    Chooser::ZipfHeavy(ZipfMixture::new(spec.keys, *theta))
                }
            }
            Popularity::Buckets { sizes, weights } => {
                let ranges = bucket_ranges(spec.keys, sizes, weights).map_err(inconsistent)?;
                Chooser::Buckets {
                    alias: Alias::new(weights),
                    ranges,
                }
            }
            Popularity::Normal => Chooser::Normal(CacheBenchNormal::new(spec.keys)),
        };
        let max_key = spec.key_size.max() as usize;
        let max_value = spec.value_size.max() as usize;
        Ok(CacheWorkload {
            op_thresholds,
            chooser,
            key_size: SizeSampler::new(&spec.key_size),
            value_size: SizeSampler::new(&spec.value_size),
            ttl: spec.ttl_s.as_ref().map(SizeSampler::new),
            scramble: Scramble::new(spec.keys),
            key_fill: key_fill(FILL_OFFSETS + max_key.max(SHORT_KEY)),
            pool: ValuePool::printable(VALUE_POOL_SLACK + max_value, VALUE_POOL_SEED),
            spec,
        })
    }

    /// The spec this workload was built from.
    pub fn spec(&self) -> &CacheSpec {
        &self.spec
    }

    /// Number of keys in the population.
    pub fn key_count(&self) -> u64 {
        self.spec.keys
    }

    /// Operations to run when the plan gives neither a count nor a duration.
    pub fn operation_count(&self) -> u64 {
        self.spec.operations
    }

    /// Number of base64url digits that make population keys distinct (the shortest
    /// key length).
    pub fn key_digits(&self) -> usize {
        self.scramble.digits
    }

    /// The largest value this workload writes, in bytes.
    pub fn max_value_bytes(&self) -> u64 {
        self.spec.value_size.max()
    }

    /// Writes the name of key `index` (< [`CacheWorkload::key_count`]) into `out`,
    /// cleared first.
    pub fn key_name(&self, index: u64, out: &mut Vec<u8>) {
        out.clear();
        self.push_key(index, out);
    }

    /// The size of key `index`'s name, in bytes.
    pub fn key_size_of(&self, index: u64) -> usize {
        let size = self.key_size.sample(&mut KeyRng::new(index, KEY_SALT)) as usize;
        size.max(self.scramble.digits)
    }

    /// The size of key `index`'s value, in bytes.
    pub fn value_size_of(&self, index: u64) -> usize {
        self.value_size.sample(&mut KeyRng::new(index, VALUE_SALT)) as usize
    }

    /// The TTL of key `index`'s value in seconds (0: none).
    pub fn ttl_of(&self, index: u64) -> u32 {
        match &self.ttl {
            Some(t) => t.sample(&mut KeyRng::new(index, TTL_SALT)) as u32,
            None => 0,
        }
    }

    /// The index of a population key, or `None` for a lone key or any other bytes.
    pub fn key_index(&self, key: &[u8]) -> Option<u64> {
        let digits = self.scramble.digits;
        if key.len() < digits {
            return None;
        }
        let mut x = 0u64;
        for &b in &key[..digits] {
            let d = ALPHABET.iter().position(|&a| a == b)? as u64;
            x = (x << 6) | d;
        }
        let index = self.scramble.inverse(x);
        if index >= self.spec.keys {
            return None;
        }
        let mut name = Vec::with_capacity(key.len());
        self.push_key(index, &mut name);
        (name == key).then_some(index)
    }

    /// True for the keys of lone gets and lone sets (they start with `#`).
    pub fn is_lone_key(key: &[u8]) -> bool {
        key.first() == Some(&LONE_MARK)
    }

    /// With [`Popularity::Buckets`]: each bucket's key indices and its probability, in
    /// bucket order. Bucket sizes are scaled to the key count by largest remainders:
    /// with `K` keys, `B` buckets and `S = Σ sizes`, bucket `b` gets
    /// `sizes[b]·K/S` keys (rounded) when `K ≥ S`, and otherwise one key plus its share
    /// of the remaining `K − B` keys in proportion to `sizes[b] − 1` — so every bucket
    /// keeps at least one key and the single-key hot buckets of production
    /// distributions stay single keys when a config is scaled down.
    pub fn bucket_ranges(&self) -> Option<Vec<(std::ops::Range<u64>, f64)>> {
        let Chooser::Buckets { ranges, .. } = &self.chooser else {
            return None;
        };
        let Popularity::Buckets { weights, .. } = &self.spec.popularity else {
            return None;
        };
        let total: f64 = weights.iter().sum();
        Some(
            ranges
                .iter()
                .zip(weights)
                .map(|(&(start, len), w)| (start..start + len, w / total))
                .collect(),
        )
    }

    /// Every `cache.*` property with its effective value, sorted by name (for the result
    /// document). Long size distributions are summarised.
    pub fn effective(&self) -> Vec<(String, String)> {
        let s = &self.spec;
        let mut out = vec![
            ("cache.keys".to_string(), s.keys.to_string()),
            ("cache.operations".into(), s.operations.to_string()),
            ("cache.popularity".into(), self.popularity_name().into()),
            ("cache.key_size".into(), s.key_size.summary()),
            ("cache.value_size".into(), s.value_size.summary()),
            (
                "cache.ttl".into(),
                s.ttl_s.as_ref().map_or("none".into(), SizeDist::summary),
            ),
            ("cache.get".into(), s.mix.get.to_string()),
            ("cache.set".into(), s.mix.set.to_string()),
            ("cache.delete".into(), s.mix.delete.to_string()),
            ("cache.lone_get".into(), s.mix.lone_get.to_string()),
            ("cache.lone_set".into(), s.mix.lone_set.to_string()),
            ("cache.lookaside".into(), s.lookaside.to_string()),
            (
                "cache.data_size".into(),
                format!("{:.0}", s.keys as f64 * s.mean_kv_bytes()),
            ),
        ];
        match &s.popularity {
            Popularity::Zipfian { theta } => {
                out.push(("cache.zipf_theta".into(), theta.to_string()));
            }
            Popularity::Buckets { sizes, .. } => {
                out.push((
                    "cache.popularity_buckets".into(),
                    format!("{} buckets", sizes.len()),
                ));
            }
            Popularity::Uniform | Popularity::Normal => {}
        }
        out.sort();
        out
    }

    fn popularity_name(&self) -> &'static str {
        match self.spec.popularity {
            Popularity::Uniform => "uniform",
            Popularity::Zipfian { .. } => "zipfian",
            Popularity::Buckets { .. } => "buckets",
            Popularity::Normal => "normal",
        }
    }

    /// A key index by popularity.
    #[inline]
    fn choose<R: RngCore>(&self, rng: &mut R) -> u64 {
        match &self.chooser {
            Chooser::Uniform(n) => next_below(rng, *n),
            Chooser::Zipfian(z) => z.next(rng).min(self.spec.keys - 1),
            Chooser::ZipfHeavy(z) => z.next(rng),
            Chooser::Buckets { alias, ranges } => {
                let (start, len) = ranges[alias.sample(rng.next_u64())];
                start + next_below(rng, len)
            }
            Chooser::Normal(n) => n.next(rng),
        }
    }

    /// Appends key `index`: its digits, then padding to its size.
    #[inline]
    fn push_key(&self, index: u64, out: &mut Vec<u8>) {
        let mut rng = KeyRng::new(index, KEY_SALT);
        let digits = self.scramble.digits;
        let size = (self.key_size.sample(&mut rng) as usize).max(digits);
        let at = (rng.next_u64() as usize) & (FILL_OFFSETS - 1);
        let start = out.len();
        if size <= SHORT_KEY {
            // A copy of constant length compiles to a few vector moves, not a call.
            let chunk: &[u8; SHORT_KEY] = self.key_fill[at..at + SHORT_KEY]
                .try_into()
                .expect("the key filler holds SHORT_KEY bytes past every offset");
            out.extend_from_slice(chunk);
            out.truncate(start + size);
        } else {
            out.extend_from_slice(&self.key_fill[at..at + size]);
        }
        let x = self.scramble.forward(index);
        for (j, b) in out[start..start + digits].iter_mut().enumerate() {
            *b = ALPHABET[((x >> (6 * (digits - 1 - j))) & 63) as usize];
        }
    }

    /// Appends lone key `counter` of a source: `prefix`, the counter's digits, `.`, then
    /// padding to a size drawn for it.
    #[inline]
    fn push_lone_key(&self, prefix: &[u8], salt: u64, counter: u64, out: &mut Vec<u8>) {
        let mut rng = KeyRng::new(counter, salt ^ KEY_SALT);
        let size = self.key_size.sample(&mut rng) as usize;
        out.extend_from_slice(prefix);
        push_base64(counter, out);
        out.push(b'.');
        if size > out.len() {
            let at = (rng.next_u64() as usize) & (FILL_OFFSETS - 1);
            let pad = size - out.len();
            out.extend_from_slice(&self.key_fill[at..at + pad]);
        }
    }

    /// Makes the request's value `len` bytes of the pool at a random offset: a range of
    /// the shared pool, not a copy (values average kilobytes).
    #[inline]
    fn push_value<R: RngCore>(&self, rng: &mut R, len: usize, req: &mut Request) {
        let at = self.pool.offset(rng, len);
        req.value.set_shared(self.pool.shared(), at..at + len);
    }
}

/// Bucket `b`'s first key index and key count (see [`CacheWorkload::bucket_ranges`]).
fn bucket_ranges(keys: u64, sizes: &[u64], weights: &[f64]) -> Result<Vec<(u64, u64)>, String> {
    if sizes.is_empty() || sizes.len() != weights.len() {
        return Err(format!(
            "{} popularity buckets and {} weights: expected the same non-zero number",
            sizes.len(),
            weights.len()
        ));
    }
    if sizes.len() > u32::MAX as usize {
        return Err("more than 4294967295 popularity buckets".into());
    }
    if let Some(b) = sizes.iter().position(|&s| s == 0) {
        return Err(format!(
            "popularity bucket {b} has 0 keys: expected at least 1"
        ));
    }
    if let Some(b) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
        return Err(format!(
            "popularity weight {b} is {}: expected a non-negative number",
            weights[b]
        ));
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err("popularity weights sum to 0".into());
    }
    let buckets = sizes.len() as u64;
    let total: u128 = sizes.iter().map(|&s| u128::from(s)).sum();
    let counts: Vec<u64> = if u128::from(keys) >= total {
        apportion(keys, sizes.iter().map(|&s| u128::from(s)))
    } else {
        if keys < buckets {
            return Err(format!(
                "numKeys={keys} is fewer keys than the {buckets} popularity buckets: give \
                 numKeys={buckets} or more (at least one key per bucket)"
            ));
        }
        apportion(keys - buckets, sizes.iter().map(|&s| u128::from(s - 1)))
            .into_iter()
            .map(|n| n + 1)
            .collect()
    };
    let mut start = 0;
    Ok(counts
        .into_iter()
        .map(|n| {
            let range = (start, n);
            start += n;
            range
        })
        .collect())
}

/// Splits `n` in proportion to `shares` by largest remainders (ties to the earlier
/// share); all zero shares split `n` evenly.
fn apportion(n: u64, shares: impl Iterator<Item = u128> + Clone) -> Vec<u64> {
    let total: u128 = shares.clone().sum();
    let count = shares.clone().count();
    let (shares, total): (Vec<u128>, u128) = if total == 0 {
        (vec![1; count], count as u128)
    } else {
        (shares.collect(), total)
    };
    let mut counts: Vec<u64> = Vec::with_capacity(shares.len());
    let mut remainders: Vec<(u128, usize)> = Vec::with_capacity(shares.len());
    for (i, s) in shares.iter().enumerate() {
        let q = s * u128::from(n);
        counts.push((q / total) as u64);
        remainders.push((q % total, i));
    }
    let left = n - counts.iter().sum::<u64>();
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in remainders.iter().take(left as usize) {
        counts[i] += 1;
    }
    counts
}

/// Appends `n` in base64url digits, most significant first, without leading zeros.
fn push_base64(mut n: u64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 11];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = ALPHABET[(n & 63) as usize];
        n >>= 6;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[at..]);
}

/// Random base64url bytes for key padding.
fn key_fill(len: usize) -> Vec<u8> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(KEY_FILL_SEED);
    (0..len)
        .map(|_| ALPHABET[(rng.next_u32() >> 26) as usize])
        .collect()
}

/// One client's operation stream of a [`CacheWorkload`].
pub struct CacheSource {
    workload: Arc<CacheWorkload>,
    rng: Xoshiro256PlusPlus,
    /// `#`, a 4-digit tag of the run seed, the client's digits and `.`.
    lone_prefix: Vec<u8>,
    lone_salt: u64,
    lone_next: u64,
    /// Tickets of missed gets whose look-aside set is still to be returned.
    fills: VecDeque<u64>,
}

impl fmt::Debug for CacheSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheSource")
            .field("lone_prefix", &String::from_utf8_lossy(&self.lone_prefix))
            .field("lone_next", &self.lone_next)
            .field("pending_fills", &self.fills.len())
            .finish_non_exhaustive()
    }
}

impl CacheSource {
    /// The source of client `client` for the run seed `seed`: its random source is
    /// seeded with [`worker_seed`]`(seed, client)`.
    pub fn new(workload: Arc<CacheWorkload>, seed: u64, client: usize) -> CacheSource {
        let client_seed = worker_seed(seed, client);
        let tag = mix64(seed ^ TAG_SALT);
        let mut lone_prefix = vec![LONE_MARK];
        lone_prefix.extend((0..4).map(|k| ALPHABET[((tag >> (6 * k)) & 63) as usize]));
        push_base64(client as u64, &mut lone_prefix);
        lone_prefix.push(b'.');
        CacheSource {
            workload,
            rng: Xoshiro256PlusPlus::seed_from_u64(client_seed),
            lone_prefix,
            lone_salt: mix64(client_seed ^ LONE_SALT),
            lone_next: 0,
            fills: VecDeque::with_capacity(64),
        }
    }

    /// Look-aside sets queued and not yet returned by `next`.
    pub fn pending_fills(&self) -> usize {
        self.fills.len()
    }

    /// The workload this source draws from.
    pub fn workload(&self) -> &Arc<CacheWorkload> {
        &self.workload
    }

    /// Fills a set of the key behind `ticket` (a population index or a lone counter).
    #[inline]
    fn fill_set(&mut self, ticket: u64, req: &mut Request) {
        let wl = &*self.workload;
        req.kind = OpKind::Insert;
        if ticket & LONE_TICKET != 0 {
            let counter = ticket & !LONE_TICKET;
            wl.push_lone_key(&self.lone_prefix, self.lone_salt, counter, &mut req.key);
            let len = wl
                .value_size
                .sample(&mut KeyRng::new(counter, self.lone_salt ^ VALUE_SALT))
                as usize;
            wl.push_value(&mut self.rng, len, req);
            if let Some(ttl) = &wl.ttl {
                req.ttl_s = ttl.sample(&mut KeyRng::new(counter, self.lone_salt ^ TTL_SALT)) as u32;
            }
        } else {
            wl.push_key(ticket, &mut req.key);
            wl.push_value(&mut self.rng, wl.value_size_of(ticket), req);
            req.ttl_s = wl.ttl_of(ticket);
        }
    }
}

impl OpSource for CacheSource {
    /// Clears `req` and fills it with the next operation: a pending look-aside set if
    /// there is one, otherwise an operation drawn from the mix. Never exhausted.
    ///
    /// Tickets: a get returns a ticket naming its key (so that a miss can be filled);
    /// sets and deletes return [`Ticket::NONE`].
    #[inline]
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        req.clear();
        req.read.set_blob();
        // No value read is looked at: its bytes are counted, not copied.
        req.read.set_discard(true);
        if let Some(ticket) = self.fills.pop_front() {
            self.fill_set(ticket, req);
            return Some(Ticket::NONE);
        }
        let wl = &*self.workload;
        let u = next_f64(&mut self.rng);
        let op = match wl.op_thresholds.iter().position(|&t| u < t) {
            Some(i) => CACHE_OPS[i],
            // Rounding can leave the last threshold a hair below 1: the last kind with
            // a nonzero share.
            None => {
                let last = (0..5)
                    .rev()
                    .find(|&i| i == 0 || wl.op_thresholds[i] > wl.op_thresholds[i - 1])
                    .unwrap_or(0);
                CACHE_OPS[last]
            }
        };
        match op {
            CacheOp::Get => {
                let index = wl.choose(&mut self.rng);
                wl.push_key(index, &mut req.key);
                req.kind = OpKind::Read;
                Some(Ticket(index))
            }
            CacheOp::Set => {
                let index = wl.choose(&mut self.rng);
                self.fill_set(index, req);
                Some(Ticket::NONE)
            }
            CacheOp::Delete => {
                let index = wl.choose(&mut self.rng);
                wl.push_key(index, &mut req.key);
                req.kind = OpKind::Delete;
                Some(Ticket::NONE)
            }
            CacheOp::LoneGet => {
                let counter = self.lone_next;
                self.lone_next += 1;
                wl.push_lone_key(&self.lone_prefix, self.lone_salt, counter, &mut req.key);
                req.kind = OpKind::Read;
                Some(Ticket(LONE_TICKET | counter))
            }
            CacheOp::LoneSet => {
                let counter = self.lone_next;
                self.lone_next += 1;
                self.fill_set(LONE_TICKET | counter, req);
                Some(Ticket::NONE)
            }
        }
    }

    /// With look-aside, queues a set for a get that ended in [`Outcome::Miss`] (a
    /// failed get is neither a hit nor a miss and is not filled). Nothing is checked.
    #[inline]
    fn completed(&mut self, slot: &Slot, ticket: Ticket) -> Verdict {
        if self.workload.spec.lookaside
            && ticket != Ticket::NONE
            && slot.request.kind == OpKind::Read
            && matches!(slot.result, Ok(Outcome::Miss))
        {
            self.fills.push_back(ticket.0);
        }
        Verdict::Unchecked
    }
}

/// Client `client` gets [`CacheSource::new`]`(…, seed, client)`.
impl Workload for CacheWorkload {
    type Source = CacheSource;

    fn source(self: &Arc<Self>, seed: u64, client: usize, _clients: usize) -> CacheSource {
        CacheSource::new(self.clone(), seed, client)
    }

    fn needs(&self) -> Needs {
        Needs {
            ttl: self.spec.ttl_s.is_some(),
            blob: true,
            ..Needs::default()
        }
    }

    fn operation_count(&self) -> u64 {
        self.spec.operations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scramble_is_a_bijection() {
        for keys in [
            1u64,
            2,
            63,
            64,
            65,
            4096,
            100_000,
            1 << 40,
            CacheWorkload::MAX_KEYS,
        ] {
            let s = Scramble::new(keys);
            let capacity = 1u128 << (6 * s.digits);
            assert!(capacity >= u128::from(keys), "{keys}");
            assert!(s.digits == 1 || capacity / 64 < u128::from(keys), "{keys}");
            for i in [0, 1, keys / 3, keys - 1] {
                let x = s.forward(i);
                assert!(x <= s.mask, "{keys}: {i} → {x}");
                assert_eq!(s.inverse(x), i, "{keys}");
            }
        }
        let s = Scramble::new(4096);
        let mut seen: Vec<u64> = (0..4096).map(|i| s.forward(i)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 4096);
    }

    #[test]
    fn apportionment_is_exact() {
        assert_eq!(apportion(10, [1u128, 1, 1].into_iter()), vec![4, 3, 3]);
        assert_eq!(apportion(7, [0u128, 0].into_iter()), vec![4, 3]);
        let r = bucket_ranges(100, &[1, 1, 998], &[5.0, 3.0, 1.0]).unwrap();
        assert_eq!(r, vec![(0, 1), (1, 1), (2, 98)]);
        let r = bucket_ranges(2000, &[1, 1, 998], &[5.0, 3.0, 1.0]).unwrap();
        assert_eq!(r, vec![(0, 2), (2, 2), (4, 1996)]);
        assert!(bucket_ranges(2, &[1, 1, 998], &[1.0; 3]).is_err());
        assert!(bucket_ranges(10, &[1, 0], &[1.0; 2]).is_err());
        assert!(bucket_ranges(10, &[1, 2], &[1.0]).is_err());
    }

    #[test]
    fn base64_digits() {
        let mut out = Vec::new();
        push_base64(0, &mut out);
        push_base64(64, &mut out);
        push_base64(u64::MAX, &mut out);
        assert_eq!(out, b"ABAP__________");
    }
}
