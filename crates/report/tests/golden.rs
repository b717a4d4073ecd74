//! Golden tests: the markdown tables and comparisons of the committed fixture results
//! (`tests/fixtures/suite`, written by real `kvlab run`s, see `tests/fixtures/generate.sh`),
//! and the grouping, statistics and errors behind them.
//!
//! Regenerate the golden files after an intended change with
//! `KVLAB_BLESS=1 cargo test -p kvlab-report --test tests golden::`.

use std::path::{Path, PathBuf};

use kvlab_report::{
    Comparison, ComparisonFormat, ReportError, ResultDocument, Spread, Study, StudyOptions,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixture suite's result directories (also the fuzz smoke test's seeds).
pub(crate) fn suite() -> PathBuf {
    fixtures().join("suite")
}

/// Compares `got` with the golden file, or rewrites the file when `KVLAB_BLESS` is set.
fn golden(name: &str, got: &str) {
    let path = fixtures().join(name);
    if std::env::var_os("KVLAB_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with KVLAB_BLESS=1 to create it)",
            path.display()
        )
    });
    if got != want {
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "{} differs from the output at line {}:\n got: {:?}\nwant: {:?}\n\
             (KVLAB_BLESS=1 regenerates it)",
            path.display(),
            first + 1,
            got.lines().nth(first),
            want.lines().nth(first)
        );
    }
}

fn load_suite() -> Study {
    Study::load(&[suite()], StudyOptions::default()).unwrap()
}

#[test]
fn markdown_tables_of_the_fixture_suite() {
    golden("suite.md", &load_suite().to_markdown());
}

#[test]
fn comparison_of_two_fixture_results() {
    let a = suite().join("redis/workloada/1x1/round-1");
    let b = suite().join("redis/workloada/1x4/round-1/result.json");
    let c = Comparison::load(&a, &b).unwrap();
    // Paths in the header depend on where the repository is; the golden files hold them
    // relative to the fixtures directory.
    let relative = |s: String| s.replace(&format!("{}/", fixtures().display()), "");
    golden(
        "compare.md",
        &relative(c.render(ComparisonFormat::Markdown)),
    );
    golden(
        "compare.txt",
        &relative(c.render(ComparisonFormat::Terminal)),
    );
}

#[test]
fn comparison_of_two_fixture_cells_over_their_rounds() {
    // Two rounds a side: medians, intervals and p-values, and "too few rounds" said.
    let a = suite().join("redis/workloada/1x1");
    let b = suite().join("redis/workloada/1x4");
    let c = Comparison::load(&a, &b).unwrap();
    let relative = |s: String| s.replace(&format!("{}/", fixtures().display()), "");
    golden(
        "compare-rounds.md",
        &relative(c.render(ComparisonFormat::Markdown)),
    );
    let t = &c.metrics[0];
    assert_eq!(t.metric, "Throughput (ops/s)");
    assert_eq!((t.rounds_a, t.rounds_b), (2, 2));
    assert_eq!(t.verdict(), "too few rounds");
    assert!(!t.significant);
    // Two rounds each, every B above every A: the exact two-sided p is 2/6.
    assert!((t.p_value.unwrap() - 1.0 / 3.0).abs() < 1e-12, "{t:?}");
    // The medians are the rounds' own medians.
    let throughput = |cell: &str, round: u32| {
        ResultDocument::load(
            &suite()
                .join(format!("redis/workloada/{cell}/round-{round}"))
                .join("result.json"),
        )
        .unwrap()
        .results
        .throughput_ops_per_sec
    };
    let median_a = (throughput("1x1", 1) + throughput("1x1", 2)) / 2.0;
    assert!((t.a.unwrap() - median_a).abs() < 1e-9 * median_a);
    let ci = t.a_ci.unwrap();
    assert!(ci.low >= throughput("1x1", 1).min(throughput("1x1", 2)));
    assert!(ci.high <= throughput("1x1", 1).max(throughput("1x1", 2)));
}

