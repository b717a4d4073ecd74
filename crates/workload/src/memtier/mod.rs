//! memtier_benchmark's workload: [`MemtierSpec`] describes it, [`MemtierWorkload`]
//! validates it once and hands each client a [`MemtierSource`]; `--command` splitting
//! and `--data-import` files are here too. memtier's command line, report and result
//! files are `kvlab-memtier`'s, which builds a [`MemtierSpec`] from memtier's flags.
//!
//! Everything follows memtier_benchmark's object generator and client
//! (`obj_gen.cpp`, `client.cpp`, `config_types.cpp` and `memtier_benchmark.cpp` in
//! `RedisLabs/memtier_benchmark`), so that `kvlab memtier` with a memtier command line
//! sends the same kind of traffic:
//!
//! - **Ratio.** `--ratio=S:G` is a fixed cycle per client, not a random mix: `S` SETs,
//!   then `G` GETs, again and again (`client::create_request`).
//! - **Keys.** `prefix` + the decimal key number (`"%s%llu"`). Set and get keys each
//!   follow their own [`KeyPattern`] over `[key_minimum, key_maximum]`. Every client
//!   has its own object generator (memtier clones it per client), so sequential
//!   counters are per client — and without `--distinct-client-seed` every client draws
//!   the same random keys, as in memtier.
//! - **Values.** Each SET carries `data_size` bytes ([`DataSize`]): memtier's `x…x`, or
//!   random bytes with `--random-data`; a TTL from `--expiry-range`.
//!
//! SETs are [`OpKind::Insert`] requests (a blind write: memtier's SET creates or
//! replaces the key, which is what kvlab stores do for an insert; an update of a
//! missing blob is a miss and writes nothing). GETs are [`OpKind::Read`]s. Both are
//! blob requests ([`kvlab_core::Value`]): one opaque value per key.
//!
//! - **Multi-key GETs** (`--multi-key-get=N`, [`MemtierSpec::multi_key_get`]): as in
//!   memtier's `client::create_request`, each GET of the cycle takes
//!   `min(N, GETs left in the cycle)` keys, each drawn from the GET key pattern, and
//!   counts as that many GETs of the ratio — so `--ratio=1:10 --multi-key-get=4` sends a
//!   SET, then GETs of 4, 4 and 2 keys. A GET of several keys is a multi-key read
//!   ([`Request::more_keys`]: Redis `MGET`, memcached `get k1 … kN`), one request of
//!   `--requests`; hits and misses are counted per key.
//!
//! - **Arbitrary commands** (`--command`, [`MemtierSpec::commands`]): instead of the
//!   SET/GET cycle, each client cycles through the commands by their ratios
//!   (`client::advance_arbitrary_command_index`): command `i` is sent `ratio` times in a
//!   row, then the next, around again, from the first request (ratios 2 and 3:
//!   `A A B B B A A B B B …`; memtier's client advances its counter once when it is
//!   built, so its first round is no longer than the others). Each `__key__` draws a key
//!   from the command's own key pattern (`S`/`P` counters are per command), each
//!   `__data__` a value of the object options. A command is a [`Request::command`]
//!   request whose [`CommandId`] is its *row*: commands of the same name (upper case)
//!   share one, as memtier's default `--command-stats-breakdown=command` merges them.
//! - **WAIT** (`--wait-ratio`, [`MemtierSpec::wait`]): `WAIT numreplicas timeout`
//!   requests interleaved with the SET/GET cycle as memtier interleaves them
//!   ([`WaitSpec`]); they are commands of [`CommandId`] 0.
//!
//! # Deliberate differences from memtier_benchmark
//!
//! - **Random source.** Xoshiro256++ seeded from the run seed: client `c`'s stream is
//!   seeded with [`worker_seed`]`(seed, c)` with `--distinct-client-seed`, otherwise
//!   every client uses `worker_seed(seed, 0)` (so, as in memtier, client 0 of a
//!   distinct-seed run draws what every client of a shared-seed run draws). memtier's
//!   `random_r` streams are not reproduced; distributions are.
//! - **Random data** is a slice, at a random offset, of a 256 KiB pool of random bytes
//!   built once from a fixed seed and shared by every client, instead of a per-client
//!   buffer that memtier mutates by one byte per SET and refills when the mutation
//!   wraps. Values still differ from SET to SET and do not compress.
//! - **Zipf** is memtier's rejection-inversion sampler ([`Zipf`]), ported as is — not
//!   kvlab's YCSB [`kvlab_dist::ycsb::Zipfian`], whose θ must stay below 1 while
//!   memtier's exponent defaults to 1 and may reach 5.
//! - **Gaussian draws** equal to exactly `key_maximum + 1` (which memtier's bound check
//!   lets through, a measure-zero event) become `key_maximum`.
//! - **Sizes spread over the key range** (`--data-size-pattern=S`) with a one-key range
//!   use the minimum size, where memtier divides by zero.
//! - **Multi-key GETs over Redis** are `MGET`s; memtier 2.3.0 has none for Redis
//!   (`redis_protocol::write_command_multi_get` aborts). A multi-key GET of one key (the
//!   last of a cycle whose GET count is not a multiple of `N`) is a plain GET (`GET k`,
//!   `get k`).
//! - **Requests** are not counted by the source: a [`MemtierSource`] never runs dry and
//!   the runner stops each client after its share (memtier's `--requests` is per
//!   client: see [`MemtierWorkload::operation_count`]).

use std::fmt::Write as _;
use std::ops::RangeInclusive;
use std::sync::Arc;

mod import;

pub use import::{write_import_item, ImportedItems, IMPORT_HEADER, IMPORT_HEADER_PREFIX};

use kvlab_core::{CommandId, OpKind, Request, Slot};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use kvlab_core::{Needs, OpSource, Ticket, Verdict, Workload};
use kvlab_dist::{next_below, worker_seed, ValuePool};

/// What can be wrong with a memtier-style workload: its flags, a `--command`, or a
/// `--data-import` file.
#[derive(Debug, thiserror::Error)]
pub enum MemtierError {
    /// A file could not be read.
    #[error("reading {}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A malformed line of an import file.
    #[error("{}:{line}: {message}", path.display())]
    Syntax {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Settings that are each valid but contradict each other, or a malformed command.
    #[error("{0}")]
    Inconsistent(String),
}

mod command;

pub use command::{
    row_name, split_args, ArbitraryCommand, CommandArg, WaitSpec, DATA_PLACEHOLDER, KEY_PLACEHOLDER,
};

/// Size of the random value pool (before room for one maximal value).
const VALUE_POOL_BYTES: usize = 256 << 10;
/// Seed of the random value pool: fixed, so values never depend on the clock.
const VALUE_POOL_SEED: u64 = 0x6d65_6d74_6965_7200;
/// The byte memtier fills values with when data is not random.
const PLAIN_DATA_BYTE: u8 = b'x';
/// Largest value memtier accepts (`MEMTIER_DATA_SIZE_MAX`: Redis' default
/// `proto-max-bulk-len`, 512 MiB).
pub const MAX_DATA_SIZE_BYTES: u32 = 512 << 20;

/// How a key is chosen (memtier `--key-pattern=SET:GET`, one letter each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyPattern {
    /// `R`: uniform over the key range.
    Random,
    /// `S`: each client walks the whole range in order, wrapping at the maximum; sets
    /// and gets have separate counters.
    Sequential,
    /// `G`: a normal distribution around `--key-median` with `--key-stddev`, resampled
    /// until it falls in the range.
    Gaussian,
    /// `P`: like `S`, but the range is split into one contiguous slice per client.
    /// Must be used for both sets and gets.
    Parallel,
    /// `Z`: Zipf with exponent `--key-zipf-exp`; the lowest key (at least 1) is the
    /// most popular.
    Zipfian,
}

