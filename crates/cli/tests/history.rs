//! `kvlab history`: real null-store results added to an SQLite history, read back by
//! `history show` and by Python's `sqlite3` with the documented schema, and a
//! regression among them found by `history changes` (exit 1 with
//! `--fail-on-regression`).

use std::process::Command;

use serde_json::Value;

use crate::common::files::result_json;
use crate::common::{kvlab, text};

#[test]
fn nightly_results_in_a_history_and_the_night_throughput_fell() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results/history.sqlite");
    let db_arg = db.to_str().unwrap();
    // Six nights at 40 000 ops/s, then six at 20 000 (open loop: each night's throughput
    // is its rate, whatever else the machine does): a regression of the same store,
    // workload and clients from night 7.
    let mut files = Vec::new();
    for night in 0..12 {
        let out = dir.path().join(format!("night-{night:02}"));
        let rate = if night < 6 { "40000" } else { "20000" };
        crate::common::run_null(&out, &["--target-rate", rate]);
        let tag = if night < 6 {
            "commit=aaa"
        } else {
            "commit=bbb"
        };
        let o = kvlab(&[
            "history",
            "add",
            "--db",
            db_arg,
            "--tag",
            tag,
            out.to_str().unwrap(),
        ]);
        let (_, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("added 1 result"), "{err}");
        files.push(out);
    }
    // Adding a result again stores nothing.
    let o = kvlab(&["history", "add", "--db", db_arg, files[0].to_str().unwrap()]);
    assert!(text(&o).1.contains("added 0 results"), "{}", text(&o).1);

    // `history show`: the series, oldest first, with its tags; JSON and a chart.
    let html = dir.path().join("history.html");
    let o = kvlab(&[
        "history",
        "show",
        "--db",
        db_arg,
        "--metric",
        "throughput",
        "--store",
        "null",
        "--workload",
        "workloadc",
        "--json",
        "--html",
        html.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    let points = shown["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 12);
    for (p, f) in points.iter().zip(&files) {
        let doc = result_json(f);
        assert_eq!(p["value"], doc["results"]["throughput_ops_per_sec"]);
        assert_eq!(p["time"], doc["started_at"]);
    }
    assert_eq!(points[11]["tags"][0], "commit=bbb");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg class=\"chart\""), "{page}");
    if let Some(seen) = crate::common::browser::see(&html) {
        seen.assert_readable("kvlab history show --html");
    }

    // Python's sqlite3 reads the same figures with the documented schema.
    let script = "import sqlite3, sys\n\
        c = sqlite3.connect(sys.argv[1])\n\
        for (t, v, tag) in c.execute(\"SELECT r.started_at, m.value, t.value FROM results r \
        JOIN metrics m ON m.result_id = r.id JOIN tags t ON t.result_id = r.id \
        WHERE m.name = 'throughput_ops_per_sec' AND r.store = 'null' \
        AND r.workload = 'workloadc' AND t.name = 'commit' ORDER BY r.started_at\"):\n\
        \x20   print(t, repr(v), tag)\n";
    let o = Command::new("python3")
        .args(["-c", script, db_arg])
        .output()
        .expect("running python3");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 12, "{out}");
    for (line, p) in lines.iter().zip(points) {
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(words[0], p["time"].as_str().unwrap());
        assert_eq!(
            words[1].parse::<f64>().unwrap(),
            p["value"].as_f64().unwrap()
        );
    }

    // `history changes`: the fall, where it happened, and a CI gate that fails on it.
    let o = kvlab(&["history", "changes", "--db", db_arg, "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let found: Value = serde_json::from_str(&out).unwrap();
    let changes = found["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{found:#}");
    let c = &changes[0];
    assert_eq!(c["index"], 6, "{c}");
    assert_eq!(c["time"], points[6]["time"]);
    assert_eq!(c["series"]["store"], "null");
    assert_eq!(c["series"]["workload"], "workloadc");
    assert_eq!(c["series"]["metric"], "throughput_ops_per_sec");
    // About half (a short open-loop run falls a little short of its rate).
    let change = c["change"].as_f64().unwrap();
    assert!((-0.6..-0.3).contains(&change), "{c}");
    assert!(c["p_value"].as_f64().unwrap() < 0.05, "{c}");
    assert!(
        c["after_median"].as_f64().unwrap() < c["before_median"].as_f64().unwrap(),
        "{c}"
    );
    let o = kvlab(&[
        "history",
        "changes",
        "--db",
        db_arg,
        "--fail-on-regression",
        "5%",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(err.contains("regression: null — workloadc — 1×1"), "{err}");
    // Every night ran its 2 000 operations: no change point, and the gate lets it be.
    let o = kvlab(&[
        "history",
        "changes",
        "--db",
        db_arg,
        "--metric",
        "operations",
        "--fail-on-regression",
        "5%",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));

    // A database that is not there is named.
    let o = kvlab(&["history", "show", "--db", "/nonexistent/h.sqlite"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("/nonexistent/h.sqlite"),
        "{}",
        text(&o).1
    );
}