/// The study's grouping and statistics, recomputed here from the documents themselves.
#[test]
fn cells_rounds_and_spreads_match_the_documents() {
    let study = load_suite();
    assert_eq!(
        study.stores(),
        ["foyer", "moka", "null", "redis", "rocksdb"]
    );
    assert_eq!(study.cells.len(), 10);
    let mut keys = Vec::new();
    for cell in &study.cells {
        assert_eq!(cell.rounds.len(), 2, "{:?}", cell.key);
        assert_eq!(
            cell.rounds.iter().map(|r| r.number).collect::<Vec<_>>(),
            [1, 2]
        );
        for r in &cell.rounds {
            let doc = ResultDocument::load(&r.result.file).unwrap();
            assert_eq!(doc.store.name, cell.key.store);
            let dir = format!("{}x{}", cell.key.threads, cell.key.connections);
            assert!(
                r.path.starts_with(
                    Path::new(&cell.key.store)
                        .join(&cell.key.workload)
                        .join(&dir)
                ),
                "{} is not under {}/{}/{dir}",
                r.path.display(),
                cell.key.store,
                cell.key.workload
            );
            assert!(r.timeline.as_ref().is_some_and(|t| !t.rows.is_empty()));
            let log = r
                .latency
                .as_ref()
                .expect("every fixture has a latency.hlog");
            // The interval log holds every operation the summary counts (read-modify-write
            // has none here, so the overall histogram's count is the operation count).
            assert_eq!(
                log.overall.len(),
                doc.results.operations,
                "{}",
                r.path.display()
            );
        }
        let tputs: Vec<f64> = cell
            .rounds
            .iter()
            .map(|r| r.doc().results.throughput_ops_per_sec)
            .collect();
        let (a, b) = (tputs[0], tputs[1]);
        let mean = (a + b) / 2.0;
        // Two values: sample standard deviation |a − b| / √2.
        let cv = 100.0 * (a - b).abs() / 2f64.sqrt() / mean;
        let s: Spread = cell.throughput().unwrap();
        assert!((s.mean - mean).abs() < 1e-6 * mean);
        assert_eq!((s.min, s.max), (a.min(b), a.max(b)));
        assert!(
            (s.cv_pct.unwrap() - cv).abs() < 1e-6,
            "{} vs {cv}",
            s.cv_pct.unwrap()
        );
        let flagged = cell.flags(10.0).iter().any(|f| f.contains("throughput CV"));
        assert_eq!(flagged, cv > 10.0, "{:?}", cell.key);
        assert!(!cell
            .flags(cv + 0.01)
            .iter()
            .any(|f| f.contains("throughput CV")));
        keys.push(cell.key.clone());
    }
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(
        keys, sorted,
        "cells are ordered by store, workload, concurrency"
    );
}

#[test]
fn cache_hit_ratios_are_reads_found_over_reads_answered() {
    let study = load_suite();
    let cache = study.cache_table().expect("the suite has cache workloads");
    assert_eq!(cache.rows.len(), 4);
    let col = |name: &str| cache.columns.iter().position(|(h, _)| h == name).unwrap();
    for row in &cache.rows {
        let cell = study
            .cells
            .iter()
            .find(|c| c.key.store == row[0].0 && c.key.workload == row[1].0)
            .unwrap();
        let ratios: Vec<f64> = cell
            .rounds
            .iter()
            .map(|r| {
                let read = r
                    .doc()
                    .results
                    .ops
                    .iter()
                    .find(|o| o.name == "READ")
                    .unwrap();
                let ok = read.returns.get("OK").copied().unwrap_or(0) as f64;
                let nf = read.returns.get("NOT_FOUND").copied().unwrap_or(0) as f64;
                100.0 * ok / (ok + nf)
            })
            .collect();
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        let shown = row[col("Hit ratio (%)")].1.unwrap();
        assert!((shown - mean).abs() < 1e-9, "{shown} vs {mean}");
        assert!(
            mean > 0.0 && mean < 100.0,
            "a 512 KiB cache misses some gets: {mean}"
        );
        // foyer reports its tiers; their hit ratios add up to at most the whole.
        let dram = row[col("DRAM hits (%)")].1;
        let disk = row[col("Disk hits (%)")].1;
        assert_eq!(dram.is_some(), cell.key.store == "foyer");
        if let (Some(dram), Some(disk)) = (dram, disk) {
            assert!(dram + disk <= 100.0 && dram > 0.0);
        }
    }
}

