//! memtier_benchmark compatibility beside its workload: its command line ([`args`]:
//! every flag, memtier's refusals, and the [`MemtierSpec`] they describe), its report
//! ([`report`]: the table and `--json-out-file`), its result files ([`files`]:
//! `--hdr-file-prefix`, `--client-stats`), its flags on `kvlab run` ([`run`]), `-D`
//! ([`debug`]) and `--data-verify` ([`verify`]).
//!
//! The workload itself — key patterns, the SET/GET cycle, `--command` lines, WAIT,
//! `--data-import` files — is `kvlab_workload::memtier`, re-exported here whole, so a
//! generator of requests does not depend on this crate's report, runner or network
//! code.

pub mod args;
pub mod debug;
pub mod files;
pub mod fuzzing;
pub mod json;
pub mod report;
pub mod run;
pub mod verify;

pub use kvlab_workload::memtier::*;
