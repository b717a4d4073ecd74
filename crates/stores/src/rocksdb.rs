//! The `rocksdb` store: an embedded RocksDB database.
//!
//! A YCSB record is stored as one value holding every field (the single-value encoding
//! of [`kvlab_core::Record`], the layout YCSB's RocksDB binding uses). An update reads
//! the record, replaces the updated fields and writes it back, as that binding does.
//! Scans use a forward iterator from the start key. Records live in the column family
//! `rocksdb.column_family` (default `usertable`, where YCSB's binding keeps them; a
//! database whose records are in `default`, as db_bench's are, is refused with a message
//! naming `-p rocksdb.column_family=default`).
//!
//! kvlab links the system RocksDB library (Debian's `librocksdb-dev`), the same one the
//! `db_bench` of Debian's `rocksdb-tools` runs, so the two can be compared like for like:
//! its static archive by default, as RocksDB's own build links `db_bench` (the shared
//! library with `ROCKSDB_STATIC=0` at build time, as Debian's `db_bench` links it; see the
//! crate's build script). It calls it through a small C++ shim
//! (`crates/stores/cxx/rocksdb_shim.cc`) that reuses one write batch and one pinned slice
//! per session, as `db_bench` does, where RocksDB's C API allocates both per call.
//!
//! Merges ([`kvlab_core::Request::merge`], a trace replay's `merge`) go through the
//! merge operator chosen by `rocksdb.merge_operator` (RocksDB's built-in ones by the
//! names `db_bench -merge_operator` takes; default `put`, the last operand wins).

mod ffi;

pub use ffi::SstFile;

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kvlab_core::inline::{execute_batch, execute_one, Engine, ScanEnd, Scratch};
use kvlab_core::{
    Batch, Capabilities, OpKind, Outcome, Request, Session, StatValue, Store, StoreError,
    StoreErrorKind, StoreStats,
};

use crate::StoreOptions;

/// Option names `rocksdb.*` that the store understands (after the `rocksdb.` prefix).
pub const OPTION_NAMES: &[&str] = &[
    "dir",
    "block_cache_size",
    "wal",
    "sync",
    "compression",
    "write_buffer_size",
    "max_write_buffer_number",
    "max_background_jobs",
    "compaction_style",
    "bloom_bits",
    "rate_limit_bytes_per_sec",
    "max_open_files",
    "cache_index_and_filter_blocks",
    "direct_reads",
    "statistics",
    "target_file_size_base",
    "level0_file_num_compaction_trigger",
    "verify_checksums",
    "pipelined_write",
    "destroy_on_open",
    "merge_operator",
    "multi_get",
    "perf_level",
    "column_family",
];

const COMPRESSIONS: &[&str] = &["none", "snappy", "lz4", "lz4hc", "zstd", "zlib", "bz2"];
const COMPACTION_STYLES: &[&str] = &["level", "universal", "fifo"];
/// The merge operators `rocksdb.merge_operator` chooses from: RocksDB's built-in ones by
/// the names `db_bench -merge_operator` takes (utilities/merge_operators.h), or none.
pub const MERGE_OPERATORS: &[&str] = &["put", "uint64add", "stringappend", "max", "none"];
/// `rocksdb.perf_level` choices, RocksDB's `PerfLevel` 1 to 5 (include/rocksdb/perf_level.h):
/// how much each operation counts and times into the thread's `PerfContext`.
pub const PERF_LEVELS: &[&str] = &[
    "disable",
    "count",
    "time_except_for_mutex",
    "time_and_cpu_time_except_for_mutex",
    "time",
];

/// RocksDB's `CompressionType` value for a `rocksdb.compression` choice
/// (include/rocksdb/compression_type.h).
fn compression_type(name: &str) -> u8 {
    match name {
        "none" => 0,
        "snappy" => 1,
        "zlib" => 2,
        "bz2" => 3,
        "lz4" => 4,
        "lz4hc" => 5,
        _ => 7, // zstd
    }
}

/// RocksDB's `CompactionStyle` value (include/rocksdb/advanced_options.h).
fn compaction_style(name: &str) -> u8 {
    match name {
        "universal" => 1,
        "fifo" => 2,
        _ => 0, // level
    }
}

