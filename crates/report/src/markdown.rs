//! The tables of a [`Study`] — summary, latency per operation, cache figures, rounds — and
//! its markdown form.

use kvlab_measure::LatencySummary;

use crate::format;
use crate::study::{Cell, Spread};
use crate::table::{Align, Table};
use crate::Study;

type Entry = (String, Option<f64>);

fn text(s: impl Into<String>) -> Entry {
    (s.into(), None)
}

fn number(v: f64, f: fn(f64) -> String) -> Entry {
    (f(v), Some(v))
}

fn maybe(v: Option<f64>, f: fn(f64) -> String) -> Entry {
    match v {
        Some(v) => number(v, f),
        None => text("–"),
    }
}

fn mean(s: Option<Spread>, f: fn(f64) -> String) -> Entry {
    maybe(s.map(|s| s.mean), f)
}

fn pct1(v: f64) -> String {
    format::percent(v, 1)
}

fn pct2(v: f64) -> String {
    format::percent(v, 2)
}

fn whole(v: f64) -> String {
    format!("{v:.0}")
}

/// The leading columns every per-cell table shares.
fn cell_columns(cell: &Cell) -> Vec<Entry> {
    vec![
        text(&cell.key.store),
        text(&cell.key.workload),
        (
            cell.key.concurrency_label(),
            Some(cell.key.concurrency() as f64),
        ),
    ]
}

const CELL_HEADERS: [(&str, Align); 3] = [
    ("Store", Align::Left),
    ("Workload", Align::Left),
    ("Threads×conns", Align::Right),
];

/// The mean of the cell's cache figures over rounds.
fn cache_mean(cell: &Cell, figure: fn(&crate::study::CacheFigures) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = cell.cache().iter().filter_map(figure).collect();
    Spread::of(&values).map(|s| s.mean)
}

/// A cache workload's get/set/delete/lone shares as `get 90% · set 10%`.
fn mix(cell: &Cell) -> String {
    let shares: Vec<(&str, f64)> = [
        ("get", "cache.get"),
        ("set", "cache.set"),
        ("delete", "cache.delete"),
        ("lone get", "cache.lone_get"),
        ("lone set", "cache.lone_set"),
    ]
    .iter()
    .filter_map(|(label, prop)| Some((*label, cell.property(prop)?.parse::<f64>().ok()?)))
    .collect();
    let total: f64 = shares.iter().map(|(_, v)| v).sum();
    if total <= 0.0 {
        return "–".into();
    }
    shares
        .iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|(l, v)| format!("{l} {:.0}%", 100.0 * v / total))
        .collect::<Vec<_>>()
        .join(" · ")
}

impl Study {
    /// Throughput and overall latency per cell, with the spread over rounds, the share of
    /// reads that found no record, errors and flags.
    pub fn summary_table(&self) -> Table {
        let mut columns = CELL_HEADERS.to_vec();
        columns.extend([
            ("Rounds", Align::Right),
            ("Throughput (ops/s)", Align::Right),
            ("Min (ops/s)", Align::Right),
            ("Max (ops/s)", Align::Right),
            ("CV (%)", Align::Right),
            ("P50 (µs)", Align::Right),
            ("P99 (µs)", Align::Right),
            ("P99.9 (µs)", Align::Right),
            ("Read misses (%)", Align::Right),
            ("Errors", Align::Right),
            ("Flags", Align::Left),
        ]);
        let mut t = Table::new("Throughput and latency (mean over rounds)", &columns);
        for cell in &self.cells {
            let tput = cell.throughput();
            let mut row = cell_columns(cell);
            row.extend([
                number(cell.rounds.len() as f64, whole),
                mean(tput, format::rate),
                maybe(tput.map(|s| s.min), format::rate),
                maybe(tput.map(|s| s.max), format::rate),
                maybe(tput.and_then(|s| s.cv_pct), pct1),
                mean(cell.overall(|l| l.p50_us), format::micros),
                mean(cell.overall(|l| l.p99_us), format::micros),
                mean(cell.overall(|l| l.p999_us), format::micros),
                mean(cell.read_miss_pct(), pct1),
                number(cell.errors() as f64, whole),
                text(cell.flags(self.options.cv_threshold_pct).join(", ")),
            ]);
            t.push(row);
        }
        t
    }

