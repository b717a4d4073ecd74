//! `index.html`: the analysis as one self-contained page, every chart inline SVG in the
//! style of kvlab's reports (`kvlab-report`'s `chart.rs`: Tableau 10 colours, 640×320
//! frames, grey grid, sans-serif 11 px) — no script, font or network.

use std::fmt::Write as _;

use super::hist::{Log2Hist, ValueHist};
use super::{Analysis, HeatBucket, KeyRange, SeriesPoint, CORRELATED};

/// Tableau 10, as kvlab's reports colour series.
const COLORS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Most key ranges whose boundaries a chart draws (more would hide the data).
const MAX_MARKS: usize = 500;

const STYLE: &str = "\
body{font-family:sans-serif;margin:0 auto;max-width:1500px;padding:0 16px 48px;color:#222}\
h1{margin:20px 0 4px}h2{margin-top:36px;border-bottom:1px solid #ccc}\
.charts{display:flex;flex-wrap:wrap;gap:12px;margin:8px 0}\
svg.chart{max-width:100%;height:auto;border:1px solid #eee}\
.note{color:#666;font-size:12px}\
table{border-collapse:collapse;margin:12px 0 24px;font-size:12px}\
th,td{border:1px solid #ddd;padding:3px 6px}th{background:#f3f3f3}\
td.num{text-align:right;white-space:nowrap}tbody tr:nth-child(even){background:#fafafa}";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A short number for a tick: k/M/G suffixes from 10 000 up, plain decimals down to
/// 0.001, scientific below.
fn short(v: f64) -> String {
    let a = v.abs();
    let trim = |t: String| -> String {
        if t.contains('.') {
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            t
        }
    };
    if a >= 1e10 {
        trim(format!("{:.2}", v / 1e9)) + "G"
    } else if a >= 1e7 {
        trim(format!("{:.2}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.2}", v / 1e3)) + "k"
    } else if a == 0.0 || a >= 1e-3 {
        trim(format!("{v:.3}"))
    } else {
        format!("{v:.0e}")
    }
}

/// One axis of a chart.
struct Axis<'a> {
    label: &'a str,
    log: bool,
}

/// Ticks over `[lo, hi]` (transformed units): decades on a log axis, 1/2/5 steps on a
/// linear one.
fn ticks(log: bool, lo: f64, hi: f64) -> Vec<(f64, String)> {
    if log {
        let (a, b) = (lo.floor() as i32, hi.ceil() as i32);
        let step = ((b - a) / 8).max(1);
        (a..=b)
            .step_by(step as usize)
            .map(|e| (e as f64, short(10f64.powi(e))))
            .collect()
    } else {
        let raw = (hi - lo) / 5.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        let mut t = (lo / step).ceil() * step;
        let mut out = Vec::new();
        while t <= hi + step * 1e-9 {
            out.push((t, short(t)));
            t += step;
        }
        out
    }
}

/// A chart of series of points: lines, or dots for a scatter.
fn chart(
    title: &str,
    x: Axis,
    y: Axis,
    series: &[(String, Vec<(f64, f64)>)],
    dots: bool,
) -> String {
    chart_marked(title, x, y, series, dots, &[])
}