/// Copies the fixture result `rel` (a directory) to `to`.
fn copy_result(rel: &str, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(suite().join(rel)).unwrap() {
        let entry = entry.unwrap();
        if entry.path().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn same_named_workloads_with_other_properties_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    copy_result("null/workloada/1x1/round-1", &dir.path().join("a"));
    copy_result("null/workloada/1x1/round-2", &dir.path().join("b"));
    let path = dir.path().join("b/result.json");
    let mut doc = ResultDocument::load(&path).unwrap();
    doc.workload.insert("recordcount".into(), "5000".into());
    std::fs::write(&path, doc.to_json_pretty()).unwrap();
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let names: Vec<&str> = study
        .cells
        .iter()
        .map(|c| c.key.workload.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "workloada (recordcount=2000)",
            "workloada (recordcount=5000)"
        ]
    );
    // Without a round-<n> directory, rounds are numbered by path within their cell.
    assert!(study
        .cells
        .iter()
        .all(|c| c.rounds.len() == 1 && c.rounds[0].number == 1));
}

#[test]
fn errors_name_the_directory_or_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let err = Study::load(&[dir.path().join("empty")], StudyOptions::default()).unwrap_err();
    assert!(matches!(err, ReportError::NoResults(_)), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "no result.json found in {} or below it",
            dir.path().join("empty").display()
        )
    );

    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("result.json"), "{\"kvlab_version\": \"0.1.0\"}").unwrap();
    let err = Study::load(std::slice::from_ref(&bad), StudyOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ReportError::Json { .. }), "{text}");
    assert!(
        text.contains(&bad.join("result.json").display().to_string()),
        "{text}"
    );
    assert!(text.contains("missing field `command`"), "{text}");

    let torn = dir.path().join("torn");
    copy_result("null/workloada/1x1/round-1", &torn);
    let csv = torn.join("timeline.csv");
    let mut text = std::fs::read_to_string(&csv).unwrap();
    text = text.replacen("\n0.", "\nsoon,", 1);
    std::fs::write(&csv, text).unwrap();
    let err = Study::load(std::slice::from_ref(&torn), StudyOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}:2: ", csv.display())),
        "{err}"
    );

    // Results of several cells are not one side's rounds.
    let err = Comparison::load(&suite().join("null"), &torn).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} holds results of 2 cells (null workloada 1×1; null workloada 2×1); name one \
             result directory, or a directory of one cell's rounds",
            suite().join("null").display()
        )
    );
}

#[test]
fn a_cache_workload_at_several_data_sizes_gets_a_hit_ratio_curve() {
    let dir = tempfile::tempdir().unwrap();
    for (name, size) in [("small", "268435456"), ("large", "1073741824")] {
        for store in ["moka", "foyer"] {
            let to = dir.path().join(name).join(store);
            copy_result(&format!("{store}/kv-small-readheavy/1x1/round-1"), &to);
            let path = to.join("result.json");
            let mut doc = ResultDocument::load(&path).unwrap();
            doc.workload.insert("cache.data_size".into(), size.into());
            std::fs::write(&path, doc.to_json_pretty()).unwrap();
        }
    }
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let workloads: Vec<&str> = study
        .cells
        .iter()
        .map(|c| c.key.workload.as_str())
        .collect();
    assert_eq!(
        workloads,
        [
            "kv-small-readheavy (cache.data_size=1.0GiB)",
            "kv-small-readheavy (cache.data_size=256.0MiB)",
            "kv-small-readheavy (cache.data_size=1.0GiB)",
            "kv-small-readheavy (cache.data_size=256.0MiB)",
        ]
    );
    let html = study.to_html("sizes");
    let start = html
        .find("<title>Hit ratio by data size — kv-small-readheavy · 1×1</title>")
        .expect("a hit ratio curve");
    let curve = &html[start..start + html[start..].find("</svg>").unwrap()];
    assert_eq!(
        curve.matches("class=\"point\"").count(),
        4,
        "2 sizes × 2 stores"
    );
    assert!(
        curve.contains(">256.0 MiB<") && curve.contains(">1.0 GiB<"),
        "{curve}"
    );
    // In the bar charts, groups go by size, not by the text of the name.
    let bars = &html[html.find("<title>Hit ratio by workload</title>").unwrap()..];
    assert!(bars.find("=256.0MiB)").unwrap() < bars.find("=1.0GiB)").unwrap());
}

