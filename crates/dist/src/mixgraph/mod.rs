//! db_bench's `mixgraph` workload (RocksDB 7.8 `tools/db_bench_tool.cc`, `MixGraph`),
//! the key-range model of Cao et al., "Characterizing, Modeling, and Benchmarking
//! RocksDB Key-Value Workloads at Facebook" (FAST'20), bit-exact with db_bench.
//!
//! - [`MixGraphConfig`]: every flag mixgraph reads, db_bench's defaults, validation.
//! - [`MixGraph`]: one thread's operations ([`MixOp`]: Get, Put or Seek, key bytes,
//!   value size, scan length), from the same `mt19937_64` stream as db_bench's thread.
//! - [`MixGraphKeys`]: the key distribution alone, as a [`KeyChooser`] over any random
//!   source.
//! - [`SineSchedule`]: the sine-modulated request rate (`-sine_mix_rate`) as due times.
//!
//! # What is bit-exact
//!
//! For a validated config with the default [`MixGraphConfig::key_model`] (`None`) and
//! `decorrelate = false`, thread `k` of [`MixGraph::new`] yields the sequence of
//! (operation, key bytes, Put value size, Seek scan length) that db_bench's thread `k`
//! issues in a run whose only benchmark is `mixgraph` (no `-warmup`, no `-repeat`), with
//! `-read_random_exp_range=0` (its default), for the same `-seed`:
//!
//! - the stream: `ThreadState`'s `Random64` ([`Mt19937_64`]) seeded `seed + c`, where
//!   `c` counts the threads db_bench has started in the process, from 1
//!   ([`thread_stream_seed`]);
//! - two draws per operation: one `SelectDBWithCfh(thread)` takes (it picks a database
//!   among `-num_multi_db`; with one database it is unused), then `GetRandomKey`'s
//!   `next() % num`, which also gives `u = draw / num`, the op type
//!   (`QueryDecider::GetType`, [`OpMix`]) and both sizes;
//! - key numbers: uniform (`key_rand = draw`), the power model
//!   (`PowerCdfInversion`, then `mt19937_64(rank).next()` as a signed remainder of
//!   `num`), or key ranges (`GenerateTwoTermExpKeys::InitiateExpDistribution` and
//!   `DistGetKeyID`, [`KeyRanges`]);
//! - key bytes: `GenerateKeyFromInt` ([`KeyFormat`]);
//! - value sizes: `ParetoCdfInversion` rounded up, below 10 raised to 10, above
//!   `min(mix_max_value_size, 1 MiB)` wrapped modulo it (which can give 0);
//! - scan lengths: `ParetoCdfInversion(u, iter_*) % mix_max_scan_len` (a negative result
//!   scans nothing: 0). db_bench stops earlier at the end of the database.
//!
//! Floating point goes through the same C library functions as db_bench (Rust's
//! `powf`, `exp` and `ln` call the C library's `pow`, `exp` and `log` on Linux), and
//! double-to-integer casts follow x86-64 ([`f64_to_i64_x86`]). So the match holds on
//! one machine; across machines it needs the same C library choosing the same variant
//! (glibc picks FMA versions of `pow`, `exp` and `log` by CPU).
//!
//! The tests run Debian's db_bench 7.8.3 and compare every operation of its query
//! traces (1 and 2 threads; key ranges, the power model, uniform keys with prefixes,
//! wrapped value sizes, infinite inversions), the averages it prints for value sizes and
//! scan lengths (which traces do not record) over a database filled by `fillseq`, and
//! the op rate of its sine mode over time.
//!
//! The sine rate is not bit-exact: db_bench applies it at wall-clock times and through
//! rate limiters ([`SineSchedule`] says what kvlab's schedule does the same and what
//! differently).
//!
//! # kvlab's switches (off by default)
//!
//! - [`MixGraphConfig::key_model`]: one of the paper's four models by name. db_bench
//!   chooses from the flags and never reaches `Prefix_random` (RocksDB issue #8356).
//!   kvlab's `Prefix_random` picks the range as `DistGetKeyID` does (so `Prefix_dist`
//!   and `Prefix_random` pick the same range for the same draw) and the offset from
//!   SplitMix64's mix of the draw ([`crate::mix64`]) — not `DistGetKeyID`'s
//!   `ini_rand % keyrange_size`, whose residues cluster inside a hot range because the
//!   same draw chose the range.
//! - [`MixGraphConfig::decorrelate`]: db_bench derives the key, the op type and the
//!   sizes from one draw, so a hot key always gets the same op type and sizes. With it
//!   set, each operation takes three draws from the stream after the database draw
//!   (key, type, size), each `next() % num` as db_bench's, so the marginals stay
//!   db_bench's.
//!
//! - [`MixGraphConfig::keyrange_starts`]: key ranges of unequal sizes (one per SST file
//!   of a database, the paper's ranges "sized by the data"), given by their first key
//!   numbers. The hotness and the shuffle are db_bench's for that many ranges, and a key
//!   drawn in range `i` is `start_i + offset mod size_i` — db_bench's in-range mapping
//!   with the range's own size. Starts of equal ranges give db_bench's stream.
//!
//! Not imitated: `-read_random_exp_range`, `-use_existing_keys`, `-num_multi_db > 1`,
//! multiple column families, and db_bench's `-seed=0` (a time-derived base; kvlab uses
//! the value given).

