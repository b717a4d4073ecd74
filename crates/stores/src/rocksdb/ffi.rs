//! The C ABI of kvlab's RocksDB shim (`crates/stores/cxx/rocksdb_shim.cc`, compiled by
//! the crate's build script against Debian's `librocksdb-dev` headers), and safe owners of
//! its handles.
//!
//! The shim calls RocksDB's C++ API as `db_bench` does: each session keeps one
//! `WriteBatch` (cleared before each write) and one `PinnableSlice` (reset before each
//! read), where RocksDB's C API allocates a batch per `rocksdb_put` and a slice per
//! `rocksdb_get_pinned`. Declarations here and in the shim must stay in step.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;
use std::ptr::NonNull;

/// The shim's `kvlab_rdb_options`: every option the store sets when it opens a database.
#[repr(C)]
#[derive(Debug)]
pub struct RawOptions {
    /// Database directory (NUL-terminated).
    pub path: *const c_char,
    /// LRU block cache capacity.
    pub block_cache_size_bytes: u64,
    /// Memtable size.
    pub write_buffer_size_bytes: u64,
    /// Memtables kept before stalling.
    pub max_write_buffer_number: i32,
    /// Background flush and compaction threads.
    pub max_background_jobs: i32,
    /// Open file limit (-1: none).
    pub max_open_files: i32,
    /// L0 files that trigger compaction.
    pub level0_file_num_compaction_trigger: i32,
    /// Target SST size.
    pub target_file_size_base_bytes: u64,
    /// Background I/O rate limit (0: none).
    pub rate_limit_bytes_per_sec: u64,
    /// Bloom filter bits per key (0: no filter).
    pub bloom_bits: f64,
    /// A `rocksdb::CompressionType` value (include/rocksdb/compression_type.h).
    pub compression: u8,
    /// A `rocksdb::CompactionStyle` value (include/rocksdb/advanced_options.h).
    pub compaction_style: u8,
    /// O_DIRECT reads.
    pub direct_reads: bool,
    /// Pipelined WAL and memtable writes.
    pub pipelined_write: bool,
    /// Collect statistics.
    pub statistics: bool,
    /// Index and filter blocks in the block cache.
    pub cache_index_and_filter_blocks: bool,
    /// Destroy the database before opening it.
    pub destroy_on_open: bool,
    /// Open read-only (`DB::OpenForReadOnly`: no write, no lock, no create).
    pub read_only: bool,
    /// A merge operator RocksDB knows by name (NUL-terminated; empty: none).
    pub merge_operator: *const c_char,
    /// The column family the records live in (NUL-terminated; created when missing);
    /// empty: `default`, and [`Db::live_files`] lists every column family's files.
    pub column_family: *const c_char,
}

#[repr(C)]
struct RawDb {
    _private: [u8; 0],
}

#[repr(C)]
struct RawSession {
    _private: [u8; 0],
}

#[repr(C)]
struct RawLiveFiles {
    _private: [u8; 0],
}

#[repr(C)]
struct RawIter {
    _private: [u8; 0],
}

