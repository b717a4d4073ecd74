//! Reading results back: [`ResultDir`] and the files beside its document — [`Timeline`]
//! (`timeline.csv`), [`LatencyLog`] (`latency.hlog`) and [`MonitorSeries`]
//! (`monitor/*.csv`) — and [`find_result_files`] to find them below a directory.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use kvlab_measure::TimelineRow;

use crate::{ReportError, ResultDocument, RESULT_FILE};

/// The timeline file beside a result document.
pub const TIMELINE_FILE: &str = "timeline.csv";
/// The HdrHistogram interval log beside a result document.
pub const LATENCY_LOG_FILE: &str = "latency.hlog";
/// The directory of resource time series beside a result document.
pub(crate) const MONITOR_DIR: &str = "monitor";
/// Deeper than any result layout; stops a walk that a symlink loop would make endless.
const MAX_DEPTH: usize = 32;

fn read_error(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        action: "reading",
        path: path.to_path_buf(),
        source,
    }
}

/// Every `result.json` at or below `root`, sorted by path. `root` may also name a
/// `result.json` (or any JSON file) itself, which is then the only result.
///
/// Returns [`ReportError::NoResults`] when a directory holds none at any depth, and
/// [`ReportError::Io`] when `root` cannot be read.
pub fn find_result_files(root: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let meta = fs::metadata(root).map_err(read_error(root))?;
    if meta.is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut found = Vec::new();
    walk(root, 0, &mut found)?;
    if found.is_empty() {
        return Err(ReportError::NoResults(root.to_path_buf()));
    }
    found.sort();
    Ok(found)
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> Result<(), ReportError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).map_err(read_error(dir))? {
        entries.push(entry.map_err(read_error(dir))?.path());
    }
    for path in entries {
        if path.is_dir() {
            walk(&path, depth + 1, found)?;
        } else if path.file_name().is_some_and(|n| n == RESULT_FILE) {
            found.push(path);
        }
    }
    Ok(())
}

/// One result: the directory `kvlab run --out` wrote and its parsed `result.json`. The
/// other files are read on demand ([`ResultDir::timeline`], [`ResultDir::latency_log`],
/// [`ResultDir::monitor`]); each is optional.
#[derive(Clone, Debug)]
pub struct ResultDir {
    /// The directory holding the document.
    pub dir: PathBuf,
    /// The document's file (usually `dir/result.json`).
    pub file: PathBuf,
    /// The parsed document.
    pub doc: ResultDocument,
}

impl ResultDir {
    /// Opens a result from its directory or its `result.json`. Errors name the file: a
    /// missing document is [`ReportError::Io`], a malformed one [`ReportError::Json`].
    pub fn open(path: &Path) -> Result<ResultDir, ReportError> {
        let file = if path.is_dir() {
            path.join(RESULT_FILE)
        } else {
            path.to_path_buf()
        };
        let doc = ResultDocument::load(&file)?;
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(ResultDir { dir, file, doc })
    }