/// Effective RocksDB options, every default filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct RocksDbConfig {
    /// Database directory.
    pub path: PathBuf,
    /// LRU block cache capacity in bytes (default 8 MiB, db_bench's default).
    pub block_cache_size_bytes: u64,
    /// Write-ahead log on (default true).
    pub wal: bool,
    /// fsync every write (default false).
    pub sync: bool,
    /// Compression of SST blocks (default `snappy`, RocksDB's default).
    pub compression: String,
    /// Memtable size in bytes (default 64 MiB).
    pub write_buffer_size_bytes: u64,
    /// Memtables kept before stalling (default 2).
    pub max_write_buffer_number: i64,
    /// Background flush + compaction threads (default 2).
    pub max_background_jobs: i64,
    /// `level`, `universal` or `fifo` (default `level`).
    pub compaction_style: String,
    /// Bloom filter bits per key; 0 disables the filter (default 10).
    pub bloom_bits: i64,
    /// Background I/O rate limit in bytes per second; 0 = unlimited (default 0).
    pub rate_limit_bytes_per_sec: u64,
    /// Open file limit; -1 = unlimited (default -1).
    pub max_open_files: i64,
    /// Keep index and filter blocks in the block cache (default false).
    pub cache_index_and_filter_blocks: bool,
    /// O_DIRECT reads (default false).
    pub direct_reads: bool,
    /// Collect RocksDB statistics (default true; costs a few percent).
    pub statistics: bool,
    /// Target SST size in bytes (default 64 MiB).
    pub target_file_size_base_bytes: u64,
    /// L0 files that trigger compaction (default 4).
    pub level0_file_num_compaction_trigger: i64,
    /// Verify block checksums on reads (default true).
    pub verify_checksums: bool,
    /// Pipelined WAL and memtable writes (default false, RocksDB's default).
    pub pipelined_write: bool,
    /// Delete any existing database before opening (default false).
    pub destroy_on_open: bool,
    /// The merge operator merges go through (default `put`, RocksDB's PutOperator: the
    /// last operand wins); one of [`MERGE_OPERATORS`], `none` for none.
    pub merge_operator: String,
    /// A batch of plain reads (`--pipeline N`) is one batched `DB::MultiGet`, as
    /// `db_bench`'s `multireadrandom` reads (default true).
    pub multi_get: bool,
    /// RocksDB's per-thread perf level for the workers ([`PERF_LEVELS`]; default
    /// `disable`, db_bench's `-perf_level` default, where RocksDB's own is `count`).
    pub perf_level: String,
    /// The column family the records live in (default `usertable`, the table name
    /// YCSB's RocksDB binding makes its column family, so a database YCSB loaded and
    /// one kvlab loaded hold the same records); created when missing. A database whose
    /// records are in `default` (db_bench's, or kvlab's before it used `usertable`) is
    /// refused with a message naming `-p rocksdb.column_family=default`.
    pub column_family: String,
}

impl RocksDbConfig {
    /// Reads `rocksdb.*` options; `path` (from `--path`) wins over `rocksdb.dir`.
    pub fn from_options(
        path: Option<&Path>,
        mut o: StoreOptions,
    ) -> Result<RocksDbConfig, StoreError> {
        let path = o.data_dir(path, "a database directory")?;
        let config = RocksDbConfig {
            path,
            block_cache_size_bytes: o.size("block_cache_size", 8 << 20)?,
            wal: o.bool("wal", true)?,
            sync: o.bool("sync", false)?,
            compression: o.choice("compression", COMPRESSIONS, "snappy")?,
            write_buffer_size_bytes: o.size("write_buffer_size", 64 << 20)?,
            max_write_buffer_number: o.int("max_write_buffer_number", 2)?,
            max_background_jobs: o.int("max_background_jobs", 2)?,
            compaction_style: o.choice("compaction_style", COMPACTION_STYLES, "level")?,
            bloom_bits: o.int("bloom_bits", 10)?,
            rate_limit_bytes_per_sec: o.size("rate_limit_bytes_per_sec", 0)?,
            max_open_files: o.int("max_open_files", -1)?,
            cache_index_and_filter_blocks: o.bool("cache_index_and_filter_blocks", false)?,
            direct_reads: o.bool("direct_reads", false)?,
            statistics: o.bool("statistics", true)?,
            target_file_size_base_bytes: o.size("target_file_size_base", 64 << 20)?,
            level0_file_num_compaction_trigger: o.int("level0_file_num_compaction_trigger", 4)?,
            verify_checksums: o.bool("verify_checksums", true)?,
            pipelined_write: o.bool("pipelined_write", false)?,
            destroy_on_open: o.bool("destroy_on_open", false)?,
            merge_operator: o.choice("merge_operator", MERGE_OPERATORS, "put")?,
            multi_get: o.bool("multi_get", true)?,
            perf_level: o.choice("perf_level", PERF_LEVELS, "disable")?,
            column_family: o.string("column_family", "usertable"),
        };
        if config.column_family.is_empty() {
            return Err(StoreError::new(
                StoreErrorKind::Config,
                "rocksdb.column_family: a column family's name, not empty (RocksDB's own \
                 is `default`)",
            ));
        }
        o.finish(OPTION_NAMES)?;
        Ok(config)
    }

