//! The checks every phase's options pass before anything runs, and the refusal they
//! end in (exit code 2 in the command line).

use anyhow::Result;
use kvlab_runner::Warmup;
use kvlab_workload::Properties;

use crate::options::PhaseOptions;
use crate::plan::parse_duration;
use crate::{Flag, Refusal, StoreInfo};

/// A usage error of the phase: the one sentence a user sees (exit code 2), as a
/// [`Refusal`].
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    Refusal::new(msg).into()
}

/// A [`Refusal`] as an error of the phase.
pub fn refused(r: Refusal) -> anyhow::Error {
    r.into()
}

/// Parses `--warmup`: a time (`10s`) or an operation count (`50000ops`).
pub fn parse_warmup(s: &str) -> Result<Warmup> {
    let t = s.trim();
    if let Some(n) = t.strip_suffix("ops") {
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| usage(format!("--warmup `{s}`: expected e.g. 10s or 50000ops")))?;
        return Ok(Warmup::Ops(n));
    }
    let d = parse_duration(t).map_err(|e| usage(format!("--warmup: {e}; or e.g. 50000ops")))?;
    Ok(if d.is_zero() {
        Warmup::None
    } else {
        Warmup::Time(d)
    })
}

/// The names `--merge-operator` takes: RocksDB's built-in merge operators by the names
/// `db_bench -merge_operator` takes, or none (`kvlab_stores::rocksdb::MERGE_OPERATORS`,
/// kept here for the command line and its completions without the store's feature).
pub const MERGE_OPERATORS: [&str; 5] = ["put", "uint64add", "stringappend", "max", "none"];

/// The store property `--merge-operator` sets.
const MERGE_OPERATOR_PROPERTY: &str = "rocksdb.merge_operator";

/// Folds `--merge-operator NAME` into the properties as `rocksdb.merge_operator=NAME`;
/// the same property set to another operator (by `-p` or a property file) is a usage
/// error naming both.
pub fn apply_merge_operator(args: &PhaseOptions, props: &mut Properties) -> Result<()> {
    let Some(name) = &args.merge_operator else {
        return Ok(());
    };
    if let Some(set) = props.get(MERGE_OPERATOR_PROPERTY) {
        if set != name {
            let origin = props
                .origin(MERGE_OPERATOR_PROPERTY)
                .map_or_else(|| "-p".to_string(), |o| o.to_string());
            return Err(usage(format!(
                "--merge-operator {name} and {MERGE_OPERATOR_PROPERTY}={set} (from {origin}) \
                 disagree: give one of them"
            )));
        }
    }
    props.set(
        MERGE_OPERATOR_PROPERTY,
        name,
        kvlab_workload::Origin::CommandLine,
    );
    Ok(())
}

/// Refuses store flags that do not apply to `--db` (a usage error, exit code 2), so that a
/// flag the store would ignore cannot make a result look configured when it was not:
/// `--cache-size` on rocksdb, `--path` on redis, `--spawn` on rocksdb, `--connections`
/// on an embedded store, `--merge-operator` on another store than rocksdb, another
/// store's `-p` option. Every sentence comes from the store table
/// ([`crate::STORES`]), which `kvlab suite` checks its store entries against too.
/// Unknown store names are left to the store's own error.
pub fn check_store_flags(args: &PhaseOptions, props: &Properties) -> Result<()> {
    let Some(store) = StoreInfo::find(&args.db) else {
        return Ok(());
    };
    let db = store.name;
    // Before the property check: `--merge-operator` stands in `rocksdb.merge_operator`.
    if let Some(name) = args
        .merge_operator
        .as_deref()
        .filter(|_| !store.takes(Flag::MergeOperator))
    {
        return Err(usage(format!(
            "--merge-operator {name} does not apply to --db {db}: it is RocksDB's merge \
             operator (-p rocksdb.merge_operator); on --db {db} a replay's merges are puts"
        )));
    }
    // Another store's option (`-p lmdb.map_size=…` on rocksdb) would be ignored.
    for (name, _) in props.iter() {
        store.check_option(name).map_err(refused)?;
    }
    if args.connections > 1 {
        store
            .check_as(
                Flag::Connections,
                &format!("--connections {}", args.connections),
            )
            .map_err(|e| usage(format!("{e}; use --threads")))?;
    }
    for (flag, given) in [
        (Flag::Path, args.path.is_some()),
        (Flag::CacheSize, args.cache_size.is_some()),
        (Flag::DiskPath, args.disk_path.is_some()),
        (Flag::DiskSize, args.disk_size.is_some()),
        (Flag::Url, args.url.is_some()),
        (Flag::Spawn, args.spawn.is_some()),
        (Flag::Fault, !args.faults.is_empty()),
        (Flag::Toxiproxy, args.toxiproxy.is_some()),
        (Flag::Timeout, args.timeout.is_some()),
    ] {
        if given {
            store.check(flag).map_err(refused)?;
        }
    }
    Ok(())
}
