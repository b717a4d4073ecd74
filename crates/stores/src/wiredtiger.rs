//! The `wiredtiger` store: an embedded WiredTiger database (the B-tree engine inside
//! MongoDB), linked against the system library (Debian's `libwiredtiger-dev`, 3.2.1).
//!
//! [`WiredTigerConfig`] holds the `wiredtiger.*` options and [`WiredTigerStore`] the
//! open connection with its one table, `table:kvlab` (`key_format=u,value_format=u`:
//! raw bytes); each worker gets a [`WiredTigerSession`], which owns one WiredTiger
//! session and one cursor on the table — WiredTiger sessions are single-threaded, so
//! one per worker is exactly their intended use.
//!
//! A YCSB record is stored as one value holding every field (the single-value encoding
//! of [`kvlab_core::Record`], as for RocksDB); blobs are stored verbatim. Every
//! operation is its own auto-committed transaction. An update searches, merges the
//! updated fields and inserts the result (insert overwrites), two transactions as on
//! RocksDB, so concurrent updates of one key may lose one of them; two writers racing
//! on one key can also get `WT_ROLLBACK`, which is reported as an error. Scans position
//! with `search_near` and walk forward with `next`.
//!
//! Durability follows WiredTiger's model: data reaches disk at checkpoints (every
//! `wiredtiger.checkpoint_s` seconds, at [`Store::flush`] and when the store is
//! dropped); with `wiredtiger.log` each commit is also written to the write-ahead log,
//! and with `wiredtiger.sync` that log is fsynced at every commit.
//!
//! The C API is reached through a small hand-written declaration of its handle structs
//! (`wiredtiger/ffi.rs`); no published crate targets the 3.2 API.

mod ffi;

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::Arc;

use kvlab_core::inline::{execute_batch, Engine, ScanEnd, Scratch};
use kvlab_core::{
    Batch, Capabilities, Request, Session, StatValue, Store, StoreError, StoreErrorKind, StoreStats,
};

use self::ffi::{WtConnection, WtCursor, WtEventHandler, WtItem, WtSession, WT_NOTFOUND};
use crate::StoreOptions;

/// Option names `wiredtiger.*` that the store understands (after the prefix).
pub const OPTION_NAMES: &[&str] = &[
    "dir",
    "cache_size",
    "log",
    "sync",
    "checkpoint_s",
    "block_compressor",
    "eviction_threads",
    "session_max",
    "config",
    "destroy_on_open",
];

/// Block compressors: Debian's package ships snappy and zlib as loadable extensions
/// (`libwiredtiger_snappy.so`, `libwiredtiger_zlib.so`), loaded when chosen.
const COMPRESSORS: &[&str] = &["none", "snappy", "zlib"];

/// The table every record lives in.
const TABLE_URI: &CStr = c"table:kvlab";

/// `WT_ROLLBACK` (wiredtiger.h, "Error returns").
const WT_ROLLBACK: c_int = -31800;
/// `WT_CACHE_FULL` (wiredtiger.h, "Error returns").
const WT_CACHE_FULL: c_int = -31807;
/// `ENOSPC` ("No space left on device"), which WiredTiger returns as an `errno` code:
/// 28 on Linux (asm-generic/errno-base.h).
const ENOSPC: c_int = 28;
/// `EINVAL`: WiredTiger's answer to a configuration string it rejects.
const EINVAL: c_int = 22;

/// Effective WiredTiger options, every default filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct WiredTigerConfig {
    /// Database home directory.
    pub path: PathBuf,
    /// Cache size in bytes (default 100 MiB, WiredTiger's default).
    pub cache_size_bytes: u64,
    /// Write-ahead log on (default false, WiredTiger's default).
    pub log: bool,
    /// fsync the log at every commit (default false; needs `log`).
    pub sync: bool,
    /// Seconds between background checkpoints; 0 disables them (default 60, MongoDB's
    /// interval).
    pub checkpoint_s: u64,
    /// `none` (default, WiredTiger's), `snappy` or `zlib`; applies when the table is
    /// created.
    pub block_compressor: String,
    /// Most eviction worker threads (`eviction=(threads_max=N)`, 1..=20, default 8).
    pub eviction_threads: u64,
    /// Most sessions open at once, kvlab's and WiredTiger's own (default 256).
    pub session_max: u64,
    /// Extra `wiredtiger_open` configuration appended verbatim (default empty).
    pub config: String,
    /// Delete the database files in the directory before opening (default false).
    pub destroy_on_open: bool,
}