    fn to_stats(&self) -> StoreStats {
        vec![
            ("path".into(), self.path.display().to_string().into()),
            (
                "block_cache_size_bytes".into(),
                self.block_cache_size_bytes.into(),
            ),
            ("wal".into(), self.wal.into()),
            ("sync".into(), self.sync.into()),
            ("compression".into(), self.compression.clone().into()),
            (
                "write_buffer_size_bytes".into(),
                self.write_buffer_size_bytes.into(),
            ),
            (
                "max_write_buffer_number".into(),
                self.max_write_buffer_number.into(),
            ),
            (
                "max_background_jobs".into(),
                self.max_background_jobs.into(),
            ),
            (
                "compaction_style".into(),
                self.compaction_style.clone().into(),
            ),
            ("bloom_bits".into(), self.bloom_bits.into()),
            (
                "rate_limit_bytes_per_sec".into(),
                self.rate_limit_bytes_per_sec.into(),
            ),
            ("max_open_files".into(), self.max_open_files.into()),
            (
                "cache_index_and_filter_blocks".into(),
                self.cache_index_and_filter_blocks.into(),
            ),
            ("direct_reads".into(), self.direct_reads.into()),
            ("statistics".into(), self.statistics.into()),
            (
                "target_file_size_base_bytes".into(),
                self.target_file_size_base_bytes.into(),
            ),
            (
                "level0_file_num_compaction_trigger".into(),
                self.level0_file_num_compaction_trigger.into(),
            ),
            ("verify_checksums".into(), self.verify_checksums.into()),
            ("pipelined_write".into(), self.pipelined_write.into()),
            ("merge_operator".into(), self.merge_operator.clone().into()),
            ("multi_get".into(), self.multi_get.into()),
            ("perf_level".into(), self.perf_level.clone().into()),
            ("column_family".into(), self.column_family.clone().into()),
        ]
    }
}

/// An open RocksDB database.
pub struct RocksDbStore {
    db: Arc<ffi::Db>,
    config: RocksDbConfig,
}

impl std::fmt::Debug for RocksDbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksDbStore")
            .field("config", &self.config)
            .finish()
    }
}

/// A failed RocksDB call: `full` when RocksDB's status says the disk is full (an
/// `IOError` with subcode `NoSpace`, printed "IO error: No space left on device"; RocksDB
/// `util/status.cc`), `io` otherwise, RocksDB's own text kept.
fn io_err(context: &str, text: String) -> StoreError {
    let kind = if text.contains("No space left on device") {
        StoreErrorKind::Full
    } else {
        StoreErrorKind::Io
    };
    StoreError::new(kind, format!("{context}: {text}"))
}