    /// Latency percentiles of every operation per cell (means over rounds).
    pub fn operations_table(&self) -> Table {
        let mut columns = CELL_HEADERS.to_vec();
        columns.extend([
            ("Operation", Align::Left),
            ("Operations", Align::Right),
            ("Avg (µs)", Align::Right),
            ("P50 (µs)", Align::Right),
            ("P90 (µs)", Align::Right),
            ("P99 (µs)", Align::Right),
            ("P99.9 (µs)", Align::Right),
            ("P99.99 (µs)", Align::Right),
            ("Max (µs)", Align::Right),
        ]);
        let mut t = Table::new("Latency per operation (mean over rounds)", &columns);
        let figures: [fn(&LatencySummary) -> f64; 7] = [
            |l| l.avg_us,
            |l| l.p50_us,
            |l| l.p90_us,
            |l| l.p99_us,
            |l| l.p999_us,
            |l| l.p9999_us,
            |l| l.max_us,
        ];
        for cell in &self.cells {
            for op in cell.op_names() {
                let mut row = cell_columns(cell);
                row.push(text(&op));
                let count =
                    cell.spread(|d| crate::study::find_op(d, &op).map(|o| o.operations as f64));
                row.push(mean(count, whole));
                for f in &figures {
                    row.push(mean(cell.op_latency(&op, *f), format::micros));
                }
                t.push(row);
            }
        }
        t
    }

    /// Cache figures per cell of a cache workload (means over rounds); `None` when the
    /// study has no cache workload.
    pub fn cache_table(&self) -> Option<Table> {
        let mut columns = CELL_HEADERS.to_vec();
        columns.extend([
            ("Data size", Align::Right),
            ("Value size (bytes)", Align::Left),
            ("Mix", Align::Left),
            ("Hit ratio (%)", Align::Right),
            ("DRAM hits (%)", Align::Right),
            ("Disk hits (%)", Align::Right),
            ("Gets (ops/s)", Align::Right),
            ("Sets (ops/s)", Align::Right),
            ("Evictions", Align::Right),
        ]);
        let mut t = Table::new(
            "Cache: hit ratio, get and set throughput (mean over rounds)",
            &columns,
        );
        for cell in self.cells.iter().filter(|c| !c.cache().is_empty()) {
            let mut row = cell_columns(cell);
            let size = cell
                .property("cache.data_size")
                .and_then(|v| v.parse::<f64>().ok());
            row.extend([
                maybe(size, format::bytes),
                text(cell.property("cache.value_size").unwrap_or("–")),
                text(mix(cell)),
                maybe(cache_mean(cell, |c| c.hit_ratio_pct), pct2),
                maybe(cache_mean(cell, |c| c.dram_hit_pct), pct2),
                maybe(cache_mean(cell, |c| c.disk_hit_pct), pct2),
                maybe(cache_mean(cell, |c| Some(c.get_ops_per_sec)), format::rate),
                maybe(cache_mean(cell, |c| Some(c.set_ops_per_sec)), format::rate),
                maybe(cache_mean(cell, |c| c.evictions), whole),
            ]);
            t.push(row);
        }
        (!t.rows.is_empty()).then_some(t)
    }

    /// Every round: its throughput, P99, errors and file.
    pub fn rounds_table(&self) -> Table {
        let mut columns = CELL_HEADERS.to_vec();
        columns.extend([
            ("Round", Align::Right),
            ("Throughput (ops/s)", Align::Right),
            ("P99 (µs)", Align::Right),
            ("Errors", Align::Right),
            ("Seed", Align::Right),
            ("Result", Align::Left),
        ]);
        let mut t = Table::new("Rounds", &columns);
        for (cell, round) in self.rounds() {
            let doc = round.doc();
            let mut row = cell_columns(cell);
            row.extend([
                number(round.number as f64, whole),
                number(doc.results.throughput_ops_per_sec, format::rate),
                maybe(
                    doc.results.overall.as_ref().map(|l| l.p99_us),
                    format::micros,
                ),
                number(doc.results.errors.values().sum::<u64>() as f64, whole),
                text(doc.seed.to_string()),
                text(round.path.display().to_string()),
            ]);
            t.push(row);
        }
        t
    }

    /// Every table of the study, in report order.
    pub fn tables(&self) -> Vec<Table> {
        let mut tables = vec![self.summary_table(), self.operations_table()];
        tables.extend(self.cache_table());
        tables.push(self.rounds_table());
        tables
    }

    /// The study's tables as markdown, separated by blank lines.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        for note in &self.notes {
            out.push_str(&format!("> note: {}\n", note.replace('|', "\\|")));
        }
        if !self.notes.is_empty() {
            out.push('\n');
        }
        for (i, t) in self.tables().iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&t.to_markdown());
        }
        out
    }
}
