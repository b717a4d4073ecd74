//! Opening a trace: telling its format, decompressing it, and picking its reader.
//!
//! [`open`] takes a path (or `-` for standard input) and [`OpenOptions`]. Compression
//! is told from the first bytes (zstd, gzip, xz, bzip2) and removed on the fly. The
//! format is the forced one ([`OpenOptions::format`]) or, otherwise:
//!
//! 1. magic bytes: a RocksDB trace's Begin record (`feedcafedeadbeef`), lcs's start
//!    magic, `KVTRACE\0`, and a first line `<secs.micros> [` (Redis MONITOR, whatever
//!    the extension);
//! 2. the extension, after stripping `.zst`/`.gz`/`.xz`/`.bz2`: `.kvtrace`,
//!    `.oracleGeneral`/`.oracleGeneral.bin`, `.lcs`, `.vscsi`, `.twr`, `.lis` (ARC),
//!    `.txt`;
//! 3. the path: a `cache2k` or `scarab` directory or name for those binary key traces;
//! 4. the first text line: `<secs.micros> [` is Redis MONITOR, 7 comma fields with an
//!    op word in the 6th Twitter, with `Read`/`Write` in the 4th MSR Cambridge, 5
//!    numeric comma fields Tencent CBS, a header line libCacheSim csv, 4 numbers ARC,
//!    3 AdaptSize, 1 LIRS (`.txt`: libCacheSim txt);
//! 5. a binary file whose first records have vscsi's version bytes is vscsi.
//!
//! Anything else asks for `--format`.

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::format::{
    adaptsize::AdaptSizeReader, arc::ArcReader, cache2k::JavaKeysReader, csv::CsvReader,
    csv::CsvSpec, lcs::LcsReader, monitor::MonitorReader, msr::MsrReader,
    oracle_general::OracleGeneralReader, rocksdb::RocksdbReader, tencent::TencentReader,
    twitter::TwitterReader, twr::TwrReader, txt::IdLinesReader, vscsi::VscsiReader,
};
use crate::input::Input;
use crate::kvtrace::KvtraceReader;
use crate::{TraceError, TraceReader};

/// A trace format, named as `--format` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// RocksDB query trace.
    Rocksdb,
    /// libCacheSim oracleGeneral.
    OracleGeneral,
    /// libCacheSim lcs (v1–v8).
    Lcs,
    /// VMware vscsi (v1/v2).
    Vscsi,
    /// Delimited text with a column spec (libCacheSim csv).
    Csv,
    /// One id per line (libCacheSim txt).
    Txt,
    /// Twitter binary (libCacheSim twr).
    Twr,
    /// Twitter cache-trace CSV.
    Twitter,
    /// ARC `.lis`.
    Arc,
    /// LIRS text.
    Lirs,
    /// cache2k big-endian i32 keys.
    Cache2k,
    /// scarab big-endian i64 keys.
    Scarab,
    /// AdaptSize `time id size`.
    AdaptSize,
    /// MSR Cambridge CSV.
    Msr,
    /// Tencent CBS CSV.
    Tencent,
    /// Redis MONITOR output.
    Monitor,
    /// kvlab's own format.
    Kvtrace,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 17] = [
        Format::Rocksdb,
        Format::OracleGeneral,
        Format::Lcs,
        Format::Vscsi,
        Format::Csv,
        Format::Txt,
        Format::Twr,
        Format::Twitter,
        Format::Arc,
        Format::Lirs,
        Format::Cache2k,
        Format::Scarab,
        Format::AdaptSize,
        Format::Msr,
        Format::Tencent,
        Format::Monitor,
        Format::Kvtrace,
    ];

    /// Other spellings `--format` takes: the ARC traces' extension, the names the
    /// traces go by where they are published.
    pub const ALIASES: [(&'static str, Format); 5] = [
        ("lis", Format::Arc),
        ("redis-monitor", Format::Monitor),
        ("oracle-general", Format::OracleGeneral),
        ("msr-cambridge", Format::Msr),
        ("tencent-cbs", Format::Tencent),
    ];

    /// The name `--format` takes (and [`crate::TraceInfo::format`] holds).
    pub fn name(self) -> &'static str {
        match self {
            Format::Rocksdb => "rocksdb",
            Format::OracleGeneral => "oracleGeneral",
            Format::Lcs => "lcs",
            Format::Vscsi => "vscsi",
            Format::Csv => "csv",
            Format::Txt => "txt",
            Format::Twr => "twr",
            Format::Twitter => "twitter",
            Format::Arc => "arc",
            Format::Lirs => "lirs",
            Format::Cache2k => "cache2k",
            Format::Scarab => "scarab",
            Format::AdaptSize => "adaptsize",
            Format::Msr => "msr",
            Format::Tencent => "tencent",
            Format::Monitor => "monitor",
            Format::Kvtrace => "kvtrace",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    /// A format by name or one of [`Format::ALIASES`], any case.
    fn from_str(s: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .or_else(|| {
                Format::ALIASES
                    .iter()
                    .find(|(alias, _)| alias.eq_ignore_ascii_case(s))
                    .map(|&(_, f)| f)
            })
            .ok_or_else(|| {
                let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                format!("unknown trace format {s:?} (known: {})", names.join(", "))
            })
    }
}

/// How to open a trace.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// The format, when not told from the file.
    pub format: Option<Format>,
    /// The columns of a [`Format::Csv`] trace (libCacheSim's spec); without one, the
    /// header line names them.
    pub csv: Option<CsvSpec>,
    /// Threads that decode a [`Format::Kvtrace`] trace's blocks ahead of the reading
    /// thread, which hands out their records in file order. `None`:
    /// [`crate::kvtrace::default_decode_threads`] (the machine's cores less one, 1 to 4);
    /// `Some(0)`: decode on the reading thread. A trace of one block is always decoded
    /// on the reading thread. Other formats ignore it.
    pub decode_threads: Option<usize>,
}

