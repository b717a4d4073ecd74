//! Inline SVG charts: [`LineChart`] (sweeps, timelines, CDFs) and [`BarChart`] (grouped
//! bars with min–max whiskers), drawn on [`Axis`]es with linear or logarithmic
//! [`Scale`]s, coloured by a [`Palette`] that gives each store one colour everywhere.
//!
//! The SVG needs nothing outside itself: no script, font or stylesheet. Every chart is
//! an `<svg class="chart">`; lines are `<path class="series">`, points
//! `<circle class="point">`, bars `<rect class="bar">`, each with a `<title>` that a
//! browser shows on hover.

use std::fmt::Write as _;

use crate::format::compact;
use crate::table::escape_html;

/// Tableau 10: ten colours that stay distinct for most colour-blind readers.
const COLORS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// After Tableau 10's: the colours Tableau 20 adds, then darker shades, so up to 30 stores
/// get distinct colours.
const MORE_COLORS: [&str; 20] = [
    "#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d", "#f1ce63", "#499894", "#86bcb6", "#ff9d9a",
    "#79706e", "#d37295", "#fabfd2", "#d4a6c8", "#9d7660", "#d7b5a6", "#2a4d6e", "#a5501b",
    "#8c2d2f", "#2f6b2a", "#5e3d72", "#3b3b3b",
];

/// The `i`-th colour: Tableau 10's, then [`MORE_COLORS`], then again from the start.
fn palette_color(i: usize) -> &'static str {
    let i = i % (COLORS.len() + MORE_COLORS.len());
    COLORS
        .get(i)
        .unwrap_or_else(|| &MORE_COLORS[i - COLORS.len()])
}

/// Colours by name: the names sorted, each given the next colour of a fixed palette, so
/// a store has the same colour in every chart of a report (and in every report with the
/// same stores).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Palette {
    names: Vec<String>,
}

impl Palette {
    /// A palette over `names` (duplicates ignored).
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Palette {
        let mut names: Vec<String> = names.into_iter().map(Into::into).collect();
        names.sort();
        names.dedup();
        Palette { names }
    }

    /// The colour of `name`; names not in the palette get the last colour (grey).
    pub fn color(&self, name: &str) -> &'static str {
        match self.names.binary_search_by(|n| n.as_str().cmp(name)) {
            Ok(i) => palette_color(i),
            Err(_) => COLORS[COLORS.len() - 1],
        }
    }

    /// The `i`-th colour of the palette, for series that are not stores.
    pub fn nth(i: usize) -> &'static str {
        palette_color(i)
    }
}

/// How an axis maps values to positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced; ticks at 1, 2, 5 × 10ⁿ steps.
    Linear,
    /// Logarithmic; ticks at powers of ten. Values ≤ 0 are not drawn.
    Log10,
    /// Logarithmic; ticks at powers of two (thread and connection counts).
    Log2,
}

/// One axis: its label (with the unit), scale, and optionally fixed ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// The label, unit included: `Throughput (ops/s)`.
    pub label: String,
    /// The scale.
    pub scale: Scale,
    /// Linear scales: start at zero even when every value is far from it.
    pub from_zero: bool,
    /// Ticks to use instead of computed ones: `(value, label)`; the axis spans them.
    pub ticks: Option<Vec<(f64, String)>>,
}

