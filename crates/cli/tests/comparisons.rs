//! `kvlab compare` over rounds, end to end: real null-store runs, five rounds a side,
//! compared with medians, bootstrap intervals, the Mann–Whitney test and a verdict; and
//! the host facts every result carries (`host.load_avg_start`, `host.busy`, …).

use std::path::Path;

use serde_json::Value;

use crate::common::files::result_json;
use crate::common::{kvlab, null_run, text};

fn compare_json(a: &Path, b: &Path) -> Value {
    let o = kvlab(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    serde_json::from_slice(&o.stdout).unwrap()
}

fn metric<'a>(cmp: &'a Value, name: &str) -> &'a Value {
    cmp["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == name)
        .unwrap_or_else(|| panic!("no {name} in {cmp:#}"))
}

fn interval(v: &Value) -> (f64, f64) {
    let a = v
        .as_array()
        .unwrap_or_else(|| panic!("not an interval: {v}"));
    assert_eq!(a.len(), 2, "{v}");
    (a[0].as_f64().unwrap(), a[1].as_f64().unwrap())
}

#[test]
fn five_rounds_of_one_configuration_against_themselves_and_against_a_slower_one() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, slow) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("slow"),
    );
    // Rounds of A and B interleaved, so whatever else the machine does falls on both.
    for i in 1..=5 {
        let round = format!("round-{i}");
        crate::common::run_null(&a.join(&round), &[]);
        crate::common::run_null(&b.join(&round), &[]);
        // Open loop at 20 000 ops/s: far below what the null store does closed.
        crate::common::run_null(&slow.join(&round), &["--target-rate", "20000"]);
    }

    // The same rounds compared with themselves: no difference, p = 1.
    let cmp = compare_json(&a, &a);
    let t = metric(&cmp, "Throughput (ops/s)");
    assert_eq!(t["verdict"], "~");
    assert_eq!(t["significant"], false);
    assert_eq!(t["p_value"], 1.0);
    assert_eq!(
        (t["rounds_a"].as_u64(), t["rounds_b"].as_u64()),
        (Some(5), Some(5))
    );

    // Two sets of rounds of one configuration: the fields scripts read are all there.
    let cmp = compare_json(&a, &b);
    assert_eq!(cmp["a"]["rounds"], 5);
    assert_eq!(cmp["b"]["files"].as_array().unwrap().len(), 5);
    let t = metric(&cmp, "Throughput (ops/s)");
    let (lo, hi) = interval(&t["a_ci"]);
    let median = t["a"].as_f64().unwrap();
    assert!(lo <= median && median <= hi, "{t}");
    interval(&t["b_ci"]);
    let (clo, chi) = interval(&t["change_ci"]);
    assert!(clo <= chi, "{t}");
    let p = t["p_value"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&p), "{t}");
    assert_eq!(t["significant"], p < 0.05, "{t}");
    let ratio = t["b_over_a"].as_f64().unwrap();
    assert!(
        (ratio - t["b"].as_f64().unwrap() / median).abs() < 1e-9,
        "{t}"
    );
    // Operations are the same in every round: no difference to find.
    let ops = metric(&cmp, "Operations");
    assert_eq!(
        (ops["a"].as_f64(), ops["b"].as_f64()),
        (Some(2000.0), Some(2000.0))
    );
    assert_eq!(ops["verdict"], "~");
    assert_eq!(ops["p_value"], Value::Null);

    // Against the rate-limited rounds: significant, and B is the slower.
    let cmp = compare_json(&a, &slow);
    let t = metric(&cmp, "Throughput (ops/s)");
    assert_eq!(t["significant"], true, "{t}");
    // Five rounds each, every B below every A: the exact two-sided p is 2/252.
    assert!(
        (t["p_value"].as_f64().unwrap() - 2.0 / 252.0).abs() < 1e-12,
        "{t}"
    );
    let verdict = t["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with('-') && verdict.contains(" % ± "),
        "{verdict}"
    );
    let (clo, chi) = interval(&t["change_ci"]);
    assert!(clo < 0.0 && chi < 0.0, "{t}");

    // The text table says how it was made.
    let o = kvlab(&["compare", a.to_str().unwrap(), slow.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("percentile bootstrap, 10000 resamples, seeded"),
        "{out}"
    );
    assert!(out.contains("Mann–Whitney U"), "{out}");
    assert!(out.contains(verdict), "{out}");
}

