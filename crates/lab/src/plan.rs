//! Values that cannot mean anything, refused with the option named before any work.

use std::time::Duration;

use crate::Refusal;

/// `--duration` (or a step length such as `--slo-step`): a run of no time measures
/// nothing.
pub fn check_duration(flag: &str, d: Duration) -> Result<(), Refusal> {
    if d.is_zero() {
        return Err(Refusal(format!(
            "{flag} 0 runs for no time and measures nothing: give a duration above zero \
             (e.g. 10s)"
        )));
    }
    Ok(())
}

/// A sampling rate (`--shards`, `--record-sample`): a fraction in (0, 1].
pub fn check_rate(flag: &str, rate: f64) -> Result<(), Refusal> {
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(Refusal(format!(
            "{flag} {rate}: a sampling rate is a fraction in (0, 1], e.g. 0.01 for one key \
             in a hundred"
        )));
    }
    Ok(())
}

/// A run of `operations` operations (without `--duration`): zero does nothing.
pub fn check_operations(operations: Option<u64>) -> Result<(), Refusal> {
    if operations == Some(0) {
        return Err(Refusal(
            "operationcount=0: the run would do no operations; give -p operationcount=N \
             (N ≥ 1) or --duration TIME"
                .into(),
        ));
    }
    Ok(())
}

/// The warning for a YCSB `recordcount` that is absent or 0: YCSB's CoreWorkload turns
/// it into `Integer.MAX_VALUE` (CoreWorkload.java, `init`), and so does kvlab, so a load
/// would insert 2³¹−1 records and a run read keys that were never loaded.
pub fn record_count_warning(recordcount: Option<&str>) -> Option<String> {
    let given = match recordcount.map(str::trim) {
        None => "no recordcount given",
        Some("0") => "recordcount=0",
        Some(_) => return None,
    };
    Some(format!(
        "{given}: as in YCSB, it means {} records (YCSB's Integer.MAX_VALUE), so a load \
         inserts until stopped; set -p recordcount=N (the workload files in workloads/ycsb \
         set 1000)",
        i32::MAX
    ))
}

/// A duration as kvlab's flags take it: a number of seconds, or a number with `ms`, `s`,
/// `m` or `h` (`30`, `30s`, `500ms`, `2m`); the error names what was given.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Duration::from_secs_f64(v * mult)),
        _ => Err(format!("`{s}` is not a duration (e.g. 30, 30s, 500ms, 2m)")),
    }
}