impl KeyPattern {
    /// The pattern memtier names by `letter` (`R`, `S`, `G`, `P`, `Z`).
    pub fn from_letter(letter: char) -> Option<KeyPattern> {
        Some(match letter {
            'R' => KeyPattern::Random,
            'S' => KeyPattern::Sequential,
            'G' => KeyPattern::Gaussian,
            'P' => KeyPattern::Parallel,
            'Z' => KeyPattern::Zipfian,
            _ => return None,
        })
    }

    /// memtier's letter for the pattern.
    pub fn letter(self) -> char {
        match self {
            KeyPattern::Random => 'R',
            KeyPattern::Sequential => 'S',
            KeyPattern::Gaussian => 'G',
            KeyPattern::Parallel => 'P',
            KeyPattern::Zipfian => 'Z',
        }
    }
}

/// memtier's `--ratio=SETS:GETS`: per cycle, `sets` SETs then `gets` GETs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    /// SETs per cycle.
    pub sets: u32,
    /// GETs per cycle.
    pub gets: u32,
}

impl Default for Ratio {
    /// memtier's default, `1:10`.
    fn default() -> Ratio {
        Ratio { sets: 1, gets: 10 }
    }
}

/// How `--data-size-range` sizes are chosen (memtier `--data-size-pattern`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizePattern {
    /// `R`: uniform in the range for each SET.
    Random,
    /// `S`: spread evenly over the key range: key `k` gets
    /// `min + (max − min)·(k − key_min)/(key_max − key_min)` bytes, truncated.
    Spread,
}

/// One `size:weight` entry of `--data-size-list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeWeight {
    /// Value size in bytes.
    pub size_bytes: u32,
    /// Consecutive SETs that use this size per round.
    pub weight: u32,
}

/// The size of each SET's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSize {
    /// `--data-size=N` (memtier's default: 32 bytes).
    Fixed(u32),
    /// `--data-size-range=MIN-MAX` with `--data-size-pattern`.
    Range {
        /// Smallest size in bytes.
        min_bytes: u32,
        /// Largest size in bytes.
        max_bytes: u32,
        /// How a size is chosen.
        pattern: SizePattern,
    },
    /// `--data-size-list=SIZE:WEIGHT,…`: a deterministic weighted round robin per
    /// client, exactly memtier's `config_weight_list::get_next_size` — the first size
    /// `weight` times in a row, then the next, and around again. It is not random.
    List(Vec<SizeWeight>),
}

impl Default for DataSize {
    /// memtier's default, 32 bytes.
    fn default() -> DataSize {
        DataSize::Fixed(32)
    }
}

impl DataSize {
    /// The largest size this can produce.
    pub fn max_bytes(&self) -> u32 {
        match self {
            DataSize::Fixed(n) => *n,
            DataSize::Range { max_bytes, .. } => *max_bytes,
            DataSize::List(list) => list.iter().map(|e| e.size_bytes).max().unwrap_or(0),
        }
    }
}

/// `--expiry-range=MIN-MAX`: each SET gets a TTL drawn uniformly from `[min_s, max_s]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpiryRange {
    /// Shortest TTL in seconds.
    pub min_s: u32,
    /// Longest TTL in seconds.
    pub max_s: u32,
}

/// A memtier_benchmark SET/GET workload, field by field as memtier's flags set it.
/// [`Default`] gives memtier's defaults; [`MemtierWorkload::new`] validates it.
#[derive(Clone, Debug, PartialEq)]
pub struct MemtierSpec {
    /// `--ratio` (default 1:10).
    pub ratio: Ratio,
    /// `--key-prefix` (default `memtier-`).
    pub key_prefix: String,
    /// `--key-minimum` (default 0).
    pub key_minimum: u64,
    /// `--key-maximum`, inclusive (default 10 000 000).
    pub key_maximum: u64,
    /// The SET side of `--key-pattern` (default `R`).
    pub set_pattern: KeyPattern,
    /// The GET side of `--key-pattern` (default `R`).
    pub get_pattern: KeyPattern,
    /// `--key-stddev` for `G` (default: key range / 6).
    pub key_stddev: Option<f64>,
    /// `--key-median` for `G` (default: the middle of the key range).
    pub key_median: Option<f64>,
    /// `--key-zipf-exp` for `Z`, in (0, 5) (default 1).
    pub key_zipf_exp: f64,
    /// `--data-size`, `--data-size-range` or `--data-size-list` (default 32 bytes).
    pub data_size: DataSize,
    /// `--random-data`: random value bytes instead of `x…x`.
    pub random_data: bool,
    /// `--expiry-range` (default: no expiry).
    pub expiry: Option<ExpiryRange>,
    /// `--requests`: requests per client; `None` when the run is bounded by time
    /// (`--test-time`).
    pub requests: Option<u64>,
    /// memtier's client count, threads × clients per thread (default 4 × 50): the
    /// number of sources the runner will ask for. Used for
    /// [`MemtierWorkload::operation_count`] and to check that `P` leaves every client
    /// at least one key.
    pub total_clients: u64,
    /// `--distinct-client-seed`: every client gets its own random stream.
    pub distinct_client_seed: bool,
    /// `--multi-key-get=N`: GETs of up to `N` keys each (see the module docs); 0 (the
    /// default) sends one key per GET.
    pub multi_key_get: u32,
    /// `--command` (with `--command-ratio` and `--command-key-pattern`): when not empty,
    /// the commands replace the SET/GET cycle (see the module docs).
    pub commands: Vec<ArbitraryCommand>,
    /// `--wait-ratio`, `--num-slaves`, `--wait-timeout`: WAITs among the SETs and GETs.
    pub wait: Option<WaitSpec>,
    /// `--data-import`: the items SETs write, in file order (each client from the
    /// first, around again at the end), with the item's key — or with
    /// [`MemtierSpec::generate_keys`] a generated one — its value and its `exptime` as
    /// time to live. Without generated keys GETs read the items' keys: key number `k`
    /// of `[key_minimum, key_maximum]` (which must lie within `[1, items]`) is item
    /// `k − 1`.
    pub import: Option<Arc<ImportedItems>>,
    /// `--generate-keys`: imported values under generated keys (prefix and number, as
    /// without an import).
    pub generate_keys: bool,
    /// `--no-expiry`: imported items are written without a time to live.
    pub no_expiry: bool,
}

impl MemtierSpec {
    /// memtier's `--requests` default when neither it nor `--test-time` is given.
    pub const DEFAULT_REQUESTS: u64 = 10_000;

    /// True when each client walks its own slice of the key range: `--key-pattern=P:P`,
    /// or every command's pattern `P`.
    pub fn parallel(&self) -> bool {
        if self.commands.is_empty() {
            self.set_pattern == KeyPattern::Parallel
        } else {
            self.commands
                .iter()
                .all(|c| c.key_pattern == KeyPattern::Parallel)
        }
    }

    /// Every key pattern in use: SET and GET, or the commands'.
    fn patterns(&self) -> Vec<KeyPattern> {
        if self.commands.is_empty() {
            vec![self.set_pattern, self.get_pattern]
        } else {
            self.commands.iter().map(|c| c.key_pattern).collect()
        }
    }

    /// The name of each [`CommandId`] the workload's requests carry, upper case: the
    /// distinct command names in order of first appearance (`SET`, `GET`), or `WAIT`
    /// with `--wait-ratio`; empty for the plain SET/GET cycle.
    pub fn command_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for c in &self.commands {
            let name = c.name();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if names.is_empty() && self.wait.is_some_and(|w| w.waits > 0) {
            names.push("WAIT".to_string());
        }
        names
    }
}