impl WiredTigerConfig {
    /// Reads `wiredtiger.*` options; `path` (from `--path`) wins over `wiredtiger.dir`.
    pub fn from_options(
        path: Option<&Path>,
        mut o: StoreOptions,
    ) -> Result<WiredTigerConfig, StoreError> {
        let config_err = |m: String| StoreError::new(StoreErrorKind::Config, m);
        let path = o.data_dir(path, "a database directory")?;
        let cache_size_bytes = o.size("cache_size", 100 << 20)?;
        if !(1 << 20..=10 << 40).contains(&cache_size_bytes) {
            return Err(config_err(format!(
                "option `wiredtiger.cache_size`: {cache_size_bytes} bytes is not between 1MiB \
                 and 10TiB"
            )));
        }
        let int_in = |o: &mut StoreOptions, name: &str, default: i64, lo: i64, hi: i64| {
            let v = o.int(name, default)?;
            if (lo..=hi).contains(&v) {
                Ok(v as u64)
            } else {
                Err(config_err(format!(
                    "option `wiredtiger.{name}`: `{v}` is not between {lo} and {hi}"
                )))
            }
        };
        let config = WiredTigerConfig {
            path,
            cache_size_bytes,
            log: o.bool("log", false)?,
            sync: o.bool("sync", false)?,
            checkpoint_s: int_in(&mut o, "checkpoint_s", 60, 0, 100_000)?,
            block_compressor: o.choice("block_compressor", COMPRESSORS, "none")?,
            eviction_threads: int_in(&mut o, "eviction_threads", 8, 1, 20)?,
            session_max: int_in(&mut o, "session_max", 256, 1, 1 << 20)?,
            config: o.string("config", ""),
            destroy_on_open: o.bool("destroy_on_open", false)?,
        };
        o.finish(OPTION_NAMES)?;
        if config.sync && !config.log {
            return Err(config_err(
                "option `wiredtiger.sync=true` syncs the write-ahead log, which is off: \
                 add -p wiredtiger.log=true"
                    .into(),
            ));
        }
        Ok(config)
    }

    /// The `wiredtiger_open` configuration string.
    pub fn open_config(&self) -> Result<String, StoreError> {
        let mut c = format!(
            "create,cache_size={},session_max={},statistics=(fast),\
             eviction=(threads_min=1,threads_max={}),log=(enabled={}),\
             transaction_sync=(enabled={},method=fsync),checkpoint=(wait={})",
            self.cache_size_bytes,
            self.session_max,
            self.eviction_threads,
            self.log,
            self.sync,
            self.checkpoint_s
        );
        if self.block_compressor != "none" {
            let lib = compressor_extension(&self.block_compressor)?;
            c.push_str(&format!(",extensions=[\"{}\"]", lib.display()));
        }
        if !self.config.is_empty() {
            c.push(',');
            c.push_str(&self.config);
        }
        Ok(c)
    }

    /// The table's creation configuration.
    fn table_config(&self) -> String {
        let mut c = String::from("key_format=u,value_format=u");
        if self.block_compressor != "none" {
            c.push_str(",block_compressor=");
            c.push_str(&self.block_compressor);
        }
        c
    }

    fn to_stats(&self) -> StoreStats {
        vec![
            ("path".into(), self.path.display().to_string().into()),
            ("cache_size_bytes".into(), self.cache_size_bytes.into()),
            ("log".into(), self.log.into()),
            ("sync".into(), self.sync.into()),
            ("checkpoint_s".into(), self.checkpoint_s.into()),
            (
                "block_compressor".into(),
                self.block_compressor.clone().into(),
            ),
            ("eviction_threads".into(), self.eviction_threads.into()),
            ("session_max".into(), self.session_max.into()),
            ("config".into(), self.config.clone().into()),
        ]
    }
}

