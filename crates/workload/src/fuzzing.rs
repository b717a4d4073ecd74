//! The bodies of the fuzz targets (`crates/workload/fuzz/fuzz_targets/*.rs`), also run on
//! stable by the crate's fuzz smoke test. Not part of the supported API.
//!
//! Each body reads arbitrary bytes as one kind of file and panics only when an invariant
//! breaks: a parser or the workload construction behind it that panics, or fails with an
//! error that says nothing, does not name the file it was given or names a line past its
//! end; a key file whose keys, written back with [`escape_key`], do not read back the same.

use std::path::Path;
use std::sync::Arc;

use crate::{
    escape_key, CacheBenchConfig, CacheWorkload, CoreWorkload, KeyFile, KeyFileWorkload,
    MixGraphWorkload, Origin, Plan, Properties, Proportions, ValueFormat, WorkloadError,
};

/// The name fuzzed files are read under (errors that know the file must name it).
pub const NAME: &str = "fuzz-input";

/// Names the command line accepts besides a workload's own (as `kvlab run` passes them).
const OTHER_KNOWN: &[&str] = &["threadcount", "target", "db", "operationcount"];

/// Prefixes of store properties, accepted and left to the store.
const PASSTHROUGH: &[&str] = &["rocksdb.", "redis."];

/// Checks the invariants of an error from a file of `text`'s lines named `path`.
fn check_error(e: &WorkloadError, path: &Path, text: &[u8]) {
    let message = e.to_string();
    assert!(!message.trim().is_empty(), "an error that says nothing");
    let lines = text.split(|&b| b == b'\n').count();
    let origin = match e {
        WorkloadError::Syntax { path: p, line, .. } => Some((p, *line)),
        WorkloadError::InvalidValue { origin, .. }
        | WorkloadError::UnknownProperty { origin, .. }
        | WorkloadError::CacheBenchKey { origin, .. } => match origin {
            Origin::File { path, line } => Some((path, *line)),
            _ => None,
        },
        _ => None,
    };
    if let Some((p, line)) = origin {
        if p == path {
            assert!(
                message.contains(&format!("{}:{line}", path.display())),
                "an error that does not name {}:{line}: {message}",
                path.display()
            );
            assert!(
                (1..=lines).contains(&line),
                "an error at line {line} of {lines}: {message}"
            );
        }
    }
    if let WorkloadError::Syntax { path: p, .. } = e {
        assert!(
            message.len() > p.as_os_str().len() + 4,
            "an error that says nothing: {message}"
        );
    }
}

/// Reads `data` as a YCSB property file named `fuzz-input`, then builds the workload its
/// `workload` property selects, as `kvlab run -P fuzz-input` does (a cache or mixgraph
/// workload, otherwise a CoreWorkload), and the operation mix of a thread plan. Returns
/// whether the workload was built.
pub fn properties(data: &[u8]) -> bool {
    let path = Path::new(NAME);
    let text = String::from_utf8_lossy(data);
    let mut props = Properties::new();
    if let Err(e) = props.parse_str(&text, path) {
        check_error(&e, path, data);
        return false;
    }
    for (key, _) in props.iter() {
        assert!(
            matches!(props.origin(key), Some(Origin::File { line, .. }) if *line >= 1),
            "a property `{key}` without its line"
        );
    }
    if let Err(e) = Proportions::from_properties(&props) {
        check_error(&e, path, data);
    }
    let built = match props.get("workload") {
        Some(MixGraphWorkload::CLASS) => {
            match MixGraphWorkload::from_properties(&props, OTHER_KNOWN, PASSTHROUGH) {
                Ok(_) => true,
                Err(e) => {
                    assert!(
                        !e.to_string().trim().is_empty(),
                        "an error that says nothing"
                    );
                    false
                }
            }
        }
        Some(CacheWorkload::CLASS) => workload(
            CacheWorkload::from_properties(&props, OTHER_KNOWN, PASSTHROUGH),
            data,
        ),
        _ => workload(
            CoreWorkload::from_properties(&props, OTHER_KNOWN, PASSTHROUGH),
            data,
        ),
    };
    built
}

/// True for a workload; checks the error otherwise.
fn workload<W>(result: Result<W, WorkloadError>, data: &[u8]) -> bool {
    match result {
        Ok(_) => true,
        Err(e) => {
            check_error(&e, Path::new(NAME), data);
            false
        }
    }
}

/// Reads `data` as a CacheBench JSON config at `path` (its `valSizeDistFile` and
/// `popDistFile` are read beside it) and builds its workload. Returns whether it was
/// built.
pub fn cachebench(data: &[u8], path: &Path) -> bool {
    let text = String::from_utf8_lossy(data);
    match CacheBenchConfig::parse_str(&text, path, &[]) {
        Ok(config) => {
            for w in config.warnings() {
                assert!(
                    !w.to_string().trim().is_empty(),
                    "a warning that says nothing"
                );
            }
            match config.workload() {
                Ok(_) => true,
                Err(e) => {
                    check_error(&e, path, data);
                    false
                }
            }
        }
        Err(e) => {
            check_error(&e, path, data);
            false
        }
    }
}

/// Reads `data` as a key file named `fuzz-input`; its keys, escaped and written one a
/// line, must read back the same, and a key-file workload must build from them. Returns
/// the keys read.
pub fn key_file(data: &[u8]) -> usize {
    let path = Path::new(NAME);
    let keys = match KeyFile::parse(data, path) {
        Ok(keys) => keys,
        Err(e) => {
            check_error(&e, path, data);
            return 0;
        }
    };
    let mut written = Vec::new();
    for key in keys.iter() {
        assert!(!key.is_empty(), "an empty key");
        escape_key(key, &mut written);
        written.push(b'\n');
    }
    let again = KeyFile::parse(&written, path).expect("escaped keys read back");
    assert!(
        keys.iter().eq(again.iter()),
        "keys that do not read back the same"
    );
    let n = keys.len();
    if n > 0 {
        let props = Properties::new();
        let built = KeyFileWorkload::from_properties(
            Arc::new(keys),
            ValueFormat::Blob,
            &props,
            OTHER_KNOWN,
            PASSTHROUGH,
        );
        if let Err(e) = built {
            panic!("a key file of {n} keys gives no workload: {e}");
        }
    }
    n
}

/// Reads `data` as a thread plan named `fuzz-input`. Returns its thread count.
pub fn plan(data: &[u8]) -> usize {
    let path = Path::new(NAME);
    let text = String::from_utf8_lossy(data);
    match Plan::parse_str(&text, path) {
        Ok(plan) => {
            assert!(plan.threads() > 0, "a plan without threads");
            for thread in 0..plan.threads().min(1 << 16) {
                assert!(plan.group_of_thread(thread) < plan.groups().len());
            }
            let _ = plan.effective();
            plan.threads()
        }
        Err(e) => {
            check_error(&e, path, data);
            0
        }
    }
}
