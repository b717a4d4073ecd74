//! memtier's `--data-verify` (and `--verify-only`): after the run, one client reads back
//! every key the SETs wrote and compares each value with what was written
//! (`verify_client`), printing memtier's report lines and failures.

use std::io::Write;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use kvlab_core::Store;
use kvlab_runner::{check_values, Mismatch, ValueCheck};

use crate::json::Json;
use crate::report::Options;
use crate::MemtierWorkload;

/// Reads back every key `workload` wrote with run seed `seed` on `store`: memtier's
/// "Performing data verification..." lines go to `--out-file` (appended) or stdout,
/// each failure to stderr in memtier's words, and with `--json-out-file` the counts join
/// that document under `client verifications results`, its keys kept in order (a new
/// document holds memtier's configuration; `_kvlab_settings` is not written). Stops
/// early when `stop` is set.
pub fn verify<S: Store>(
    store: &S,
    workload: &MemtierWorkload,
    options: &Options,
    seed: u64,
    stop: &AtomicBool,
    _kvlab_settings: Vec<(String, String)>,
) -> Result<ValueCheck> {
    let mut out: Box<dyn Write> = match options.out_file() {
        Some(path) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("opening {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    write!(out, "\n\nPerforming data verification...\n")?;
    out.flush()?;
    let mut verifier = workload.verifier(seed);
    let shown = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let check = check_values(
        store,
        stop,
        &mut |req, expected| verifier.next(req, expected),
        &mut |req, expected, mismatch| match mismatch {
            Mismatch::Error(e) => {
                eprintln!("error: request for key [{}] failed: {e}", shown(&req.key));
            }
            Mismatch::Value(got) => eprintln!(
                "error: key [{}]: expected [{}], got [{}]",
                shown(&req.key),
                shown(expected),
                shown(got)
            ),
            Mismatch::Missing => eprintln!(
                "error: key [{}]: expected [{}], got []",
                shown(&req.key),
                shown(expected)
            ),
        },
    )?;
    write!(
        out,
        "Data verification completed:\n{:<10} keys verified successfuly.\n{:<10} keys failed.\n",
        check.verified, check.failed
    )?;
    out.flush()?;
    if let Some(path) = options.json_out() {
        // The run's document, its keys kept in memtier's order; a new one (with
        // --verify-only) has memtier's configuration.
        let mut doc: Json = match std::fs::read(path) {
            Ok(text) => serde_json::from_slice(&text)
                .with_context(|| format!("reading {}", path.display()))?,
            Err(_) => {
                let mut doc = Json::object();
                doc.put("configuration", options.configuration().clone());
                doc
            }
        };
        let mut results = Json::object();
        results.put("keys verified successfuly", check.verified);
        results.put("keys failed", check.failed);
        doc.put("client verifications results", results);
        let text = serde_json::to_string_pretty(&doc)?;
        kvlab_report::write_atomic(path, text.as_bytes(), true)?;
    }
    Ok(check)
}
