//! The HTML form of a [`Study`]: one self-contained page (inline CSS, inline SVG charts,
//! a few lines of script that sort tables) with a section per workload, a section for
//! cache figures and the tables.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use hdrhistogram::Histogram;
use kvlab_measure::LatencySummary;

use crate::chart::{Axis, Bar, BarChart, BarSeries, LineChart, Point, Scale, Series};
use crate::format;
use crate::load::MonitorSeries;
use crate::study::{family_name, Cell, LatencyFigure, Setting, Spread};
use crate::table::escape_html;
use crate::Study;

const STYLE: &str = "\
body{font-family:sans-serif;margin:0 auto;max-width:1500px;padding:0 16px 48px;color:#222}\
h1{margin:20px 0 4px}h2{margin-top:36px;border-bottom:1px solid #ccc}\
.meta{color:#555;font-size:13px;line-height:1.6}\
.chip{display:inline-block;width:11px;height:11px;border-radius:2px;margin:0 4px 0 10px;\
vertical-align:-1px}\
nav a{margin-right:14px}\
.charts{display:flex;flex-wrap:wrap;gap:12px;margin:8px 0}\
svg.chart{max-width:100%;height:auto;border:1px solid #eee}\
details{margin:10px 0}summary{cursor:pointer;font-weight:bold;padding:4px 0}\
.note{color:#666;font-size:12px}.scroll{overflow-x:auto}\
table{border-collapse:collapse;margin:12px 0 24px;font-size:12px}\
caption{text-align:left;font-weight:bold;padding:4px 0;font-size:13px}\
th,td{border:1px solid #ddd;padding:3px 6px}\
td.num{white-space:nowrap}td{overflow-wrap:break-word}\
th{background:#f3f3f3;cursor:pointer;user-select:none;vertical-align:bottom}\
th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}\
td.num,th.num{text-align:right}tbody tr:nth-child(even){background:#fafafa}\
";

/// Sorts a table by a clicked header: numerically by `data-v` where cells have it (cells
/// without a number last), else by text; a second click reverses.
const SORT_SCRIPT: &str = "\
document.querySelectorAll('table.sortable').forEach(function (table) {\n\
  var heads = table.querySelectorAll('thead th');\n\
  heads.forEach(function (th, col) {\n\
    th.addEventListener('click', function () {\n\
      var body = table.tBodies[0];\n\
      var rows = Array.prototype.slice.call(body.rows);\n\
      var asc = th.getAttribute('aria-sort') !== 'ascending';\n\
      heads.forEach(function (h) { h.removeAttribute('aria-sort'); });\n\
      th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');\n\
      rows.sort(function (a, b) {\n\
        var x = a.cells[col], y = b.cells[col];\n\
        var vx = x.getAttribute('data-v'), vy = y.getAttribute('data-v');\n\
        var c;\n\
        if (vx !== null && vy !== null) { c = parseFloat(vx) - parseFloat(vy); }\n\
        else if (vx !== null) { return -1; }\n\
        else if (vy !== null) { return 1; }\n\
        else { c = x.textContent.localeCompare(y.textContent, undefined, {numeric: true}); }\n\
        return asc ? c : -c;\n\
      });\n\
      rows.forEach(function (r) { body.appendChild(r); });\n\
    });\n\
  });\n\
});\n";

/// The charts of one workload × concurrency, and what the page says about them.
struct SettingCharts {
    /// The SVG charts.
    charts: Vec<String>,
    /// Some timeline has dashed lines (rounds after the first).
    dashed: bool,
    /// Monitor columns (`file: column`) left out because every value was 0.
    always_zero: Vec<String>,
}

/// Open every setting's details when there are at most this many settings.
const OPEN_SETTINGS: usize = 8;