impl Default for MemtierSpec {
    fn default() -> MemtierSpec {
        MemtierSpec {
            ratio: Ratio::default(),
            key_prefix: "memtier-".to_string(),
            key_minimum: 0,
            key_maximum: 10_000_000,
            set_pattern: KeyPattern::Random,
            get_pattern: KeyPattern::Random,
            key_stddev: None,
            key_median: None,
            key_zipf_exp: 1.0,
            data_size: DataSize::default(),
            random_data: false,
            expiry: None,
            requests: Some(MemtierSpec::DEFAULT_REQUESTS),
            total_clients: 200,
            distinct_client_seed: false,
            multi_key_get: 0,
            commands: Vec::new(),
            wait: None,
            import: None,
            generate_keys: false,
            no_expiry: false,
        }
    }
}

fn invalid(message: String) -> MemtierError {
    MemtierError::Inconsistent(message)
}

impl MemtierSpec {
    /// Checks every field and their combinations, with memtier's rules (and its error
    /// wording where it has one), naming the flag at fault.
    pub fn validate(&self) -> Result<(), MemtierError> {
        let (min, max) = (self.key_minimum, self.key_maximum);
        if self.ratio.sets == 0 && self.ratio.gets == 0 {
            return Err(invalid(
                "--ratio=0:0: at least one of SETs and GETs must be non-zero".into(),
            ));
        }
        if max < min {
            return Err(invalid(format!(
                "--key-maximum={max} is below --key-minimum={min}"
            )));
        }
        for c in &self.commands {
            if c.ratio == 0 {
                return Err(invalid(format!(
                    "--command-ratio of `{}`: must be greater than zero",
                    c.text
                )));
            }
            if c.args.is_empty() {
                return Err(invalid(format!("--command `{}`: no command", c.text)));
            }
        }
        if self.commands.len() > usize::from(u16::MAX) {
            return Err(invalid(format!(
                "{} commands: at most {} --command are supported",
                self.commands.len(),
                u16::MAX
            )));
        }
        let parallel_commands = self
            .commands
            .iter()
            .filter(|c| c.key_pattern == KeyPattern::Parallel)
            .count();
        if parallel_commands > 0 && parallel_commands != self.commands.len() {
            return Err(invalid(
                "--command-key-pattern=P: parallel key-pattern must be configured to all \
                 commands"
                    .into(),
            ));
        }
        if let Some(w) = self.wait {
            if w.min_replicas > w.max_replicas || w.min_timeout_ms > w.max_timeout_ms {
                return Err(invalid(format!(
                    "--num-slaves={}-{} / --wait-timeout={}-{}: expected MIN-MAX with MIN ≤ \
                     MAX",
                    w.min_replicas, w.max_replicas, w.min_timeout_ms, w.max_timeout_ms
                )));
            }
        }
        let patterns = self.patterns();
        let parallel = self.parallel();
        if self.commands.is_empty()
            && patterns.contains(&KeyPattern::Parallel)
            && self.set_pattern != self.get_pattern
        {
            return Err(invalid(format!(
                "--key-pattern={}:{}: parallel key-pattern must be configured for both SET \
                 and GET commands",
                self.set_pattern.letter(),
                self.get_pattern.letter()
            )));
        }
        if self.total_clients == 0 {
            return Err(invalid("the workload needs at least one client".into()));
        }
        if parallel && (max - min).saturating_add(1) < self.total_clients {
            return Err(invalid(format!(
                "{} gives each of the {} clients a slice of the {} keys [{min}, {max}]: at \
                 least one key per client is needed",
                if self.commands.is_empty() {
                    "--key-pattern=P:P"
                } else {
                    "--command-key-pattern=P"
                },
                self.total_clients,
                (max - min).saturating_add(1)
            )));
        }
        let gaussian = patterns.contains(&KeyPattern::Gaussian);
        if (self.key_stddev.is_some() || self.key_median.is_some()) && !gaussian {
            return Err(invalid(
                "--key-stddev and --key-median are only allowed together with --key-pattern \
                 set to G"
                    .into(),
            ));
        }
        if let Some(stddev) = self.key_stddev {
            if !(stddev.is_finite() && stddev > 0.0) {
                return Err(invalid(format!(
                    "--key-stddev={stddev}: must be a finite number greater than zero"
                )));
            }
        }
        if gaussian {
            if max - min < 2 {
                return Err(invalid(format!(
                    "--key-pattern=G needs a key range of at least 3 keys (--key-maximum − \
                     --key-minimum ≥ 2); got [{min}, {max}]"
                )));
            }
            if let Some(median) = self.key_median {
                if !(median > min as f64 && median < max as f64) {
                    return Err(invalid(format!(
                        "--key-median={median}: must be strictly between --key-minimum={min} \
                         and --key-maximum={max}"
                    )));
                }
            }
        }
        let exp = self.key_zipf_exp;
        if !(exp > 0.0 && exp < 5.0) {
            return Err(invalid(format!(
                "--key-zipf-exp={exp}: must be within the interval (0, 5)"
            )));
        }
        let size_ok = |n: u32| (1..=MAX_DATA_SIZE_BYTES).contains(&n);
        match &self.data_size {
            DataSize::Fixed(n) if !size_ok(*n) => {
                return Err(invalid(format!(
                    "--data-size={n}: must be between 1 and {MAX_DATA_SIZE_BYTES} bytes"
                )))
            }
            DataSize::Range {
                min_bytes,
                max_bytes,
                ..
            } if !(size_ok(*min_bytes) && size_ok(*max_bytes) && min_bytes <= max_bytes) => {
                return Err(invalid(format!(
                    "--data-size-range={min_bytes}-{max_bytes}: expected MIN-MAX with \
                     1 ≤ MIN ≤ MAX ≤ {MAX_DATA_SIZE_BYTES}"
                )))
            }
            DataSize::List(list) => {
                if list.is_empty() {
                    return Err(invalid("--data-size-list: no sizes".into()));
                }
                for e in list {
                    if !size_ok(e.size_bytes) || e.weight == 0 {
                        return Err(invalid(format!(
                            "--data-size-list entry {}:{}: sizes must be between 1 and {} \
                             bytes and weights greater than zero",
                            e.size_bytes, e.weight, MAX_DATA_SIZE_BYTES
                        )));
                    }
                }
            }
            _ => {}
        }
        if let Some(e) = self.expiry {
            if e.max_s == 0 || e.min_s > e.max_s {
                return Err(invalid(format!(
                    "--expiry-range={}-{}: expected MIN-MAX with MIN ≤ MAX and MAX ≥ 1",
                    e.min_s, e.max_s
                )));
            }
        }
        if self.requests == Some(0) {
            return Err(invalid("--requests must be greater than zero".into()));
        }
        if let Some(items) = &self.import {
            if items.is_empty() {
                return Err(invalid("--data-import: the file has no items".into()));
            }
            let n = items.len() as u64;
            if !self.generate_keys && (min < 1 || max > n) {
                return Err(invalid(format!(
                    "--data-import without --generate-keys reads the {n} imported keys: the key \
                     range [{min}, {max}] must lie within [1, {n}]"
                )));
            }
        }
        Ok(())
    }

