//! [`CoreWorkload`]: YCSB's core workload, validated once and shared by every worker.

pub(crate) mod source;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kvlab_core::{OpKind, Record, Request};
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::generator::{
    next_f64, AcknowledgedCounter, Constant, Exponential, Histogram, Hotspot, ScrambledZipfian,
    Sequential, SkewedLatest, Uniform, Zipfian,
};
use crate::props::suggestion;
use crate::{fnvhash64, worker_seed, Origin, Properties, WorkloadError};
use kvlab_dist::KeyChooser as _;
use kvlab_dist::ValuePool;

/// Every property CoreWorkload reads, with YCSB's default (`insertcount`'s default,
/// `recordcount − insertstart`, is computed).
const CORE_PROPERTIES: &[(&str, &str)] = &[
    ("core_workload_insertion_retry_interval", "3"),
    ("core_workload_insertion_retry_limit", "0"),
    ("dataintegrity", "false"),
    ("deleteproportion", "0"),
    ("exponential.frac", "0.8571428571"),
    ("exponential.percentile", "95"),
    ("fieldcount", "10"),
    ("fieldlength", "100"),
    ("fieldlengthdistribution", "constant"),
    ("fieldlengthhistogram", "hist.txt"),
    ("fieldnameprefix", "field"),
    ("hotspotdatafraction", "0.2"),
    ("hotspotopnfraction", "0.8"),
    ("insertcount", ""),
    ("insertorder", "hashed"),
    ("insertproportion", "0"),
    ("insertstart", "0"),
    ("maxscanlength", "1000"),
    ("minfieldlength", "1"),
    ("minscanlength", "1"),
    ("operationcount", "0"),
    ("readallfields", "true"),
    ("readallfieldsbyname", "false"),
    ("readmodifywriteproportion", "0"),
    ("readproportion", "0.95"),
    ("recordcount", "0"),
    ("requestdistribution", "uniform"),
    ("scanlengthdistribution", "uniform"),
    ("scanproportion", "0"),
    ("table", "usertable"),
    ("updateproportion", "0.05"),
    ("workload", "site.ycsb.workloads.CoreWorkload"),
    ("writeallfields", "false"),
    ("zeropadding", "1"),
    ("zipfianconstant", "0.99"),
];

const WORKLOAD_CLASSES: &[&str] = &[
    "site.ycsb.workloads.CoreWorkload",
    "com.yahoo.ycsb.workloads.CoreWorkload",
];
const REQUEST_DISTRIBUTIONS: &[&str] = &[
    "uniform",
    "zipfian",
    "latest",
    "hotspot",
    "exponential",
    "sequential",
];
const FIELD_LENGTH_DISTRIBUTIONS: &[&str] = &["constant", "uniform", "zipfian", "histogram"];
const SCAN_LENGTH_DISTRIBUTIONS: &[&str] = &["uniform", "zipfian"];
const INSERT_ORDERS: &[&str] = &["hashed", "ordered"];

/// Operation kinds in YCSB's `createOperationGenerator` order, then kvlab's delete —
/// which is `OpKind::ALL`'s order; `PROPORTION_KEYS` follows it.
const OP_KINDS: [OpKind; 6] = OpKind::ALL;
const PROPORTION_KEYS: [&str; 6] = [
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "deleteproportion",
];

/// Size of the random value pool, before room for one maximal field. (Fuzz builds, which
/// build a workload for every input and draw no values, keep a small one.)
const VALUE_POOL_BYTES: usize = if cfg!(fuzzing) { 4 << 10 } else { 256 << 10 };
/// Seed of the value pool: fixed, so values never depend on the clock.
const VALUE_POOL_SEED: u64 = 0x6b76_6c61_625f_7630;
/// Mixed into the run seed for load workers, so a worker's load and run streams differ.
const LOAD_SEED_SALT: u64 = 0x4c4f_4144_0000_0001;
/// Mixed into a worker's seed for its retry jitter, so that retries (which depend on the
/// store's failures) never change the operation stream.
const RETRY_SEED_SALT: u64 = 0x5245_5452_5900_0001;

/// YCSB's insertion retries: how often, and after how long, a failed insert is sent
/// again (`core_workload_insertion_retry_limit`, `core_workload_insertion_retry_interval`).
#[derive(Clone, Debug)]
struct InsertRetry {
    limit: u64,
    interval_s: f64,
    /// Draws the jitter; its own generator, apart from the operation stream's.
    rng: Xoshiro256PlusPlus,
}

impl InsertRetry {
    /// The wait before retry number `retries + 1`, or `None` once `limit` retries have
    /// been made: `interval × (0.8 + 0.4 u)`, u uniform in [0, 1) — YCSB's
    /// `1000 * interval * (0.8 + 0.4 * Math.random())` milliseconds, without truncating
    /// to whole milliseconds.
    fn delay(&mut self, retries: u64) -> Option<std::time::Duration> {
        (retries < self.limit).then(|| {
            let jitter = 0.8 + 0.4 * next_f64(&mut self.rng);
            std::time::Duration::from_secs_f64(self.interval_s * jitter)
        })
    }
}

/// A length chooser: field lengths and scan lengths.
#[derive(Clone, Debug)]
enum Length {
    Constant(Constant),
    Uniform(Uniform),
    Zipfian(Zipfian),
    Histogram(Arc<Histogram>),
}

impl Length {
    #[inline]
    fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        match self {
            Length::Constant(c) => c.next(),
            Length::Uniform(u) => u.next(rng),
            Length::Zipfian(z) => z.next(rng),
            Length::Histogram(h) => h.next(rng),
        }
    }
}

/// A worker's key chooser for the transaction phase: one of YCSB's, each drawn through
/// [`kvlab_dist::KeyChooser`].
#[derive(Clone, Debug)]
enum KeyChoice {
    Uniform(Uniform),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Exponential(Exponential),
    Sequential(Arc<Sequential>),
}

/// State shared by the workload, its load workers and its run workers.
#[derive(Debug)]
struct Shared {
    ordered: bool,
    zero_padding: usize,
    field_names: Vec<Vec<u8>>,
    field_length: Length,
    data_integrity: bool,
    pool: ValuePool,
    insert_sequence: Arc<AcknowledgedCounter>,
    /// The names of key numbers `0..len`, built once (see [`KEY_TABLE_MAX`]).
    key_names: KeyTable,
    /// The key numbers and names of the scrambled Zipfian's hottest ranks, built once
    /// (see [`RANK_TABLE_LEN`]); empty for other choosers.
    rank_names: RankTable,
}

/// The most popular ranks of a scrambled Zipfian whose key number and name
/// [`Shared`] keeps (2¹⁴ slots of 32 bytes, 512 KiB): with YCSB's θ = 0.99 over its 10¹⁰
/// ranks they take ~41 % of the draws, which then skip two FNV hashes, a reduction and
/// the name's formatting. (The key numbers' own table, [`KEY_TABLE_MAX`], cannot serve a
/// large key space: the scrambled ranks land all over it.) Fuzz builds keep a few ranks:
/// they build a workload for every input and draw almost nothing from it.
const RANK_TABLE_LEN: u64 = if cfg!(fuzzing) { 1 << 4 } else { 1 << 14 };

/// [`RankSlot`]s by rank.
#[derive(Default)]
struct RankTable(Vec<RankSlot>);

impl std::fmt::Debug for RankTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} ranked key names>", self.0.len())
    }
}

/// A rank's key number and formatted name (at most 23 bytes: `user` and 19 digits).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct RankSlot {
    name: [u8; 23],
    len: u8,
    keynum: u64,
}