impl Axis {
    /// A linear axis starting at zero.
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            from_zero: true,
            ticks: None,
        }
    }

    /// A logarithmic (base 10) axis.
    pub fn log10(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log10,
            from_zero: false,
            ticks: None,
        }
    }

    /// The same axis with fixed ticks.
    pub fn with_ticks(mut self, ticks: Vec<(f64, String)>) -> Axis {
        self.ticks = Some(ticks);
        self
    }

    /// The same axis on another scale.
    pub fn with_scale(mut self, scale: Scale) -> Axis {
        self.scale = scale;
        self
    }

    fn usable(&self, v: f64) -> bool {
        v.is_finite() && (self.scale == Scale::Linear || v > 0.0)
    }

    fn transform(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log10 => v.log10(),
            Scale::Log2 => v.log2(),
        }
    }

    /// The drawn range (in transformed units) and the ticks, for data from `lo` to `hi`.
    fn layout(&self, lo: f64, hi: f64) -> (f64, f64, Vec<(f64, String)>) {
        if let Some(ticks) = &self.ticks {
            let t: Vec<f64> = ticks.iter().map(|(v, _)| self.transform(*v)).collect();
            let min = t
                .iter()
                .copied()
                .chain([self.transform(lo)])
                .fold(f64::INFINITY, f64::min);
            let max = t
                .iter()
                .copied()
                .chain([self.transform(hi)])
                .fold(f64::NEG_INFINITY, f64::max);
            let (min, max) = if max > min {
                (min, max)
            } else {
                (min - 1.0, min + 1.0)
            };
            let ticks = ticks
                .iter()
                .map(|(v, l)| (self.transform(*v), l.clone()))
                .collect();
            return (min, max, ticks);
        }
        match self.scale {
            Scale::Linear => {
                let (mut lo, mut hi) = (lo, hi);
                if self.from_zero {
                    lo = lo.min(0.0);
                    hi = hi.max(0.0);
                }
                if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
                    let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
                    lo -= if self.from_zero && lo == 0.0 {
                        0.0
                    } else {
                        pad
                    };
                    hi += pad;
                }
                let step = nice_step((hi - lo) / 5.0);
                let min = (lo / step).floor() * step;
                let mut max = (hi / step).ceil() * step;
                // A value a hair past a round tick (a 10 s run's last interval ends at
                // 10.02 s) ends the ticks at that tick, not a whole step later (at 15 s),
                // and the axis at the value, so it is drawn inside the plot.
                if max - step > min && hi - (max - step) <= SLACK * step {
                    max -= step;
                }
                let n = ((max - min) / step).round() as usize;
                let ticks = (0..=n)
                    .map(|i| {
                        let v = min + i as f64 * step;
                        (v, compact(v))
                    })
                    .collect();
                (min, max.max(hi), ticks)
            }
            Scale::Log10 | Scale::Log2 => {
                let (base, transform): (f64, fn(f64) -> f64) = if self.scale == Scale::Log10 {
                    (10.0, f64::log10)
                } else {
                    (2.0, f64::log2)
                };
                let min = transform(lo).floor();
                let mut max = transform(hi).ceil();
                if max <= min {
                    max = min + 1.0;
                }
                let mut ticks = Vec::new();
                for e in (min as i32)..=(max as i32) {
                    let v = base.powi(e);
                    ticks.push((e as f64, compact(v)));
                    // Few decades: label 2× and 5× too, so the axis is readable.
                    if self.scale == Scale::Log10 && max - min <= 2.0 && (e as f64) < max {
                        for m in [2.0, 5.0] {
                            ticks.push(((m * v).log10(), compact(m * v)));
                        }
                    }
                }
                (min, max, ticks)
            }
        }
    }
}

/// How far past its last tick, in steps, a linear axis may draw a value: 2 %, a pixel or
/// two.
const SLACK: f64 = 0.02;

/// 1, 2 or 5 × 10ⁿ, the smallest at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * magnitude >= raw * (1.0 - 1e-9) {
            return m * magnitude;
        }
    }
    10.0 * magnitude
}

/// A point of a line series, with an optional range drawn as a whisker (e.g. the min
/// and max over rounds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Horizontal value.
    pub x: f64,
    /// Vertical value.
    pub y: f64,
    /// The bottom of the whisker, if any.
    pub lo: Option<f64>,
    /// The top of the whisker, if any.
    pub hi: Option<f64>,
}

impl Point {
    /// A point without whisker.
    pub fn new(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            lo: None,
            hi: None,
        }
    }
}