    /// Every setting as the memtier flag that sets it, defaults included (for
    /// `--show-config` and the result document).
    pub fn effective(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, val: String| v.push((k.to_string(), val));
        put("ratio", format!("{}:{}", self.ratio.sets, self.ratio.gets));
        put("key-prefix", self.key_prefix.clone());
        put("key-minimum", self.key_minimum.to_string());
        put("key-maximum", self.key_maximum.to_string());
        put(
            "key-pattern",
            format!(
                "{}:{}",
                self.set_pattern.letter(),
                self.get_pattern.letter()
            ),
        );
        if self.patterns().contains(&KeyPattern::Gaussian) {
            let (stddev, median) = gaussian_parameters(self);
            put("key-stddev", stddev.to_string());
            put("key-median", median.to_string());
        }
        if self.patterns().contains(&KeyPattern::Zipfian) {
            put("key-zipf-exp", self.key_zipf_exp.to_string());
        }
        match &self.data_size {
            DataSize::Fixed(n) => put("data-size", n.to_string()),
            DataSize::Range {
                min_bytes,
                max_bytes,
                pattern,
            } => {
                put("data-size-range", format!("{min_bytes}-{max_bytes}"));
                let p = match pattern {
                    SizePattern::Random => "R",
                    SizePattern::Spread => "S",
                };
                put("data-size-pattern", p.to_string());
            }
            DataSize::List(list) => {
                let mut s = String::new();
                for (i, e) in list.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "," };
                    let _ = write!(s, "{sep}{}:{}", e.size_bytes, e.weight);
                }
                put("data-size-list", s);
            }
        }
        put("random-data", self.random_data.to_string());
        put(
            "expiry-range",
            self.expiry
                .map_or("0-0".to_string(), |e| format!("{}-{}", e.min_s, e.max_s)),
        );
        put(
            "requests",
            self.requests
                .map_or("unbounded".to_string(), |r| r.to_string()),
        );
        put("clients-total", self.total_clients.to_string());
        put(
            "distinct-client-seed",
            self.distinct_client_seed.to_string(),
        );
        put("multi-key-get", self.multi_key_get.to_string());
        for (i, c) in self.commands.iter().enumerate() {
            put(
                &format!("command-{}", i + 1),
                format!(
                    "{} (ratio {}, key pattern {})",
                    c.text,
                    c.ratio,
                    c.key_pattern.letter()
                ),
            );
        }
        if let Some(w) = self.wait {
            put("wait-ratio", format!("{}:{}", w.sets, w.waits));
            put(
                "num-slaves",
                format!("{}-{}", w.min_replicas, w.max_replicas),
            );
            put(
                "wait-timeout",
                format!("{}-{}", w.min_timeout_ms, w.max_timeout_ms),
            );
        }
        if let Some(items) = &self.import {
            put("data-import", format!("{} items", items.len()));
            put("generate-keys", self.generate_keys.to_string());
            put("no-expiry", self.no_expiry.to_string());
        }
        v
    }
}

/// `(stddev, median)` of the Gaussian key pattern, with memtier's defaults
/// (`gaussian_distribution_range`): stddev `len/6`, median `len/2 + min + 0.5`, where
/// `len = key_maximum − key_minimum`.
fn gaussian_parameters(spec: &MemtierSpec) -> (f64, f64) {
    let len = (spec.key_maximum - spec.key_minimum) as f64;
    let stddev = spec.key_stddev.unwrap_or(len / 6.0);
    let median = spec
        .key_median
        .unwrap_or(len / 2.0 + spec.key_minimum as f64 + 0.5);
    (stddev, median)
}

pub use kvlab_dist::{TruncatedNormal, Zipf};

/// What every client shares: the validated spec and the prepared choosers.
#[derive(Debug)]
struct Shared {
    spec: MemtierSpec,
    prefix: Vec<u8>,
    /// The imported items whose keys name the keys (`--data-import` without
    /// `--generate-keys`).
    named_keys: Option<Arc<ImportedItems>>,
    /// `x…x`, or random bytes with room for a random offset.
    pool: ValuePool,
    gaussian: Option<TruncatedNormal>,
    zipf: Option<Zipf>,
    /// Arbitrary commands or WAITs: the source leaves the plain SET/GET path.
    special: bool,
    /// Per command: the [`CommandId`] of its row ([`MemtierSpec::command_names`]).
    command_ids: Vec<CommandId>,
    /// `WAIT`'s timeout chooser (`--wait-timeout`).
    wait_timeout: Option<TruncatedNormal>,
}

/// A validated memtier workload, shared by every client; [`Workload::source`] gives
/// client `c` its [`MemtierSource`].
#[derive(Clone, Debug)]
pub struct MemtierWorkload {
    shared: Arc<Shared>,
}

impl MemtierWorkload {
    /// Validates `spec` ([`MemtierSpec::validate`]) and prepares the value pool and key
    /// choosers.
    pub fn new(spec: MemtierSpec) -> Result<MemtierWorkload, MemtierError> {
        spec.validate()?;
        let max_size = spec.data_size.max_bytes() as usize;
        let pool = if spec.random_data {
            ValuePool::random(VALUE_POOL_BYTES + max_size, VALUE_POOL_SEED)
        } else {
            ValuePool::filled(max_size, PLAIN_DATA_BYTE)
        };
        let patterns = spec.patterns();
        let gaussian = patterns.contains(&KeyPattern::Gaussian).then(|| {
            let (stddev, median) = gaussian_parameters(&spec);
            TruncatedNormal::new(spec.key_minimum, spec.key_maximum, stddev, median)
        });
        let zipf = patterns
            .contains(&KeyPattern::Zipfian)
            .then(|| Zipf::new(spec.key_minimum, spec.key_maximum, spec.key_zipf_exp));
        let names = spec.command_names();
        let command_ids = spec
            .commands
            .iter()
            .map(|c| {
                let row = names.iter().position(|n| *n == c.name()).unwrap_or(0);
                CommandId(row as u16)
            })
            .collect();
        let wait_timeout = spec.wait.map(|w| {
            // client::create_wait_request: normal_distribution(min, max, 0, (max − min)/2
            // + min), where a standard deviation of 0 means a sixth of the range.
            let (lo, hi) = (u64::from(w.min_timeout_ms), u64::from(w.max_timeout_ms));
            let len = (hi - lo) as f64;
            TruncatedNormal::new(lo, hi, len / 6.0, len / 2.0 + lo as f64)
        });
        let named_keys = spec.import.clone().filter(|_| !spec.generate_keys);
        Ok(MemtierWorkload {
            shared: Arc::new(Shared {
                prefix: spec.key_prefix.as_bytes().to_vec(),
                special: !spec.commands.is_empty() || spec.wait.is_some_and(|w| w.waits > 0),
                named_keys,
                spec,
                pool,
                gaussian,
                zipf,
                command_ids,
                wait_timeout,
            }),
        })
    }

    /// The spec it was built from.
    pub fn spec(&self) -> &MemtierSpec {
        &self.shared.spec
    }

    /// memtier's `--requests`: requests per client, `None` when bounded by time. The
    /// runner's total is this × threads × clients per thread.
    pub fn requests_per_client(&self) -> Option<u64> {
        self.shared.spec.requests
    }

    /// Writes key `n`'s name into `out` (cleared first): the prefix and `n` in decimal,
    /// memtier's `"%s%llu"`.
    pub fn key_name(&self, n: u64, out: &mut Vec<u8>) {
        out.clear();
        put_key(&self.shared, n, out);
    }

    /// Client `client` of `clients` with its own random stream (see the module docs on
    /// seeding). For `P:P` the key range is split as memtier splits it: each client gets
    /// `(key_maximum − key_minimum)/clients + 1` keys from `key_minimum + i·that`, the
    /// last one up to `key_maximum`.
    pub fn client(&self, seed: u64, client: usize, clients: usize) -> MemtierSource {
        let spec = &self.shared.spec;
        let stream = if spec.distinct_client_seed { client } else { 0 };
        let (mut lo, mut hi) = (spec.key_minimum, spec.key_maximum);
        if spec.parallel() {
            // memtier client::setup_client; `client % clients` as memtier's
            // `next_client_idx % total_num_of_clients`.
            let n = clients.max(1) as u64;
            let i = client as u64 % n;
            let range = (hi - lo) / n + 1;
            let start = lo.saturating_add(range.saturating_mul(i)).min(hi);
            let end = if i == n - 1 {
                hi
            } else {
                start.saturating_add(range - 1).min(hi)
            };
            (lo, hi) = (start, end);
        }
        let mut source = MemtierSource {
            shared: self.shared.clone(),
            rng: Xoshiro256PlusPlus::seed_from_u64(worker_seed(seed, stream)),
            key_min: lo,
            key_max: hi,
            next_set_key: lo,
            next_get_key: lo,
            sets_in_cycle: 0,
            gets_in_cycle: 0,
            gaussian_spare: None,
            size_entry: 0,
            size_used: 0,
            command: 0,
            command_sent: 0,
            command_next_key: vec![lo; spec.commands.len()],
            sets_sent: 0,
            waits_sent: 0,
            wait_spare: None,
            next_item: 0,
        };
        // client::client calls advance_arbitrary_command_index before the first request.
        source.advance_command();
        source
    }

