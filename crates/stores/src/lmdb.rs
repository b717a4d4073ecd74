//! The `lmdb` store: an embedded LMDB environment (a copy-on-write B+tree in one
//! memory-mapped file).
//!
//! [`LmdbConfig`] holds the `lmdb.*` options, [`LmdbStore`] the open environment and its
//! one unnamed database, and each worker drives it through an [`LmdbSession`].
//!
//! A YCSB record is stored as one value holding every field (the single-value encoding
//! of [`kvlab_core::Record`], as for RocksDB); blobs are stored verbatim. An update
//! reads the record, replaces the updated fields and writes it back inside one write
//! transaction, so unlike on RocksDB the read-merge-write is atomic.
//!
//! **Transactions.** LMDB serialises writers: one write transaction at a time in the
//! whole environment, and each commit writes the dirty pages and (unless
//! `lmdb.sync=none`) fsyncs the data file twice (pages, then the meta page). A
//! session therefore commits every write on its own, which is the per-operation
//! durability a YCSB run measures and also its cost. A batch that holds two or more
//! writes is run as one write transaction instead (reads in it see the earlier writes
//! of the batch), committed once, and every slot completes at that commit; if any
//! operation fails with an engine error the transaction is aborted and every slot of
//! the batch reports the error. Reads and scans outside such a batch each open a
//! read-only transaction, which takes a reader slot without locking out writers.
//!
//! LMDB is linked through the `heed` crate, which compiles LMDB's own C source
//! (`lmdb-master-sys`), so no system library is needed.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use heed::types::Bytes;
use heed::WithoutTls;
use heed::{CommitOrAbort, Database, Env, EnvFlags, EnvOpenOptions, MdbError, RoTxn, RwTxn};
use kvlab_core::inline::{execute_one, Engine, ScanEnd, Scratch};
use kvlab_core::{
    Batch, Capabilities, OpKind, Outcome, Record, Request, Session, Store, StoreError,
    StoreErrorKind, StoreStats,
};

use crate::StoreOptions;

/// Option names `lmdb.*` that the store understands (after the `lmdb.` prefix).
pub const OPTION_NAMES: &[&str] = &[
    "dir",
    "map_size",
    "max_readers",
    "sync",
    "writemap",
    "readahead",
    "destroy_on_open",
];

/// The values of `lmdb.sync`: fsync data and meta page on every commit, skip the meta
/// page fsync (`MDB_NOMETASYNC`), or never fsync (`MDB_NOSYNC`).
const SYNC_MODES: &[&str] = &["full", "nometa", "none"];

/// The page size the memory map must be a multiple of (Linux x86-64 and most
/// aarch64 kernels; `heed` checks the actual OS page size again when opening).
const MAP_PAGE_BYTES: u64 = 4096;

/// Effective LMDB options, every default filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct LmdbConfig {
    /// Environment directory (holds `data.mdb` and `lock.mdb`).
    pub path: PathBuf,
    /// Size of the memory map, the most data the environment can hold, in bytes
    /// (default 4 GiB). The data file grows as needed up to this size.
    pub map_size_bytes: u64,
    /// Reader slots: the most read transactions open at once (default 126, LMDB's).
    pub max_readers: u32,
    /// `full` (default), `nometa` or `none`; see the module docs.
    pub sync: String,
    /// Write through a writable memory map instead of `pwrite` (`MDB_WRITEMAP`,
    /// default false).
    pub writemap: bool,
    /// Let the OS read ahead in the data file (default true; false sets
    /// `MDB_NORDAHEAD`, which helps random reads of a database larger than RAM).
    pub readahead: bool,
    /// Delete `data.mdb` and `lock.mdb` before opening (default false).
    pub destroy_on_open: bool,
}

