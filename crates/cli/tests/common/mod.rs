//! Helpers the `kvlab` end-to-end tests share: run the binary from the repository
//! root, read its YCSB-style report lines and memtier's table, and read the files it
//! wrote.

use std::path::Path;
use std::process::{Command, Output};

use kvlab_spawn::{Server, ServerKind, ServerSpec};

/// Runs kvlab with `args` from the repository root (where `workloads/` is).
pub fn kvlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kvlab"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .output()
        .expect("running kvlab")
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

/// The text of every file under `dir` (none when `dir` does not exist).
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                texts.push(String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned());
            }
        }
    }
    texts
}

/// A redis-server with `spec`'s settings on a free loopback port (stopped on drop).
pub fn redis(spec: &str) -> Server {
    Server::start(&ServerSpec::parse(ServerKind::Redis, spec).unwrap()).unwrap()
}

/// Sends one command to `server` and returns its reply.
pub fn call(server: &Server, args: &[&str]) -> kvlab_spawn::resp::Value {
    kvlab_spawn::resp::command(server.addr(), args).unwrap()
}

/// `calls` of `cmdstat_NAME` in the server's `INFO commandstats` (0 when absent).
pub fn calls(server: &Server, name: &str) -> u64 {
    let info = call(server, &["INFO", "commandstats"]);
    let prefix = format!("cmdstat_{name}:calls=");
    info.as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.split(',').next())
        .map_or(0, |v| v.parse().unwrap())
}