/// Finds the shared library of a compressor extension where Debian (or a local
/// build) installs it.
fn compressor_extension(name: &str) -> Result<PathBuf, StoreError> {
    let file = format!("libwiredtiger_{name}.so");
    let dirs = [
        format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH),
        "/usr/lib64".to_string(),
        "/usr/lib".to_string(),
        "/usr/local/lib".to_string(),
    ];
    dirs.iter()
        .map(|d| Path::new(d).join(&file))
        .find(|p| p.exists())
        .ok_or_else(|| {
            StoreError::new(
                StoreErrorKind::Config,
                format!(
                    "option `wiredtiger.block_compressor={name}` needs the extension {file}, \
                     found in none of {}",
                    dirs.join(", ")
                ),
            )
        })
}

thread_local! {
    /// Error messages WiredTiger posted on this thread during [`capture`].
    static CAPTURED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs a WiredTiger call that may post error messages, and returns its code with the
/// messages (WiredTiger's return codes alone say only "Invalid argument").
fn capture(call: impl FnOnce() -> c_int) -> (c_int, String) {
    CAPTURED.with(|c| *c.borrow_mut() = Some(String::new()));
    let rc = call();
    let messages = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (rc, messages)
}

unsafe extern "C" fn handle_error(
    _handler: *mut WtEventHandler,
    _session: *mut WtSession,
    _error: c_int,
    message: *const c_char,
) -> c_int {
    // SAFETY: WiredTiger passes a NUL-terminated message valid for this call.
    let message = unsafe { CStr::from_ptr(message) }.to_string_lossy();
    let kept = CAPTURED.with(|c| match c.borrow_mut().as_mut() {
        Some(buf) => {
            if !buf.is_empty() {
                buf.push_str("; ");
            }
            buf.push_str(&message);
            true
        }
        None => false,
    });
    if !kept {
        // Outside kvlab's calls (an operation's error, a background thread): stderr,
        // as WiredTiger's default handler does.
        eprintln!("wiredtiger: {message}");
    }
    0
}

unsafe extern "C" fn handle_message(
    _handler: *mut WtEventHandler,
    _session: *mut WtSession,
    message: *const c_char,
) -> c_int {
    // WiredTiger's default prints these to stdout, where kvlab writes results.
    // SAFETY: WiredTiger passes a NUL-terminated message valid for this call.
    eprintln!(
        "wiredtiger: {}",
        unsafe { CStr::from_ptr(message) }.to_string_lossy()
    );
    0
}

unsafe extern "C" fn handle_progress(
    _handler: *mut WtEventHandler,
    _session: *mut WtSession,
    _operation: *const c_char,
    _progress: u64,
) -> c_int {
    0
}

/// The event handler of one connection: errors captured or sent to stderr, messages to
/// stderr, progress ignored.
fn event_handler() -> Box<WtEventHandler> {
    Box::new(WtEventHandler {
        handle_error: Some(handle_error),
        handle_message: Some(handle_message),
        handle_progress: Some(handle_progress),
        handle_close: None,
    })
}

/// The message of a WiredTiger or `errno` code.
fn strerror(code: c_int) -> String {
    // SAFETY: wiredtiger_strerror returns a static NUL-terminated string for any code.
    unsafe { CStr::from_ptr(ffi::wiredtiger_strerror(code)) }
        .to_string_lossy()
        .into_owned()
}

/// A failed WiredTiger call as a [`StoreError`], with WiredTiger's own messages when
/// they were captured.
fn wt_err(context: &str, code: c_int, messages: &str) -> StoreError {
    let mut m = format!("{context}: {} (WiredTiger error {code})", strerror(code));
    if !messages.is_empty() {
        m.push_str(": ");
        m.push_str(messages);
    }
    match code {
        WT_ROLLBACK => m.push_str(
            "; the operation conflicted with a concurrent write to the same key or could \
             not get cache space, and was rolled back",
        ),
        WT_CACHE_FULL => m.push_str("; the cache is full: raise -p wiredtiger.cache_size"),
        _ => {}
    }
    // Out of space: the cache (WT_CACHE_FULL) or the disk (ENOSPC, an errno code).
    let kind = if code == WT_CACHE_FULL || code == ENOSPC {
        StoreErrorKind::Full
    } else {
        StoreErrorKind::Io
    };
    StoreError::new(kind, m)
}

fn check(context: &str, code: c_int) -> Result<(), StoreError> {
    if code == 0 {
        Ok(())
    } else {
        Err(wt_err(context, code, ""))
    }
}

/// An open `WT_CONNECTION`, closed when the last holder drops it. Sessions hold it too,
/// so the connection always closes after every session.
struct Connection {
    raw: *mut WtConnection,
    /// The event handler WiredTiger keeps a pointer to (from `Box::into_raw`); freed
    /// after the close.
    handler: *mut WtEventHandler,
}

// SAFETY: a WT_CONNECTION may be shared between threads: its methods are thread-safe
// (WiredTiger's "Multithreading" documentation).
unsafe impl Send for Connection {}
// SAFETY: as above.
unsafe impl Sync for Connection {}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: the handle is open, and every session of kvlab's has been closed.
        let rc = unsafe { ((*self.raw).close)(self.raw, ptr::null()) };
        if rc != 0 {
            eprintln!("wiredtiger: closing the connection: {}", strerror(rc));
        }
        // SAFETY: the handler came from Box::into_raw, and the closed connection no
        // longer uses it.
        drop(unsafe { Box::from_raw(self.handler) });
    }
}

