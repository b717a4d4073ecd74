//! libCacheSim's trace formats, written so that libCacheSim's miss ratio on the file is
//! `kvlab sim`'s.
//!
//! - **oracleGeneral** ([`LibCacheSimFormat::OracleGeneral`]): 24-byte little-endian
//!   records `u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime`, as
//!   `traceReader/customizedReader/oracle/oracleGeneralBin.h` reads them. The
//!   next-access time is the 1-based position of the next request to the same object
//!   (−1: never again), as in libCacheSim's own files (`cloudPhysicsIO.oracleGeneral.bin`:
//!   record 6's next request is record 18, written 19).
//! - **csv** ([`LibCacheSimFormat::Csv`]): a header `time,obj_id,obj_size,op`, then one
//!   line a request; libCacheSim reads it with `time-col=1, obj-id-col=2,
//!   obj-size-col=3, op-col=4, delimiter=,, has-header=true, obj-id-is-num=true`, and
//!   kvlab's csv reader from the header alone.
//! - **txt** ([`LibCacheSimFormat::Txt`]): one decimal object id a line.
//!
//! What is written, per request, is what `kvlab sim` simulates:
//!
//! - the object id is [`TraceRecord::id`]: the trace's own id, or for byte keys their
//!   64-bit FNV-1a ([`crate::key_id`]), the id every kvlab reader and `kvlab sim` use;
//! - the size is [`TraceRecord::obj_size`] (key plus value), 1 for traces without sizes
//!   (as libCacheSim's readers of such traces and `kvlab sim` count them), clamped to
//!   `u32::MAX`. In a run kvlab recorded, a read that returned nothing carries no value
//!   size: like `kvlab sim` (`LoadOptions::fill_read_sizes` in kvlab-cachesim) it takes
//!   the size of its object's previous request that had one, else of the next, else
//!   keeps the key's size;
//! - the time is in whole seconds (truncated; a trace without a clock keeps the
//!   request's position), clamped to `u32::MAX` in oracleGeneral;
//! - csv's op is libCacheSim's word (`get`, `gets`, `set`, `add`, `replace`, `cas`,
//!   `append`, `prepend`, `incr`, `decr`, `delete`, `read`, `write`; csv.c warns and
//!   drops to `nop` for any other): RocksDB's and YCSB's writes (put, insert, update,
//!   read-modify-write, merge, put-entity) are `set`, their reads (multiget, seek, scan)
//!   `get`, single and range deletes `delete`. libCacheSim does not special-case ops by
//!   default, nor does `kvlab sim`.
//!
//! Requests of size 0 are kept in oracleGeneral and csv (libCacheSim's readers and
//! `kvlab sim` both skip them) and left out of txt, which has no sizes to skip them by:
//! [`ExportSummary::skipped_zero_size`] counts them.
//!
//! **Memory.** oracleGeneral and csv are written in three passes over a scratch file
//! beside the output (32 bytes a request, deleted when done): forward (sizes from
//! earlier requests), backward (next-access times and sizes from later requests, patched
//! in place, 256 KiB at a time), forward again (the output). Each pass holds one map
//! entry per distinct object (16–24 bytes, up to about 80 with the map's spare capacity),
//! never the requests: 5 million requests to 76 thousand objects (cache2k's `orm-busy`)
//! convert in 45 MB of resident memory, 1.2 million to 258 thousand (`scarab`) in 60 MB; a
//! billion requests to 50 million objects would take about 4 GB of memory and 32 GB of
//! scratch disk. txt is written in one pass in constant memory.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::analyze::IdMap;
use crate::{Op, TraceError, TraceReader, TraceRecord};

/// Which of libCacheSim's formats to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LibCacheSimFormat {
    /// 24-byte binary records with next-access times.
    OracleGeneral,
    /// `time,obj_id,obj_size,op` text.
    Csv,
    /// One object id a line.
    Txt,
}

