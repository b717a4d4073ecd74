//! [`TimelineRow`]: per-interval throughput and latency, and its CSV form.

use std::io::{self, Write};

use kvlab_core::OpKind;
use serde::{Deserialize, Serialize};

use crate::summary::ns_to_us;
use crate::Recorder;

/// One interval of a run's timeline: throughput, overall latency percentiles, errors and
/// per-kind operations and p99. Latencies are service times in microseconds.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TimelineRow {
    /// End of the interval, in seconds since the start of the phase.
    pub time_s: f64,
    /// Length of the interval, in seconds.
    pub interval_s: f64,
    /// Operations completed in the interval (read-modify-write counted once).
    pub operations: u64,
    /// `operations / interval_s`.
    pub throughput_ops_per_sec: f64,
    /// Median latency over all store operations.
    pub p50_us: f64,
    /// 99th percentile latency over all store operations.
    pub p99_us: f64,
    /// 99.9th percentile latency over all store operations.
    pub p999_us: f64,
    /// Largest latency.
    pub max_us: f64,
    /// Store errors of every kind.
    pub errors: u64,
    /// `(YCSB kind name, operations, p99 latency in µs)` for every kind with operations in
    /// the interval, in report order.
    pub per_op: Vec<(String, u64, f64)>,
    /// Requests a schedule meant to start in the interval (a trace replay's timestamps),
    /// when there is one.
    pub intended_ops: Option<u64>,
}

impl TimelineRow {
    /// Summarizes one interval's recorder. `time_s` is the caller's choice of timestamp —
    /// kvlab uses the end of the interval.
    pub fn from_interval(time_s: f64, interval_s: f64, interval: &Recorder) -> TimelineRow {
        let overall = interval.overall();
        let (p50, p99, p999, max) = if overall.is_empty() {
            (0, 0, 0, 0)
        } else {
            (
                overall.value_at_percentile(50.0),
                overall.value_at_percentile(99.0),
                overall.value_at_percentile(99.9),
                overall.max(),
            )
        };
        let operations = interval.operations();
        TimelineRow {
            time_s,
            interval_s,
            operations,
            throughput_ops_per_sec: if interval_s > 0.0 {
                operations as f64 / interval_s
            } else {
                0.0
            },
            p50_us: ns_to_us(p50),
            p99_us: ns_to_us(p99),
            p999_us: ns_to_us(p999),
            max_us: ns_to_us(max),
            errors: interval.errors_total(),
            per_op: OpKind::ALL
                .iter()
                .filter(|k| interval.count(**k) > 0)
                .map(|k| {
                    let h = interval.histogram(*k);
                    (
                        k.ycsb_name().to_string(),
                        h.len(),
                        ns_to_us(h.value_at_percentile(99.0)),
                    )
                })
                .collect(),
            intended_ops: None,
        }
    }
}

/// The CSV column prefix of a kind: its YCSB name in lower case, `-` → `_`
/// (`read_modify_write`).
fn column_prefix(kind: OpKind) -> String {
    kind.ycsb_name().to_ascii_lowercase().replace('-', "_")
}

/// Writes a timeline as CSV. Columns: `time_s,interval_s,operations,throughput_ops_per_sec,
/// p50_us,p99_us,p999_us,max_us,errors`, then `<kind>_ops,<kind>_p99_us` for each of
/// `kinds` (e.g. `read_ops,read_p99_us`). A kind without operations in an interval has
/// `0` operations and an empty p99 cell. When any row has
/// [`TimelineRow::intended_ops`], two more columns follow:
/// `intended_ops,intended_ops_per_sec`.
pub fn write_timeline_csv(
    rows: &[TimelineRow],
    kinds: &[OpKind],
    out: &mut impl Write,
) -> io::Result<()> {
    write!(
        out,
        "time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,max_us,errors"
    )?;
    for kind in kinds {
        let prefix = column_prefix(*kind);
        write!(out, ",{prefix}_ops,{prefix}_p99_us")?;
    }
    let intended = rows.iter().any(|r| r.intended_ops.is_some());
    if intended {
        write!(out, ",intended_ops,intended_ops_per_sec")?;
    }
    writeln!(out)?;
    for row in rows {
        write!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            row.time_s,
            row.interval_s,
            row.operations,
            row.throughput_ops_per_sec,
            row.p50_us,
            row.p99_us,
            row.p999_us,
            row.max_us,
            row.errors
        )?;
        for kind in kinds {
            match row
                .per_op
                .iter()
                .find(|(name, _, _)| name == kind.ycsb_name())
            {
                Some((_, ops, p99)) => write!(out, ",{ops},{p99}")?,
                None => write!(out, ",0,")?,
            }
        }
        if intended {
            let n = row.intended_ops.unwrap_or(0);
            let rate = if row.interval_s > 0.0 {
                n as f64 / row.interval_s
            } else {
                0.0
            };
            write!(out, ",{n},{rate}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kvlab_core::{Status, StoreErrorKind};

    use super::*;

    #[test]
    fn csv_header_and_row() {
        let mut r = Recorder::new();
        for _ in 0..99 {
            r.record(OpKind::Read, Status::Ok, 1_000);
        }
        r.record(OpKind::Read, Status::Ok, 1_500);
        r.record(OpKind::Update, Status::Ok, 2_000);
        r.record_error(StoreErrorKind::Timeout);
        let row = TimelineRow::from_interval(2.0, 0.5, &r);
        assert_eq!(row.operations, 101);
        assert_eq!(row.throughput_ops_per_sec, 202.0);
        assert_eq!(row.errors, 1);
        assert_eq!(
            row.per_op,
            vec![
                ("READ".to_string(), 100, 1.0),
                ("UPDATE".to_string(), 1, 2.0)
            ]
        );
        let empty = TimelineRow::from_interval(2.5, 0.5, &Recorder::new());
        let mut out = Vec::new();
        write_timeline_csv(
            &[row, empty],
            &[OpKind::Read, OpKind::Update, OpKind::ReadModifyWrite],
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,max_us,\
             errors,read_ops,read_p99_us,update_ops,update_p99_us,read_modify_write_ops,\
             read_modify_write_p99_us\n\
             2,0.5,101,202,1,1.5,2,2,1,100,1,1,2,0,\n\
             2.5,0.5,0,0,0,0,0,0,0,0,,0,,0,\n"
        );
    }
}