#[test]
fn labelled_stores_of_one_kind_are_separate_cells() {
    let dir = tempfile::tempdir().unwrap();
    copy_result("redis/workloada/1x1/round-1", &dir.path().join("a"));
    copy_result("redis/workloada/1x1/round-2", &dir.path().join("b"));
    let path = dir.path().join("b/result.json");
    let mut doc = ResultDocument::load(&path).unwrap();
    assert_eq!(doc.store.label, None, "written without --label");
    doc.store.label = Some("redis-64mb".into());
    std::fs::write(&path, doc.to_json_pretty()).unwrap();
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let stores: Vec<&str> = study.cells.iter().map(|c| c.key.store.as_str()).collect();
    assert_eq!(stores, ["redis", "redis-64mb"]);
    assert!(study.cells.iter().all(|c| c.rounds.len() == 1));
}

#[test]
fn memtier_runs_at_several_connection_counts_are_one_workload() {
    let dir = tempfile::tempdir().unwrap();
    for (name, clients) in [("a", "4"), ("b", "32")] {
        copy_result("redis/workloada/1x1/round-1", &dir.path().join(name));
        let path = dir.path().join(name).join("result.json");
        let mut doc = ResultDocument::load(&path).unwrap();
        doc.workload.insert("clients-total".into(), clients.into());
        doc.runner.connections_per_thread = clients.parse::<u64>().unwrap();
        std::fs::write(&path, doc.to_json_pretty()).unwrap();
    }
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let workloads: Vec<&str> = study
        .cells
        .iter()
        .map(|c| c.key.workload.as_str())
        .collect();
    assert_eq!(
        workloads,
        ["workloada", "workloada"],
        "one workload, two concurrencies"
    );
}

#[test]
fn monitor_rates_and_microseconds_get_their_units() {
    let dir = tempfile::tempdir().unwrap();
    let cell = dir.path().join("a");
    copy_result("redis/workloada/1x1/round-1", &cell);
    std::fs::create_dir_all(cell.join("monitor")).unwrap();
    std::fs::write(
        cell.join("monitor/disk.csv"),
        "time_s,disk_read_bytes_per_s,busy_s,stall_micros\n1.0,4096,0.5,10\n2.0,8192,0.25,30\n",
    )
    .unwrap();
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let html = study.to_html("monitor units");
    assert!(
        html.contains(">disk_read_bytes_per_s (bytes/s)<"),
        "a rate of bytes is labelled bytes/s"
    );
    assert!(!html.contains("disk_read_bytes_per_s (s)"));
    assert!(html.contains(">busy_s (s)<"), "a duration stays in seconds");
    assert!(
        html.contains(">stall_micros (µs)<"),
        "RocksDB's stall_micros is a duration in microseconds"
    );
}

#[test]
fn timelines_leave_out_a_short_last_interval() {
    let row = |time_s: f64, interval_s: f64| kvlab_measure::TimelineRow {
        time_s,
        interval_s,
        operations: 10,
        throughput_ops_per_sec: 10.0 / interval_s,
        p50_us: 1.0,
        p99_us: 2.0,
        p999_us: 3.0,
        max_us: 4.0,
        errors: 0,
        per_op: Vec::new(),
        intended_ops: None,
    };
    let t = |rows: Vec<kvlab_measure::TimelineRow>| kvlab_report::Timeline { rows };
    let stopping = t(vec![row(1.0, 1.0), row(2.0, 1.0), row(2.012, 0.012)]);
    assert_eq!(stopping.full_rows().len(), 2, "the 12 ms tail is left out");
    let whole = t(vec![row(1.0, 1.0), row(2.0, 1.0), row(2.6, 0.6)]);
    assert_eq!(
        whole.full_rows().len(),
        3,
        "more than half an interval stays"
    );
    let short_run = t(vec![row(0.3, 0.3)]);
    assert_eq!(
        short_run.full_rows().len(),
        1,
        "a run's only interval stays"
    );
}

