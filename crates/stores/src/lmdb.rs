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

/// Turns an LMDB error into a [`StoreError`], with advice for the errors a benchmark
/// configuration causes.
fn lmdb_err(context: &str, e: heed::Error, map_size_bytes: u64) -> StoreError {
    let hint = match &e {
        heed::Error::Mdb(MdbError::MapFull) => format!(
            "; the environment is full at lmdb.map_size={map_size_bytes} bytes: \
             reopen with a larger map, e.g. -p lmdb.map_size={}GiB",
            (map_size_bytes.saturating_mul(2) >> 30).max(1)
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
    StoreError::new(StoreErrorKind::Io, format!("{context}: {e}{hint}"))
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
            ops: Ops {
                db: self.db,
                map_size_bytes: self.config.map_size_bytes,
                encoded: Vec::new(),
                current: Record::new(),
                scratch: Record::new(),
            },
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

/// A worker's handle on an [`LmdbStore`].
pub struct LmdbSession {
    env: Env<WithoutTls>,
    ops: Ops,
}

/// The operations of a session, apart from the environment so that a transaction
/// borrowed from the environment can be passed to them.
struct Ops {
    db: Database<'static, Bytes, Bytes>,
    map_size_bytes: u64,
    encoded: Vec<u8>,
    current: Record,
    scratch: Record,
}

fn written(req: &Request) -> Outcome {
    Outcome::Written {
        bytes: req.written_bytes(),
    }
}

impl Ops {
    fn err(&self, context: &str, e: heed::Error) -> StoreError {
        lmdb_err(context, e, self.map_size_bytes)
    }

    fn read(&self, txn: &RoTxn, req: &Request, reply: &mut Record) -> Result<Outcome, StoreError> {
        if req.is_multi_read() {
            return Err(StoreError::multi_read_unsupported("lmdb"));
        }
        match self.db.get(txn, &req.key) {
            Ok(Some(value)) => {
                req.decode_value(value, reply)?;
                Ok(Outcome::Hit {
                    bytes: reply.value_bytes() as u64,
                })
            }
            Ok(None) => Ok(Outcome::Miss),
            Err(e) => Err(self.err("get", e)),
        }
    }

    fn scan(&mut self, txn: &RoTxn, req: &Request) -> Result<Outcome, StoreError> {
        let (mut records, mut bytes) = (0u64, 0u64);
        if req.scan_len == 0 {
            return Ok(Outcome::Scanned { records, bytes });
        }
        let from: (Bound<&[u8]>, Bound<&[u8]>) = (Bound::Included(&req.key), Bound::Unbounded);
        let range = self
            .db
            .range(txn, &from)
            .map_err(|e| lmdb_err("scan", e, self.map_size_bytes))?;
        for entry in range.take(req.scan_len as usize) {
            let (_, value) = entry.map_err(|e| lmdb_err("scan", e, self.map_size_bytes))?;
            req.decode_value(value, &mut self.scratch)?;
            records += 1;
            bytes += self.scratch.value_bytes() as u64;
        }
        Ok(Outcome::Scanned { records, bytes })
    }

    fn write(&mut self, txn: &mut RwTxn, req: &Request) -> Result<Outcome, StoreError> {
        match req.kind {
            OpKind::Insert => {
                self.encoded.clear();
                req.encode_value(&mut self.encoded);
                self.db
                    .put(txn, &req.key, &self.encoded)
                    .map_err(|e| self.err("put", e))?;
                Ok(written(req))
            }
            OpKind::Update if req.blob => {
                // A blob update replaces the value, if there is one.
                match self.db.get(txn, &req.key) {
                    Ok(Some(_)) => {}
                    Ok(None) => return Ok(Outcome::Miss),
                    Err(e) => return Err(self.err("get for update", e)),
                }
                self.db
                    .put(txn, &req.key, req.blob_value())
                    .map_err(|e| self.err("put", e))?;
                Ok(written(req))
            }
            OpKind::Update => {
                // Read, merge the updated fields, write back — atomically, in `txn`.
                match self.db.get(txn, &req.key) {
                    Ok(Some(value)) => self.current.decode_from(value, None).map_err(|e| {
                        StoreError::new(StoreErrorKind::Corrupt, format!("update: {e}"))
                    })?,
                    Ok(None) => return Ok(Outcome::Miss),
                    Err(e) => return Err(self.err("get for update", e)),
                }
                self.current.merge_from(&req.record);
                self.encoded.clear();
                self.current.encode_into(&mut self.encoded);
                self.db
                    .put(txn, &req.key, &self.encoded)
                    .map_err(|e| self.err("put", e))?;
                Ok(written(req))
            }
            OpKind::Delete => {
                self.db
                    .delete(txn, &req.key)
                    .map_err(|e| self.err("delete", e))?;
                Ok(Outcome::Deleted)
            }
            OpKind::Read | OpKind::Scan | OpKind::ReadModifyWrite => {
                unreachable!("Ops::write is only called with a write kind")
            }
        }
    }

    /// Runs any request inside an open write transaction.
    fn in_write_txn(
        &mut self,
        txn: &mut RwTxn,
        req: &Request,
        reply: &mut Record,
    ) -> Result<Outcome, StoreError> {
        match req.kind {
            OpKind::Read => self.read(txn, req, reply),
            OpKind::Scan => self.scan(txn, req),
            OpKind::ReadModifyWrite => Err(StoreError::read_modify_write_unsplit()),
            _ => self.write(txn, req),
        }
    }
}

fn is_write(kind: OpKind) -> bool {
    matches!(kind, OpKind::Insert | OpKind::Update | OpKind::Delete)
}

impl LmdbSession {
    /// Runs one request in its own transaction.
    fn run(&mut self, req: &Request, reply: &mut Record) -> Result<Outcome, StoreError> {
        match req.kind {
            OpKind::Read | OpKind::Scan => {
                let txn = self
                    .env
                    .read_txn()
                    .map_err(|e| self.ops.err("starting a read transaction", e))?;
                if req.kind == OpKind::Read {
                    self.ops.read(&txn, req, reply)
                } else {
                    self.ops.scan(&txn, req)
                }
            }
            OpKind::ReadModifyWrite => Err(StoreError::read_modify_write_unsplit()),
            OpKind::Insert | OpKind::Update | OpKind::Delete => {
                let mut txn = self
                    .env
                    .write_txn()
                    .map_err(|e| self.ops.err("starting a write transaction", e))?;
                let outcome = self.ops.write(&mut txn, req)?;
                txn.commit().map_err(|e| self.ops.err("commit", e))?;
                Ok(outcome)
            }
        }
    }

    /// Runs a whole batch in one write transaction, leaving each slot's result in
    /// `slot.result`; fails (and aborts) on the first engine error or a failed commit.
    fn run_grouped(&mut self, batch: &mut Batch) -> Result<(), StoreError> {
        let mut txn = self
            .env
            .write_txn()
            .map_err(|e| self.ops.err("starting a write transaction", e))?;
        for slot in batch.slots_mut() {
            let result = self
                .ops
                .in_write_txn(&mut txn, &slot.request, &mut slot.reply);
            if let Err(e) = &result {
                if e.kind == StoreErrorKind::Io {
                    // An engine error leaves the transaction unusable: abort it all.
                    return Err(e.clone());
                }
            }
            slot.result = result;
        }
        txn.commit().map_err(|e| self.ops.err("commit", e))
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