/// What a conversion wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Requests written.
    pub requests: u64,
    /// Requests of size 0 left out (txt only).
    pub skipped_zero_size: u64,
    /// Reads of a recorded run that carried no size and took their object's size from
    /// another request.
    pub sized_from_neighbours: u64,
}

/// Bytes of a scratch record: `u64 ts_s | u64 id | u32 size | u8 op | 3 × pad | i64 next`.
const SCRATCH_BYTES: usize = 32;
/// Scratch records patched at a time in the backward pass.
const CHUNK_RECORDS: usize = 8192;
/// "Never again" in oracleGeneral.
const NEVER: i64 = -1;
/// In the scratch file's first pass: a read whose size is still unknown.
const UNSIZED: i64 = -2;

/// Writes every record of `reader` to `out` in `format`; `path` is the output's name,
/// for messages, and where the scratch file goes (its directory).
pub fn write<R: TraceReader + ?Sized, W: Write>(
    reader: &mut R,
    format: LibCacheSimFormat,
    out: W,
    path: &Path,
) -> Result<ExportSummary, TraceError> {
    match format {
        LibCacheSimFormat::Txt => write_txt(reader, out, path),
        LibCacheSimFormat::OracleGeneral | LibCacheSimFormat::Csv => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            // Unlinked at once: nothing is left behind, even if the process dies.
            let scratch = tempfile::tempfile_in(&dir).map_err(|source| TraceError::Io {
                path: dir.join("<scratch file>"),
                source,
            })?;
            let mut summary = spill(reader, &scratch, path)?;
            let filled = patch_backward(&scratch, path)?;
            summary.sized_from_neighbours += filled;
            render(&scratch, format, out, path)?;
            Ok(summary)
        }
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> TraceError + '_ {
    move |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The size `kvlab sim` gives a request, and whether it is a read without one (a
/// recorded run's miss or empty value: [`LibCacheSimFormat`]'s docs).
fn size_of(rec: &TraceRecord, has_sizes: bool, fill: bool) -> (u32, bool) {
    if !has_sizes {
        return (1, false);
    }
    let size = u32::try_from(rec.obj_size()).unwrap_or(u32::MAX);
    // kvlab-cachesim's `OpClass::Lookup`: whatever neither writes nor deletes.
    let lookup = !rec.op.is_write() && !rec.op.is_delete();
    (size, fill && lookup && rec.value_size == 0)
}

/// Pass 1: every request to the scratch file, sizes filled from earlier requests.
fn spill<R: TraceReader + ?Sized>(
    reader: &mut R,
    scratch: &File,
    path: &Path,
) -> Result<ExportSummary, TraceError> {
    let info = reader.info().clone();
    let fill = info.has_outcomes && info.has_sizes;
    let mut known: IdMap<u32> = IdMap::default();
    let mut summary = ExportSummary::default();
    let mut w = BufWriter::with_capacity(1 << 18, scratch);
    let mut rec = TraceRecord::default();
    while reader.read(&mut rec)? {
        let (mut size, no_size) = size_of(&rec, info.has_sizes, fill);
        let mut next = NEVER;
        if no_size {
            match known.get(&rec.id) {
                Some(&s) => {
                    size = s;
                    summary.sized_from_neighbours += 1;
                }
                None => next = UNSIZED,
            }
        } else if fill && size != 0 {
            known.insert(rec.id, size);
        }
        let mut b = [0u8; SCRATCH_BYTES];
        let ts = super::convert_ts(rec.ts, info.time_unit, 1_000_000_000);
        b[0..8].copy_from_slice(&ts.to_le_bytes());
        b[8..16].copy_from_slice(&rec.id.to_le_bytes());
        b[16..20].copy_from_slice(&size.to_le_bytes());
        b[20] = rec.op as u8;
        b[24..32].copy_from_slice(&next.to_le_bytes());
        w.write_all(&b).map_err(io(path))?;
        summary.requests += 1;
    }
    w.flush().map_err(io(path))?;
    Ok(summary)
}

/// Pass 2, from the last request to the first: each request's next access, and the
/// size of reads still without one from their object's next sized request. Returns the
/// reads sized so.
fn patch_backward(scratch: &File, path: &Path) -> Result<u64, TraceError> {
    let mut f = scratch;
    let total = f.seek(SeekFrom::End(0)).map_err(io(path))? / SCRATCH_BYTES as u64;
    // Per object: the 1-based position of its next request, and the size of its next
    // request that has one (0: none).
    let mut later: IdMap<(u64, u32)> = IdMap::default();
    let mut buf = vec![0u8; CHUNK_RECORDS * SCRATCH_BYTES];
    let mut filled = 0;
    let mut end = total;
    while end > 0 {
        let start = end.saturating_sub(CHUNK_RECORDS as u64);
        let bytes = &mut buf[..(end - start) as usize * SCRATCH_BYTES];
        f.seek(SeekFrom::Start(start * SCRATCH_BYTES as u64))
            .map_err(io(path))?;
        f.read_exact(bytes).map_err(io(path))?;
        for (i, b) in bytes.chunks_exact_mut(SCRATCH_BYTES).enumerate().rev() {
            let position = start + i as u64 + 1;
            let id = u64::from_le_bytes(b[8..16].try_into().expect("an 8-byte field"));
            let mut size = u32::from_le_bytes(b[16..20].try_into().expect("a 4-byte field"));
            let no_size =
                i64::from_le_bytes(b[24..32].try_into().expect("an 8-byte field")) == UNSIZED;
            let entry = later.entry(id).or_insert((0, 0));
            let next = if entry.0 == 0 { NEVER } else { entry.0 as i64 };
            if no_size {
                if entry.1 != 0 {
                    size = entry.1;
                    b[16..20].copy_from_slice(&size.to_le_bytes());
                    filled += 1;
                }
            } else if size != 0 {
                entry.1 = size;
            }
            entry.0 = position;
            b[24..32].copy_from_slice(&next.to_le_bytes());
        }
        f.seek(SeekFrom::Start(start * SCRATCH_BYTES as u64))
            .map_err(io(path))?;
        f.write_all(bytes).map_err(io(path))?;
        end = start;
    }
    Ok(filled)
}

/// Pass 3: the scratch file, in order, as oracleGeneral or csv.
fn render<W: Write>(
    scratch: &File,
    format: LibCacheSimFormat,
    out: W,
    path: &Path,
) -> Result<(), TraceError> {
    let mut f = scratch;
    f.seek(SeekFrom::Start(0)).map_err(io(path))?;
    let mut r = BufReader::with_capacity(1 << 18, f);
    let mut w = BufWriter::with_capacity(1 << 18, out);
    if format == LibCacheSimFormat::Csv {
        w.write_all(b"time,obj_id,obj_size,op\n")
            .map_err(io(path))?;
    }
    let mut b = [0u8; SCRATCH_BYTES];
    loop {
        match r.read_exact(&mut b) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(io(path)(e)),
        }
        let ts = u64::from_le_bytes(b[0..8].try_into().expect("an 8-byte field"));
        let id = u64::from_le_bytes(b[8..16].try_into().expect("an 8-byte field"));
        let size = u32::from_le_bytes(b[16..20].try_into().expect("a 4-byte field"));
        let op = Op::ALL[usize::from(b[20])];
        let next = i64::from_le_bytes(b[24..32].try_into().expect("an 8-byte field"));
        match format {
            LibCacheSimFormat::OracleGeneral => {
                let mut o = [0u8; 24];
                let ts = u32::try_from(ts).unwrap_or(u32::MAX);
                o[0..4].copy_from_slice(&ts.to_le_bytes());
                o[4..12].copy_from_slice(&id.to_le_bytes());
                o[12..16].copy_from_slice(&size.to_le_bytes());
                o[16..24].copy_from_slice(&next.to_le_bytes());
                w.write_all(&o).map_err(io(path))?;
            }
            _ => writeln!(w, "{ts},{id},{size},{}", libcachesim_op(op)).map_err(io(path))?,
        }
    }
    w.flush().map_err(io(path))
}

/// One id a line; requests of size 0 left out (see the module docs).
fn write_txt<R: TraceReader + ?Sized, W: Write>(
    reader: &mut R,
    out: W,
    path: &Path,
) -> Result<ExportSummary, TraceError> {
    let has_sizes = reader.info().has_sizes;
    let mut w = BufWriter::with_capacity(1 << 18, out);
    let mut summary = ExportSummary::default();
    let mut rec = TraceRecord::default();
    while reader.read(&mut rec)? {
        // A recorded read without a size is never 0 here: its key's size counts.
        if has_sizes && rec.obj_size() == 0 {
            summary.skipped_zero_size += 1;
            continue;
        }
        writeln!(w, "{}", rec.id).map_err(io(path))?;
        summary.requests += 1;
    }
    w.flush().map_err(io(path))?;
    Ok(summary)
}

/// The op as libCacheSim's csv reader spells it (`traceReader/generalReader/csv.c`).
pub fn libcachesim_op(op: Op) -> &'static str {
    match op {
        Op::Get
        | Op::Gets
        | Op::Read
        | Op::Set
        | Op::Add
        | Op::Replace
        | Op::Cas
        | Op::Append
        | Op::Prepend
        | Op::Incr
        | Op::Decr
        | Op::Write
        | Op::Delete => op.name(),
        Op::Put | Op::Insert | Op::Update | Op::ReadModifyWrite | Op::Merge | Op::PutEntity => {
            "set"
        }
        Op::SingleDelete | Op::DeleteRange => "delete",
        Op::MultiGet | Op::Seek | Op::SeekForPrev | Op::Scan | Op::Other => "get",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KeyEncoding, TimeUnit, TraceInfo};

    /// Records from memory.
    struct Vec2Reader {
        info: TraceInfo,
        recs: std::vec::IntoIter<TraceRecord>,
    }

    impl TraceReader for Vec2Reader {
        fn info(&self) -> &TraceInfo {
            &self.info
        }
        fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
            match self.recs.next() {
                Some(r) => {
                    *rec = r;
                    Ok(true)
                }
                None => Ok(false),
            }
        }
    }

    fn recording(recs: &[(&[u8], Op, u64)]) -> Vec2Reader {
        let recs: Vec<TraceRecord> = recs
            .iter()
            .enumerate()
            .map(|(i, &(key, op, value_size))| {
                let mut r = TraceRecord::default();
                r.clear();
                r.set_key(key);
                r.op = op;
                r.value_size = value_size;
                r.ts = i as u64 * 600_000_000;
                r
            })
            .collect();
        Vec2Reader {
            info: TraceInfo {
                format: "kvtrace".into(),
                key_encoding: KeyEncoding::Bytes,
                time_unit: TimeUnit::Nanos,
                has_sizes: true,
                has_next_access: false,
                has_outcomes: true,
                meta: Vec::new(),
            },
            recs: recs.into_iter(),
        }
    }

    fn oracle(bytes: &[u8]) -> Vec<(u32, u64, u32, i64)> {
        bytes
            .chunks_exact(24)
            .map(|b| {
                (
                    u32::from_le_bytes(b[0..4].try_into().unwrap()),
                    u64::from_le_bytes(b[4..12].try_into().unwrap()),
                    u32::from_le_bytes(b[12..16].try_into().unwrap()),
                    i64::from_le_bytes(b[16..24].try_into().unwrap()),
                )
            })
            .collect()
    }

    #[test]
    fn oracle_general_has_next_access_and_sizes_as_kvlab_sim_loads_them() {
        // a: a read miss (no size), then its look-aside set (10 bytes), then a hit.
        // b: only ever read without a value: keeps its key's size.
        let mut r = recording(&[
            (b"a", Op::Read, 0),
            (b"a", Op::Insert, 10),
            (b"b", Op::Read, 0),
            (b"a", Op::Read, 0),
            (b"a", Op::Read, 10),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.oracleGeneral.bin");
        let mut out = Vec::new();
        let s = write(&mut r, LibCacheSimFormat::OracleGeneral, &mut out, &path).unwrap();
        assert_eq!(
            s,
            ExportSummary {
                requests: 5,
                skipped_zero_size: 0,
                sized_from_neighbours: 2
            }
        );
        let (a, b) = (crate::key_id(b"a"), crate::key_id(b"b"));
        assert_eq!(
            oracle(&out),
            vec![
                (0, a, 11, 2),
                (0, a, 11, 4),
                (1, b, 1, -1),
                (1, a, 11, 5),
                (2, a, 11, -1),
            ]
        );
        // The scratch file is gone.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn csv_has_the_header_and_libcachesim_op_words() {
        let mut r = recording(&[(b"k", Op::Update, 5), (b"k", Op::Scan, 0)]);
        let mut out = Vec::new();
        write(&mut r, LibCacheSimFormat::Csv, &mut out, Path::new("t.csv")).unwrap();
        let id = crate::key_id(b"k");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("time,obj_id,obj_size,op\n0,{id},6,set\n0,{id},6,get\n")
        );
    }

    #[test]
    fn traces_without_sizes_are_size_1_and_txt_leaves_size_0_out() {
        // A txt source: ids, no sizes. oracleGeneral gives every request size 1 (as
        // libCacheSim's txt reader and kvlab sim count them), not 0 (which both skip).
        let ids = [7u64, 9, 7];
        let info = TraceInfo {
            format: "txt".into(),
            key_encoding: KeyEncoding::Id,
            time_unit: TimeUnit::Sequence,
            has_sizes: false,
            ..TraceInfo::default()
        };
        let recs = |sizes: &[u64]| -> Vec<TraceRecord> {
            ids.iter()
                .zip(sizes)
                .enumerate()
                .map(|(i, (&id, &value_size))| TraceRecord {
                    id,
                    value_size,
                    ts: i as u64,
                    next_access: -1,
                    batch_len: 1,
                    ..TraceRecord::default()
                })
                .collect()
        };
        let mut r = Vec2Reader {
            info: info.clone(),
            recs: recs(&[0, 0, 0]).into_iter(),
        };
        let mut out = Vec::new();
        write(
            &mut r,
            LibCacheSimFormat::OracleGeneral,
            &mut out,
            Path::new("x"),
        )
        .unwrap();
        assert_eq!(
            oracle(&out),
            vec![(0, 7, 1, 3), (1, 9, 1, -1), (2, 7, 1, -1)]
        );
        // A sized source with a size-0 request: txt leaves it out and says so.
        let mut r = Vec2Reader {
            info: TraceInfo {
                has_sizes: true,
                ..info
            },
            recs: recs(&[5, 0, 5]).into_iter(),
        };
        let mut out = Vec::new();
        let s = write(&mut r, LibCacheSimFormat::Txt, &mut out, Path::new("x")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "7\n7\n");
        assert_eq!((s.requests, s.skipped_zero_size), (2, 1));
    }

    #[test]
    fn backward_pass_crosses_chunks() {
        // More requests than one chunk, cycling over 3 objects.
        let n = CHUNK_RECORDS * 2 + 5;
        let keys: Vec<[u8; 1]> = (0..n).map(|i| [b'a' + (i % 3) as u8]).collect();
        let recs: Vec<(&[u8], Op, u64)> = keys.iter().map(|k| (&k[..], Op::Get, 1)).collect();
        let mut r = recording(&recs);
        let mut out = Vec::new();
        write(
            &mut r,
            LibCacheSimFormat::OracleGeneral,
            &mut out,
            Path::new("x"),
        )
        .unwrap();
        let o = oracle(&out);
        assert_eq!(o.len(), n);
        for (i, rec) in o.iter().enumerate() {
            let expected = if i + 3 < n { (i + 3 + 1) as i64 } else { -1 };
            assert_eq!(rec.3, expected, "request {i}");
        }
    }
}