    /// The run's `timeline.csv`, or `None` when there is none.
    pub fn timeline(&self) -> Result<Option<Timeline>, ReportError> {
        let path = self.dir.join(TIMELINE_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        Timeline::load(&path).map(Some)
    }

    /// The run's `latency.hlog`, merged over its intervals, or `None` when there is none.
    pub fn latency_log(&self) -> Result<Option<LatencyLog>, ReportError> {
        let path = self.dir.join(LATENCY_LOG_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        LatencyLog::load(&path).map(Some)
    }

    /// Every `monitor/*.csv` beside the document, sorted by file name; empty when there is
    /// no `monitor` directory. Times count from the run's measured start, as
    /// `timeline.csv`'s do: the monitor's own time 0 is when it started (before a
    /// warm-up, for one), so each file's times are moved by [`ResultDir::monitor_offset_s`]
    /// when the result says both when the monitor and the measured part started.
    pub fn monitor(&self) -> Result<Vec<MonitorSeries>, ReportError> {
        let mut series = self.monitor_files()?;
        if let Some(offset) = self.monitor_offset_s() {
            for m in &mut series {
                for t in &mut m.time_s {
                    *t += offset;
                }
            }
        }
        Ok(series)
    }

    /// Seconds from the run's measured start (`runner.measured_start`) to the monitor's
    /// start (`started_unix_ms` of `monitor/summary.json`, which `kvlab run` writes when
    /// the monitor stops): negative when the monitor started first. `None` when either
    /// is unknown (an older result, or a run killed before its monitor stopped).
    pub fn monitor_offset_s(&self) -> Option<f64> {
        let measured = self.doc.runner.measured_start.as_deref()?;
        let measured = crate::time::parse_rfc3339(measured)?;
        let text = fs::read_to_string(self.dir.join(MONITOR_DIR).join("summary.json")).ok()?;
        let summary: serde_json::Value = serde_json::from_str(&text).ok()?;
        let started_ms = summary.get("started_unix_ms")?.as_u64()?;
        let started = std::time::UNIX_EPOCH + std::time::Duration::from_millis(started_ms);
        Some(match started.duration_since(measured) {
            Ok(d) => d.as_secs_f64(),
            Err(e) => -e.duration().as_secs_f64(),
        })
    }

    /// The `monitor/*.csv` files as written, times from the monitor's start.
    fn monitor_files(&self) -> Result<Vec<MonitorSeries>, ReportError> {
        let dir = self.dir.join(MONITOR_DIR);
        if !dir.is_dir() {
            return Ok(Vec::new());
        }
        let mut files = Vec::new();
        for entry in fs::read_dir(&dir).map_err(read_error(&dir))? {
            let path = entry.map_err(read_error(&dir))?.path();
            if path.is_file() && path.extension().is_some_and(|e| e == "csv") {
                files.push(path);
            }
        }
        files.sort();
        files.iter().map(|f| MonitorSeries::load(f)).collect()
    }
}

/// Splits one CSV line. kvlab's CSV files hold numbers and plain names, so a field is
/// the text between commas, trimmed, with surrounding double quotes removed.
fn fields(line: &str) -> Vec<&str> {
    line.split(',')
        .map(|f| {
            let f = f.trim();
            f.strip_prefix('"')
                .and_then(|f| f.strip_suffix('"'))
                .unwrap_or(f)
        })
        .collect()
}

/// The data lines of a CSV text with their 1-based line numbers, blank lines skipped.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .skip(1)
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
}

/// A run's timeline (`timeline.csv`), one [`TimelineRow`] per interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// The intervals in file order.
    pub rows: Vec<TimelineRow>,
}

impl Timeline {
    /// The rows to draw: all but a last interval shorter than half the longest (the
    /// few milliseconds while workers stop, whose rate and tail say little).
    pub fn full_rows(&self) -> &[TimelineRow] {
        let longest = self.rows.iter().map(|r| r.interval_s).fold(0.0, f64::max);
        match self.rows.split_last() {
            Some((last, rest)) if !rest.is_empty() && last.interval_s < longest / 2.0 => rest,
            _ => &self.rows,
        }
    }
}

/// The fixed leading columns of `timeline.csv` (see `kvlab_measure::write_timeline_csv`).
const TIMELINE_COLUMNS: [&str; 9] = [
    "time_s",
    "interval_s",
    "operations",
    "throughput_ops_per_sec",
    "p50_us",
    "p99_us",
    "p999_us",
    "max_us",
    "errors",
];

impl Timeline {
    /// Reads a `timeline.csv` file.
    pub fn load(path: &Path) -> Result<Timeline, ReportError> {
        let text = fs::read_to_string(path).map_err(read_error(path))?;
        Timeline::parse(&text, path)
    }

