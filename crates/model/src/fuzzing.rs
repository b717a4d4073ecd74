//! The bodies of kvlab-model's fuzz checks, run on stable by the crate's fuzz smoke
//! test. Not part of the supported API.
//!
//! The body reads arbitrary bytes as a model file (what `kvlab model fit` writes and
//! `kvlab run --model` reads) and panics only when an invariant breaks: a reader that
//! panics, or fails with an error that does not start with the file's name and a line
//! within it (0 for the whole file), or says nothing; a model that, written out with [`Model::to_toml`], does
//! not read back equal or writes out differently the second time.

use std::path::Path;

use crate::{Model, ModelError};

/// The name fuzzed files are read under (errors must name it).
pub const NAME: &str = "fuzz-input";

/// Reads `data` as a model file named `fuzz-input`. Returns whether it was read.
pub fn model_file(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    let path = Path::new(NAME);
    let model = match Model::from_toml(&text, path) {
        Ok(model) => model,
        Err(e) => {
            let message = e.to_string();
            let (ModelError::Key { line, .. } | ModelError::Syntax { line, .. }) = &e else {
                panic!("a model-file error without its line: {message}");
            };
            let lines = text.lines().count().max(1);
            assert!(
                message.starts_with(&format!("{NAME}:{line}: ")),
                "an error that does not name the file and line: {message}"
            );
            assert!(
                // Line 0: the whole file, or a key not written in it (as documented).
                *line <= lines,
                "an error at line {line} of {lines}: {message}"
            );
            assert!(
                message.len() > format!("{NAME}:{line}: ").len(),
                "an error that says nothing: {message}"
            );
            return false;
        }
    };
    let written = model.to_toml();
    let again = Model::from_toml(&written, path)
        .unwrap_or_else(|e| panic!("a model written out does not read back: {e}\n{written}"));
    assert_eq!(
        again, model,
        "a model that does not read back equal:\n{written}"
    );
    assert_eq!(
        again.to_toml(),
        written,
        "a model that writes out differently"
    );
    let _ = model.to_config();
    let _ = model.db_bench_args();
    true
}
