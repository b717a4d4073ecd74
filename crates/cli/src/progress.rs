//! Live progress on stderr: ops/s, p99, done, ETA — on a terminal only, unless forced.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use kvlab_runner::Interval;

/// When to show progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// When stderr is a terminal.
    Auto,
    /// Always (one line per interval when stderr is not a terminal).
    Always,
    /// Never.
    Never,
}

/// Whether progress should be shown for `when`.
pub fn enabled(when: When) -> bool {
    match when {
        When::Auto => std::io::stderr().is_terminal(),
        When::Always => true,
        When::Never => false,
    }
}

/// The progress line.
pub struct Progress {
    show: bool,
    tty: bool,
    phase: &'static str,
    drawn: bool,
}

fn human_rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn human_latency_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.1} µs")
    }
}

fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Progress {
    /// A progress display for `phase`.
    pub fn new(when: When, phase: &'static str) -> Progress {
        Progress {
            show: enabled(when),
            tty: std::io::stderr().is_terminal(),
            phase,
            drawn: false,
        }
    }

    /// Shows one interval.
    pub fn update(&mut self, iv: &Interval<'_>) {
        if !self.show {
            return;
        }
        let ops = iv.recorder.operations();
        let rate = if iv.interval_s > 0.0 {
            ops as f64 / iv.interval_s
        } else {
            0.0
        };
        let p99 = iv.recorder.overall().value_at_quantile(0.99) as f64 / 1e3;
        let mut line = if iv.warmup {
            format!(
                "{} warm-up {:>6.1}s  {:>8} ops/s",
                self.phase,
                iv.time_s,
                human_rate(rate)
            )
        } else {
            format!(
                "{} {:>6.1}s  {:>8} ops/s  p99 {:>9}  {} ops",
                self.phase,
                iv.time_s,
                human_rate(rate),
                human_latency_us(p99),
                iv.done
            )
        };
        if !iv.warmup {
            let eta = match (iv.expected, iv.duration) {
                (Some(total), _) if total > 0 && iv.done > 0 => {
                    line.push_str(&format!(" ({:.0}%)", 100.0 * iv.done as f64 / total as f64));
                    let per_op = iv.time_s / iv.done as f64;
                    Some(Duration::from_secs_f64(
                        per_op * total.saturating_sub(iv.done) as f64,
                    ))
                }
                (None, Some(d)) => Some(d.saturating_sub(Duration::from_secs_f64(iv.time_s))),
                _ => None,
            };
            if let Some(eta) = eta {
                line.push_str(&format!("  ETA {}", human_duration(eta)));
            }
            let errors = iv.recorder.errors_total();
            if errors > 0 {
                line.push_str(&format!("  {errors} errors"));
            }
        }
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[2K{line}");
            self.drawn = true;
        } else {
            let _ = writeln!(err, "{line}");
        }
        let _ = err.flush();
    }

    /// Ends the progress line.
    pub fn finish(&mut self) {
        if self.drawn {
            eprintln!();
            self.drawn = false;
        }
    }
}
