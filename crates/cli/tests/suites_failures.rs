//! Suites and results that do not fail silently or leak secrets: a password-protected
//! redis-server (never on a child's command line), a suite server killed mid-suite and
//! started again, a suite stopped after failures in a row, `--overwrite` clearing an
//! earlier run's files, the seed as a string, a bad result.json skipped, YCSB's
//! single-dash flags, shell completions and `compare --json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::files::{files_under, read_json, result_json, write_file};
use common::process::{free_port, wait_until};
use common::servers::redis;
use common::{kvlab, kvlab_command, repo_root, text, workloads};

/// The pids of `parent`'s children, from /proc/PID/stat (field 4 is the parent).
fn children(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces, so split after the `)`.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        if rest.split_whitespace().nth(1) == Some(&parent.to_string()) {
            out.push(pid);
        }
    }
    out
}

/// A NUL-separated /proc file as words (empty once the process is gone).
fn proc_words(pid: u32, file: &str) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/{file}"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A suite run in the background, its stderr in a file.
struct Background {
    child: std::process::Child,
    stderr: PathBuf,
}

impl Background {
    fn start(file: &str, out: &Path) -> Background {
        let stderr = out.with_extension("stderr.txt");
        let child = kvlab_command(&["suite", file, "--out", &out.display().to_string()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Background { child, stderr }
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn finish(mut self) -> (Option<i32>, String) {
        let status = self.child.wait().unwrap();
        (
            status.code(),
            std::fs::read_to_string(&self.stderr).unwrap_or_default(),
        )
    }
}

#[test]
fn a_password_protected_redis_runs_memtier_and_ycsb_cells_and_no_child_shows_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let server = redis("requirepass=s3cr:et@x");
    let w = workloads();
    let file = write_file(
        dir.path(),
        "pw.toml",
        &format!(
            r#"name = "pw"
monitor_interval = "200ms"

[[store]]
name = "url"
db = "redis"
url = "redis://:s3cr%3Aet%40x@127.0.0.1:{port}"

[[store]]
name = "spawned"
db = "redis"
spawn = "requirepass=0ther-pw,maxmemory=64mb"

[[workload]]
name = "sets"
memtier = "--ratio=1:1 --key-maximum=1000 --data-size=32"
duration = "2s"

[[workload]]
name = "reads"
properties = ["{w}/ycsb/workloadc"]
set = {{ recordcount = 200, operationcount = 400 }}

[matrix]
threads = [1]
"#,
            port = server.port()
        ),
    );
    let secrets = ["s3cr", "0ther-pw"];

    // Dry run: every command line names the server, and none holds a password.
    let o = kvlab(&["suite", &file, "--dry-run"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stdout.contains(&format!("--url redis://127.0.0.1:{}", server.port())),
        "{stdout}"
    );
    assert!(stdout.contains("--url redis://127.0.0.1:PORT"), "{stdout}");
    assert!(
        stdout.contains(&format!("-s 127.0.0.1 -p {}", server.port())),
        "{stdout}"
    );
    for s in secrets {
        assert!(!stdout.contains(s), "{stdout}");
    }

    let out = dir.path().join("out");
    let mut suite = Background::start(&file, &out);
    let suite_pid = suite.child.id();
    let mut seen: BTreeMap<u32, (Vec<String>, Vec<String>)> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while suite.running() {
        assert!(Instant::now() < deadline, "the suite did not finish");
        for pid in children(suite_pid) {
            let cmdline = proc_words(pid, "cmdline");
            let environ = proc_words(pid, "environ");
            if cmdline.is_empty() {
                continue;
            }
            // /proc/PID/cmdline is what `ps` shows any local user.
            for s in secrets {
                assert!(
                    !cmdline.iter().any(|w| w.contains(s)),
                    "pid {pid}: {cmdline:?}"
                );
            }
            // Both files from one program: a child that exec'd or exited between the two
            // reads (its environment then reads empty) is looked at again next time.
            if environ.is_empty() || proc_words(pid, "cmdline") != cmdline {
                continue;
            }
            // The latest look: a child forked but not yet exec'd still shows the suite's
            // own command line.
            seen.insert(pid, (cmdline, environ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, stderr) = suite.finish();
    assert_eq!(code, Some(0), "{stderr}");
    // The memtier cells ran two seconds each: those the sampling saw (on a loaded
    // machine the polling thread may sleep through one) had the password in their
    // environment only. That every cell reached its protected server is checked below.
    let memtier: Vec<_> = seen
        .values()
        .filter(|(c, _)| c.get(1).is_some_and(|w| w == "memtier"))
        .collect();
    assert!(!memtier.is_empty(), "{seen:#?}");
    for (cmdline, environ) in &memtier {
        let label = cmdline.iter().position(|w| w == "--label").unwrap();
        let expected = if cmdline[label + 1] == "url" {
            "KVLAB_AUTH=:s3cr:et@x"
        } else {
            "KVLAB_AUTH=:0ther-pw"
        };
        assert!(environ.iter().any(|e| e == expected), "{cmdline:?}");
    }
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["counts"]["ok"], 4, "{stderr}");
    // YCSB reads found every loaded record: the load reached the protected server too.
    for store in ["url", "spawned"] {
        let doc = read_json(&out.join(format!("{store}/reads/t1-c1/round-1/result.json")));
        let read = doc["results"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == "READ")
            .unwrap()
            .clone();
        assert_eq!(read["returns"]["OK"], 400, "{store}: {read:#}");
    }
    for t in files_under(&out).iter().chain([&stderr]) {
        for s in secrets {
            assert!(!t.contains(s), "a password in the results: {t}");
        }
    }
}

#[test]
fn a_suite_server_killed_mid_suite_is_started_again_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(
        dir.path(),
        "kill.toml",
        r#"name = "kill"
rounds = 2
monitor = false

[[store]]
name = "r"
db = "redis"
spawn = ""

[[workload]]
name = "gets"
memtier = "--ratio=0:1 --key-maximum=300 --data-size=32"
prefill = "--ratio=1:0 --key-pattern=P:P --key-maximum=300 --data-size=32 --requests=allkeys -t 1 -c 1"
duration = "2s"

[matrix]
threads = [1]
connections = [1, 2]
"#,
    );
    let out = dir.path().join("out");
    let mut suite = Background::start(&file, &out);
    let suite_pid = suite.child.id();
    // Once the first cell runs, kill the server the suite started, as a crash would.
    let first = out.join("r/gets/t1-c1/round-1/stderr.txt");
    wait_until(
        Duration::from_secs(60),
        Duration::from_millis(20),
        "the first cell never started",
        || {
            first.exists() || {
                assert!(suite.running(), "the suite ended before its first cell");
                false
            }
        },
    );
    std::thread::sleep(Duration::from_millis(500));
    let servers: Vec<u32> = children(suite_pid)
        .into_iter()
        .filter(|&p| {
            proc_words(p, "cmdline")
                .first()
                .is_some_and(|w| w.contains("redis-server"))
        })
        .collect();
    assert_eq!(servers.len(), 1, "one redis-server child");
    // SAFETY: kill has no memory-safety preconditions; the pid is the suite's live child.
    unsafe {
        libc::kill(servers[0] as libc::pid_t, libc::SIGKILL);
    }
    let (code, stderr) = suite.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("1 server restart"), "{stderr}");
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["server_restarts"], 1);
    assert_eq!(state["counts"]["ok"], 4, "{:#}", state["counts"]);
    // Prefilled once at the start and once more into the new server.
    assert_eq!(state["load_count"], 2);
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["server_restarts"], 1);
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("started again 1 time"), "{md}");
    // Every cell after the restart read the prefilled keys from the new server.
    for c in [1, 2] {
        let doc = read_json(&out.join(format!("r/gets/t1-c{c}/round-2/result.json")));
        let read = doc["results"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == "READ")
            .unwrap()
            .clone();
        assert_eq!(read["returns"]["OK"], read["operations"], "{read:#}");
    }
}

