//! Key files: one key per line, as `kvlab import --keys-out` writes them and
//! `kvlab run|verify --keys` reads them.
//!
//! - [`KeyFile`] holds every key of a file in one buffer (no allocation per key), so a
//!   random key is one index away — the sampled key file of Terark's benchmark's random
//!   reads.
//! - [`KeyFileWorkload`] runs an operation mix ([`Proportions`]) on keys chosen from a
//!   key file; [`KeyFileSource`] is one client of it.
//! - [`KeyCheck`] reads every key of a file once, for `verify --keys`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use kvlab_core::{OpKind, Outcome, Request, Slot};
use kvlab_dist::ValuePool;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::generator::{next_below, next_f64, ScrambledZipfian};
use crate::{
    fnvhash64, worker_seed, CoreWorkload, Needs, OpSource, Properties, Proportions, Ticket,
    ValueFormat, Verdict, Workload, WorkloadError,
};

/// Appends `key`, escaped for a key file (see [`KeyFile`]), to `out`.
pub fn escape_key(key: &[u8], out: &mut Vec<u8>) {
    for &b in key {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.push(b'\t'),
            0..=0x1f | 0x7f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[
                    b'\\',
                    b'x',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ]);
            }
            _ => out.push(b),
        }
    }
}

/// Appends the key that key-file line `line` (without its line terminator) stands for (see [`KeyFile`])
/// to `out`; an error says what is wrong with an escape.
pub fn unescape_key(line: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let Some(&e) = line.get(i + 1) else {
            return Err("a lone `\\` at the end of the line (write `\\\\` for a backslash)".into());
        };
        match e {
            b'\\' => out.push(b'\\'),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'x' => {
                let hex = |at: usize| line.get(at).and_then(|&c| (c as char).to_digit(16));
                let (Some(hi), Some(lo)) = (hex(i + 2), hex(i + 3)) else {
                    return Err(format!(
                        "`\\x` at byte {} must be followed by two hex digits",
                        i + 1
                    ));
                };
                out.push((hi * 16 + lo) as u8);
                i += 2;
            }
            other => {
                return Err(format!(
                    "unknown escape `\\{}` at byte {}; known: \\\\ \\n \\r \\t \\xHH",
                    other.escape_ascii(),
                    i + 1
                ))
            }
        }
        i += 2;
    }
    Ok(())
}

/// Every key of a key file, in file order, in one buffer.
///
/// # Format
///
/// One key per line, `\n`-terminated (the last line's terminator is optional; a `\r`
/// before it is dropped, so CRLF files read as expected). Blank lines are skipped, so
/// the empty key cannot be listed. A key is written verbatim except for these escapes,
/// which [`escape_key`] writes and [`unescape_key`] reads: `\\` (a backslash), `\n`,
/// `\r`, `\t` (a tab, which is also accepted verbatim), and `\xHH` (any byte, two hex
/// digits) — written for the other control bytes (below 0x20, and 0x7F). Bytes from
/// 0x80 on are written verbatim. Any other backslash sequence is an error naming the
/// file and line. Keys from `awk` or `cut` are the same file unless they hold
/// backslashes.
#[derive(Clone, Debug)]
pub struct KeyFile {
    path: PathBuf,
    bytes: Vec<u8>,
    /// `ends[i]` is where key `i` ends in `bytes` (key `i` starts at `ends[i - 1]`).
    ends: Vec<usize>,
}