    /// memtier's verification client (`verify_client`, `--data-verify`): one client
    /// that walks the SET/GET cycle as client 0 of a one-client run would, but reads
    /// each SET's key back instead of writing it, expecting the SET's value; GETs only
    /// advance their keys. It stops after `requests` requests of the cycle (memtier's
    /// `--requests`, GETs included), or — bounded by time — after one read per imported
    /// item (one per key of the range without an import).
    pub fn verifier(&self, seed: u64) -> MemtierVerifier {
        let spec = &self.shared.spec;
        let limit = match (spec.requests, &spec.import) {
            (Some(n), _) => VerifyLimit::Requests(n),
            (None, Some(items)) => VerifyLimit::Reads(items.len() as u64),
            (None, None) => VerifyLimit::Reads(spec.key_maximum - spec.key_minimum + 1),
        };
        MemtierVerifier {
            source: self.client(seed, 0, 1),
            limit,
        }
    }
}

/// How long a [`MemtierVerifier`] goes on.
#[derive(Clone, Copy, Debug)]
enum VerifyLimit {
    /// Requests of the cycle left, SETs (read back) and GETs (skipped).
    Requests(u64),
    /// Reads left.
    Reads(u64),
}

/// The reads of memtier's verification client ([`MemtierWorkload::verifier`]).
#[derive(Debug)]
pub struct MemtierVerifier {
    source: MemtierSource,
    limit: VerifyLimit,
}

impl MemtierVerifier {
    /// Fills `req` with the next read to check and `expected` with the value it must
    /// return; false when done.
    pub fn next(&mut self, req: &mut Request, expected: &mut Vec<u8>) -> bool {
        loop {
            match &mut self.limit {
                VerifyLimit::Requests(0) | VerifyLimit::Reads(0) => return false,
                VerifyLimit::Requests(n) => *n -= 1,
                VerifyLimit::Reads(_) => {}
            }
            self.source.next(req);
            if req.kind != OpKind::Insert {
                continue;
            }
            if let VerifyLimit::Reads(n) = &mut self.limit {
                *n -= 1;
            }
            expected.clear();
            expected.extend_from_slice(req.value.blob());
            req.kind = OpKind::Read;
            req.read.set_blob();
            // The value is compared: copy it into the reply (a GET of the run discards).
            req.read.set_discard(false);
            req.ttl_s = 0;
            req.value.clear();
            return true;
        }
    }
}

impl Workload for MemtierWorkload {
    type Source = MemtierSource;

    fn source(self: &Arc<Self>, seed: u64, client: usize, clients: usize) -> MemtierSource {
        self.client(seed, client, clients)
    }

    fn needs(&self) -> Needs {
        let spec = &self.shared.spec;
        Needs {
            multi_read: spec.multi_key_get > 1,
            commands: !spec.commands.is_empty() || spec.wait.is_some_and(|w| w.waits > 0),
            ttl: spec.expiry.is_some(),
            blob: true,
            ..Needs::default()
        }
    }

    /// `requests × total_clients` (memtier's `--requests` is per client); with
    /// `--test-time` (no request count), memtier's default of 10 000 per client.
    fn operation_count(&self) -> u64 {
        let spec = &self.shared.spec;
        spec.requests
            .unwrap_or(MemtierSpec::DEFAULT_REQUESTS)
            .saturating_mul(spec.total_clients)
    }
}

/// One memtier client: its SET/GET cycle, key counters and random stream. It never
/// runs dry; the runner decides how many requests it sends.
#[derive(Debug)]
pub struct MemtierSource {
    shared: Arc<Shared>,
    rng: Xoshiro256PlusPlus,
    key_min: u64,
    key_max: u64,
    next_set_key: u64,
    next_get_key: u64,
    sets_in_cycle: u32,
    gets_in_cycle: u32,
    gaussian_spare: Option<f64>,
    size_entry: usize,
    size_used: u32,
    /// The arbitrary command to send next, and how many times in a row it was sent
    /// (memtier's `m_executed_command_index`, `m_arbitrary_command_ratio_count`).
    command: usize,
    command_sent: u32,
    /// Per command: its next sequential (`S`, `P`) key.
    command_next_key: Vec<u64>,
    /// SETs and WAITs sent, for `--wait-ratio` (memtier's `m_tot_set_ops`,
    /// `m_tot_wait_ops`).
    sets_sent: u64,
    waits_sent: u64,
    /// The spare normal draw of the WAIT timeout chooser.
    wait_spare: Option<f64>,
    /// The imported item the next SET writes.
    next_item: usize,
}

impl MemtierSource {
    /// This client's key range: the whole range, or its slice for `P:P`.
    pub fn key_range(&self) -> RangeInclusive<u64> {
        self.key_min..=self.key_max
    }

    /// The next key number for `pattern`; sequential patterns advance `counter` (sets
    /// and gets have their own), wrapping past the maximum (`get_key_index`).
    #[inline]
    fn key_index(&mut self, pattern: KeyPattern, set: bool) -> u64 {
        let shared = &*self.shared;
        match pattern {
            KeyPattern::Random => {
                self.key_min + next_below(&mut self.rng, self.key_max - self.key_min + 1)
            }
            KeyPattern::Gaussian => shared
                .gaussian
                .as_ref()
                .expect("a Gaussian chooser exists when a pattern is G")
                .next(&mut self.rng, &mut self.gaussian_spare),
            KeyPattern::Zipfian => shared
                .zipf
                .as_ref()
                .expect("a Zipf chooser exists when a pattern is Z")
                .next(&mut self.rng),
            KeyPattern::Sequential | KeyPattern::Parallel => {
                let counter = if set {
                    &mut self.next_set_key
                } else {
                    &mut self.next_get_key
                };
                let k = *counter;
                *counter = if k >= self.key_max {
                    self.key_min
                } else {
                    k + 1
                };
                k
            }
        }
    }

    /// The size of the next SET's value for key `key` (`object_generator::get_value`).
    #[inline]
    fn value_size(&mut self, key: u64) -> usize {
        match &self.shared.spec.data_size {
            DataSize::Fixed(n) => *n as usize,
            DataSize::Range {
                min_bytes,
                max_bytes,
                pattern: SizePattern::Random,
            } => {
                let lo = u64::from((*min_bytes).max(1));
                (lo + next_below(&mut self.rng, u64::from(*max_bytes) - lo + 1)) as usize
            }
            DataSize::Range {
                min_bytes,
                max_bytes,
                pattern: SizePattern::Spread,
            } => {
                if self.key_max == self.key_min {
                    return *min_bytes as usize;
                }
                let a = (key - self.key_min) as f64 / (self.key_max - self.key_min) as f64;
                (f64::from(max_bytes - min_bytes) * a + f64::from(*min_bytes)) as usize
            }
            DataSize::List(list) => {
                // config_weight_list::get_next_size: skip entries whose weight is used up.
                while self.size_used >= list[self.size_entry].weight {
                    self.size_entry = (self.size_entry + 1) % list.len();
                    self.size_used = 0;
                }
                self.size_used += 1;
                list[self.size_entry].size_bytes as usize
            }
        }
    }
}