#[test]
fn a_suite_stops_after_failures_in_a_row_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let file = write_file(
        dir.path(),
        "down.toml",
        &format!(
            r#"name = "down"
monitor = false
[[store]]
name = "nowhere"
db = "redis"
url = "redis://127.0.0.1:{port}"
[[workload]]
name = "sets"
memtier = "--ratio=1:0 --requests=10"
[matrix]
threads = [1]
connections = [1, 2, 3, 4, 5]
"#
        ),
    );
    let out = dir.path().join("out");
    let o = kvlab(&["suite", &file, "--out", &out.display().to_string()]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("3 cells or loads in a row failed"),
        "{stderr}"
    );
    assert!(stderr.contains("stopped before the end"), "{stderr}");
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["state"], "stopped");
    assert_eq!(state["counts"]["failed"], 3);
    assert_eq!(state["counts"]["pending"], 2);
    assert!(state["stopped_because"]
        .as_str()
        .unwrap()
        .contains("nowhere/sets/t1-c3/round-1"));

    // With the stop turned off, every cell is tried.
    let text = std::fs::read_to_string(&file).unwrap();
    write_file(
        dir.path(),
        "down.toml",
        &text.replace(
            "monitor = false",
            "monitor = false\nmax_failures_in_a_row = 0",
        ),
    );
    let o = kvlab(&["suite", &file, "--out", &out.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["state"], "finished with failures");
    assert_eq!(state["counts"]["failed"], 5);
    assert!(state["stopped_because"].is_null());
}