/// [`KeySlot`]s, printed as their number.
#[derive(Default)]
struct KeyTable(Vec<KeySlot>);

impl std::fmt::Debug for KeyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} formatted key names>", self.0.len())
    }
}

/// The most key names [`Shared`] keeps formatted: 2¹⁴ slots of 32 bytes (512 KiB); a few
/// in fuzz builds (see [`RANK_TABLE_LEN`]).
const KEY_TABLE_MAX: u64 = if cfg!(fuzzing) { 1 << 4 } else { 1 << 14 };

/// The largest `fieldcount`.
const MAX_FIELD_COUNT: u64 = 1 << 20;

/// A formatted key name of at most 24 bytes: the bytes, then its length in the last
/// byte. Aligned so that a name never straddles a cache line.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct KeySlot([u8; 32]);

impl Shared {
    /// Formats the names of key numbers `0..count` (at most [`KEY_TABLE_MAX`]) once,
    /// when every name fits a [`KeySlot`] (`zeropadding` ≤ 20).
    fn build_key_table(&mut self, count: u64) {
        if self.zero_padding > 20 {
            return;
        }
        let mut name = Vec::with_capacity(24);
        self.key_names.0 = (0..count.min(KEY_TABLE_MAX))
            .map(|keynum| {
                self.format_key_name(keynum, &mut name);
                let mut slot = [0u8; 32];
                slot[..name.len()].copy_from_slice(&name);
                slot[31] = name.len() as u8;
                KeySlot(slot)
            })
            .collect();
    }

    /// Keeps the key numbers and names of `chooser`'s [`RANK_TABLE_LEN`] hottest ranks,
    /// when the key space is beyond the key numbers' table and every such name fits a
    /// [`RankSlot`].
    fn build_rank_table(&mut self, chooser: &ScrambledZipfian, record_count: u64) {
        if record_count <= KEY_TABLE_MAX || self.zero_padding > 19 {
            return;
        }
        let mut name = Vec::with_capacity(24);
        let mut slots = Vec::with_capacity(RANK_TABLE_LEN as usize);
        for rank in 0..RANK_TABLE_LEN {
            let keynum = chooser.key_of_rank(rank);
            self.format_key_name(keynum, &mut name);
            if name.len() > 23 {
                return;
            }
            let mut slot = RankSlot {
                name: [0; 23],
                len: name.len() as u8,
                keynum,
            };
            slot.name[..name.len()].copy_from_slice(&name);
            slots.push(slot);
        }
        self.rank_names.0 = slots;
    }

    /// YCSB `nextKeynum` and `buildKeyName` (into `out`) for a scrambled Zipfian with a
    /// rank table:
    /// a draw among the hottest ranks takes its key number and name from the table, the
    /// others are computed; retried while above the last acknowledged insert, as
    /// [`next_keynum`] does. The same names as `next_keynum` then `key_name`.
    #[inline]
    fn ranked_key(
        &self,
        chooser: &ScrambledZipfian,
        rng: &mut Xoshiro256PlusPlus,
        out: &mut Vec<u8>,
    ) {
        loop {
            let rank = chooser.next_rank(rng);
            let below = self.insert_sequence.acknowledged_below();
            if let Some(slot) = usize::try_from(rank)
                .ok()
                .and_then(|r| self.rank_names.0.get(r))
            {
                if slot.keynum < below {
                    out.clear();
                    out.extend_from_slice(&slot.name);
                    out.truncate(usize::from(slot.len));
                    return;
                }
                continue;
            }
            let keynum = chooser.key_of_rank(rank);
            if keynum < below {
                return self.key_name(keynum, out);
            }
        }
    }

    /// YCSB `buildKeyName`: from the table of formatted names when it holds `keynum`
    /// (one copy of constant length: key spaces of up to 2¹⁴ records, such as the
    /// 1000 of YCSB's workload files, never format a name per operation).
    #[inline]
    fn key_name(&self, keynum: u64, out: &mut Vec<u8>) {
        let slot = usize::try_from(keynum)
            .ok()
            .and_then(|i| self.key_names.0.get(i));
        if let Some(KeySlot(slot)) = slot {
            out.clear();
            let name: &[u8; 24] = slot[..24].try_into().expect("a slot holds 24 name bytes");
            out.extend_from_slice(name);
            out.truncate(usize::from(slot[31]));
            return;
        }
        self.format_key_name(keynum, out);
    }

    /// YCSB `buildKeyName`, formatted: `user`, then the decimal of the key number (its
    /// FNV hash unless `insertorder=ordered`) left-padded with zeros to `zeropadding`
    /// digits.
    ///
    /// Names of 16 to 20 digits — every hashed key number but about one in 10⁴ — are
    /// written straight into `out`, without loops or variable-length copies: 24 bytes are added at once, the number's
    /// 20-digit zero-padded form ([`decimal20`]) is stored so that it ends where the
    /// name does (its surplus leading zeros land where `user` goes), then `user` is
    /// stored and the name cut to length. Writing in place matters: a name assembled in
    /// a stack buffer and then copied costs a store-forwarding stall (a wide load of
    /// bytes just written by narrower stores). Shorter and longer names take
    /// [`format_key_name_padded`].
    #[inline]
    fn format_key_name(&self, keynum: u64, out: &mut Vec<u8>) {
        const E15: u64 = 1_000_000_000_000_000;
        let n = if self.ordered {
            keynum
        } else {
            fnvhash64(keynum)
        };
        let width = if n >= E15 {
            // 16 digits, plus one per further power of ten reached (no branches).
            let digits = 16
                + usize::from(n >= E15 * 10)
                + usize::from(n >= E15 * 100)
                + usize::from(n >= E15 * 1000)
                + usize::from(n >= E15 * 10_000);
            digits.max(self.zero_padding)
        } else {
            self.zero_padding
        };
        if !(16..=20).contains(&width) {
            return format_key_name_padded(n, self.zero_padding, out);
        }
        out.clear();
        out.extend_from_slice(&[0u8; 24]);
        let name: &mut [u8; 24] = (&mut out[..24]).try_into().expect("24 name bytes");
        decimal20(n, name, width - 16);
        name[..4].copy_from_slice(b"user");
        out.truncate(width + 4);
    }
    /// Appends field `index` with a value for `key`: YCSB's deterministic value with
    /// `dataintegrity`, otherwise a slice of the random pool.
    #[inline]
    fn push_field<R: RngCore>(&self, rng: &mut R, key: &[u8], index: usize, record: &mut Record) {
        let name = &self.field_names[index];
        let len = self.field_length.next(rng) as usize;
        if self.data_integrity {
            record.push_with(name, len, |out| {
                deterministic_value(key, name, len, |i, b| out[i] = b);
            });
        } else {
            record.push(name, self.pool.slice(rng, len));
        }
    }
}