/// An anchor id from a name.
fn slug(prefix: &str, name: &str) -> String {
    let mut s = String::from(prefix);
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

fn charts_div(out: &mut String, charts: &[String]) {
    if charts.is_empty() {
        return;
    }
    out.push_str("<div class=\"charts\">\n");
    for c in charts {
        out.push_str(c);
        out.push('\n');
    }
    out.push_str("</div>\n");
}

fn bar(s: Spread) -> Bar {
    Bar {
        value: s.mean,
        lo: (s.n > 1).then_some(s.min),
        hi: (s.n > 1).then_some(s.max),
    }
}

fn point(x: f64, s: Spread) -> Point {
    Point {
        x,
        y: s.mean,
        lo: (s.n > 1).then_some(s.min),
        hi: (s.n > 1).then_some(s.max),
    }
}

/// The share of its offered rate an open-loop step must achieve to have kept up: the
/// rate charts mark the steps below it (the `run --slo` search's own criterion,
/// `KEEP_UP` in `crates/lab/src/phase/slo.rs`).
const KEEP_UP: f64 = 0.95;

/// A latency axis: logarithmic when the values span more than a factor of 20.
fn latency_axis(label: &str, values: impl Iterator<Item = f64>) -> Axis {
    let (lo, hi) = values
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo.is_finite() && hi / lo > 20.0 {
        Axis::log10(label)
    } else {
        Axis::linear(label)
    }
}

/// Percentiles as "nines" (−log₁₀(1 − p)): 90 % → 1, 99 % → 2, 99.9 % → 3.
fn nines(percentile: f64) -> f64 {
    -(1.0 - percentile / 100.0).log10()
}

fn nines_ticks(max: f64) -> Vec<(f64, String)> {
    let labels = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"];
    labels
        .iter()
        .enumerate()
        .take((max.ceil() as usize).clamp(2, 6) + 1)
        .map(|(i, l)| (i as f64, l.to_string()))
        .collect()
}

/// A latency distribution as (nines, µs) points: from the histogram, quantiles at
/// 0.05-nine steps up to the resolution the count allows (log₁₀ count nines).
fn cdf_from_histogram(h: &Histogram<u64>) -> Vec<Point> {
    if h.is_empty() {
        return Vec::new();
    }
    let max_nines = (h.len() as f64).log10().clamp(1.0, 6.0);
    let steps = (max_nines / 0.05).floor() as usize;
    (0..=steps)
        .map(|i| {
            let x = i as f64 * 0.05;
            let q = 1.0 - 10f64.powf(-x);
            // Java HdrHistogram's rank rule, as result.json's percentiles.
            let v = kvlab_measure::percentile::value_at_percentile(h, q * 100.0);
            Point::new(x, v as f64 / 1000.0)
        })
        .collect()
}

/// A latency distribution from a summary's percentiles, when there is no interval log.
fn cdf_from_summary(l: &LatencySummary) -> Vec<Point> {
    [
        (0.0, l.min_us),
        (50.0, l.p50_us),
        (90.0, l.p90_us),
        (95.0, l.p95_us),
        (99.0, l.p99_us),
        (99.9, l.p999_us),
        (99.99, l.p9999_us),
    ]
    .iter()
    .map(|(p, v)| Point::new(nines(*p), *v))
    .collect()
}

/// Per-round lines of one store: round 1 solid and in the legend, further rounds dashed.
fn round_series(store: &str, color: &str, rounds: Vec<Vec<Point>>) -> Vec<Series> {
    rounds
        .into_iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(i, points)| Series {
            label: store.to_string(),
            color: color.to_string(),
            points,
            dashed: i > 0,
            in_legend: i == 0,
            points_only: false,
            line_only: false,
        })
        .collect()
}

