//! `kvlab run --slo`: the highest rate meeting latency targets against a real
//! redis-server, with its latency–throughput curve, and what it refuses.

use serde_json::Value;

use crate::common::servers::redis;
use crate::common::{kvlab, text, workloada_on_redis};

/// A target any rate meets finds a rate; one no rate meets finds none (exit code 1);
/// both write the whole curve, one open-loop result per step.
#[test]
fn the_search_finds_the_highest_rate_meeting_the_targets() {
    let s = redis("");
    let url = s.url();
    let dir = tempfile::tempdir().unwrap();
    let common = workloada_on_redis(&url, 1000);
    let mut common: Vec<&str> = common.iter().map(String::as_str).collect();
    common.extend(["--connections", "4"]);
    let mut load = vec!["load"];
    load.extend(&common);
    assert!(kvlab(&load).status.success());

    let out = dir.path().join("easy");
    let mut args = vec![
        "run",
        "--slo",
        "p99=2s,p99.9=3s",
        "--slo-step",
        "500ms",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(&common);
    let o = kvlab(&args);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let slo: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("slo.json")).unwrap()).unwrap();
    let capacity = slo["capacity_ops_per_sec"].as_f64().unwrap();
    let max = slo["max_rate_ops_per_sec"].as_f64().unwrap();
    assert!(capacity > 0.0 && max > 0.0 && max <= capacity, "{slo}");
    assert!(
        stdout.contains(&format!("[SLO], MaxRate(ops/sec), {max:.0}")),
        "{stdout}"
    );
    let steps = slo["steps"].as_array().unwrap();
    // The capacity probe, the seven points of the curve, and halvings only if a point
    // near the capacity could not keep up.
    assert!((8..=12).contains(&steps.len()), "{slo}");
    assert!(steps[0]["offered_ops_per_sec"].is_null());
    assert_eq!(steps[1]["meets"], true, "{slo}");
    // The answer is the highest rate that met the targets below the lowest that missed:
    // on a busy machine a point above a miss may meet by chance, and does not count.
    let offered = |s: &Value| s["offered_ops_per_sec"].as_f64().unwrap();
    let lowest_miss = steps[1..]
        .iter()
        .filter(|s| s["meets"] == false)
        .map(offered)
        .fold(f64::INFINITY, f64::min);
    let best = steps[1..]
        .iter()
        .filter(|s| s["meets"] == true)
        .map(offered)
        .filter(|&r| r < lowest_miss)
        .fold(0.0, f64::max);
    for (i, step) in steps.iter().enumerate().skip(1) {
        let offered = offered(step);
        // Each step is an open-loop run at its rate, its result beside the others.
        let doc: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("steps/{i:02}/result.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(doc["runner"]["loop"], "open");
        assert_eq!(
            doc["runner"]["target_rate_ops_per_sec"].as_f64(),
            Some(offered)
        );
        assert_eq!(doc["runner"]["duration_s"].as_f64(), Some(0.5));
        assert!(!doc["results"]["intended"].as_array().unwrap().is_empty());
    }
    assert_eq!(max, best, "{slo}");
    let first = steps[1]["offered_ops_per_sec"].as_f64().unwrap();
    assert!((first - capacity / 10.0).abs() < 1e-6 * capacity, "{slo}");
    let curve = std::fs::read_to_string(out.join("curve.csv")).unwrap();
    assert_eq!(curve.lines().count(), steps.len(), "{curve}");
    // The report of the steps draws the curve: latency from the intended start by the
    // throughput achieved.
    let html = dir.path().join("steps.html");
    let o = kvlab(&[
        "report",
        out.join("steps").to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    for title in [
        "P99 latency by throughput, open loop",
        "P99.9 latency by throughput",
    ] {
        assert!(page.contains(title), "{title}");
    }
    assert!(curve.starts_with("offered_ops_per_sec,achieved_ops_per_sec,p50_us,"));

    // No rate meets a microsecond at p99: the curve, then halvings below its first point.
    let out = dir.path().join("hard");
    let mut args = vec![
        "run",
        "--slo",
        "p99=1us",
        "--slo-step",
        "300ms",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(&common);
    let o = kvlab(&args);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("[SLO], MaxRate(ops/sec), none"), "{stdout}");
    assert!(stderr.contains("no rate met p99=1us"), "{stderr}");
    let slo: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("slo.json")).unwrap()).unwrap();
    assert!(slo["max_rate_ops_per_sec"].is_null());
    let steps = slo["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 12, "{slo}");
    let offered = |i: usize| steps[i]["offered_ops_per_sec"].as_f64().unwrap();
    assert!((offered(8) - offered(1) / 2.0).abs() < 1e-6, "{slo}");
    for i in 9..12 {
        assert!((offered(i) - offered(i - 1) / 2.0).abs() < 1e-6, "{slo}");
    }
    assert!(steps.iter().all(|s| s["meets"] == false));

    // What the search sets itself cannot be given.
    for (extra, says) in [
        (
            &["--slo", "p99=1ms", "--target-rate", "1000"][..],
            "leave out --target-rate",
        ),
        (
            &["--slo", "p99=1ms", "--duration", "5s"][..],
            "leave out --target-rate and --duration",
        ),
        (&["--slo", "p101=1ms"][..], "at most 100"),
        (&["--slo", "p99=fast"][..], "expected pPERCENTILE=LATENCY"),
    ] {
        let mut args = vec!["run"];
        args.extend(&common);
        args.extend(extra);
        let o = kvlab(&args);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
    }
}

/// The latency–throughput chart of open-loop steps joins them in the order of the rate
/// offered, so an overloaded step (offered more than the one before it, achieving less)
/// turns the line back instead of being sorted among the others by what it achieved, and
/// a step that achieved under 95 % of its offered rate is marked. The steps are null-store
/// runs at 2000, 6000 and 4000 ops/s; the last one's result then says it was offered
/// 9000 ops/s, as a store past its capacity would have been.
#[test]
fn the_rate_chart_follows_the_offered_rate_and_marks_steps_that_fell_short() {
    let dir = tempfile::tempdir().unwrap();
    let steps = dir.path().join("steps");
    let mut achieved = Vec::new();
    for (i, rate) in ["2000", "6000", "4000"].into_iter().enumerate() {
        let out = steps.join(format!("{i:02}"));
        let o = kvlab(&[
            "run",
            "-P",
            "workloads/ycsb/workloada",
            "-p",
            "recordcount=500",
            "-p",
            "operationcount=1500",
            "--db",
            "null",
            "--target-rate",
            rate,
            "--seed",
            "7",
            "--progress",
            "never",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{:?}", text(&o));
        let file = out.join("result.json");
        let mut doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        achieved.push(doc["results"]["throughput_ops_per_sec"].as_f64().unwrap());
        if i == 2 {
            doc["runner"]["target_rate_ops_per_sec"] = 9000.0.into();
            std::fs::write(&file, doc.to_string()).unwrap();
        }
    }
    assert!(achieved[1] > achieved[2], "{achieved:?}");
    let offered = [2000.0, 6000.0, 9000.0];
    let html = dir.path().join("steps.html");
    let o = kvlab(&[
        "report",
        steps.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    for title in ["P99 latency by throughput", "P99.9 latency by throughput"] {
        let start = page.find(&format!("aria-label=\"{title}")).expect(title);
        let svg = &page[start..start + page[start..].find("</svg>").unwrap()];
        let d = svg
            .split("<path class=\"series\" d=\"")
            .nth(1)
            .and_then(|p| p.split('"').next())
            .expect("the curve");
        let xs: Vec<f64> = d
            .split(['M', 'L'])
            .filter_map(|p| p.split_whitespace().next()?.parse().ok())
            .collect();
        assert_eq!(xs.len(), 3, "{d}");
        // The line's x order is the achieved rates' in the order they were offered.
        for i in 0..3 {
            for j in 0..3 {
                assert_eq!(
                    xs[i] < xs[j],
                    achieved[i] < achieved[j],
                    "{title}: {xs:?} against {achieved:?}"
                );
            }
        }
        // Marked: the steps that achieved under 95 % of what their results say was
        // offered (the last one always; the others when this machine fell behind).
        let short = achieved
            .iter()
            .zip(offered)
            .filter(|(a, o)| **a < 0.95 * o)
            .count();
        assert!(short >= 1);
        let marks = svg.matches("<rect class=\"measured\"").count();
        assert_eq!(marks, short, "{title}: {achieved:?} of {offered:?}: {svg}");
        assert!(svg.contains("below 95 % of the offered rate"), "{svg}");
    }
    if let Some(seen) = crate::common::browser::see(&html) {
        seen.assert_readable("kvlab report (open-loop steps)");
    }
}