#[test]
fn overwrite_clears_the_earlier_runs_monitor_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let db = dir.path().join("db");
    let w = format!("{}/ycsb/workloadc", workloads());
    let common = [
        "-P",
        &w,
        "-p",
        "recordcount=200",
        "-p",
        "operationcount=3000",
        "--out",
        out.to_str().unwrap(),
        "--monitor-interval",
        "50ms",
    ];
    let o = kvlab(
        &[
            &["load", "--db", "rocksdb", "--path", db.to_str().unwrap()],
            &common[..],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let store_csv = out.join("monitor/store.csv");
    let header = std::fs::read_to_string(&store_csv).unwrap();
    assert!(header.contains("block_cache"), "{header}");
    let o = kvlab(&[&["run", "--db", "null", "--overwrite"], &common[..]].concat());
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(!store_csv.exists(), "the RocksDB run's store.csv is gone");
    assert!(out.join("monitor/cpu.csv").exists());
    let html = dir.path().join("r.html");
    let o = kvlab(&[
        "report",
        out.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let page = std::fs::read_to_string(html).unwrap();
    assert!(
        !page.contains("block_cache"),
        "a null-store report with RocksDB charts"
    );
}

/// Runs the null store with `extra` arguments into `out`.
fn null_run(out: &Path, extra: &[&str]) -> Value {
    let w = format!("{}/ycsb/workloadc", workloads());
    let o = kvlab(
        &[
            &[
                "run",
                "--db",
                "null",
                "-P",
                &w,
                "-p",
                "recordcount=100",
                "-p",
                "operationcount=500",
                "--out",
                out.to_str().unwrap(),
                "--monitor",
                "off",
            ][..],
            extra,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", text(&o).1);
    result_json(out)
}

#[test]
fn the_seed_survives_jq_as_a_string_and_either_form_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a");
    let seed = "18446744073709551557";
    null_run(&out, &["--seed", seed]);
    let file = out.join("result.json");
    let jq = |filter: &str| {
        let o = Command::new("jq")
            .args(["-r", filter])
            .arg(&file)
            .output()
            .expect("running jq");
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    // jq reads the number as a double and rounds it; the string is exact.
    assert_ne!(jq(".seed"), seed);
    assert_eq!(jq(".seed_string"), seed);
    // A script that rewrote the file with the rounded number (jq does) and kept the string
    // still gets the run's seed back; so does a file with the string alone.
    let mut doc = read_json(&file);
    doc["seed"] = serde_json::json!(1.8446744073709552e19);
    std::fs::write(&file, doc.to_string()).unwrap();
    let o = kvlab(&[
        "compare",
        file.to_str().unwrap(),
        file.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let cmp: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cmp["a"]["seed_string"], seed);
    doc.as_object_mut().unwrap().remove("seed");
    std::fs::write(&file, doc.to_string()).unwrap();
    let o = kvlab(&[
        "compare",
        file.to_str().unwrap(),
        file.to_str().unwrap(),
        "--json",
    ]);
    let cmp: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cmp["b"]["seed_string"], seed);
}

#[test]
fn compare_json_holds_every_metric_with_plain_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let da = null_run(&a, &["--threads", "1"]);
    let db = null_run(&b, &["--threads", "2"]);
    let o = kvlab(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let cmp: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cmp["a"]["threads"], 1);
    assert_eq!(cmp["b"]["threads"], 2);
    let metric = |name: &str| {
        cmp["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == name)
            .unwrap_or_else(|| panic!("no {name} in {cmp:#}"))
            .clone()
    };
    let t = metric("Throughput (ops/s)");
    let (ta, tb) = (
        da["results"]["throughput_ops_per_sec"].as_f64().unwrap(),
        db["results"]["throughput_ops_per_sec"].as_f64().unwrap(),
    );
    assert_eq!(t["a"].as_f64(), Some(ta));
    assert_eq!(t["b"].as_f64(), Some(tb));
    assert!((t["b_over_a"].as_f64().unwrap() - tb / ta).abs() < 1e-9 * (tb / ta));
    assert_eq!(metric("Operations")["a"], 500.0);
    // --format json is the same.
    let o2 = kvlab(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.stdout, o2.stdout);
}

#[test]
fn a_bad_result_is_skipped_with_a_warning_unless_strict() {
    let dir = tempfile::tempdir().unwrap();
    null_run(&dir.path().join("good"), &[]);
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("result.json"), "{\"kvlab_version\": ").unwrap();
    let root = dir.path().to_str().unwrap();
    let o = kvlab(&["report", root]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let bad_file = bad.join("result.json").display().to_string();
    assert!(stderr.contains("warning: skipping"), "{stderr}");
    assert!(stderr.contains(&bad_file), "{stderr}");
    assert!(stdout.contains("| null "), "{stdout}");
    // The page says so too, not only stderr.
    assert!(
        stdout.contains(&format!("> note: skipped {bad_file}: ")),
        "{stdout}"
    );
    let html = dir.path().join("report.html");
    let o = kvlab(&["report", root, "-q", "--html", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(&format!("⚠ skipped {bad_file}: ")), "{page}");
    let o = kvlab(&["report", root, "--strict"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&bad_file), "{stderr}");
    // The cause once, not once per level of the error chain.
    assert_eq!(stderr.matches("EOF while parsing").count(), 1, "{stderr}");
}

#[test]
fn ycsb_single_dash_client_flags_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a");
    let doc = null_run(&out, &["-threads", "2", "-target", "20000"]);
    assert_eq!(doc["runner"]["threads"], 2);
    assert_eq!(doc["runner"]["target_rate_ops_per_sec"], 20000.0);
    // YCSB's `-load` in place of the subcommand.
    let w = format!("{}/ycsb/workloadc", workloads());
    let o = kvlab(&[
        "-load",
        "-P",
        &w,
        "--db",
        "null",
        "-p",
        "recordcount=50",
        "-threads",
        "3",
        "--out",
        dir.path().join("l").to_str().unwrap(),
        "--monitor",
        "off",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let doc = read_json(&dir.path().join("l/result.json"));
    assert_eq!(doc["phase"], "load");
    assert_eq!(doc["runner"]["threads"], 3);
}

#[test]
fn completions_and_the_manual_page_are_generated() {
    let o = kvlab(&["completions", "bash"]);
    assert!(o.status.success());
    let script = String::from_utf8(o.stdout).unwrap();
    assert!(script.contains("complete -F _kvlab"), "{script}");
    assert!(script.contains("suite"));
    // bash itself checks the syntax.
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "kvlab.bash", &script);
    let check = Command::new("bash").args(["-n", &path]).status().unwrap();
    assert!(check.success());
    let o = kvlab(&["man"]);
    assert!(o.status.success());
    let page = String::from_utf8(o.stdout).unwrap();
    assert!(page.contains(".TH kvlab 1"), "{page}");
    assert!(page.contains("completions"));
}

#[test]
fn the_examples_run_the_binary_the_quickstart_builds() {
    // The quickstart builds into $CARGO_TARGET_DIR, by default ~/.cache/kvlab-target.
    let quickstart = std::fs::read_to_string(repo_root().join("scripts/quickstart.sh")).unwrap();
    assert!(quickstart.contains("${CARGO_TARGET_DIR:-$HOME/.cache/kvlab-target}"));
    assert!(quickstart.contains("$CARGO_TARGET_DIR/release/kvlab"));
    for entry in std::fs::read_dir(repo_root().join("examples")).unwrap() {
        let readme = entry.unwrap().path().join("README.md");
        let Ok(text) = std::fs::read_to_string(&readme) else {
            continue;
        };
        for line in text.lines() {
            assert!(
                !line.trim_start().starts_with("target/release/kvlab"),
                "{}: `{line}`: no such binary after the quickstart",
                readme.display()
            );
        }
        if text.contains("\"$KVLAB\"") {
            assert!(
                text.contains("KVLAB=\"$CARGO_TARGET_DIR/release/kvlab\""),
                "{}",
                readme.display()
            );
        }
    }
}