/// Rewrites the fixture result copied to `dir/name` with `edit`.
#[test]
fn a_duration_run_is_named_by_its_duration_not_the_files_operationcount() {
    let dir = tempfile::tempdir().unwrap();
    copy_result("null/workloada/1x1/round-1", &dir.path().join("a"));
    copy_result("null/workloada/1x1/round-2", &dir.path().join("b"));
    copy_result("null/workloada/2x1/round-1", &dir.path().join("c"));
    edit_result(dir.path(), "a", |d| {
        d.workload.insert("operationcount".into(), "5000".into());
        d.runner.duration_s = None;
        d.runner.operations = Some(5000);
    });
    // `--duration 10s`: the property file's operationcount=1000 is not what ran.
    for name in ["b", "c"] {
        edit_result(dir.path(), name, |d| {
            d.workload.insert("operationcount".into(), "1000".into());
            d.runner.duration_s = Some(10.0);
            d.runner.operations = None;
        });
    }
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let names: Vec<&str> = study
        .cells
        .iter()
        .map(|c| c.key.workload.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "workloada (duration=10s)",
            "workloada (duration=10s)",
            "workloada (operationcount=5000)"
        ]
    );
}

fn edit_result(dir: &Path, name: &str, edit: impl FnOnce(&mut ResultDocument)) {
    let path = dir.join(name).join("result.json");
    let mut doc = ResultDocument::load(&path).unwrap();
    edit(&mut doc);
    std::fs::write(&path, doc.to_json_pretty()).unwrap();
}

