//! [`TimelineRow`]: per-interval throughput and latency, and its CSV form.

use std::io::{self, Write};

use kvlab_core::{CommandId, OpKind};
use serde::{Deserialize, Serialize};

use crate::percentile::value_at_percentile;
use crate::summary::ns_to_us;
use crate::Recorder;

/// One interval of a run's timeline: throughput, overall latency percentiles, errors and
/// per-kind (and per named command, e.g. `MERGE`) operations and p99. Latencies are
/// service times in microseconds.
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
    /// the interval, in report order, then `(command name, …)` for every named arbitrary
    /// command with operations in it (a replay's `MERGE`), in command order.
    pub per_op: Vec<(String, u64, f64)>,
    /// Requests a schedule meant to start in the interval (a trace replay's timestamps),
    /// when there is one.
    pub intended_ops: Option<u64>,
}

impl TimelineRow {
    /// Summarizes one interval's recorder. `time_s` is the caller's choice of timestamp —
    /// kvlab uses the end of the interval. Arbitrary command `i` is named
    /// `command_names[i]` (as in [`Recorder::summary_named`]); commands past the end of
    /// the list are left out of [`TimelineRow::per_op`] (they still count in the overall
    /// figures).
    pub fn from_interval(
        time_s: f64,
        interval_s: f64,
        interval: &Recorder,
        command_names: &[String],
    ) -> TimelineRow {
        let overall = interval.overall();
        let (p50, p99, p999, max) = if overall.is_empty() {
            (0, 0, 0, 0)
        } else {
            (
                value_at_percentile(&overall, 50.0),
                value_at_percentile(&overall, 99.0),
                value_at_percentile(&overall, 99.9),
                overall.max(),
            )
        };
        let operations = interval.operations();
        let kinds = OpKind::ALL
            .iter()
            .filter(|k| interval.count(**k) > 0)
            .map(|k| (k.ycsb_name(), interval.histogram(*k)));
        let commands = command_names.iter().zip(0u16..).filter_map(|(name, id)| {
            interval
                .command_histogram(CommandId(id))
                .filter(|h| !h.is_empty())
                .map(|h| (name.as_str(), h))
        });
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
            per_op: kinds
                .chain(commands)
                .map(|(name, h)| {
                    (
                        name.to_string(),
                        h.len(),
                        ns_to_us(value_at_percentile(h, 99.0)),
                    )
                })
                .collect(),
            intended_ops: None,
        }
    }
}

/// The CSV column prefix of a kind or command name: the name in lower case, `-` → `_`
/// (`read_modify_write`, `merge`).
fn column_prefix(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}

/// Writes the `,<ops>,<p99>` cells of the measurement called `name` in `row`: `,0,` when
/// it had no operations in the interval.
fn write_op_cells(out: &mut impl Write, row: &TimelineRow, name: &str) -> io::Result<()> {
    match row.per_op.iter().find(|(n, _, _)| n == name) {
        Some((_, ops, p99)) => write!(out, ",{ops},{p99}"),
        None => write!(out, ",0,"),
    }
}

/// Writes a timeline as CSV. Columns: `time_s,interval_s,operations,throughput_ops_per_sec,
/// p50_us,p99_us,p999_us,max_us,errors`, then `<kind>_ops,<kind>_p99_us` for each of
/// `kinds` (e.g. `read_ops,read_p99_us`). When any row has
/// [`TimelineRow::intended_ops`], two more columns follow:
/// `intended_ops,intended_ops_per_sec`. Last come `<command>_ops,<command>_p99_us` for
/// each name of `commands` (kvlab writes `merge_ops,merge_p99_us` for `MERGE`), so the
/// columns before them keep their places. A kind or command without operations in an
/// interval has `0` operations and an empty p99 cell.
pub fn write_timeline_csv(
    rows: &[TimelineRow],
    kinds: &[OpKind],
    commands: &[&str],
    out: &mut impl Write,
) -> io::Result<()> {
    write!(
        out,
        "time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,max_us,errors"
    )?;
    for kind in kinds {
        let prefix = column_prefix(kind.ycsb_name());
        write!(out, ",{prefix}_ops,{prefix}_p99_us")?;
    }
    let intended = rows.iter().any(|r| r.intended_ops.is_some());
    if intended {
        write!(out, ",intended_ops,intended_ops_per_sec")?;
    }
    for name in commands {
        let prefix = column_prefix(name);
        write!(out, ",{prefix}_ops,{prefix}_p99_us")?;
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
            write_op_cells(out, row, kind.ycsb_name())?;
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
        for name in commands {
            write_op_cells(out, row, name)?;
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
        let row = TimelineRow::from_interval(2.0, 0.5, &r, &[]);
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
        let empty = TimelineRow::from_interval(2.5, 0.5, &Recorder::new(), &[]);
        let mut out = Vec::new();
        write_timeline_csv(
            &[row, empty],
            &[OpKind::Read, OpKind::Update, OpKind::ReadModifyWrite],
            &[],
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

    /// A named command (a replay's `MERGE`) gets its cells in `per_op` and its
    /// `merge_ops,merge_p99_us` columns after every other column, intended ones included,
    /// so the columns of files written before it keep their places; an unnamed command
    /// counts in the overall figures only.
    #[test]
    fn merge_columns_come_last() {
        let mut r = Recorder::new();
        r.record(OpKind::Read, Status::Ok, 1_000);
        for _ in 0..3 {
            r.record_command(CommandId(0), Status::Ok, 1_800, 20);
        }
        r.record_command(CommandId(1), Status::Ok, 2_000, 5);
        let mut row = TimelineRow::from_interval(1.0, 1.0, &r, &["MERGE".to_string()]);
        assert_eq!(row.operations, 5);
        assert_eq!(row.max_us, 2.0);
        assert_eq!(
            row.per_op,
            vec![("READ".to_string(), 1, 1.0), ("MERGE".to_string(), 3, 1.8)]
        );
        row.intended_ops = Some(6);
        let mut quiet = TimelineRow::from_interval(2.0, 1.0, &Recorder::new(), &[]);
        quiet.intended_ops = Some(0);
        let mut out = Vec::new();
        write_timeline_csv(&[row, quiet], &[OpKind::Read], &["MERGE"], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "time_s,interval_s,operations,throughput_ops_per_sec,p50_us,p99_us,p999_us,max_us,\
             errors,read_ops,read_p99_us,intended_ops,intended_ops_per_sec,merge_ops,\
             merge_p99_us\n\
             1,1,5,5,1.8,2,2,2,0,1,1,6,6,3,1.8\n\
             2,1,0,0,0,0,0,0,0,0,,0,0,0,\n"
        );
    }
}
