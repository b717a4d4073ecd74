//! The `rocksdb` store: an embedded RocksDB database.
//!
//! A YCSB record is stored as one value holding every field (the single-value encoding
//! of [`kvlab_core::Record`], the layout YCSB's RocksDB binding uses). An update reads
//! the record, replaces the updated fields and writes it back, as that binding does.
//! Scans use a forward iterator from the start key.
//!
//! kvlab links the system RocksDB library (Debian's `librocksdb-dev`), the same one the
//! `db_bench` of Debian's `rocksdb-tools` runs, so the two can be compared like for like.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kvlab_core::inline::{execute_batch, Engine, Scratch};
use kvlab_core::{
    Batch, Capabilities, Request, Session, StatValue, Store, StoreError, StoreErrorKind, StoreStats,
};
use rocksdb::{
    BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, Options, ReadOptions,
    WriteOptions, DB,
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
];

const COMPRESSIONS: &[&str] = &["none", "snappy", "lz4", "lz4hc", "zstd", "zlib", "bz2"];
const COMPACTION_STYLES: &[&str] = &["level", "universal", "fifo"];

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
        };
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
        ]
    }
}

/// An open RocksDB database.
pub struct RocksDbStore {
    db: Arc<DB>,
    opts: Options,
    _cache: Cache,
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
fn io_err(context: &str, e: rocksdb::Error) -> StoreError {
    let text = e.to_string();
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
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_write_buffer_size(config.write_buffer_size_bytes as usize);
        opts.set_max_write_buffer_number(config.max_write_buffer_number as i32);
        opts.set_max_background_jobs(config.max_background_jobs as i32);
        opts.set_max_open_files(config.max_open_files as i32);
        opts.set_target_file_size_base(config.target_file_size_base_bytes);
        opts.set_level_zero_file_num_compaction_trigger(
            config.level0_file_num_compaction_trigger as i32,
        );
        opts.set_use_direct_reads(config.direct_reads);
        opts.set_enable_pipelined_write(config.pipelined_write);
        opts.set_compression_type(match config.compression.as_str() {
            "none" => DBCompressionType::None,
            "snappy" => DBCompressionType::Snappy,
            "lz4" => DBCompressionType::Lz4,
            "lz4hc" => DBCompressionType::Lz4hc,
            "zstd" => DBCompressionType::Zstd,
            "zlib" => DBCompressionType::Zlib,
            _ => DBCompressionType::Bz2,
        });
        opts.set_compaction_style(match config.compaction_style.as_str() {
            "universal" => DBCompactionStyle::Universal,
            "fifo" => DBCompactionStyle::Fifo,
            _ => DBCompactionStyle::Level,
        });
        if config.rate_limit_bytes_per_sec > 0 {
            opts.set_ratelimiter(config.rate_limit_bytes_per_sec as i64, 100_000, 10);
        }
        if config.statistics {
            opts.enable_statistics();
        }
        let cache = Cache::new_lru_cache(config.block_cache_size_bytes as usize)
            .map_err(|e| io_err("creating the block cache", e))?;
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&cache);
        if config.bloom_bits > 0 {
            table.set_bloom_filter(config.bloom_bits as f64, false);
        }
        table.set_cache_index_and_filter_blocks(config.cache_index_and_filter_blocks);
        opts.set_block_based_table_factory(&table);

        if config.destroy_on_open && config.path.exists() {
            DB::destroy(&opts, &config.path).map_err(|e| {
                io_err(
                    &format!("destroying rocksdb at {}", config.path.display()),
                    e,
                )
            })?;
        }
        let db = DB::open(&opts, &config.path)
            .map_err(|e| io_err(&format!("opening rocksdb at {}", config.path.display()), e))?;
        Ok(RocksDbStore {
            db: Arc::new(db),
            opts,
            _cache: cache,
            config,
        })
    }

    /// The effective configuration.
    pub fn config(&self) -> &RocksDbConfig {
        &self.config
    }

    /// RocksDB's statistics tickers (`rocksdb.block.cache.hit` → count), parsed from the
    /// statistics dump. Empty when statistics are off.
    pub fn tickers(&self) -> Vec<(String, u64)> {
        let Some(dump) = self.opts.get_statistics() else {
            return Vec::new();
        };
        parse_tickers(&dump)
    }
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
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<RocksDbSession, StoreError> {
        let mut write = WriteOptions::default();
        write.disable_wal(!self.config.wal);
        write.set_sync(self.config.sync);
        let mut read = ReadOptions::default();
        read.set_verify_checksums(self.config.verify_checksums);
        Ok(RocksDbSession {
            engine: RocksDbEngine {
                db: Arc::clone(&self.db),
                write,
                read,
                verify_checksums: self.config.verify_checksums,
            },
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
            if let Ok(Some(v)) = self.db.property_int_value(*rocks) {
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
}

/// One session's view of the database, with its read and write options.
struct RocksDbEngine {
    db: Arc<DB>,
    write: WriteOptions,
    read: ReadOptions,
    verify_checksums: bool,
}

impl Engine for RocksDbEngine {
    const NAME: &'static str = "rocksdb";

    #[inline]
    fn get<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, StoreError> {
        match self.db.get_pinned_opt(key, &self.read) {
            Ok(value) => Ok(value.map(|v| with(&v))),
            Err(e) => Err(io_err("get", e)),
        }
    }

    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8], _req: &Request) -> Result<(), StoreError> {
        self.db
            .put_opt(key, value, &self.write)
            .map_err(|e| io_err("put", e))
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.db
            .delete_opt(key, &self.write)
            .map_err(|e| io_err("delete", e))
    }

    fn scan(
        &mut self,
        start: &[u8],
        n: u32,
        mut each: impl FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError> {
        // An iterator owns its ReadOptions, so each scan makes its own.
        let mut scan = ReadOptions::default();
        scan.set_verify_checksums(self.verify_checksums);
        let mut it = self.db.raw_iterator_opt(scan);
        it.seek(start);
        let mut records = 0u64;
        while it.valid() && records < u64::from(n) {
            if let Some(value) = it.value() {
                each(value)?;
            }
            records += 1;
            it.next();
        }
        let status = it.status();
        drop(it);
        status.map_err(|e| io_err("scan", e))?;
        Ok(records)
    }
}

impl Session for RocksDbSession {
    fn execute(&mut self, batch: &mut Batch) -> impl std::future::Future<Output = ()> + Send {
        execute_batch(&mut self.engine, &mut self.scratch, batch);
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

    #[test]
    fn options_reject_unknown_and_fill_defaults() {
        let o = StoreOptions::from_strs("rocksdb.", &[("rocksdb.compresion", "lz4")]);
        let err = RocksDbConfig::from_options(Some(Path::new("/tmp/x")), o).unwrap_err();
        assert!(err.message.contains("rocksdb.compresion"), "{err}");
        let o = StoreOptions::from_strs("rocksdb.", &[("rocksdb.dir", "/tmp/y")]);
        let c = RocksDbConfig::from_options(None, o).unwrap();
        assert_eq!(c.path, PathBuf::from("/tmp/y"));
        assert_eq!(c.block_cache_size_bytes, 8 << 20);
        assert!(c.wal);
    }
}