mod config;
mod error;
mod keyrange;
mod law;
mod mt;
mod ops;
mod sine;

pub use config::{KeyModel, MixGraphConfig};
pub use error::MixGraphError;
pub use keyrange::{KeyRangeLayout, KeyRanges};
pub use law::SizeModel;
pub use mt::Mt19937_64;
pub use ops::{
    f64_to_i64_x86, pareto_cdf_inversion, power_cdf_inversion, KeyFormat, OpKind, OpMix,
};
pub use sine::{GlibcRand, SineSchedule};

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rand_core::RngCore;

use crate::locality::{Locality, LocalityGen};
use crate::{mix64, KeyChooser};

/// Operations prepared at once: the power model's seeded outputs of this many operations
/// are computed together ([`Mt19937_64::first_outputs`]).
const BATCH: usize = 16;

/// One mixgraph operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MixOp<'a> {
    /// Get, Put or Seek.
    pub kind: OpKind,
    /// The key (`key_size` bytes, [`KeyFormat`]).
    pub key: &'a [u8],
    /// The key number the key encodes (db_bench's `key_rand`; a negative one, from the
    /// power model, as its two's complement).
    pub key_number: u64,
    /// The value size of a Put (0 for other kinds; a Put may also get 0 from the wrap).
    pub value_size_bytes: u64,
    /// The number of `Next()` calls after a Seek (0 for other kinds).
    pub scan_len: u64,
}

/// The seed of db_bench's thread stream: `ThreadState(index, my_seed)` seeds its
/// `Random64` with `seed_base + my_seed`, where `my_seed` is db_bench's running count of
/// threads started (`++total_thread_count_`, over every benchmark, warm-up and repeat of
/// the process). In a process whose only run is one `mixgraph` benchmark,
/// `threads_started_before = 0` and thread `k` gets `seed + k + 1`.
pub fn thread_stream_seed(seed: i64, threads_started_before: u32, thread: u32) -> u64 {
    seed.wrapping_add(i64::from(threads_started_before) + i64::from(thread) + 1) as u64
}

/// The validated pieces every thread shares.
#[derive(Debug)]
struct Model {
    /// `-seed`, for [`MixGraph::for_thread`].
    seed: i64,
    num: u64,
    model: KeyModel,
    decorrelate: bool,
    key_dist_a: f64,
    key_dist_b: f64,
    ranges: Option<KeyRanges>,
    mix: OpMix,
    format: KeyFormat,
    value: (f64, f64, f64),
    /// kvlab's value-size law in place of `value` ([`MixGraphConfig::value_model`]).
    value_model: Option<SizeModel>,
    /// kvlab's scan-length law in place of `iter` ([`MixGraphConfig::scan_model`]).
    scan_model: Option<SizeModel>,
    value_max: i64,
    iter: (f64, f64, f64),
    scan_len_max: i64,
    /// The power model's key numbers (All_dist) or in-range offsets (Prefix_dist) by
    /// draw (see [`PowerMemo`]).
    memo: PowerMemo,
    /// kvlab's locality layer, when the config has one.
    locality: Option<Arc<Locality>>,
}