    /// Parses the text of a `timeline.csv`; `path` names it in errors. The columns are
    /// found by name, so their order does not matter; per-operation columns come in pairs
    /// `<kind>_ops,<kind>_p99_us` (`read_modify_write_ops` is kind `READ-MODIFY-WRITE`).
    pub fn parse(text: &str, path: &Path) -> Result<Timeline, ReportError> {
        let csv_error = |line: usize, message: String| ReportError::Csv {
            path: path.to_path_buf(),
            line,
            message,
        };
        let header = fields(text.lines().next().unwrap_or(""));
        let mut fixed = [0usize; TIMELINE_COLUMNS.len()];
        for (slot, name) in fixed.iter_mut().zip(TIMELINE_COLUMNS) {
            *slot = header.iter().position(|h| *h == name).ok_or_else(|| {
                csv_error(
                    1,
                    format!(
                        "no `{name}` column; a timeline's header starts with {}",
                        TIMELINE_COLUMNS.join(",")
                    ),
                )
            })?;
        }
        // (YCSB kind name, ops column, p99 column)
        let mut kinds: Vec<(String, usize, usize)> = Vec::new();
        let intended_col = header.iter().position(|h| *h == "intended_ops");
        for (i, h) in header.iter().enumerate() {
            if Some(i) == intended_col {
                continue;
            }
            if let Some(prefix) = h.strip_suffix("_ops") {
                let p99 = format!("{prefix}_p99_us");
                let j = header.iter().position(|h| *h == p99).ok_or_else(|| {
                    csv_error(1, format!("column `{h}` has no `{p99}` column beside it"))
                })?;
                kinds.push((prefix.to_ascii_uppercase().replace('_', "-"), i, j));
            }
        }
        let mut rows = Vec::new();
        for (line_no, line) in data_lines(text) {
            let cells = fields(line);
            if cells.len() != header.len() {
                return Err(csv_error(
                    line_no,
                    format!(
                        "{} fields, expected {} as in the header",
                        cells.len(),
                        header.len()
                    ),
                ));
            }
            let number = |col: usize| -> Result<f64, ReportError> {
                cells[col].parse::<f64>().map_err(|_| {
                    csv_error(
                        line_no,
                        format!("`{}` is `{}`, expected a number", header[col], cells[col]),
                    )
                })
            };
            let count = |col: usize| -> Result<u64, ReportError> {
                cells[col].parse::<u64>().map_err(|_| {
                    csv_error(
                        line_no,
                        format!("`{}` is `{}`, expected a count", header[col], cells[col]),
                    )
                })
            };
            let mut per_op = Vec::new();
            for (name, ops_col, p99_col) in &kinds {
                let ops = count(*ops_col)?;
                if ops > 0 {
                    per_op.push((name.clone(), ops, number(*p99_col)?));
                }
            }
            rows.push(TimelineRow {
                time_s: number(fixed[0])?,
                interval_s: number(fixed[1])?,
                operations: count(fixed[2])?,
                throughput_ops_per_sec: number(fixed[3])?,
                p50_us: number(fixed[4])?,
                p99_us: number(fixed[5])?,
                p999_us: number(fixed[6])?,
                max_us: number(fixed[7])?,
                errors: count(fixed[8])?,
                per_op,
                intended_ops: intended_col.map(count).transpose()?,
            });
        }
        Ok(Timeline { rows })
    }
}

/// The latency histograms of a run's `latency.hlog`, each merged over all intervals.
/// Values are nanoseconds, as recorded.
#[derive(Clone, Debug)]
pub struct LatencyLog {
    /// The untagged histograms: every store operation's service time.
    pub overall: Histogram<u64>,
    /// The tagged histograms by tag (`READ`, `UPDATE`, `Intended-READ`, …).
    pub by_tag: BTreeMap<String, Histogram<u64>>,
}

/// An empty histogram of the precision kvlab records at (3 significant digits).
pub(crate) fn empty_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is a valid histogram precision")
}

impl LatencyLog {
    /// Reads and decodes a `latency.hlog` file.
    pub fn load(path: &Path) -> Result<LatencyLog, ReportError> {
        let bytes = fs::read(path).map_err(read_error(path))?;
        LatencyLog::parse(&bytes, path)
    }

    /// Decodes an interval log (V2, optionally deflate-compressed histograms, base64);
    /// `path` names it in errors.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<LatencyLog, ReportError> {
        let mut log = LatencyLog {
            overall: empty_histogram(),
            by_tag: BTreeMap::new(),
        };
        decode_intervals(bytes, path, |i, interval| {
            let target = match interval.tag {
                None => &mut log.overall,
                Some(tag) => log.by_tag.entry(tag).or_insert_with(empty_histogram),
            };
            target
                .add(&interval.histogram)
                .map_err(|e| ReportError::LatencyLog {
                    path: path.to_path_buf(),
                    message: format!("entry {i}: cannot merge: {e:?}"),
                })
        })?;
        Ok(log)
    }

    /// Every interval of a `latency.hlog`, in file order, each with its histogram.
    pub fn intervals(path: &Path) -> Result<Vec<LoggedInterval>, ReportError> {
        let bytes = fs::read(path).map_err(read_error(path))?;
        let mut all = Vec::new();
        decode_intervals(&bytes, path, |_, interval| {
            all.push(interval);
            Ok(())
        })?;
        Ok(all)
    }
}