impl OpSource for MemtierSource {
    /// The next request of the cycle: `ratio.sets` SETs, then `ratio.gets` GETs (or
    /// the next arbitrary command, or a WAIT: see the module docs).
    #[inline]
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        if self.shared.special {
            return self.next_special(req);
        }
        self.next_set_get(req)
    }

    fn completed(&mut self, _slot: &Slot, _ticket: Ticket) -> Verdict {
        Verdict::Unchecked
    }
}

impl MemtierSource {
    /// The next SET or GET of the cycle.
    #[inline]
    fn next_set_get(&mut self, req: &mut Request) -> Option<Ticket> {
        let ratio = self.shared.spec.ratio;
        loop {
            if self.sets_in_cycle < ratio.sets {
                self.sets_in_cycle += 1;
                self.fill_set(req);
                return Some(Ticket::NONE);
            }
            if self.gets_in_cycle < ratio.gets {
                // memtier: a multi-key GET takes the cycle's remaining GETs, up to N.
                let keys = (ratio.gets - self.gets_in_cycle).min(self.shared.spec.multi_key_get);
                self.gets_in_cycle += keys.max(1);
                self.fill_get(req, keys);
                return Some(Ticket::NONE);
            }
            // memtier: "overlap counters".
            self.sets_in_cycle = 0;
            self.gets_in_cycle = 0;
        }
    }

    /// An arbitrary command, or a WAIT or the next SET/GET with `--wait-ratio`.
    #[inline(never)]
    fn next_special(&mut self, req: &mut Request) -> Option<Ticket> {
        if !self.shared.spec.commands.is_empty() {
            self.fill_command(req);
            return Some(Ticket::NONE);
        }
        if let Some(w) = self.shared.spec.wait {
            // client::create_request: WAITs first, then whenever the SETs per WAIT so far
            // exceed the ratio's (integer divisions, as memtier's).
            if w.waits > 0
                && (self.waits_sent == 0
                    || self.sets_sent / self.waits_sent > u64::from(w.sets / w.waits))
            {
                self.fill_wait(req, w);
                self.waits_sent += 1;
                return Some(Ticket::NONE);
            }
        }
        let ticket = self.next_set_get(req);
        if req.kind == OpKind::Insert {
            self.sets_sent += 1;
        }
        ticket
    }

    /// `WAIT numreplicas timeout` (`client::create_wait_request`).
    fn fill_wait(&mut self, req: &mut Request, w: WaitSpec) {
        let replicas = u64::from(w.min_replicas)
            + next_below(
                &mut self.rng,
                u64::from(w.max_replicas - w.min_replicas) + 1,
            );
        let timeout = self
            .shared
            .wait_timeout
            .as_ref()
            .expect("a WAIT timeout chooser exists with --wait-ratio")
            .next(&mut self.rng, &mut self.wait_spare);
        req.kind = OpKind::Read;
        req.key.clear();
        req.command.id = Some(CommandId(0));
        req.command.args.clear();
        req.command.args.push(b"WAIT");
        req.command
            .args
            .push_with(|out| kvlab_dist::decimal::push_u64(replicas, out));
        req.command
            .args
            .push_with(|out| kvlab_dist::decimal::push_u64(timeout, out));
    }

    /// The current arbitrary command with its placeholders filled, then on to the next
    /// (`client::create_arbitrary_request`, `advance_arbitrary_command_index`).
    fn fill_command(&mut self, req: &mut Request) {
        let i = self.command;
        let shared = &*self.shared;
        let command = &shared.spec.commands[i];
        req.kind = OpKind::Read;
        req.key.clear();
        req.command.id = Some(shared.command_ids[i]);
        req.command.args.clear();
        let mut first_key = true;
        for a in 0..command.args.len() {
            match &self.shared.spec.commands[i].args[a] {
                CommandArg::Literal(bytes) => req.command.args.push(bytes),
                CommandArg::Key => {
                    let k = self.command_key(i);
                    let prefix = &self.shared.prefix;
                    req.command.args.push_with(|out| {
                        out.extend_from_slice(prefix);
                        kvlab_dist::decimal::push_u64(k, out);
                    });
                    if first_key {
                        // The first key routes the command (a cluster node).
                        first_key = false;
                        req.key.extend_from_slice(prefix);
                        kvlab_dist::decimal::push_u64(k, &mut req.key);
                    }
                }
                CommandArg::KeyWithin { .. } => {
                    let k = self.command_key(i);
                    let CommandArg::KeyWithin { before, after } =
                        &self.shared.spec.commands[i].args[a]
                    else {
                        unreachable!("argument {a} of command {i} was matched as KeyWithin");
                    };
                    let prefix = &self.shared.prefix;
                    req.command.args.push_with(|out| {
                        out.extend_from_slice(before);
                        out.extend_from_slice(prefix);
                        kvlab_dist::decimal::push_u64(k, out);
                        out.extend_from_slice(after);
                    });
                    if first_key {
                        // The whole argument is the key the server hashes.
                        first_key = false;
                        req.key.extend_from_slice(before);
                        req.key.extend_from_slice(prefix);
                        kvlab_dist::decimal::push_u64(k, &mut req.key);
                        req.key.extend_from_slice(after);
                    }
                }
                CommandArg::Data => {
                    // memtier draws the value for key index 0: a spread size is the
                    // minimum's (kvlab: the key range's first key's).
                    let size = self.value_size(self.key_min);
                    let offset = if self.shared.spec.random_data {
                        self.shared.pool.offset(&mut self.rng, size)
                    } else {
                        0
                    };
                    req.command.args.push(self.shared.pool.at(offset, size));
                }
            }
        }
        self.advance_command();
    }

    /// memtier's `advance_arbitrary_command_index`: counts the command about to be sent,
    /// moving on to the next one once its ratio is used up. memtier's client calls it
    /// once in its constructor too, so the first command is sent exactly its ratio.
    fn advance_command(&mut self) {
        let commands = &self.shared.spec.commands;
        if commands.iter().all(|c| c.ratio == 0) {
            return;
        }
        loop {
            if self.command_sent < commands[self.command].ratio {
                self.command_sent += 1;
                break;
            }
            self.command_sent = 0;
            self.command = (self.command + 1) % commands.len();
        }
    }

    /// The next key of command `i`, from its own key pattern.
    #[inline]
    fn command_key(&mut self, i: usize) -> u64 {
        match self.shared.spec.commands[i].key_pattern {
            KeyPattern::Sequential | KeyPattern::Parallel => {
                let k = self.command_next_key[i];
                self.command_next_key[i] = if k >= self.key_max {
                    self.key_min
                } else {
                    k + 1
                };
                k
            }
            pattern => self.key_index(pattern, false),
        }
    }
}

impl MemtierSource {
    #[inline]
    fn fill_set(&mut self, req: &mut Request) {
        if self.shared.spec.import.is_some() {
            self.fill_imported_set(req);
            return;
        }
        let key = self.key_index(self.shared.spec.set_pattern, true);
        let size = self.value_size(key);
        let offset = if self.shared.spec.random_data {
            self.shared.pool.offset(&mut self.rng, size)
        } else {
            0
        };
        let ttl_s = match self.shared.spec.expiry {
            Some(e) => e.min_s + next_below(&mut self.rng, u64::from(e.max_s - e.min_s) + 1) as u32,
            None => 0,
        };
        let shared = &*self.shared;
        req.kind = OpKind::Insert;
        req.ttl_s = ttl_s;
        req.key.clear();
        req.key.extend_from_slice(&shared.prefix);
        kvlab_dist::decimal::push_u64(key, &mut req.key);
        req.value.set_blob(shared.pool.at(offset, size));
        req.more_keys.clear();
    }