impl LmdbConfig {
    /// Reads `lmdb.*` options; `path` (from `--path`) wins over `lmdb.dir`.
    pub fn from_options(
        path: Option<&Path>,
        mut o: StoreOptions,
    ) -> Result<LmdbConfig, StoreError> {
        let path = o.data_dir(path, "an environment directory")?;
        let map_size_bytes = o.size("map_size", 4 << 30)?;
        if map_size_bytes == 0 || map_size_bytes % MAP_PAGE_BYTES != 0 {
            return Err(StoreError::new(
                StoreErrorKind::Config,
                format!(
                    "option `lmdb.map_size`: {map_size_bytes} bytes is not a positive multiple \
                     of the {MAP_PAGE_BYTES}-byte page size (e.g. 1GiB, 64GiB)"
                ),
            ));
        }
        let max_readers = o.int("max_readers", 126)?;
        let max_readers = u32::try_from(max_readers)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                StoreError::new(
                    StoreErrorKind::Config,
                    format!(
                        "option `lmdb.max_readers`: `{max_readers}` is not between 1 and {}",
                        u32::MAX
                    ),
                )
            })?;
        let config = LmdbConfig {
            path,
            map_size_bytes,
            max_readers,
            sync: o.choice("sync", SYNC_MODES, "full")?,
            writemap: o.bool("writemap", false)?,
            readahead: o.bool("readahead", true)?,
            destroy_on_open: o.bool("destroy_on_open", false)?,
        };
        o.finish(OPTION_NAMES)?;
        Ok(config)
    }

    fn to_stats(&self) -> StoreStats {
        vec![
            ("path".into(), self.path.display().to_string().into()),
            ("map_size_bytes".into(), self.map_size_bytes.into()),
            ("max_readers".into(), u64::from(self.max_readers).into()),
            ("sync".into(), self.sync.clone().into()),
            ("writemap".into(), self.writemap.into()),
            ("readahead".into(), self.readahead.into()),
        ]
    }

    fn flags(&self) -> EnvFlags {
        let mut flags = EnvFlags::empty();
        match self.sync.as_str() {
            "nometa" => flags |= EnvFlags::NO_META_SYNC,
            "none" => flags |= EnvFlags::NO_SYNC,
            _ => {}
        }
        if self.writemap {
            flags |= EnvFlags::WRITE_MAP;
        }
        if !self.readahead {
            flags |= EnvFlags::NO_READ_AHEAD;
        }
        flags
    }
}

/// Twice `map_size_bytes`, as a size option value (`2MiB`, `8GiB`).
fn larger_map(map_size_bytes: u64) -> String {
    let twice = map_size_bytes.saturating_mul(2);
    if twice >= 1 << 30 && twice.is_multiple_of(1 << 30) {
        format!("{}GiB", twice >> 30)
    } else {
        format!("{}MiB", (twice >> 20).max(1))
    }
}

/// Turns an LMDB error into a [`StoreError`], with advice for the errors a benchmark
/// configuration causes.
fn lmdb_err(context: &str, e: heed::Error, map_size_bytes: u64) -> StoreError {
    let hint = match &e {
        heed::Error::Mdb(MdbError::MapFull) => format!(
            "; the environment is full at lmdb.map_size={map_size_bytes} bytes: \
             reopen with a larger map, e.g. -p lmdb.map_size={}",
            larger_map(map_size_bytes)
        ),
        heed::Error::Mdb(MdbError::ReadersFull) => {
            "; more read transactions than reader slots: raise -p lmdb.max_readers".to_string()
        }
        heed::Error::EnvAlreadyOpened => {
            "; this process already has the environment open (close the other store first)"
                .to_string()
        }
        _ => String::new(),
    };
    // A full map (or disk) refuses writes until the store is reopened larger: `full`.
    let kind = match &e {
        heed::Error::Mdb(MdbError::MapFull) => StoreErrorKind::Full,
        heed::Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull => StoreErrorKind::Full,
        _ => StoreErrorKind::Io,
    };
    StoreError::new(kind, format!("{context}: {e}{hint}"))
}

/// An open LMDB environment with kvlab's records in its unnamed database.
pub struct LmdbStore {
    env: Env<WithoutTls>,
    db: Database<'static, Bytes, Bytes>,
    config: LmdbConfig,
}

impl std::fmt::Debug for LmdbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LmdbStore")
            .field("config", &self.config)
            .finish()
    }
}

