//! Importing a delimited text file: one record per line (TPC-H `.tbl`, TSV, …).
//!
//! - [`ImportSpec`] says how to cut lines into a key and a value.
//! - [`ImportWorkload::open`] opens the file and starts a reader thread that reads it
//!   sequentially — never seeking, so a pipe such as `<(zcat lineitem.tbl.gz)` works —
//!   in chunks of whole lines, sent through a bounded channel.
//! - Each client's [`ImportSource`] takes a chunk at a time and turns its lines into
//!   inserts; the runner drives the clients like any other workload, so threads,
//!   connections, pipelining, progress and results work as for `run`.
//! - [`ImportWorkload::finish`] then gives the [`ImportReport`]: lines, malformed lines
//!   (the first few by line number), the sampled key file.
//!
//! # Records
//!
//! A line is split at every `delimiter` byte into fields numbered from 0. A delimiter
//! at the very end of a line ends the last field rather than starting an empty one
//! (TPC-H's dbgen ends every line with `|`), unless [`TrailingDelimiter::Keep`] is
//! asked for. A `\r` before the `\n` is dropped. Blank lines are skipped (and counted).
//!
//! - **Key**: the `key_fields`, in the order listed, joined with the delimiter:
//!   `--key-fields 0,1,2` on `1|155190|7706|1|17|…` gives the key `1|155190|7706`.
//! - **Value**: every other field, in line order. As a blob ([`ValueFormat::Blob`],
//!   the default) the fields are joined with the delimiter — the line minus its key
//!   fields, as Terark's benchmark stores it. As fields ([`ValueFormat::Fields`]) they are
//!   YCSB fields `field0`, `field1`, … (numbered over the value fields) in the store's
//!   record encoding.
//!
//! Every line must have the same number of fields: `fields` when given, otherwise the
//! count of the first non-blank line. Other lines are malformed: counted, the first
//! few reported with their line numbers, and skipped — or, with `strict`, the import
//! stops at the first one ([`ImportReport::strict_failure`]).
//!
//! # Sampled keys
//!
//! With a [`KeySample`], a fraction of the imported keys is written to a key file (one
//! escaped key per line, see [`crate::KeyFile`]). Whether line `n` is sampled depends
//! only on the run seed and `n` (a SplitMix64 hash of both compared with the
//! fraction), so the same seed samples the same lines whatever the thread count; only
//! the order of the lines in the key file varies with more than one thread. A key is
//! written once its insert has succeeded.

use std::fmt;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};

use kvlab_core::{OpKind, Request, Slot};

use crate::escape_key;
use crate::{Needs, OpSource, Ticket, Verdict, Workload, WorkloadError};

/// Bytes the reader aims to put in one chunk (it ends at a line boundary).
const CHUNK_BYTES: usize = 256 << 10;
/// Chunks read ahead of the clients.
const CHUNKS_AHEAD: usize = 8;
/// A client writes its sampled keys out once it holds this many bytes of them.
const SAMPLE_FLUSH_BYTES: usize = 64 << 10;
/// Malformed lines named in the report.
const FIRST_FEW: usize = 10;
/// Mixed into the run seed for the key sample.
const SAMPLE_SALT: u64 = 0x6b65_7973_616d_706c;

/// How a value is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ValueFormat {
    /// One opaque value: the value fields joined with the delimiter
    /// ([`Request::value`] and [`Request::read`]).
    #[default]
    Blob,
    /// YCSB fields `field0`, `field1`, … in the store's record encoding.
    Fields,
}

impl fmt::Display for ValueFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValueFormat::Blob => "blob",
            ValueFormat::Fields => "fields",
        })
    }
}

impl std::str::FromStr for ValueFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<ValueFormat, String> {
        match s.trim() {
            "blob" => Ok(ValueFormat::Blob),
            "fields" => Ok(ValueFormat::Fields),
            other => Err(format!("`{other}`: expected blob or fields")),
        }
    }
}

/// What a delimiter at the end of a line means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TrailingDelimiter {
    /// It ends the last field (TPC-H: `a|b|c|` has 3 fields).
    #[default]
    Strip,
    /// It starts an empty last field (`a|b|c|` has 4 fields).
    Keep,
}

impl std::str::FromStr for TrailingDelimiter {
    type Err = String;