/// One line of a [`LineChart`].
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend entry.
    pub label: String,
    /// CSS colour.
    pub color: String,
    /// The points in drawing order.
    pub points: Vec<Point>,
    /// Drawn dashed (e.g. further rounds of one store).
    pub dashed: bool,
    /// Shown in the legend (false for further rounds that share an entry).
    pub in_legend: bool,
    /// Drawn as separate square markers without a line (measurements beside a curve).
    pub points_only: bool,
    /// Drawn as a line without the chart's [`LineChart::markers`] (a dense curve beside
    /// sparse points: a circle at each of its points would hide the line and its dashes).
    pub line_only: bool,
}

impl Series {
    /// A solid series in the legend.
    pub fn new(label: impl Into<String>, color: impl Into<String>, points: Vec<Point>) -> Series {
        Series {
            label: label.into(),
            color: color.into(),
            points,
            dashed: false,
            in_legend: true,
            points_only: false,
            line_only: false,
        }
    }
}

/// Chart geometry shared by both kinds.
struct Frame {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    fn plot_width(&self) -> f64 {
        self.width - self.left - self.right
    }
    fn plot_height(&self) -> f64 {
        self.height - self.top - self.bottom
    }
}

const FONT: &str = "font-family=\"sans-serif\" font-size=\"11\"";

fn open_svg(out: &mut String, frame: &Frame, title: &str) {
    // A long title shrinks to fit (bold sans glyphs average ~0.6 em), down to 9 px, then
    // is squeezed to the chart's width; the full title is also the SVG's <title>.
    let room = frame.width - 16.0;
    let ems = 0.6 * title.chars().count() as f64;
    let size = (room / ems.max(1.0)).clamp(9.0, 13.0);
    let fit = if ems * size > room {
        format!(" textLength=\"{room}\" lengthAdjust=\"spacingAndGlyphs\"")
    } else {
        String::new()
    };
    write!(
        out,
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" \
         width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{t}\" {FONT}>\
         <title>{t}</title>\
         <rect class=\"background\" x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>\
         <text x=\"{cx}\" y=\"16\" text-anchor=\"middle\" font-size=\"{size:.1}\" \
         font-weight=\"bold\"{fit}>{t}</text>",
        w = frame.width,
        h = frame.height,
        t = escape_html(title),
        cx = frame.width / 2.0,
    )
    .expect("writing to a String cannot fail");
}

/// The plotted area, as an unpainted `<rect class="plot">`: where every point, line and
/// bar is drawn (a browser test checks each is inside it).
fn plot_area(out: &mut String, frame: &Frame) {
    write!(
        out,
        "<rect class=\"plot\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\"/>",
        frame.left,
        frame.top,
        frame.plot_width(),
        frame.plot_height()
    )
    .expect("writing to a String cannot fail");
}

/// Draws the y axis: grid lines, tick labels and the rotated label.
fn y_axis(
    out: &mut String,
    frame: &Frame,
    axis: &Axis,
    min: f64,
    max: f64,
    ticks: &[(f64, String)],
) {
    let y_of = |t: f64| frame.top + frame.plot_height() * (1.0 - (t - min) / (max - min));
    for (t, label) in ticks {
        if *t < min - 1e-9 || *t > max + 1e-9 {
            continue;
        }
        let y = y_of(*t);
        write!(
            out,
            "<line class=\"grid\" x1=\"{x1}\" x2=\"{x2}\" y1=\"{y:.1}\" y2=\"{y:.1}\" \
             stroke=\"#e4e4e4\"/>\
             <text x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\">{l}</text>",
            x1 = frame.left,
            x2 = frame.left + frame.plot_width(),
            tx = frame.left - 6.0,
            ty = y + 4.0,
            l = escape_html(label),
        )
        .expect("writing to a String cannot fail");
    }
    write!(
        out,
        "<text x=\"14\" y=\"{cy:.1}\" text-anchor=\"middle\" \
         transform=\"rotate(-90 14 {cy:.1})\">{l}</text>\
         <line x1=\"{x}\" x2=\"{x}\" y1=\"{y1}\" y2=\"{y2}\" stroke=\"#555\"/>",
        cy = frame.top + frame.plot_height() / 2.0,
        l = escape_html(&axis.label),
        x = frame.left,
        y1 = frame.top,
        y2 = frame.top + frame.plot_height(),
    )
    .expect("writing to a String cannot fail");
}