/// A compression wrapper, told from magic bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Zstd,
    Gzip,
    Xz,
    Bzip2,
}

/// The compression `head` (a stream's first bytes) starts with.
pub(crate) fn compression_of(head: &[u8]) -> Compression {
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Compression::Zstd
    } else if head.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Compression::Xz
    } else if head.starts_with(b"BZh") {
        Compression::Bzip2
    } else {
        Compression::None
    }
}

/// Bytes of a raw read from the file (the decompressors read in these chunks too).
const READ_BYTES: usize = 1 << 20;

/// Opens `path` (`-`: standard input) as a decompressed byte stream.
fn open_stream(path: &Path) -> Result<Box<dyn Read + Send>, TraceError> {
    let raw: Box<dyn Read + Send> = if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(File::open(path).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?)
    };
    decompressed(raw, path)
}

/// `raw` without its compression (told from its first bytes).
fn decompressed(
    raw: Box<dyn Read + Send>,
    path: &Path,
) -> Result<Box<dyn Read + Send>, TraceError> {
    decompressed_with(raw, path, READ_BYTES)
}

/// [`decompressed`] reading `raw` `read_bytes` at a time.
fn decompressed_with(
    raw: Box<dyn Read + Send>,
    path: &Path,
    read_bytes: usize,
) -> Result<Box<dyn Read + Send>, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut raw = BufReader::with_capacity(read_bytes, raw);
    let head = std::io::BufRead::fill_buf(&mut raw).map_err(io)?;
    Ok(match compression_of(head) {
        Compression::None => Box::new(raw),
        Compression::Zstd => Box::new(zstd::Decoder::with_buffer(raw).map_err(io)?),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(raw)),
        Compression::Xz => Box::new(xz2::bufread::XzDecoder::new_multi_decoder(raw)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(raw)),
    })
}

/// The name of `path` without compression suffixes, lower case.
fn stripped_name(path: &Path) -> String {
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    loop {
        let before = name.len();
        for ext in [".zst", ".zstd", ".gz", ".xz", ".bz2"] {
            if let Some(s) = name.strip_suffix(ext) {
                name = s.to_string();
            }
        }
        if name.len() == before {
            return name;
        }
    }
}

