//! The bodies of kvlab-memtier's fuzz checks, run on stable by the crate's fuzz smoke
//! test. Not part of the supported API.
//!
//! Each body reads arbitrary bytes as one kind of input and panics only when an
//! invariant breaks: a parser that panics or fails with an error that says nothing; an
//! import-file error that does not start with the file's name and a line within it; an
//! import file whose items, written back as memtier writes them, do not read back the
//! same; a command whose arguments, quoted again, do not split into the same words; a
//! command line whose workload is accepted but breaks its own bounds.

use std::cell::RefCell;
use std::path::Path;

use clap::{CommandFactory, FromArgMatches, Parser};

use crate::args::MemtierArgs;
use crate::IMPORT_HEADER;
use crate::{split_args, write_import_item, ArbitraryCommand, ImportedItems, MemtierError};

/// The name fuzzed files are read under (errors must name it).
pub const NAME: &str = "fuzz-input";

/// Reads `data` as a `--data-import` file named `fuzz-input`. Returns the items read.
pub fn import(data: &[u8]) -> usize {
    let path = Path::new(NAME);
    let items = match ImportedItems::parse(data, path) {
        Ok(items) => items,
        Err(e) => {
            let text = e.to_string();
            let lines = data.split(|&b| b == b'\n').count();
            match &e {
                MemtierError::Syntax { line, message, .. } => {
                    assert!(!message.trim().is_empty(), "an error that says nothing");
                    assert!(
                        text.starts_with(&format!("{NAME}:{line}: ")),
                        "an error that does not name the file and line: {text}"
                    );
                    assert!(
                        (1..=lines).contains(line),
                        "an error at line {line} of {lines}: {text}"
                    );
                }
                _ => panic!("an import error without its line: {text}"),
            }
            return 0;
        }
    };
    let mut written = format!("{IMPORT_HEADER}\n").into_bytes();
    for i in 0..items.len() {
        write_import_item(&mut written, items.key(i), items.value(i), items.exptime(i))
            .expect("writing to memory");
    }
    let again = ImportedItems::parse(&written, path)
        .unwrap_or_else(|e| panic!("items written back do not read back: {e}"));
    assert_eq!(again, items, "items that do not read back the same");
    let max = (0..items.len()).map(|i| items.value(i).len()).max();
    assert_eq!(items.max_value_bytes(), max.unwrap_or(0));
    items.len()
}

/// Reads `data` as a `--command` text. A command's words, each quoted with every byte
/// written `\xHH`, split into the same words. Returns the number of arguments.
pub fn command(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match ArbitraryCommand::parse(&text) {
        Ok(command) => {
            let words = split_args(&text).expect("a command that parsed splits");
            assert_eq!(words.len(), command.args.len());
            let mut quoted = String::new();
            for word in &words {
                quoted.push('"');
                for b in word {
                    quoted.push_str(&format!("\\x{b:02x}"));
                }
                quoted.push_str("\" ");
            }
            let again = split_args(&quoted)
                .unwrap_or_else(|e| panic!("`{quoted}`, quoted from `{text}`: {e}"));
            assert_eq!(
                again, words,
                "words that do not split the same quoted again"
            );
            assert!(!command.name().is_empty() || words[0].is_empty());
            command.args.len()
        }
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.starts_with("--command `"),
                "an error that does not name the command: {message}"
            );
            assert!(
                message.len() > "--command ``: ".len() + text.len(),
                "an error that says nothing: {message}"
            );
            0
        }
    }
}

/// memtier's flags alone, as `kvlab memtier` parses them after its own.
#[derive(Parser)]
#[command(name = "memtier_benchmark", disable_help_flag = true)]
struct Flags {
    #[command(flatten)]
    memtier: MemtierArgs,
}

/// The `args` fuzz target: `data` as a `kvlab memtier` command line, one word between NUL
/// bytes, parsed and turned into a workload as `kvlab memtier` does (a `--data-import`
/// file is not read: the `import` target fuzzes those). Returns whether the workload was
/// accepted.
pub fn args(data: &[u8]) -> bool {
    thread_local! {
        // Built once: building clap's command for every input (and checking it, in a
        // build with debug assertions) cost more than parsing.
        static COMMAND: RefCell<clap::Command> = RefCell::new(Flags::command());
    }
    let words = data
        .split(|&b| b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned());
    let argv = std::iter::once("kvlab-memtier".to_string()).chain(words);
    let parsed = COMMAND
        .with(|c| c.borrow_mut().try_get_matches_from_mut(argv))
        .and_then(|m| Flags::from_arg_matches(&m));
    let mut args = match parsed {
        Ok(flags) => flags.memtier,
        Err(e) => {
            assert!(
                !e.to_string().trim().is_empty(),
                "a command-line error that says nothing"
            );
            return false;
        }
    };
    args.data_import = None;
    for w in args.warnings() {
        assert!(!w.trim().is_empty(), "a warning that says nothing");
    }
    let _ = (args.url(), args.store_options(), args.traffic_options());
    let _ = (
        args.seed(),
        args.percentiles(),
        args.target_rate(),
        args.wait(),
    );
    let _ = (args.total_requests(), args.duration(), args.data_verify());
    assert!(args.connections() >= 1 && args.pipeline() >= 1);
    match args.spec() {
        Ok(spec) => {
            assert!(
                spec.key_minimum <= spec.key_maximum,
                "an accepted key range {}..{} that is reversed",
                spec.key_minimum,
                spec.key_maximum
            );
            true
        }
        Err(e) => {
            assert!(!e.trim().is_empty(), "a workload error that says nothing");
            false
        }
    }
}