/// YCSB `buildDeterministicValue(key, fieldkey)`: `key:field`, then `:` and the Java
/// `String.hashCode()` of everything so far, repeated until `size` bytes, truncated to
/// `size`. Calls `emit(i, byte)` for each of the `size` bytes. The hash is computed over
/// bytes, which equals Java's UTF-16 hash for ASCII keys and field names.
fn deterministic_value(key: &[u8], field: &[u8], size: usize, mut emit: impl FnMut(usize, u8)) {
    let mut hash: i32 = 0;
    let mut at = 0usize;
    let mut push = |b: u8, hash: &mut i32| {
        if at < size {
            emit(at, b);
        }
        *hash = hash.wrapping_mul(31).wrapping_add(i32::from(b));
        at += 1;
    };
    for &b in key.iter().chain(b":").chain(field) {
        push(b, &mut hash);
    }
    let mut digits = [0u8; 12];
    let mut written = key.len() + 1 + field.len();
    while written < size {
        push(b':', &mut hash);
        let snapshot = hash;
        let mut n = i64::from(snapshot).unsigned_abs();
        let mut d = digits.len();
        loop {
            d -= 1;
            digits[d] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if snapshot < 0 {
            d -= 1;
            digits[d] = b'-';
        }
        for &b in &digits[d..] {
            push(b, &mut hash);
        }
        written += 1 + digits.len() - d;
    }
}

/// YCSB's core workload: key space, record shape, operation mix and key choice, read
/// from YCSB properties and validated once.
///
/// Properties (YCSB defaults): `recordcount` (0, which YCSB — and kvlab — turn into
/// 2³¹−1 for key choice), `operationcount` (0), `fieldcount` (10, at most 2²⁰), `fieldlength` (100),
/// `minfieldlength` (1), `fieldlengthdistribution` (constant | uniform | zipfian |
/// histogram, with `fieldlengthhistogram`, default `hist.txt`, resolved relative to the
/// property file that names it), `fieldnameprefix` (field), `readproportion` (0.95),
/// `updateproportion` (0.05), `insertproportion`, `scanproportion`,
/// `readmodifywriteproportion` (0), `requestdistribution` (uniform | zipfian | latest |
/// hotspot | exponential | sequential), `hotspotdatafraction` (0.2),
/// `hotspotopnfraction` (0.8), `exponential.percentile` (95), `exponential.frac`
/// (0.8571428571), `minscanlength` (1), `maxscanlength` (1000), `scanlengthdistribution`
/// (uniform | zipfian), `insertstart` (0), `insertcount` (recordcount − insertstart),
/// `insertorder` (hashed | ordered), `zeropadding` (1), `readallfields` (true),
/// `readallfieldsbyname` (false; true: a read of all fields names every field, as with
/// `dataintegrity`),
/// `writeallfields` (false), `dataintegrity` (false; requires constant field lengths),
/// `table` (usertable), `core_workload_insertion_retry_limit` (0),
/// `core_workload_insertion_retry_interval` (3 s), `workload` (must name CoreWorkload).
///
/// kvlab extensions: `zipfianconstant` (0.99): θ of the `zipfian` and `latest` key
/// choosers (YCSB hard-codes 0.99; scan and field lengths keep 0.99 as in YCSB);
/// `deleteproportion` (0): a share of [`OpKind::Delete`] operations on keys chosen like
/// reads.
#[derive(Debug)]
pub struct CoreWorkload {
    shared: Arc<Shared>,
    record_count: u64,
    operation_count: u64,
    insert_start: u64,
    insert_count: u64,
    table: String,
    read_all_fields: bool,
    /// A read of every field names them all (`readallfieldsbyname`, or `dataintegrity`),
    /// as YCSB's `doTransactionRead` does, instead of asking for "all".
    read_all_fields_by_name: bool,
    write_all_fields: bool,
    /// Cumulative operation thresholds in `OP_KINDS` order (0-weight kinds are never
    /// reached because their threshold equals the previous one).
    op_thresholds: [f64; 6],
    key_chooser: KeyChoice,
    field_chooser: Uniform,
    scan_length: Length,
    max_field_length: u64,
    insertion_retry_limit: u64,
    insertion_retry_interval_s: f64,
    effective: Vec<(String, String)>,
}

/// Reads typed properties, with errors that name the key and its origin.
struct Reader<'a> {
    props: &'a Properties,
}

impl Reader<'_> {
    fn raw<'d>(&'d self, key: &str, default: &'d str) -> (&'d str, Origin) {
        match self.props.get(key) {
            Some(v) => (
                v,
                self.props.origin(key).cloned().unwrap_or(Origin::Default),
            ),
            None => (default, Origin::Default),
        }
    }

    fn invalid(&self, key: &str, value: &str, origin: Origin, expected: &str) -> WorkloadError {
        WorkloadError::InvalidValue {
            key: key.to_string(),
            value: value.to_string(),
            origin,
            expected: expected.to_string(),
        }
    }

    fn u64(&self, key: &str, default: u64) -> Result<u64, WorkloadError> {
        match self.props.get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| {
                let (v, origin) = self.raw(key, "");
                self.invalid(key, v, origin, "a non-negative integer")
            }),
        }
    }

    fn f64(&self, key: &str, default: f64) -> Result<f64, WorkloadError> {
        match self.props.get(key) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => {
                    let (v, origin) = self.raw(key, "");
                    Err(self.invalid(key, v, origin, "a non-negative number"))
                }
            },
        }
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool, WorkloadError> {
        match self.props.get(key) {
            None => Ok(default),
            Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
            Some(_) => {
                let (v, origin) = self.raw(key, "");
                Err(self.invalid(key, v, origin, "one of true, false"))
            }
        }
    }

    fn choice(
        &self,
        key: &str,
        default: &str,
        choices: &[&'static str],
    ) -> Result<&'static str, WorkloadError> {
        let (v, origin) = self.raw(key, default);
        choices
            .iter()
            .copied()
            .find(|c| *c == v.trim())
            .ok_or_else(|| self.invalid(key, v, origin, &format!("one of {}", choices.join(", "))))
    }

    fn origin(&self, key: &str) -> Origin {
        self.props.origin(key).cloned().unwrap_or(Origin::Default)
    }
}

/// The histogram file named by `fieldlengthhistogram`, relative to the property file
/// that set it (or to the working directory for `-p` and the default).
fn histogram_path(value: &str, origin: &Origin) -> PathBuf {
    let path = Path::new(value);
    match origin {
        Origin::File { path: file, .. } if path.is_relative() => {
            file.parent().unwrap_or(Path::new("")).join(path)
        }
        _ => path.to_path_buf(),
    }
}