fn legend(out: &mut String, frame: &Frame, entries: &[(&str, &str, bool)]) {
    let x = frame.width - frame.right + 12.0;
    for (i, (label, color, dashed)) in entries.iter().enumerate() {
        let y = frame.top + 6.0 + i as f64 * 16.0;
        let dash = if *dashed {
            " stroke-dasharray=\"4 3\""
        } else {
            ""
        };
        write!(
            out,
            "<g class=\"legend\"><line x1=\"{x}\" x2=\"{x2}\" y1=\"{y}\" y2=\"{y}\" \
             stroke=\"{color}\" stroke-width=\"3\"{dash}/>\
             <text x=\"{tx}\" y=\"{ty}\">{l}</text></g>",
            x2 = x + 16.0,
            tx = x + 22.0,
            ty = y + 4.0,
            l = escape_html(label),
        )
        .expect("writing to a String cannot fail");
    }
}

/// Legend width for the longest label (about 6.5 px per character at 11 px).
fn legend_width(labels: &[&str]) -> f64 {
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    (40.0 + longest as f64 * 6.5).clamp(60.0, 260.0)
}

/// A line chart: series of points over a shared x and y axis.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// The title drawn above the plot.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The lines.
    pub series: Vec<Series>,
    /// Draw a circle at every point (for sparse data such as sweeps).
    pub markers: bool,
}

impl LineChart {
    /// True when at least one point can be drawn on the chart's scales.
    pub fn has_data(&self) -> bool {
        self.series
            .iter()
            .flat_map(|s| &s.points)
            .any(|p| self.x.usable(p.x) && self.y.usable(p.y))
    }