impl RocksDbStore {
    /// Opens (creating if missing) the database described by `config`.
    pub fn open(config: RocksDbConfig) -> Result<RocksDbStore, StoreError> {
        let options = ffi::RawOptions {
            path: std::ptr::null(),
            block_cache_size_bytes: config.block_cache_size_bytes,
            write_buffer_size_bytes: config.write_buffer_size_bytes,
            max_write_buffer_number: clamp_i32(config.max_write_buffer_number),
            max_background_jobs: clamp_i32(config.max_background_jobs),
            max_open_files: clamp_i32(config.max_open_files),
            level0_file_num_compaction_trigger: clamp_i32(
                config.level0_file_num_compaction_trigger,
            ),
            target_file_size_base_bytes: config.target_file_size_base_bytes,
            rate_limit_bytes_per_sec: config.rate_limit_bytes_per_sec,
            bloom_bits: config.bloom_bits.max(0) as f64,
            compression: compression_type(&config.compression),
            compaction_style: compaction_style(&config.compaction_style),
            direct_reads: config.direct_reads,
            pipelined_write: config.pipelined_write,
            statistics: config.statistics,
            cache_index_and_filter_blocks: config.cache_index_and_filter_blocks,
            destroy_on_open: config.destroy_on_open && config.path.exists(),
            read_only: false,
            merge_operator: std::ptr::null(),
            column_family: std::ptr::null(),
        };
        let merge_operator = match config.merge_operator.as_str() {
            "none" => "",
            name => name,
        };
        let db = ffi::Db::open(&config.path, merge_operator, &config.column_family, options)
            .map_err(|e| io_err(&format!("opening rocksdb at {}", config.path.display()), e))?;
        Ok(RocksDbStore {
            db: Arc::new(db),
            config,
        })
    }

    /// The effective configuration.
    pub fn config(&self) -> &RocksDbConfig {
        &self.config
    }

    /// Flushes the memtables and compacts the whole database, the bottommost level
    /// included, into files of `target_file_size_base` at the last level (RocksDB's
    /// `CompactRange` over every key, `BottommostLevelCompaction::kForce`): a freshly
    /// loaded database gets the layout of one that has been compacted.
    pub fn compact_all(&self) -> Result<(), StoreError> {
        self.db
            .compact_all()
            .map_err(|e| io_err("compacting the database", e))
    }

    /// The live SST files (`DB::GetLiveFilesMetaData`): level, key bounds, entries, size.
    pub fn sst_files(&self) -> Vec<SstFile> {
        self.db.live_files()
    }

    /// RocksDB's statistics tickers (`rocksdb.block.cache.hit` → count), parsed from the
    /// statistics dump. Empty when statistics are off.
    pub fn tickers(&self) -> Vec<(String, u64)> {
        let Some(dump) = self.db.statistics() else {
            return Vec::new();
        };
        parse_tickers(&dump)
    }
}

/// The live SST files of the database at `path`, opened read-only (RocksDB's
/// `OpenForReadOnly`: no lock taken, nothing written, so another process may hold the
/// database open). Errors when there is no database there.
pub fn read_sst_files(path: &Path) -> Result<Vec<SstFile>, StoreError> {
    let config = RocksDbConfig::from_options(Some(path), StoreOptions::default())?;
    let options = ffi::RawOptions {
        path: std::ptr::null(),
        block_cache_size_bytes: 8 << 20,
        write_buffer_size_bytes: config.write_buffer_size_bytes,
        max_write_buffer_number: 2,
        max_background_jobs: 2,
        max_open_files: -1,
        level0_file_num_compaction_trigger: 4,
        target_file_size_base_bytes: config.target_file_size_base_bytes,
        rate_limit_bytes_per_sec: 0,
        bloom_bits: 0.0,
        compression: compression_type(&config.compression),
        compaction_style: compaction_style(&config.compaction_style),
        direct_reads: false,
        pipelined_write: false,
        statistics: false,
        cache_index_and_filter_blocks: false,
        destroy_on_open: false,
        read_only: true,
        merge_operator: std::ptr::null(),
        column_family: std::ptr::null(),
    };
    // Every column family's files: db_bench's records are in `default`, kvlab's in
    // `usertable`.
    let db = ffi::Db::open(path, "", "", options).map_err(|e| {
        io_err(
            &format!("opening rocksdb at {} read-only", path.display()),
            e,
        )
    })?;
    Ok(db.live_files())
}