impl CoreWorkload {
    /// Validates every property. `other_known`: names consumed by other layers (e.g.
    /// `threadcount`, `target`, `db`, `exporter`, `measurementtype`, `status.interval`) —
    /// accepted and ignored here. `passthrough_prefixes`: e.g. `["rocksdb."]` — any key
    /// with such a prefix is accepted (the store validates it).
    ///
    /// The first unknown property (in key order) is an error with the closest known
    /// name as a suggestion; bad numbers and enumeration values name the key, its
    /// origin and the accepted values.
    pub fn from_properties(
        props: &Properties,
        other_known: &[&str],
        passthrough_prefixes: &[&str],
    ) -> Result<CoreWorkload, WorkloadError> {
        for (key, _) in props.iter() {
            let known = CORE_PROPERTIES.iter().any(|(k, _)| *k == key)
                || other_known.contains(&key)
                || passthrough_prefixes.iter().any(|p| key.starts_with(p));
            if !known {
                let names = CORE_PROPERTIES
                    .iter()
                    .map(|(k, _)| *k)
                    .chain(other_known.iter().copied());
                return Err(WorkloadError::UnknownProperty {
                    key: key.to_string(),
                    origin: props.origin(key).cloned().unwrap_or(Origin::Default),
                    suggestion: suggestion(key, names),
                });
            }
        }
        let r = Reader { props };

        r.choice("workload", WORKLOAD_CLASSES[0], WORKLOAD_CLASSES)?;
        let table = r.raw("table", "usertable").0.to_string();
        let field_count = r.u64("fieldcount", 10)?;
        // Every field's name is built up front: a bound keeps a typo from allocating
        // gigabytes of names.
        if field_count == 0 || field_count > MAX_FIELD_COUNT {
            let (v, o) = r.raw("fieldcount", "");
            return Err(r.invalid(
                "fieldcount",
                v,
                o,
                &format!("an integer from 1 to {MAX_FIELD_COUNT}"),
            ));
        }
        let field_name_prefix = r.raw("fieldnameprefix", "field").0.to_string();
        let field_length = r.u64("fieldlength", 100)?;
        let min_field_length = r.u64("minfieldlength", 1)?;
        let field_length_distribution = r.choice(
            "fieldlengthdistribution",
            "constant",
            FIELD_LENGTH_DISTRIBUTIONS,
        )?;
        let (histogram_file, histogram_origin) = r.raw("fieldlengthhistogram", "hist.txt");
        let histogram_file = histogram_file.to_string();
        if field_length_distribution != "constant" && min_field_length > field_length {
            return Err(WorkloadError::Inconsistent(format!(
                "minfieldlength={min_field_length} ({}) is larger than fieldlength={field_length} ({})",
                r.origin("minfieldlength"),
                r.origin("fieldlength"),
            )));
        }
        let field_length_chooser = match field_length_distribution {
            "constant" => Length::Constant(Constant::new(field_length)),
            "uniform" => Length::Uniform(Uniform::new(min_field_length, field_length)),
            "zipfian" => Length::Zipfian(Zipfian::new(
                min_field_length,
                field_length,
                Zipfian::DEFAULT_THETA,
            )),
            _ => {
                let path = histogram_path(&histogram_file, &histogram_origin);
                let text = std::fs::read_to_string(&path).map_err(|source| WorkloadError::Io {
                    path: path.clone(),
                    source,
                })?;
                let h =
                    Histogram::parse(&text).map_err(|(line, message)| WorkloadError::Syntax {
                        path,
                        line,
                        message,
                    })?;
                Length::Histogram(Arc::new(h))
            }
        };
        let max_field_length = match &field_length_chooser {
            Length::Constant(_) | Length::Uniform(_) | Length::Zipfian(_) => field_length,
            Length::Histogram(h) => h.max_value(),
        };
        if max_field_length > u64::from(u32::MAX) {
            let (v, o) = r.raw("fieldlength", "");
            return Err(r.invalid("fieldlength", v, o, "at most 4294967295 bytes"));
        }

        let mut record_count = r.u64("recordcount", 0)?;
        if record_count == 0 {
            // YCSB: `if (recordcount == 0) recordcount = Integer.MAX_VALUE;`
            record_count = i32::MAX as u64;
        }
        let operation_count = r.u64("operationcount", 0)?;
        let insert_start = r.u64("insertstart", 0)?;
        let insert_count = r.u64("insertcount", record_count.saturating_sub(insert_start))?;
        if insert_start
            .checked_add(insert_count)
            .is_none_or(|end| end > record_count)
        {
            return Err(WorkloadError::Inconsistent(format!(
                "insertstart={insert_start} ({}) + insertcount={insert_count} ({}) exceeds \
                 recordcount={record_count} ({})",
                r.origin("insertstart"),
                r.origin("insertcount"),
                r.origin("recordcount"),
            )));
        }
        if insert_count == 0 {
            let (v, o) = r.raw("insertcount", "0");
            return Err(r.invalid("insertcount", v, o, "at least 1 record"));
        }
        let zero_padding = r.u64("zeropadding", 1)?;
        if zero_padding > 1024 {
            let (v, o) = r.raw("zeropadding", "");
            return Err(r.invalid("zeropadding", v, o, "at most 1024"));
        }
        let read_all_fields = r.bool("readallfields", true)?;
        let read_all_fields_by_name = r.bool("readallfieldsbyname", false)?;
        let write_all_fields = r.bool("writeallfields", false)?;
        let data_integrity = r.bool("dataintegrity", false)?;
        if data_integrity && field_length_distribution != "constant" {
            return Err(WorkloadError::Inconsistent(format!(
                "dataintegrity=true ({}) requires fieldlengthdistribution=constant, not `{}` ({})",
                r.origin("dataintegrity"),
                field_length_distribution,
                r.origin("fieldlengthdistribution"),
            )));
        }
        let ordered = r.choice("insertorder", "hashed", INSERT_ORDERS)? == "ordered";

        let mut proportions = [0.0f64; 6];
        for (p, (key, default)) in proportions
            .iter_mut()
            .zip(PROPORTION_KEYS.iter().zip([0.95, 0.05, 0.0, 0.0, 0.0, 0.0]))
        {
            *p = r.f64(key, default)?;
        }
        let total: f64 = proportions.iter().sum();
        if total <= 0.0 {
            let mut listed = String::new();
            for key in PROPORTION_KEYS {
                let (v, o) = r.raw(key, "0");
                let _ = write!(listed, " {key}={v} ({o})");
            }
            return Err(WorkloadError::Inconsistent(format!(
                "operation proportions sum to 0:{listed}"
            )));
        }
        let mut op_thresholds = [0.0; 6];
        let mut cumulative = 0.0;
        for (t, p) in op_thresholds.iter_mut().zip(proportions) {
            cumulative += p / total;
            *t = cumulative;
        }

        let theta = r.f64("zipfianconstant", Zipfian::DEFAULT_THETA)?;
        if !(theta > 0.0 && theta < 1.0) {
            let (v, o) = r.raw("zipfianconstant", "");
            return Err(r.invalid("zipfianconstant", v, o, "a number strictly between 0 and 1"));
        }
        let hot_data = r.f64("hotspotdatafraction", 0.2)?;
        let hot_opn = r.f64("hotspotopnfraction", 0.8)?;
        for (key, value) in [
            ("hotspotdatafraction", hot_data),
            ("hotspotopnfraction", hot_opn),
        ] {
            if value > 1.0 {
                let (v, o) = r.raw(key, "");
                return Err(r.invalid(key, v, o, "a fraction from 0 to 1"));
            }
        }
        let exp_percentile = r.f64("exponential.percentile", 95.0)?;
        if !(exp_percentile > 0.0 && exp_percentile < 100.0) {
            let (v, o) = r.raw("exponential.percentile", "");
            return Err(r.invalid(
                "exponential.percentile",
                v,
                o,
                "a percentile strictly between 0 and 100",
            ));
        }
        let exp_frac = r.f64("exponential.frac", 0.8571428571)?;
        if exp_frac <= 0.0 {
            let (v, o) = r.raw("exponential.frac", "");
            return Err(r.invalid("exponential.frac", v, o, "a positive fraction"));
        }

        let insert_sequence = Arc::new(AcknowledgedCounter::new(record_count));
        let request_distribution =
            r.choice("requestdistribution", "uniform", REQUEST_DISTRIBUTIONS)?;
        let last_key = insert_start + insert_count - 1;
        let key_chooser = match request_distribution {
            "uniform" => KeyChoice::Uniform(Uniform::new(insert_start, last_key)),
            "exponential" => KeyChoice::Exponential(Exponential::new(
                exp_percentile,
                record_count as f64 * exp_frac,
            )),
            "sequential" => {
                KeyChoice::Sequential(Arc::new(Sequential::new(insert_start, last_key)))
            }
            "zipfian" => {
                let insert_proportion = proportions[2];
                // YCSB: `(int) (opcount * insertproportion * 2.0)`, 2 being a fudge factor
                // so that keys inserted during the run fall inside the Zipfian's range.
                let expected_new_keys = (operation_count as f64 * insert_proportion * 2.0) as u64;
                // Saturating, and below `u64::MAX` so that the range's item count fits.
                let max = (insert_start + insert_count)
                    .saturating_add(expected_new_keys)
                    .min(u64::MAX - 1);
                KeyChoice::Zipfian(ScrambledZipfian::new(insert_start, max, theta))
            }
            "latest" => KeyChoice::Latest(SkewedLatest::new(insert_sequence.clone(), theta)),
            _ => KeyChoice::Hotspot(Hotspot::new(insert_start, last_key, hot_data, hot_opn)),
        };

        let min_scan = r.u64("minscanlength", 1)?;
        let max_scan = r.u64("maxscanlength", 1000)?;
        if min_scan > max_scan || max_scan > u64::from(u32::MAX) {
            return Err(WorkloadError::Inconsistent(format!(
                "minscanlength={min_scan} ({}) must be at most maxscanlength={max_scan} ({}), \
                 itself at most 4294967295",
                r.origin("minscanlength"),
                r.origin("maxscanlength"),
            )));
        }
        let scan_distribution = r.choice(
            "scanlengthdistribution",
            "uniform",
            SCAN_LENGTH_DISTRIBUTIONS,
        )?;
        let scan_length = match scan_distribution {
            "uniform" => Length::Uniform(Uniform::new(min_scan, max_scan)),
            _ => Length::Zipfian(Zipfian::new(min_scan, max_scan, Zipfian::DEFAULT_THETA)),
        };
        let insertion_retry_limit = r.u64("core_workload_insertion_retry_limit", 0)?;
        let insertion_retry_interval_s = r.f64("core_workload_insertion_retry_interval", 3.0)?;
        if insertion_retry_interval_s > 86_400.0 {
            let (v, o) = r.raw("core_workload_insertion_retry_interval", "");
            return Err(r.invalid(
                "core_workload_insertion_retry_interval",
                v,
                o,
                "seconds from 0 to 86400",
            ));
        }

        let field_names = (0..field_count)
            .map(|i| format!("{field_name_prefix}{i}").into_bytes())
            .collect();
        let pool = if data_integrity {
            ValuePool::from(Vec::new())
        } else {
            ValuePool::ycsb(
                VALUE_POOL_BYTES + max_field_length as usize,
                VALUE_POOL_SEED,
            )
        };

        let workload_class = r.raw("workload", WORKLOAD_CLASSES[0]).0.trim().to_string();
        let b = |v: bool| v.to_string();
        let mut effective: Vec<(String, String)> = vec![
            (
                "core_workload_insertion_retry_interval".into(),
                insertion_retry_interval_s.to_string(),
            ),
            (
                "core_workload_insertion_retry_limit".into(),
                insertion_retry_limit.to_string(),
            ),
            ("dataintegrity".into(), b(data_integrity)),
            ("exponential.frac".into(), exp_frac.to_string()),
            ("exponential.percentile".into(), exp_percentile.to_string()),
            ("fieldcount".into(), field_count.to_string()),
            ("fieldlength".into(), field_length.to_string()),
            (
                "fieldlengthdistribution".into(),
                field_length_distribution.into(),
            ),
            ("fieldlengthhistogram".into(), histogram_file),
            ("fieldnameprefix".into(), field_name_prefix),
            ("hotspotdatafraction".into(), hot_data.to_string()),
            ("hotspotopnfraction".into(), hot_opn.to_string()),
            ("insertcount".into(), insert_count.to_string()),
            (
                "insertorder".into(),
                (if ordered { "ordered" } else { "hashed" }).into(),
            ),
            ("insertstart".into(), insert_start.to_string()),
            ("maxscanlength".into(), max_scan.to_string()),
            ("minfieldlength".into(), min_field_length.to_string()),
            ("minscanlength".into(), min_scan.to_string()),
            ("operationcount".into(), operation_count.to_string()),
            ("readallfields".into(), b(read_all_fields)),
            ("readallfieldsbyname".into(), b(read_all_fields_by_name)),
            ("recordcount".into(), record_count.to_string()),
            ("requestdistribution".into(), request_distribution.into()),
            ("scanlengthdistribution".into(), scan_distribution.into()),
            ("table".into(), table.clone()),
            ("workload".into(), workload_class),
            ("writeallfields".into(), b(write_all_fields)),
            ("zeropadding".into(), zero_padding.to_string()),
            ("zipfianconstant".into(), theta.to_string()),
        ];
        for (key, p) in PROPORTION_KEYS.iter().zip(proportions) {
            effective.push((key.to_string(), p.to_string()));
        }
        effective.sort();
        debug_assert_eq!(effective.len(), CORE_PROPERTIES.len());

        let mut shared = Shared {
            ordered,
            zero_padding: zero_padding as usize,
            field_names,
            field_length: field_length_chooser,
            data_integrity,
            pool,
            insert_sequence,
            key_names: KeyTable::default(),
            rank_names: RankTable::default(),
        };
        shared.build_key_table(record_count);
        if let KeyChoice::Zipfian(chooser) = &key_chooser {
            shared.build_rank_table(chooser, record_count);
        }
        Ok(CoreWorkload {
            shared: Arc::new(shared),
            record_count,
            operation_count,
            insert_start,
            insert_count,
            table,
            read_all_fields,
            read_all_fields_by_name: read_all_fields_by_name || data_integrity,
            write_all_fields,
            op_thresholds,
            key_chooser,
            field_chooser: Uniform::new(0, field_count - 1),
            scan_length,
            max_field_length,
            insertion_retry_limit,
            insertion_retry_interval_s,
            effective,
        })
    }

