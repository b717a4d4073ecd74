//! Writing Parquet: one file, or a Hive-partitioned dataset.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::format::KeyValue;
use parquet::schema::parser::parse_message_type;

use super::{err, outcome_name, INFO_KEY, LAYOUT, LAYOUT_KEY, ORIGIN_KEY, SCHEMA};
use crate::{TraceError, TraceInfo, TraceReader, TraceRecord};

/// Rows buffered per row group of a single file.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// Rows buffered per row group of a dataset's file (several may be open at once).
const DATASET_GROUP_ROWS: usize = 1 << 17;

/// A dataset's files open at once: a trace whose requests cross back and forth over an
/// hour's boundary (several clients' clocks) writes to the last few hours' files.
const OPEN_FILES: usize = 4;

/// One optional column: its present values and a definition level per row.
#[derive(Default)]
struct Opt<T> {
    values: Vec<T>,
    defs: Vec<i16>,
}

impl<T> Opt<T> {
    fn push(&mut self, v: Option<T>) {
        match v {
            Some(v) => {
                self.values.push(v);
                self.defs.push(1);
            }
            None => self.defs.push(0),
        }
    }

    fn clear(&mut self) {
        self.values.clear();
        self.defs.clear();
    }
}

/// One row group's columns.
#[derive(Default)]
struct Columns {
    ts: Opt<i64>,
    op: Vec<ByteArray>,
    kind: Opt<ByteArray>,
    key: Opt<ByteArray>,
    id: Vec<i64>,
    key_size: Opt<i32>,
    value_size: Opt<i64>,
    scan_len: Opt<i32>,
    ttl_s: Opt<i32>,
    cf: Vec<i32>,
    next_access: Opt<i64>,
    batch_len: Vec<i32>,
    batch_pos: Vec<i32>,
    outcome: Opt<ByteArray>,
    latency_ns: Opt<i64>,
    intended_ns: Opt<i64>,
    lower_bound: Opt<ByteArray>,
    upper_bound: Opt<ByteArray>,
    rows: usize,
}

fn bytes(b: &[u8]) -> Option<ByteArray> {
    (!b.is_empty()).then(|| ByteArray::from(b.to_vec()))
}

fn nonzero(v: u32) -> Option<i32> {
    // Unsigned values are stored in signed physical columns bit for bit, as Parquet's
    // unsigned annotations define.
    (v != 0).then_some(v as i32)
}

impl Columns {
    fn push(&mut self, r: &TraceRecord, ts: Option<i64>, info: &TraceInfo) {
        self.ts.push(ts);
        self.op.push(ByteArray::from(r.op.name()));
        self.kind
            .push(r.op.kind().map(|k| ByteArray::from(k.label())));
        self.key.push(bytes(&r.key));
        self.id.push(r.id as i64);
        self.key_size.push(nonzero(r.key_size));
        self.value_size
            .push(info.knows_value_size(r).then_some(r.value_size as i64));
        self.scan_len.push(nonzero(r.scan_len));
        self.ttl_s.push(nonzero(r.ttl_s));
        self.cf.push(r.cf as i32);
        self.next_access
            .push(info.has_next_access.then_some(r.next_access));
        self.batch_len.push(r.batch_len as i32);
        self.batch_pos.push(r.batch_pos as i32);
        self.outcome
            .push(outcome_name(r.outcome).map(ByteArray::from));
        // Runs kvlab recorded carry both; a block trace may carry its own response time.
        let recorded = info.has_outcomes;
        self.latency_ns
            .push((recorded || r.latency_ns != 0).then_some(r.latency_ns as i64));
        self.intended_ns
            .push((recorded || r.intended_ns != 0).then_some(r.intended_ns as i64));
        self.lower_bound.push(bytes(&r.lower_bound));
        self.upper_bound.push(bytes(&r.upper_bound));
        self.rows += 1;
    }