impl Model {
    /// The key number of one `GetRandomKey` draw (in `0..num`), alone: [`MixGraph`]
    /// computes the same for [`BATCH`] draws at once.
    fn key_of_draw(&self, draw: u64) -> u64 {
        let (a, b) = (self.key_dist_a, self.key_dist_b);
        match (self.model, &self.ranges) {
            (KeyModel::AllRandom, _) => draw,
            (KeyModel::AllDist, _) => {
                let num = self.num as i64;
                match self.memo.get(draw) {
                    0 => {
                        let seed = power_cdf_inversion(draw as f64 / self.num as f64, a, b);
                        let key_rand = (Mt19937_64::first_output(seed as u64) as i64) % num;
                        self.memo.set(draw, (key_rand + num) as u64);
                        key_rand as u64
                    }
                    stored => (stored as i64 - num) as u64,
                }
            }
            (KeyModel::PrefixRandom, Some(r)) => {
                let (start, size) = r.span(r.range_of(draw as i64));
                start + mix64(draw) % size
            }
            (KeyModel::PrefixDist, Some(r)) => {
                let (start, size) = r.span(r.range_of(draw as i64));
                let within = draw % size;
                let slot = memo_slot(r, start, within);
                let offset = match self.memo.get(slot) {
                    0 => {
                        let seed = power_cdf_inversion(within as f64 / size as f64, a, b);
                        let offset = Mt19937_64::first_output(seed as u64) % size;
                        self.memo.set(slot, offset + 1);
                        offset
                    }
                    stored => stored - 1,
                };
                start + offset
            }
            (KeyModel::PrefixDist | KeyModel::PrefixRandom, None) => {
                unreachable!("a key-range model is built with its key-range table")
            }
        }
    }
}

/// Prefix_dist's memo entry for offset `within` of the range starting at `start`: the
/// offset itself for equal ranges (every range has the same size, so the same result),
/// the key number `start + within` for explicit ranges (each size its own results).
#[inline]
fn memo_slot(r: &KeyRanges, start: u64, within: u64) -> u64 {
    if r.is_explicit() {
        start + within
    } else {
        within
    }
}

/// The key numbers of a mixgraph model from any random source: a [`KeyChooser`] for
/// workloads that want db_bench's key distribution (key ranges, power model) without its
/// stream, op mix or sizes. Each key takes one `next_u64() % num`, as db_bench's
/// `GetRandomKey`. All_dist's key numbers can be "negative" (two's complement, above
/// `num`), as db_bench's; the others are below `num`.
#[derive(Clone, Debug)]
pub struct MixGraphKeys {
    model: Arc<Model>,
}

impl KeyChooser for MixGraphKeys {
    #[inline]
    fn next_key<R: RngCore>(&mut self, rng: &mut R) -> u64 {
        self.model.key_of_draw(rng.next_u64() % self.model.num)
    }
}

/// The power model's result for each possible draw, filled as draws come.
///
/// The power model re-seeds `mt19937_64` for every key and takes its first output: 156
/// dependent multiplications, hundreds of ns. But its input takes few values — `draw`
/// itself for All_dist (`num` values), `draw % keys_per_range` for Prefix_dist — so each
/// value's result is computed once and kept, shared by the threads of one
/// [`MixGraph::for_thread`] family. Entries hold the result plus an offset that keeps 0
/// free for "not yet computed"; racing threads store the same value, so relaxed atomics
/// suffice. Tables over [`PowerMemo::MAX_ENTRIES`] are not kept (each key is computed).
#[derive(Debug, Default)]
struct PowerMemo {
    entries: Option<Box<[AtomicU32]>>,
}

impl PowerMemo {
    /// The largest table kept: 2²⁴ entries (64 MiB).
    const MAX_ENTRIES: u64 = 1 << 24;