    /// `recordcount` (2³¹−1 when given as 0, as YCSB).
    pub fn record_count(&self) -> u64 {
        self.record_count
    }

    /// `operationcount`.
    pub fn operation_count(&self) -> u64 {
        self.operation_count
    }

    /// `insertstart`: the first key number of the load phase.
    pub fn insert_start(&self) -> u64 {
        self.insert_start
    }

    /// `insertcount`: the number of records the load phase inserts (default
    /// `recordcount − insertstart`).
    pub fn insert_count(&self) -> u64 {
        self.insert_count
    }

    /// `table`.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The names of a record's fields (`fieldnameprefix` + 0 … `fieldcount` − 1).
    pub fn field_names(&self) -> &[Vec<u8>] {
        &self.shared.field_names
    }

    /// `dataintegrity`: values are deterministic and reads can be checked with
    /// [`CoreWorkload::check_read`].
    pub fn data_integrity(&self) -> bool {
        self.shared.data_integrity
    }

    /// True when the mix contains scans (`scanproportion > 0`): the store must support
    /// ordered scans.
    pub fn needs_scan(&self) -> bool {
        self.op_thresholds[3] > self.op_thresholds[2]
    }

    /// The largest field value length this workload produces, in bytes.
    pub fn max_field_length_bytes(&self) -> u64 {
        self.max_field_length
    }

    /// `core_workload_insertion_retry_limit`: how often a failed insert (load phase or
    /// transaction phase) is sent again before its failure counts.
    pub fn insertion_retry_limit(&self) -> u64 {
        self.insertion_retry_limit
    }

    /// `core_workload_insertion_retry_interval`: mean seconds between insert retries
    /// (a uniform 0.8–1.2 × this, as YCSB sleeps; fractions allowed, unlike YCSB).
    pub fn insertion_retry_interval_s(&self) -> f64 {
        self.insertion_retry_interval_s
    }