    fn write<W: Write + Send>(
        &mut self,
        w: &mut SerializedFileWriter<W>,
        path: &Path,
    ) -> Result<(), TraceError> {
        let mut rg = w.next_row_group().map_err(|e| err(path, e))?;
        macro_rules! column {
            ($t:ty, $values:expr, $defs:expr) => {{
                let mut c = rg
                    .next_column()
                    .map_err(|e| err(path, e))?
                    .ok_or_else(|| err(path, "the schema has fewer columns than written"))?;
                c.typed::<$t>()
                    .write_batch(&$values, $defs, None)
                    .map_err(|e| err(path, e))?;
                c.close().map_err(|e| err(path, e))?;
            }};
        }
        macro_rules! required {
            ($t:ty, $v:expr) => {{
                column!($t, $v, None);
                $v.clear();
            }};
        }
        macro_rules! optional {
            ($t:ty, $v:expr) => {{
                column!($t, $v.values, Some(&$v.defs[..]));
                $v.clear();
            }};
        }
        // In schema order.
        optional!(Int64Type, self.ts);
        required!(ByteArrayType, self.op);
        optional!(ByteArrayType, self.kind);
        optional!(ByteArrayType, self.key);
        required!(Int64Type, self.id);
        optional!(Int32Type, self.key_size);
        optional!(Int64Type, self.value_size);
        optional!(Int32Type, self.scan_len);
        optional!(Int32Type, self.ttl_s);
        required!(Int32Type, self.cf);
        optional!(Int64Type, self.next_access);
        required!(Int32Type, self.batch_len);
        required!(Int32Type, self.batch_pos);
        optional!(ByteArrayType, self.outcome);
        optional!(Int64Type, self.latency_ns);
        optional!(Int64Type, self.intended_ns);
        optional!(ByteArrayType, self.lower_bound);
        optional!(ByteArrayType, self.upper_bound);
        rg.close().map_err(|e| err(path, e))?;
        self.rows = 0;
        Ok(())
    }
}

/// The wall clock of a source's timestamps.
#[derive(Clone, Copy)]
struct Clock {
    origin_ns: i128,
    unit_ns: Option<u64>,
}

impl Clock {
    fn of(info: &TraceInfo) -> Clock {
        Clock {
            origin_ns: info.origin_unix_ns(),
            unit_ns: info.time_unit.nanos(),
        }
    }

    /// The record's wall-clock nanoseconds; `None` for a trace without a clock.
    fn ts(&self, rec: &TraceRecord, row: u64, path: &Path) -> Result<Option<i64>, TraceError> {
        let Some(unit) = self.unit_ns else {
            return Ok(None);
        };
        let ns = self.origin_ns + i128::from(rec.ts) * i128::from(unit);
        i64::try_from(ns).map(Some).map_err(|_| {
            err(
                path,
                format!(
                    "request {row}: timestamp {} is past what a Parquet timestamp holds \
                     (the year 2262)",
                    rec.ts
                ),
            )
        })
    }
}

/// One Parquet file being written.
struct FileWriter<W: Write + Send> {
    w: SerializedFileWriter<W>,
    cols: Columns,
    group_rows: usize,
    path: PathBuf,
}

impl<W: Write + Send> FileWriter<W> {
    fn new(
        out: W,
        path: &Path,
        info: &TraceInfo,
        group_rows: usize,
    ) -> Result<FileWriter<W>, TraceError> {
        let schema = Arc::new(parse_message_type(SCHEMA).map_err(|e| err(path, e))?);
        let json = serde_json::to_string(info).map_err(|e| err(path, e))?;
        let meta = vec![
            KeyValue::new(INFO_KEY.to_string(), json),
            KeyValue::new(ORIGIN_KEY.to_string(), info.origin_unix_ns().to_string()),
            KeyValue::new(LAYOUT_KEY.to_string(), LAYOUT.to_string()),
        ];
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_key_value_metadata(Some(meta))
            .build();
        let w =
            SerializedFileWriter::new(out, schema, Arc::new(props)).map_err(|e| err(path, e))?;
        Ok(FileWriter {
            w,
            cols: Columns::default(),
            group_rows,
            path: path.to_path_buf(),
        })
    }

    fn push(
        &mut self,
        rec: &TraceRecord,
        ts: Option<i64>,
        info: &TraceInfo,
    ) -> Result<(), TraceError> {
        self.cols.push(rec, ts, info);
        if self.cols.rows >= self.group_rows {
            self.cols.write(&mut self.w, &self.path)?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<W, TraceError> {
        if self.cols.rows > 0 {
            self.cols.write(&mut self.w, &self.path)?;
        }
        self.w.into_inner().map_err(|e| err(&self.path, e))
    }
}

/// Writes every record of `reader` to `out` (named `path` in errors) as Parquet;
/// returns the rows written.
pub fn write_parquet<R: TraceReader + ?Sized, W: Write + Send>(
    reader: &mut R,
    out: W,
    path: &Path,
) -> Result<u64, TraceError> {
    let info = reader.info().clone();
    let clock = Clock::of(&info);
    let mut w = FileWriter::new(out, path, &info, ROW_GROUP_ROWS)?;
    let mut rec = TraceRecord::default();
    let mut rows = 0;
    while reader.read(&mut rec)? {
        let ts = clock.ts(&rec, rows, path)?;
        w.push(&rec, ts, &info)?;
        rows += 1;
    }
    let mut out = w.finish()?;
    out.flush().map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(rows)
}

/// How [`write_dataset`] splits a trace into partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partition {
    /// By the hour of `ts` (UTC): `dt=2026-11-28T14/`.
    Hour,
    /// By request count: `chunk=0/` holds requests 0 to N−1, `chunk=1/` the next N….
    Requests(u64),
}

/// What [`write_dataset`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetSummary {
    /// Rows written.
    pub rows: u64,
    /// Partitions (directories) written.
    pub partitions: u64,
    /// Files written.
    pub files: u64,
}

