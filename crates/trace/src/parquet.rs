//! Traces as Apache Parquet (cargo feature `parquet`): one row per request, one column
//! per [`TraceRecord`] field, for DuckDB, pandas, Spark and friends.
//!
//! [`write_parquet`] exports any [`TraceReader`]; [`ParquetReader`] ([`open_parquet`])
//! reads such a file back as a [`TraceReader`], losing nothing. The source's
//! [`TraceInfo`] is kept as JSON in the file's key-value metadata under
//! `kvlab.trace_info`.
//!
//! Columns (all required; unsigned integers carry Parquet's `INTEGER(n, false)`
//! annotation): `ts` u64, `op` string ([`crate::Op::name`]), `key` binary (empty for id
//! traces), `id` u64, `key_size` u32, `value_size` u64, `scan_len` u32, `ttl_s` u32, `cf`
//! u32, `next_access` i64, `batch_len` u32, `batch_pos` u32, `outcome` string (`unknown`,
//! `hit`, `miss`, `error`), `latency_ns` u64, `intended_ns` u64, `lower_bound` binary,
//! `upper_bound` binary.
//!
//! # `trace stats` in DuckDB
//!
//! This query gives [`crate::Stats`]'s figures from an export (`bytes` is null-free
//! here: check the trace's `has_sizes` in the metadata; percentiles are nearest-rank,
//! which `quantile_disc` matches on these traces but not for every n):
//!
//! ```sql
//! SELECT count(*)                                   AS requests,
//!        count(DISTINCT id)                         AS distinct_keys,
//!        sum(key_size + value_size)                 AS bytes,
//!        arg_min(ts, file_row_number)               AS first_ts,
//!        arg_max(ts, file_row_number)               AS last_ts,
//!        min(value_size)                            AS value_size_min,
//!        max(value_size)                            AS value_size_max,
//!        avg(value_size)                            AS value_size_mean,
//!        quantile_disc(value_size, 0.5)             AS value_size_p50,
//!        quantile_disc(value_size, 0.99)            AS value_size_p99
//! FROM read_parquet('trace.parquet', file_row_number = true);
//!
//! SELECT op, count(*) AS n FROM 'trace.parquet' GROUP BY op ORDER BY op;
//! ```

use std::fs::File;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::format::KeyValue;
use parquet::record::{Row, RowAccessor};
use parquet::schema::parser::parse_message_type;

use crate::{Op, Outcome, TraceError, TraceInfo, TraceReader, TraceRecord};

/// The metadata key holding the source's [`TraceInfo`] as JSON.
pub const INFO_KEY: &str = "kvlab.trace_info";

/// Rows buffered per row group.
const ROW_GROUP_ROWS: usize = 1 << 20;

const SCHEMA: &str = "
message kvlab_trace {
  required int64 ts (INTEGER(64,false));
  required binary op (STRING);
  required binary key;
  required int64 id (INTEGER(64,false));
  required int32 key_size (INTEGER(32,false));
  required int64 value_size (INTEGER(64,false));
  required int32 scan_len (INTEGER(32,false));
  required int32 ttl_s (INTEGER(32,false));
  required int32 cf (INTEGER(32,false));
  required int64 next_access;
  required int32 batch_len (INTEGER(32,false));
  required int32 batch_pos (INTEGER(32,false));
  required binary outcome (STRING);
  required int64 latency_ns (INTEGER(64,false));
  required int64 intended_ns (INTEGER(64,false));
  required binary lower_bound;
  required binary upper_bound;
}";

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Unknown => "unknown",
        Outcome::Hit => "hit",
        Outcome::Miss => "miss",
        Outcome::Error => "error",
    }
}

