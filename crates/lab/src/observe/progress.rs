//! Live progress on stderr: ops/s, p99, done, ETA — on a terminal only, unless forced.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use kvlab_runner::Interval;

/// When to show progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A duration for an ETA, rounded to the nearest second: an interval ends a little after
/// its boundary, so 1.9997 s are left of a 3 s run at its first line — `2s`, where
/// truncating showed `1s`, one second short.
fn human_duration(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// The line of a warm-up interval: `time_s` is negative, minus the time left until
/// measuring starts when the warm-up is a time, and zero when it is an operation count
/// (no `-0.0s` then: nothing is known about the time left).
fn warmup_line(phase: &str, time_s: f64, rate: f64) -> String {
    let mut line = format!("{phase} warm-up  {:>8} ops/s", human_rate(rate));
    if time_s < 0.0 {
        let left = Duration::from_secs_f64(-time_s);
        if left.as_secs_f64() >= 0.5 {
            line.push_str(&format!("  measuring in {}", human_duration(left)));
        }
    }
    line
}

/// The time left: `total - done` operations at the rate so far, or the rest of
/// `duration` after `time_s` seconds.
fn eta(
    time_s: f64,
    done: u64,
    expected: Option<u64>,
    duration: Option<Duration>,
) -> Option<Duration> {
    match (expected, duration) {
        (Some(total), _) if total > 0 && done > 0 => {
            let per_op = time_s.max(0.0) / done as f64;
            Some(Duration::from_secs_f64(
                per_op * total.saturating_sub(done) as f64,
            ))
        }
        (None, Some(d)) => Some(d.saturating_sub(Duration::from_secs_f64(time_s.max(0.0)))),
        _ => None,
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
            warmup_line(self.phase, iv.time_s, rate)
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
            if let (Some(total), true) = (iv.expected, iv.done > 0) {
                if total > 0 {
                    line.push_str(&format!(" ({:.0}%)", 100.0 * iv.done as f64 / total as f64));
                }
            } else if let Some(d) = iv.duration.filter(|d| !d.is_zero()) {
                // A timed run: the share of its time gone.
                let share = (iv.time_s / d.as_secs_f64()).clamp(0.0, 1.0);
                line.push_str(&format!(" ({:.0}%)", 100.0 * share));
            }
            if let Some(eta) = eta(iv.time_s, iv.done, iv.expected, iv.duration) {
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

    /// Prints a line of its own on stderr, whether or not progress is shown (above the
    /// progress line on a terminal, which the next update draws again).
    pub fn message(&mut self, text: &str) {
        let mut err = std::io::stderr().lock();
        if self.drawn {
            let _ = write!(err, "\r\x1b[2K");
            self.drawn = false;
        }
        let _ = writeln!(err, "{text}");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_rounds_to_the_nearest_second() {
        assert_eq!(human_duration(Duration::from_millis(9200)), "9s");
        assert_eq!(human_duration(Duration::from_millis(9600)), "10s");
        assert_eq!(human_duration(Duration::from_millis(59_600)), "1m00s");
        assert_eq!(human_duration(Duration::ZERO), "0s");
        // A 3 s run, its first line 0.3 ms after the 1 s boundary: 2 s left, not 1 s.
        let left = eta(1.0003, 5, None, Some(Duration::from_secs(3))).unwrap();
        assert_eq!(human_duration(left), "2s");
        // 19 918 of 60 000 operations in 1.0 s: 2.01 s left, not 3 s.
        let left = eta(1.0, 19_918, Some(60_000), None).unwrap();
        assert_eq!(human_duration(left), "2s");
    }

    #[test]
    fn warm_up_shows_no_negative_time() {
        let by_ops = warmup_line("run", -0.0, 1000.0);
        assert!(!by_ops.contains("-0"), "{by_ops}");
        assert!(!by_ops.contains("measuring in"), "{by_ops}");
        let by_time = warmup_line("run", -4.5, 1000.0);
        assert!(by_time.contains("measuring in 5s"), "{by_time}");
        assert!(
            !by_time.contains("-4") && !by_time.contains("-5"),
            "{by_time}"
        );
    }
}
