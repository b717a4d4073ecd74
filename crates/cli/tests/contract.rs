//! The contract walk: every command × store × option class either runs (exit 0 with
//! operations done, or with a word on stderr saying why there were none), fails saying
//! why (exit 1 with `kvlab: error` or a failure line), or is refused before any work (exit
//! 2, one sentence naming an option) — never a panic, a backtrace, a signal, a runaway or
//! a silent exit 0 having done nothing.
//!
//! The stores come from kvlab's store table (`kvlab_lab::STORES`), so a store added there
//! is walked the day it is added. One server per network store is shared by its cases;
//! embedded stores load a small database once and each case that writes gets a fresh
//! directory.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use kvlab_lab::{Access, StoreInfo, STORES};
use kvlab_spawn::{Server, ServerKind};

use crate::common::servers;
use crate::common::{kvlab_command, text};

/// How long one case may take before it counts as a runaway.
const CASE_LIMIT: Duration = Duration::from_secs(120);

/// What a case did.
#[derive(Debug)]
enum Verdict {
    Ran,
    Failed,
    Refused,
}

/// Runs kvlab with `args`, killed as a runaway after [`CASE_LIMIT`].
fn run(args: &[String]) -> Output {
    let child = kvlab_command(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting kvlab");
    let started = Instant::now();
    // Reading both pipes to their end waits for the process; a watchdog thread kills a
    // runaway, whose output then ends.
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if started.elapsed() > CASE_LIMIT {
                    crate::common::process::signal("-KILL", pid);
                    return true;
                }
                std::thread::park_timeout(Duration::from_millis(50));
            }
            false
        })
    };
    let out = child.wait_with_output().expect("waiting for kvlab");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    watchdog.thread().unpark();
    assert!(
        !watchdog.join().unwrap(),
        "kvlab {args:?} ran away: killed after {} s",
        CASE_LIMIT.as_secs()
    );
    out
}

/// Whether stdout shows work done: a count of operations, records or rounds above zero.
fn did_work(stdout: &str) -> bool {
    stdout.lines().any(|l| {
        let fields: Vec<&str> = l.split(',').map(str::trim).collect();
        let counted = matches!(
            fields.as_slice(),
            [_, "Operations" | "Records" | "Rounds" | "Acknowledged", n]
                if n.parse::<u64>().is_ok_and(|n| n > 0)
        );
        // memtier's table: a Totals row with a rate above zero.
        let memtier = l.starts_with("Totals")
            && l.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<f64>().ok())
                .is_some_and(|v| v > 0.0);
        // An SLO search's steps: a row with an achieved rate above zero.
        let slo = l.starts_with("| ")
            && l.split('|')
                .nth(2)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .is_some_and(|v| v > 0.0);
        counted || memtier || slo
    })
}

/// Judges one case by the contract; `Err` says how it broke it.
fn judge(args: &[String], o: &Output, out_dir: Option<&Path>) -> Result<Verdict, String> {
    let (stdout, stderr) = text(o);
    let show = || {
        format!(
            "kvlab {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            args.join(" ")
        )
    };
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        return Err(format!("panicked: {}", show()));
    }
    match o.status.code() {
        Some(0) => {
            let word = stderr.contains("warning") || stderr.contains("kvlab: note");
            if did_work(&stdout) || word {
                Ok(Verdict::Ran)
            } else {
                Err(format!("exit 0 with no operations and no word: {}", show()))
            }
        }
        Some(1) => {
            if stderr.contains("kvlab: error") || stderr.contains("failed") {
                Ok(Verdict::Failed)
            } else {
                Err(format!("exit 1 without saying why: {}", show()))
            }
        }
        Some(2) => {
            let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            let refusal = lines
                .iter()
                .find(|l| l.starts_with("kvlab: error: ") || l.starts_with("error: "))
                .ok_or_else(|| format!("exit 2 without an error line: {}", show()))?;
            // One sentence naming an option: a flag, a property or a field.
            let names = refusal.contains("--")
                || refusal.contains('`')
                || refusal.contains("-p ")
                || refusal.contains('=')
                || refusal.contains("option")
                || refusal.contains("property")
                || refusal.contains("Usage");
            if !names {
                return Err(format!("a refusal that names no option: {}", show()));
            }
            if let Some(dir) = out_dir {
                if dir.join("result.json").exists() {
                    return Err(format!("refused after writing a result: {}", show()));
                }
            }
            Ok(Verdict::Refused)
        }
        Some(c) => Err(format!("exit code {c}: {}", show())),
        None => Err(format!("killed by a signal: {}", show())),
    }
}