/// An open `WT_SESSION`, closed (with its cursors) on drop, before the connection.
struct SessionHandle {
    raw: *mut WtSession,
    _conn: Arc<Connection>,
}

impl SessionHandle {
    fn open(conn: &Arc<Connection>) -> Result<SessionHandle, StoreError> {
        let mut raw = ptr::null_mut();
        let (rc, messages) = capture(|| {
            // SAFETY: the connection is open; open_session is thread-safe.
            unsafe { ((*conn.raw).open_session)(conn.raw, ptr::null_mut(), ptr::null(), &mut raw) }
        });
        if rc != 0 {
            let mut e = wt_err("opening a wiredtiger session", rc, &messages);
            e.message
                .push_str(" (raise -p wiredtiger.session_max if sessions ran out)");
            return Err(e);
        }
        Ok(SessionHandle {
            raw,
            _conn: Arc::clone(conn),
        })
    }

    /// Opens a cursor on `uri`, owned by this session.
    fn open_cursor(&self, uri: &CStr) -> Result<*mut WtCursor, StoreError> {
        let mut cursor = ptr::null_mut();
        let (rc, messages) = capture(|| {
            // SAFETY: the session is open and used by one thread at a time.
            unsafe {
                ((*self.raw).open_cursor)(
                    self.raw,
                    uri.as_ptr(),
                    ptr::null_mut(),
                    ptr::null(),
                    &mut cursor,
                )
            }
        });
        if rc != 0 {
            return Err(wt_err(
                &format!("opening a cursor on {}", uri.to_string_lossy()),
                rc,
                &messages,
            ));
        }
        Ok(cursor)
    }

    fn checkpoint(&self) -> Result<(), StoreError> {
        // SAFETY: the session is open.
        let (rc, messages) = capture(|| unsafe { ((*self.raw).checkpoint)(self.raw, ptr::null()) });
        if rc != 0 {
            return Err(wt_err("checkpoint", rc, &messages));
        }
        Ok(())
    }
}

impl Drop for SessionHandle {
    fn drop(&mut self) {
        // SAFETY: the session is open; closing it closes its cursors.
        let rc = unsafe { ((*self.raw).close)(self.raw, ptr::null()) };
        if rc != 0 {
            eprintln!("wiredtiger: closing a session: {}", strerror(rc));
        }
    }
}