    /// The retry policy of worker `worker`, its jitter seeded from `seed`.
    fn insert_retry(&self, seed: u64, worker: usize) -> InsertRetry {
        InsertRetry {
            limit: self.insertion_retry_limit,
            interval_s: self.insertion_retry_interval_s,
            rng: Xoshiro256PlusPlus::seed_from_u64(worker_seed(seed ^ RETRY_SEED_SALT, worker)),
        }
    }

    /// Every CoreWorkload property with its effective value, defaults included, sorted
    /// by name (for the result document).
    pub fn effective(&self) -> Vec<(String, String)> {
        self.effective.clone()
    }

    /// Writes YCSB's `buildKeyName(keynum)` into `out` (cleared first): `user` +
    /// the decimal of `fnvhash64(keynum)` (or of `keynum` with `insertorder=ordered`),
    /// left-padded with zeros to `zeropadding` digits.
    pub fn key_name(&self, keynum: u64, out: &mut Vec<u8>) {
        self.shared.key_name(keynum, out);
    }

    /// Worker `worker` of `workers` for the load phase, seeded from the run seed `seed`.
    ///
    /// The `insertcount` keys from `insertstart` are split into contiguous slices in
    /// worker order; worker `w` inserts `insertcount / workers` keys, plus one if
    /// `w < insertcount % workers` — YCSB `Client`'s per-thread operation counts.
    pub fn load_worker(&self, seed: u64, worker: usize, workers: usize) -> LoadWorker {
        let workers = workers.max(1) as u64;
        let w = worker as u64;
        let base = self.insert_count / workers;
        let extra = self.insert_count % workers;
        let start = self.insert_start + w * base + w.min(extra);
        let count = base + u64::from(w < extra);
        LoadWorker {
            shared: self.shared.clone(),
            rng: Xoshiro256PlusPlus::seed_from_u64(worker_seed(seed ^ LOAD_SEED_SALT, worker)),
            next_key: start,
            end_key: start + count,
            retry: self.insert_retry(seed ^ LOAD_SEED_SALT, worker),
        }
    }

    /// Worker `worker` of the transaction phase, seeded with
    /// [`worker_seed`]`(seed, worker)` from the run seed `seed`.
    ///
    /// Every worker shares the transaction-insert counter (and, for
    /// `requestdistribution=sequential`, the sequence) with the others, as YCSB's
    /// threads share one workload object.
    pub fn run_worker(self: &Arc<Self>, seed: u64, worker: usize) -> RunWorker {
        RunWorker {
            workload: self.clone(),
            rng: Xoshiro256PlusPlus::seed_from_u64(worker_seed(seed, worker)),
            key_chooser: self.key_chooser.clone(),
            retry: self.insert_retry(seed, worker),
        }
    }

    /// The record the load phase writes for `keynum`, into `out` (cleared first).
    ///
    /// With `dataintegrity` every value is YCSB's deterministic value, exactly what was
    /// written. Without it, values were random: the field names are right, and so are
    /// the lengths for a constant length distribution, but values (and other lengths)
    /// are only a stand-in drawn from a generator seeded by `keynum`.
    pub fn expected_record(&self, keynum: u64, out: &mut Record) {
        out.clear();
        let mut key = Vec::with_capacity(32);
        self.shared.key_name(keynum, &mut key);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(keynum);
        for index in 0..self.shared.field_names.len() {
            self.shared.push_field(&mut rng, &key, index, out);
        }
    }

    /// Checks a record read back after loading: it has exactly the workload's fields, and
    /// with `dataintegrity` their values are as written ([`CoreWorkload::check_read`]).
    pub fn check_loaded(&self, key: &[u8], reply: &Record) -> bool {
        let names = &self.shared.field_names;
        reply.len() == names.len()
            && if self.shared.data_integrity {
                self.check_read(key, reply)
            } else {
                names.iter().all(|n| reply.get(n).is_some())
            }
    }

    /// With `dataintegrity`, checks a read as YCSB's `verifyRow`: true when `reply` has
    /// at least one field and every field equals `buildDeterministicValue(key, name)`.
    /// Without `dataintegrity` there is nothing to check and this returns true.
    pub fn check_read(&self, key: &[u8], reply: &Record) -> bool {
        if !self.shared.data_integrity {
            return true;
        }
        if reply.is_empty() {
            return false;
        }
        let size = self.max_field_length as usize;
        reply.iter().all(|(name, value)| {
            if value.len() != size {
                return false;
            }
            let mut same = true;
            deterministic_value(key, name, size, |i, b| same &= value[i] == b);
            same
        })
    }
}

/// One worker's share of the load phase: inserts of consecutive key numbers.
#[derive(Debug)]
pub struct LoadWorker {
    shared: Arc<Shared>,
    rng: Xoshiro256PlusPlus,
    next_key: u64,
    end_key: u64,
    retry: InsertRetry,
}

impl LoadWorker {
    /// Clears `req` and fills it with the next insert (key and every field); returns
    /// false, leaving `req` cleared, when this worker's share is done.
    pub fn next(&mut self, req: &mut Request) -> bool {
        req.clear();
        if self.next_key >= self.end_key {
            return false;
        }
        let keynum = self.next_key;
        self.next_key += 1;
        req.kind = OpKind::Insert;
        self.shared.key_name(keynum, &mut req.key);
        for index in 0..self.shared.field_names.len() {
            self.shared
                .push_field(&mut self.rng, &req.key, index, req.value.fields_mut());
        }
        true
    }

    /// Inserts left in this worker's share.
    pub fn remaining(&self) -> u64 {
        self.end_key - self.next_key
    }

    /// How long to wait before sending a failed insert again, after `retries` retries;
    /// `None` once `core_workload_insertion_retry_limit` retries have been made.
    pub fn retry_delay(&mut self, retries: u64) -> Option<std::time::Duration> {
        self.retry.delay(retries)
    }
}

/// One worker's transaction-phase operation stream.
#[derive(Debug)]
pub struct RunWorker {
    workload: Arc<CoreWorkload>,
    rng: Xoshiro256PlusPlus,
    key_chooser: KeyChoice,
    retry: InsertRetry,
}