/// [`chart`] with a dashed red vertical line at each x of `marks` (key-range
/// boundaries, drawn as the FAST'20 paper's red lines between key ranges).
fn chart_marked(
    title: &str,
    x: Axis,
    y: Axis,
    series: &[(String, Vec<(f64, f64)>)],
    dots: bool,
    marks: &[f64],
) -> String {
    let tx = |v: f64, log: bool| if log { v.log10() } else { v };
    let usable = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (_, pts) in series {
        for &(px, py) in pts {
            if usable(px, x.log) && usable(py, y.log) {
                let (a, b) = (tx(px, x.log), tx(py, y.log));
                x0 = x0.min(a);
                x1 = x1.max(a);
                y0 = y0.min(b);
                y1 = y1.max(b);
            }
        }
    }
    if x0 > x1 {
        return format!("<p class=\"note\">{}: no data</p>", esc(title));
    }
    if !y.log {
        y0 = y0.min(0.0);
    }
    if !x.log && x0 > 0.0 && x0 < (x1 - x0) {
        x0 = 0.0;
    }
    if x1 - x0 < 1e-12 {
        x1 = x0 + 1.0;
    }
    if y1 - y0 < 1e-12 {
        y1 = y0 + 1.0;
    }
    let longest = series.iter().map(|s| s.0.len()).max().unwrap_or(0);
    let legend = if series.len() > 1 {
        (40.0 + longest as f64 * 6.5).clamp(60.0, 200.0)
    } else {
        16.0
    };
    let (w, h, left, top, bottom) = (640.0, 320.0, 64.0, 28.0, 44.0);
    let (pw, ph) = (w - left - legend, h - top - bottom);
    let px = |v: f64| left + pw * (tx(v, x.log) - x0) / (x1 - x0);
    let py = |v: f64| top + ph * (1.0 - (tx(v, y.log) - y0) / (y1 - y0));
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" \
         width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{t}\" font-family=\"sans-serif\" \
         font-size=\"11\"><title>{t}</title><rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" \
         fill=\"#fff\"/><text x=\"{cx}\" y=\"16\" text-anchor=\"middle\" font-size=\"13\" \
         font-weight=\"bold\">{t}</text><rect class=\"plot\" x=\"{left}\" y=\"{top}\" \
         width=\"{pw}\" height=\"{ph}\" fill=\"none\"/>",
        t = esc(title),
        cx = w / 2.0
    );
    for (t, l) in ticks(y.log, y0, y1) {
        let yy = top + ph * (1.0 - (t - y0) / (y1 - y0));
        let _ = write!(
            s,
            "<line x1=\"{left}\" x2=\"{x2}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{lx}\" y=\"{ty:.1}\" text-anchor=\"end\">{l}</text>",
            x2 = left + pw,
            lx = left - 6.0,
            ty = yy + 4.0
        );
    }
    for (t, l) in ticks(x.log, x0, x1) {
        let xx = left + pw * (t - x0) / (x1 - x0);
        let _ = write!(
            s,
            "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{b}\" y2=\"{b4}\" stroke=\"#555\"/>\
             <text x=\"{xx:.1}\" y=\"{ty}\" text-anchor=\"middle\">{l}</text>",
            b = top + ph,
            b4 = top + ph + 4.0,
            ty = top + ph + 16.0
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{left}\" x2=\"{left}\" y1=\"{top}\" y2=\"{b}\" stroke=\"#555\"/>\
         <line x1=\"{left}\" x2=\"{x2}\" y1=\"{b}\" y2=\"{b}\" stroke=\"#555\"/>\
         <text x=\"14\" y=\"{cy}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {cy})\">{yl}</text>\
         <text x=\"{cx}\" y=\"{xy}\" text-anchor=\"middle\">{xl}</text>",
        b = top + ph,
        x2 = left + pw,
        cy = top + ph / 2.0,
        cx = left + pw / 2.0,
        xy = h - 8.0,
        yl = esc(y.label),
        xl = esc(x.label)
    );
    let inside: Vec<f64> = marks
        .iter()
        .filter(|&&m| usable(m, x.log))
        .map(|&m| tx(m, x.log))
        .filter(|&m| m >= x0 && m <= x1)
        .collect();
    if !inside.is_empty() {
        s.push_str(
            "<g class=\"keyranges\" stroke=\"#d62728\" stroke-opacity=\"0.7\" \
             stroke-dasharray=\"4 3\"><title>key-range boundaries</title>",
        );
        for m in inside {
            let xx = left + pw * (m - x0) / (x1 - x0);
            let _ = write!(
                s,
                "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{top}\" y2=\"{b}\"/>",
                b = top + ph
            );
        }
        s.push_str("</g>");
    }
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let drawn = pts
            .iter()
            .filter(|&&(a, b)| usable(a, x.log) && usable(b, y.log));
        let sparse = !dots && pts.len() <= 3;
        if dots || sparse {
            let _ = write!(s, "<g fill=\"{color}\" fill-opacity=\"0.5\">");
            let r = if sparse { 3.0 } else { 1.2 };
            for &(a, b) in drawn.clone() {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r}\"/>",
                    px(a),
                    py(b)
                );
            }
            s.push_str("</g>");
        }
        if !dots {
            let mut d = String::new();
            for (j, &(a, b)) in drawn.enumerate() {
                let _ = write!(
                    d,
                    "{}{:.1} {:.1}",
                    if j == 0 { "M" } else { " L" },
                    px(a),
                    py(b)
                );
            }
            let _ = write!(
                s,
                "<path class=\"series\" d=\"{d}\" fill=\"none\" stroke=\"{color}\" \
                 stroke-width=\"2\"><title>{}</title></path>",
                esc(name)
            );
        }
        if series.len() > 1 {
            let lx = w - legend + 12.0;
            let ly = top + 6.0 + i as f64 * 16.0;
            let _ = write!(
                s,
                "<line x1=\"{lx}\" x2=\"{x2}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{color}\" \
                 stroke-width=\"3\"/><text x=\"{x3}\" y=\"{y3}\">{}</text>",
                esc(name),
                x2 = lx + 16.0,
                x3 = lx + 22.0,
                y3 = ly + 4.0
            );
        }
    }
    s.push_str("</svg>");
    s
}