impl KeyFile {
    /// Reads a key file sequentially (a pipe or `/dev/stdin` works too).
    pub fn load(path: &Path) -> Result<KeyFile, WorkloadError> {
        let io = |source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut std::fs::File::open(path).map_err(io)?, &mut text)
            .map_err(io)?;
        KeyFile::parse(&text, path)
    }

    /// Parses key-file bytes; `path` names the file in errors.
    pub fn parse(text: &[u8], path: &Path) -> Result<KeyFile, WorkloadError> {
        let mut bytes = Vec::with_capacity(text.len());
        let mut ends = Vec::new();
        for (index, raw) in text.split(|&b| b == b'\n').enumerate() {
            let line = raw.strip_suffix(b"\r").unwrap_or(raw);
            if line.is_empty() {
                continue;
            }
            unescape_key(line, &mut bytes).map_err(|message| WorkloadError::Syntax {
                path: path.to_path_buf(),
                line: index + 1,
                message,
            })?;
            ends.push(bytes.len());
        }
        bytes.shrink_to_fit();
        Ok(KeyFile {
            path: path.to_path_buf(),
            bytes,
            ends,
        })
    }

    /// The file the keys came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when the file holds no key.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Key `i` (in file order).
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// Every key, in file order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// How a key-file client picks its next key.
#[derive(Clone, Debug)]
enum KeyOrder {
    /// Uniform over the file (Terark's benchmark's random reads).
    Uniform,
    /// YCSB's scrambled Zipfian over the file's line numbers.
    Zipfian(ScrambledZipfian),
    /// Each client walks the file in order from its own starting point, wrapping (a
    /// pre-shuffled key file read in order: Terark's benchmark's `--use_shuf_key`).
    Sequential,
}

/// Mixed into the run seed for the suffixes of inserted keys.
const INSERT_SALT: u64 = 0x6b65_7966_696c_6569;
/// Size of the random value pool, before room for one maximal value.
const VALUE_POOL_BYTES: usize = 64 << 10;
/// Seed of the value pool: fixed, so values never depend on the clock.
const VALUE_POOL_SEED: u64 = 0x6b65_7966_696c_6576;

/// An operation mix on keys from a [`KeyFile`].
///
/// Built from YCSB properties (every CoreWorkload property is accepted and validated as
/// for `run -P`; these matter):
///
/// - the six `*proportion` properties: the mix ([`Proportions::from_properties`]);
/// - `operationcount`: operations when the run gives neither a count nor a duration;
/// - `requestdistribution`: `uniform` (default), `zipfian` (YCSB's scrambled Zipfian
///   over the file's keys, θ = `zipfianconstant`) or `sequential` (each client walks
///   the file from its own starting point, `client × keys / clients`, wrapping);
/// - `fieldlength` (100), `fieldcount` (10), `fieldnameprefix` (field),
///   `writeallfields` (false): the values written;
/// - `minscanlength`, `maxscanlength`: scan lengths, uniform.
///
/// Operations:
///
/// - **read**: the key, every field (with [`ValueFormat::Blob`] a blob read: the stored
///   value as one opaque field). Keys come only from the file, so on a store that holds
///   the file's keys a read never misses.
/// - **update**: rewrites the value of a key from the file — a blob of `fieldlength`
///   random printable bytes, or with [`ValueFormat::Fields`] one random field
///   `field0..field{fieldcount-1}` of `fieldlength` bytes (every field with
///   `writeallfields=true`); set `fieldcount` to the imported value's field count so
///   updates name real fields.
/// - **insert**: a new key, `KEY#HHHHHHHHHHHHHHHH` — a key from the file, `#`, and 16
///   hex digits unique to the client and insert (derived from the run seed) — with a
///   value as for an update but complete (every field). Inserted keys are never read.
/// - **scan**, **read-modify-write**, **delete**: on keys from the file (deleted keys
///   then miss when read).
///
/// `dataintegrity=true` and length distributions other than `constant` are refused:
/// imported values are not YCSB's.
#[derive(Debug)]
pub struct KeyFileWorkload {
    keys: Arc<KeyFile>,
    mix: Proportions,
    order: KeyOrder,
    format: ValueFormat,
    field_names: Vec<Vec<u8>>,
    field_length: usize,
    write_all_fields: bool,
    scan_lengths: (u64, u64),
    operation_count: u64,
    pool: ValuePool,
    effective: Vec<(String, String)>,
}