// The shim's static library is linked by the build script (`cc`), with libstdc++ and
// `-lrocksdb` after it.
extern "C" {
    fn kvlab_rdb_free(p: *mut c_char);
    fn kvlab_rdb_open(o: *const RawOptions, err: *mut *mut c_char) -> *mut RawDb;
    fn kvlab_rdb_close(h: *mut RawDb);
    fn kvlab_rdb_flush(h: *mut RawDb, err: *mut *mut c_char) -> c_int;
    fn kvlab_rdb_compact_all(h: *mut RawDb, err: *mut *mut c_char) -> c_int;
    fn kvlab_rdb_live_files_new(h: *mut RawDb) -> *mut RawLiveFiles;
    fn kvlab_rdb_live_files_len(f: *const RawLiveFiles) -> usize;
    fn kvlab_rdb_live_file(
        f: *const RawLiveFiles,
        i: usize,
        level: *mut c_int,
        entries: *mut u64,
        size: *mut u64,
        name: *mut *const u8,
        name_len: *mut usize,
        smallest: *mut *const u8,
        smallest_len: *mut usize,
        largest: *mut *const u8,
        largest_len: *mut usize,
    );
    fn kvlab_rdb_live_files_free(f: *mut RawLiveFiles);
    fn kvlab_rdb_statistics(h: *mut RawDb) -> *mut c_char;
    fn kvlab_rdb_property(h: *mut RawDb, name: *const c_char) -> *mut c_char;
    fn kvlab_rdb_session_new(
        h: *mut RawDb,
        wal: bool,
        sync: bool,
        verify_checksums: bool,
        perf_level: c_int,
    ) -> *mut RawSession;
    fn kvlab_rdb_session_free(s: *mut RawSession);
    #[cfg(test)]
    fn kvlab_rdb_thread_perf_level() -> c_int;
    fn kvlab_rdb_get(
        s: *mut RawSession,
        key: *const u8,
        key_len: usize,
        value: *mut *const u8,
        value_len: *mut usize,
        err: *mut *mut c_char,
    ) -> c_int;
    fn kvlab_rdb_multi_get(
        s: *mut RawSession,
        n: usize,
        keys: *const *const u8,
        key_lens: *const usize,
        values: *mut *const u8,
        value_lens: *mut usize,
        found: *mut c_int,
        err: *mut *mut c_char,
    );
    fn kvlab_rdb_put(
        s: *mut RawSession,
        key: *const u8,
        key_len: usize,
        value: *const u8,
        value_len: usize,
        err: *mut *mut c_char,
    ) -> c_int;
    fn kvlab_rdb_merge(
        s: *mut RawSession,
        key: *const u8,
        key_len: usize,
        operand: *const u8,
        operand_len: usize,
        err: *mut *mut c_char,
    ) -> c_int;
    fn kvlab_rdb_delete(
        s: *mut RawSession,
        key: *const u8,
        key_len: usize,
        err: *mut *mut c_char,
    ) -> c_int;
    fn kvlab_rdb_iter_new(s: *mut RawSession) -> *mut RawIter;
    fn kvlab_rdb_iter_seek(i: *mut RawIter, key: *const u8, key_len: usize);
    fn kvlab_rdb_iter_valid(i: *const RawIter) -> bool;
    fn kvlab_rdb_iter_next(i: *mut RawIter);
    fn kvlab_rdb_iter_value(i: *const RawIter, value: *mut *const u8, value_len: *mut usize);
    fn kvlab_rdb_iter_key(i: *const RawIter, key: *mut *const u8, key_len: *mut usize);
    fn kvlab_rdb_iter_status(i: *const RawIter, err: *mut *mut c_char) -> c_int;
    fn kvlab_rdb_iter_free(i: *mut RawIter);
}

/// Takes ownership of a string the shim allocated (an error's text).
fn take_string(p: *mut c_char) -> String {
    if p.is_null() {
        return "unknown error (no message)".to_string();
    }
    // SAFETY: the shim returns a NUL-terminated malloc'd string, freed here once.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    // SAFETY: `p` came from the shim's malloc and is not used after this.
    unsafe { kvlab_rdb_free(p) };
    s
}

/// Turns a shim return code (0 or -1 with `err`) into a result carrying RocksDB's text.
#[inline]
fn check(rc: c_int, err: *mut c_char) -> Result<(), String> {
    if rc == 0 {
        Ok(())
    } else {
        Err(take_string(err))
    }
}

fn c_string(what: &str, bytes: Vec<u8>) -> Result<CString, String> {
    CString::new(bytes).map_err(|_| format!("{what} holds a NUL byte"))
}

/// RocksDB's perf level (`GetPerfLevel`) of the calling thread.
#[cfg(test)]
pub fn thread_perf_level() -> i32 {
    // SAFETY: reads a thread-local of RocksDB.
    unsafe { kvlab_rdb_thread_perf_level() }
}

/// An open database; closed when dropped (after every [`Session`] of it).
#[derive(Debug)]
pub struct Db {
    raw: NonNull<RawDb>,
}

// SAFETY: rocksdb::DB is thread-safe (every method may be called from several threads);
// the handle is only read after open and freed once in Drop.
unsafe impl Send for Db {}
// SAFETY: as above.
unsafe impl Sync for Db {}

impl Db {
    /// Opens the database at `path` with `options` (whose `path`, `merge_operator` and
    /// `column_family` are filled in here).
    pub fn open(
        path: &Path,
        merge_operator: &str,
        column_family: &str,
        mut options: RawOptions,
    ) -> Result<Db, String> {
        let path = c_string(
            "the database path",
            path.as_os_str().as_encoded_bytes().to_vec(),
        )?;
        let merge = c_string("the merge operator", merge_operator.as_bytes().to_vec())?;
        options.path = path.as_ptr();
        options.merge_operator = merge.as_ptr();
        let cf = c_string("the column family", column_family.as_bytes().to_vec())?;
        options.column_family = cf.as_ptr();
        let mut err = std::ptr::null_mut();
        // SAFETY: `options` and the strings it points at live across the call; the shim
        // copies what it keeps.
        let raw = unsafe { kvlab_rdb_open(&options, &mut err) };
        match NonNull::new(raw) {
            Some(raw) => Ok(Db { raw }),
            None => Err(take_string(err)),
        }
    }

