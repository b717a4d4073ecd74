//! [`Series`]: one CSV time series file with a fixed header, written a row at a time,
//! keeping the mean and maximum of every column.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{ColumnSummary, MonitorError};

/// One CSV file: `time_s` then the named columns. A missing value is an empty cell.
pub(crate) struct Series {
    /// The file's stem, e.g. `cpu`; summary keys are `STEM.COLUMN`.
    pub(crate) stem: &'static str,
    path: PathBuf,
    columns: Vec<String>,
    out: BufWriter<File>,
    sums: Vec<(f64, f64, u64)>,
}

impl Series {
    /// Creates `dir/STEM.csv` and writes its header.
    pub(crate) fn create(
        dir: &Path,
        stem: &'static str,
        columns: Vec<String>,
    ) -> Result<Series, MonitorError> {
        let path = dir.join(format!("{stem}.csv"));
        let file = File::create(&path).map_err(|e| MonitorError::io("creating", &path, e))?;
        let mut series = Series {
            stem,
            sums: vec![(0.0, f64::NEG_INFINITY, 0); columns.len()],
            columns,
            out: BufWriter::new(file),
            path,
        };
        let mut header = String::from("time_s");
        for c in &series.columns {
            header.push(',');
            header.push_str(&csv_field(c));
        }
        header.push('\n');
        series.write(header.as_bytes())?;
        Ok(series)
    }

    /// The column names after `time_s`.
    pub(crate) fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Appends a row at `time_s`; `values` has one entry per column.
    pub(crate) fn row(&mut self, time_s: f64, values: &[Option<f64>]) -> Result<(), MonitorError> {
        debug_assert_eq!(values.len(), self.columns.len(), "one value per column");
        let mut line = format!("{time_s:.3}");
        for (i, v) in values.iter().enumerate() {
            line.push(',');
            if let Some(v) = v.filter(|v| v.is_finite()) {
                line.push_str(&format_value(v));
                let s = &mut self.sums[i];
                s.0 += v;
                s.1 = s.1.max(v);
                s.2 += 1;
            }
        }
        line.push('\n');
        self.write(line.as_bytes())?;
        // One row a second at most: flushing each keeps the file current for `tail -f`
        // and complete up to the last row if kvlab is killed.
        self.out
            .flush()
            .map_err(|e| MonitorError::io("writing", &self.path, e))
    }

    /// Mean and maximum of each column that had at least one value.
    pub(crate) fn summaries(&self) -> impl Iterator<Item = (String, ColumnSummary)> + '_ {
        self.columns
            .iter()
            .zip(&self.sums)
            .filter(|(_, s)| s.2 > 0)
            .map(|(c, &(sum, max, n))| {
                (
                    format!("{}.{c}", self.stem),
                    ColumnSummary {
                        mean: sum / n as f64,
                        max,
                        samples: n,
                    },
                )
            })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), MonitorError> {
        self.out
            .write_all(bytes)
            .map_err(|e| MonitorError::io("writing", &self.path, e))
    }
}

/// Integers without a fraction, other values with up to 3 decimals.
fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// A header field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_summaries() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Series::create(dir.path(), "x", vec!["a".into(), "b,c".into()]).unwrap();
        s.row(1.0, &[Some(1.0), None]).unwrap();
        s.row(2.0, &[Some(3.5), Some(f64::NAN)]).unwrap();
        let text = std::fs::read_to_string(dir.path().join("x.csv")).unwrap();
        assert_eq!(text, "time_s,a,\"b,c\"\n1.000,1,\n2.000,3.500,\n");
        let sums: Vec<_> = s.summaries().collect();
        assert_eq!(sums.len(), 1);
        assert_eq!(sums[0].0, "x.a");
        assert_eq!(
            sums[0].1,
            ColumnSummary {
                mean: 2.25,
                max: 3.5,
                samples: 2
            }
        );
    }
}