impl KeyFileWorkload {
    /// Validates `props` as [`CoreWorkload::from_properties`] does (`other_known` and
    /// `passthrough_prefixes` as there) and builds the workload; errors when the key
    /// file is empty or a property does not apply to key files.
    pub fn from_properties(
        keys: Arc<KeyFile>,
        format: ValueFormat,
        props: &Properties,
        other_known: &[&str],
        passthrough_prefixes: &[&str],
    ) -> Result<KeyFileWorkload, WorkloadError> {
        if keys.is_empty() {
            return Err(WorkloadError::Inconsistent(format!(
                "the key file {} holds no keys",
                keys.path().display()
            )));
        }
        let core = CoreWorkload::from_properties(props, other_known, passthrough_prefixes)?;
        let effective = core.effective();
        let get = |name: &str| -> &str {
            effective
                .iter()
                .find(|(k, _)| k == name)
                .map_or("", |(_, v)| v.as_str())
        };
        let refuse = |name: &str, why: &str| {
            WorkloadError::Inconsistent(format!(
                "{name}={} ({}) does not apply to a key file: {why}",
                get(name),
                props
                    .origin(name)
                    .map_or_else(|| "default".to_string(), ToString::to_string)
            ))
        };
        if core.data_integrity() {
            return Err(refuse(
                "dataintegrity",
                "imported values are not YCSB's deterministic values",
            ));
        }
        if get("fieldlengthdistribution") != "constant" {
            return Err(refuse(
                "fieldlengthdistribution",
                "values written with --keys have a constant length (fieldlength)",
            ));
        }
        let parse = |name: &str| -> u64 { get(name).parse().unwrap_or(0) };
        let order = match get("requestdistribution") {
            "uniform" => KeyOrder::Uniform,
            "sequential" => KeyOrder::Sequential,
            "zipfian" => KeyOrder::Zipfian(ScrambledZipfian::new(
                0,
                keys.len() as u64 - 1,
                get("zipfianconstant").parse().unwrap_or(0.99),
            )),
            _ => {
                return Err(refuse(
                    "requestdistribution",
                    "with --keys it must be uniform, zipfian or sequential",
                ))
            }
        };
        let field_count = parse("fieldcount").max(1);
        let prefix = get("fieldnameprefix");
        let field_names = match format {
            ValueFormat::Blob => vec![Vec::new()],
            ValueFormat::Fields => (0..field_count)
                .map(|i| format!("{prefix}{i}").into_bytes())
                .collect(),
        };
        let field_length = parse("fieldlength") as usize;
        let pool = ValuePool::printable(VALUE_POOL_BYTES + field_length, VALUE_POOL_SEED);
        let mut wl = KeyFileWorkload {
            mix: Proportions::from_properties(props)?,
            keys,
            order,
            format,
            field_names,
            field_length,
            write_all_fields: get("writeallfields") == "true",
            scan_lengths: (parse("minscanlength"), parse("maxscanlength")),
            operation_count: core.operation_count(),
            pool,
            effective: Vec::new(),
        };
        wl.effective = wl.describe(&effective);
        Ok(wl)
    }

    fn describe(&self, core: &[(String, String)]) -> Vec<(String, String)> {
        const USED: &[&str] = &[
            "fieldcount",
            "fieldlength",
            "fieldnameprefix",
            "maxscanlength",
            "minscanlength",
            "operationcount",
            "requestdistribution",
            "writeallfields",
            "zipfianconstant",
        ];
        let mut out: Vec<(String, String)> = core
            .iter()
            .filter(|(k, _)| USED.contains(&k.as_str()))
            .cloned()
            .collect();
        out.extend(self.mix.properties());
        out.push(("keyfile".into(), self.keys.path().display().to_string()));
        out.push(("keyfile.keys".into(), self.keys.len().to_string()));
        out.push(("keyfile.valueformat".into(), self.format.to_string()));
        out.sort();
        out
    }