    /// A table for inputs `0..entries` whose stored values stay below `max_stored`
    /// (none when either does not fit: entries are 32-bit, to halve the memory traffic).
    fn new(entries: u64, max_stored: u64) -> PowerMemo {
        let fits = entries <= Self::MAX_ENTRIES && max_stored <= u64::from(u32::MAX);
        PowerMemo {
            entries: fits.then(|| (0..entries).map(|_| AtomicU32::new(0)).collect()),
        }
    }

    /// The stored value for input `i` (0: not computed).
    #[inline]
    fn get(&self, i: u64) -> u64 {
        self.entries
            .as_ref()
            .map_or(0, |e| u64::from(e[i as usize].load(Ordering::Relaxed)))
    }

    /// Asks the CPU to bring input `i`'s entry into cache.
    #[inline]
    fn prefetch(&self, i: u64) {
        if let Some(e) = &self.entries {
            prefetch_read(e.as_ptr().wrapping_add(i as usize));
        }
    }

    /// Stores `stored` (below the `max_stored` the table was made for) for input `i`.
    #[inline]
    fn set(&self, i: u64, stored: u64) {
        if let Some(e) = &self.entries {
            e[i as usize].store(stored as u32, Ordering::Relaxed);
        }
    }
}

/// A hint to fetch the cache line at `p` (nothing off x86-64).
#[inline(always)]
fn prefetch_read<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing the program sees and never faults,
    // whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Operations drawn ahead (see [`BATCH`]): per operation its draws and key number.
#[derive(Clone, Debug, Default)]
struct Pending {
    /// The draw the key comes from (`GetRandomKey`).
    key_draw: [u64; BATCH],
    /// The draw the op type comes from (the key draw unless decorrelated).
    kind_draw: [u64; BATCH],
    /// The draw the value size or scan length comes from.
    size_draw: [u64; BATCH],
    key_number: [u64; BATCH],
    next: usize,
    /// The next batch's draws, taken one batch early so that their table entries can be
    /// fetched from memory while this batch is served.
    ahead_key: [u64; BATCH],
    ahead_kind: [u64; BATCH],
    ahead_size: [u64; BATCH],
    /// Whether the `ahead_*` draws are taken.
    primed: bool,
}

/// One thread's mixgraph operations (see the [module docs](self) for what matches
/// db_bench). An endless stream: [`MixGraphConfig::ops_per_thread`] says when db_bench
/// stops. No allocation per operation; the power model's table of results
/// (`4 · num` bytes for All_dist, `4 · num / keyrange_num` for Prefix_dist — `4 · num`
/// over explicit ranges — at most
/// 64 MiB) is allocated with the first generator and shared by [`MixGraph::for_thread`].
#[derive(Clone, Debug)]
pub struct MixGraph {
    rng: Mt19937_64,
    model: Arc<Model>,
    pending: Pending,
    key: Vec<u8>,
    /// kvlab's locality layer over the key draws, with this stream's recency order.
    local: Option<Box<LocalityGen>>,
}

impl MixGraph {
    /// Thread `thread`'s generator, as db_bench's thread `thread` in a process whose only
    /// run is this benchmark (stream seed [`thread_stream_seed`]`(seed, 0, thread)`).
    pub fn new(config: &MixGraphConfig, thread: u32) -> Result<MixGraph, MixGraphError> {
        MixGraph::with_stream_seed(config, thread_stream_seed(config.seed, 0, thread))
    }