    /// Flushes the memtables (waiting for the flush).
    pub fn flush(&self) -> Result<(), String> {
        let mut err = std::ptr::null_mut();
        // SAFETY: the handle is open.
        check(unsafe { kvlab_rdb_flush(self.raw.as_ptr(), &mut err) }, err)
    }

    /// Flushes the memtables, then compacts the whole key space, the bottommost level
    /// included (`CompactRange` with `BottommostLevelCompaction::kForce`), waiting for it.
    pub fn compact_all(&self) -> Result<(), String> {
        let mut err = std::ptr::null_mut();
        // SAFETY: the handle is open.
        check(
            unsafe { kvlab_rdb_compact_all(self.raw.as_ptr(), &mut err) },
            err,
        )
    }

    /// The live SST files (`DB::GetLiveFilesMetaData`), in RocksDB's order.
    pub fn live_files(&self) -> Vec<SstFile> {
        // SAFETY: the handle is open; the list is freed below, after its strings were
        // copied.
        let list = unsafe { kvlab_rdb_live_files_new(self.raw.as_ptr()) };
        // SAFETY: `list` is live.
        let n = unsafe { kvlab_rdb_live_files_len(list) };
        let bytes = |p: *const u8, len: usize| {
            if len == 0 {
                Vec::new()
            } else {
                // SAFETY: the shim's strings hold `len` bytes at `p` while `list` lives.
                unsafe { std::slice::from_raw_parts(p, len) }.to_vec()
            }
        };
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (mut level, mut entries, mut size) = (0, 0u64, 0u64);
            let (mut name, mut name_len) = (std::ptr::null(), 0usize);
            let (mut small, mut small_len) = (std::ptr::null(), 0usize);
            let (mut large, mut large_len) = (std::ptr::null(), 0usize);
            // SAFETY: `i` is below the list's length; every out-pointer is valid.
            unsafe {
                kvlab_rdb_live_file(
                    list,
                    i,
                    &mut level,
                    &mut entries,
                    &mut size,
                    &mut name,
                    &mut name_len,
                    &mut small,
                    &mut small_len,
                    &mut large,
                    &mut large_len,
                )
            };
            out.push(SstFile {
                name: String::from_utf8_lossy(&bytes(name, name_len)).into_owned(),
                level,
                entries,
                size_bytes: size,
                smallest_key: bytes(small, small_len),
                largest_key: bytes(large, large_len),
            });
        }
        // SAFETY: freed once; nothing borrowed from it remains.
        unsafe { kvlab_rdb_live_files_free(list) };
        out
    }

    /// RocksDB's statistics dump; `None` when statistics are off.
    pub fn statistics(&self) -> Option<String> {
        // SAFETY: the handle is open.
        let p = unsafe { kvlab_rdb_statistics(self.raw.as_ptr()) };
        (!p.is_null()).then(|| take_string(p))
    }

    /// An integer property (`rocksdb.estimate-num-keys`), if RocksDB has it: its text
    /// parsed, as the rust-rocksdb crate's `property_int_value` does (some integer
    /// properties, such as `rocksdb.num-files-at-level0`, exist only as text).
    pub fn property_int(&self, name: &CStr) -> Option<u64> {
        // SAFETY: the handle is open; `name` is NUL-terminated.
        let p = unsafe { kvlab_rdb_property(self.raw.as_ptr(), name.as_ptr()) };
        if p.is_null() {
            return None;
        }
        take_string(p).trim().parse().ok()
    }

    /// A session with its own write and read options and reused buffers; its operations
    /// run at `perf_level` (a `rocksdb::PerfLevel` value, include/rocksdb/perf_level.h)
    /// on whichever thread calls them.
    pub fn session(
        &self,
        wal: bool,
        sync: bool,
        verify_checksums: bool,
        perf_level: i32,
    ) -> Session {
        // SAFETY: the handle is open.
        let raw = unsafe {
            kvlab_rdb_session_new(self.raw.as_ptr(), wal, sync, verify_checksums, perf_level)
        };
        Session {
            raw: NonNull::new(raw).expect("the shim's session allocation never returns null"),
            multi: MultiGet::default(),
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        // SAFETY: closed once; sessions hold an Arc of the owner, so none outlives it.
        unsafe { kvlab_rdb_close(self.raw.as_ptr()) }
    }
}