    fn from_str(s: &str) -> Result<TrailingDelimiter, String> {
        match s.trim() {
            "strip" => Ok(TrailingDelimiter::Strip),
            "keep" => Ok(TrailingDelimiter::Keep),
            other => Err(format!("`{other}`: expected strip or keep")),
        }
    }
}

/// Which imported keys go to a key file.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySample {
    /// The share of lines sampled, in `(0, 1]`.
    pub fraction: f64,
    /// The key file written.
    pub path: PathBuf,
}

/// How to import a file (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct ImportSpec {
    /// The field delimiter byte (not `\n` or `\r`).
    pub delimiter: u8,
    /// The key's fields, in key order (at least one, no repeats).
    pub key_fields: Vec<usize>,
    /// Fields every line must have; `None`: as many as the first non-blank line.
    pub fields: Option<usize>,
    /// How values are stored.
    pub value_format: ValueFormat,
    /// Import at most the first `limit` lines.
    pub limit: Option<u64>,
    /// Stop at the first malformed line instead of skipping it.
    pub strict: bool,
    /// What a delimiter at the end of a line means.
    pub trailing_delimiter: TrailingDelimiter,
    /// Write a sample of the imported keys to a key file.
    pub sample: Option<KeySample>,
}

impl ImportSpec {
    /// A spec with the defaults: blob values, trailing delimiters stripped, field count
    /// from the first line, no limit, not strict, no sample.
    pub fn new(delimiter: u8, key_fields: Vec<usize>) -> ImportSpec {
        ImportSpec {
            delimiter,
            key_fields,
            fields: None,
            value_format: ValueFormat::Blob,
            limit: None,
            strict: false,
            trailing_delimiter: TrailingDelimiter::Strip,
            sample: None,
        }
    }

    fn validate(&self) -> Result<(), WorkloadError> {
        let bad = |m: String| Err(WorkloadError::Inconsistent(m));
        if matches!(self.delimiter, b'\n' | b'\r') {
            return bad("the delimiter cannot be a line terminator (\\n or \\r)".into());
        }
        if self.key_fields.is_empty() {
            return bad("--key-fields: give at least one field number, e.g. 0,1,2".into());
        }
        for (i, f) in self.key_fields.iter().enumerate() {
            if self.key_fields[..i].contains(f) {
                return bad(format!("--key-fields: field {f} is listed twice"));
            }
        }
        if self.fields == Some(0) {
            return bad("--fields must be at least 1".into());
        }
        if let Some(s) = &self.sample {
            if !(s.fraction > 0.0 && s.fraction <= 1.0) {
                return bad(format!(
                    "--sample-keys {}: expected a fraction in (0, 1], e.g. 0.07",
                    s.fraction
                ));
            }
        }
        Ok(())
    }
}

/// A line that does not have the expected number of fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedLine {
    /// 1-based line number.
    pub line: u64,
    /// Fields found.
    pub fields: usize,
    /// Fields expected.
    pub expected: usize,
}

impl fmt::Display for MalformedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: {} field{}, expected {}",
            self.line,
            self.fields,
            if self.fields == 1 { "" } else { "s" },
            self.expected
        )
    }
}

/// What an import did, besides what the runner measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportReport {
    /// The file imported.
    pub path: PathBuf,
    /// Lines the clients went through (imported, malformed and blank).
    pub lines: u64,
    /// Blank lines skipped.
    pub blank: u64,
    /// Malformed lines (skipped, or the one that stopped a strict import).
    pub malformed: u64,
    /// The first few malformed lines, by line number.
    pub first_malformed: Vec<MalformedLine>,
    /// With `strict`: the malformed line that stopped the import.
    pub strict_failure: Option<MalformedLine>,
    /// Reading the file failed part-way.
    pub read_error: Option<String>,
    /// Inserts the store failed (the runner's results count them as errors too).
    pub failed_inserts: u64,
    /// Keys written to the sample key file.
    pub sampled_keys: u64,
    /// Writing the sample key file failed.
    pub keys_out_error: Option<String>,
}

impl ImportReport {
    /// True when the import stopped short or did not store everything: a strict
    /// failure, a read error, a failed insert or a key-file write error.
    pub fn failed(&self) -> bool {
        self.strict_failure.is_some()
            || self.read_error.is_some()
            || self.failed_inserts > 0
            || self.keys_out_error.is_some()
    }
}