    /// The chart as an `<svg class="chart">` element.
    pub fn to_svg(&self) -> String {
        let points = || {
            self.series
                .iter()
                .flat_map(|s| &s.points)
                .filter(|p| self.x.usable(p.x) && self.y.usable(p.y))
        };
        let fold = |f: fn(&Point) -> Vec<f64>| {
            points()
                .flat_map(f)
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                })
        };
        let (x_lo, x_hi) = fold(|p| vec![p.x]);
        let (y_lo, y_hi) = fold(|p| [Some(p.y), p.lo, p.hi].into_iter().flatten().collect());
        let (x_lo, x_hi) = if x_lo.is_finite() {
            (x_lo, x_hi)
        } else {
            (1.0, 1.0)
        };
        let (y_lo, y_hi) = if y_lo.is_finite() {
            let y_lo = if self.y.usable(y_lo) {
                y_lo
            } else {
                y_hi.min(1.0)
            };
            (y_lo, y_hi)
        } else {
            (1.0, 1.0)
        };
        let (x_min, x_max, x_ticks) = self.x.layout(x_lo, x_hi);
        let (y_min, y_max, y_ticks) = self.y.layout(y_lo, y_hi);
        let labels: Vec<&str> = self
            .series
            .iter()
            .filter(|s| s.in_legend)
            .map(|s| s.label.as_str())
            .collect();
        let frame = Frame {
            width: 640.0,
            height: 320.0f64.max(60.0 + labels.len() as f64 * 16.0),
            left: 64.0,
            right: legend_width(&labels),
            top: 28.0,
            bottom: 44.0,
        };
        let x_of = |v: f64| {
            frame.left + frame.plot_width() * (self.x.transform(v) - x_min) / (x_max - x_min)
        };
        let y_of = |v: f64| {
            frame.top
                + frame.plot_height() * (1.0 - (self.y.transform(v) - y_min) / (y_max - y_min))
        };
        let mut out = String::new();
        open_svg(&mut out, &frame, &self.title);
        plot_area(&mut out, &frame);
        y_axis(&mut out, &frame, &self.y, y_min, y_max, &y_ticks);
        let base = frame.top + frame.plot_height();
        for (t, label) in &x_ticks {
            if *t < x_min - 1e-9 || *t > x_max + 1e-9 {
                continue;
            }
            let x = frame.left + frame.plot_width() * (t - x_min) / (x_max - x_min);
            write!(
                out,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{base}\" y2=\"{b2}\" stroke=\"#555\"/>\
                 <text x=\"{x:.1}\" y=\"{ty}\" text-anchor=\"middle\">{l}</text>",
                b2 = base + 4.0,
                ty = base + 16.0,
                l = escape_html(label),
            )
            .expect("writing to a String cannot fail");
        }
        write!(
            out,
            "<line x1=\"{x1}\" x2=\"{x2}\" y1=\"{base}\" y2=\"{base}\" stroke=\"#555\"/>\
             <text x=\"{cx:.1}\" y=\"{ty}\" text-anchor=\"middle\">{l}</text>",
            x1 = frame.left,
            x2 = frame.left + frame.plot_width(),
            cx = frame.left + frame.plot_width() / 2.0,
            ty = frame.height - 8.0,
            l = escape_html(&self.x.label),
        )
        .expect("writing to a String cannot fail");
        for s in &self.series {
            let drawn: Vec<&Point> = s
                .points
                .iter()
                .filter(|p| self.x.usable(p.x) && self.y.usable(p.y))
                .collect();
            if drawn.is_empty() {
                continue;
            }
            if s.points_only {
                for p in &drawn {
                    write!(
                        out,
                        "<rect class=\"measured\" x=\"{:.1}\" y=\"{:.1}\" width=\"10\" \
                         height=\"10\" fill=\"{c}\" stroke=\"#000\"><title>{l}: {x} → {y}</title></rect>",
                        x_of(p.x) - 5.0,
                        y_of(p.y) - 5.0,
                        c = s.color,
                        l = escape_html(&s.label),
                        x = compact(p.x),
                        y = compact(p.y),
                    )
                    .expect("writing to a String cannot fail");
                }
                continue;
            }
            let mut d = String::new();
            for (i, p) in drawn.iter().enumerate() {
                write!(
                    d,
                    "{}{:.1} {:.1}",
                    if i == 0 { "M" } else { " L" },
                    x_of(p.x),
                    y_of(p.y)
                )
                .expect("writing to a String cannot fail");
            }
            let dash = if s.dashed {
                " stroke-dasharray=\"5 4\""
            } else {
                ""
            };
            write!(
                out,
                "<path class=\"series\" d=\"{d}\" fill=\"none\" stroke=\"{c}\" \
                 stroke-width=\"2\"{dash}><title>{l}</title></path>",
                c = s.color,
                l = escape_html(&s.label),
            )
            .expect("writing to a String cannot fail");
            for p in &drawn {
                if let (Some(lo), Some(hi)) = (p.lo, p.hi) {
                    if self.y.usable(lo) && self.y.usable(hi) {
                        let x = x_of(p.x);
                        write!(
                            out,
                            "<path class=\"whisker\" d=\"M{x:.1} {:.1} L{x:.1} {:.1} \
                             M{:.1} {:.1} L{:.1} {:.1} M{:.1} {:.1} L{:.1} {:.1}\" \
                             stroke=\"{c}\" fill=\"none\"/>",
                            y_of(lo),
                            y_of(hi),
                            x - 4.0,
                            y_of(lo),
                            x + 4.0,
                            y_of(lo),
                            x - 4.0,
                            y_of(hi),
                            x + 4.0,
                            y_of(hi),
                            c = s.color,
                        )
                        .expect("writing to a String cannot fail");
                    }
                }
                if (self.markers && !s.line_only) || drawn.len() == 1 {
                    write!(
                        out,
                        "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" \
                         fill=\"{c}\"><title>{l}: {x} → {y}</title></circle>",
                        x_of(p.x),
                        y_of(p.y),
                        c = s.color,
                        l = escape_html(&s.label),
                        x = compact(p.x),
                        y = compact(p.y),
                    )
                    .expect("writing to a String cannot fail");
                }
            }
        }
        let entries: Vec<(&str, &str, bool)> = self
            .series
            .iter()
            .filter(|s| s.in_legend)
            .map(|s| (s.label.as_str(), s.color.as_str(), s.dashed))
            .collect();
        legend(&mut out, &frame, &entries);
        // A points-only series is drawn as squares: so is its legend entry.
        for (i, s) in self.series.iter().filter(|s| s.in_legend).enumerate() {
            if s.points_only {
                write!(
                    out,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\" \
                     stroke=\"#000\"/>",
                    frame.width - frame.right + 15.0,
                    frame.top + 1.0 + i as f64 * 16.0,
                    s.color
                )
                .expect("writing to a String cannot fail");
            }
        }
        out.push_str("</svg>");
        out
    }
}