/// The number a db_bench key stands for: its first 8 bytes read big-endian (shorter keys
/// padded with zero bytes), the inverse of `GenerateKeyFromInt`.
pub fn key_number(key: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    let n = key.len().min(8);
    bytes[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(bytes)
}

/// The files of the last level that holds any (the data's layout after a full
/// compaction), sorted by smallest key.
pub fn last_level_files(files: &[SstFile]) -> Vec<SstFile> {
    let Some(last) = files.iter().map(|f| f.level).max() else {
        return Vec::new();
    };
    let mut out: Vec<SstFile> = files.iter().filter(|f| f.level == last).cloned().collect();
    out.sort_by(|a, b| a.smallest_key.cmp(&b.smallest_key));
    out
}

/// Key-range starts in db_bench key numbers ([`key_number`]) from a database's layout:
/// one range per file of the last non-empty level, starting at the file's smallest key
/// (files whose smallest keys share a key number are one range). Empty for no files.
pub fn range_starts(files: &[SstFile]) -> Vec<u64> {
    key_ranges(files).map_or_else(Vec::new, |(starts, _)| starts)
}

/// A database's layout as key ranges: the [`range_starts`] and one past the largest key
/// number of the last level (the key space they cover); `None` without SST files.
pub fn key_ranges(files: &[SstFile]) -> Option<(Vec<u64>, u64)> {
    let tiles = last_level_files(files);
    let end = key_number(&tiles.last()?.largest_key).saturating_add(1);
    let mut starts: Vec<u64> = tiles.iter().map(|f| key_number(&f.smallest_key)).collect();
    starts.dedup();
    Some((starts, end))
}

/// An `i64` option as the `int` RocksDB takes, saturating.
fn clamp_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// Parses the ticker lines (`rocksdb.block.cache.miss COUNT : 42`) of RocksDB's
/// statistics dump; histogram lines are skipped.
pub fn parse_tickers(dump: &str) -> Vec<(String, u64)> {
    dump.lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once(" COUNT : ")?;
            Some((name.trim().to_string(), rest.trim().parse().ok()?))
        })
        .collect()
}

/// The tickers and properties copied into a result, with kvlab's names.
const TICKERS: &[(&str, &str)] = &[
    ("rocksdb.block.cache.hit", "block_cache_hit"),
    ("rocksdb.block.cache.miss", "block_cache_miss"),
    ("rocksdb.block.cache.data.hit", "block_cache_data_hit"),
    ("rocksdb.block.cache.data.miss", "block_cache_data_miss"),
    ("rocksdb.block.cache.index.hit", "block_cache_index_hit"),
    ("rocksdb.block.cache.index.miss", "block_cache_index_miss"),
    ("rocksdb.block.cache.filter.hit", "block_cache_filter_hit"),
    ("rocksdb.block.cache.filter.miss", "block_cache_filter_miss"),
    ("rocksdb.bloom.filter.useful", "bloom_filter_useful"),
    ("rocksdb.memtable.hit", "memtable_hit"),
    ("rocksdb.memtable.miss", "memtable_miss"),
    ("rocksdb.bytes.read", "bytes_read"),
    ("rocksdb.last.level.read.bytes", "last_level_read_bytes"),
    (
        "rocksdb.non.last.level.read.bytes",
        "non_last_level_read_bytes",
    ),
    ("rocksdb.bytes.written", "bytes_written"),
    ("rocksdb.number.keys.read", "keys_read"),
    ("rocksdb.number.keys.written", "keys_written"),
    ("rocksdb.compact.read.bytes", "compaction_read_bytes"),
    ("rocksdb.compact.write.bytes", "compaction_write_bytes"),
    ("rocksdb.flush.write.bytes", "flush_write_bytes"),
    ("rocksdb.wal.bytes", "wal_bytes"),
    ("rocksdb.stall.micros", "stall_micros"),
    ("rocksdb.no.file.opens", "file_opens"),
    ("rocksdb.number.db.seek", "db_seeks"),
];

const PROPERTIES: &[(&str, &str)] = &[
    ("rocksdb.estimate-num-keys", "estimate_num_keys"),
    ("rocksdb.total-sst-files-size", "total_sst_files_size_bytes"),
    ("rocksdb.live-sst-files-size", "live_sst_files_size_bytes"),
    ("rocksdb.block-cache-usage", "block_cache_usage_bytes"),
    ("rocksdb.block-cache-capacity", "block_cache_capacity_bytes"),
    ("rocksdb.cur-size-all-mem-tables", "memtables_size_bytes"),
    (
        "rocksdb.estimate-pending-compaction-bytes",
        "pending_compaction_bytes",
    ),
    ("rocksdb.num-running-compactions", "running_compactions"),
    ("rocksdb.num-files-at-level0", "files_at_level0"),
    ("rocksdb.num-files-at-level1", "files_at_level1"),
    ("rocksdb.num-files-at-level2", "files_at_level2"),
];