/// A run of whole lines of the file.
struct Chunk {
    data: Vec<u8>,
    /// 1-based number of the chunk's first line.
    first_line: u64,
}

/// Cuts the file into chunks of whole lines, up to the line limit.
struct LineChunker {
    file: File,
    /// Bytes read past the last complete line.
    carry: Vec<u8>,
    /// Number of the next line to hand out.
    next_line: u64,
    limit: Option<u64>,
    done: bool,
}

impl LineChunker {
    /// The next chunk (in `buf`, reused), or `None` at the end of the file or limit.
    fn next_chunk(&mut self, mut buf: Vec<u8>) -> std::io::Result<Option<Chunk>> {
        if self.done {
            return Ok(None);
        }
        buf.clear();
        buf.append(&mut self.carry);
        let mut eof = false;
        // Read until the chunk is full and holds a line end, or the file ends.
        let mut searched = 0;
        let cut = loop {
            if buf.len() >= CHUNK_BYTES || eof {
                if let Some(i) = memchr::memrchr(b'\n', &buf[searched..]) {
                    break Some(searched + i + 1);
                }
                searched = buf.len();
                if eof {
                    break None;
                }
            }
            let at = buf.len();
            buf.resize(at + CHUNK_BYTES.max(at / 4), 0);
            let n = loop {
                match self.file.read(&mut buf[at..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        buf.truncate(at);
                        return Err(e);
                    }
                }
            };
            buf.truncate(at + n);
            eof = n == 0;
        };
        match cut {
            Some(end) => self.carry.extend_from_slice(&buf[end..]),
            // The last line has no line end: it ends the file.
            None => self.done = true,
        }
        buf.truncate(cut.unwrap_or(buf.len()));
        if buf.is_empty() {
            self.done = true;
            return Ok(None);
        }
        let mut lines = memchr::memchr_iter(b'\n', &buf).count() as u64;
        if buf.last() != Some(&b'\n') {
            lines += 1;
        }
        if let Some(limit) = self.limit {
            let left = limit - (self.next_line - 1);
            if lines >= left {
                self.done = true;
                if lines > left {
                    let end = memchr::memchr_iter(b'\n', &buf)
                        .nth(left as usize - 1)
                        .map_or(buf.len(), |i| i + 1);
                    buf.truncate(end);
                    lines = left;
                }
            }
        }
        let first_line = self.next_line;
        self.next_line += lines;
        Ok(Some(Chunk {
            data: buf,
            first_line,
        }))
    }
}

/// The spec, compiled for the hot path.
#[derive(Debug)]
struct Layout {
    delimiter: u8,
    strip_trailing: bool,
    key_fields: Vec<usize>,
    /// The value's fields, in line order.
    value_fields: Vec<usize>,
    /// The value fields are consecutive: a blob value is one slice of the line.
    value_contiguous: bool,
    /// Field names of a fields-format value.
    names: Vec<Vec<u8>>,
    blob: bool,
    expected: usize,
    strict: bool,
    /// Sample a line when its hash is below this (0: no sampling).
    sample_below: u64,
}

/// State shared by the workload, its clients and its reader thread.
struct Shared {
    path: PathBuf,
    layout: Layout,
    chunks: Mutex<Receiver<Chunk>>,
    /// Used chunk buffers, back to the reader.
    free: Mutex<Sender<Vec<u8>>>,
    abort: Arc<AtomicBool>,
    lines: AtomicU64,
    blank: AtomicU64,
    malformed: AtomicU64,
    first_malformed: Mutex<Vec<MalformedLine>>,
    strict_failure: Mutex<Option<MalformedLine>>,
    read_error: Arc<Mutex<Option<String>>>,
    keys_out: Mutex<Option<std::io::BufWriter<File>>>,
    sampled: AtomicU64,
    failed_inserts: AtomicU64,
    keys_out_error: Mutex<Option<String>>,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("path", &self.path)
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn malformed(&self, m: MalformedLine) {
        self.malformed.fetch_add(1, Ordering::Relaxed);
        let mut v = lock(&self.first_malformed);
        if v.len() >= FIRST_FEW && v.last().is_some_and(|l| l.line < m.line) {
            return;
        }
        let at = v.partition_point(|l| l.line < m.line);
        v.insert(at, m);
        v.truncate(FIRST_FEW);
    }