/// One bar of a [`BarChart`], with an optional whisker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bar {
    /// The bar's height.
    pub value: f64,
    /// The whisker's bottom (e.g. the lowest round).
    pub lo: Option<f64>,
    /// The whisker's top (e.g. the highest round).
    pub hi: Option<f64>,
}

/// One colour of a [`BarChart`]: a value (or none) per group.
#[derive(Clone, Debug, PartialEq)]
pub struct BarSeries {
    /// The legend entry.
    pub label: String,
    /// CSS colour.
    pub color: String,
    /// One entry per group of the chart; `None` leaves a gap.
    pub values: Vec<Option<Bar>>,
}

/// A grouped bar chart: groups along x, one bar per series in each group.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// The title drawn above the plot.
    pub title: String,
    /// The group labels, left to right.
    pub groups: Vec<String>,
    /// The value axis.
    pub y: Axis,
    /// The series (one colour each).
    pub series: Vec<BarSeries>,
}

impl BarChart {
    /// True when at least one bar can be drawn on the chart's scale.
    pub fn has_data(&self) -> bool {
        self.series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .any(|b| self.y.usable(b.value))
    }

    /// The chart as an `<svg class="chart">` element.
    pub fn to_svg(&self) -> String {
        let values = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .flat_map(|b| [Some(b.value), b.lo, b.hi])
            .flatten()
            .filter(|v| self.y.usable(*v));
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (1.0, 1.0) };
        let (y_min, y_max, y_ticks) = self.y.layout(lo, hi);
        let labels: Vec<&str> = self.series.iter().map(|s| s.label.as_str()).collect();
        let bars_per_group = self.series.len().max(1) as f64;
        let longest_group = self
            .groups
            .iter()
            .map(|g| g.chars().count())
            .max()
            .unwrap_or(0);
        let group_width = (bars_per_group * 16.0 + 18.0).max(40.0);
        let rotate = longest_group as f64 * 6.5 > group_width;
        let bottom = if rotate {
            (30.0 + longest_group as f64 * 4.8).min(180.0)
        } else {
            44.0
        };
        let legend_space = legend_width(&labels);
        let plot_width = (group_width * self.groups.len() as f64).max(640.0 - 64.0 - legend_space);
        let frame = Frame {
            width: 64.0 + plot_width + legend_space,
            height: (320.0 + bottom - 44.0).max(60.0 + labels.len() as f64 * 16.0),
            left: 64.0,
            right: legend_space,
            top: 28.0,
            bottom,
        };
        let group_width = frame.plot_width() / self.groups.len().max(1) as f64;
        let bar_width = ((group_width - 12.0) / bars_per_group).min(40.0);
        let y_of = |v: f64| {
            let t = if self.y.usable(v) {
                self.y.transform(v)
            } else {
                y_min
            };
            frame.top
                + frame.plot_height() * (1.0 - (t.clamp(y_min, y_max) - y_min) / (y_max - y_min))
        };
        let mut out = String::new();
        open_svg(&mut out, &frame, &self.title);
        plot_area(&mut out, &frame);
        y_axis(&mut out, &frame, &self.y, y_min, y_max, &y_ticks);
        let base = frame.top + frame.plot_height();
        write!(
            out,
            "<line x1=\"{x1}\" x2=\"{x2}\" y1=\"{base}\" y2=\"{base}\" stroke=\"#555\"/>",
            x1 = frame.left,
            x2 = frame.left + frame.plot_width(),
        )
        .expect("writing to a String cannot fail");
        let y_zero = match self.y.scale {
            Scale::Linear => y_of(0.0_f64.clamp(y_min, y_max)),
            _ => base,
        };
        for (g, group) in self.groups.iter().enumerate() {
            let gx = frame.left + g as f64 * group_width;
            let cx = gx + group_width / 2.0;
            if rotate {
                write!(
                    out,
                    "<text x=\"{cx:.1}\" y=\"{ty}\" text-anchor=\"end\" \
                     transform=\"rotate(-35 {cx:.1} {ty})\">{l}</text>",
                    ty = base + 14.0,
                    l = escape_html(group),
                )
            } else {
                write!(
                    out,
                    "<text x=\"{cx:.1}\" y=\"{ty}\" text-anchor=\"middle\">{l}</text>",
                    ty = base + 16.0,
                    l = escape_html(group),
                )
            }
            .expect("writing to a String cannot fail");
            let first = cx - bar_width * bars_per_group / 2.0;
            for (i, s) in self.series.iter().enumerate() {
                let Some(bar) = s.values.get(g).copied().flatten() else {
                    continue;
                };
                if !self.y.usable(bar.value) {
                    continue;
                }
                let x = first + i as f64 * bar_width;
                let y = y_of(bar.value);
                let (top, height) = if y <= y_zero {
                    (y, y_zero - y)
                } else {
                    (y_zero, y - y_zero)
                };
                write!(
                    out,
                    "<rect class=\"bar\" x=\"{x:.1}\" y=\"{top:.1}\" width=\"{w:.1}\" \
                     height=\"{h:.1}\" fill=\"{c}\"><title>{l} · {g}: {v}</title></rect>",
                    w = (bar_width - 2.0).max(1.0),
                    h = height.max(1.0),
                    c = s.color,
                    l = escape_html(&s.label),
                    g = escape_html(group),
                    v = compact(bar.value),
                )
                .expect("writing to a String cannot fail");
                if let (Some(lo), Some(hi)) = (bar.lo, bar.hi) {
                    if hi > lo && self.y.usable(lo) {
                        let wx = x + (bar_width - 2.0) / 2.0;
                        write!(
                            out,
                            "<path class=\"whisker\" d=\"M{wx:.1} {:.1} L{wx:.1} {:.1} \
                             M{:.1} {:.1} L{:.1} {:.1} M{:.1} {:.1} L{:.1} {:.1}\" \
                             stroke=\"#333\" fill=\"none\"/>",
                            y_of(lo),
                            y_of(hi),
                            wx - 3.0,
                            y_of(lo),
                            wx + 3.0,
                            y_of(lo),
                            wx - 3.0,
                            y_of(hi),
                            wx + 3.0,
                            y_of(hi),
                        )
                        .expect("writing to a String cannot fail");
                    }
                }
            }
        }
        let entries: Vec<(&str, &str, bool)> = self
            .series
            .iter()
            .map(|s| (s.label.as_str(), s.color.as_str(), false))
            .collect();
        legend(&mut out, &frame, &entries);
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_is_by_sorted_name() {
        let p = Palette::new(["redis", "memcached", "null", "redis"]);
        assert_eq!(p.color("memcached"), COLORS[0]);
        assert_eq!(p.color("null"), COLORS[1]);
        assert_eq!(p.color("redis"), COLORS[2]);
        assert_eq!(p.color("other"), COLORS[9]);
        // Thirty stores, thirty colours.
        let names: Vec<String> = (0..30).map(|i| format!("store{i:02}")).collect();
        let p = Palette::new(names.clone());
        let mut colors: Vec<&str> = names.iter().map(|n| p.color(n)).collect();
        colors.sort_unstable();
        colors.dedup();
        assert_eq!(colors.len(), 30);
    }