impl LmdbStore {
    /// Opens (creating if missing) the environment described by `config`.
    pub fn open(config: LmdbConfig) -> Result<LmdbStore, StoreError> {
        let at = config.path.display().to_string();
        let fs_err = |what: &str, e: std::io::Error| {
            StoreError::new(StoreErrorKind::Io, format!("{what} {at}: {e}"))
        };
        if config.destroy_on_open {
            for file in ["data.mdb", "lock.mdb"] {
                match std::fs::remove_file(config.path.join(file)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(fs_err(&format!("removing {file} in"), e)),
                }
            }
        }
        std::fs::create_dir_all(&config.path)
            .map_err(|e| fs_err("creating the lmdb directory", e))?;
        let map_size = usize::try_from(config.map_size_bytes).map_err(|_| {
            StoreError::new(
                StoreErrorKind::Config,
                "option `lmdb.map_size` does not fit this machine's address space",
            )
        })?;
        let mut options = EnvOpenOptions::new().read_txn_without_tls();
        options.map_size(map_size).max_readers(config.max_readers);
        // SAFETY: NO_SYNC and NO_META_SYNC trade durability after an OS crash for speed,
        // which is what `lmdb.sync` asks for; they cannot corrupt memory. The map is not
        // modified outside LMDB: kvlab is the only writer of the directory.
        let env = unsafe {
            options.flags(config.flags());
            options.open(&config.path)
        }
        .map_err(|e| lmdb_err(&format!("opening lmdb at {at}"), e, config.map_size_bytes))?;
        let wtxn = env.write_txn().map_err(|e| {
            lmdb_err(
                "starting the first write transaction",
                e,
                config.map_size_bytes,
            )
        })?;
        let db = env
            .create_databases_and_commit(wtxn, |opener, wtxn| {
                opener
                    .create_database::<Bytes, Bytes>(wtxn, None)
                    .map(CommitOrAbort::<_, ()>::Commit)
            })
            .map_err(|e: heed::Error| {
                lmdb_err("opening the unnamed database", e, config.map_size_bytes)
            })?
            .unwrap_commit();
        Ok(LmdbStore { env, db, config })
    }

    /// The effective configuration.
    pub fn config(&self) -> &LmdbConfig {
        &self.config
    }
}

impl Store for LmdbStore {
    type Session = LmdbSession;

    fn name(&self) -> &'static str {
        "lmdb"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            scan: true,
            persistent: true,
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<LmdbSession, StoreError> {
        Ok(LmdbSession {
            env: self.env.clone(),
            db: Db {
                db: self.db,
                map_size_bytes: self.config.map_size_bytes,
            },
            scratch: Scratch::new(),
        })
    }

    fn options(&self) -> StoreStats {
        self.config.to_stats()
    }

    /// The environment's shape: map size, pages used, B-tree depth and page counts,
    /// entries, reader slots, and the data file's size on disk.
    fn stats(&self) -> StoreStats {
        let info = self.env.info();
        let mut out: StoreStats = vec![
            ("map_size_bytes".into(), (info.map_size as u64).into()),
            (
                "last_page_number".into(),
                (info.last_page_number as u64).into(),
            ),
            ("last_txn_id".into(), (info.last_txn_id as u64).into()),
            (
                "readers_max".into(),
                u64::from(info.maximum_number_of_readers).into(),
            ),
            (
                "readers_used".into(),
                u64::from(info.number_of_readers).into(),
            ),
        ];
        if let Ok(txn) = self.env.read_txn() {
            if let Ok(stat) = self.db.stat(&txn) {
                let page = u64::from(stat.page_size);
                out.extend([
                    ("entries".into(), (stat.entries as u64).into()),
                    ("depth".into(), u64::from(stat.depth).into()),
                    ("branch_pages".into(), (stat.branch_pages as u64).into()),
                    ("leaf_pages".into(), (stat.leaf_pages as u64).into()),
                    ("overflow_pages".into(), (stat.overflow_pages as u64).into()),
                    ("page_size_bytes".into(), page.into()),
                    (
                        "used_bytes".into(),
                        ((info.last_page_number as u64 + 1) * page).into(),
                    ),
                ]);
            }
        }
        if let Ok(size) = self.env.real_disk_size() {
            out.push(("file_size_bytes".into(), size.into()));
        }
        out
    }