/// The format of a trace starting with `head` (decompressed) at `path`, if it can be
/// told.
pub fn detect(path: &Path, head: &[u8]) -> Option<Format> {
    if head.len() >= 13 + 16
        && head[8] == 1
        && head[13..].starts_with(crate::format::rocksdb::MAGIC)
    {
        return Some(Format::Rocksdb);
    }
    if head.len() >= 8
        && u64::from_le_bytes(head[..8].try_into().ok()?) == crate::format::lcs::MAGIC
    {
        return Some(Format::Lcs);
    }
    if head.starts_with(crate::kvtrace::MAGIC) {
        return Some(Format::Kvtrace);
    }
    // Redis MONITOR output is often saved as .txt or .log: its first line decides.
    if is_text(head) && detect_text(head) == Some(Format::Monitor) {
        return Some(Format::Monitor);
    }
    let name = stripped_name(path);
    let ext_formats: [(&str, Format); 9] = [
        (".kvtrace", Format::Kvtrace),
        (".oraclegeneral", Format::OracleGeneral),
        (".oraclegeneral.bin", Format::OracleGeneral),
        (".lcs", Format::Lcs),
        (".vscsi", Format::Vscsi),
        (".twr", Format::Twr),
        (".twr.bin", Format::Twr),
        (".lis", Format::Arc),
        (".txt", Format::Txt),
    ];
    if let Some((_, f)) = ext_formats.iter().find(|(ext, _)| name.ends_with(ext)) {
        return Some(*f);
    }
    let full = path.to_string_lossy().to_ascii_lowercase();
    let text = is_text(head);
    if !text {
        if full.contains("scarab") {
            return Some(Format::Scarab);
        }
        if full.contains("cache2k") {
            return Some(Format::Cache2k);
        }
        if crate::format::vscsi::version(head).is_some() {
            return Some(Format::Vscsi);
        }
        return None;
    }
    detect_text(head)
}

/// True when `head` looks like text (no NUL, mostly printable).
fn is_text(head: &[u8]) -> bool {
    !head.is_empty()
        && !head.contains(&0)
        && head
            .iter()
            .filter(|&&b| b < 0x20 && !b"\n\r\t".contains(&b))
            .count()
            == 0
}

/// The text format of a file by its first non-empty line(s).
fn detect_text(head: &[u8]) -> Option<Format> {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty() && *l != b"OK" && *l != b"*");
    let first = lines.next()?;
    let num = |f: &[u8]| !f.is_empty() && f.iter().all(u8::is_ascii_digit);
    // Redis MONITOR: `<secs>.<micros> [`.
    if let Some(sp) = first.iter().position(|&b| b == b' ') {
        let (t, rest) = first.split_at(sp);
        if rest.starts_with(b" [")
            && t.contains(&b'.')
            && t.iter().all(|&b| b.is_ascii_digit() || b == b'.')
        {
            return Some(Format::Monitor);
        }
    }
    let commas: Vec<&[u8]> = first
        .split(|&b| b == b',')
        .map(|f| f.trim_ascii())
        .collect();
    if commas.len() >= 2 {
        let op_word = |f: &[u8]| {
            std::str::from_utf8(f)
                .ok()
                .and_then(crate::Op::from_name)
                .is_some()
        };
        if commas.len() >= 7 && num(commas[0]) && op_word(commas[commas.len() - 2]) {
            return Some(Format::Twitter);
        }
        if commas.len() == 7
            && (commas[3].eq_ignore_ascii_case(b"read") || commas[3].eq_ignore_ascii_case(b"write"))
        {
            return Some(Format::Msr);
        }
        if commas.len() == 5 && commas.iter().all(|f| num(f)) {
            return Some(Format::Tencent);
        }
        return Some(Format::Csv);
    }
    let words: Vec<&[u8]> = first
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    if words.iter().all(|w| num(w)) {
        match words.len() {
            4 => return Some(Format::Arc),
            3 => return Some(Format::AdaptSize),
            1 => return Some(Format::Lirs),
            _ => {}
        }
    }
    if words.len() == 1 && words[0].starts_with(b"0x") {
        return Some(Format::Txt);
    }
    None
}

/// Opens the trace at `path` (`-`: standard input), decompressing it and telling its
/// format unless `options` forces one.
pub fn open(
    path: impl AsRef<Path>,
    options: &OpenOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let path = path.as_ref();
    reader_for(Input::new(open_stream(path)?, path), options)
}

/// Reads a trace from any byte stream (a socket, a pipe, a buffer), named `name` in
/// errors and for telling the format by extension; decompressed and told like a file.
pub fn open_reader(
    src: Box<dyn Read + Send>,
    name: impl AsRef<Path>,
    options: &OpenOptions,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let name = name.as_ref();
    reader_for(Input::new(decompressed(src, name)?, name), options)
}

/// [`open_reader`] with `buffer_bytes`-byte buffers instead of 1 MiB ones (they still
/// grow for a longer record or line): for the fuzz targets, whose inputs are small.
pub(crate) fn open_reader_buffered(
    src: Box<dyn Read + Send>,
    name: &Path,
    options: &OpenOptions,
    buffer_bytes: usize,
) -> Result<Box<dyn TraceReader>, TraceError> {
    let src = decompressed_with(src, name, buffer_bytes)?;
    reader_for(Input::with_chunk(src, name, buffer_bytes), options)
}