    fn write_keys(&self, bytes: &[u8]) {
        let mut out = lock(&self.keys_out);
        if let Some(w) = out.as_mut() {
            if let Err(e) = w.write_all(bytes) {
                lock(&self.keys_out_error).get_or_insert_with(|| e.to_string());
                *out = None;
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A delimited text file imported as inserts (see the module docs).
#[derive(Debug)]
pub struct ImportWorkload {
    shared: Arc<Shared>,
    spec: ImportSpec,
    report: OnceLock<ImportReport>,
}

impl ImportWorkload {
    /// The names of a record's fields (`field0` … for each value column); none for a
    /// blob value.
    pub fn field_names(&self) -> &[Vec<u8>] {
        let layout = &self.shared.layout;
        if layout.blob {
            &[]
        } else {
            &layout.names
        }
    }

    /// Opens `path` (with `File::open`, read sequentially), reads up to its first
    /// non-blank line to learn the field count (unless the spec gives one), checks the
    /// key fields against it, creates the sample key file, and starts the reader.
    pub fn open(path: &Path, spec: ImportSpec) -> Result<ImportWorkload, WorkloadError> {
        spec.validate()?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| WorkloadError::Io { path, source }
        };
        let file = File::open(path).map_err(io(path))?;
        let mut chunker = LineChunker {
            file,
            carry: Vec::new(),
            next_line: 1,
            limit: spec.limit,
            done: spec.limit == Some(0),
        };
        let strip = spec.trailing_delimiter == TrailingDelimiter::Strip;
        // Read ahead to the first non-blank line.
        let mut ahead = Vec::new();
        let mut first: Option<(u64, usize)> = None;
        while first.is_none() {
            let Some(chunk) = chunker
                .next_chunk(Vec::with_capacity(CHUNK_BYTES))
                .map_err(io(path))?
            else {
                break;
            };
            for (i, line) in chunk.data.split(|&b| b == b'\n').enumerate() {
                let line = trim_line(line, spec.delimiter, strip);
                if !line.is_empty() {
                    let n = memchr::memchr_iter(spec.delimiter, line).count() + 1;
                    first = Some((chunk.first_line + i as u64, n));
                    break;
                }
            }
            ahead.push(chunk);
        }
        let expected = match (spec.fields, first) {
            (Some(n), _) => n,
            (None, Some((_, n))) => n,
            (None, None) => 0,
        };
        if expected > 0 {
            if let Some(&bad) = spec.key_fields.iter().find(|&&f| f >= expected) {
                let whence = match (spec.fields, first) {
                    (Some(_), _) => "--fields".to_string(),
                    (None, Some((line, _))) => format!("{}:{line}", path.display()),
                    (None, None) => unreachable!("expected > 0 comes from one of them"),
                };
                return Err(WorkloadError::Inconsistent(format!(
                    "--key-fields names field {bad}, but lines have {expected} fields \
                     (0 to {}, per {whence})",
                    expected - 1
                )));
            }
        }
        let keys_out = match &spec.sample {
            Some(s) => Some(std::io::BufWriter::with_capacity(
                SAMPLE_FLUSH_BYTES,
                File::create(&s.path).map_err(io(&s.path))?,
            )),
            None => None,
        };
        let value_fields: Vec<usize> = (0..expected)
            .filter(|f| !spec.key_fields.contains(f))
            .collect();
        let value_contiguous = value_fields.windows(2).all(|w| w[1] == w[0] + 1);
        let layout = Layout {
            delimiter: spec.delimiter,
            strip_trailing: strip,
            key_fields: spec.key_fields.clone(),
            names: (0..value_fields.len())
                .map(|i| format!("field{i}").into_bytes())
                .collect(),
            value_fields,
            value_contiguous,
            blob: spec.value_format == ValueFormat::Blob,
            expected,
            strict: spec.strict,
            sample_below: spec.sample.as_ref().map_or(0, |s| {
                if s.fraction >= 1.0 {
                    u64::MAX
                } else {
                    (s.fraction * 2f64.powi(64)) as u64
                }
            }),
        };

        let (tx, rx) = mpsc::sync_channel::<Chunk>(CHUNKS_AHEAD);
        let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
        let abort = Arc::new(AtomicBool::new(false));
        let read_error = Arc::new(Mutex::new(None));
        let reader = Reader {
            chunker,
            ahead,
            tx,
            free: free_rx,
            abort: Arc::clone(&abort),
            read_error: Arc::clone(&read_error),
        };
        std::thread::Builder::new()
            .name("kvlab-import-reader".into())
            .spawn(move || reader.run())
            .map_err(io(path))?;
        Ok(ImportWorkload {
            shared: Arc::new(Shared {
                path: path.to_path_buf(),
                layout,
                chunks: Mutex::new(rx),
                free: Mutex::new(free_tx),
                abort,
                lines: AtomicU64::new(0),
                blank: AtomicU64::new(0),
                malformed: AtomicU64::new(0),
                first_malformed: Mutex::new(Vec::new()),
                strict_failure: Mutex::new(None),
                read_error,
                keys_out: Mutex::new(keys_out),
                sampled: AtomicU64::new(0),
                failed_inserts: AtomicU64::new(0),
                keys_out_error: Mutex::new(None),
            }),
            spec,
            report: OnceLock::new(),
        })
    }

    /// The file being imported.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The spec.
    pub fn spec(&self) -> &ImportSpec {
        &self.spec
    }

    /// Fields every line must have (0 for a file with no non-blank line).
    pub fn expected_fields(&self) -> usize {
        self.shared.layout.expected
    }

    /// Ends the import once the runner has returned (its sources dropped): stops the
    /// reader, flushes the sample key file and returns the report. Later calls return
    /// the same report.
    pub fn finish(&self) -> &ImportReport {
        self.report.get_or_init(|| {
            let s = &self.shared;
            s.abort.store(true, Ordering::Relaxed);
            if let Some(mut w) = lock(&s.keys_out).take() {
                if let Err(e) = w.flush() {
                    lock(&s.keys_out_error).get_or_insert_with(|| e.to_string());
                }
            }
            ImportReport {
                path: s.path.clone(),
                lines: s.lines.load(Ordering::Relaxed),
                blank: s.blank.load(Ordering::Relaxed),
                malformed: s.malformed.load(Ordering::Relaxed),
                first_malformed: lock(&s.first_malformed).clone(),
                strict_failure: lock(&s.strict_failure).clone(),
                read_error: lock(&s.read_error).clone(),
                failed_inserts: s.failed_inserts.load(Ordering::Relaxed),
                sampled_keys: s.sampled.load(Ordering::Relaxed),
                keys_out_error: lock(&s.keys_out_error).clone(),
            }
        })
    }

    /// The import settings as `(name, value)` pairs, for the result document.
    pub fn effective(&self) -> Vec<(String, String)> {
        let s = &self.spec;
        let list = |v: &[usize]| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut out = vec![
            ("import.file".to_string(), self.path().display().to_string()),
            (
                "import.delimiter".into(),
                (s.delimiter as char).escape_default().to_string(),
            ),
            ("import.key_fields".into(), list(&s.key_fields)),
            ("import.fields".into(), self.expected_fields().to_string()),
            ("import.value_format".into(), s.value_format.to_string()),
            (
                "import.trailing_delimiter".into(),
                match s.trailing_delimiter {
                    TrailingDelimiter::Strip => "strip",
                    TrailingDelimiter::Keep => "keep",
                }
                .into(),
            ),
            ("import.strict".into(), s.strict.to_string()),
            (
                "import.limit".into(),
                s.limit.map_or_else(|| "none".into(), |l| l.to_string()),
            ),
        ];
        if let Some(k) = &s.sample {
            out.push(("import.sample_keys".into(), k.fraction.to_string()));
            out.push(("import.keys_out".into(), k.path.display().to_string()));
        }
        out
    }
}

/// The reader thread: sends chunks until the file or limit ends, the clients go away
/// or the import is aborted.
struct Reader {
    chunker: LineChunker,
    ahead: Vec<Chunk>,
    tx: SyncSender<Chunk>,
    free: Receiver<Vec<u8>>,
    abort: Arc<AtomicBool>,
    read_error: Arc<Mutex<Option<String>>>,
}

impl Reader {
    fn run(mut self) {
        for chunk in std::mem::take(&mut self.ahead) {
            if self.tx.send(chunk).is_err() {
                return;
            }
        }
        while !self.abort.load(Ordering::Relaxed) {
            let buf = self
                .free
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(CHUNK_BYTES));
            match self.chunker.next_chunk(buf) {
                Ok(Some(chunk)) => {
                    if self.tx.send(chunk).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    *lock(&self.read_error) = Some(format!(
                        "reading after line {}: {e}",
                        self.chunker.next_line - 1
                    ));
                    return;
                }
            }
        }
    }
}

/// A line without its `\r` and, when `strip`, its trailing delimiter.
#[inline]
fn trim_line(line: &[u8], delimiter: u8, strip: bool) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if strip {
        line.strip_suffix(&[delimiter]).unwrap_or(line)
    } else {
        line
    }
}

/// The clients of an import share one reader: each takes the next chunk of lines when
/// it has used up its own. The source never runs dry before the file does, so the
/// workload's operation count is unbounded.
impl Workload for ImportWorkload {
    type Source = ImportSource;