    /// The same workload with another mix (a plan group's).
    pub fn with_mix(&self, mix: Proportions) -> KeyFileWorkload {
        let mut wl = KeyFileWorkload {
            keys: Arc::clone(&self.keys),
            mix,
            order: self.order.clone(),
            format: self.format,
            field_names: self.field_names.clone(),
            field_length: self.field_length,
            write_all_fields: self.write_all_fields,
            scan_lengths: self.scan_lengths,
            operation_count: self.operation_count,
            pool: self.pool.clone(),
            effective: Vec::new(),
        };
        let base: Vec<(String, String)> = self
            .effective
            .iter()
            .filter(|(k, _)| !crate::PROPORTION_KEYS.contains(&k.as_str()))
            .cloned()
            .collect();
        wl.effective = base;
        wl.effective.extend(mix.properties());
        wl.effective.sort();
        wl
    }

    /// The keys.
    pub fn keys(&self) -> &Arc<KeyFile> {
        &self.keys
    }

    /// The operation mix.
    pub fn mix(&self) -> &Proportions {
        &self.mix
    }

    /// How values are read and written.
    pub fn value_format(&self) -> ValueFormat {
        self.format
    }

    /// The names of a record's fields (`fieldnameprefix` + 0 … `fieldcount` − 1); none
    /// for a blob value.
    pub fn field_names(&self) -> &[Vec<u8>] {
        match self.format {
            ValueFormat::Blob => &[],
            ValueFormat::Fields => &self.field_names,
        }
    }

    /// The properties that shaped the workload, with their effective values, sorted.
    pub fn effective(&self) -> Vec<(String, String)> {
        self.effective.clone()
    }

    /// Writes a value of the workload's shape into `req.value`: a blob, every field, or
    /// (for a fields-format update without `writeallfields`) one random field.
    #[inline]
    fn push_value(&self, rng: &mut Xoshiro256PlusPlus, req: &mut Request, all: bool) {
        let len = self.field_length;
        if self.format == ValueFormat::Blob {
            req.value.set_blob(self.pool.slice(rng, len));
            return;
        }
        let fields = req.value.fields_mut();
        let mut push = |name: &[u8], rng: &mut Xoshiro256PlusPlus| {
            fields.push(name, self.pool.slice(rng, len));
        };
        if all || self.write_all_fields || self.field_names.len() == 1 {
            for name in &self.field_names {
                push(name, rng);
            }
        } else {
            let i = next_below(rng, self.field_names.len() as u64) as usize;
            push(&self.field_names[i], rng);
        }
    }
}

/// One client of a [`KeyFileWorkload`].
#[derive(Debug)]
pub struct KeyFileSource {
    workload: Arc<KeyFileWorkload>,
    rng: Xoshiro256PlusPlus,
    /// Next line for [`KeyOrder::Sequential`].
    cursor: usize,
    /// Seeds the suffixes of this client's inserted keys.
    insert_base: u64,
    inserts: u64,
}

/// The next key index for `order` over `n` keys.
#[inline]
fn next_index(
    order: &KeyOrder,
    n: usize,
    rng: &mut Xoshiro256PlusPlus,
    cursor: &mut usize,
) -> usize {
    match order {
        KeyOrder::Uniform => next_below(rng, n as u64) as usize,
        KeyOrder::Zipfian(z) => z.next(rng) as usize,
        KeyOrder::Sequential => {
            let i = *cursor;
            *cursor = if i + 1 == n { 0 } else { i + 1 };
            i
        }
    }
}

impl OpSource for KeyFileSource {
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        let wl = &*self.workload;
        let kind = wl.mix.choose(next_f64(&mut self.rng));
        req.kind = kind;
        if wl.format == ValueFormat::Blob {
            req.read.set_blob();
        }
        let index = next_index(&wl.order, wl.keys.len(), &mut self.rng, &mut self.cursor);
        req.key.extend_from_slice(wl.keys.get(index));
        match kind {
            OpKind::Read => {}
            OpKind::Scan => {
                let (lo, hi) = wl.scan_lengths;
                req.scan_len = (lo + next_below(&mut self.rng, hi - lo + 1)) as u32;
            }
            OpKind::Update | OpKind::ReadModifyWrite => {
                wl.push_value(&mut self.rng, req, false);
            }
            OpKind::Insert => {
                let suffix = fnvhash64(self.insert_base.wrapping_add(self.inserts));
                self.inserts += 1;
                let _ = write!(KeySuffix(&mut req.key), "#{suffix:016x}");
                wl.push_value(&mut self.rng, req, true);
            }
            OpKind::Delete => {}
        }
        Some(Ticket::NONE)
    }

    fn completed(&mut self, _slot: &Slot, _ticket: Ticket) -> Verdict {
        Verdict::Unchecked
    }
}