/// One interval line of a `latency.hlog`.
#[derive(Clone, Debug)]
pub struct LoggedInterval {
    /// Its tag (`READ`, `Intended-READ`, …), `None` for the untagged overall histogram.
    pub tag: Option<String>,
    /// Its start, in seconds from the log's time 0 (kvlab: the measured part's start).
    pub start_s: f64,
    /// Its length in seconds.
    pub length_s: f64,
    /// The latencies recorded in it, in nanoseconds.
    pub histogram: Histogram<u64>,
}

/// Calls `each(entry number, interval)` for every interval line of an interval log
/// (V2, optionally deflate-compressed histograms, base64); errors name `path` and the
/// entry.
fn decode_intervals(
    bytes: &[u8],
    path: &Path,
    mut each: impl FnMut(usize, LoggedInterval) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let error = |message: String| ReportError::LatencyLog {
        path: path.to_path_buf(),
        message,
    };
    // A last line without its newline (a log edited by hand) is read as HdrHistogram's
    // own reader reads it.
    let owned;
    let bytes = if bytes.last().is_some_and(|&b| b != b'\n') {
        owned = [bytes, b"\n"].concat();
        &owned[..]
    } else {
        bytes
    };
    let mut deserializer = Deserializer::new();
    let mut raw = Vec::new();
    for (i, entry) in IntervalLogIterator::new(bytes).enumerate() {
        let entry = entry
            .map_err(|e| error(format!("entry {}: not an interval log line: {e:?}", i + 1)))?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        raw.clear();
        base64::engine::general_purpose::STANDARD
            .decode_vec(interval.encoded_histogram(), &mut raw)
            .map_err(|e| error(format!("entry {}: bad base64: {e}", i + 1)))?;
        let raw = checked_v2(&raw).map_err(|m| error(format!("entry {}: {m}", i + 1)))?;
        let histogram: Histogram<u64> = deserializer
            .deserialize(&mut &raw[..])
            .map_err(|e| error(format!("entry {}: bad histogram: {e:?}", i + 1)))?;
        each(
            i + 1,
            LoggedInterval {
                tag: interval.tag().map(|t| t.as_str().to_string()),
                start_s: interval.start_timestamp().as_secs_f64(),
                length_s: interval.duration().as_secs_f64(),
                histogram,
            },
        )?;
    }
    Ok(())
}

/// The V2 histogram cookies, plain and compressed (HdrHistogram's
/// `V2EncodingCookieBase` and `V2CompressedEncodingCookieBase`, with the word size 8).
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
/// Bytes of a V2 histogram before its counts.
const V2_HEADER_BYTES: usize = 40;
/// The most bytes a compressed histogram may inflate to (a 3-digit histogram up to an
/// hour in nanoseconds is under 100 KiB of counts).
const MAX_INFLATED_BYTES: u64 = 64 << 20;

/// An encoded histogram as one hdrhistogram's deserializer takes without harm: inflated
/// when compressed, and refused when its payload length is past the bytes that follow
/// (the deserializer allocates that many bytes first) or a count is the varint of
/// `u64::MAX` (whose zigzag decoding the deserializer negates with overflow).
fn checked_v2(raw: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    use std::io::Read as _;
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(raw.get(at..at + 4)?.try_into().ok()?))
    };
    let raw: std::borrow::Cow<'_, [u8]> = match word(0) {
        Some(V2_COMPRESSED_COOKIE) => {
            let len = word(4).ok_or("bad histogram: truncated header")? as usize;
            let deflated = raw.get(8..).unwrap_or_default();
            let deflated = &deflated[..len.min(deflated.len())];
            let mut inflated = Vec::new();
            flate2::read::ZlibDecoder::new(deflated)
                .take(MAX_INFLATED_BYTES + 1)
                .read_to_end(&mut inflated)
                .map_err(|e| format!("bad histogram: cannot inflate: {e}"))?;
            if inflated.len() as u64 > MAX_INFLATED_BYTES {
                return Err(format!(
                    "bad histogram: inflates to more than {MAX_INFLATED_BYTES} bytes"
                ));
            }
            std::borrow::Cow::Owned(inflated)
        }
        _ => std::borrow::Cow::Borrowed(raw),
    };
    if raw.get(..4) != Some(&V2_COOKIE.to_be_bytes()[..]) {
        // The deserializer refuses it without allocating.
        return Ok(raw);
    }
    if raw.len() < V2_HEADER_BYTES {
        return Err(format!(
            "bad histogram: a header of {} bytes, {V2_HEADER_BYTES} expected",
            raw.len()
        ));
    }
    let len = u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]) as usize;
    let available = raw.len() - V2_HEADER_BYTES;
    if len > available {
        return Err(format!(
            "bad histogram: a payload of {len} bytes, {available} given"
        ));
    }
    // LEB128 varints of at most 9 bytes, the ninth with 8 bits (HdrHistogram's
    // `ZigZagEncoding`).
    let mut payload = &raw[V2_HEADER_BYTES..V2_HEADER_BYTES + len];
    while !payload.is_empty() {
        let n = payload
            .iter()
            .take(8)
            .position(|b| b & 0x80 == 0)
            .map_or(9, |i| i + 1)
            .min(payload.len());
        if n == 9 && payload[..9].iter().all(|&b| b == 0xff) {
            return Err("bad histogram: a count out of range".into());
        }
        payload = &payload[n..];
    }
    Ok(raw)
}