/// One live SST file of an open database (RocksDB's `LiveFileMetaData`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SstFile {
    /// File name relative to the database directory (`/000012.sst`).
    pub name: String,
    /// LSM level (0 = L0).
    pub level: i32,
    /// Entries (puts, deletes, merges) the file holds.
    pub entries: u64,
    /// File size in bytes.
    pub size_bytes: u64,
    /// Smallest user key in the file.
    pub smallest_key: Vec<u8>,
    /// Largest user key in the file.
    pub largest_key: Vec<u8>,
}

/// One worker's handle on a [`Db`]; the owner must keep the `Db` alive longer.
#[derive(Debug)]
pub struct Session {
    raw: NonNull<RawSession>,
    /// A MultiGet's arguments and results, reused from batch to batch.
    multi: MultiGet,
}

#[derive(Debug, Default)]
struct MultiGet {
    keys: Vec<*const u8>,
    key_lens: Vec<usize>,
    values: Vec<*const u8>,
    value_lens: Vec<usize>,
    found: Vec<c_int>,
    failure: Option<String>,
}

// SAFETY: a session is used by one thread at a time (it is moved, never shared).
unsafe impl Send for Session {}

impl Session {
    /// Looks `key` up: `Some(with(value))` when found, the value borrowed from the
    /// session's pinned slice.
    #[inline]
    pub fn get<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, String> {
        let (mut value, mut len, mut err) = (std::ptr::null(), 0usize, std::ptr::null_mut());
        // SAFETY: the session is live; the key slice outlives the call.
        let rc = unsafe {
            kvlab_rdb_get(
                self.raw.as_ptr(),
                key.as_ptr(),
                key.len(),
                &mut value,
                &mut len,
                &mut err,
            )
        };
        match rc {
            1 => {
                let bytes = if len == 0 {
                    &[][..]
                } else {
                    // SAFETY: the shim's pinned slice holds `len` bytes at `value` until
                    // the session's next call, which `&mut self` rules out while `with`
                    // runs.
                    unsafe { std::slice::from_raw_parts(value, len) }
                };
                Ok(Some(with(bytes)))
            }
            0 => Ok(None),
            _ => Err(take_string(err)),
        }
    }

    /// Looks every key of `keys` up in one batched MultiGet; the results are then read
    /// with [`Session::multi_get_result`], until the session's next call.
    pub fn multi_get<'k>(&mut self, keys: impl Iterator<Item = &'k [u8]>) {
        let m = &mut self.multi;
        m.keys.clear();
        m.key_lens.clear();
        for key in keys {
            m.keys.push(key.as_ptr());
            m.key_lens.push(key.len());
        }
        let n = m.keys.len();
        m.values.clear();
        m.values.resize(n, std::ptr::null());
        m.value_lens.clear();
        m.value_lens.resize(n, 0);
        m.found.clear();
        m.found.resize(n, 0);
        let mut err = std::ptr::null_mut();
        // SAFETY: the session is live; every array holds `n` elements; the keys are
        // borrowed for the call.
        unsafe {
            kvlab_rdb_multi_get(
                self.raw.as_ptr(),
                n,
                m.keys.as_ptr(),
                m.key_lens.as_ptr(),
                m.values.as_mut_ptr(),
                m.value_lens.as_mut_ptr(),
                m.found.as_mut_ptr(),
                &mut err,
            )
        };
        m.failure = (!err.is_null()).then(|| take_string(err));
    }

    /// Key `i` of the last [`Session::multi_get`]: its value when found (borrowed from
    /// the session), `None` when not, RocksDB's text when its lookup failed.
    pub fn multi_get_result(&self, i: usize) -> Result<Option<&[u8]>, &str> {
        let m = &self.multi;
        match m.found[i] {
            1 if m.value_lens[i] == 0 => Ok(Some(&[])),
            // SAFETY: the shim's pinned slice `i` holds `value_lens[i]` bytes until the
            // session's next call, which needs `&mut self` and so ends this borrow.
            1 => Ok(Some(unsafe {
                std::slice::from_raw_parts(m.values[i], m.value_lens[i])
            })),
            0 => Ok(None),
            _ => Err(m.failure.as_deref().unwrap_or("MultiGet failed")),
        }
    }

    /// Writes `value` under `key`.
    #[inline]
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let mut err = std::ptr::null_mut();
        // SAFETY: the session is live; the slices outlive the call.
        let rc = unsafe {
            kvlab_rdb_put(
                self.raw.as_ptr(),
                key.as_ptr(),
                key.len(),
                value.as_ptr(),
                value.len(),
                &mut err,
            )
        };
        check(rc, err)
    }

    /// Adds a merge operand for `key` (the database's merge operator combines them).
    #[inline]
    pub fn merge(&mut self, key: &[u8], operand: &[u8]) -> Result<(), String> {
        let mut err = std::ptr::null_mut();
        // SAFETY: the session is live; the slices outlive the call.
        let rc = unsafe {
            kvlab_rdb_merge(
                self.raw.as_ptr(),
                key.as_ptr(),
                key.len(),
                operand.as_ptr(),
                operand.len(),
                &mut err,
            )
        };
        check(rc, err)
    }

    /// Deletes `key`.
    pub fn delete(&mut self, key: &[u8]) -> Result<(), String> {
        let mut err = std::ptr::null_mut();
        // SAFETY: the session is live; the key outlives the call.
        let rc = unsafe { kvlab_rdb_delete(self.raw.as_ptr(), key.as_ptr(), key.len(), &mut err) };
        check(rc, err)
    }

    /// A forward iterator positioned at the first key ≥ `start`.
    pub fn iter_from(&mut self, start: &[u8]) -> Iter<'_> {
        // SAFETY: the session is live.
        let raw = unsafe { kvlab_rdb_iter_new(self.raw.as_ptr()) };
        let raw = NonNull::new(raw).expect("the shim's iterator allocation never returns null");
        // SAFETY: the iterator is live; the key outlives the call.
        unsafe { kvlab_rdb_iter_seek(raw.as_ptr(), start.as_ptr(), start.len()) };
        Iter {
            raw,
            _session: std::marker::PhantomData,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: freed once.
        unsafe { kvlab_rdb_session_free(self.raw.as_ptr()) }
    }
}