/// Makes a fixture document look like a `kvlab memtier` run with these flags.
fn as_memtier(doc: &mut ResultDocument, flags: &[(&str, &str)]) {
    doc.command = ["kvlab", "memtier", "-s", "127.0.0.1", "-p", "6379"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    doc.runner.property_files.clear();
    doc.workload = flags
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
}

/// A suite's memtier results: cells named by the suite's workload names, the prefill
/// marked as a load; loose memtier runs without a name still told apart by their flags.
#[test]
fn workload_labels_name_suite_cells_and_a_prefill_is_a_load() {
    let dir = tempfile::tempdir().unwrap();
    let suite_dir = dir.path().join("suite");
    let cells = [
        ("set", "1:0", "redis/workloada/1x1/round-1"),
        ("set", "1:0", "redis/workloada/1x4/round-1"),
        ("set-get-1-10", "1:10", "redis/workloada/1x1/round-2"),
    ];
    for (i, (label, ratio, from)) in cells.iter().enumerate() {
        let name = format!("cell-{i}");
        copy_result(from, &suite_dir.join(&name));
        edit_result(&suite_dir, &name, |d| {
            as_memtier(d, &[("ratio", ratio), ("key-maximum", "1000")]);
            d.workload_label = Some(label.to_string());
        });
    }
    // The prefill: its own flags, phase `load` (as the suite records it), no label since
    // the data set is shared.
    copy_result("redis/workloada/1x4/round-2", &suite_dir.join("_load"));
    edit_result(&suite_dir, "_load", |d| {
        as_memtier(
            d,
            &[
                ("ratio", "1:0"),
                ("key-pattern", "P:P"),
                ("requests", "allkeys"),
            ],
        );
        d.phase = kvlab_report::Phase::Load;
    });
    // Two loose memtier runs, without labels.
    for (name, ratio) in [("loose-a", "0:1"), ("loose-b", "1:1")] {
        copy_result("redis/workloada/1x1/round-1", &dir.path().join(name));
        edit_result(dir.path(), name, |d| {
            as_memtier(d, &[("ratio", ratio), ("key-maximum", "1000")])
        });
    }
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let names: Vec<(&str, String)> = study
        .cells
        .iter()
        .map(|c| (c.key.workload.as_str(), c.key.concurrency_label()))
        .collect();
    assert_eq!(
        names,
        [
            ("memtier (ratio=0:1)", "1×1".to_string()),
            ("memtier (ratio=1:1)", "1×1".to_string()),
            ("memtier [load]", "1×4".to_string()),
            ("set", "1×1".to_string()),
            ("set", "1×4".to_string()),
            ("set-get-1-10", "1×1".to_string()),
        ]
    );
    golden("labels.md", &study.summary_table().to_markdown());
    // The load has its own section, marked as such, and no line in the sweep of `set`.
    let html = study.to_html("labels");
    assert!(
        html.contains("<h2>Workload memtier [load]</h2>"),
        "a load section"
    );
    let sweep = html
        .find("<title>Throughput by clients — set</title>")
        .expect("set ran at two concurrencies");
    let svg = &html[sweep..sweep + html[sweep..].find("</svg>").unwrap()];
    assert_eq!(
        svg.matches("class=\"point\"").count(),
        2,
        "1×1 and 1×4 only"
    );
}

/// Cache workloads a suite names by data size still draw one hit-ratio curve: the curve
/// follows what the workload is, not its label.
#[test]
fn labelled_cache_workloads_of_one_family_share_a_hit_ratio_curve() {
    let dir = tempfile::tempdir().unwrap();
    for (name, size) in [("cache-256m", "268435456"), ("cache-1g", "1073741824")] {
        for store in ["moka", "foyer"] {
            let rel = format!("{name}/{store}");
            copy_result(
                &format!("{store}/kv-small-readheavy/1x1/round-1"),
                &dir.path().join(&rel),
            );
            edit_result(dir.path(), &rel, |d| {
                d.workload.insert("cache.data_size".into(), size.into());
                d.workload_label = Some(name.into());
            });
        }
    }
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let mut workloads: Vec<&str> = study
        .cells
        .iter()
        .map(|c| c.key.workload.as_str())
        .collect();
    workloads.dedup();
    assert_eq!(
        workloads,
        ["cache-1g", "cache-256m", "cache-1g", "cache-256m"]
    );
    let html = study.to_html("sizes");
    let start = html
        .find("<title>Hit ratio by data size — kv-small-readheavy · 1×1</title>")
        .expect("a hit ratio curve");
    let curve = &html[start..start + html[start..].find("</svg>").unwrap()];
    assert_eq!(curve.matches("class=\"point\"").count(), 4);
}

/// A monitor column that is 0 in every sample of a workload × concurrency is listed in a
/// note instead of drawn as a flat chart; a column with any other value is charted.
#[test]
fn monitor_columns_that_are_always_zero_are_named_not_charted() {
    let dir = tempfile::tempdir().unwrap();
    for (name, from) in [
        ("a", "redis/workloada/1x1/round-1"),
        ("b", "rocksdb/workloada/1x1/round-1"),
    ] {
        let cell = dir.path().join(name);
        copy_result(from, &cell);
        std::fs::create_dir_all(cell.join("monitor")).unwrap();
        // `evictions` is 0 (or empty) everywhere; `keys` is 0 for one store only.
        let keys = if name == "a" { "0" } else { "7" };
        std::fs::write(
            cell.join("monitor/store.csv"),
            format!("time_s,evictions,keys,misses\n1.0,0,0,0\n2.0,,{keys},0\n"),
        )
        .unwrap();
    }
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let html = study.to_html("zeros");
    assert!(
        html.contains("Always 0, not charted: store: evictions, store: misses.</p>"),
        "{}",
        &html[html.find("<details").unwrap()..]
    );
    assert!(!html.contains("<title>store: evictions"));
    assert!(!html.contains("<title>store: misses"));
    assert!(
        html.contains("<title>store: keys — workloada · 1×1</title>"),
        "keys is 7 for one store: charted"
    );
}

/// Runs without property files are named by their thread plan or key file, imports by
/// their file (none for a pipe), so an import and the runs over its sampled keys do not
/// all read `workload`.
#[test]
fn plan_and_key_file_runs_are_named_by_their_files() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in [
        (
            "plan",
            &["--keys", "/data/keys.txt", "--plan=examples/plan.txt"][..],
        ),
        ("keys", &["--keys", "/data/li-keys.txt"][..]),
        ("import", &["/data/lineitem.tbl", "--delimiter", "|"][..]),
        ("pipe", &["/dev/fd/63", "--delimiter", "|"][..]),
    ] {
        copy_result("null/workloada/1x1/round-1", &dir.path().join(name));
        edit_result(dir.path(), name, |doc| {
            doc.runner.property_files.clear();
            let import = matches!(name, "import" | "pipe");
            if import {
                doc.phase = kvlab_report::Phase::Import;
                doc.workload = [("import.file".to_string(), args[0].to_string())].into();
            }
            doc.command = ["kvlab", if import { "import" } else { "run" }]
                .iter()
                .chain(args)
                .map(|s| s.to_string())
                .collect();
        });
    }
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let mut names: Vec<&str> = study
        .cells
        .iter()
        .map(|c| c.key.workload.as_str())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "keys:li-keys",
            "lineitem [import]",
            "plan:plan",
            "workload [import]"
        ]
    );
}