/// Writes every record of `reader` into the directory `dir` (which must exist) as a
/// Hive-partitioned Parquet dataset: `dir/KEY=VALUE/part-N.parquet`, every file with
/// the same columns and metadata as [`write_parquet`]'s. Requests keep their order
/// within a file; a trace whose hours interleave gets more than one file in a
/// partition. [`Partition::Hour`] needs a trace with a clock.
pub fn write_dataset<R: TraceReader + ?Sized>(
    reader: &mut R,
    dir: &Path,
    partition: Partition,
) -> Result<DatasetSummary, TraceError> {
    let info = reader.info().clone();
    let clock = Clock::of(&info);
    if partition == Partition::Hour && clock.unit_ns.is_none() {
        return Err(err(
            dir,
            format!(
                "a {} trace has no clock to partition by the hour: partition by a request \
                 count instead",
                info.format
            ),
        ));
    }
    let mut open: Vec<(i64, FileWriter<BufWriter<File>>)> = Vec::new();
    let mut files_in: HashMap<i64, u64> = HashMap::new();
    let mut summary = DatasetSummary::default();
    let mut rec = TraceRecord::default();
    while reader.read(&mut rec)? {
        let row = summary.rows;
        let ts = clock.ts(&rec, row, dir)?;
        let key = match partition {
            Partition::Hour => ts.unwrap_or(0).div_euclid(3_600_000_000_000),
            Partition::Requests(n) => (row / n.max(1)) as i64,
        };
        let at = match open.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                if open.len() == OPEN_FILES {
                    open.remove(0).1.finish()?;
                }
                let n = files_in.entry(key).or_insert(0);
                let sub = dir.join(partition_name(partition, key));
                if *n == 0 {
                    std::fs::create_dir_all(&sub).map_err(|source| TraceError::Io {
                        path: sub.clone(),
                        source,
                    })?;
                    summary.partitions += 1;
                }
                let path = sub.join(format!("part-{n}.parquet"));
                *n += 1;
                summary.files += 1;
                let file = File::create(&path).map_err(|source| TraceError::Io {
                    path: path.clone(),
                    source,
                })?;
                let w = FileWriter::new(
                    BufWriter::with_capacity(1 << 20, file),
                    &path,
                    &info,
                    DATASET_GROUP_ROWS,
                )?;
                open.push((key, w));
                open.len() - 1
            }
        };
        open[at].1.push(&rec, ts, &info)?;
        summary.rows += 1;
    }
    for (_, w) in open {
        let path = w.path.clone();
        w.finish()?
            .flush()
            .map_err(|source| TraceError::Io { path, source })?;
    }
    Ok(summary)
}

/// The directory of a partition: `dt=2026-11-28T14` or `chunk=3`.
fn partition_name(partition: Partition, key: i64) -> String {
    match partition {
        Partition::Hour => {
            let days = key.div_euclid(24);
            let (y, m, d) = civil_date(days);
            format!("dt={y:04}-{m:02}-{d:02}T{:02}", key.rem_euclid(24))
        }
        Partition::Requests(_) => format!("chunk={key}"),
    }
}

/// The proleptic Gregorian (year, month, day) of a day counted from 1970-01-01.
fn civil_date(days: i64) -> (i64, u32, u32) {
    // Count from 0000-03-01, in 400-year eras of 146 097 days, so that February (and
    // its leap day) ends each year.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::{civil_date, partition_name, Partition};

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(-1), (1969, 12, 31));
        assert_eq!(civil_date(59), (1970, 3, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_785), (2026, 11, 28));
        // 1601-01-01, FILETIME's epoch.
        assert_eq!(civil_date(-134_774), (1601, 1, 1));
    }

    #[test]
    fn partitions_are_named_as_hive_reads_them() {
        assert_eq!(
            partition_name(Partition::Hour, 20_785 * 24 + 14),
            "dt=2026-11-28T14"
        );
        assert_eq!(partition_name(Partition::Hour, -1), "dt=1969-12-31T23");
        assert_eq!(partition_name(Partition::Requests(10), 3), "chunk=3");
    }
}