/// Lets `write!` append to a key buffer.
struct KeySuffix<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for KeySuffix<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Clients of a key-file workload; client `c` is seeded with
/// [`worker_seed`]`(seed, c)`.
impl Workload for KeyFileWorkload {
    type Source = KeyFileSource;

    fn source(self: &Arc<Self>, seed: u64, client: usize, clients: usize) -> KeyFileSource {
        let n = self.keys.len();
        KeyFileSource {
            workload: Arc::clone(self),
            rng: Xoshiro256PlusPlus::seed_from_u64(worker_seed(seed, client)),
            cursor: (client as u128 * n as u128 / clients.max(1) as u128) as usize,
            insert_base: worker_seed(seed ^ INSERT_SALT, client) << 20,
            inserts: 0,
        }
    }

    fn needs(&self) -> Needs {
        Needs {
            scan: self.mix.weight(OpKind::Scan) > 0.0,
            blob: self.format == ValueFormat::Blob,
            ..Needs::default()
        }
    }

    fn operation_count(&self) -> u64 {
        self.operation_count
    }
}

/// How many missing keys and errors a [`KeyCheck`] keeps for its report.
const FIRST_FEW: usize = 10;

/// Reads every key of a key file once: `verify --keys`.
///
/// Client `c` of `C` reads a contiguous slice of the file (`len / C` keys, one more for
/// the first `len % C` clients). The runner's results count the reads by status
/// (NOT_FOUND is a missing key); [`KeyCheck::first_missing`] and
/// [`KeyCheck::first_errors`] name the first few, in file order.
#[derive(Debug)]
pub struct KeyCheck {
    keys: Arc<KeyFile>,
    blob: bool,
    missing: Mutex<Vec<(usize, Vec<u8>)>>,
    errors: Mutex<Vec<(usize, String)>>,
}

impl KeyCheck {
    /// A check of every key in `keys`; `format` says how the values were stored.
    pub fn new(keys: Arc<KeyFile>, format: ValueFormat) -> KeyCheck {
        KeyCheck {
            keys,
            blob: format == ValueFormat::Blob,
            missing: Mutex::new(Vec::new()),
            errors: Mutex::new(Vec::new()),
        }
    }

    /// The keys checked.
    pub fn keys(&self) -> &Arc<KeyFile> {
        &self.keys
    }

    /// The first few missing keys, in file order.
    pub fn first_missing(&self) -> Vec<Vec<u8>> {
        let v = self.missing.lock().unwrap_or_else(|p| p.into_inner());
        v.iter().map(|(_, k)| k.clone()).collect()
    }

    /// The first few failed reads (`key: error`), in file order.
    pub fn first_errors(&self) -> Vec<String> {
        let v = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        v.iter().map(|(_, e)| e.clone()).collect()
    }
}

/// Keeps the `FIRST_FEW` entries with the smallest indices.
fn keep_first<T>(list: &Mutex<Vec<(usize, T)>>, index: usize, item: impl FnOnce() -> T) {
    let mut v = list.lock().unwrap_or_else(|p| p.into_inner());
    if v.len() >= FIRST_FEW && v.last().is_some_and(|(i, _)| *i < index) {
        return;
    }
    let at = v.partition_point(|(i, _)| *i < index);
    v.insert(at, (index, item()));
    v.truncate(FIRST_FEW);
}