/// The reader of `input`'s format.
fn reader_for(mut input: Input, options: &OpenOptions) -> Result<Box<dyn TraceReader>, TraceError> {
    let path = input.path().to_path_buf();
    let path = path.as_path();
    let format = match options.format {
        Some(f) => f,
        None => {
            let head = input.peek(64 * 1024)?;
            detect(path, head).ok_or_else(|| TraceError::Format {
                path: PathBuf::from(path),
                what: format!(
                    "cannot tell the trace format; give one of: {}",
                    Format::ALL.map(|f| f.name()).join(", ")
                ),
            })?
        }
    };
    if options.csv.is_some() && format != Format::Csv {
        return Err(TraceError::Format {
            path: path.to_path_buf(),
            what: format!("a csv column spec was given, but the format is {format}"),
        });
    }
    Ok(match format {
        Format::Rocksdb => Box::new(RocksdbReader::new(input)?),
        Format::OracleGeneral => Box::new(OracleGeneralReader::new(input)),
        Format::Lcs => Box::new(LcsReader::new(input)?),
        Format::Vscsi => Box::new(VscsiReader::new(input)?),
        Format::Csv => Box::new(CsvReader::new(input, options.csv.clone())?),
        Format::Txt => Box::new(IdLinesReader::new(input, false)),
        Format::Twr => Box::new(TwrReader::new(input)),
        Format::Twitter => Box::new(TwitterReader::new(input)),
        Format::Arc => Box::new(ArcReader::new(input)),
        Format::Lirs => Box::new(IdLinesReader::new(input, true)),
        Format::Cache2k => Box::new(JavaKeysReader::new(input, 4)),
        Format::Scarab => Box::new(JavaKeysReader::new(input, 8)),
        Format::AdaptSize => Box::new(AdaptSizeReader::new(input)),
        Format::Msr => Box::new(MsrReader::new(input)),
        Format::Tencent => Box::new(TencentReader::new(input)),
        Format::Monitor => Box::new(MonitorReader::new(input)),
        Format::Kvtrace => Box::new(KvtraceReader::new(input, options.decode_threads)?),
    })
}

/// Opens a `.kvtrace` file as a [`KvtraceReader`] (for its blocks, see
/// [`KvtraceReader::next_block`]), with the default decoder threads.
pub fn open_kvtrace(path: impl AsRef<Path>) -> Result<KvtraceReader, TraceError> {
    let path = path.as_ref();
    KvtraceReader::new(Input::new(open_stream(path)?, path), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
        }
        assert_eq!("ORACLEGENERAL".parse::<Format>(), Ok(Format::OracleGeneral));
        assert!("nope".parse::<Format>().is_err());
        assert_eq!("lis".parse::<Format>(), Ok(Format::Arc));
        assert_eq!("Redis-Monitor".parse::<Format>(), Ok(Format::Monitor));
        for (alias, f) in Format::ALIASES {
            assert_eq!(alias.parse::<Format>(), Ok(f));
            // An alias names no other format.
            assert!(Format::ALL
                .iter()
                .all(|g| !g.name().eq_ignore_ascii_case(alias)));
        }
    }

    #[test]
    fn text_detection() {
        let p = Path::new("x");
        let d = |s: &str| detect(p, s.as_bytes());
        assert_eq!(
            d("OK\n1700000000.123456 [0 127.0.0.1:5555] \"GET\" \"k\"\n"),
            Some(Format::Monitor)
        );
        assert_eq!(d("1,as:0,4,68,1,get,0\n"), Some(Format::Twitter));
        assert_eq!(
            d("128166385295514663,hm,0,Write,9056014336,2048,2833\n"),
            Some(Format::Msr)
        );
        assert_eq!(d("1538323200,4247200,128,1,1058\n"), Some(Format::Tencent));
        assert_eq!(
            d("version,time,op,size,lbn\n1,2,28,512,3\n"),
            Some(Format::Csv)
        );
        assert_eq!(d("1 1 0 0\n"), Some(Format::Arc));
        assert_eq!(d("1 0 68\n"), Some(Format::AdaptSize));
        assert_eq!(d("17\n18\n"), Some(Format::Lirs));
        assert_eq!(detect(Path::new("a.txt.gz"), b"17\n"), Some(Format::Txt));
    }
}
