//! The suite file's fuzz body and its stable smoke test. The suite parser lives in the
//! `kvlab` binary crate (it checks every child command line with the CLI's own parser),
//! which a cargo-fuzz workspace cannot depend on: the body runs here, on stable, over
//! inputs mutated from the repository's suite files with a fixed seed
//! (`KVLAB_FUZZ_ROUNDS` raises the rounds).
//!
//! The body panics only when an invariant breaks: a parser that panics, an error that
//! does not name the suite file or says nothing, or a plan without a store, a workload
//! or a round.

use std::path::{Path, PathBuf};

use super::matrix::Plan;

/// Reads `data` as the suite file `file` (property files relative to its directory) and
/// validates it. Returns whether it gave a plan.
pub(super) fn suite_file(data: &[u8], file: &Path) -> bool {
    let text = String::from_utf8_lossy(data);
    match Plan::parse(&text, file, Some(PathBuf::from("fuzz-out"))) {
        Ok(plan) => {
            assert!(plan.rounds >= 1, "a plan without rounds");
            assert!(!plan.stores.is_empty(), "a plan without stores");
            assert!(!plan.workloads.is_empty(), "a plan without workloads");
            true
        }
        Err(e) => {
            let message = format!("{e:#}");
            let name = file.display().to_string();
            assert!(
                message.contains(&name),
                "an error that does not name {name}: {message}"
            );
            assert!(
                message.len() > name.len() + 4,
                "an error that says nothing: {message}"
            );
            false
        }
    }
}

#[cfg(test)]
mod smoke {
    use std::path::PathBuf;

    use kvlab_fuzzkit::{rounds, Mutator};

    use super::suite_file;

    /// Tokens of TOML and of suite files: separators, quotes, tables, keys and numbers on
    /// the edges.
    const INTERESTING: &[&[u8]] = &[
        b"\n",
        b"=",
        b"\"",
        b"'",
        b"\"\"\"",
        b"[",
        b"]",
        b"[[store]]\n",
        b"[[workload]]\n",
        b"[matrix]\n",
        b"[[cell]]\n",
        b"{",
        b"}",
        b",",
        b"#",
        b"\\",
        b"\\u",
        b"0",
        b"-1",
        b"1e400",
        b"nan",
        b"18446744073709551616",
        b"true",
        b"rounds = ",
        b"spawn = ",
        b"memtier = ",
        b"properties = [\"",
        b"duration = \"",
        b"s\"",
        b"\xff",
    ];

    /// The repository's suite files, each with its path (property files are relative to
    /// it).
    fn seeds() -> Vec<(PathBuf, Vec<u8>)> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut seeds = Vec::new();
        for dir in ["seed-000", "seed-002", "seed-004"] {
            let path = root.join(dir).join("suite.toml");
            let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            seeds.push((path, text));
        }
        seeds
    }

    #[test]
    fn suite_files_survive_mutation() {
        let seeds = seeds();
        for (path, text) in &seeds {
            assert!(suite_file(text, path), "{} gave no plan", path.display());
        }
        let bytes: Vec<Vec<u8>> = seeds.iter().map(|(_, b)| b.clone()).collect();
        let mut m = Mutator::new(&bytes, INTERESTING);
        // Few rounds: a valid suite builds every workload of its cells (ζ sums included).
        for _ in 0..rounds(30) {
            for (i, (path, _)) in seeds.iter().enumerate() {
                suite_file(&m.mutate(i), path);
            }
        }
    }
}