/// One store's fixtures: how a phase reaches it, and its server if it has one.
struct Target {
    info: &'static StoreInfo,
    server: Option<Server>,
    /// An embedded store's loaded database, copied for cases that write.
    loaded: Option<PathBuf>,
}

impl Target {
    fn new(info: &'static StoreInfo, dir: &Path) -> Target {
        let server = match (info.access, info.name) {
            (Access::Network, "redis") => Some(servers::start(ServerKind::Redis, "")),
            (Access::Network, "memcached") => Some(servers::start(ServerKind::Memcached, "")),
            (Access::Network, other) => panic!("the walk knows no server for {other}"),
            _ => None,
        };
        let mut t = Target {
            info,
            server,
            loaded: None,
        };
        if info.access == Access::InProcess {
            // It lives in kvlab's memory: `run` loads it itself.
            return t;
        }
        let loaded = dir.join(format!("{}-loaded", info.name));
        let mut load = strings(&["load", "--db", info.name]);
        load.extend(workload_args());
        load.extend(t.access(Some(&loaded)));
        let o = run(&load);
        assert!(o.status.success(), "loading {}: {:?}", info.name, text(&o));
        if info.access == Access::Embedded {
            t.loaded = Some(loaded);
        }
        t
    }

    /// The flags that reach the store: `--path DIR`, `--url URL`, or none.
    fn access(&self, path: Option<&Path>) -> Vec<String> {
        match (self.info.access, &self.server, path) {
            (Access::Embedded, _, Some(p)) => vec!["--path".into(), p.display().to_string()],
            (Access::Network, Some(s), _) => vec!["--url".into(), s.url()],
            _ => Vec::new(),
        }
    }
}

/// YCSB's workload A, tiny.
fn workload_args() -> Vec<String> {
    [
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=20",
        "-p",
        "operationcount=40",
        "--progress",
        "never",
    ]
    .map(String::from)
    .to_vec()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The option classes of a phase command: a name and the flags it adds (`DIR` stands
/// for a fresh directory of the case, `STORE` for the store's name).
fn option_classes() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("none", vec![]),
        ("own -p option", vec!["-p", "STORE.no_such_option=1"]),
        (
            "another store's -p option",
            vec!["-p", "OTHER.no_such_option=1"],
        ),
        ("--path", vec!["--path", "DIR/path"]),
        ("--spawn", vec!["--spawn"]),
        ("--url", vec!["--url", "redis://127.0.0.1:1"]),
        ("--cache-size", vec!["--cache-size", "8MiB"]),
        ("--shard", vec!["--shard", "0/2"]),
        ("--record", vec!["--record", "DIR/trace.kvtrace"]),
        ("--metrics", vec!["--metrics", "127.0.0.1:0"]),
        ("--fault", vec!["--fault", "latency:1ms@0s-1s"]),
        ("--expected-log", vec!["--expected-log", "DIR/acked"]),
        ("--target-rate", vec!["--target-rate", "4000"]),
        ("--duration", vec!["--duration", "300ms"]),
        ("--duration 0", vec!["--duration", "0s"]),
        ("--threads huge", vec!["--threads", "99999999999"]),
        ("operationcount=0", vec!["-p", "operationcount=0"]),
        ("--slo", vec!["--slo", "p99=1s", "--slo-step", "100ms"]),
        ("--slo-step 0", vec!["--slo", "p99=1s", "--slo-step", "0s"]),
    ]
}

/// Expands a class's flags for one case.
fn expand(flags: &[&str], store: &StoreInfo, dir: &Path) -> Vec<String> {
    let other = STORES
        .iter()
        .find(|s| s.name != store.name)
        .expect("more than one store");
    flags
        .iter()
        .map(|f| {
            f.replace("DIR", &dir.display().to_string())
                .replace("STORE.", store.option_prefix)
                .replace("OTHER.", other.option_prefix)
        })
        .collect()
}