impl Study {
    fn color(&self, store: &str) -> &'static str {
        self.palette.color(store)
    }

    fn settings_of(&self, workload: &str) -> Vec<Setting> {
        self.settings()
            .into_iter()
            .filter(|s| s.workload == workload)
            .collect()
    }

    fn cells_of<'a>(&'a self, setting: &'a Setting) -> impl Iterator<Item = &'a Cell> + 'a {
        self.cells
            .iter()
            .filter(move |c| c.key.setting() == *setting)
    }

    /// Throughput, P99 and P99.9 against concurrency (a line per store) when the
    /// workload was run at several concurrencies; a throughput bar chart otherwise.
    fn sweep_charts(&self, workload: &str) -> Vec<String> {
        let cells: Vec<&Cell> = self
            .cells
            .iter()
            .filter(|c| c.key.workload == workload)
            .collect();
        // A line per store (and pipeline depth and target rate, when they vary); threads
        // too when two splits of one concurrency would share a point.
        type SeriesKey = (String, u64, Option<u64>, Option<u64>);
        let base_key = |c: &Cell| -> SeriesKey {
            (
                c.key.store.clone(),
                c.key.pipeline,
                c.key.target_ops_per_sec,
                None,
            )
        };
        let mut clash = false;
        let mut seen = BTreeSet::new();
        for c in &cells {
            clash |= !seen.insert((base_key(c), c.key.concurrency()));
        }
        let series_key = |c: &Cell| -> SeriesKey {
            let mut k = base_key(c);
            if clash {
                k.3 = Some(c.key.threads);
            }
            k
        };
        let pipelines: BTreeSet<u64> = cells.iter().map(|c| c.key.pipeline).collect();
        let targets: BTreeSet<Option<u64>> =
            cells.iter().map(|c| c.key.target_ops_per_sec).collect();
        let label = |k: &SeriesKey| {
            let mut l = k.0.clone();
            if pipelines.len() > 1 {
                l.push_str(&format!(" pipeline {}", k.1));
            }
            if targets.len() > 1 {
                match k.2 {
                    Some(r) => l.push_str(&format!(" @ {} ops/s", format::compact(r as f64))),
                    None => l.push_str(" closed loop"),
                }
            }
            if let Some(t) = k.3 {
                l.push_str(&format!(" {t} threads"));
            }
            l
        };
        let mut by_series: BTreeMap<SeriesKey, Vec<&Cell>> = BTreeMap::new();
        for c in &cells {
            by_series.entry(series_key(c)).or_default().push(c);
        }
        let xs: BTreeSet<u64> = cells.iter().map(|c| c.key.concurrency()).collect();
        let is_sweep = by_series.values().any(|cs| {
            cs.iter()
                .map(|c| c.key.concurrency())
                .collect::<BTreeSet<_>>()
                .len()
                > 1
        });
        if !is_sweep {
            let settings = self.settings_of(workload);
            let chart = BarChart {
                title: format!("Throughput — {workload}"),
                groups: settings
                    .iter()
                    .map(|s| s.key("").concurrency_label())
                    .collect(),
                y: Axis::linear("Throughput (ops/s)"),
                series: self
                    .stores()
                    .iter()
                    .map(|store| BarSeries {
                        label: store.to_string(),
                        color: self.color(store).to_string(),
                        values: settings
                            .iter()
                            .map(|s| self.cell(&s.key(store)).and_then(Cell::throughput).map(bar))
                            .collect(),
                    })
                    .filter(|s| s.values.iter().any(Option::is_some))
                    .collect(),
            };
            return if chart.has_data() {
                vec![chart.to_svg()]
            } else {
                Vec::new()
            };
        }
        let (x_min, x_max) = (*xs.first().unwrap_or(&1), *xs.last().unwrap_or(&1));
        let x_axis = Axis::linear("Clients (threads × connections)")
            .with_scale(if x_max >= 4 * x_min {
                Scale::Log2
            } else {
                Scale::Linear
            })
            .with_ticks(xs.iter().map(|x| (*x as f64, x.to_string())).collect());
        let line = |title: String, y: Axis, figure: &dyn Fn(&Cell) -> Option<Spread>| {
            let series = by_series
                .iter()
                .map(|(k, cs)| {
                    let mut points: Vec<Point> = cs
                        .iter()
                        .filter_map(|c| figure(c).map(|s| point(c.key.concurrency() as f64, s)))
                        .collect();
                    points.sort_by(|a, b| a.x.total_cmp(&b.x));
                    Series::new(label(k), self.color(&k.0), points)
                })
                .collect();
            let chart = LineChart {
                title,
                x: x_axis.clone(),
                y,
                series,
                markers: true,
            };
            chart.has_data().then(|| chart.to_svg())
        };
        let p99 = |c: &Cell| c.overall(|l| l.p99_us);
        let p999 = |c: &Cell| c.overall(|l| l.p999_us);
        let latencies = || {
            cells
                .iter()
                .filter_map(|c| p99(c))
                .chain(cells.iter().filter_map(|c| p999(c)))
        };
        let lat_axis = |label: &str| latency_axis(label, latencies().flat_map(|s| [s.min, s.max]));
        [
            line(
                format!("Throughput by clients — {workload}"),
                Axis::linear("Throughput (ops/s)"),
                &|c: &Cell| c.throughput(),
            ),
            line(
                format!("P99 latency by clients — {workload}"),
                lat_axis("P99 latency (µs)"),
                &p99,
            ),
            line(
                format!("P99.9 latency by clients — {workload}"),
                lat_axis("P99.9 latency (µs)"),
                &p999,
            ),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Open-loop cells of one store and client count at several target rates: latency
    /// from each request's intended start against the throughput achieved — the
    /// latency–throughput curve a `run --slo` search measures (its `steps/`). The points
    /// are joined in the order of the offered rate, and a step that achieved less than
    /// [`KEEP_UP`] of it is marked with a red square. Empty unless some store and client
    /// count ran at two rates or more.
    fn rate_charts(&self, workload: &str) -> Vec<String> {
        type Group = (String, u64, u64, u64);
        let mut groups: BTreeMap<Group, Vec<&Cell>> = BTreeMap::new();
        for c in self.cells.iter().filter(|c| c.key.workload == workload) {
            if c.key.target_ops_per_sec.is_some() {
                let k = &c.key;
                let group = (k.store.clone(), k.threads, k.connections, k.pipeline);
                groups.entry(group).or_default().push(c);
            }
        }
        groups.retain(|_, cells| cells.len() > 1);
        if groups.is_empty() {
            return Vec::new();
        }
        // A percentile of every intended-start histogram of a round's log, added up.
        let intended = |c: &Cell, p: f64| -> Option<Spread> {
            let values: Vec<f64> = c
                .rounds
                .iter()
                .filter_map(|r| {
                    let log = r.latency.as_ref()?;
                    let mut all = crate::load::empty_histogram();
                    for (tag, h) in &log.by_tag {
                        if tag.starts_with("Intended-") {
                            all.add(h).ok()?;
                        }
                    }
                    (!all.is_empty()).then(|| {
                        kvlab_measure::percentile::value_at_percentile(&all, p) as f64 / 1000.0
                    })
                })
                .collect();
            Spread::of(&values)
        };
        let mut charts = Vec::new();
        for (name, p) in [("P99", 99.0), ("P99.9", 99.9)] {
            let mut series: Vec<Series> = Vec::new();
            let mut short: Vec<Point> = Vec::new();
            for ((store, threads, conns, pipeline), cells) in &groups {
                // In the order the rates were offered: past its capacity a store achieves
                // less than it was offered, and the line turns back to the left there
                // instead of zig-zagging between steps sorted by what they achieved.
                let mut steps: Vec<(f64, Point)> = cells
                    .iter()
                    .filter_map(|c| {
                        let offered = c.key.target_ops_per_sec? as f64;
                        Some((offered, point(c.throughput()?.mean, intended(c, p)?)))
                    })
                    .collect();
                steps.sort_by(|a, b| a.0.total_cmp(&b.0));
                short.extend(
                    steps
                        .iter()
                        .filter(|(offered, pt)| pt.x < KEEP_UP * offered)
                        .map(|(_, pt)| Point::new(pt.x, pt.y)),
                );
                let mut label = format!("{store} {threads}×{conns}");
                if *pipeline > 1 {
                    label.push_str(&format!("×{pipeline}"));
                }
                let points = steps.into_iter().map(|(_, pt)| pt).collect();
                series.push(Series::new(label, self.color(store), points));
            }
            if !short.is_empty() {
                let mut s = Series::new(
                    format!("below {:.0} % of the offered rate", KEEP_UP * 100.0),
                    "#d62728",
                    short,
                );
                s.points_only = true;
                series.push(s);
            }
            let y = latency_axis(
                &format!("{name} latency from the intended start (µs)"),
                series.iter().flat_map(|s| s.points.iter().map(|p| p.y)),
            );
            let chart = LineChart {
                title: format!("{name} latency by throughput, open loop — {workload}"),
                x: Axis::linear("Throughput achieved (ops/s)"),
                y,
                series,
                markers: true,
            };
            if chart.has_data() {
                charts.push(chart.to_svg());
            }
        }
        charts
    }

    /// The charts of one workload × concurrency across stores.
    fn setting_charts(&self, setting: &Setting) -> SettingCharts {
        let cells: Vec<&Cell> = self.cells_of(setting).collect();
        let name = format!(
            "{} · {}",
            setting.workload,
            setting.key("").concurrency_label()
        );
        let mut charts = Vec::new();
        let mut dashed = false;

        // Latency percentiles per operation: groups op × percentile, a bar per store.
        let mut ops: Vec<String> = Vec::new();
        for c in &cells {
            for op in c.op_names() {
                if !ops.contains(&op) {
                    ops.push(op);
                }
            }
        }
        let percentiles: [(&str, LatencyFigure); 3] = [
            ("p50", |l| l.p50_us),
            ("p99", |l| l.p99_us),
            ("p99.9", |l| l.p999_us),
        ];
        let groups: Vec<(String, &str, LatencyFigure)> = ops
            .iter()
            .flat_map(|op| {
                percentiles
                    .iter()
                    .map(move |(p, f)| (format!("{op} {p}"), op.as_str(), *f))
            })
            .collect();
        let chart = BarChart {
            title: format!("Latency percentiles per operation — {name}"),
            groups: groups.iter().map(|g| g.0.clone()).collect(),
            y: Axis::log10("Latency (µs)"),
            series: cells
                .iter()
                .map(|c| BarSeries {
                    label: c.key.store.clone(),
                    color: self.color(&c.key.store).to_string(),
                    values: groups
                        .iter()
                        .map(|(_, op, f)| c.op_latency(op, *f).map(bar))
                        .collect(),
                })
                .collect(),
        };
        if chart.has_data() {
            charts.push(chart.to_svg());
        }

        // Latency CDF of every store operation, rounds merged.
        let mut max_nines: f64 = 2.0;
        let series: Vec<Series> = cells
            .iter()
            .filter_map(|c| {
                let logs: Vec<&Histogram<u64>> = c
                    .rounds
                    .iter()
                    .filter_map(|r| r.latency.as_ref().map(|l| &l.overall))
                    .collect();
                let points = if !logs.is_empty() && logs.len() == c.rounds.len() {
                    let mut merged = logs[0].clone();
                    for h in &logs[1..] {
                        // Same precision, auto-resizing: merging cannot fail.
                        let _ = merged.add(*h);
                    }
                    cdf_from_histogram(&merged)
                } else {
                    let figure = |f: fn(&LatencySummary) -> f64| c.overall(f).map(|s| s.mean);
                    cdf_from_summary(&LatencySummary {
                        avg_us: figure(|l| l.avg_us)?,
                        min_us: figure(|l| l.min_us)?,
                        max_us: figure(|l| l.max_us)?,
                        p50_us: figure(|l| l.p50_us)?,
                        p90_us: figure(|l| l.p90_us)?,
                        p95_us: figure(|l| l.p95_us)?,
                        p99_us: figure(|l| l.p99_us)?,
                        p999_us: figure(|l| l.p999_us)?,
                        p9999_us: figure(|l| l.p9999_us)?,
                    })
                };
                max_nines = points.iter().map(|p| p.x).fold(max_nines, f64::max);
                Some(Series::new(
                    c.key.store.clone(),
                    self.color(&c.key.store),
                    points,
                ))
            })
            .collect();
        let chart = LineChart {
            title: format!("Latency by percentile (CDF) — {name}"),
            x: Axis::linear("Percentile").with_ticks(nines_ticks(max_nines)),
            y: Axis::log10("Latency (µs)"),
            series,
            markers: false,
        };
        if chart.has_data() {
            charts.push(chart.to_svg());
        }

        // Timelines: throughput and P99 per interval, a line per store and round.
        let timeline = |title: &str, y: Axis, f: fn(&kvlab_measure::TimelineRow) -> f64| {
            let mut series = Vec::new();
            for c in &cells {
                let rounds = c
                    .rounds
                    .iter()
                    .map(|r| {
                        r.timeline
                            .as_ref()
                            .map(|t| {
                                t.full_rows()
                                    .iter()
                                    .map(|row| Point::new(row.time_s, f(row)))
                                    .collect()
                            })
                            .unwrap_or_default()
                    })
                    .collect();
                series.extend(round_series(&c.key.store, self.color(&c.key.store), rounds));
            }
            LineChart {
                title: format!("{title} — {name}"),
                x: Axis::linear("Time from the measured start (s)"),
                y,
                series,
                markers: false,
            }
        };
        let tput = timeline(
            "Throughput over time",
            Axis::linear("Throughput (ops/s)"),
            |r| r.throughput_ops_per_sec,
        );
        let p99_values = cells
            .iter()
            .flat_map(|c| &c.rounds)
            .filter_map(|r| r.timeline.as_ref())
            .flat_map(|t| t.full_rows().iter().map(|r| r.p99_us));
        let p99 = timeline(
            "P99 latency over time",
            latency_axis("P99 latency (µs)", p99_values),
            |r| r.p99_us,
        );
        for chart in [tput, p99] {
            if chart.has_data() {
                dashed |= chart.series.iter().any(|s| s.dashed);
                charts.push(chart.to_svg());
            }
        }

        // Resource usage from monitor/*.csv: a chart per file and column.
        let mut columns: BTreeSet<(String, String)> = BTreeSet::new();
        for c in &cells {
            for r in &c.rounds {
                for m in &r.monitor {
                    for (col, _) in &m.columns {
                        columns.insert((m.name.clone(), col.clone()));
                    }
                }
            }
        }
        let mut zero = Vec::new();
        for (file, col) in &columns {
            if Study::always_zero(&cells, file, col) {
                zero.push(format!("{file}: {col}"));
                continue;
            }
            let mut series = Vec::new();
            for c in &cells {
                let rounds = c
                    .rounds
                    .iter()
                    .map(|r| {
                        r.monitor
                            .iter()
                            .filter(|m| &m.name == file)
                            .flat_map(|m| {
                                let values =
                                    m.columns.iter().find(|(n, _)| n == col).map(|(_, v)| v);
                                m.time_s
                                    .iter()
                                    .zip(values.into_iter().flatten())
                                    .filter_map(|(t, v)| v.map(|v| Point::new(*t, v)))
                            })
                            .collect()
                    })
                    .collect();
                series.extend(round_series(&c.key.store, self.color(&c.key.store), rounds));
            }
            let unit = MonitorSeries::unit(col);
            let label = if unit.is_empty() {
                col.clone()
            } else {
                format!("{col} ({unit})")
            };
            let chart = LineChart {
                title: format!("{file}: {col} — {name}"),
                x: Axis::linear("Time from the measured start (s)"),
                y: Axis::linear(label),
                series,
                markers: false,
            };
            if chart.has_data() {
                dashed |= chart.series.iter().any(|s| s.dashed);
                charts.push(chart.to_svg());
            }
        }
        SettingCharts {
            charts,
            dashed,
            always_zero: zero,
        }
    }

    /// True when monitor column `col` of `file` has values in the cells' rounds and every
    /// one of them is 0: a flat line at zero says nothing a list of names does not.
    fn always_zero(cells: &[&Cell], file: &str, col: &str) -> bool {
        let mut values = cells
            .iter()
            .flat_map(|c| &c.rounds)
            .flat_map(|r| &r.monitor)
            .filter(|m| m.name == file)
            .flat_map(|m| m.columns.iter().filter(|(n, _)| n == col))
            .flat_map(|(_, v)| v.iter().flatten())
            .peekable();
        values.peek().is_some() && values.all(|v| *v == 0.0)
    }

    /// Bar charts of the cache cells: hit ratio, gets and sets per second.
    fn cache_charts(&self) -> Vec<String> {
        let data_size = |s: &Setting| {
            self.cells_of(s)
                .find_map(|c| c.property("cache.data_size")?.parse::<f64>().ok())
        };
        // What the workload is, without its label or the properties that tell same-named
        // ones apart: workloads of one family at several data sizes make one curve.
        let base = |s: &Setting| {
            self.cells_of(s)
                .find_map(|c| c.rounds.first())
                .map(|r| family_name(r.doc()))
                .unwrap_or_default()
        };
        let mut settings: Vec<Setting> = self
            .settings()
            .into_iter()
            .filter(|s| self.cells_of(s).any(|c| !c.cache().is_empty()))
            .collect();
        if settings.is_empty() {
            return Vec::new();
        }
        // Workloads by name, then data size (numerically), then concurrency.
        settings.sort_by(|a, b| {
            base(a)
                .cmp(&base(b))
                .then(
                    data_size(a)
                        .unwrap_or(0.0)
                        .total_cmp(&data_size(b).unwrap_or(0.0)),
                )
                .then(a.cmp(b))
        });
        let mut out = self.hit_ratio_by_data_size(&settings, &base, &data_size);
        let one_concurrency = settings
            .iter()
            .map(|s| s.key("").concurrency_label())
            .collect::<BTreeSet<_>>()
            .len()
            == 1;
        let groups: Vec<String> = settings
            .iter()
            .map(|s| {
                if one_concurrency {
                    s.workload.clone()
                } else {
                    format!("{} · {}", s.workload, s.key("").concurrency_label())
                }
            })
            .collect();
        type Figure = fn(&crate::study::CacheFigures) -> Option<f64>;
        let charts: [(&str, Axis, Figure); 3] = [
            ("Hit ratio", Axis::linear("Hit ratio (%)"), |c| {
                c.hit_ratio_pct
            }),
            ("Get throughput", Axis::linear("Gets (ops/s)"), |c| {
                Some(c.get_ops_per_sec)
            }),
            ("Set throughput", Axis::linear("Sets (ops/s)"), |c| {
                Some(c.set_ops_per_sec)
            }),
        ];
        let bars = charts.into_iter().filter_map(|(title, y, figure)| {
            let chart = BarChart {
                title: format!("{title} by workload"),
                groups: groups.clone(),
                y,
                series: self
                    .stores()
                    .iter()
                    .map(|store| BarSeries {
                        label: store.to_string(),
                        color: self.color(store).to_string(),
                        values: settings
                            .iter()
                            .map(|s| {
                                let cell = self.cell(&s.key(store))?;
                                let v: Vec<f64> = cell.cache().iter().filter_map(figure).collect();
                                Spread::of(&v).map(bar)
                            })
                            .collect(),
                    })
                    .filter(|s| s.values.iter().any(Option::is_some))
                    .collect(),
            };
            chart.has_data().then(|| chart.to_svg())
        });
        out.extend(bars);
        out
    }

    /// Hit ratio against data size, a line per store, for each cache workload run at
    /// several data sizes (at one concurrency): the cache's hit-ratio curve.
    fn hit_ratio_by_data_size(
        &self,
        settings: &[Setting],
        base: &dyn Fn(&Setting) -> String,
        data_size: &dyn Fn(&Setting) -> Option<f64>,
    ) -> Vec<String> {
        let mut sweeps: BTreeMap<(String, String), Vec<(&Setting, f64)>> = BTreeMap::new();
        for s in settings {
            if let Some(size) = data_size(s) {
                let key = (base(s), s.key("").concurrency_label());
                sweeps.entry(key).or_default().push((s, size));
            }
        }
        let mut out = Vec::new();
        for ((name, clients), members) in sweeps {
            let sizes: BTreeSet<u64> = members.iter().map(|(_, b)| *b as u64).collect();
            if sizes.len() < 2 {
                continue;
            }
            let (lo, hi) = (*sizes.first().unwrap_or(&1), *sizes.last().unwrap_or(&1));
            let x = Axis::linear("Data size")
                .with_scale(if hi >= 4 * lo {
                    Scale::Log2
                } else {
                    Scale::Linear
                })
                .with_ticks(
                    sizes
                        .iter()
                        .map(|b| (*b as f64, format::bytes(*b as f64)))
                        .collect(),
                );
            let series = self
                .stores()
                .iter()
                .map(|store| {
                    let mut points: Vec<Point> = members
                        .iter()
                        .filter_map(|(s, size)| {
                            let cell = self.cell(&s.key(store))?;
                            let v: Vec<f64> = cell
                                .cache()
                                .iter()
                                .filter_map(|c| c.hit_ratio_pct)
                                .collect();
                            Spread::of(&v).map(|sp| point(*size, sp))
                        })
                        .collect();
                    points.sort_by(|a, b| a.x.total_cmp(&b.x));
                    Series::new(*store, self.color(store), points)
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            let chart = LineChart {
                title: format!("Hit ratio by data size — {name} · {clients}"),
                x,
                y: Axis::linear("Hit ratio (%)"),
                series,
                markers: true,
            };
            if chart.has_data() {
                out.push(chart.to_svg());
            }
        }
        out
    }

    /// The study as one self-contained HTML page titled `title`.
    pub fn to_html(&self, title: &str) -> String {
        let mut out = String::new();
        let w = &mut out;
        let _ = write!(
            w,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n",
            t = escape_html(title)
        );
        self.write_meta(w);
        for note in &self.notes {
            let _ = writeln!(w, "<p class=\"note\">⚠ {}</p>", escape_html(note));
        }
        let workloads = self.workloads();
        let cache = self.cache_table();
        w.push_str("<nav><a href=\"#summary\">Summary</a>");
        for wl in &workloads {
            let _ = write!(
                w,
                "<a href=\"#{}\">{}</a>",
                slug("workload-", wl),
                escape_html(wl)
            );
        }
        if cache.is_some() {
            w.push_str("<a href=\"#cache\">Cache</a>");
        }
        w.push_str("<a href=\"#tables\">Tables</a></nav>\n");

        w.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
        let _ = writeln!(
            w,
            "<p class=\"note\">Throughput and latency are means over each cell's rounds; \
             CV is the rounds' coefficient of variation (sample standard deviation over the \
             mean). Cells whose throughput or P99 CV exceeds {}% are flagged ⚠. Click a \
             column header to sort.</p>",
            format::compact(self.options.cv_threshold_pct)
        );
        scrolling(w, &self.summary_table().to_html());
        w.push_str("</section>\n");

        let settings = self.settings();
        let open = if settings.len() <= OPEN_SETTINGS {
            " open"
        } else {
            ""
        };
        for wl in &workloads {
            let _ = writeln!(
                w,
                "<section id=\"{}\">\n<h2>Workload {}</h2>",
                slug("workload-", wl),
                escape_html(wl)
            );
            charts_div(w, &self.sweep_charts(wl));
            charts_div(w, &self.rate_charts(wl));
            for setting in self.settings_of(wl) {
                let SettingCharts {
                    charts,
                    dashed,
                    always_zero,
                } = self.setting_charts(&setting);
                let _ = writeln!(
                    w,
                    "<details{open}><summary>{} · {} clients</summary>",
                    escape_html(wl),
                    escape_html(&setting.key("").concurrency_label())
                );
                charts_div(w, &charts);
                if dashed {
                    w.push_str(
                        "<p class=\"note\">Solid lines: round 1; dashed: further rounds.</p>\n",
                    );
                }
                if !always_zero.is_empty() {
                    let _ = writeln!(
                        w,
                        "<p class=\"note\">Always 0, not charted: {}.</p>",
                        escape_html(&always_zero.join(", "))
                    );
                }
                w.push_str("</details>\n");
            }
            w.push_str("</section>\n");
        }

        if let Some(table) = cache {
            w.push_str("<section id=\"cache\">\n<h2>Cache</h2>\n");
            w.push_str(
                "<p class=\"note\">Hit ratio: reads that found their key (Return=OK) over reads \
                 answered (OK + NOT_FOUND). DRAM and disk hits from the store's own counters \
                 (hybrid caches). Gets and sets per second of the measured run.</p>\n",
            );
            charts_div(w, &self.cache_charts());
            scrolling(w, &table.to_html());
            w.push_str("</section>\n");
        }

        w.push_str("<section id=\"tables\">\n<h2>Tables</h2>\n");
        scrolling(w, &self.operations_table().to_html());
        scrolling(w, &self.rounds_table().to_html());
        w.push_str("</section>\n");
        let _ = write!(w, "<script>\n{SORT_SCRIPT}</script>\n</body>\n</html>\n");
        out
    }

    /// The page's header facts: results, stores with their colours, kvlab versions,
    /// hosts, time span.
    fn write_meta(&self, w: &mut String) {
        let rounds: Vec<_> = self.rounds().map(|(_, r)| r.doc()).collect();
        let versions: BTreeSet<&str> = rounds.iter().map(|d| d.kvlab_version.as_str()).collect();
        let hosts: BTreeSet<String> = rounds
            .iter()
            .map(|d| {
                format!(
                    "{} ({}, {} CPUs, {})",
                    d.host.hostname,
                    d.host.cpu_model,
                    d.host.cpus,
                    format::bytes(d.host.memory_bytes as f64)
                )
            })
            .collect();
        let first = rounds
            .iter()
            .map(|d| d.started_at.as_str())
            .min()
            .unwrap_or("");
        let last = rounds
            .iter()
            .map(|d| d.finished_at.as_str())
            .max()
            .unwrap_or("");
        let _ = write!(
            w,
            "<div class=\"meta\">{} results in {} cells, {} – {}<br>Stores:",
            rounds.len(),
            self.cells.len(),
            escape_html(first),
            escape_html(last)
        );
        for store in self.stores() {
            let _ = write!(
                w,
                "<span class=\"chip\" style=\"background:{}\"></span>{}",
                self.color(store),
                escape_html(store)
            );
        }
        let _ = writeln!(
            w,
            "<br>kvlab {}<br>Hosts: {}</div>",
            escape_html(&versions.into_iter().collect::<Vec<_>>().join(", ")),
            escape_html(&hosts.into_iter().collect::<Vec<_>>().join("; "))
        );
        if hosts_differ(&rounds) {
            w.push_str("<p class=\"note\">⚠ The results come from more than one host.</p>\n");
        }
    }
}

/// A wide table in a box that scrolls sideways instead of widening the page.
fn scrolling(w: &mut String, table: &str) {
    w.push_str("<div class=\"scroll\">\n");
    w.push_str(table);
    w.push_str("</div>\n");
}

fn hosts_differ(docs: &[&crate::ResultDocument]) -> bool {
    let set: BTreeSet<(&str, &str, usize)> = docs
        .iter()
        .map(|d| {
            (
                d.host.hostname.as_str(),
                d.host.cpu_model.as_str(),
                d.host.cpus,
            )
        })
        .collect();
    set.len() > 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_nines() {
        assert_eq!(
            slug("workload-", "kv-small (cache.keys=10)"),
            "workload-kv-small-cache-keys-10"
        );
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines(0.0), 0.0);
        assert_eq!(nines_ticks(2.4).len(), 4);
    }

    #[test]
    fn cdf_points_follow_the_histogram() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let points = cdf_from_histogram(&h);
        assert_eq!(points.first().unwrap().x, 0.0);
        assert!((points.last().unwrap().x - 3.0).abs() < 1e-9);
        // The 99th percentile of 1 µs … 1000 µs is 990 µs.
        let p99 = points.iter().find(|p| (p.x - 2.0).abs() < 1e-9).unwrap();
        assert!((p99.y - 990.0).abs() < 1.0, "{p99:?}");
        assert!(points.windows(2).all(|w| w[0].y <= w[1].y));
    }
}
