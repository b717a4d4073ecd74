//! Helpers the `kvlab` end-to-end test binaries share: run the binary from the
//! repository root and read its YCSB-style report lines.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of these helpers"
)]

use std::process::{Command, Output};

/// Runs kvlab with `args` from the repository root (where `workloads/` is).
pub fn kvlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kvlab"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .output()
        .expect("running kvlab")
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