fn value_cdf(h: &ValueHist) -> Vec<(f64, f64)> {
    let total = h.count().max(1) as f64;
    let mut seen = 0;
    let sorted = h.sorted();
    // A step from 0 at the smallest value, so a single value still draws a line.
    let start = sorted.first().map(|&(v, _)| (v as f64, 0.0));
    start
        .into_iter()
        .chain(sorted.into_iter().map(|(v, n)| {
            seen += n;
            (v as f64, seen as f64 / total)
        }))
        .collect()
}

/// The CDF at each bucket's upper bound. Bucket 0 (the value 0) has no place on a log
/// axis: its share is where the line starts, at the next bucket's lower bound.
fn log2_cdf(h: &Log2Hist, scale: f64) -> Vec<(f64, f64)> {
    let total = h.total().max(1) as f64;
    let mut seen = h.buckets[0];
    let first = (1..h.used()).find(|&b| h.buckets[b] > 0).unwrap_or(1);
    let mut pts = vec![(
        Log2Hist::bounds(first).0 as f64 * scale,
        seen as f64 / total,
    )];
    for b in first..h.used() {
        seen += h.buckets[b];
        pts.push((Log2Hist::bounds(b).1 as f64 * scale, seen as f64 / total));
    }
    pts
}

fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table><thead><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            let numeric = c.parse::<f64>().is_ok();
            let _ = write!(
                out,
                "<td{}>{}</td>",
                if numeric { " class=\"num\"" } else { "" },
                esc(c)
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
}

/// The heatmap (mean requests per key of each bucket of sorted keys) and the sampled
/// key × time series, keys in sorted order on both x axes (as the paper draws them),
/// with the key ranges' boundaries; `scope` ends the titles.
fn locality_charts(
    o: &mut String,
    a: &Analysis,
    scope: &str,
    heatmap: &[HeatBucket],
    ranges: &[KeyRange],
    series: &[SeriesPoint],
) {
    let marks: Vec<f64> = if ranges.len() > MAX_MARKS {
        Vec::new()
    } else {
        ranges.iter().skip(1).map(|r| r.first_rank as f64).collect()
    };
    let heat = |f: fn(&HeatBucket) -> u64| -> Vec<(f64, f64)> {
        let mut first = 0u64;
        heatmap
            .iter()
            .map(|b| {
                let x = first as f64;
                first += b.keys;
                (x, f(b) as f64 / b.keys.max(1) as f64)
            })
            .collect()
    };
    o.push_str(&chart_marked(
        &format!("Requests per key across the sorted key space{scope}"),
        Axis {
            label: "Key rank (sorted keys)",
            log: false,
        },
        Axis {
            label: "Mean requests per key",
            log: false,
        },
        &[
            ("reads".into(), heat(|b| b.reads)),
            ("writes".into(), heat(|b| b.writes)),
        ],
        false,
        &marks,
    ));
    // One series per op, in the order of the other charts (so the colours agree).
    let mut by_op: Vec<(String, Vec<(f64, f64)>)> = a
        .ops
        .iter()
        .map(|(op, _)| (op.name().to_string(), Vec::new()))
        .collect();
    for p in series {
        if let Some(i) = a.ops.iter().position(|(op, _)| *op == p.op) {
            by_op[i].1.push((p.key_rank as f64, p.time));
        }
    }
    let ylabel = format!("Time ({})", if a.has_clock { "s" } else { "requests" });
    o.push_str(&chart_marked(
        &format!("Sampled requests: key over time{scope}"),
        Axis {
            label: "Key rank (sorted keys)",
            log: false,
        },
        Axis {
            label: &ylabel,
            log: false,
        },
        &by_op,
        true,
        &marks,
    ));
}