    /// Forces the data file to disk (`mdb_env_sync` with force), which matters when
    /// `lmdb.sync` is `nometa` or `none`.
    fn flush(&self) -> Result<(), StoreError> {
        self.env.force_sync().map_err(|e| {
            lmdb_err(
                "syncing the lmdb environment",
                e,
                self.config.map_size_bytes,
            )
        })
    }
}

/// A worker's handle on an [`LmdbStore`]: each request (or each batch of several
/// writes) runs in a transaction of its own, through the shared embedded-store adapter
/// ([`kvlab_core::inline`]).
pub struct LmdbSession {
    env: Env<WithoutTls>,
    db: Db,
    scratch: Scratch,
}

/// The database and what its errors name.
#[derive(Clone, Copy)]
struct Db {
    db: Database<'static, Bytes, Bytes>,
    map_size_bytes: u64,
}

impl Db {
    fn err(&self, context: &str, e: heed::Error) -> StoreError {
        lmdb_err(context, e, self.map_size_bytes)
    }
}

/// The transaction an engine works in.
enum Txn<'t, 'e> {
    /// Reads and scans.
    Read(&'t RoTxn<'e, WithoutTls>),
    /// Anything; a partial update's read and write are atomic in it.
    Write(&'t mut RwTxn<'e>),
}

/// The engine's primitives inside one transaction.
struct TxnEngine<'t, 'e> {
    db: Db,
    txn: Txn<'t, 'e>,
}

impl<'e> TxnEngine<'_, 'e> {
    fn read_txn(&self) -> &RoTxn<'_, WithoutTls> {
        match &self.txn {
            Txn::Read(t) => t,
            Txn::Write(t) => t,
        }
    }

    fn write_txn(&mut self) -> Result<&mut RwTxn<'e>, StoreError> {
        match &mut self.txn {
            Txn::Write(t) => Ok(t),
            Txn::Read(_) => Err(StoreError::new(
                StoreErrorKind::Unsupported,
                "lmdb: a write in a read transaction",
            )),
        }
    }
}

impl Engine for TxnEngine<'_, '_> {
    const NAME: &'static str = "lmdb";

    fn get<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, StoreError> {
        match self.db.db.get(self.read_txn(), key) {
            Ok(value) => Ok(value.map(with)),
            Err(e) => Err(self.db.err("get", e)),
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8], _req: &Request) -> Result<(), StoreError> {
        let db = self.db;
        db.db
            .put(self.write_txn()?, key, value)
            .map_err(|e| db.err("put", e))
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        let db = self.db;
        db.db
            .delete(self.write_txn()?, key)
            .map(drop)
            .map_err(|e| db.err("delete", e))
    }

    fn scan(
        &mut self,
        start: &[u8],
        n: u32,
        mut each: impl FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<ScanEnd, StoreError> {
        let from: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(start), Bound::Unbounded);
        let range = self
            .db
            .db
            .range(self.read_txn(), &from)
            .map_err(|e| self.db.err("scan", e))?;
        let mut end = ScanEnd::default();
        for entry in range.take(n as usize) {
            let (key, value) = entry.map_err(|e| self.db.err("scan", e))?;
            end.starts_at_key |= end.records == 0 && key == start;
            each(value)?;
            end.records += 1;
        }
        Ok(end)
    }
}

fn is_write(kind: OpKind) -> bool {
    matches!(kind, OpKind::Insert | OpKind::Update | OpKind::Delete)
}

impl LmdbSession {
    /// Runs one request in its own transaction: a read transaction for reads and scans
    /// (and for what the adapter refuses), a committed write transaction for writes.
    fn run(&mut self, req: &Request, reply: &mut Record) -> Result<Outcome, StoreError> {
        let db = self.db;
        if !is_write(req.kind) {
            let txn = self
                .env
                .read_txn()
                .map_err(|e| db.err("starting a read transaction", e))?;
            let mut engine = TxnEngine {
                db,
                txn: Txn::Read(&txn),
            };
            return execute_one(&mut engine, &mut self.scratch, req, reply);
        }
        self.in_write_txn(|engine, scratch| execute_one(engine, scratch, req, reply))
    }