impl Store for RocksDbStore {
    type Session = RocksDbSession;

    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            scan: true,
            persistent: true,
            merge: self.config.merge_operator != "none",
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<RocksDbSession, StoreError> {
        let c = &self.config;
        // PerfLevel values start at kDisable = 1.
        let perf_level = PERF_LEVELS
            .iter()
            .position(|l| *l == c.perf_level)
            .map_or(1, |i| i as i32 + 1);
        Ok(RocksDbSession {
            engine: RocksDbEngine {
                session: self
                    .db
                    .session(c.wal, c.sync, c.verify_checksums, perf_level),
                _db: Arc::clone(&self.db),
                has_merge_operator: c.merge_operator != "none",
            },
            multi_get: c.multi_get,
            scratch: Scratch::new(),
        })
    }

    fn options(&self) -> StoreStats {
        self.config.to_stats()
    }

    fn stats(&self) -> StoreStats {
        let tickers = self.tickers();
        let mut out: StoreStats = Vec::new();
        for (rocks, ours) in TICKERS {
            if let Some((_, v)) = tickers.iter().find(|(n, _)| n == rocks) {
                out.push((ours.to_string(), StatValue::from(*v)));
            }
        }
        for (rocks, ours) in PROPERTIES {
            let name = CString::new(*rocks).expect("property names are NUL-free literals");
            if let Some(v) = self.db.property_int(&name) {
                out.push((ours.to_string(), StatValue::from(v)));
            }
        }
        out
    }

    fn flush(&self) -> Result<(), StoreError> {
        self.db.flush().map_err(|e| io_err("flushing memtables", e))
    }
}

/// A worker's handle on a [`RocksDbStore`]: the engine's primitives, run by the shared
/// embedded-store adapter ([`kvlab_core::inline`]).
pub struct RocksDbSession {
    engine: RocksDbEngine,
    scratch: Scratch,
    multi_get: bool,
}

/// One session's view of the database: the shim's session (its write and read options,
/// write batch and pinned slice), and the database it must not outlive.
struct RocksDbEngine {
    // Dropped before `_db` (fields drop in order): a session never outlives its database.
    session: ffi::Session,
    _db: Arc<ffi::Db>,
    has_merge_operator: bool,
}

impl RocksDbEngine {
    /// A merge operand for `key`, combined by the database's merge operator.
    fn merge(&mut self, key: &[u8], operand: &[u8]) -> Result<(), StoreError> {
        if !self.has_merge_operator {
            return Err(StoreError::new(
                StoreErrorKind::Unsupported,
                "rocksdb was opened without a merge operator (rocksdb.merge_operator=none)",
            ));
        }
        self.session
            .merge(key, operand)
            .map_err(|e| io_err("merge", e))
    }
}

impl Engine for RocksDbEngine {
    const NAME: &'static str = "rocksdb";

    #[inline]
    fn get<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, StoreError> {
        self.session.get(key, with).map_err(|e| io_err("get", e))
    }

    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8], _req: &Request) -> Result<(), StoreError> {
        self.session.put(key, value).map_err(|e| io_err("put", e))
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.session.delete(key).map_err(|e| io_err("delete", e))
    }

    fn scan(
        &mut self,
        start: &[u8],
        n: u32,
        mut each: impl FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<ScanEnd, StoreError> {
        let mut it = self.session.iter_from(start);
        let mut end = ScanEnd {
            records: 0,
            starts_at_key: it.key() == Some(start),
        };
        while end.records < u64::from(n) {
            let Some(value) = it.value() else {
                break;
            };
            each(value)?;
            end.records += 1;
            it.next();
        }
        it.status().map_err(|e| io_err("scan", e))?;
        Ok(end)
    }
}

impl RocksDbSession {
    /// Whether `batch` is several plain reads, for one MultiGet.
    fn all_plain_reads(batch: &Batch) -> bool {
        batch.len() > 1
            && batch.slots().iter().all(|slot| {
                let req = &slot.request;
                req.kind == OpKind::Read && !req.is_multi_read() && !req.command.is_some()
            })
    }