    /// A generator whose `mt19937_64` stream is seeded `stream_seed`.
    pub fn with_stream_seed(
        config: &MixGraphConfig,
        stream_seed: u64,
    ) -> Result<MixGraph, MixGraphError> {
        config.validate()?;
        let model = config.effective_key_model();
        let ranges = match model {
            KeyModel::PrefixDist | KeyModel::PrefixRandom => Some(KeyRanges::new(config)?),
            KeyModel::AllDist | KeyModel::AllRandom => None,
        };
        let format = KeyFormat::new(config);
        let key = format.buffer();
        let memo = match (model, &ranges) {
            // Stored: key_rand + num in 1..2·num; offset + 1 in 1..=keys_per_range.
            (KeyModel::AllDist, _) => {
                PowerMemo::new(config.num as u64, (config.num as u64).saturating_mul(2))
            }
            (KeyModel::PrefixDist, Some(r)) if r.is_explicit() => {
                // Indexed by key number (below num); stored offset + 1 ≤ the largest range.
                PowerMemo::new(config.num as u64, r.max_range_keys())
            }
            (KeyModel::PrefixDist, Some(r)) => {
                let size = r.keys_per_range() as u64;
                PowerMemo::new(size, size)
            }
            _ => PowerMemo::default(),
        };
        Ok(MixGraph {
            rng: Mt19937_64::new(stream_seed),
            model: Arc::new(Model {
                seed: config.seed,
                num: config.num as u64,
                model,
                decorrelate: config.decorrelate,
                key_dist_a: config.key_dist_a,
                key_dist_b: config.key_dist_b,
                ranges,
                mix: OpMix::new(config),
                format,
                value: (config.value_theta, config.value_k, config.value_sigma),
                value_model: config.value_model,
                scan_model: config.scan_model,
                value_max: config.value_max(),
                iter: (config.iter_theta, config.iter_k, config.iter_sigma),
                scan_len_max: config.mix_max_scan_len,
                memo,
                locality: config.locality.clone(),
            }),
            pending: Pending {
                next: BATCH,
                ..Pending::default()
            },
            key,
            local: None,
        }
        .with_locality(stream_seed))
    }

    /// The locality layer's stream for this generator (seeded from `stream_seed`).
    fn with_locality(mut self, stream_seed: u64) -> MixGraph {
        self.local = self.model.locality.as_ref().map(|l| {
            // Validated with the config: the parameters and the key space fit.
            Box::new(
                LocalityGen::new(l, self.model.num, stream_seed)
                    .expect("locality validated with the config"),
            )
        });
        self
    }

    /// Thread `thread`'s generator of the same config, sharing this one's validated
    /// model and power-model table (a config validated and tabled once for all threads).
    pub fn for_thread(&self, thread: u32) -> MixGraph {
        self.with_shared_model(thread_stream_seed(self.model.seed, 0, thread))
    }

    /// A generator seeded `stream_seed`, sharing this one's model and table.
    pub fn with_shared_model(&self, stream_seed: u64) -> MixGraph {
        MixGraph {
            rng: Mt19937_64::new(stream_seed),
            model: Arc::clone(&self.model),
            pending: Pending {
                next: BATCH,
                ..Pending::default()
            },
            key: self.model.format.buffer(),
            local: None,
        }
        .with_locality(stream_seed)
    }

    /// The key distribution alone, as a [`KeyChooser`] sharing this generator's model
    /// and table.
    pub fn keys(&self) -> MixGraphKeys {
        MixGraphKeys {
            model: Arc::clone(&self.model),
        }
    }

    /// The key-range table, for the key models that use one.
    pub fn key_ranges(&self) -> Option<&KeyRanges> {
        self.model.ranges.as_ref()
    }

    /// The op mix (db_bench's `QueryDecider`).
    pub fn op_mix(&self) -> &OpMix {
        &self.model.mix
    }

    /// The key model drawn.
    pub fn key_model(&self) -> KeyModel {
        self.model.model
    }

