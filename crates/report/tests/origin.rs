//! One time origin for a result's charts: the monitor's files count from the monitor's
//! start, the timeline from the measured start; the report puts both on the latter.

use std::path::Path;
use std::time::UNIX_EPOCH;

use kvlab_report::{parse_rfc3339, ResultDir};

/// A fixture result copied into `dir`, its measured start set to `measured`, with a
/// `monitor/cpu.csv` at `times` (s from the monitor's start) and, when `monitor_start_ms`
/// is given, the `monitor/summary.json` that names the monitor's start.
fn result_with_monitor(dir: &Path, measured: &str, times: &[f64], monitor_start_ms: Option<u64>) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/suite/moka/kv-small-readheavy/1x1/round-1/result.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    doc["runner"]["measured_start"] = measured.into();
    std::fs::create_dir_all(dir.join("monitor")).unwrap();
    std::fs::write(dir.join("result.json"), doc.to_string()).unwrap();
    let mut csv = String::from("time_s,kvlab_cpu_pct\n");
    for t in times {
        csv.push_str(&format!("{t},50\n"));
    }
    std::fs::write(dir.join("monitor/cpu.csv"), csv).unwrap();
    if let Some(ms) = monitor_start_ms {
        let summary = serde_json::json!({
            "interval_s": 1.0, "rows": times.len(), "duration_s": 2.5,
            "started_unix_ms": ms, "columns": {}
        });
        std::fs::write(dir.join("monitor/summary.json"), summary.to_string()).unwrap();
    }
}

#[test]
fn monitor_times_count_from_the_measured_start() {
    let dir = tempfile::tempdir().unwrap();
    let measured = "2026-11-28T10:00:05.250Z";
    let measured_ms = parse_rfc3339(measured)
        .unwrap()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    // The monitor started 2.75 s before the measured part (a warm-up ran in between).
    let lead_ms = 2_750;
    let started = measured_ms - lead_ms;
    let times = [0.5, 1.5, 2.5, 3.5];
    result_with_monitor(dir.path(), measured, &times, Some(started));
    let r = ResultDir::open(dir.path()).unwrap();
    let offset = r.monitor_offset_s().expect("both starts are known");
    assert!((offset + lead_ms as f64 / 1000.0).abs() < 1e-9, "{offset}");
    let m = r.monitor().unwrap();
    let want: Vec<f64> = times.iter().map(|t| t - lead_ms as f64 / 1000.0).collect();
    for (got, want) in m[0].time_s.iter().zip(&want) {
        assert!(
            (got - want).abs() < 1e-9,
            "{:?} against {want:?}",
            m[0].time_s
        );
    }

    // Without the monitor's start (an older result): the times as written.
    let old = tempfile::tempdir().unwrap();
    result_with_monitor(old.path(), measured, &times, None);
    let r = ResultDir::open(old.path()).unwrap();
    assert_eq!(r.monitor_offset_s(), None);
    assert_eq!(r.monitor().unwrap()[0].time_s, times);
}
