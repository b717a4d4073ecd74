//! Reading a Parquet export back as a trace.

use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::record::{Field, Row};

use super::{err, INFO_KEY, LAYOUT_KEY, ORIGIN_KEY};
use crate::{Op, Outcome, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads a Parquet export back.
pub struct ParquetReader {
    rows: parquet::record::reader::RowIter<'static>,
    info: TraceInfo,
    path: PathBuf,
    row: u64,
    /// `ts` is wall-clock nanoseconds from this origin (layout 2); `None`: `ts` is in
    /// the source's unit (the first layout).
    origin_ns: Option<i128>,
    /// The parquet crate panicked: the rows are not read further.
    failed: bool,
}

/// What a panic of the parquet crate's decoder is reported as.
const CORRUPT: &str = "a corrupt Parquet file (the decoder failed)";

/// Opens a Parquet file [`super::write_parquet`] or [`super::write_dataset`] wrote
/// (either layout).
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
    let meta = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default();
    let value = |key: &str| {
        meta.iter()
            .find(|k| k.key == key)
            .and_then(|k| k.value.clone())
    };
    let info = value(INFO_KEY)
        .and_then(|v| serde_json::from_str::<TraceInfo>(&v).ok())
        .unwrap_or_else(|| TraceInfo {
            format: "parquet".to_string(),
            ..TraceInfo::default()
        });
    let origin_ns = match value(LAYOUT_KEY) {
        None => None,
        Some(_) => Some(
            value(ORIGIN_KEY)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| err(path, format!("the metadata's {ORIGIN_KEY} is missing")))?,
        ),
    };
    Ok(ParquetReader {
        rows: parquet::record::reader::RowIter::from_file_into(Box::new(reader)),
        info,
        path: path.to_path_buf(),
        row: 0,
        origin_ns,
        failed: false,
    })
}

/// A column's value as an unsigned integer (nulls read as `unknown`).
fn unsigned(field: &Field, unknown: u64) -> Result<u64, String> {
    Ok(match field {
        Field::Null => unknown,
        Field::UInt(v) => u64::from(*v),
        Field::ULong(v) => *v,
        Field::Int(v) => *v as u32 as u64,
        Field::Long(v) => *v as u64,
        other => return Err(format!("an integer expected, found {other}")),
    })
}

fn bytes(field: &Field) -> Result<&[u8], String> {
    Ok(match field {
        Field::Null => &[],
        Field::Bytes(b) => b.data(),
        Field::Str(s) => s.as_bytes(),
        other => return Err(format!("bytes expected, found {other}")),
    })
}

impl ParquetReader {
    fn fill(&self, row: &Row, rec: &mut TraceRecord) -> Result<(), String> {
        rec.clear();
        let narrow = |v: u64| u32::try_from(v).map_err(|_| format!("{v} is not a 32-bit value"));
        for (name, field) in row.get_column_iter() {
            let failed = |e: String| format!("column {name}: {e}");
            match name.as_str() {
                "ts" => rec.ts = self.ts(field).map_err(failed)?,
                "op" => {
                    let name = std::str::from_utf8(bytes(field).map_err(failed)?)
                        .map_err(|e| failed(e.to_string()))?;
                    rec.op = Op::from_name(name).unwrap_or(Op::Other);
                }
                "key" => rec.key.extend_from_slice(bytes(field).map_err(failed)?),
                "id" => rec.id = unsigned(field, 0).map_err(failed)?,
                "key_size" => rec.key_size = narrow(unsigned(field, 0).map_err(failed)?)?,
                "value_size" => rec.value_size = unsigned(field, 0).map_err(failed)?,
                "scan_len" => rec.scan_len = narrow(unsigned(field, 0).map_err(failed)?)?,
                "ttl_s" => rec.ttl_s = narrow(unsigned(field, 0).map_err(failed)?)?,
                "cf" => rec.cf = narrow(unsigned(field, 0).map_err(failed)?)?,
                "next_access" => {
                    rec.next_access = match field {
                        Field::Null => -1,
                        Field::Long(v) => *v,
                        other => return Err(failed(format!("an integer expected, found {other}"))),
                    }
                }
                "batch_len" => rec.batch_len = narrow(unsigned(field, 1).map_err(failed)?)?,
                "batch_pos" => rec.batch_pos = narrow(unsigned(field, 0).map_err(failed)?)?,
                "outcome" => {
                    rec.outcome = match bytes(field).map_err(failed)? {
                        b"hit" => Outcome::Hit,
                        b"miss" => Outcome::Miss,
                        b"error" => Outcome::Error,
                        _ => Outcome::Unknown,
                    }
                }
                "latency_ns" => rec.latency_ns = unsigned(field, 0).map_err(failed)?,
                "intended_ns" => rec.intended_ns = unsigned(field, 0).map_err(failed)?,
                "lower_bound" => rec
                    .lower_bound
                    .extend_from_slice(bytes(field).map_err(failed)?),
                "upper_bound" => rec
                    .upper_bound
                    .extend_from_slice(bytes(field).map_err(failed)?),
                // `kind` follows from `op`; other columns are an analyst's own.
                _ => {}
            }
        }
        Ok(())
    }

    /// The source's timestamp of a `ts` value.
    fn ts(&self, field: &Field) -> Result<u64, String> {
        let Some(origin) = self.origin_ns else {
            return unsigned(field, 0);
        };
        match (field, self.info.time_unit.nanos()) {
            // No clock: the row's position is its time.
            (Field::Null, _) | (_, None) => Ok(self.row),
            (Field::Long(ns), Some(unit)) => {
                let since = i128::from(*ns) - origin;
                u64::try_from(since / i128::from(unit))
                    .map_err(|_| format!("{ns} is before the trace's origin {origin}"))
            }
            (other, _) => Err(format!("a timestamp expected, found {other}")),
        }
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
        self.fill(&row, rec).map_err(|e| {
            err(
                &self.path,
                format!("row {}: not a kvlab trace row: {e}", self.row),
            )
        })?;
        self.row += 1;
        Ok(true)
    }
}