/// An open WiredTiger database holding kvlab's records in `table:kvlab`.
pub struct WiredTigerStore {
    conn: Arc<Connection>,
    config: WiredTigerConfig,
    version: String,
}

impl std::fmt::Debug for WiredTigerStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WiredTigerStore")
            .field("config", &self.config)
            .field("version", &self.version)
            .finish()
    }
}

/// Deletes WiredTiger's files (`WiredTiger*`) and kvlab's table file from `dir`.
fn destroy(dir: &Path) -> Result<(), StoreError> {
    let io = |what: &str, e: std::io::Error| {
        StoreError::new(StoreErrorKind::Io, format!("{what} {}: {e}", dir.display()))
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io("listing", e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io("listing", e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("WiredTiger") || name == "kvlab.wt" {
            std::fs::remove_file(entry.path())
                .map_err(|e| io(&format!("removing {name} from"), e))?;
        }
    }
    Ok(())
}

impl WiredTigerStore {
    /// Opens (creating if missing) the database described by `config`.
    pub fn open(config: WiredTigerConfig) -> Result<WiredTigerStore, StoreError> {
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: the out-pointers are valid; the result is a static string.
        let version =
            unsafe { CStr::from_ptr(ffi::wiredtiger_version(&mut major, &mut minor, &mut patch)) }
                .to_string_lossy()
                .into_owned();
        if (major, minor) != (3, 2) {
            return Err(StoreError::new(
                StoreErrorKind::Config,
                format!(
                    "kvlab declares WiredTiger 3.2's handle layout, but the linked library is \
                     {version}"
                ),
            ));
        }
        let at = config.path.display().to_string();
        if config.destroy_on_open {
            destroy(&config.path)?;
        }
        std::fs::create_dir_all(&config.path)
            .map_err(|e| StoreError::new(StoreErrorKind::Io, format!("creating {at}: {e}")))?;
        let open_config = config.open_config()?;
        let bad_string = |what: &str| {
            StoreError::new(
                StoreErrorKind::Config,
                format!("{what} contains a NUL byte"),
            )
        };
        let home = CString::new(at.as_bytes()).map_err(|_| bad_string("the path"))?;
        let c_config =
            CString::new(open_config.as_bytes()).map_err(|_| bad_string("`wiredtiger.config`"))?;
        let mut raw = ptr::null_mut();
        let handler = Box::into_raw(event_handler());
        let (rc, messages) = capture(|| {
            // SAFETY: valid NUL-terminated strings and out-pointer; the handler is on the
            // heap and freed only after the connection closes (or the open fails).
            unsafe { ffi::wiredtiger_open(home.as_ptr(), handler, c_config.as_ptr(), &mut raw) }
        });
        if rc != 0 {
            let mut e = wt_err(
                &format!("opening wiredtiger at {at} with `{open_config}`"),
                rc,
                &messages,
            );
            if rc == EINVAL {
                e.kind = StoreErrorKind::Config;
            }
            // SAFETY: the handler came from Box::into_raw; the open failed, so nothing
            // holds it.
            drop(unsafe { Box::from_raw(handler) });
            return Err(e);
        }
        let store = WiredTigerStore {
            conn: Arc::new(Connection { raw, handler }),
            config,
            version,
        };
        let session = SessionHandle::open(&store.conn)?;
        let table = CString::new(store.config.table_config()).expect("no NUL in table config");
        let (rc, messages) = capture(|| {
            // SAFETY: the session is open; create succeeds when the table exists.
            unsafe { ((*session.raw).create)(session.raw, TABLE_URI.as_ptr(), table.as_ptr()) }
        });
        if rc != 0 {
            return Err(wt_err("creating table:kvlab", rc, &messages));
        }
        Ok(store)
    }

    /// The effective configuration.
    pub fn config(&self) -> &WiredTigerConfig {
        &self.config
    }

    /// Every statistic of the connection (`statistics:` cursor), as WiredTiger's
    /// description (`cache: bytes currently in the cache`) and value.
    pub fn statistics(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let session = SessionHandle::open(&self.conn)?;
        let cursor = session.open_cursor(c"statistics:")?;
        let mut out = Vec::new();
        loop {
            // SAFETY: the cursor is open on this thread's session.
            let rc = unsafe { ((*cursor).next)(cursor) };
            if rc == WT_NOTFOUND {
                break;
            }
            check("reading statistics", rc)?;
            let (mut desc, mut printable, mut value): (*const c_char, *const c_char, i64) =
                (ptr::null(), ptr::null(), 0);
            // SAFETY: a statistics cursor's value format is "SSq": two strings and an
            // int64, returned through these pointers and valid until the next call.
            let rc = unsafe {
                ((*cursor).get_value)(
                    cursor,
                    &mut desc as *mut *const c_char,
                    &mut printable as *mut *const c_char,
                    &mut value as *mut i64,
                )
            };
            check("reading a statistic", rc)?;
            // SAFETY: as above, `desc` is a NUL-terminated string.
            let desc = unsafe { CStr::from_ptr(desc) }
                .to_string_lossy()
                .into_owned();
            out.push((desc, value));
        }
        Ok(out)
    }
}

/// The statistics copied into a result: WiredTiger's description and kvlab's name.
const STATISTICS: &[(&str, &str)] = &[
    ("cache: bytes currently in the cache", "cache_bytes_in_use"),
    ("cache: maximum bytes configured", "cache_bytes_max"),
    (
        "cache: tracked dirty bytes in the cache",
        "cache_dirty_bytes",
    ),
    ("cache: bytes read into cache", "cache_bytes_read"),
    ("cache: bytes written from cache", "cache_bytes_written"),
    ("cache: pages read into cache", "cache_pages_read"),
    ("cache: pages written from cache", "cache_pages_written"),
    (
        "cache: pages requested from the cache",
        "cache_pages_requested",
    ),
    ("cache: modified pages evicted", "pages_evicted_modified"),
    (
        "cache: unmodified pages evicted",
        "pages_evicted_unmodified",
    ),
    (
        "cache: pages evicted by application threads",
        "pages_evicted_by_application_threads",
    ),
    ("block-manager: bytes read", "block_bytes_read"),
    ("block-manager: bytes written", "block_bytes_written"),
    ("log: log bytes written", "log_bytes_written"),
    ("log: log sync operations", "log_syncs"),
    ("transaction: transaction checkpoints", "checkpoints"),
    (
        "transaction: transactions committed",
        "transactions_committed",
    ),
    (
        "transaction: transactions rolled back",
        "transactions_rolled_back",
    ),
];

impl Store for WiredTigerStore {
    type Session = WiredTigerSession;

    fn name(&self) -> &'static str {
        "wiredtiger"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            scan: true,
            persistent: true,
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<WiredTigerSession, StoreError> {
        let handle = SessionHandle::open(&self.conn)?;
        let cursor = handle.open_cursor(TABLE_URI)?;
        Ok(WiredTigerSession {
            engine: CursorEngine { cursor },
            _session: handle,
            scratch: Scratch::new(),
        })
    }

    fn options(&self) -> StoreStats {
        self.config.to_stats()
    }

    /// Cache occupancy and traffic, evictions, log bytes and checkpoints, from the
    /// connection's `statistics:` cursor; `pages_evicted` sums modified and unmodified
    /// pages. A failure to read them is reported as a `statistics_error` entry.
    fn stats(&self) -> StoreStats {
        let mut out: StoreStats = vec![("version".into(), self.version.clone().into())];
        let all = match self.statistics() {
            Ok(all) => all,
            Err(e) => {
                out.push(("statistics_error".into(), e.to_string().into()));
                return out;
            }
        };
        let find = |desc: &str| all.iter().find(|(d, _)| d == desc).map(|(_, v)| *v);
        for (desc, ours) in STATISTICS {
            if let Some(v) = find(desc) {
                out.push((ours.to_string(), StatValue::Int(v)));
            }
        }
        let evicted = find("cache: modified pages evicted").unwrap_or(0)
            + find("cache: unmodified pages evicted").unwrap_or(0);
        out.push(("pages_evicted".into(), StatValue::Int(evicted)));
        out
    }

    /// Writes a checkpoint: everything committed so far is in the data files.
    fn flush(&self) -> Result<(), StoreError> {
        SessionHandle::open(&self.conn)?.checkpoint()
    }
}

/// A worker's handle on a [`WiredTigerStore`]: one WiredTiger session and one cursor
/// on the table, run by the shared embedded-store adapter ([`kvlab_core::inline`]).
pub struct WiredTigerSession {
    engine: CursorEngine,
    /// Owns the cursor: closing the session on drop closes it too.
    _session: SessionHandle,
    scratch: Scratch,
}

/// The engine's primitives on one cursor.
struct CursorEngine {
    cursor: *mut WtCursor,
}

// SAFETY: a WiredTiger session and its cursors may move between threads as long as
// one thread uses them at a time, which `Session`'s contract guarantees (`&mut self`).
unsafe impl Send for WiredTigerSession {}

impl CursorEngine {
    // The cursor calls below are sound for the same reasons: the cursor is open on this
    // session, which only this value uses, and every WtItem handed to set_key/set_value
    // points at bytes that outlive the call that consumes them.

    fn set_key(&mut self, key: &[u8]) {
        let item = WtItem::of(key);
        // SAFETY: see above; WiredTiger copies the item's pointer and length.
        unsafe { ((*self.cursor).set_key)(self.cursor, &item as *const WtItem) }
    }

    fn set_value(&mut self, value: &[u8]) {
        let item = WtItem::of(value);
        // SAFETY: see above.
        unsafe { ((*self.cursor).set_value)(self.cursor, &item as *const WtItem) }
    }

    /// The value under the positioned cursor, valid until the cursor's next call.
    fn value<'c>(&self) -> Result<&'c [u8], StoreError> {
        let mut item = WtItem::empty();
        // SAFETY: see above; the cursor is positioned.
        let rc = unsafe { ((*self.cursor).get_value)(self.cursor, &mut item as *mut WtItem) };
        check("get_value", rc)?;
        // SAFETY: WiredTiger filled the item with bytes valid until the next cursor call,
        // and callers copy them out before that.
        Ok(unsafe { item.bytes() })
    }

    /// Searches for `key`: true when found (cursor positioned), false on a miss.
    fn search(&mut self, key: &[u8]) -> Result<bool, StoreError> {
        self.set_key(key);
        // SAFETY: see above; the key's bytes outlive the call.
        let rc = unsafe { ((*self.cursor).search)(self.cursor) };
        match rc {
            0 => Ok(true),
            WT_NOTFOUND => Ok(false),
            rc => Err(wt_err("search", rc, "")),
        }
    }
}

impl Engine for CursorEngine {
    const NAME: &'static str = "wiredtiger";

    fn get<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, StoreError> {
        if !self.search(key)? {
            return Ok(None);
        }
        Ok(Some(with(self.value()?)))
    }

    fn contains(&mut self, key: &[u8]) -> Result<bool, StoreError> {
        self.search(key)
    }

    fn put(&mut self, key: &[u8], value: &[u8], _req: &Request) -> Result<(), StoreError> {
        self.set_key(key);
        self.set_value(value);
        // SAFETY: see above; key and value outlive the call.
        check("insert", unsafe { ((*self.cursor).insert)(self.cursor) })
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.set_key(key);
        // SAFETY: see above.
        match unsafe { ((*self.cursor).remove)(self.cursor) } {
            0 | WT_NOTFOUND => Ok(()),
            rc => Err(wt_err("remove", rc, "")),
        }
    }

    fn scan(
        &mut self,
        start: &[u8],
        n: u32,
        mut each: impl FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<ScanEnd, StoreError> {
        let mut records = 0u64;
        self.set_key(start);
        let mut exact: c_int = 0;
        // SAFETY: see above.
        let mut rc = unsafe { ((*self.cursor).search_near)(self.cursor, &mut exact) };
        // search_near's `exact` is 0 when the cursor sits on the start key itself.
        let starts_at_key = rc == 0 && exact == 0;
        if rc == 0 && exact < 0 {
            // Positioned on the largest key below the start: step to the next one.
            // SAFETY: see above.
            rc = unsafe { ((*self.cursor).next)(self.cursor) };
        }
        while rc == 0 {
            each(self.value()?)?;
            records += 1;
            if records == u64::from(n) {
                break;
            }
            // SAFETY: see above.
            rc = unsafe { ((*self.cursor).next)(self.cursor) };
        }
        if rc != 0 && rc != WT_NOTFOUND {
            return Err(wt_err("scan", rc, ""));
        }
        Ok(ScanEnd {
            records,
            starts_at_key,
        })
    }

    /// Releases the cursor's position, and with it the page and snapshot it pins, so
    /// that an idle worker does not hold back eviction.
    fn finish(&mut self) -> Result<(), StoreError> {
        // SAFETY: the cursor is open on this session, used by this thread only.
        match unsafe { ((*self.cursor).reset)(self.cursor) } {
            0 => Ok(()),
            rc => Err(wt_err("cursor reset", rc, "")),
        }
    }
}

impl Session for WiredTigerSession {
    fn execute(&mut self, batch: &mut Batch) -> impl std::future::Future<Output = ()> + Send {
        execute_batch(&mut self.engine, &mut self.scratch, batch);
        std::future::ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> StoreOptions {
        StoreOptions::from_strs("wiredtiger.", pairs)
    }

    #[test]
    fn options_build_the_open_configuration() {
        let c =
            WiredTigerConfig::from_options(None, opts(&[("wiredtiger.dir", "/tmp/w")])).unwrap();
        assert_eq!(c.path, PathBuf::from("/tmp/w"));
        assert_eq!(
            c.open_config().unwrap(),
            "create,cache_size=104857600,session_max=256,statistics=(fast),\
             eviction=(threads_min=1,threads_max=8),log=(enabled=false),\
             transaction_sync=(enabled=false,method=fsync),checkpoint=(wait=60)"
        );
        assert_eq!(c.table_config(), "key_format=u,value_format=u");
        let c = WiredTigerConfig::from_options(
            Some(Path::new("/tmp/v")),
            opts(&[
                ("wiredtiger.log", "true"),
                ("wiredtiger.sync", "true"),
                ("wiredtiger.cache_size", "1GiB"),
                ("wiredtiger.checkpoint_s", "0"),
                ("wiredtiger.config", "verbose=[checkpoint]"),
            ]),
        )
        .unwrap();
        let open = c.open_config().unwrap();
        assert!(open.contains("cache_size=1073741824,"), "{open}");
        assert!(open.contains("log=(enabled=true)"), "{open}");
        assert!(open.contains("transaction_sync=(enabled=true,"), "{open}");
        assert!(
            open.ends_with("checkpoint=(wait=0),verbose=[checkpoint]"),
            "{open}"
        );
    }

    #[test]
    fn bad_options_are_named() {
        let p = Some(Path::new("/tmp/x"));
        let err = WiredTigerConfig::from_options(None, opts(&[])).unwrap_err();
        assert!(err.message.contains("wiredtiger.dir"), "{err}");
        let err =
            WiredTigerConfig::from_options(p, opts(&[("wiredtiger.sync", "true")])).unwrap_err();
        assert!(err.message.contains("wiredtiger.log=true"), "{err}");
        let err = WiredTigerConfig::from_options(p, opts(&[("wiredtiger.eviction_threads", "64")]))
            .unwrap_err();
        assert!(
            err.message.contains("`64` is not between 1 and 20"),
            "{err}"
        );
        let err = WiredTigerConfig::from_options(p, opts(&[("wiredtiger.cache_size", "10KiB")]))
            .unwrap_err();
        assert!(err.message.contains("wiredtiger.cache_size"), "{err}");
        let err =
            WiredTigerConfig::from_options(p, opts(&[("wiredtiger.block_compressor", "lz4")]))
                .unwrap_err();
        assert!(err.message.contains("one of: none, snappy, zlib"), "{err}");
    }
}