    /// The next operation.
    #[inline]
    pub fn next_op(&mut self) -> MixOp<'_> {
        if self.pending.next == BATCH {
            self.prepare();
        }
        let i = self.pending.next;
        self.pending.next += 1;
        let m = &self.model;
        let p = &self.pending;
        let (mut key_number, mut kind_draw, mut size_draw) =
            (p.key_number[i], p.kind_draw[i], p.size_draw[i]);
        if let Some(local) = &mut self.local {
            if m.decorrelate {
                key_number = local.next_key(key_number);
            } else {
                // db_bench derives a key's op and size from the key's own draw: the
                // layer keeps each key's first draw with it.
                let (key, draw) =
                    local.next_key_with(key_number, kind_draw, |kept| m.mix.kind(kept) as usize);
                (key_number, kind_draw, size_draw) = (key, draw, draw);
            }
        }
        let kind = m.mix.kind(kind_draw);
        let u = size_draw as f64 / m.num as f64;
        let (value_size_bytes, scan_len) = match kind {
            OpKind::Get => (0, 0),
            OpKind::Put => {
                let (theta, k, sigma) = m.value;
                let size = match &m.value_model {
                    None => pareto_cdf_inversion(u, theta, k, sigma),
                    Some(law) => law.size_at(1.0 - u),
                };
                let size = if size < 10 {
                    10
                } else if size > m.value_max {
                    size % m.value_max
                } else {
                    size
                };
                (size as u64, 0)
            }
            OpKind::Seek => {
                let (theta, k, sigma) = m.iter;
                let len = match &m.scan_model {
                    None => pareto_cdf_inversion(u, theta, k, sigma),
                    Some(law) => law.size_at(1.0 - u),
                } % m.scan_len_max;
                (0, len.max(0) as u64)
            }
        };
        m.format.write(key_number, &mut self.key);
        MixOp {
            kind,
            key: &self.key,
            key_number,
            value_size_bytes,
            scan_len,
        }
    }

    /// One batch's draws, in db_bench's order: per operation the database draw, the key
    /// draw, and (decorrelated) the kind and size draws.
    fn draw(
        rng: &mut Mt19937_64,
        m: &Model,
        key: &mut [u64; BATCH],
        kind: &mut [u64; BATCH],
        size: &mut [u64; BATCH],
    ) {
        for i in 0..BATCH {
            // `SelectDBWithCfh(thread)` takes a draw to pick one of `-num_multi_db`
            // databases, then `GetRandomKey` takes the key's.
            let _database = rng.next_u64();
            let draw = rng.next_u64() % m.num;
            key[i] = draw;
            if m.decorrelate {
                kind[i] = rng.next_u64() % m.num;
                size[i] = rng.next_u64() % m.num;
            } else {
                kind[i] = draw;
                size[i] = draw;
            }
        }
    }

    /// Takes the next [`BATCH`] operations' draws and computes their key numbers.
    fn prepare(&mut self) {
        let m = &self.model;
        let p = &mut self.pending;
        if !p.primed {
            Self::draw(
                &mut self.rng,
                m,
                &mut p.ahead_key,
                &mut p.ahead_kind,
                &mut p.ahead_size,
            );
            p.primed = true;
        }
        p.key_draw = p.ahead_key;
        p.kind_draw = p.ahead_kind;
        p.size_draw = p.ahead_size;
        Self::draw(
            &mut self.rng,
            m,
            &mut p.ahead_key,
            &mut p.ahead_kind,
            &mut p.ahead_size,
        );
        if m.model == KeyModel::AllDist {
            // All_dist's table (4 bytes per key) outgrows the caches: ask for the next
            // batch's entries now. (Prefix_dist's, per key of one range, stays cached.)
            for &d in &p.ahead_key {
                m.memo.prefetch(d);
            }
        }
        let (a, b) = (m.key_dist_a, m.key_dist_b);
        match (m.model, &m.ranges) {
            (KeyModel::AllRandom, _) => p.key_number = p.key_draw,
            (KeyModel::AllDist, _) => {
                // `key_seed = PowerCdfInversion(u, a, b); Random64 rand(key_seed);
                // key_rand = (int64_t)rand.Next() % FLAGS_num` — a signed remainder, in
                // (−num, num), kept as `key_rand + num` (never 0) in the memo.
                let num = m.num as i64;
                let mut seeds = [0u64; BATCH];
                let mut missed = [false; BATCH];
                for i in 0..BATCH {
                    let d = p.key_draw[i];
                    match m.memo.get(d) {
                        0 => {
                            missed[i] = true;
                            seeds[i] = power_cdf_inversion(d as f64 / m.num as f64, a, b) as u64;
                        }
                        stored => p.key_number[i] = (stored as i64 - num) as u64,
                    }
                }
                if missed.contains(&true) {
                    let outs = Mt19937_64::first_outputs(&seeds);
                    for i in (0..BATCH).filter(|&i| missed[i]) {
                        let key_rand = (outs[i] as i64) % num;
                        m.memo.set(p.key_draw[i], (key_rand + num) as u64);
                        p.key_number[i] = key_rand as u64;
                    }
                }
            }
            (KeyModel::PrefixRandom, Some(r)) => {
                // Not `DistGetKeyID`'s `ini_rand % size`: the draw also chose the range,
                // so its residues would cluster inside a hot range. SplitMix64's mix of
                // the draw scatters it over the range instead.
                for (k, &d) in p.key_number.iter_mut().zip(&p.key_draw) {
                    let (start, size) = r.span(r.range_of(d as i64));
                    *k = start + mix64(d) % size;
                }
            }
            (KeyModel::PrefixDist, Some(r)) => {
                // `DistGetKeyID`: `u = (ini_rand % size) / size`, the rank
                // `⌈(u/a)^{1/b}⌉` seeds `Random64`, offset `next() % size` (unsigned),
                // kept as `offset + 1` in the memo.
                // Each range's first key and size (db_bench's `keyrange_size_` for equal
                // ranges; the range's own size for explicit ones).
                let mut spans = [(0u64, 1u64); BATCH];
                let mut slots = [0u64; BATCH];
                let mut seeds = [0u64; BATCH];
                let mut missed = [false; BATCH];
                let mut offsets = [0u64; BATCH];
                for i in 0..BATCH {
                    let d = p.key_draw[i];
                    let (start, size) = r.span(r.range_of(d as i64));
                    spans[i] = (start, size);
                    let within = d % size;
                    slots[i] = memo_slot(r, start, within);
                    match m.memo.get(slots[i]) {
                        0 => {
                            missed[i] = true;
                            let u = within as f64 / size as f64;
                            seeds[i] = power_cdf_inversion(u, a, b) as u64;
                        }
                        stored => offsets[i] = stored - 1,
                    }
                }
                if missed.contains(&true) {
                    let outs = Mt19937_64::first_outputs(&seeds);
                    for i in (0..BATCH).filter(|&i| missed[i]) {
                        offsets[i] = outs[i] % spans[i].1;
                        m.memo.set(slots[i], offsets[i] + 1);
                    }
                }
                for ((k, &(start, _)), offset) in p.key_number.iter_mut().zip(&spans).zip(offsets) {
                    *k = start + offset;
                }
            }
            (KeyModel::PrefixDist | KeyModel::PrefixRandom, None) => {
                unreachable!("a key-range model is built with its key-range table")
            }
        }
        p.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_chooser_draws_the_generators_keys() {
        for model in [
            KeyModel::AllDist,
            KeyModel::PrefixDist,
            KeyModel::PrefixRandom,
            KeyModel::AllRandom,
        ] {
            let c = MixGraphConfig {
                num: 50_000,
                key_model: Some(model),
                ..MixGraphConfig::zippydb_example()
            };
            let mut g = MixGraph::new(&c, 0).expect("valid");
            // A separate table: the chooser computes its own results.
            let mut keys = MixGraph::new(&c, 0).expect("valid").keys();
            let mut rng = Mt19937_64::new(thread_stream_seed(c.seed, 0, 0));
            for i in 0..100_000 {
                rng.next_u64(); // db_bench's database draw
                let k = keys.next_key(&mut rng);
                assert_eq!(g.next_op().key_number, k, "{model:?} op {i}");
            }
        }
    }

    #[test]
    fn the_table_and_direct_computation_agree() {
        for model in [KeyModel::AllDist, KeyModel::PrefixDist] {
            let c = MixGraphConfig {
                num: 50_000,
                key_model: Some(model),
                ..MixGraphConfig::zippydb_example()
            };
            let mut tabled = MixGraph::new(&c, 0).expect("valid");
            assert!(tabled.model.memo.entries.is_some());
            let mut direct = MixGraph::new(&c, 0).expect("valid");
            Arc::get_mut(&mut direct.model)
                .expect("the only generator of its model")
                .memo = PowerMemo::default();
            // 200 000 draws over at most 50 000 inputs: most are table hits.
            for i in 0..200_000 {
                let t = tabled.next_op().key_number;
                assert_eq!(t, direct.next_op().key_number, "{model:?} op {i}");
            }
        }
    }
}