    /// Every read of `batch` in one MultiGet, each slot completed as the shared adapter
    /// completes a read ([`kvlab_core::inline::execute_one`]).
    fn multi_get(&mut self, batch: &mut Batch) {
        let session = &mut self.engine.session;
        session.multi_get(batch.slots().iter().map(|slot| &slot.request.key[..]));
        for (i, slot) in batch.slots_mut().iter_mut().enumerate() {
            let result = match session.multi_get_result(i) {
                Ok(Some(value)) => slot
                    .request
                    .decode_value(value, &mut slot.reply)
                    .map(|bytes| Outcome::Hit { bytes }),
                Ok(None) => Ok(Outcome::Miss),
                Err(e) => Err(io_err("multi_get", e.to_string())),
            };
            slot.complete(result);
        }
    }
}

impl Session for RocksDbSession {
    fn execute(&mut self, batch: &mut Batch) -> impl std::future::Future<Output = ()> + Send {
        if self.multi_get && Self::all_plain_reads(batch) {
            self.multi_get(batch);
        } else if batch
            .slots()
            .iter()
            .any(|slot| slot.request.merge().is_some())
        {
            // A merge is a command the shared adapter would refuse: it goes to the merge
            // operator here, everything else through the adapter.
            for slot in batch.slots_mut() {
                let result = match slot.request.merge() {
                    Some((key, operand)) => {
                        self.engine.merge(key, operand).map(|()| Outcome::Written {
                            bytes: (key.len() + operand.len()) as u64,
                        })
                    }
                    None => execute_one(
                        &mut self.engine,
                        &mut self.scratch,
                        &slot.request,
                        &mut slot.reply,
                    ),
                };
                slot.complete(result);
            }
        } else {
            execute_batch(&mut self.engine, &mut self.scratch, batch);
        }
        std::future::ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickers_parse_from_a_statistics_dump() {
        let dump = "rocksdb.block.cache.miss COUNT : 42\n\
                    rocksdb.block.cache.hit COUNT : 7\n\
                    rocksdb.db.get.micros P50 : 1.0 P95 : 2.0 COUNT : 9 SUM : 12\n";
        let t = parse_tickers(dump);
        assert_eq!(t[0], ("rocksdb.block.cache.miss".to_string(), 42));
        assert_eq!(t[1], ("rocksdb.block.cache.hit".to_string(), 7));
        // The histogram line has " COUNT : 9 SUM" which does not parse as a number.
        assert_eq!(t.len(), 2);
    }

    /// A session's operations set RocksDB's perf level of the thread that runs them, as
    /// db_bench sets its threads' (`-perf_level`, default 1 = kDisable); RocksDB's
    /// `GetPerfLevel` reads it back.
    #[test]
    fn operations_run_at_the_configured_perf_level() {
        use kvlab_core::{block_on, Batch, OpKind};
        for (choice, level) in [("count", 2), ("disable", 1), ("time", 5)] {
            let dir = tempfile::tempdir().unwrap();
            let o = StoreOptions::from_strs("rocksdb.", &[("rocksdb.perf_level", choice)]);
            let config = RocksDbConfig::from_options(Some(dir.path()), o).unwrap();
            let store = RocksDbStore::open(config).unwrap();
            let mut s = store.session().unwrap();
            let mut batch = Batch::new();
            let req = &mut batch.push().request;
            req.kind = OpKind::Read;
            req.key.extend_from_slice(b"k");
            block_on(s.execute(&mut batch));
            assert_eq!(ffi::thread_perf_level(), level, "{choice}");
        }
    }

    #[test]
    fn options_reject_unknown_and_fill_defaults() {
        let o = StoreOptions::from_strs("rocksdb.", &[("rocksdb.compresion", "lz4")]);
        let err = RocksDbConfig::from_options(Some(Path::new("/tmp/x")), o).unwrap_err();
        assert!(err.message.contains("rocksdb.compresion"), "{err}");
        let o = StoreOptions::from_strs("rocksdb.", &[("rocksdb.dir", "/tmp/y")]);
        let c = RocksDbConfig::from_options(None, o).unwrap();
        assert_eq!(c.path, PathBuf::from("/tmp/y"));
        assert_eq!(c.block_cache_size_bytes, 8 << 20);
        assert_eq!(c.column_family, "usertable");
        let o = StoreOptions::from_strs("rocksdb.", &[("rocksdb.column_family", "")]);
        let err = RocksDbConfig::from_options(Some(Path::new("/tmp/x")), o).unwrap_err();
        assert!(err.message.contains("rocksdb.column_family"), "{err}");
        assert!(c.wal);
    }
}