fn err(path: &Path, e: impl std::fmt::Display) -> TraceError {
    TraceError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// One row group's columns.
#[derive(Default)]
struct Columns {
    ts: Vec<i64>,
    op: Vec<ByteArray>,
    key: Vec<ByteArray>,
    id: Vec<i64>,
    key_size: Vec<i32>,
    value_size: Vec<i64>,
    scan_len: Vec<i32>,
    ttl_s: Vec<i32>,
    cf: Vec<i32>,
    next_access: Vec<i64>,
    batch_len: Vec<i32>,
    batch_pos: Vec<i32>,
    outcome: Vec<ByteArray>,
    latency_ns: Vec<i64>,
    intended_ns: Vec<i64>,
    lower_bound: Vec<ByteArray>,
    upper_bound: Vec<ByteArray>,
}

impl Columns {
    // Unsigned values are stored in signed physical columns bit for bit, as Parquet's
    // unsigned annotations define.
    fn push(&mut self, r: &TraceRecord) {
        self.ts.push(r.ts as i64);
        self.op.push(ByteArray::from(r.op.name()));
        self.key.push(ByteArray::from(r.key.clone()));
        self.id.push(r.id as i64);
        self.key_size.push(r.key_size as i32);
        self.value_size.push(r.value_size as i64);
        self.scan_len.push(r.scan_len as i32);
        self.ttl_s.push(r.ttl_s as i32);
        self.cf.push(r.cf as i32);
        self.next_access.push(r.next_access);
        self.batch_len.push(r.batch_len as i32);
        self.batch_pos.push(r.batch_pos as i32);
        self.outcome.push(ByteArray::from(outcome_name(r.outcome)));
        self.latency_ns.push(r.latency_ns as i64);
        self.intended_ns.push(r.intended_ns as i64);
        self.lower_bound
            .push(ByteArray::from(r.lower_bound.clone()));
        self.upper_bound
            .push(ByteArray::from(r.upper_bound.clone()));
    }

    fn len(&self) -> usize {
        self.ts.len()
    }

    fn write<W: Write + Send>(
        &mut self,
        w: &mut SerializedFileWriter<W>,
        path: &Path,
    ) -> Result<(), TraceError> {
        let mut rg = w.next_row_group().map_err(|e| err(path, e))?;
        macro_rules! column {
            ($t:ty, $v:expr) => {{
                let mut c = rg
                    .next_column()
                    .map_err(|e| err(path, e))?
                    .ok_or_else(|| err(path, "the schema has fewer columns than written"))?;
                c.typed::<$t>()
                    .write_batch(&$v, None, None)
                    .map_err(|e| err(path, e))?;
                c.close().map_err(|e| err(path, e))?;
                $v.clear();
            }};
        }
        // In schema order.
        column!(Int64Type, self.ts);
        column!(ByteArrayType, self.op);
        column!(ByteArrayType, self.key);
        column!(Int64Type, self.id);
        column!(Int32Type, self.key_size);
        column!(Int64Type, self.value_size);
        column!(Int32Type, self.scan_len);
        column!(Int32Type, self.ttl_s);
        column!(Int32Type, self.cf);
        column!(Int64Type, self.next_access);
        column!(Int32Type, self.batch_len);
        column!(Int32Type, self.batch_pos);
        column!(ByteArrayType, self.outcome);
        column!(Int64Type, self.latency_ns);
        column!(Int64Type, self.intended_ns);
        column!(ByteArrayType, self.lower_bound);
        column!(ByteArrayType, self.upper_bound);
        rg.close().map_err(|e| err(path, e))?;
        Ok(())
    }
}

/// Writes every record of `reader` to `out` (named `path` in errors) as Parquet;
/// returns the rows written.
pub fn write_parquet<R: TraceReader + ?Sized, W: Write + Send>(
    reader: &mut R,
    out: W,
    path: &Path,
) -> Result<u64, TraceError> {
    let schema = Arc::new(parse_message_type(SCHEMA).map_err(|e| err(path, e))?);
    let info = serde_json::to_string(reader.info()).map_err(|e| err(path, e))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_key_value_metadata(Some(vec![KeyValue::new(INFO_KEY.to_string(), info)]))
        .build();
    let mut w =
        SerializedFileWriter::new(out, schema, Arc::new(props)).map_err(|e| err(path, e))?;
    let mut cols = Columns::default();
    let mut rec = TraceRecord::default();
    let mut rows = 0;
    while reader.read(&mut rec)? {
        cols.push(&rec);
        rows += 1;
        if cols.len() >= ROW_GROUP_ROWS {
            cols.write(&mut w, path)?;
        }
    }
    if cols.len() > 0 {
        cols.write(&mut w, path)?;
    }
    w.close().map_err(|e| err(path, e))?;
    Ok(rows)
}

/// Reads a Parquet export back.
pub struct ParquetReader {
    rows: parquet::record::reader::RowIter<'static>,
    info: TraceInfo,
    path: PathBuf,
    row: u64,
    /// The parquet crate panicked: the rows are not read further.
    failed: bool,
}

/// What a panic of the parquet crate's decoder is reported as.
const CORRUPT: &str = "a corrupt Parquet file (the decoder failed)";

/// Opens a Parquet file [`write_parquet`] wrote.
pub fn open_parquet(path: impl AsRef<Path>) -> Result<ParquetReader, TraceError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parquet_reader(file, path)
}

