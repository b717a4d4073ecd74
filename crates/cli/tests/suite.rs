//! `kvlab suite` end to end: validation errors, a small matrix on the null store and a
//! real RocksDB (result tree, summary with CV, one load per data set), resuming, a failing
//! cell, Ctrl-C, and servers the suite spawns.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::files::{read_json, write_file};
use common::process::{free_port, signal, wait_until};
use common::{kvlab, kvlab_command, repo_root, text, workloads};

/// Paths of the cells that ran in this invocation, from suite.json.
fn ran(state: &Value) -> Vec<String> {
    state["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ran"] == true)
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect()
}

/// `kvlab suite FILE --dry-run` must fail with exit code 2 and every `needles` in stderr.
fn rejects(name: &str, text: &str, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(dir.path(), name, text);
    let o = kvlab(&["suite", &file, "--dry-run"]);
    let err = common::text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    assert!(err.contains(name), "{name}: the file is named: {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: expected `{n}` in: {err}");
    }
}

#[test]
fn invalid_suites_are_refused_naming_the_file_the_key_and_what_was_expected() {
    let w = workloads();
    let good_store = "[[store]]\nname = \"n\"\ndb = \"null\"\n";
    let good_workload =
        format!("[[workload]]\nname = \"a\"\nproperties = [\"{w}/ycsb/workloada\"]\n");
    let matrix = "[matrix]\nthreads = [1]\n";
    rejects(
        "unknown-key.toml",
        &format!("name = \"s\"\nrond = 2\n{good_store}{good_workload}{matrix}"),
        &["unknown field `rond`", "expected one of", "`rounds`"],
    );
    rejects(
        "unknown-store-key.toml",
        &format!("name = \"s\"\n[[store]]\nname = \"n\"\ndb = \"null\"\nspwan = \"\"\n{good_workload}{matrix}"),
        &["unknown field `spwan`", "line 5"],
    );
    rejects(
        "empty-matrix.toml",
        &format!("name = \"s\"\n{good_store}{good_workload}[matrix]\nthreads = []\n"),
        &["matrix.threads", "empty matrix", "threads = [1, 2]"],
    );
    rejects(
        "fresh-text.toml",
        &format!("name = \"s\"\n{good_store}{good_workload}fresh_data = \"yes\"\n{matrix}"),
        &["fresh_data", "expected a boolean"],
    );
    rejects(
        "unknown-db.toml",
        &format!("name = \"s\"\n[[store]]\nname = \"m\"\ndb = \"mongo\"\n{good_workload}{matrix}"),
        &[
            "store[0] (m).db",
            "unknown store `mongo`",
            "expected one of",
            "rocksdb",
        ],
    );
    rejects(
        "no-server.toml",
        &format!("name = \"s\"\n[[store]]\nname = \"r\"\ndb = \"redis\"\n{good_workload}{matrix}"),
        &["store[0] (r)", "spawn", "url"],
    );
    rejects(
        "path-on-redis.toml",
        &format!(
            "name = \"s\"\n[[store]]\nname = \"r\"\ndb = \"redis\"\nspawn = \"\"\npath = \"/x\"\n\
             {good_workload}{matrix}"
        ),
        &["store[0] (r).path", "embedded stores"],
    );
    rejects(
        "bad-spawn.toml",
        &format!(
            "name = \"s\"\n[[store]]\nname = \"r\"\ndb = \"redis\"\nspawn = \"port=1\"\n\
             {good_workload}{matrix}"
        ),
        &["store[0] (r).spawn", "port"],
    );
    rejects(
        "missing-file.toml",
        &format!(
            "name = \"s\"\n{good_store}[[workload]]\nname = \"a\"\nproperties = [\"nope\"]\n{matrix}"
        ),
        &["workload[0] (a).properties", "nope", "not a file"],
    );
    rejects(
        "bad-property.toml",
        &format!("name = \"s\"\n{good_store}{good_workload}set = {{ recordcont = 5 }}\n{matrix}"),
        &["workload[0] (a)", "recordcont"],
    );
    rejects(
        "memtier-on-rocksdb.toml",
        &format!(
            "name = \"s\"\n[[store]]\nname = \"r\"\ndb = \"rocksdb\"\n[[workload]]\nname = \"m\"\n\
             memtier = \"--ratio=1:1\"\n{matrix}"
        ),
        &[
            "workload[0] (m).memtier",
            "redis or memcached",
            "stores = [...]",
        ],
    );
    rejects(
        "memtier-threads.toml",
        &format!(
            "name = \"s\"\n[[store]]\nname = \"r\"\ndb = \"redis\"\nspawn = \"\"\n[[workload]]\n\
             name = \"m\"\nmemtier = \"--ratio=1:1 -t 4\"\n{matrix}"
        ),
        &["workload[0] (m).memtier", "`-t`", "the suite sets"],
    );
    rejects(
        "memtier-bad-flag.toml",
        &format!(
            "name = \"s\"\n[[store]]\nname = \"r\"\ndb = \"redis\"\nspawn = \"\"\n[[workload]]\n\
             name = \"m\"\nmemtier = \"--ratio=1:1 --no-such-flag\"\n{matrix}"
        ),
        &["cell r/m/t1-c1/round-1", "--no-such-flag"],
    );
    rejects(
        "unmatched-cell.toml",
        &format!("name = \"s\"\n{good_store}{good_workload}{matrix}[[cell]]\nthreads = 64\nskip = true\n"),
        &["cell[0]", "matches no cell"],
    );
    rejects(
        "duplicate.toml",
        &format!("name = \"s\"\n{good_store}{good_store}{good_workload}{matrix}"),
        &["two stores are named `n`"],
    );
    rejects(
        "bad-name.toml",
        &format!("name = \"../up\"\n{good_store}{good_workload}{matrix}"),
        &["name", "not a usable name"],
    );
}