    fn source(self: &Arc<Self>, seed: u64, _client: usize, _clients: usize) -> ImportSource {
        ImportSource {
            shared: Arc::clone(&self.shared),
            chunk: Vec::new(),
            pos: 0,
            line: 0,
            spans: Vec::new(),
            scratch: Vec::new(),
            sample_seed: seed ^ SAMPLE_SALT,
            sampled: Vec::new(),
            sampled_keys: 0,
            failed_inserts: 0,
            lines: 0,
        }
    }

    fn needs(&self) -> Needs {
        Needs {
            blob: self.spec().value_format == ValueFormat::Blob,
            ..Needs::default()
        }
    }

    fn operation_count(&self) -> u64 {
        u64::MAX
    }
}

/// One client of an import: the lines of its current chunk, as inserts.
#[derive(Debug)]
pub struct ImportSource {
    shared: Arc<Shared>,
    chunk: Vec<u8>,
    pos: usize,
    /// Number of the next line in `chunk`.
    line: u64,
    /// `(start, end)` of each field of the current line.
    spans: Vec<(usize, usize)>,
    /// A blob value whose fields are not consecutive.
    scratch: Vec<u8>,
    sample_seed: u64,
    /// Escaped sampled keys not yet written.
    sampled: Vec<u8>,
    sampled_keys: u64,
    failed_inserts: u64,
    lines: u64,
}

impl ImportSource {
    /// Takes the next chunk; false when there is none.
    fn refill(&mut self) -> bool {
        let next = lock(&self.shared.chunks).recv();
        let Ok(chunk) = next else {
            return false;
        };
        let old = std::mem::replace(&mut self.chunk, chunk.data);
        if old.capacity() > 0 {
            let _ = lock(&self.shared.free).send(old);
        }
        self.pos = 0;
        self.line = chunk.first_line;
        true
    }