#[test]
fn every_command_store_and_option_runs_or_is_refused_in_one_sentence() {
    let root = tempfile::tempdir().unwrap();
    let trace = root.path().join("walk.kvtrace");
    let o = run(&[
        strings(&["run", "--db", "null", "--record"]),
        vec![trace.display().to_string()],
        workload_args(),
    ]
    .concat());
    assert!(
        o.status.success(),
        "recording the walk's trace: {:?}",
        text(&o)
    );
    let table = root.path().join("walk.tbl");
    std::fs::write(
        &table,
        (0..30)
            .map(|i| format!("{i}|a{i}|b{i}|\n"))
            .collect::<String>(),
    )
    .unwrap();
    // The CacheBench cases need the shared data beside the project (skipped, and said,
    // without it).
    let cachebench = crate::common::files::shared_data_or_skip(
        "cachebench/graph_cache_leader_assocs/config.json",
    );

    let mut failures = Vec::new();
    let mut walked = 0usize;
    let mut tally = [0usize; 3];
    let mut case_no = 0usize;
    for info in STORES {
        let target = Target::new(info, root.path());
        let mut check = |args: Vec<String>, out: Option<&Path>| {
            walked += 1;
            let o = run(&args);
            match judge(&args, &o, out) {
                Ok(v) => {
                    tally[v as usize] += 1;
                }
                Err(e) => {
                    eprintln!("contract walk: broken: {e}\n");
                    failures.push(e)
                }
            }
        };
        // A fresh directory (and a fresh copy of the loaded database) per case.
        let mut fresh = || {
            case_no += 1;
            let dir = root.path().join(format!("case-{case_no}"));
            std::fs::create_dir_all(&dir).unwrap();
            let db = dir.join("db");
            if let Some(loaded) = &target.loaded {
                copy_dir(loaded, &db);
            }
            (dir, db)
        };
        for phase in ["load", "run", "verify"] {
            for (_, flags) in option_classes() {
                let (dir, db) = fresh();
                let out = dir.join("out");
                let mut args = vec![phase.to_string(), "--db".into(), info.name.into()];
                args.extend(workload_args());
                // A class that gives its own way to the store replaces the usual one.
                let own_access = flags
                    .iter()
                    .any(|f| matches!(*f, "--path" | "--spawn" | "--url"));
                if !own_access {
                    args.extend(target.access(Some(&db)));
                }
                args.extend(expand(&flags, info, &dir));
                args.extend(["--out".into(), out.display().to_string()]);
                check(args, Some(&out));
            }
            // A CacheBench config instead of a property file.
            let Some(cachebench) = &cachebench else {
                continue;
            };
            let (_, db) = fresh();
            let mut args = strings(&[phase, "--db", info.name, "--cachebench"]);
            args.push(cachebench.display().to_string());
            args.extend(strings(&[
                "-p",
                "numKeys=2000",
                "-p",
                "numOps=50",
                "-p",
                "numThreads=1",
                "--progress",
                "never",
            ]));
            args.extend(target.access(Some(&db)));
            check(args, None);
        }
        // A replay of a recorded trace, and an import of a delimited file.
        for extra in [
            vec![],
            strings(&["--limit", "0"]),
            strings(&["--limit", "5"]),
        ] {
            let (_, db) = fresh();
            let mut args = strings(&["replay"]);
            args.push(trace.display().to_string());
            args.extend(strings(&[
                "--db",
                info.name,
                "--speed",
                "max",
                "--progress",
                "never",
            ]));
            args.extend(target.access(Some(&db)));
            args.extend(extra);
            check(args, None);
        }
        {
            let (_, db) = fresh();
            let mut args = strings(&["import"]);
            args.push(table.display().to_string());
            args.extend(strings(&[
                "--key-fields",
                "0",
                "--db",
                info.name,
                "--progress",
                "never",
            ]));
            args.extend(target.access(Some(&db)));
            check(args, None);
        }
        // db_bench's mixgraph on the store.
        {
            let (_, db) = fresh();
            let mut args = strings(&[
                "db_bench",
                "--kvlab-db",
                info.name,
                "--benchmarks=mixgraph",
                "--num=50",
                "--reads=50",
            ]);
            if info.access == Access::Embedded {
                args.push(format!("--db={}", db.display()));
            } else if let Some(s) = &target.server {
                args.extend(["--url".into(), s.url()]);
            }
            check(args, None);
        }
        // kvlab crash: one round killed after its first acknowledged write.
        {
            let (dir, _) = fresh();
            let mut args = strings(&[
                "crash",
                "--db",
                info.name,
                "--rounds",
                "1",
                "--kill-after-writes",
                "1",
                "-p",
                "recordcount=2000",
                "-P",
                "workloads/ycsb/workloada",
                "--progress",
                "never",
            ]);
            match info.access {
                Access::Embedded => {
                    args.extend(["--path".into(), dir.join("crash").display().to_string()])
                }
                Access::Network => args.push("--spawn".into()),
                Access::InProcess => {}
            }
            check(args, None);
        }
        // memtier against a server.
        if let Some(s) = &target.server {
            let addr = s.addr();
            let mut args = strings(&["memtier", "-s", "127.0.0.1", "-p"]);
            args.push(addr.port().to_string());
            if info.name == "memcached" {
                args.extend(strings(&["-P", "memcache_text"]));
            }
            args.extend(strings(&[
                "-t",
                "1",
                "-c",
                "1",
                "-n",
                "20",
                "--hide-histogram",
            ]));
            check(args, None);
        }
        // A suite of one cell.
        {
            let (dir, _) = fresh();
            let access = match info.access {
                Access::Network => "spawn = \"\"\n".to_string(),
                _ => String::new(),
            };
            let suite = dir.join("suite.toml");
            std::fs::write(
                &suite,
                format!(
                    "name = \"walk\"\n\n[[store]]\nname = \"s\"\ndb = \"{}\"\n{access}\n\
                     [[workload]]\nname = \"a\"\nproperties = [\"{}/workloads/ycsb/workloada\"]\n\
                     set = {{ recordcount = 20, operationcount = 40 }}\n",
                    info.name,
                    crate::common::repo_root().display()
                ),
            )
            .unwrap();
            let mut args = strings(&["suite"]);
            args.push(suite.display().to_string());
            args.extend(["--out".into(), dir.join("out").display().to_string()]);
            check(args, None);
        }
        if let Some(s) = target.server {
            let _ = s.stop();
        }
    }
    // kvlab sim over the recorded trace: sampling rates inside and outside (0, 1], fixed
    // sample sizes, and both at once.
    for extra in [
        vec![],
        strings(&["--mrc", "--shards", "0"]),
        strings(&["--mrc", "--shards", "5"]),
        strings(&["--mrc", "--shards", "0.5"]),
        strings(&["--shards", "0.5"]),
        strings(&["--mrc", "--shards-max-keys", "64"]),
        strings(&["--mrc", "--shards-max-keys", "0"]),
        strings(&["--mrc", "--shards", "0.5", "--shards-max-keys", "64"]),
        strings(&["--shards-max-keys", "64"]),
    ] {
        walked += 1;
        let out = root.path().join(format!("sim-{walked}"));
        let mut args = strings(&["sim"]);
        args.push(trace.display().to_string());
        args.extend(strings(&["--policy", "lru", "--size", "10%"]));
        args.extend(extra);
        args.extend(["--out".into(), out.display().to_string()]);
        let o = run(&args);
        let (stdout, _) = text(&o);
        // A simulation prints its miss ratios rather than operation counts.
        let simulated = o.status.success() && stdout.contains("miss");
        match judge(&args, &o, None) {
            Err(e) if !simulated => failures.push(e),
            _ => {}
        }
    }
    eprintln!(
        "contract walk: {walked} combinations: {} ran, {} failed saying why, {} refused",
        tally[0], tally[1], tally[2]
    );
    assert!(
        failures.is_empty(),
        "{} of {walked} combinations broke the contract:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Copies a directory tree (a loaded database) file by file.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}
