//! The bodies of the fuzz targets (`crates/report/fuzz/fuzz_targets/*.rs`), also run on
//! stable by the crate's fuzz smoke test. Not part of the supported API.
//!
//! Each body reads arbitrary bytes as one file of a run's output and panics only when an
//! invariant breaks: a reader that panics, or fails with an error that says nothing or
//! does not name the file (and, for CSV files, a line within it); a `result.json` whose
//! document, written out again, does not read back the same.

use std::path::Path;

use crate::{LatencyLog, MonitorSeries, ReportError, ResultDocument, Timeline};

/// The name fuzzed files are read under (errors must name it).
pub const NAME: &str = "fuzz-input";

/// Checks an error of a file of `text`.
fn check_error(e: &ReportError, text: &[u8]) {
    let message = e.to_string();
    assert!(
        message.starts_with(NAME),
        "an error that does not name the file: {message}"
    );
    assert!(
        message.len() > NAME.len() + 2,
        "an error that says nothing: {message}"
    );
    if let ReportError::Csv { line, .. } = e {
        let lines = text.split(|&b| b == b'\n').count();
        assert!(
            message.starts_with(&format!("{NAME}:{line}: ")),
            "an error that does not name its line: {message}"
        );
        assert!(
            (1..=lines).contains(line),
            "an error at line {line} of {lines}: {message}"
        );
    }
}

/// Reads `data` as a `result.json`. A document written out with
/// [`ResultDocument::to_json_pretty`] reads back equal, and writes out the same again.
/// Returns whether it parsed.
pub fn result_json(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    let doc = match ResultDocument::from_json(&text) {
        Ok(doc) => doc,
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.len() > "parsing result document: ".len(),
                "an error that says nothing: {message}"
            );
            assert!(
                message.contains("line "),
                "a JSON error without its line: {message}"
            );
            return false;
        }
    };
    let json = doc.to_json_pretty();
    let again = ResultDocument::from_json(&json)
        .unwrap_or_else(|e| panic!("a document written out does not read back: {e}\n{json}"));
    assert_eq!(again, doc, "a document that does not read back equal");
    assert_eq!(
        again.to_json_pretty(),
        json,
        "a document that writes out differently"
    );
    true
}

/// Reads `data` as a `timeline.csv`. Returns the rows read.
pub fn timeline(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match Timeline::parse(&text, Path::new(NAME)) {
        Ok(t) => t.rows.len(),
        Err(e) => {
            check_error(&e, data);
            0
        }
    }
}

/// Reads `data` as a `latency.hlog`. Returns the values recorded in all.
pub fn latency_log(data: &[u8]) -> u64 {
    match LatencyLog::parse(data, Path::new(NAME)) {
        Ok(log) => log.by_tag.values().map(|h| h.len()).sum::<u64>() + log.overall.len(),
        Err(e) => {
            check_error(&e, data);
            0
        }
    }
}

/// Reads `data` as a monitor series (`monitor/*.csv`). Every series has a value (or
/// none) per row. Returns the rows read.
pub fn monitor(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match MonitorSeries::parse("fuzz", &text, Path::new(NAME)) {
        Ok(m) => {
            for (name, values) in &m.columns {
                assert_eq!(values.len(), m.time_s.len(), "column `{name}`");
            }
            m.time_s.len()
        }
        Err(e) => {
            check_error(&e, data);
            0
        }
    }
}