/// [`open_parquet`] of the bytes `chunks` holds (a file, or bytes in memory for the
/// fuzz target), named `path` in errors.
pub(crate) fn parquet_reader<R: ChunkReader + 'static>(
    chunks: R,
    path: &Path,
) -> Result<ParquetReader, TraceError> {
    // The parquet crate panics on some corrupt files (an index out of bounds in its RLE
    // decoder, found by the `parquet` fuzz target): a corrupt file is an error here.
    let reader = catch_unwind(AssertUnwindSafe(|| SerializedFileReader::new(chunks)))
        .map_err(|_| err(path, CORRUPT))?
        .map_err(|e| err(path, e))?;
    let info = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == INFO_KEY))
        .and_then(|k| k.value.as_deref())
        .and_then(|v| serde_json::from_str::<TraceInfo>(v).ok())
        .unwrap_or_else(|| TraceInfo {
            format: "parquet".to_string(),
            ..TraceInfo::default()
        });
    Ok(ParquetReader {
        rows: parquet::record::reader::RowIter::from_file_into(Box::new(reader)),
        info,
        path: path.to_path_buf(),
        row: 0,
        failed: false,
    })
}

impl ParquetReader {
    fn fill(row: &Row, rec: &mut TraceRecord) -> parquet::errors::Result<()> {
        rec.clear();
        rec.ts = row.get_ulong(0)?;
        rec.op = Op::from_name(row.get_string(1)?).unwrap_or(Op::Other);
        rec.key.extend_from_slice(row.get_bytes(2)?.data());
        rec.id = row.get_ulong(3)?;
        rec.key_size = row.get_uint(4)?;
        rec.value_size = row.get_ulong(5)?;
        rec.scan_len = row.get_uint(6)?;
        rec.ttl_s = row.get_uint(7)?;
        rec.cf = row.get_uint(8)?;
        rec.next_access = row.get_long(9)?;
        rec.batch_len = row.get_uint(10)?;
        rec.batch_pos = row.get_uint(11)?;
        rec.outcome = match row.get_string(12)?.as_str() {
            "hit" => Outcome::Hit,
            "miss" => Outcome::Miss,
            "error" => Outcome::Error,
            _ => Outcome::Unknown,
        };
        rec.latency_ns = row.get_ulong(13)?;
        rec.intended_ns = row.get_ulong(14)?;
        rec.lower_bound.extend_from_slice(row.get_bytes(15)?.data());
        rec.upper_bound.extend_from_slice(row.get_bytes(16)?.data());
        Ok(())
    }
}

impl TraceReader for ParquetReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        if self.failed {
            return Ok(false);
        }
        let next = catch_unwind(AssertUnwindSafe(|| self.rows.next())).map_err(|_| {
            self.failed = true;
            err(&self.path, format!("row {}: {CORRUPT}", self.row))
        })?;
        let Some(row) = next else {
            return Ok(false);
        };
        let row = row.map_err(|e| err(&self.path, format!("row {}: {e}", self.row)))?;
        Self::fill(&row, rec).map_err(|e| {
            err(
                &self.path,
                format!("row {}: not a kvlab trace row: {e}", self.row),
            )
        })?;
        self.row += 1;
        Ok(true)
    }
}