    #[test]
    fn linear_ticks_are_round() {
        let (min, max, ticks) = Axis::linear("x").layout(3.0, 97.0);
        assert_eq!((min, max), (0.0, 100.0));
        let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0", "20", "40", "60", "80", "100"]);
        let (min, max, _) = Axis::log10("y").layout(3.0, 2_000.0);
        assert_eq!((min, max), (0.0, 4.0));
        let (min, max, ticks) = Axis::linear("y").with_scale(Scale::Log2).layout(1.0, 48.0);
        assert_eq!((min, max), (0.0, 6.0));
        assert_eq!(ticks.last().unwrap().1, "64");
        // A 10-second run's timeline ends a few milliseconds past 10 s: its ticks end at
        // 10 s, not 15, and the axis at its last value, so the value is drawn inside.
        let (_, max, ticks) = Axis::linear("Time (s)").layout(0.1, 10.0157);
        assert_eq!(max, 10.0157);
        assert_eq!(ticks.last().unwrap().1, "10");
        let (_, max, _) = Axis::linear("Time (s)").layout(0.1, 10.5);
        assert_eq!(max, 15.0);
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(7.0), 10.0);
    }

    #[test]
    fn a_line_chart_draws_each_series() {
        let chart = LineChart {
            title: "Throughput <by> threads".into(),
            x: Axis::linear("Threads").with_scale(Scale::Log2),
            y: Axis::linear("Throughput (ops/s)"),
            series: vec![
                Series::new(
                    "a",
                    "#000",
                    vec![Point::new(1.0, 10.0), Point::new(4.0, 30.0)],
                ),
                Series::new("b", "#111", vec![Point::new(0.0, 5.0)]),
            ],
            markers: true,
        };
        assert!(chart.has_data());
        let svg = chart.to_svg();
        assert!(svg.starts_with("<svg class=\"chart\""), "{svg}");
        assert!(svg.contains("Throughput &lt;by&gt; threads"), "{svg}");
        assert_eq!(
            svg.matches("class=\"series\"").count(),
            1,
            "x = 0 is off a log axis"
        );
        assert_eq!(svg.matches("class=\"point\"").count(), 2);
        assert_eq!(svg.matches("class=\"legend\"").count(), 2);
    }

    #[test]
    fn a_bar_chart_draws_each_value() {
        let bar = |v| {
            Some(Bar {
                value: v,
                lo: Some(v * 0.9),
                hi: Some(v * 1.1),
            })
        };
        let chart = BarChart {
            title: "Latency".into(),
            groups: vec!["READ p50".into(), "READ p99".into()],
            y: Axis::log10("Latency (µs)"),
            series: vec![
                BarSeries {
                    label: "x".into(),
                    color: "#000".into(),
                    values: vec![bar(10.0), bar(100.0)],
                },
                BarSeries {
                    label: "y".into(),
                    color: "#111".into(),
                    values: vec![None, bar(0.0)],
                },
            ],
        };
        assert!(chart.has_data());
        let svg = chart.to_svg();
        assert_eq!(
            svg.matches("class=\"bar\"").count(),
            2,
            "0 is off a log axis"
        );
        assert_eq!(svg.matches("class=\"whisker\"").count(), 2);
        let empty = BarChart {
            series: vec![],
            ..chart
        };
        assert!(!empty.has_data());
    }
}