/// A forward iterator of a [`Session`].
#[derive(Debug)]
pub struct Iter<'s> {
    raw: NonNull<RawIter>,
    _session: std::marker::PhantomData<&'s mut Session>,
}

impl Iter<'_> {
    /// The value at the current position, or `None` past the end (or on an error: see
    /// [`Iter::status`]).
    pub fn value(&self) -> Option<&[u8]> {
        // SAFETY: the iterator is live.
        if !unsafe { kvlab_rdb_iter_valid(self.raw.as_ptr()) } {
            return None;
        }
        let (mut value, mut len) = (std::ptr::null(), 0usize);
        // SAFETY: the iterator is valid; the value stays put until it moves, which
        // needs `&mut self`.
        unsafe { kvlab_rdb_iter_value(self.raw.as_ptr(), &mut value, &mut len) };
        if len == 0 {
            return Some(&[]);
        }
        // SAFETY: as above.
        Some(unsafe { std::slice::from_raw_parts(value, len) })
    }

    /// The key at the current position, or `None` past the end (or on an error: see
    /// [`Iter::status`]).
    pub fn key(&self) -> Option<&[u8]> {
        // SAFETY: the iterator is live.
        if !unsafe { kvlab_rdb_iter_valid(self.raw.as_ptr()) } {
            return None;
        }
        let (mut key, mut len) = (std::ptr::null(), 0usize);
        // SAFETY: the iterator is valid; the key stays put until it moves, which needs
        // `&mut self`.
        unsafe { kvlab_rdb_iter_key(self.raw.as_ptr(), &mut key, &mut len) };
        if len == 0 {
            return Some(&[]);
        }
        // SAFETY: as above.
        Some(unsafe { std::slice::from_raw_parts(key, len) })
    }

    /// Moves to the next key (the iterator must be valid).
    pub fn next(&mut self) {
        // SAFETY: the iterator is live and (per the caller) valid.
        unsafe { kvlab_rdb_iter_next(self.raw.as_ptr()) }
    }

    /// Whether iteration stopped on an error.
    pub fn status(&self) -> Result<(), String> {
        let mut err = std::ptr::null_mut();
        // SAFETY: the iterator is live.
        check(
            unsafe { kvlab_rdb_iter_status(self.raw.as_ptr(), &mut err) },
            err,
        )
    }
}

impl Drop for Iter<'_> {
    fn drop(&mut self) {
        // SAFETY: freed once.
        unsafe { kvlab_rdb_iter_free(self.raw.as_ptr()) }
    }
}