#[test]
fn too_few_rounds_for_a_verdict_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for i in 1..=2 {
        crate::common::run_null(&a.join(format!("round-{i}")), &[]);
        crate::common::run_null(&b.join(format!("round-{i}")), &["--target-rate", "20000"]);
    }
    let cmp = compare_json(&a, &b);
    let t = metric(&cmp, "Throughput (ops/s)");
    assert_eq!(t["verdict"], "too few rounds");
    assert_eq!(t["significant"], false);
    let o = kvlab(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert!(
        out.contains("Too few rounds for a verdict: at least 4"),
        "{out}"
    );

    // One result each: the plain table, and why there is nothing more.
    let (one_a, one_b) = (a.join("round-1"), b.join("round-1"));
    let cmp = compare_json(&one_a, &one_b);
    let t = metric(&cmp, "Throughput (ops/s)");
    assert_eq!(
        (t["a_ci"].clone(), t["p_value"].clone()),
        (Value::Null, Value::Null)
    );
    let o = kvlab(&["compare", one_a.to_str().unwrap(), one_b.to_str().unwrap()]);
    assert!(text(&o).0.contains("One round each"), "{}", text(&o).0);

    // A directory with several cells is not one side's rounds.
    let o = kvlab(&["compare", dir.path().to_str().unwrap(), a.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("holds results of 2 cells"), "{err}");
}

#[test]
fn results_record_how_busy_the_machine_was() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    crate::common::run_null(&out, &[]);
    let host = &result_json(&out)["host"];
    for field in ["load_avg_start", "load_avg_end"] {
        assert!(host[field].as_f64().unwrap() >= 0.0, "{host}");
    }
    for field in ["steal_pct", "other_cpu_pct"] {
        let pct = host[field].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&pct), "{field}: {host}");
    }
    // Written where the kernel tells them, null where not: the keys are always there.
    for field in ["cpu_governor", "cpu_mhz"] {
        assert!(host.get(field).is_some(), "{field}: {host}");
    }
    let busy = host["busy"].as_bool().unwrap();
    assert_eq!(
        busy,
        host["other_cpu_pct"].as_f64().unwrap() > kvlab_report::BUSY_OTHER_CPU_PCT
            || host["steal_pct"].as_f64().unwrap() > kvlab_report::BUSY_STEAL_PCT,
        "{host}"
    );
}