impl RunWorker {
    /// Clears `req` and fills it with the next operation, chosen by the proportions:
    ///
    /// - `Read`: reads every field per `readallfields`; when false, [`Request::read`]
    ///   names one random field.
    /// - `Update`: [`Request::value`] holds one random field (all with
    ///   `writeallfields`).
    /// - `Insert`: the next key of the shared insert sequence with every field; returns
    ///   `Some(keynum)`, which the caller must pass to [`RunWorker::acknowledge`] once the
    ///   insert has completed (successfully or not, as YCSB), so that readers may choose it.
    /// - `Scan`: `scan_len` from the scan length distribution; [`Request::read`] as for
    ///   reads.
    /// - `ReadModifyWrite`: [`Request::value`] holds the update's fields; the read reads
    ///   every field per `readallfields`. When false, the read reads one random field of
    ///   its own, drawn before the update's fields as YCSB's
    ///   `doTransactionReadModifyWrite` draws it.
    /// - `Delete` (kvlab extension): only the key.
    ///
    /// Keys are chosen as YCSB's `nextKeynum`: never above the highest acknowledged
    /// insert. Returns `None` for every kind but `Insert`.
    pub fn next(&mut self, req: &mut Request) -> Option<u64> {
        req.clear();
        let RunWorker {
            workload,
            rng,
            key_chooser,
            ..
        } = self;
        let wl = &**workload;
        let u = next_f64(rng);
        let kind_index = wl
            .op_thresholds
            .iter()
            .position(|&t| u < t)
            .unwrap_or_else(|| {
                // Rounding can leave the last threshold a hair below 1: take the last kind
                // with a nonzero share.
                (0..6)
                    .rev()
                    .find(|&i| i == 0 || wl.op_thresholds[i] > wl.op_thresholds[i - 1])
                    .unwrap_or(0)
            });
        let kind = OP_KINDS[kind_index];
        req.kind = kind;
        if kind == OpKind::Insert {
            let keynum = wl.shared.insert_sequence.next();
            wl.shared.key_name(keynum, &mut req.key);
            for index in 0..wl.shared.field_names.len() {
                wl.shared
                    .push_field(rng, &req.key, index, req.value.fields_mut());
            }
            return Some(keynum);
        }
        match key_chooser {
            KeyChoice::Zipfian(g) if !wl.shared.rank_names.0.is_empty() => {
                wl.shared.ranked_key(g, rng, &mut req.key);
            }
            chooser => {
                let keynum = next_keynum(chooser, rng, &wl.shared.insert_sequence);
                wl.shared.key_name(keynum, &mut req.key);
            }
        }
        // What a read finds is looked at only to check it (`dataintegrity`): otherwise
        // the store counts it without copying it into the reply.
        req.read.set_discard(!wl.shared.data_integrity);
        match kind {
            OpKind::Read | OpKind::Scan => {
                if kind == OpKind::Scan {
                    req.scan_len = wl.scan_length.next(rng) as u32;
                }
                if !wl.read_all_fields {
                    let index = wl.field_chooser.next(rng) as usize;
                    req.read
                        .names_mut()
                        .push(&wl.shared.field_names[index], b"");
                } else if kind == OpKind::Read && wl.read_all_fields_by_name {
                    // YCSB passes the full field set for reads only (not scans).
                    let names = req.read.names_mut();
                    for name in &wl.shared.field_names {
                        names.push(name, b"");
                    }
                }
            }
            OpKind::Update | OpKind::ReadModifyWrite => {
                if kind == OpKind::ReadModifyWrite && !wl.read_all_fields {
                    let index = wl.field_chooser.next(rng) as usize;
                    req.read
                        .names_mut()
                        .push(&wl.shared.field_names[index], b"");
                }
                let whole = wl.write_all_fields || wl.shared.field_names.len() == 1;
                req.value.set_whole(whole);
                let fields = req.value.fields_mut();
                if wl.write_all_fields {
                    for index in 0..wl.shared.field_names.len() {
                        wl.shared.push_field(rng, &req.key, index, fields);
                    }
                } else {
                    let index = wl.field_chooser.next(rng) as usize;
                    wl.shared.push_field(rng, &req.key, index, fields);
                }
            }
            OpKind::Delete | OpKind::Insert => {}
        }
        None
    }

    /// Acknowledges a transaction-phase insert returned by [`RunWorker::next`], making
    /// its key available to readers.
    pub fn acknowledge(&self, keynum: u64) {
        self.workload.shared.insert_sequence.acknowledge(keynum);
    }

    /// The workload this worker draws from.
    pub fn workload(&self) -> &Arc<CoreWorkload> {
        &self.workload
    }

    /// How long to wait before sending a failed insert again, after `retries` retries;
    /// `None` once `core_workload_insertion_retry_limit` retries have been made. (YCSB
    /// retries only load-phase inserts; kvlab retries transaction inserts too.)
    pub fn retry_delay(&mut self, retries: u64) -> Option<std::time::Duration> {
        self.retry.delay(retries)
    }
}

/// YCSB `nextKeynum`: for `exponential`, `last − ⌊draw⌋` retried while negative; for the
/// others, a draw retried while above the last acknowledged insert.
#[inline]
fn next_keynum(
    key_chooser: &mut KeyChoice,
    rng: &mut Xoshiro256PlusPlus,
    sequence: &AcknowledgedCounter,
) -> u64 {
    match key_chooser {
        KeyChoice::Exponential(e) => loop {
            let last = sequence.acknowledged_below() as i64 - 1;
            let keynum = last - e.next(rng) as i64;
            if keynum >= 0 {
                return keynum as u64;
            }
        },
        chooser => loop {
            let keynum = match chooser {
                KeyChoice::Uniform(g) => g.next_key(rng),
                KeyChoice::Zipfian(g) => g.next_key(rng),
                KeyChoice::Latest(g) => g.next_key(rng),
                KeyChoice::Hotspot(g) => g.next_key(rng),
                KeyChoice::Sequential(g) => g.next_key(rng),
                KeyChoice::Exponential(_) => unreachable!("handled above"),
            };
            if keynum < sequence.acknowledged_below() {
                return keynum;
            }
        },
    }
}

/// YCSB `buildKeyName` of the number `n` for a `zeropadding` of any width (the general
/// path of [`Shared::format_key_name`]).
fn format_key_name_padded(n: u64, zero_padding: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(b"user");
    let mut digits = [0u8; 20];
    let at = kvlab_dist::decimal::format_u64(n, &mut digits);
    let len = digits.len() - at;
    out.extend(std::iter::repeat_n(b'0', zero_padding.saturating_sub(len)));
    out.extend_from_slice(&digits[at..]);
}

/// Writes `n` as exactly 20 decimal digits, zero-padded (every `u64` fits), into
/// `out[at..at + 20]` (`at` ≤ 4). The number is cut into 4 + 8 + 8 digits, each 8-digit
/// part into two halves of four and each half into two pairs looked up in
/// [`kvlab_dist::decimal::DIGIT_PAIRS`]: independent 32-bit steps, no loop. (Computing
/// each group's digits in one register instead — SWAR, three stores — measured slower:
/// its multiplications form one long dependent chain, where the pairs' look-ups run side
/// by side.)
#[inline]
fn decimal20(n: u64, out: &mut [u8; 24], at: usize) {
    const E8: u64 = 100_000_000;
    const E16: u64 = E8 * E8;
    #[inline(always)]
    fn pair(out: &mut [u8; 24], at: usize, p: u32) {
        let i = (p as usize).min(99) * 2;
        out[at..at + 2].copy_from_slice(&kvlab_dist::decimal::DIGIT_PAIRS[i..i + 2]);
    }
    #[inline(always)]
    fn four(out: &mut [u8; 24], at: usize, x: u32) {
        pair(out, at, x / 100);
        pair(out, at + 2, x % 100);
    }
    let at = at.min(4);
    let rest = n % E16;
    four(out, at, (n / E16) as u32);
    let (mid, low) = ((rest / E8) as u32, (rest % E8) as u32);
    four(out, at + 4, mid / 10_000);
    four(out, at + 8, mid % 10_000);
    four(out, at + 12, low / 10_000);
    four(out, at + 16, low % 10_000);
}

#[cfg(test)]
mod format_tests {
    use crate::{CoreWorkload, Properties};
    use kvlab_dist::decimal::format_u64;

    fn workload(props: &str) -> CoreWorkload {
        let mut p = Properties::new();
        p.parse_str(props, std::path::Path::new("t")).unwrap();
        CoreWorkload::from_properties(&p, &[], &[]).unwrap()
    }

    #[test]
    fn huge_field_counts_and_expected_inserts_are_refused_or_bounded() {
        let mut p = Properties::new();
        p.parse_str("fieldcount=4294967295\n", std::path::Path::new("t"))
            .unwrap();
        let err = CoreWorkload::from_properties(&p, &[], &[]).unwrap_err();
        assert!(err.to_string().contains("from 1 to 1048576"), "{err}");
        // operationcount × insertproportion × 2 past u64::MAX widens the Zipfian to the
        // end of the key space instead of overflowing.
        let wl = workload(
            "recordcount=1000\noperationcount=18446744073709551615\n\
             requestdistribution=zipfian\ninsertproportion=1\n",
        );
        assert_eq!(wl.record_count(), 1000);
    }