/// A YCSB result whose reads missed (kvlab marks it `runner.reads_missed`: a server that
/// evicted most records) is flagged in the summary with its share of misses, which is
/// NOT_FOUND over the READ returns; `compare` says so beside the result's name, and
/// names a run's failure. A cache workload's misses are shown, never flagged.
#[test]
fn reads_that_missed_are_flagged_in_the_summary_and_in_compare() {
    let dir = tempfile::tempdir().unwrap();
    copy_result("redis/workloada/1x1/round-1", &dir.path().join("ok"));
    copy_result("redis/workloada/1x4/round-1", &dir.path().join("evicted"));
    copy_result(
        "moka/kv-small-readheavy/1x1/round-1",
        &dir.path().join("cache"),
    );
    let mut miss_pct = 0.0;
    edit_result(dir.path(), "evicted", |doc| {
        let read = doc
            .results
            .ops
            .iter_mut()
            .find(|o| o.name == "READ")
            .unwrap();
        let ok = read.returns["OK"];
        // 60 % of the reads found nothing.
        let missed = ok * 3 / 5;
        read.returns.insert("OK".into(), ok - missed);
        read.returns.insert("NOT_FOUND".into(), missed);
        miss_pct = 100.0 * missed as f64 / ok as f64;
        doc.runner.reads_missed = true;
        doc.runner.failure = Some("run failed: 3 of 9 operations failed (full: 3)".into());
    });
    let study = Study::load(&[dir.path().to_path_buf()], StudyOptions::default()).unwrap();
    let md = study.summary_table().to_markdown();
    let header = md.lines().nth(2).unwrap();
    assert!(header.contains("Read misses (%)"), "{header}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| redis")).collect();
    assert_eq!(rows.len(), 2, "{md}");
    let flagged = format!("⚠ reads missed {miss_pct:.1}%");
    assert!(
        rows[0].contains(" 0.0 |") && !rows[0].contains("reads missed"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains(&format!(" {miss_pct:.1} |")),
        "{}",
        rows[1]
    );
    assert!(rows[1].contains(&flagged), "{}", rows[1]);
    let cache = md.lines().find(|l| l.starts_with("| moka")).unwrap();
    assert!(!cache.contains("reads missed"), "{cache}");

    let compare =
        kvlab_report::Comparison::load(&dir.path().join("ok"), &dir.path().join("evicted"))
            .unwrap()
            .render(kvlab_report::ComparisonFormat::Markdown);
    let b = compare.lines().find(|l| l.starts_with("- B: ")).unwrap();
    assert!(b.contains(&flagged), "{b}");
    assert!(
        b.contains("⚠ run failed: 3 of 9 operations failed (full: 3)"),
        "{b}"
    );
    let a = compare.lines().find(|l| l.starts_with("- A: ")).unwrap();
    assert!(!a.contains('⚠'), "{a}");
}
