//! Helpers the `kvlab` end-to-end tests share, one definition each: run the binary from
//! the repository root and read its YCSB-style report lines and memtier's table
//! (here), the files it wrote and the project's shared data ([`files`]), the servers it
//! talks to ([`servers`]), processes, ports and waits ([`process`]), Python tools in a
//! virtual environment ([`python`]) and Java HdrHistogram ([`java`]).

pub mod browser;
pub mod files;
pub mod java;
pub mod process;
pub mod python;
pub mod servers;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (where `workloads/` is), the directory kvlab runs in.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shipped workloads directory as an absolute path (as suite files name it).
pub fn workloads() -> String {
    repo_root()
        .join("workloads")
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// kvlab with `args`, to run in the repository root: the caller sets its stdio and
/// spawns it (or adds arguments and runs it).
pub fn kvlab_command<A: AsRef<OsStr>>(args: &[A]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kvlab"));
    c.current_dir(repo_root()).args(args);
    c
}

/// Runs kvlab with `args` from the repository root (where `workloads/` is).
pub fn kvlab(args: &[&str]) -> Output {
    kvlab_command(args).output().expect("running kvlab")
}

/// Runs kvlab with `args` and returns its stdout, panicking with its output unless it
/// succeeds.
pub fn ok(args: &[&str]) -> String {
    let o = kvlab(args);
    let (stdout, stderr) = text(&o);
    assert!(
        o.status.success(),
        "kvlab {args:?} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

/// The arguments of a phase of YCSB's workload A over `records` records against the
/// redis-server at `url`, without progress lines: what the phases of a test against one
/// server share (the phase and its own flags go around them).
pub fn workloada_on_redis(url: &str, records: u64) -> Vec<String> {
    [
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        &format!("recordcount={records}"),
        "--db",
        "redis",
        "--url",
        url,
        "--progress",
        "never",
    ]
    .map(String::from)
    .to_vec()
}

/// Runs `kvlab memtier -s 127.0.0.1 -p PORT` with `extra` flags.
pub fn memtier_on(port: &str, extra: &[&str]) -> Output {
    kvlab(&[&["memtier", "-s", "127.0.0.1", "-p", port][..], extra].concat())
}

/// stdout and stderr as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The value of a report line `[SECTION], name, value`.
pub fn report_value(stdout: &str, section: &str, name: &str) -> Option<String> {
    let prefix = format!("[{section}], {name}, ");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

/// A whole-number report value; panics (showing the report) when it is missing.
pub fn report_u64(stdout: &str, section: &str, name: &str) -> u64 {
    report_value(stdout, section, name)
        .unwrap_or_else(|| panic!("no [{section}], {name} in:\n{stdout}"))
        .parse()
        .unwrap()
}

/// The columns of the `Totals` (or other) row of memtier's ALL STATS table.
pub fn all_stats_row(stdout: &str, row: &str) -> Vec<String> {
    section_row(stdout, "ALL STATS", row)
}

/// The columns of a row of the memtier table titled `title` (`ALL STATS`, `BEST RUN
/// RESULTS`, `RUN #2 RESULTS`, …).
pub fn section_row(stdout: &str, title: &str, row: &str) -> Vec<String> {
    let table = stdout
        .split(&format!("\n{title}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("no {title} table in:\n{stdout}"));
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(row))
        .unwrap_or_else(|| panic!("no {row} row in:\n{table}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Runs workload C (100 records, 2 000 reads) on the null store into `out`, without the
/// monitor or progress lines; `extra` goes last. Panics unless it succeeds.
pub fn run_null(out: &Path, extra: &[&str]) {
    let o = null_run(out, extra);
    assert!(o.status.success(), "{}", text(&o).1);
}

/// [`run_null`]'s command, whatever its outcome.
pub fn null_run(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "recordcount=100",
        "-p",
        "operationcount=2000",
        "--db",
        "null",
        "--monitor",
        "off",
        "--progress",
        "never",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    kvlab(&args)
}