#[cfg(test)]
mod explicit_range_tests {
    use super::*;

    fn zippy(num: i64, model: KeyModel) -> MixGraphConfig {
        MixGraphConfig {
            num,
            key_model: Some(model),
            ..MixGraphConfig::zippydb_example()
        }
    }

    /// Starts of db_bench's own equal ranges give db_bench's stream, op for op.
    #[test]
    fn equal_starts_are_db_benchs_ranges() {
        for model in [KeyModel::PrefixDist, KeyModel::PrefixRandom] {
            let equal = zippy(30_000, model);
            let explicit = MixGraphConfig {
                keyrange_starts: Some((0..30).map(|i| i * 1000).collect()),
                ..equal.clone()
            };
            let mut a = MixGraph::new(&equal, 0).expect("valid");
            let mut b = MixGraph::new(&explicit, 0).expect("valid");
            assert!(b.key_ranges().expect("ranges").is_explicit());
            for i in 0..100_000 {
                let (x, y) = (a.next_op(), b.next_op());
                assert_eq!(x, y, "{model:?} op {i}");
            }
        }
    }

    /// Unequal ranges: each draw's key lies in the range the draw chose, each range is
    /// drawn at its table share, and in-range offsets are the range's own (the small
    /// ranges' keys, not db_bench's equal size, bound them).
    #[test]
    fn keys_land_in_their_own_ranges() {
        // 30 ranges of sizes 10, 20, …: 10·(1 + 2 + … + 30) = 4650 keys, then 350 more.
        let mut starts = Vec::new();
        let mut at = 0u64;
        for i in 1..=30u64 {
            starts.push(at);
            at += 10 * i;
        }
        let num = 5_000i64;
        for model in [KeyModel::PrefixDist, KeyModel::PrefixRandom] {
            let c = MixGraphConfig {
                keyrange_starts: Some(starts.clone().into()),
                ..zippy(num, model)
            };
            c.validate().expect("valid");
            let mut g = MixGraph::new(&c, 0).expect("valid");
            let r = g.key_ranges().expect("ranges").clone();
            let mut hits = [0u64; 30];
            let mut keys = [std::collections::HashSet::new(), Default::default()];
            let n = 300_000;
            let mut rng = Mt19937_64::new(thread_stream_seed(c.seed, 0, 0));
            for _ in 0..n {
                rng.next_u64();
                let draw = rng.next_u64() % num as u64;
                let k = g.next_op().key_number;
                let range = r.range_of(draw as i64);
                let (start, size) = r.span(range);
                assert!(
                    (start..start + size).contains(&k),
                    "{model:?}: key {k} outside range {range} ({start}+{size})"
                );
                hits[range] += 1;
                if range < 2 {
                    keys[range].insert(k);
                }
            }
            // Draws are uniform over 0..num, each in the range of `draw % rand_max`.
            let mut expected = [0u64; 30];
            for d in 0..num {
                expected[r.range_of(d)] += 1;
            }
            for (i, &e) in expected.iter().enumerate() {
                let p = e as f64 / num as f64;
                let share = hits[i] as f64 / n as f64;
                assert!(
                    (share - p).abs() < 0.01,
                    "{model:?} range {i}: {share} vs {p}"
                );
            }
            assert_eq!(r.span(29), (starts[29], num as u64 - starts[29]));
            if model == KeyModel::PrefixRandom {
                // Uniform offsets reach every key of a drawn range.
                for (i, set) in keys.iter().enumerate() {
                    if hits[i] > 1000 {
                        assert_eq!(set.len() as u64, r.span(i).1, "range {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn bad_starts_are_refused() {
        let base = zippy(1_000, KeyModel::PrefixDist);
        let cases: [(Vec<u64>, i64, &str); 3] = [
            (vec![0, 10, 10], 3, "strictly increasing"),
            (vec![0, 10, 1_000], 3, "below num"),
            (vec![0, 10], 3, "the number of key-range starts (2)"),
        ];
        for (starts, n, want) in cases {
            let c = MixGraphConfig {
                keyrange_num: n,
                keyrange_starts: Some(starts.into()),
                ..base.clone()
            };
            let e = c.validate().expect_err("refused").to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