    /// A SET of the next imported item (`import_object_generator::get_object`): its key,
    /// or a generated one, its value, and its `exptime` as time to live unless
    /// `--no-expiry` (or `--expiry-range`, which draws one).
    #[cold]
    fn fill_imported_set(&mut self, req: &mut Request) {
        let shared = Arc::clone(&self.shared);
        let spec = &shared.spec;
        let items = spec.import.as_ref().expect("called with an import");
        let i = self.next_item;
        self.next_item = (i + 1) % items.len();
        req.key.clear();
        if spec.generate_keys {
            let key = self.key_index(spec.set_pattern, true);
            put_key(&shared, key, &mut req.key);
        } else {
            req.key.extend_from_slice(items.key(i));
        }
        req.ttl_s = match (spec.no_expiry, spec.expiry) {
            (true, _) => 0,
            (false, Some(e)) => {
                e.min_s + next_below(&mut self.rng, u64::from(e.max_s - e.min_s) + 1) as u32
            }
            (false, None) => items.exptime(i),
        };
        req.kind = OpKind::Insert;
        req.value.set_blob(items.value(i));
        req.more_keys.clear();
    }

    /// A GET of `keys` keys (0 and 1 both mean one key: a plain GET).
    #[inline]
    fn fill_get(&mut self, req: &mut Request, keys: u32) {
        let pattern = self.shared.spec.get_pattern;
        let key = self.key_index(pattern, false);
        req.kind = OpKind::Read;
        req.read.set_blob();
        // memtier looks at no value it reads: a GET's bytes are counted, not copied. A
        // multi-key GET keeps its reply, which says which keys were found.
        req.read.set_discard(keys <= 1);
        req.ttl_s = 0;
        req.key.clear();
        put_key(&self.shared, key, &mut req.key);
        req.value.clear();
        req.more_keys.clear();
        for _ in 1..keys {
            let key = self.key_index(pattern, false);
            let shared = &*self.shared;
            req.more_keys.push_with(|out| put_key(shared, key, out));
        }
    }
}