    #[test]
    fn ranked_names_are_the_drawn_and_formatted_names() {
        use rand_core::SeedableRng;
        for (props, table_len) in [
            (
                "recordcount=1000000\nrequestdistribution=zipfian\n",
                super::RANK_TABLE_LEN,
            ),
            (
                "recordcount=1000000\nrequestdistribution=zipfian\ninsertorder=ordered\n",
                super::RANK_TABLE_LEN,
            ),
            // Inserts during the run widen the Zipfian's range beyond the loaded keys.
            (
                "recordcount=20000\noperationcount=1000000\nrequestdistribution=zipfian\n\
                 insertproportion=0.5\nreadproportion=0.5\nupdateproportion=0\n",
                super::RANK_TABLE_LEN,
            ),
            ("recordcount=1000\nrequestdistribution=zipfian\n", 0),
            ("recordcount=1000000\nrequestdistribution=uniform\n", 0),
            (
                "recordcount=1000000\nrequestdistribution=zipfian\nzeropadding=20\n",
                0,
            ),
        ] {
            let wl = workload(props);
            assert_eq!(wl.shared.rank_names.0.len() as u64, table_len, "{props}");
            let super::KeyChoice::Zipfian(g) = &wl.key_chooser else {
                continue;
            };
            let mut name = Vec::new();
            for (rank, slot) in wl.shared.rank_names.0.iter().enumerate() {
                assert_eq!(slot.keynum, g.key_of_rank(rank as u64), "{props}");
                wl.shared.format_key_name(slot.keynum, &mut name);
                assert_eq!(&slot.name[..usize::from(slot.len)], &name[..], "{props}");
            }
            // The same stream of names as drawing and formatting each key.
            let mut by_rank = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
            let mut drawn = by_rank.clone();
            let mut chooser = wl.key_chooser.clone();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut from_table = 0;
            for _ in 0..200_000 {
                wl.shared.ranked_key(g, &mut by_rank, &mut a);
                let keynum =
                    super::next_keynum(&mut chooser, &mut drawn, &wl.shared.insert_sequence);
                wl.shared.key_name(keynum, &mut b);
                assert_eq!(a, b, "{props}");
                from_table +=
                    usize::from(wl.shared.rank_names.0.iter().any(|s| s.keynum == keynum));
            }
            if table_len > 0 {
                assert!(
                    from_table > 60_000,
                    "{from_table} of 200 000 from the table"
                );
            }
        }
    }

    #[test]
    fn table_names_are_the_formatted_names() {
        for (extra, table_len) in [
            ("", 1000),
            ("insertorder=ordered\nzeropadding=12\n", 1000),
            ("recordcount=100000\n", super::KEY_TABLE_MAX as usize),
            ("zeropadding=21\n", 0),
        ] {
            let mut p = Properties::new();
            p.parse_str(
                &format!("recordcount=1000\n{extra}"),
                std::path::Path::new("t"),
            )
            .unwrap();
            let wl = CoreWorkload::from_properties(&p, &[], &[]).unwrap();
            assert_eq!(wl.shared.key_names.0.len(), table_len, "{extra}");
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for keynum in (0..20_000).chain([u64::from(u32::MAX), u64::MAX]) {
                wl.key_name(keynum, &mut a);
                wl.shared.format_key_name(keynum, &mut b);
                assert_eq!(a, b, "{keynum} {extra}");
            }
        }
    }

    /// One workload per `zeropadding` 0..=24 and insert order, built once.
    fn padded_workloads() -> &'static [(usize, bool, CoreWorkload)] {
        static WORKLOADS: std::sync::OnceLock<Vec<(usize, bool, CoreWorkload)>> =
            std::sync::OnceLock::new();
        WORKLOADS.get_or_init(|| {
            let mut all = Vec::new();
            for padding in 0..=24 {
                for ordered in [false, true] {
                    let order = if ordered { "ordered" } else { "hashed" };
                    let mut p = Properties::new();
                    p.parse_str(
                        &format!("zeropadding={padding}\ninsertorder={order}\n"),
                        std::path::Path::new("t"),
                    )
                    .unwrap();
                    let wl = CoreWorkload::from_properties(&p, &[], &[]).unwrap();
                    all.push((padding, ordered, wl));
                }
            }
            all
        })
    }

    proptest::proptest! {
        /// Key names are YCSB's `"user" + zero-padded decimal`, as plain `format!` writes
        /// it, for every number magnitude, padding and insert order — formatted, and from
        /// the table of pre-formatted names.
        #[test]
        fn key_names_are_plain_formatted_names(
            x in proptest::prelude::any::<u64>(),
            shift in 0u32..64,
            index in 0usize..50,
        ) {
            let keynum = x >> shift;
            let (padding, ordered, wl) = &padded_workloads()[index];
            let n = if *ordered { keynum } else { crate::fnvhash64(keynum) };
            let expected = format!("user{n:0padding$}");
            let (mut formatted, mut named, mut tabled) = (Vec::new(), Vec::new(), Vec::new());
            wl.shared.format_key_name(keynum, &mut formatted);
            wl.key_name(keynum, &mut named);
            wl.key_name(keynum % super::KEY_TABLE_MAX, &mut tabled);
            let small = keynum % super::KEY_TABLE_MAX;
            let n_small = if *ordered { small } else { crate::fnvhash64(small) };
            proptest::prop_assert_eq!(String::from_utf8(formatted).unwrap(), expected.clone());
            proptest::prop_assert_eq!(String::from_utf8(named).unwrap(), expected.clone());
            proptest::prop_assert_eq!(
                String::from_utf8(tabled).unwrap(),
                format!("user{n_small:0padding$}")
            );
        }
    }

    #[test]
    fn twenty_digit_decimals_match_std() {
        for n in [
            0u64,
            9,
            10,
            99_999_999,
            100_000_000,
            10u64.pow(16) - 1,
            10u64.pow(16),
        ]
        .into_iter()
        .chain([10u64.pow(19), u64::MAX, 1_844_674_407_370_955_161])
        {
            for at in 0..=4 {
                let mut buf = [b'x'; 24];
                super::decimal20(n, &mut buf, at);
                assert_eq!(
                    std::str::from_utf8(&buf[at..at + 20]).unwrap(),
                    format!("{n:020}")
                );
                assert!(buf[..at].iter().chain(&buf[at + 20..]).all(|&b| b == b'x'));
            }
        }
    }

    #[test]
    fn decimal_formatting_matches_std_at_every_magnitude() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..20_000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let n = x >> (i % 64);
            let mut buf = [0u8; 20];
            let at = format_u64(n, &mut buf);
            assert_eq!(std::str::from_utf8(&buf[at..]).unwrap(), n.to_string());
        }
    }

    #[test]
    fn decimal_formatting_matches_std() {
        for n in [
            0u64,
            7,
            10,
            99,
            100,
            101,
            12345,
            99_999_999,
            100_000_000,
            9_999_999_999_999_999,
            10_000_000_000_000_000,
            1_234_567_890_123_456_789,
            9_223_372_036_854_775_808,
            9_999_999_999_999_999_999,
            10_000_000_000_000_000_000,
            6284781860667377211,
            u64::MAX,
        ] {
            let mut buf = [0u8; 20];
            let at = format_u64(n, &mut buf);
            assert_eq!(std::str::from_utf8(&buf[at..]).unwrap(), n.to_string());
        }
    }
}