/// The page.
pub(crate) fn page(a: &Analysis) -> String {
    let s = &a.summary;
    let tunit = if a.has_clock { "s" } else { "requests" };
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Trace analysis</title><style>{STYLE}</style></head><body>\
         <h1>Trace analysis ({})</h1>",
        esc(&s.format)
    );
    if let Some(sm) = &s.sampling {
        let _ = write!(
            o,
            "<p class=\"note\"><strong>Estimated:</strong> the trace has more than {} \
             distinct keys, so keys were sampled by a hash of the key ({}) at rate 1/{} \
             ({} keys kept). Object counts, popularity, reuse and stack distances, the \
             heatmap, key ranges and working sets are estimates from that sample (ranks on \
             the popularity chart are among the sampled objects); the most requested keys \
             come from a Misra–Gries summary of every request, their counts at most {} \
             requests low. Request, byte, op, size and QPS figures are exact.</p>",
            sm.max_keys,
            esc(&sm.method),
            sm.weight,
            sm.sampled_keys,
            sm.top_error_requests
        );
    }
    let opt = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.4}"));
    let rows = vec![
        vec!["requests".into(), s.requests.to_string()],
        vec!["objects".into(), s.objects.to_string()],
        vec![
            "compulsory miss ratio (requests / bytes)".into(),
            format!(
                "{:.4} / {:.4}",
                s.compulsory_miss_ratio, s.compulsory_miss_ratio_bytes
            ),
        ],
        vec![
            "requests per object".into(),
            format!("{:.4}", s.frequency_mean),
        ],
        vec![
            "objects requested 1, 2, 3, 4, 5 times".into(),
            format!("{:?}", s.x_hit),
        ],
        vec![
            "Zipf alpha / R²".into(),
            format!("{} / {}", opt(s.zipf_alpha), opt(s.zipf_r2)),
        ],
        vec![
            "largest request counts".into(),
            format!("{:?}", s.top_frequencies),
        ],
        vec![
            "time span (s)".into(),
            s.time_span_s.map_or("–".into(), |t| format!("{t}")),
        ],
        vec![
            "mean LRU stack distance".into(),
            format!("{:.1}", s.mean_stack_distance),
        ],
        vec!["largest working set".into(), s.max_working_set.to_string()],
    ];
    o.push_str("<h2>Summary</h2>");
    table(&mut o, &["figure", "value"], &rows);

    o.push_str("<h2>Composition</h2>");
    let rows: Vec<Vec<String>> = a
        .ops
        .iter()
        .map(|(op, c)| {
            vec![
                op.name().into(),
                c.to_string(),
                format!("{:.4}", *c as f64 / s.requests.max(1) as f64),
            ]
        })
        .collect();
    table(&mut o, &["op", "requests", "fraction"], &rows);
    if s.column_families > 1 {
        let rows: Vec<Vec<String>> = a
            .cf_ops
            .iter()
            .take(200)
            .map(|(cf, op, c)| vec![cf.to_string(), op.name().into(), c.to_string()])
            .collect();
        table(&mut o, &["column family / tenant", "op", "requests"], &rows);
    }
    o.push_str("<div class=\"charts\">");
    let per = if a.has_clock { a.qps_bucket } else { 1.0 };
    let qps: Vec<(String, Vec<(f64, f64)>)> = a
        .qps
        .iter()
        .map(|(op, v)| {
            (
                op.name().to_string(),
                v.iter()
                    .enumerate()
                    .map(|(b, &c)| (b as f64 * a.qps_bucket, c as f64 / per))
                    .collect(),
            )
        })
        .collect();
    let ylabel = if a.has_clock {
        format!(
            "Requests per second ({} intervals)",
            super::interval_label((a.qps_bucket * 1e9).round() as u64)
        )
    } else {
        "Requests per bucket".to_string()
    };
    let xlabel = format!("Time ({tunit})");
    o.push_str(&chart(
        "Requests over time",
        Axis {
            label: &xlabel,
            log: false,
        },
        Axis {
            label: &ylabel,
            log: false,
        },
        &qps,
        false,
    ));
    let ws: Vec<(String, Vec<(f64, f64)>)> = vec![(
        "distinct keys".into(),
        a.windows
            .iter()
            .enumerate()
            .map(|(i, w)| (i as f64 * a.window, w.distinct_keys as f64))
            .collect(),
    )];
    o.push_str(&chart(
        &format!("Working set per {} {tunit} window", a.window),
        Axis {
            label: &xlabel,
            log: false,
        },
        Axis {
            label: "Distinct keys",
            log: false,
        },
        &ws,
        false,
    ));
    o.push_str("</div><h2>Sizes</h2><div class=\"charts\">");
    for (name, hists) in [("Key size", &a.key_sizes), ("Value size", &a.value_sizes)] {
        let series: Vec<(String, Vec<(f64, f64)>)> = hists
            .iter()
            .filter(|(_, h)| h.max() > 0)
            .map(|(op, h)| (op.name().to_string(), value_cdf(h)))
            .collect();
        o.push_str(&chart(
            &format!("{name} CDF"),
            Axis {
                label: "Bytes",
                log: true,
            },
            Axis {
                label: "Fraction of requests",
                log: false,
            },
            &series,
            false,
        ));
    }
    if !a.scan_lengths.is_empty() {
        let series: Vec<(String, Vec<(f64, f64)>)> = a
            .scan_lengths
            .iter()
            .map(|(op, h)| (op.name().to_string(), value_cdf(h)))
            .collect();
        o.push_str(&chart(
            "Scan length CDF",
            Axis {
                label: "Records",
                log: true,
            },
            Axis {
                label: "Fraction of scans",
                log: false,
            },
            &series,
            false,
        ));
    }
    o.push_str("</div><h2>Popularity</h2><div class=\"charts\">");
    let step = (a.popularity.len() / 4000).max(1);
    let mut rank_pts: Vec<(f64, f64)> = a
        .popularity
        .iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0)
        .map(|(i, &c)| ((i + 1) as f64, c as f64))
        .collect();
    if let Some(&last) = a.popularity.last() {
        rank_pts.push((a.popularity.len() as f64, last as f64));
    }
    let mut series = vec![("requests".to_string(), rank_pts)];
    if let (Some(alpha), false) = (s.zipf_alpha, a.popularity.is_empty()) {
        // The fitted line through the same points: ln c = -alpha ln r + b.
        let n = a.popularity.len() as f64;
        let (mut sx, mut sy) = (0.0, 0.0);
        for (i, &c) in a.popularity.iter().enumerate() {
            sx += ((i + 1) as f64).ln();
            sy += (c as f64).ln();
        }
        let b = (sy + alpha * sx) / n;
        series.push((
            format!("Zipf alpha {alpha:.3}"),
            vec![(1.0, b.exp()), (n, (b - alpha * n.ln()).exp())],
        ));
    }
    o.push_str(&chart(
        "Requests per object by rank",
        Axis {
            label: "Rank",
            log: true,
        },
        Axis {
            label: "Requests",
            log: true,
        },
        &series,
        false,
    ));
    let series: Vec<(String, Vec<(f64, f64)>)> = a
        .access_counts
        .iter()
        .map(|(op, counts)| {
            let keys: u64 = counts.iter().map(|c| c.1).sum::<u64>().max(1);
            let mut seen = 0;
            (
                op.map_or("all".into(), |o| o.name().to_string()),
                counts
                    .iter()
                    .map(|&(c, n)| {
                        seen += n;
                        (c as f64, seen as f64 / keys as f64)
                    })
                    .collect(),
            )
        })
        .collect();
    o.push_str(&chart(
        "Requests per key CDF",
        Axis {
            label: "Requests to the key",
            log: true,
        },
        Axis {
            label: "Fraction of keys",
            log: false,
        },
        &series,
        false,
    ));
    o.push_str("</div>");
    let rows: Vec<Vec<String>> = a
        .top_keys
        .iter()
        .enumerate()
        .map(|(i, (k, _, c))| vec![(i + 1).to_string(), k.clone(), c.to_string()])
        .collect();
    table(&mut o, &["rank", "key", "requests"], &rows);

    o.push_str("<h2>Key-space locality</h2>");
    if a.key_ranges.len() > MAX_MARKS {
        let _ = write!(
            o,
            "<p class=\"note\">{} key ranges (<code>{}</code>, keyranges.csv): more than \
             {MAX_MARKS}, so their boundaries are not drawn.</p>",
            a.key_ranges.len(),
            a.key_range_rule
        );
    } else if !a.key_ranges.is_empty() {
        let _ = write!(
            o,
            "<p class=\"note\">Dashed red lines: the boundaries of the {} key ranges \
             (<code>{}</code>, keyranges.csv).</p>",
            a.key_ranges.len(),
            a.key_range_rule
        );
    }
    o.push_str("<div class=\"charts\">");
    locality_charts(&mut o, a, "", &a.heatmap, &a.key_ranges, &a.time_series);
    o.push_str("</div>");
    for c in &a.per_cf {
        let _ = write!(
            o,
            "<h3>Column family / tenant {}: {} requests, {} keys</h3><div class=\"charts\">",
            c.cf, c.requests, c.keys
        );
        let scope = format!(" (column family {})", c.cf);
        locality_charts(&mut o, a, &scope, &c.heatmap, &c.key_ranges, &c.time_series);
        o.push_str("</div>");
    }
    o.push_str("<h2>Reuse</h2><div class=\"charts\">");
    o.push_str(&chart(
        "LRU stack distance CDF (and LRU hit ratio)",
        Axis {
            label: "Distance (distinct keys) / cache size (objects)",
            log: true,
        },
        Axis {
            label: "Fraction",
            log: false,
        },
        &[
            ("CDF of reuses".into(), log2_cdf(&a.stack_distance, 1.0)),
            (
                "LRU hit ratio".into(),
                a.lru_hit_ratios()
                    .iter()
                    .map(|&(c, h)| (c as f64, h))
                    .collect(),
            ),
        ],
        false,
    ));
    o.push_str(&chart(
        "Reuse time CDF (requests)",
        Axis {
            label: "Requests since the previous request to the key",
            log: true,
        },
        Axis {
            label: "Fraction of reuses",
            log: false,
        },
        &[("reuse".into(), log2_cdf(&a.reuse_requests, 1.0))],
        false,
    ));
    if a.has_clock {
        o.push_str(&chart(
            "Reuse time CDF (seconds)",
            Axis {
                label: "Seconds since the previous request to the key",
                log: true,
            },
            Axis {
                label: "Fraction of reuses",
                log: false,
            },
            &[("reuse".into(), log2_cdf(&a.reuse_ns, 1e-9))],
            false,
        ));
    }
    o.push_str("</div><h2>Correlations (Pearson's r per request)</h2>");
    let rows: Vec<Vec<String>> = (0..CORRELATED.len())
        .map(|i| {
            std::iter::once(CORRELATED[i].to_string())
                .chain(
                    (0..CORRELATED.len())
                        .map(|j| a.correlations[i][j].map_or("–".into(), |r| format!("{r:.4}"))),
                )
                .collect()
        })
        .collect();
    let mut head = vec![""];
    head.extend(CORRELATED);
    table(&mut o, &head, &rows);
    o.push_str(
        "<p class=\"note\">The data behind every chart is in the CSV files beside this page.</p>\
         </body></html>\n",
    );
    o
}