#[test]
fn a_run_whose_throughput_still_falls_is_said_not_to_have_settled() {
    let dir = tempfile::tempdir().unwrap();
    let (falling, steady) = (dir.path().join("falling"), dir.path().join("steady"));
    // A sine rate half a period long: its last half falls from the peak, 39 000 ops/s,
    // to the mean, 20 000 — a trend no machine's noise makes. The constant rate beside
    // it is flat.
    let common = ["--duration", "2s", "--interval", "100ms"];
    crate::common::run_null(
        &falling,
        &[&common[..], &["--target-rate", "sine:20000,19000,4s"]].concat(),
    );
    crate::common::run_null(
        &steady,
        &[&common[..], &["--target-rate", "25000"]].concat(),
    );
    let o = kvlab(&["report", dir.path().to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let flags = |rate: &str| {
        out.lines()
            .find(|l| l.starts_with("| null") && l.contains(rate))
            .unwrap_or_else(|| panic!("no {rate} row: {out}"))
            .to_string()
    };
    assert!(
        flags("20k ops/s").contains("⚠ not settled (1 of 1)"),
        "{out}"
    );
    assert!(!flags("25k ops/s").contains("not settled"), "{out}");
    let o = kvlab(&[
        "compare",
        steady.to_str().unwrap(),
        falling.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let a = out.lines().find(|l| l.starts_with("- A: ")).unwrap();
    let b = out.lines().find(|l| l.starts_with("- B: ")).unwrap();
    assert!(!a.contains("not settled"), "{a}");
    assert!(b.contains("⚠ not settled: throughput still falling"), "{b}");
}

/// `kvlab run --rounds`: N rounds each in OUT/round-N and their summary; `auto` stops
/// once the median's interval is narrow enough (a target every run meets: at the third
/// round); what a round would overwrite is refused before any work.
#[test]
fn rounds_repeat_the_run_and_auto_stops_at_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let run = null_run;
    let fixed = dir.path().join("fixed");
    let o = run(&fixed, &["--rounds", "4"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("[ROUNDS], Rounds, 4"), "{stdout}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixed.join("rounds.json")).unwrap()).unwrap();
    assert_eq!(doc["mode"], "fixed");
    let throughputs = doc["throughputs"].as_array().unwrap();
    assert_eq!(throughputs.len(), 4, "{doc}");
    for (i, t) in throughputs.iter().enumerate() {
        // Each round's throughput is its own result's.
        let r = result_json(&fixed.join(format!("round-{}", i + 1)));
        let ops = r["results"]["operations"].as_f64().unwrap();
        assert_eq!(ops, 2000.0);
        let want = r["results"]["throughput_ops_per_sec"].as_f64().unwrap();
        assert!(
            (t.as_f64().unwrap() - want).abs() <= 1e-6 * want,
            "{t} {want}"
        );
    }
    let (lo, hi) = interval(&doc["throughput_ci"]);
    let m = doc["median_throughput"].as_f64().unwrap();
    assert!(lo <= m && m <= hi, "{doc}");
    // The rounds compare as a set of rounds.
    let cmp = compare_json(&fixed, &fixed);
    assert_eq!(cmp["metrics"][0]["rounds_a"], 4, "{cmp}");

    let auto = dir.path().join("auto");
    let o = run(
        &auto,
        &[
            "--rounds",
            "auto",
            "--rounds-target",
            "99%",
            "--max-rounds",
            "12",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stdout.contains("[ROUNDS], Target(±%), 99 reached"),
        "{stdout}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(auto.join("rounds.json")).unwrap()).unwrap();
    assert_eq!(
        (&doc["mode"], &doc["reached"]),
        (&"auto".into(), &true.into())
    );
    // It stopped at the first round (from the third) whose interval was narrow enough.
    let rounds = doc["rounds"].as_u64().unwrap();
    assert!((3..=12).contains(&rounds), "{doc}");
    assert!(doc["half_width_pct"].as_f64().unwrap() <= 99.0, "{doc}");
    assert!(
        stdout.contains(&format!("[ROUNDS], Rounds, {rounds}")),
        "{stdout}"
    );
    assert!(!auto.join(format!("round-{}", rounds + 1)).exists());

    for (extra, says) in [
        (
            &["--rounds", "0"][..],
            "expected `auto` or a number of rounds",
        ),
        (
            &["--rounds", "2", "--slo", "p99=1ms"][..],
            "--slo runs its own steps",
        ),
        (
            &["--rounds", "auto", "--max-rounds", "2"][..],
            "auto needs --max-rounds of at least 3",
        ),
        (
            &["--rounds", "auto", "--rounds-target", "0"][..],
            "a percentage above 0",
        ),
    ] {
        let out = dir.path().join("refused");
        let o = run(&out, extra);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
        assert!(!out.join("round-1").exists(), "{extra:?} ran");
    }
}

/// Five rounds of reads from a spawned redis-server one request at a time against five
/// with 8 in flight per connection: the comparison finds the pipelined rounds faster,
/// significantly.
#[test]
fn pipelining_a_real_server_is_significantly_faster() {
    let dir = tempfile::tempdir().unwrap();
    let run = |pipeline: &str| {
        let out = dir.path().join(format!("p{pipeline}"));
        let o = kvlab(&[
            "run",
            "-P",
            "workloads/ycsb/workloadc",
            "-p",
            "recordcount=1000",
            "-p",
            "operationcount=2000",
            "--db",
            "redis",
            "--spawn",
            "",
            "--pipeline",
            pipeline,
            "--rounds",
            "5",
            "--monitor",
            "off",
            "--progress",
            "never",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o).1);
        out
    };
    let (one, eight) = (run("1"), run("8"));
    let cmp = compare_json(&one, &eight);
    let t = metric(&cmp, "Throughput (ops/s)");
    assert_eq!(
        (&t["rounds_a"], &t["rounds_b"]),
        (&5.into(), &5.into()),
        "{t}"
    );
    assert!(t["b_over_a"].as_f64().unwrap() > 1.0, "{t}");
    assert_eq!(t["significant"], true, "{t}");
    assert!(t["p_value"].as_f64().unwrap() < 0.05, "{t}");
    let (low, _) = interval(&t["change_ci"]);
    assert!(low > 0.0, "the whole interval of the change is a gain: {t}");
}