impl Workload for KeyCheck {
    type Source = KeyCheckSource;

    fn source(self: &Arc<Self>, _seed: u64, client: usize, clients: usize) -> KeyCheckSource {
        let n = self.keys.len();
        let clients = clients.max(1);
        let (base, extra) = (n / clients, n % clients);
        let start = client * base + client.min(extra);
        KeyCheckSource {
            check: Arc::clone(self),
            next: start,
            end: start + base + usize::from(client < extra),
        }
    }

    fn needs(&self) -> Needs {
        Needs {
            blob: self.blob,
            ..Needs::default()
        }
    }

    fn operation_count(&self) -> u64 {
        self.keys.len() as u64
    }
}

/// One client's slice of a [`KeyCheck`].
#[derive(Debug)]
pub struct KeyCheckSource {
    check: Arc<KeyCheck>,
    next: usize,
    end: usize,
}

impl OpSource for KeyCheckSource {
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        req.kind = OpKind::Read;
        if self.check.blob {
            req.read.set_blob();
        }
        req.key.extend_from_slice(self.check.keys.get(i));
        Some(Ticket(i as u64))
    }

    fn completed(&mut self, slot: &Slot, ticket: Ticket) -> Verdict {
        let index = ticket.0 as usize;
        match &slot.result {
            Ok(Outcome::Miss) => {
                keep_first(&self.check.missing, index, || slot.request.key.clone());
            }
            Ok(_) => {}
            Err(e) => keep_first(&self.check.errors, index, || {
                format!("{}: {e}", String::from_utf8_lossy(&slot.request.key))
            }),
        }
        Verdict::Unchecked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        let keys: [&[u8]; 5] = [
            b"1|155190|7706",
            b"back\\slash",
            b"new\nline\r",
            b"tab\there",
            b"\x00\x1f\x7f\xff",
        ];
        for key in keys {
            let mut line = Vec::new();
            escape_key(key, &mut line);
            assert!(!line.contains(&b'\n') && !line.contains(&b'\r'), "{line:?}");
            let mut back = Vec::new();
            unescape_key(&line, &mut back).unwrap();
            assert_eq!(back, key);
        }
        let mut line = Vec::new();
        escape_key(b"a\\b\x01", &mut line);
        assert_eq!(line, b"a\\\\b\\x01");
    }

    #[test]
    fn bad_escapes_name_the_line() {
        let err = KeyFile::parse(b"ok\nbad\\q\n", Path::new("k.txt")).unwrap_err();
        assert!(
            matches!(&err, WorkloadError::Syntax { line: 2, .. }),
            "{err}"
        );
        assert!(
            err.to_string().starts_with("k.txt:2: unknown escape"),
            "{err}"
        );
        for bad in [&b"x\\"[..], b"\\x4", b"\\xzz"] {
            assert!(unescape_key(bad, &mut Vec::new()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn key_file_skips_blank_lines_and_crlf() {
        let f = KeyFile::parse(b"a\r\n\nb\\x41\nc", Path::new("k")).unwrap();
        assert_eq!(f.iter().collect::<Vec<_>>(), [&b"a"[..], b"bA", b"c"]);
        assert_eq!(f.get(1), b"bA");
    }

    #[test]
    fn check_slices_cover_every_key_once() {
        let text: Vec<u8> = (0..103)
            .flat_map(|i| format!("k{i}\n").into_bytes())
            .collect();
        let check = Arc::new(KeyCheck::new(
            Arc::new(KeyFile::parse(&text, Path::new("k")).unwrap()),
            ValueFormat::Blob,
        ));
        let mut seen = Vec::new();
        for c in 0..4 {
            let mut s = check.source(0, c, 4);
            let mut req = Request::default();
            while s.next(&mut req).is_some() {
                seen.push(String::from_utf8(req.key.clone()).unwrap());
                req.clear();
            }
        }
        let expected: Vec<String> = (0..103).map(|i| format!("k{i}")).collect();
        assert_eq!(seen, expected);
    }
}