/// One resource time series file (`monitor/<name>.csv`): the first column is the time in
/// seconds, every other column with at least one number is a series. Units come from the
/// column name's suffix (see [`MonitorSeries::unit`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MonitorSeries {
    /// The file's stem (`cpu` for `monitor/cpu.csv`).
    pub name: String,
    /// The times of the rows, in seconds.
    pub time_s: Vec<f64>,
    /// `(column name, value per row)`; a cell that is empty or not a number is `None`.
    pub columns: Vec<(String, Vec<Option<f64>>)>,
}

impl MonitorSeries {
    /// Reads one monitor CSV file.
    pub fn load(path: &Path) -> Result<MonitorSeries, ReportError> {
        let text = fs::read_to_string(path).map_err(read_error(path))?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        MonitorSeries::parse(&name, &text, path)
    }

    /// Parses a monitor CSV's text; `path` names it in errors. Rows whose time is not a
    /// number are errors; other cells may be empty.
    pub fn parse(name: &str, text: &str, path: &Path) -> Result<MonitorSeries, ReportError> {
        let header = fields(text.lines().next().unwrap_or(""));
        if header.len() < 2 || header[0].is_empty() {
            return Err(ReportError::Csv {
                path: path.to_path_buf(),
                line: 1,
                message: "expected a header with a time column (time_s) and at least one \
                          value column"
                    .into(),
            });
        }
        let mut time_s = Vec::new();
        let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); header.len() - 1];
        for (line_no, line) in data_lines(text) {
            let cells = fields(line);
            let t = cells[0].parse::<f64>().map_err(|_| ReportError::Csv {
                path: path.to_path_buf(),
                line: line_no,
                message: format!(
                    "`{}` is `{}`, expected a time in seconds",
                    header[0], cells[0]
                ),
            })?;
            time_s.push(t);
            for (col, v) in values.iter_mut().enumerate() {
                v.push(
                    cells
                        .get(col + 1)
                        .and_then(|c| c.parse::<f64>().ok())
                        .filter(|x| x.is_finite()),
                );
            }
        }
        let columns = header[1..]
            .iter()
            .zip(values)
            .filter(|(_, v)| v.iter().any(Option::is_some))
            .map(|(h, v)| (h.to_string(), v))
            .collect();
        Ok(MonitorSeries {
            name: name.to_string(),
            time_s,
            columns,
        })
    }

    /// The unit a column name's suffix gives: `_bytes` → `bytes`, `_pct` → `%`, `_s` →
    /// `s`, `_us` and `_micros` → `µs`, `_per_sec` → `/s`, `_bytes_per_s` → `bytes/s`;
    /// otherwise none (a count).
    pub fn unit(column: &str) -> &'static str {
        for (suffix, unit) in [
            ("_bytes", "bytes"),
            ("_pct", "%"),
            ("_us", "µs"),
            ("_micros", "µs"),
            ("_ms", "ms"),
            ("_per_sec", "/s"),
            ("_bytes_per_s", "bytes/s"),
            ("_s", "s"),
        ] {
            if column.ends_with(suffix) {
                return unit;
            }
        }
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_columns_by_name() {
        let text = "time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,\
                    max_us,errors,read_ops,read_p99_us,read_modify_write_ops,\
                    read_modify_write_p99_us\n\
                    1,1,100,100,2.5,9,10,11,0,100,9,0,\n\
                    2,1,50,50,3,8,9,12,1,40,8,10,20.5\n";
        let t = Timeline::parse(text, Path::new("t.csv")).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].per_op, vec![("READ".to_string(), 100, 9.0)]);
        assert_eq!(
            t.rows[1].per_op,
            vec![
                ("READ".to_string(), 40, 8.0),
                ("READ-MODIFY-WRITE".to_string(), 10, 20.5)
            ]
        );
        assert_eq!(t.rows[1].errors, 1);
        assert_eq!(t.rows[1].p50_us, 3.0);
    }

    /// A file of this version (merge columns last, after the intended ones) reads back
    /// as written, and a file written before merges had columns reads as before.
    #[test]
    fn timeline_merge_columns_and_older_files() {
        let row = |time_s: f64, per_op: Vec<(String, u64, f64)>, intended: u64| TimelineRow {
            time_s,
            interval_s: 1.0,
            operations: per_op.iter().map(|p| p.1).sum(),
            throughput_ops_per_sec: per_op.iter().map(|p| p.1).sum::<u64>() as f64,
            p50_us: 2.5,
            p99_us: 9.0,
            p999_us: 10.0,
            max_us: 11.0,
            errors: 0,
            per_op,
            intended_ops: Some(intended),
        };
        let rows = vec![
            row(
                1.0,
                vec![("READ".into(), 70, 9.0), ("MERGE".into(), 30, 4.5)],
                100,
            ),
            row(2.0, vec![("MERGE".into(), 5, 3.0)], 5),
            row(3.0, vec![], 0),
        ];
        let mut csv = Vec::new();
        kvlab_measure::write_timeline_csv(&rows, &kvlab_core::OpKind::ALL, &["MERGE"], &mut csv)
            .unwrap();
        let text = String::from_utf8(csv).unwrap();
        assert!(
            text.lines()
                .next()
                .unwrap()
                .ends_with(",intended_ops,intended_ops_per_sec,merge_ops,merge_p99_us"),
            "{text}"
        );
        let t = Timeline::parse(&text, Path::new("t.csv")).unwrap();
        assert_eq!(t.rows, rows);

        // Before merges had columns: the same header without the last two.
        let old = "time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,\
                   max_us,errors,read_ops,read_p99_us,update_ops,update_p99_us,insert_ops,\
                   insert_p99_us,scan_ops,scan_p99_us,read_modify_write_ops,\
                   read_modify_write_p99_us,delete_ops,delete_p99_us,intended_ops,\
                   intended_ops_per_sec\n\
                   1,1,100,100,2.5,9,10,11,0,100,9,0,,0,,0,,0,,0,,120,120\n";
        let t = Timeline::parse(old, Path::new("old.csv")).unwrap();
        assert_eq!(t.rows[0].per_op, vec![("READ".to_string(), 100, 9.0)]);
        assert_eq!(t.rows[0].intended_ops, Some(120));
    }

    #[test]
    fn timeline_errors_name_file_line_and_column() {
        let err = Timeline::parse("time_s,operations\n", Path::new("x/t.csv")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "x/t.csv:1: no `interval_s` column; a timeline's header starts with \
             time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,max_us,\
             errors"
        );
        let text = "time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,\
                    max_us,errors\n1,1,100,100,2.5,9,10,11,0\n\n2,1,many,1,1,1,1,1,0\n";
        let err = Timeline::parse(text, Path::new("t.csv")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv:4: `operations` is `many`, expected a count"
        );
        let text = "time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,\
                    max_us,errors\n1,1\n";
        let err = Timeline::parse(text, Path::new("t.csv")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv:2: 2 fields, expected 9 as in the header"
        );
    }

    #[test]
    fn monitor_columns_and_units() {
        let text = "time_s,\"rss_bytes\",cpu_pct,state\n0.5,100,12.5,up\n1.0,,13,up\n";
        let m = MonitorSeries::parse("proc", text, Path::new("m.csv")).unwrap();
        assert_eq!(m.time_s, vec![0.5, 1.0]);
        assert_eq!(
            m.columns,
            vec![
                ("rss_bytes".to_string(), vec![Some(100.0), None]),
                ("cpu_pct".to_string(), vec![Some(12.5), Some(13.0)]),
            ]
        );
        assert_eq!(MonitorSeries::unit("rss_bytes"), "bytes");
        assert_eq!(MonitorSeries::unit("cpu_pct"), "%");
        assert_eq!(MonitorSeries::unit("busy_s"), "s");
        assert_eq!(MonitorSeries::unit("disk_read_bytes_per_s"), "bytes/s");
        assert_eq!(MonitorSeries::unit("stall_micros"), "µs");
        assert_eq!(MonitorSeries::unit("ops"), "");
        let err = MonitorSeries::parse("m", "time_s,a\nsoon,1\n", Path::new("m.csv"));
        assert_eq!(
            err.unwrap_err().to_string(),
            "m.csv:2: `time_s` is `soon`, expected a time in seconds"
        );
    }

    #[test]
    fn latency_log_round_trip_through_kvlab_measure() {
        use kvlab_core::{OpKind, Status};
        use std::time::{Duration, UNIX_EPOCH};
        let mut log = kvlab_measure::IntervalLog::new(Vec::new(), UNIX_EPOCH).unwrap();
        let mut rec = kvlab_measure::Recorder::new();
        let mut total = 0;
        for interval in 0..3u64 {
            rec.reset();
            for i in 0..100 * (interval + 1) {
                rec.record(OpKind::Read, Status::Ok, 1_000 + i * 100);
                total += 1;
            }
            rec.record(OpKind::Update, Status::Ok, 50_000);
            total += 1;
            log.write_interval(
                Duration::from_secs(interval),
                Duration::from_secs(1),
                &rec,
                &[],
            )
            .unwrap();
        }
        let bytes = log.into_inner();
        let decoded = LatencyLog::parse(&bytes, Path::new("l.hlog")).unwrap();
        assert_eq!(decoded.overall.len(), total);
        assert_eq!(decoded.by_tag["READ"].len(), 600);
        assert_eq!(decoded.by_tag["UPDATE"].len(), 3);
        assert!(decoded.overall.equivalent(decoded.overall.max(), 50_000));
        let err = LatencyLog::parse(b"0.0,1.0,1.0,!!!\n", Path::new("l.hlog")).unwrap_err();
        assert!(err.to_string().starts_with("l.hlog: entry 1"), "{err}");
    }

    /// A V2 histogram header (1 to 2^20, 3 digits) with `payload_len` and `payload`.
    fn hlog_line(payload_len: u32, payload: &[u8]) -> Vec<u8> {
        let mut raw = Vec::new();
        raw.extend_from_slice(&V2_COOKIE.to_be_bytes());
        raw.extend_from_slice(&payload_len.to_be_bytes());
        raw.extend_from_slice(&0u32.to_be_bytes());
        raw.extend_from_slice(&3u32.to_be_bytes());
        raw.extend_from_slice(&1u64.to_be_bytes());
        raw.extend_from_slice(&(1u64 << 20).to_be_bytes());
        raw.extend_from_slice(&1.0f64.to_be_bytes());
        raw.extend_from_slice(payload);
        hlog_entry(&raw)
    }

    /// An interval log line holding the encoded histogram `raw`.
    fn hlog_entry(raw: &[u8]) -> Vec<u8> {
        let b64 = base64::engine::general_purpose::STANDARD.encode(raw);
        format!("0.0,1.0,1.0,{b64}\n").into_bytes()
    }

    #[test]
    fn histograms_with_lengths_past_their_bytes_or_counts_out_of_range_are_errors() {
        let path = Path::new("l.hlog");
        // A count of 2 (zigzag 4): fine.
        let log = LatencyLog::parse(&hlog_line(1, &[4]), path).unwrap();
        assert_eq!(log.overall.len(), 2);
        // 4 GiB announced, 1 byte given: refused before anything is allocated.
        let err = LatencyLog::parse(&hlog_line(u32::MAX, &[4]), path).unwrap_err();
        assert!(
            err.to_string().contains("payload of 4294967295 bytes"),
            "{err}"
        );
        // A header cut short after the cookie and part of the length.
        let mut short = V2_COOKIE.to_be_bytes().to_vec();
        short.extend_from_slice(&[0, 0, 0]);
        let err = LatencyLog::parse(&hlog_entry(&short), path).unwrap_err();
        assert!(err.to_string().contains("a header of 7 bytes"), "{err}");
        // The varint of u64::MAX decodes to i64::MIN, which the deserializer negates.
        let err = LatencyLog::parse(&hlog_line(9, &[0xff; 9]), path).unwrap_err();
        assert!(err.to_string().contains("count out of range"), "{err}");
    }
}