    /// Runs `work` in a write transaction of its own and commits it; an error from
    /// `work` aborts it.
    fn in_write_txn<T>(
        &mut self,
        work: impl FnOnce(&mut TxnEngine<'_, '_>, &mut Scratch) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let db = self.db;
        let mut txn = self
            .env
            .write_txn()
            .map_err(|e| db.err("starting a write transaction", e))?;
        let mut engine = TxnEngine {
            db,
            txn: Txn::Write(&mut txn),
        };
        let done = work(&mut engine, &mut self.scratch)?;
        txn.commit().map_err(|e| db.err("commit", e))?;
        Ok(done)
    }

    /// Runs a whole batch in one write transaction, leaving each slot's result in
    /// `slot.result`; fails (and aborts) on the first engine error or a failed commit.
    fn run_grouped(&mut self, batch: &mut Batch) -> Result<(), StoreError> {
        self.in_write_txn(|engine, scratch| {
            for slot in batch.slots_mut() {
                let result = execute_one(engine, scratch, &slot.request, &mut slot.reply);
                if let Err(e) = &result {
                    if matches!(e.kind, StoreErrorKind::Io | StoreErrorKind::Full) {
                        // An engine error leaves the transaction unusable: abort it all.
                        return Err(e.clone());
                    }
                }
                slot.result = result;
            }
            Ok(())
        })
    }
}

impl Session for LmdbSession {
    fn execute(&mut self, batch: &mut Batch) -> impl std::future::Future<Output = ()> + Send {
        let writes = batch
            .slots()
            .iter()
            .filter(|s| is_write(s.request.kind))
            .count();
        if writes >= 2 {
            let grouped = self.run_grouped(batch);
            let len = batch.len();
            for slot in batch.slots_mut() {
                let result = match &grouped {
                    Ok(()) => std::mem::replace(&mut slot.result, Ok(Outcome::Miss)),
                    Err(e) => Err(StoreError::new(
                        e.kind,
                        format!("batch of {len} requests rolled back: {}", e.message),
                    )),
                };
                slot.complete(result);
            }
        } else {
            for slot in batch.slots_mut() {
                let result = self.run(&slot.request, &mut slot.reply);
                slot.complete(result);
            }
        }
        std::future::ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> StoreOptions {
        StoreOptions::from_strs("lmdb.", pairs)
    }

    #[test]
    fn options_fill_defaults_and_set_flags() {
        let c = LmdbConfig::from_options(None, opts(&[("lmdb.dir", "/tmp/l")])).unwrap();
        assert_eq!(c.path, PathBuf::from("/tmp/l"));
        assert_eq!(c.map_size_bytes, 4 << 30);
        assert_eq!(c.max_readers, 126);
        assert_eq!(c.flags(), EnvFlags::empty());
        let c = LmdbConfig::from_options(
            Some(Path::new("/tmp/m")),
            opts(&[
                ("lmdb.sync", "nometa"),
                ("lmdb.writemap", "on"),
                ("lmdb.readahead", "false"),
                ("lmdb.map_size", "64MiB"),
            ]),
        )
        .unwrap();
        assert_eq!(
            c.flags(),
            EnvFlags::NO_META_SYNC | EnvFlags::WRITE_MAP | EnvFlags::NO_READ_AHEAD
        );
        assert_eq!(c.map_size_bytes, 64 << 20);
        let c = LmdbConfig::from_options(Some(Path::new("/x")), opts(&[("lmdb.sync", "none")]))
            .unwrap();
        assert_eq!(c.flags(), EnvFlags::NO_SYNC);
    }

    #[test]
    fn bad_options_are_named() {
        let err = LmdbConfig::from_options(None, opts(&[])).unwrap_err();
        assert!(err.message.contains("lmdb.dir"), "{err}");
        let p = Some(Path::new("/tmp/x"));
        let err = LmdbConfig::from_options(p, opts(&[("lmdb.sync", "sometimes")])).unwrap_err();
        assert!(err.message.contains("one of: full, nometa, none"), "{err}");
        let err = LmdbConfig::from_options(p, opts(&[("lmdb.map_size", "1000")])).unwrap_err();
        assert!(err.message.contains("`lmdb.map_size`: 1000 bytes"), "{err}");
        let err = LmdbConfig::from_options(p, opts(&[("lmdb.max_readers", "0")])).unwrap_err();
        assert!(err.message.contains("lmdb.max_readers"), "{err}");
    }
}