/// Two YCSB workloads that share one data set, on the null store and on RocksDB,
/// two thread counts, two rounds.
fn tiny_suite(dir: &Path) -> String {
    let w = workloads();
    write_file(
        dir,
        "tiny.toml",
        &format!(
            r#"name = "tiny"
rounds = 2
seed = 7
monitor_interval = "200ms"

[[store]]
name = "null"
db = "null"

[[store]]
name = "rocks"
db = "rocksdb"

[[workload]]
name = "readheavy"
properties = ["{w}/ycsb/readheavy"]
set = {{ recordcount = 2000, operationcount = 4000 }}

[[workload]]
name = "balanced"
properties = ["{w}/ycsb/balanced"]
set = {{ recordcount = 2000, operationcount = 4000 }}

[matrix]
threads = [1, 2]
"#
        ),
    )
}

#[test]
fn a_tiny_suite_runs_every_cell_loads_once_summarizes_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let file = tiny_suite(dir.path());
    let out = dir.path().join("results");
    let out_s = out.display().to_string();

    let started = Instant::now();
    let o = kvlab(&["suite", &file, "--out", &out_s]);
    eprintln!("first run: {:.1} s", started.elapsed().as_secs_f64());
    assert!(o.status.success(), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["state"], "complete");
    assert_eq!(state["matrix"]["cells"], 16);
    assert_eq!(state["counts"]["ok"], 16);
    assert_eq!(ran(&state).len(), 16);
    // Both workloads load the same records: RocksDB gets one data set and one load; the
    // null store starts empty in every cell's process.
    assert_eq!(state["load_count"], 1, "{:#}", state["loads"]);
    let rocks: Vec<&Value> = state["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["store"] == "rocks")
        .collect();
    assert_eq!(rocks.len(), 1);
    assert_eq!(rocks[0]["loads"], 1);
    assert_eq!(rocks[0]["cells"], 8);
    // Its directory is gone once every cell of it is done.
    assert!(!Path::new(rocks[0]["data_dir"].as_str().unwrap()).exists());

    for store in ["null", "rocks"] {
        for w in ["readheavy", "balanced"] {
            for t in [1, 2] {
                for r in [1, 2] {
                    let cell = out.join(format!("{store}/{w}/t{t}-c1/round-{r}"));
                    let doc = read_json(&cell.join("result.json"));
                    assert_eq!(doc["phase"], "run");
                    assert_eq!(doc["runner"]["threads"], t);
                    assert_eq!(doc["seed"], 7 + r - 1);
                    assert_eq!(doc["results"]["operations"], 4000);
                    assert!(cell.join("timeline.csv").is_file());
                    assert!(cell.join("stdout.txt").is_file());
                    let cpu = std::fs::read_to_string(cell.join("monitor/cpu.csv")).unwrap();
                    assert!(cpu.starts_with("time_s,kvlab_cpu_pct,"), "{cpu}");
                }
            }
        }
    }
    // The RocksDB cells ran on the loaded records: every read found its record.
    let doc = read_json(&out.join("rocks/readheavy/t2-c1/round-2/result.json"));
    // The store is named as in the suite file, beside its kind.
    assert_eq!(doc["store"]["name"], "rocksdb");
    assert_eq!(doc["store"]["label"], "rocks");
    let read = doc["results"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "READ")
        .unwrap()
        .clone();
    assert_eq!(read["returns"]["OK"], read["operations"], "{read:#}");
    let dbsize =
        std::fs::read_to_string(out.join("rocks/readheavy/t1-c1/round-1/monitor/dbsize.csv"))
            .unwrap();
    assert!(dbsize.starts_with("time_s,data_dir_bytes"), "{dbsize}");
    // The cell's own process sampled RocksDB's statistics.
    let store =
        std::fs::read_to_string(out.join("rocks/readheavy/t1-c1/round-1/monitor/store.csv"))
            .unwrap();
    let header = store.lines().next().unwrap();
    assert!(header.contains(",estimate_num_keys,"), "{header}");
    assert!(store.lines().count() >= 2, "{store}");

    // The summary: one row per store × workload × concurrency, over two rounds, with CV.
    let summary = read_json(&out.join("summary.json"));
    let rows = summary["cells"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for r in rows {
        assert_eq!(r["rounds_ok"], 2);
        let t = &r["throughput_ops_per_sec"];
        let (mean, min, max) = (
            t["mean"].as_f64().unwrap(),
            t["min"].as_f64().unwrap(),
            t["max"].as_f64().unwrap(),
        );
        assert!(min <= mean && mean <= max && min > 0.0, "{r:#}");
        let cv = t["cv_pct"].as_f64().unwrap();
        // Two rounds a and b: CV = |a - b| / sqrt(2) / mean.
        let expected = 100.0 * (max - min) / 2f64.sqrt() / mean;
        assert!(
            (cv - expected).abs() < 1e-6 * expected.max(1.0),
            "{cv} vs {expected}"
        );
        assert_eq!(
            r["flagged"],
            cv > 10.0 || r["p99_us"]["cv_pct"].as_f64().unwrap() > 10.0
        );
        assert_eq!(r["per_round"].as_array().unwrap().len(), 2);
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| rocks | balanced | t2-c1 | 2/2 |"), "{md}");

    // Resume: delete one cell's result; only that cell runs again (and its data set is
    // loaded again, since its directory was cleaned up).
    std::fs::remove_file(out.join("rocks/balanced/t1-c1/round-2/result.json")).unwrap();
    let started = Instant::now();
    let o = kvlab(&["suite", &file, "--out", &out_s]);
    eprintln!("resume: {:.1} s", started.elapsed().as_secs_f64());
    assert!(o.status.success(), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    assert_eq!(ran(&state), ["rocks/balanced/t1-c1/round-2"]);
    assert_eq!(state["counts"]["ok"], 16);
    assert_eq!(state["load_count"], 1);
    assert!(out
        .join("rocks/balanced/t1-c1/round-2/result.json")
        .is_file());

    // Nothing left to do: nothing runs, nothing loads.
    let o = kvlab(&["suite", &file, "--out", &out_s]);
    assert!(o.status.success(), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    assert!(ran(&state).is_empty());
    assert_eq!(state["load_count"], 0);

    // --force runs everything again, loading the data set once.
    let started = Instant::now();
    let o = kvlab(&["suite", &file, "--out", &out_s, "--force"]);
    eprintln!("--force: {:.1} s", started.elapsed().as_secs_f64());
    assert!(o.status.success(), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    assert_eq!(ran(&state).len(), 16);
    assert_eq!(state["load_count"], 1);
}

#[test]
fn a_failing_cell_is_recorded_and_the_suite_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let w = workloads();
    let port = free_port();
    let file = write_file(
        dir.path(),
        "failing.toml",
        &format!(
            r#"name = "failing"

[[store]]
name = "nowhere"
db = "redis"
url = "redis://127.0.0.1:{port}"

[[store]]
name = "null"
db = "null"

[[workload]]
name = "sets"
stores = ["nowhere"]
memtier = "--ratio=1:0 --requests=100"

[[workload]]
name = "ycsb"
stores = ["null"]
properties = ["{w}/ycsb/workloadc"]
set = {{ recordcount = 100, operationcount = 100 }}

[matrix]
threads = [1]
connections = [1, 2]
"#
        ),
    );
    let out = dir.path().join("out");
    let history = dir.path().join("history.sqlite");
    let o = kvlab(&[
        "suite",
        &file,
        "--out",
        &out.display().to_string(),
        "--history",
        &history.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).1);
    // The cell that ran is in the history, the failed ones not (they have no result).
    assert!(text(&o).1.contains("added 1 result to"), "{}", text(&o).1);
    let o = kvlab(&[
        "history",
        "show",
        "--db",
        &history.display().to_string(),
        "--json",
    ]);
    let shown: Value = serde_json::from_slice(&o.stdout).unwrap();
    let series = shown["series"].as_array().unwrap();
    assert!(series.iter().all(|s| s["store"] == "null"), "{shown:#}");
    assert!(series.iter().any(|s| s["workload"] == "ycsb"), "{shown:#}");
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["state"], "finished with failures");
    assert_eq!(state["counts"]["failed"], 2);
    // The null store has no connections axis: one cell.
    assert_eq!(state["counts"]["ok"], 1);
    for c in [1, 2] {
        let cell = out.join(format!("nowhere/sets/t1-c{c}/round-1"));
        let failed = read_json(&cell.join("failed.json"));
        assert_eq!(failed["phase"], "run");
        assert_eq!(failed["exit_code"], 1);
        let tail = failed["stderr_tail"].as_str().unwrap();
        assert!(tail.contains(&port.to_string()), "{tail}");
        assert!(!cell.join("result.json").exists());
    }
    assert!(out.join("null/ycsb/t1-c1/round-1/result.json").is_file());
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| nowhere | sets | t1-c2 | 0/1 |"), "{md}");
    assert!(md.contains("1 round(s) failed"), "{md}");

    // Run again: the failed cells are tried again (and fail again); the good one is kept.
    let o = kvlab(&["suite", &file, "--out", &out.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    let state = read_json(&out.join("suite.json"));
    assert_eq!(
        ran(&state),
        ["nowhere/sets/t1-c1/round-1", "nowhere/sets/t1-c2/round-1"]
    );
}

#[test]
fn ctrl_c_stops_the_running_cell_and_the_suite_continues_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let w = workloads();
    let suite = |duration: &str| {
        format!(
            r#"name = "stop"
monitor = false
[[store]]
name = "null"
db = "null"
[[workload]]
name = "c"
properties = ["{w}/ycsb/workloadc"]
set = {{ recordcount = 100 }}
duration = "{duration}"
[matrix]
threads = [1, 2]
"#
        )
    };
    let file = write_file(dir.path(), "stop.toml", &suite("60s"));
    let out = dir.path().join("out");
    let child = kvlab_command(&["suite", &file, "--out", &out.display().to_string()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first cell runs, then press Ctrl-C once.
    let first = out.join("null/c/t1-c1/round-1/stderr.txt");
    wait_until(
        Duration::from_secs(30),
        Duration::from_millis(50),
        "the first cell never started",
        || std::fs::read_to_string(&first).is_ok_and(|t| t.contains("run on null")),
    );
    signal("-INT", child.id());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["state"], "interrupted");
    let status: Vec<&str> = state["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["interrupted", "pending"]);
    // The stopped cell kept its partial result, marked interrupted.
    let doc = read_json(&out.join("null/c/t1-c1/round-1/result.json"));
    assert_eq!(doc["interrupted"], true);

    // Again, with short cells: both run and the suite completes.
    write_file(dir.path(), "stop.toml", &suite("1s"));
    let o = kvlab(&["suite", &file, "--out", &out.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["state"], "complete");
    assert_eq!(ran(&state).len(), 2);
    let doc = read_json(&out.join("null/c/t1-c1/round-1/result.json"));
    assert_eq!(doc["interrupted"], false);
}

#[test]
fn spawned_servers_per_data_set_and_per_cell_with_memtier_prefill_and_ycsb_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let w = workloads();
    let file = write_file(
        dir.path(),
        "servers.toml",
        &format!(
            r#"name = "servers"
monitor_interval = "250ms"

[[store]]
name = "redis"
db = "redis"
spawn = "maxmemory=64mb"

[[store]]
name = "redis-fresh"
db = "redis"
spawn = ""
spawn_per = "cell"

[[store]]
name = "mc"
db = "memcached"
spawn = "m=64"

[[workload]]
name = "gets"
stores = ["redis", "mc"]
memtier = "--ratio=0:1 --key-maximum=500 --data-size=64 --requests=200"
prefill = "--ratio=1:0 --key-pattern=P:P --key-maximum=500 --data-size=64 --requests=allkeys -t 1 -c 2"

[[workload]]
name = "sets"
stores = ["redis", "mc"]
memtier = "--ratio=1:0 --key-maximum=500 --data-size=64 --requests=200"
prefill = "--ratio=1:0 --key-pattern=P:P --key-maximum=500 --data-size=64 --requests=allkeys -t 1 -c 2"

[[workload]]
name = "hashes"
stores = ["redis-fresh"]
properties = ["{w}/ycsb/workloadc"]
set = {{ recordcount = 300, operationcount = 300 }}

[matrix]
threads = [1]
connections = [1, 4]
"#
        ),
    );
    let out = dir.path().join("out");
    let o = kvlab(&["suite", &file, "--out", &out.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["counts"]["ok"], 10, "{:#}", state["counts"]);
    // redis and mc: one prefill each for their 4 cells; redis-fresh: a server and a load
    // per cell.
    let loads = |store: &str| {
        state["datasets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["store"] == store)
            .map(|d| d["loads"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(loads("redis"), [1]);
    assert_eq!(loads("mc"), [1]);
    assert_eq!(loads("redis-fresh"), [1, 1]);
    assert_eq!(state["load_count"], 4);
    // A prefill is recorded as the load it is, named for the workloads it fills for (not
    // as one more workload). A YCSB load of one workload's cells is named after it.
    for load in state["loads"].as_array().unwrap() {
        let doc = read_json(&Path::new(load["dir"].as_str().unwrap()).join("result.json"));
        assert_eq!(doc["phase"], "load", "{load:#}");
        if load["mode"] == "prefill" {
            assert_eq!(doc["workload_label"], "prefill for gets, sets", "{load:#}");
            assert_eq!(doc["command"][1], "memtier");
        } else {
            assert_eq!(doc["workload_label"], "hashes", "{load:#}");
        }
    }
    let o = kvlab(&["report", &out.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let md = String::from_utf8_lossy(&o.stdout).into_owned();
    for row in [
        ["mc", "gets", "1×1"],
        ["mc", "prefill for gets, sets [load]", "1×2"],
        ["redis", "sets", "1×4"],
        ["redis-fresh", "hashes [load]", "2×1"],
    ] {
        assert!(
            summary_rows(&md).contains(&row.map(String::from)),
            "{row:?} in:\n{md}"
        );
    }
    // The prefilled keys are there: every GET hits.
    for store in ["redis", "mc"] {
        let doc = read_json(&out.join(format!("{store}/gets/t1-c4/round-1/result.json")));
        assert_eq!(
            doc["store"]["label"], store,
            "memtier cells are labelled too"
        );
        let read = doc["results"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == "READ")
            .unwrap()
            .clone();
        assert_eq!(read["operations"], 800, "{read:#}");
        assert_eq!(read["returns"]["OK"], 800, "{store}: {read:#}");
        let server = read_json(&out.join(format!("{store}/gets/t1-c4/round-1/server.json")));
        assert!(server["version"].as_str().is_some_and(|v| !v.is_empty()));
        let csv = std::fs::read_to_string(
            out.join(format!("{store}/gets/t1-c4/round-1/monitor/store.csv")),
        )
        .unwrap();
        let header = csv.lines().next().unwrap();
        let expected = if store == "redis" {
            "used_memory"
        } else {
            "curr_items"
        };
        assert!(header.contains(expected), "{header}");
        // The suite told the cell which process its server is.
        let cpu = std::fs::read_to_string(
            out.join(format!("{store}/gets/t1-c4/round-1/monitor/cpu.csv")),
        )
        .unwrap();
        let row: Vec<&str> = cpu.lines().nth(1).unwrap().split(',').collect();
        assert!(!row[2].is_empty(), "server_cpu_pct: {cpu}");
    }
    // YCSB records in a fresh server per cell: every read finds its record.
    for c in [1, 4] {
        let doc = read_json(&out.join(format!("redis-fresh/hashes/t1-c{c}/round-1/result.json")));
        assert_eq!(doc["runner"]["connections_per_thread"], c);
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

/// A readlatest workload beside a read-only one with the same records: `fresh_data`
/// gives each readlatest cell a data set of its own, so its inserts reach no other cell.
fn fresh_suite(dir: &Path, fresh: bool) -> String {
    let w = workloads();
    let fresh_line = if fresh { "fresh_data = true" } else { "" };
    write_file(
        dir,
        if fresh { "fresh.toml" } else { "shared.toml" },
        &format!(
            r#"name = "fresh"
rounds = 2
monitor = false

[[store]]
name = "mc"
db = "memcached"
spawn = "m=64"

[[store]]
name = "rocks"
db = "rocksdb"
keep_data = true

[[workload]]
name = "latest"
properties = ["{w}/ycsb/readlatest"]
set = {{ recordcount = 500, operationcount = 2000, fieldcount = 1, fieldlength = 16 }}
{fresh_line}

[[workload]]
name = "reads"
properties = ["{w}/ycsb/workloadc"]
set = {{ recordcount = 500, operationcount = 500, fieldcount = 1, fieldlength = 16 }}

[matrix]
threads = [1]
"#
        ),
    )
}

/// Store, workload and concurrency of every row of a report's first (summary) table.
fn summary_rows(markdown: &str) -> Vec<[String; 3]> {
    let table = markdown.split("\n\n### ").next().unwrap_or("");
    table
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            [c[1].to_string(), c[2].to_string(), c[3].to_string()]
        })
        .collect()
}

fn op_count(doc: &Value, op: &str, status: &str) -> u64 {
    doc["results"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == op)
        .map_or(0, |o| o["returns"][status].as_u64().unwrap_or(0))
}

#[test]
fn fresh_data_reloads_before_each_cell_of_a_workload_and_resume_counts_loads() {
    let dir = tempfile::tempdir().unwrap();
    // Without fresh_data both workloads load the same records: one data set per store.
    let shared = fresh_suite(dir.path(), false);
    let o = kvlab(&["suite", &shared, "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let plan = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        plan.contains("8 cells") && plan.contains(", 2 data sets,"),
        "{plan}"
    );

    let file = fresh_suite(dir.path(), true);
    let o = kvlab(&["suite", &file, "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o).1);
    let plan = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(plan.contains(", 6 data sets,"), "{plan}");

    let out = dir.path().join("out");
    let out_s = out.display().to_string();
    let o = kvlab(&["suite", &file, "--out", &out_s]);
    assert!(o.status.success(), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    assert_eq!(state["counts"]["ok"], 8, "{:#}", state["counts"]);
    // Per store: the two readlatest cells each load their own data set, the two
    // read-only cells share one.
    assert_eq!(state["load_count"], 6, "{:#}", state["loads"]);
    for store in ["mc", "rocks"] {
        let mut sets: Vec<(bool, u64, u64)> = state["datasets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["store"] == store)
            .map(|d| {
                (
                    d["fresh"].as_bool().unwrap(),
                    d["cells"].as_u64().unwrap(),
                    d["loads"].as_u64().unwrap(),
                )
            })
            .collect();
        sets.sort();
        assert_eq!(sets, [(false, 2, 1), (true, 1, 1), (true, 1, 1)], "{store}");
    }
    // memcached counts its items after each cell: a readlatest cell sees the 500 loaded
    // records plus its own inserts only, never those of the round before it; the
    // read-only cells see the 500.
    for round in [1, 2] {
        let doc = read_json(&out.join(format!("mc/latest/t1-c1/round-{round}/result.json")));
        assert_eq!(doc["workload_label"], "latest");
        let inserted = op_count(&doc, "INSERT", "OK");
        assert!(
            inserted > 0,
            "readlatest inserts: {:#}",
            doc["results"]["ops"]
        );
        assert_eq!(
            doc["store"]["stats"]["curr_items"].as_u64().unwrap(),
            500 + inserted,
            "round {round}"
        );
        let doc = read_json(&out.join(format!("mc/reads/t1-c1/round-{round}/result.json")));
        assert_eq!(doc["workload_label"], "reads");
        assert_eq!(doc["store"]["stats"]["curr_items"], 500);
        assert_eq!(op_count(&doc, "READ", "OK"), 500, "every read hits");
    }

    // The report names cells and loads as the suite does.
    let o = kvlab(&["report", &out_s]);
    assert!(o.status.success(), "{}", text(&o).1);
    let md = String::from_utf8_lossy(&o.stdout).into_owned();
    let rows = summary_rows(&md);
    for row in [
        ["mc", "latest", "1×1"],
        ["mc", "latest [load]", "2×1"],
        ["mc", "reads", "1×1"],
        ["mc", "reads [load]", "2×1"],
    ] {
        assert!(rows.contains(&row.map(String::from)), "{row:?} in:\n{md}");
    }
    // Both loads of `latest` are rounds of one load cell.
    let load_row = md
        .lines()
        .find(|l| l.starts_with("| mc ") && l.contains("| latest [load] |"))
        .unwrap();
    let cols: Vec<&str> = load_row.split('|').map(str::trim).collect();
    assert_eq!(cols[4], "2", "{load_row}");

    // Resume after losing a result of each workload on RocksDB (whose data set
    // directories are kept): the shared data set is reused as loaded, the readlatest
    // cell's own data set is loaded again, since that cell wrote to it.
    for w in ["latest", "reads"] {
        std::fs::remove_file(out.join(format!("rocks/{w}/t1-c1/round-2/result.json"))).unwrap();
    }
    let o = kvlab(&["suite", &file, "--out", &out_s]);
    assert!(o.status.success(), "{}", text(&o).1);
    let state = read_json(&out.join("suite.json"));
    let mut again = ran(&state);
    again.sort();
    assert_eq!(
        again,
        ["rocks/latest/t1-c1/round-2", "rocks/reads/t1-c1/round-2"]
    );
    assert_eq!(state["load_count"], 1, "{:#}", state["loads"]);
    assert_eq!(state["loads"][0]["workload"], "latest");
    assert!(
        text(&o).1.contains("already loaded"),
        "the shared data set is reused: {}",
        text(&o).1
    );
}

#[test]
fn every_example_suite_is_valid() {
    let mut checked = 0;
    for entry in std::fs::read_dir(repo_root().join("examples")).unwrap() {
        let file = entry.unwrap().path().join("suite.toml");
        if !file.is_file() {
            continue;
        }
        let o = kvlab(&["suite", &file.display().to_string(), "--dry-run"]);
        assert!(o.status.success(), "{}: {}", file.display(), text(&o).1);
        let plan = String::from_utf8_lossy(&o.stdout);
        assert!(plan.contains(" cells ("), "{plan}");
        checked += 1;
    }
    assert!(checked >= 3, "the seed examples are there");
}

/// `record = true` records each measured cell's requests to `trace.kvtrace` in its
/// directory (and only those: loads are not recorded), readable by `kvlab trace`.
#[test]
fn a_suite_records_each_cell_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let w = workloads();
    let file = write_file(
        dir.path(),
        "rec.toml",
        &format!(
            r#"name = "rec"
seed = 3
monitor = false
record = true
record_sample = 0.5

[[store]]
name = "null"
db = "null"

[[workload]]
name = "readheavy"
properties = ["{w}/ycsb/readheavy"]
set = {{ recordcount = 1000, operationcount = 4000 }}

[matrix]
threads = [1, 2]
"#
        ),
    );
    let out = dir.path().join("results");
    let o = kvlab(&["suite", &file, "--out", &out.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let mut traces = 0;
    for t in ["t1-c1", "t2-c1"] {
        let cell = out.join("null/readheavy").join(t).join("round-1");
        let trace = cell.join("trace.kvtrace");
        assert!(trace.exists(), "{}", trace.display());
        let stats = kvlab(&["trace", "stats", trace.to_str().unwrap(), "--json"]);
        assert!(stats.status.success(), "{}", text(&stats).1);
        let v: Value = serde_json::from_slice(&stats.stdout).unwrap();
        let requests = v["requests"].as_u64().unwrap();
        // Half the keys kept, every request of a kept key: about half of 4 000.
        assert!(
            (1200..=2800).contains(&requests),
            "{t}: {requests} requests: {v:#}"
        );
        let result = read_json(&cell.join("result.json"));
        let notes = result["notes"].to_string();
        assert!(notes.contains("recorded"), "{notes}");
        traces += 1;
    }
    assert_eq!(traces, 2);
}

#[test]
fn rounds_auto_repeats_each_cell_until_its_interval_is_narrow_or_the_limit() {
    let w = workloads();
    let head = "name = \"auto\"\nrounds = \"auto\"\n";
    let store = "[[store]]\nname = \"n\"\ndb = \"null\"\n";
    let ycsb = format!(
        "[[workload]]\nname = \"a\"\nproperties = [\"{w}/ycsb/workloada\"]\n\
         set = {{ recordcount = 200, operationcount = 2000 }}\n"
    );
    let matrix = "[matrix]\nthreads = [1]\n";
    // What cannot mean anything is refused before anything runs.
    rejects(
        "rounds-word.toml",
        &format!("name = \"s\"\nrounds = \"sometimes\"\n{store}{ycsb}{matrix}"),
        &["rounds", "`sometimes`", "\"auto\""],
    );
    rejects(
        "rounds-few.toml",
        &format!("{head}max_rounds = 2\n{store}{ycsb}{matrix}"),
        &["max_rounds", "at least 3"],
    );
    rejects(
        "rounds-target-fixed.toml",
        &format!("name = \"s\"\nrounds = 3\nrounds_target = 5\n{store}{ycsb}{matrix}"),
        &["rounds_target", "applies with `rounds = \"auto\"`"],
    );
    rejects(
        "rounds-record.toml",
        &format!("{head}record = true\n{store}{ycsb}{matrix}"),
        &["record", "replace its recording"],
    );
    rejects(
        "rounds-memtier.toml",
        &format!(
            "{head}[[store]]\nname = \"r\"\ndb = \"redis\"\nurl = \"redis://127.0.0.1:1\"\n\
             [[workload]]\nname = \"m\"\nmemtier = \"--ratio=1:1\"\n{matrix}"
        ),
        &["rounds", "memtier line", "a number of rounds"],
    );

    let dir = tempfile::tempdir().unwrap();
    let file = write_file(
        dir.path(),
        "auto.toml",
        &format!("{head}rounds_target = 40\nmax_rounds = 4\nseed = 3\n{store}{ycsb}{matrix}"),
    );
    let out = dir.path().join("results");
    let out_s = out.display().to_string();
    let o = kvlab(&["suite", &file, "--out", &out_s]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    // One cell; its run made the rounds in its own directory.
    let cell = out.join("n/a/t1-c1");
    let rounds = read_json(&cell.join("rounds.json"));
    assert_eq!(rounds["mode"], "auto");
    let n = rounds["rounds"].as_u64().unwrap();
    assert!(
        (3..=4).contains(&n),
        "auto stops after 3 to 4 rounds: {rounds}"
    );
    if n < 4 {
        assert_eq!(
            rounds["reached"], true,
            "stopped before the limit: {rounds}"
        );
    }
    for r in 1..=n {
        assert!(
            cell.join(format!("round-{r}/result.json")).is_file(),
            "round {r}"
        );
    }
    assert!(!cell.join(format!("round-{}", n + 1)).exists());
    // The summary counts the rounds the run made, each with its throughput.
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["rounds"], "auto");
    let row = &summary["cells"][0];
    assert_eq!(row["rounds"].as_u64(), Some(n), "{row}");
    assert_eq!(row["rounds_ok"].as_u64(), Some(n), "{row}");
    let per_round = row["per_round"].as_array().unwrap();
    assert_eq!(per_round.len() as u64, n);
    for (i, r) in per_round.iter().enumerate() {
        assert_eq!(r["round"].as_u64(), Some(i as u64 + 1));
        assert!(r["throughput_ops_per_sec"].as_f64().unwrap() > 0.0, "{r}");
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("rounds until ±40 % (at most 4)"), "{md}");
    // A second invocation finds the cell complete and runs nothing.
    let o = kvlab(&["suite", &file, "--out", &out_s]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(ran(&read_json(&out.join("suite.json"))).is_empty());
}
