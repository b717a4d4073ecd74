//! `kvlab replay TRACE --db …`: a trace's requests against any store, as a run phase
//! (same result files as `run`), with the replay's own options.

use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use kvlab_workload::{ReplaySpec, ReplayWorkload};

use crate::args::{usage, PhaseArgs};
use crate::trace_cmd;
use kvlab_lab::options::Replay;

/// `kvlab replay`.
#[derive(Args, Debug)]
pub(crate) struct ReplayCommand {
    /// The trace and how to read it (`-`: standard input, read once as the replay goes;
    /// not with `--preload`, which reads the trace before the replay reads it again).
    #[command(flatten)]
    pub(crate) input: trace_cmd::InputArgs,
    /// Timestamps are divided by this (2: twice as fast as traced): an open loop whose
    /// latency is also measured from each request's intended time. `max`: as fast as
    /// possible (closed loop).
    #[arg(long, value_name = "FACTOR|max", default_value = "1", value_parser = parse_speed)]
    pub(crate) speed: Speed,
    /// Before replaying, insert every key the trace reads before writing it, with its
    /// size, so that a replay on an empty store sees the hits production saw.
    #[arg(long)]
    pub(crate) preload: bool,
    /// Follow a read that misses with a set of the key (a look-aside cache client).
    #[arg(long)]
    pub(crate) look_aside: bool,
    /// Value size of writes (and preloaded keys) when the trace has no sizes.
    #[arg(long, value_name = "SIZE", default_value = "100", value_parser = parse_size)]
    pub(crate) value_size: u32,
    /// Replay only the first N requests.
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<u64>,
    #[command(flatten)]
    pub(crate) phase: PhaseArgs,
}

/// `--speed`: a factor, or as fast as possible.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Speed {
    Factor(f64),
    Max,
}

fn parse_speed(s: &str) -> Result<Speed, String> {
    if s.eq_ignore_ascii_case("max") {
        return Ok(Speed::Max);
    }
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f.is_finite() => Ok(Speed::Factor(f)),
        _ => Err(format!(
            "expected a factor above 0 (e.g. 2) or `max`; got `{s}`"
        )),
    }
}

fn parse_size(s: &str) -> Result<u32, String> {
    kvlab_core::parse_bytes(s)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| format!("expected a size such as 100, 4KiB or 1MiB; got `{s}`"))
}

/// Opens the trace (reading only its first records: the replay reads it as it goes)
/// and makes the run phase's arguments.
pub(crate) fn phase_args(cmd: ReplayCommand) -> Result<PhaseArgs> {
    let stdin = cmd.input.trace.as_os_str() == "-";
    if stdin && cmd.preload {
        return Err(usage(
            "--preload reads the trace before the replay reads it again: give a file, not `-`",
        ));
    }
    if cmd.phase.memtier.given() || !cmd.phase.property_files.is_empty() {
        return Err(usage(
            "a replay's requests come from its trace: no -P files or memtier flags",
        ));
    }
    if cmd.limit == Some(0) {
        return Err(usage(
            "--limit 0 replays no request: give --limit N (N ≥ 1), or leave it out to replay \
             the whole trace",
        ));
    }
    let spec = ReplaySpec {
        path: cmd.input.trace.clone(),
        open: cmd.input.options(None),
        speed: match cmd.speed {
            Speed::Factor(f) => Some(f),
            Speed::Max => None,
        },
        default_value_size: cmd.value_size,
        limit: cmd.limit,
        look_aside: cmd.look_aside,
        interval: cmd.phase.interval,
    };
    // A trace that cannot be opened or told, or whose first records are bad, stops the
    // replay before it starts: a usage error, as a property file that cannot be read.
    let workload = ReplayWorkload::open(spec).map_err(|e| usage(e.to_string()))?;
    eprintln!(
        "kvlab: replaying {} ({}) at {}",
        if stdin {
            "standard input".to_string()
        } else {
            cmd.input.trace.display().to_string()
        },
        workload.info().format,
        match cmd.speed {
            Speed::Factor(f) => format!("{f}× the traced pace"),
            Speed::Max => "full speed (closed loop)".to_string(),
        }
    );
    let mut args = cmd.phase;
    recorded_options(workload.info(), &mut args);
    if args.workload_label.is_none() {
        let name = if stdin {
            "stdin".to_string()
        } else {
            cmd.input
                .trace
                .file_name()
                .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned())
        };
        args.workload_label = Some(format!("replay {name}"));
    }
    args.replay = Some(Replay {
        workload: Arc::new(workload),
        preload: cmd.preload,
    });
    Ok(args)
}

/// A recording of a run on the store the replay runs on carries the options that laid
/// its records out (`store_option.model` of a Redis run): the replay takes each one the
/// command line does not set, and says so, so that it reads records the way the run
/// wrote them.
fn recorded_options(info: &kvlab_trace::TraceInfo, args: &mut PhaseArgs) {
    let recorded = |name: &str| info.meta.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    if recorded("store").map(String::as_str) != Some(args.db.as_str()) {
        return;
    }
    for (key, value) in &info.meta {
        let Some(name) = key.strip_prefix(kvlab_lab::phase::RECORDED_OPTION) else {
            continue;
        };
        let property = format!("{}.{name}", args.db);
        let given = args
            .properties
            .iter()
            .any(|p| p.split('=').next().map(str::trim) == Some(property.as_str()));
        if given {
            continue;
        }
        eprintln!(
            "kvlab: the recording was made with {property}={value}: replaying with it \
             (-p {property}=… chooses another)"
        );
        args.properties.push(format!("{property}={value}"));
    }
}