    fn flush_sampled(&mut self) {
        if !self.sampled.is_empty() {
            self.shared.write_keys(&self.sampled);
            self.sampled.clear();
        }
    }
}

/// SplitMix64's output mix (Steele et al., OOPSLA 2014) of `seed + line · γ`.
#[inline]
fn line_hash(seed: u64, line: u64) -> u64 {
    let mut z = seed.wrapping_add(line.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl OpSource for ImportSource {
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        loop {
            if self.shared.abort.load(Ordering::Relaxed) {
                return None;
            }
            if self.pos >= self.chunk.len() && !self.refill() {
                return None;
            }
            let rest = &self.chunk[self.pos..];
            let len = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            let start = self.pos;
            self.pos += (len + 1).min(rest.len());
            let line_no = self.line;
            self.line += 1;
            self.lines += 1;
            let l = &self.shared.layout;
            let line = trim_line(
                &self.chunk[start..start + len],
                l.delimiter,
                l.strip_trailing,
            );
            if line.is_empty() {
                self.shared.blank.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            self.spans.clear();
            let mut field_start = 0;
            for d in memchr::memchr_iter(l.delimiter, line) {
                self.spans.push((field_start, d));
                field_start = d + 1;
            }
            self.spans.push((field_start, line.len()));
            if self.spans.len() != l.expected {
                let m = MalformedLine {
                    line: line_no,
                    fields: self.spans.len(),
                    expected: l.expected,
                };
                if l.strict {
                    let mut first = lock(&self.shared.strict_failure);
                    if first.as_ref().is_none_or(|f| f.line > m.line) {
                        *first = Some(m.clone());
                    }
                    drop(first);
                    self.shared.malformed(m);
                    self.shared.abort.store(true, Ordering::Relaxed);
                    return None;
                }
                self.shared.malformed(m);
                continue;
            }
            let field = |f: usize| {
                let (a, b) = self.spans[f];
                &line[a..b]
            };
            req.kind = OpKind::Insert;
            for (i, &f) in l.key_fields.iter().enumerate() {
                if i > 0 {
                    req.key.push(l.delimiter);
                }
                req.key.extend_from_slice(field(f));
            }
            if !l.blob {
                let fields = req.value.fields_mut();
                for (name, &f) in l.names.iter().zip(&l.value_fields) {
                    fields.push(name, field(f));
                }
            } else if l.value_fields.is_empty() {
                req.value.set_blob(b"");
            } else if l.value_contiguous {
                let first = self.spans[l.value_fields[0]].0;
                let last = self.spans[l.value_fields[l.value_fields.len() - 1]].1;
                req.value.set_blob(&line[first..last]);
            } else {
                self.scratch.clear();
                for (i, &f) in l.value_fields.iter().enumerate() {
                    if i > 0 {
                        self.scratch.push(l.delimiter);
                    }
                    let (a, b) = self.spans[f];
                    self.scratch.extend_from_slice(&line[a..b]);
                }
                req.value.set_blob(&self.scratch);
            }
            return Some(Ticket(line_no));
        }
    }

    fn completed(&mut self, slot: &Slot, ticket: Ticket) -> Verdict {
        self.failed_inserts += u64::from(slot.result.is_err());
        let below = self.shared.layout.sample_below;
        if below > 0
            && slot.result.is_ok()
            && (below == u64::MAX || line_hash(self.sample_seed, ticket.0) < below)
        {
            escape_key(&slot.request.key, &mut self.sampled);
            self.sampled.push(b'\n');
            self.sampled_keys += 1;
            if self.sampled.len() >= SAMPLE_FLUSH_BYTES {
                self.flush_sampled();
            }
        }
        Verdict::Unchecked
    }
}

impl Drop for ImportSource {
    fn drop(&mut self) {
        self.flush_sampled();
        let s = &self.shared;
        s.sampled.fetch_add(self.sampled_keys, Ordering::Relaxed);
        s.lines.fetch_add(self.lines, Ordering::Relaxed);
        s.failed_inserts
            .fetch_add(self.failed_inserts, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunker(text: &[u8], limit: Option<u64>) -> Vec<(u64, Vec<u8>)> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text).unwrap();
        let mut c = LineChunker {
            file: File::open(f.path()).unwrap(),
            carry: Vec::new(),
            next_line: 1,
            limit,
            done: false,
        };
        let mut out = Vec::new();
        while let Some(ch) = c.next_chunk(Vec::new()).unwrap() {
            out.push((ch.first_line, ch.data));
        }
        out
    }

    #[test]
    fn chunks_end_at_line_ends_and_honour_the_limit() {
        assert_eq!(
            chunker(b"a\nb\nc", None),
            [(1, b"a\nb\n".to_vec()), (3, b"c".to_vec())]
        );
        assert_eq!(chunker(b"a\nb\nc\n", Some(2)), [(1, b"a\nb\n".to_vec())]);
        assert_eq!(chunker(b"", None), []);
        // Lines longer than a chunk, and many chunks: line numbers stay right.
        let long = vec![b'x'; CHUNK_BYTES * 2 + 7];
        let mut text = Vec::new();
        for _ in 0..3 {
            text.extend_from_slice(&long);
            text.push(b'\n');
        }
        let chunks = chunker(&text, None);
        let mut line = 1;
        for (first, data) in &chunks {
            assert_eq!(*first, line);
            assert_eq!(data.last(), Some(&b'\n'));
            line += data.iter().filter(|&&b| b == b'\n').count() as u64;
        }
        assert_eq!(line, 4);
        assert_eq!(
            chunker(&text, Some(2))
                .iter()
                .map(|c| c.1.len())
                .sum::<usize>(),
            2 * (long.len() + 1)
        );
    }

    #[test]
    fn sample_hash_is_uniform_enough() {
        let below = (0.07 * 2f64.powi(64)) as u64;
        let hits = (0..100_000).filter(|&l| line_hash(42, l) < below).count();
        // Binomial(100000, 0.07): sd ≈ 81; a fixed seed, so this is exact, not flaky.
        assert!((6_600..7_400).contains(&hits), "{hits}");
    }
}