/// Appends key number `k`'s name: the prefix and `k` in decimal (`"%s%llu"`), or with
/// imported keys the key of item `k − 1`.
#[inline]
fn put_key(shared: &Shared, k: u64, out: &mut Vec<u8>) {
    match &shared.named_keys {
        None => {
            out.extend_from_slice(&shared.prefix);
            kvlab_dist::decimal::push_u64(k, out);
        }
        Some(items) => out.extend_from_slice(items.key((k - 1) as usize)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_matches_std() {
        for n in [
            0u64,
            9,
            10,
            99,
            100,
            101,
            12345,
            6284781860667377211,
            999_999,
            1_000_000,
            10_000_000_000_000_000_000,
            u64::MAX,
        ] {
            let mut out = b"p".to_vec();
            kvlab_dist::decimal::push_u64(n, &mut out);
            assert_eq!(out, format!("p{n}").into_bytes());
        }
        // Every length, at both ends, appended after earlier keys.
        let mut out = Vec::new();
        let mut want = String::new();
        for k in 0..20u32 {
            let low = 10u64.pow(k);
            for n in [low - u64::from(k > 0), low, low.saturating_mul(10) - 1] {
                kvlab_dist::decimal::push_u64(n, &mut out);
                want.push_str(&format!("{n},"));
                out.push(b',');
            }
        }
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    /// Each request's keys and kind over `n` requests.
    fn requests(spec: MemtierSpec, n: usize) -> Vec<(OpKind, Vec<Vec<u8>>)> {
        let wl = MemtierWorkload::new(spec).unwrap();
        let mut src = wl.client(7, 0, 1);
        let mut req = Request::default();
        (0..n)
            .map(|_| {
                src.next(&mut req).unwrap();
                (req.kind, req.keys().map(<[u8]>::to_vec).collect())
            })
            .collect()
    }

    fn three_items() -> Arc<ImportedItems> {
        let mut file = format!("{IMPORT_HEADER}\n").into_bytes();
        for (k, v, exp) in [("a", "va", 0), ("bb", "vbb", 60), ("c", "", 0)] {
            write_import_item(&mut file, k.as_bytes(), v.as_bytes(), exp).unwrap();
        }
        Arc::new(ImportedItems::parse(&file, std::path::Path::new("x")).unwrap())
    }

    #[test]
    fn imported_items_are_set_in_file_order_and_their_keys_read() {
        let spec = MemtierSpec {
            ratio: Ratio { sets: 1, gets: 1 },
            key_minimum: 1,
            key_maximum: 3,
            set_pattern: KeyPattern::Sequential,
            get_pattern: KeyPattern::Sequential,
            import: Some(three_items()),
            ..MemtierSpec::default()
        };
        let wl = MemtierWorkload::new(spec.clone()).unwrap();
        let mut src = wl.client(7, 0, 1);
        let mut req = Request::default();
        let mut seen = Vec::new();
        for _ in 0..8 {
            src.next(&mut req).unwrap();
            let key = String::from_utf8(req.key.clone()).unwrap();
            let value = String::from_utf8(req.value.blob().to_vec()).unwrap();
            seen.push((req.kind, key, value, req.ttl_s));
        }
        let insert = |k: &str, v: &str, ttl| (OpKind::Insert, k.to_string(), v.to_string(), ttl);
        let read = |k: &str| (OpKind::Read, k.to_string(), String::new(), 0);
        assert_eq!(
            seen,
            [
                insert("a", "va", 0),
                read("a"),
                insert("bb", "vbb", 60),
                read("bb"),
                insert("c", "", 0),
                read("c"),
                insert("a", "va", 0),
                read("a"),
            ]
        );
        // --generate-keys: generated names, imported values; --no-expiry: no TTL.
        let spec = MemtierSpec {
            generate_keys: true,
            no_expiry: true,
            key_prefix: "g-".into(),
            ..spec
        };
        let got = requests(spec.clone(), 4);
        assert_eq!(got[0].1, [b"g-1".to_vec()]);
        assert_eq!(got[3].1, [b"g-2".to_vec()]);
        let wl = MemtierWorkload::new(spec).unwrap();
        let mut src = wl.client(7, 0, 1);
        src.next(&mut req).unwrap();
        src.next(&mut req).unwrap();
        src.next(&mut req).unwrap();
        assert_eq!((req.value.blob(), req.ttl_s), (&b"vbb"[..], 0));
        // The key range must name imported items.
        let bad = MemtierSpec {
            key_minimum: 0,
            key_maximum: 3,
            import: Some(three_items()),
            ..MemtierSpec::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("within [1, 3]"));
    }

    #[test]
    fn the_verifier_reads_back_what_sets_wrote_and_skips_gets() {
        let spec = MemtierSpec {
            ratio: Ratio { sets: 1, gets: 2 },
            key_minimum: 1,
            key_maximum: 3,
            set_pattern: KeyPattern::Sequential,
            get_pattern: KeyPattern::Sequential,
            import: Some(three_items()),
            requests: Some(7),
            ..MemtierSpec::default()
        };
        let wl = MemtierWorkload::new(spec.clone()).unwrap();
        let mut v = wl.verifier(0);
        let (mut req, mut expected) = (Request::default(), Vec::new());
        let mut reads = Vec::new();
        while v.next(&mut req, &mut expected) {
            assert_eq!(req.kind, OpKind::Read);
            reads.push((req.key.clone(), expected.clone()));
        }
        // 7 requests of the 1:2 cycle hold 3 SETs.
        assert_eq!(
            reads,
            [
                (b"a".to_vec(), b"va".to_vec()),
                (b"bb".to_vec(), b"vbb".to_vec()),
                (b"c".to_vec(), b"".to_vec())
            ]
        );
        // Bounded by time: every item once.
        let wl = MemtierWorkload::new(MemtierSpec {
            requests: None,
            ..spec
        })
        .unwrap();
        let mut v = wl.verifier(0);
        let mut n = 0;
        while v.next(&mut req, &mut expected) {
            n += 1;
        }
        assert_eq!(n, 3);
    }

    #[test]
    fn multi_key_gets_take_the_cycles_gets_up_to_n() {
        let spec = MemtierSpec {
            ratio: Ratio { sets: 1, gets: 10 },
            key_prefix: "k".into(),
            key_maximum: 99,
            set_pattern: KeyPattern::Sequential,
            get_pattern: KeyPattern::Sequential,
            multi_key_get: 4,
            ..MemtierSpec::default()
        };
        let got = requests(spec, 8);
        let names = |r: std::ops::Range<u32>| -> Vec<Vec<u8>> {
            r.map(|i| format!("k{i}").into_bytes()).collect()
        };
        // SET, then GETs of 4, 4 and the cycle's last 2 keys; again.
        let want = vec![
            (OpKind::Insert, names(0..1)),
            (OpKind::Read, names(0..4)),
            (OpKind::Read, names(4..8)),
            (OpKind::Read, names(8..10)),
            (OpKind::Insert, names(1..2)),
            (OpKind::Read, names(10..14)),
            (OpKind::Read, names(14..18)),
            (OpKind::Read, names(18..20)),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn multi_key_gets_draw_the_keys_single_gets_draw() {
        // Random keys: the keys of the multi-key GETs, in order, are those that single
        // GETs draw, and a cycle's last single key is a plain GET.
        let spec = |n| MemtierSpec {
            ratio: Ratio { sets: 0, gets: 5 },
            key_maximum: 1000,
            multi_key_get: n,
            ..MemtierSpec::default()
        };
        let multi = requests(spec(2), 6);
        let sizes: Vec<usize> = multi.iter().map(|(_, k)| k.len()).collect();
        assert_eq!(sizes, [2, 2, 1, 2, 2, 1]);
        let flat: Vec<Vec<u8>> = multi.into_iter().flat_map(|(_, k)| k).collect();
        let single: Vec<Vec<u8>> = requests(spec(0), 10)
            .into_iter()
            .flat_map(|(_, k)| k)
            .collect();
        assert_eq!(flat, single);
        assert_eq!(requests(spec(1), 3), requests(spec(0), 3));
    }

    /// Each request's command id and arguments (as text) over `n` requests of client 0.
    fn command_requests(spec: MemtierSpec, n: usize) -> Vec<(Option<u16>, Vec<String>)> {
        let wl = MemtierWorkload::new(spec).unwrap();
        let mut src = wl.client(7, 0, 1);
        let mut req = Request::default();
        (0..n)
            .map(|_| {
                req.clear();
                src.next(&mut req).unwrap();
                let args = req
                    .command
                    .args
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                let kind_args = if req.command.is_some() {
                    args
                } else {
                    vec![format!("{:?}", req.kind)]
                };
                (req.command.id.map(|c| c.0), kind_args)
            })
            .collect()
    }

    fn command(text: &str, ratio: u32, key_pattern: KeyPattern) -> ArbitraryCommand {
        ArbitraryCommand {
            ratio,
            key_pattern,
            ..ArbitraryCommand::parse(text).unwrap()
        }
    }

    #[test]
    fn commands_cycle_by_ratio_with_memtiers_first_round() {
        let spec = MemtierSpec {
            key_prefix: "k".into(),
            key_maximum: 99,
            commands: vec![
                command("set __key__ __data__", 2, KeyPattern::Sequential),
                command("get __key__", 3, KeyPattern::Sequential),
                command("SET __key__ x", 1, KeyPattern::Sequential),
            ],
            data_size: DataSize::Fixed(3),
            ..MemtierSpec::default()
        };
        let got = command_requests(spec, 15);
        let ids: Vec<u16> = got.iter().map(|(id, _)| id.unwrap()).collect();
        // Each command exactly its ratio from the first request, as memtier 2.3.0 sends
        // them; both SET commands share the SET row.
        assert_eq!(ids, [0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1]);
        let text = |i: usize| got[i].1.join(" ");
        assert_eq!(text(0), "set k0 xxx");
        assert_eq!(text(1), "set k1 xxx");
        // Each command walks its own sequence.
        assert_eq!(text(2), "get k0");
        assert_eq!(text(4), "get k2");
        assert_eq!(text(5), "SET k0 x");
        assert_eq!(text(6), "set k2 xxx");
        assert_eq!(text(8), "get k3");
    }

    #[test]
    fn commands_count_per_ratio_over_a_run() {
        let spec = MemtierSpec {
            commands: vec![
                command("set __key__ __data__", 2, KeyPattern::Random),
                command("get __key__", 3, KeyPattern::Random),
            ],
            ..MemtierSpec::default()
        };
        let got = command_requests(spec, 100);
        let sets = got.iter().filter(|(id, _)| *id == Some(0)).count();
        // 20 rounds of 2 + 3 (memtier 2.3.0, -n 100, one client: 40 SET, 60 GET).
        assert_eq!((sets, 100 - sets), (40, 60));
    }

    #[test]
    fn a_command_key_is_the_routing_key_and_data_follows_the_object_options() {
        let spec = MemtierSpec {
            key_prefix: "p-".into(),
            key_minimum: 5,
            key_maximum: 6,
            commands: vec![command(
                "mset __key__ __data__ __key__ v",
                1,
                KeyPattern::Sequential,
            )],
            data_size: DataSize::List(vec![
                SizeWeight {
                    size_bytes: 1,
                    weight: 1,
                },
                SizeWeight {
                    size_bytes: 2,
                    weight: 1,
                },
            ]),
            ..MemtierSpec::default()
        };
        let wl = MemtierWorkload::new(spec).unwrap();
        let mut src = wl.client(1, 0, 1);
        let mut req = Request::default();
        src.next(&mut req).unwrap();
        let args: Vec<&[u8]> = req.command.args.iter().collect();
        assert_eq!(args, [&b"mset"[..], b"p-5", b"x", b"p-6", b"v"]);
        assert_eq!(req.key, b"p-5");
        req.clear();
        assert!(req.command.id.is_none() && req.command.args.is_empty());
        src.next(&mut req).unwrap();
        assert_eq!(
            req.command.args.get(2),
            b"xx",
            "the size list's round robin goes on"
        );
        assert_eq!(
            req.command.args.get(1),
            b"p-5",
            "the sequence wraps within the range"
        );
    }

    #[test]
    fn waits_interleave_as_memtiers_integer_ratio() {
        let spec = MemtierSpec {
            ratio: Ratio { sets: 1, gets: 2 },
            wait: Some(WaitSpec {
                sets: 1,
                waits: 1,
                min_replicas: 1,
                max_replicas: 1,
                min_timeout_ms: 10,
                max_timeout_ms: 20,
            }),
            ..MemtierSpec::default()
        };
        let got = command_requests(spec, 16);
        let kinds: Vec<&str> = got.iter().map(|(_, a)| a[0].as_str()).collect();
        // A WAIT first; then one whenever sets/waits > 1 (integer division): after the
        // 2nd SET (2/1), the 4th (4/2), the 6th (6/3)…
        assert_eq!(
            kinds,
            [
                "WAIT", "Insert", "Read", "Read", "Insert", "WAIT", "Read", "Read", "Insert",
                "Read", "Read", "Insert", "WAIT", "Read", "Read", "Insert"
            ]
        );
        for (_, a) in got.iter().filter(|(id, _)| *id == Some(0)) {
            assert_eq!(a[1], "1");
            let t: u32 = a[2].parse().unwrap();
            assert!((10..=20).contains(&t), "{t}");
        }
    }

    #[test]
    fn pattern_letters_round_trip() {
        for p in [
            KeyPattern::Random,
            KeyPattern::Sequential,
            KeyPattern::Gaussian,
            KeyPattern::Parallel,
            KeyPattern::Zipfian,
        ] {
            assert_eq!(KeyPattern::from_letter(p.letter()), Some(p));
        }
        assert_eq!(KeyPattern::from_letter('X'), None);
    }
}
