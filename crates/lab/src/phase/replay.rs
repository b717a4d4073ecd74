//! What a trace replay adds to a phase: the store's capabilities and `--preload` before
//! it, its notes, failures and intended operations after.

use anyhow::Result;
use kvlab_core::Store;
use kvlab_runner::RunOutcome;

use crate::phase::hook::PhaseHook;
use crate::phase::open::load_first;
use crate::phase::PhaseSpec;

/// Before the measured replay: tells the replay what the store can do and, with
/// `--preload`, loads the keys the trace reads before writing them.
pub fn before<S: Store>(ctx: &PhaseSpec, store: &S) -> Result<()> {
    let Some(replay) = &ctx.options.replay else {
        return Ok(());
    };
    replay.workload.adapt_to(&store.capabilities());
    if !replay.preload {
        return Ok(());
    }
    let preload = replay.workload.preload().map_err(|e| anyhow::anyhow!(e))?;
    eprintln!(
        "kvlab: preloading {} keys the trace reads before it writes them ({} requests)",
        preload.len(),
        replay.workload.requests().unwrap_or(0)
    );
    load_first(ctx, store, &preload, "the replay's keys")
}

/// A timed replay's timeline gets, beside what completed in each interval, how many
/// requests the trace made due in it (`intended_ops`).
fn intended_into(ctx: &PhaseSpec, rows: &mut [kvlab_measure::TimelineRow]) {
    let Some(replay) = &ctx.options.replay else {
        return;
    };
    // Counted by the replay's reader as it read the trace (or by the preload pass).
    let intended = replay.workload.intended_per_interval();
    if intended.is_empty() {
        return;
    }
    for (i, row) in rows.iter_mut().enumerate() {
        row.intended_ops = Some(intended.get(i).copied().unwrap_or(0));
    }
    // The last row runs to the end of the run, which may pass a whole second by a hair
    // (a request due at 3.0001 s of a run that ended at 3.0025 s): what the trace made
    // due after the rows' whole seconds belongs to it, so every request is due once.
    let beyond: u64 = intended.iter().skip(rows.len()).sum();
    if let Some(last) = rows.last_mut() {
        if beyond > 0 {
            last.intended_ops = Some(last.intended_ops.unwrap_or(0) + beyond);
        }
    }
}

/// Whether the replayed trace went bad before its end (every request read before the
/// damage was replayed; the run then fails, exit code 1).
fn trace_failed(ctx: &PhaseSpec) -> bool {
    ctx.options
        .replay
        .as_ref()
        .is_some_and(|r| r.workload.error().is_some())
}

/// What the replay could not send, merges RocksDB's uint64add counts as 0, a reader
/// error, and a replay whose every read missed, as result notes.
fn notes(ctx: &PhaseSpec, outcome: &RunOutcome) -> Vec<String> {
    let Some(replay) = &ctx.options.replay else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    if outcome.keys_hit == 0
        && outcome.keys_missed > 0
        && !replay.preload
        && !replay.workload.look_aside()
    {
        notes.push(format!(
            "replay: every read ({}) missed: the store held none of the keys the trace \
             reads (a trace that reads keys it never writes, on a store that starts empty); \
             --preload loads those keys with their sizes before the replay, --look-aside \
             sets each missed key as a look-aside cache client does",
            outcome.keys_missed
        ));
    }
    let skipped = replay.workload.skipped();
    if !skipped.is_empty() {
        let list: Vec<String> = skipped.iter().map(|(op, n)| format!("{op} {n}")).collect();
        notes.push(format!(
            "replay: requests the store cannot do were not sent: {}",
            list.join(", ")
        ));
    }
    if replay.workload.late_ttls() {
        notes.push(
            "replay: the trace's TTLs begin after the requests read before the run: a store \
             that must be told of TTLs when it opens (moka: -p moka.per_entry_ttl=true) was not"
                .into(),
        );
    }
    let (merges, not_8_bytes) = replay.workload.merge_operands();
    let merge_operator = ctx.props.get("rocksdb.merge_operator");
    if ctx.options.db == "rocksdb" && merge_operator == Some("uint64add") && not_8_bytes > 0 {
        notes.push(format!(
            "replay: {not_8_bytes} of {merges} merges had an operand that is not 8 bytes, \
             which RocksDB's uint64add counts as 0 (it adds 8-byte little-endian integers; a \
             trace carries operand sizes, not their bytes)"
        ));
    }
    if let Some(e) = replay.workload.error() {
        notes.push(format!(
            "replay failed: the trace could not be read to its end (every request before \
             the damage was replayed): {e}"
        ));
    }
    notes
}

/// A trace replay's hook: the trace's own failures and notes, and how many requests the
/// trace made due in each interval of the timeline.
pub struct ReplayHook;

impl PhaseHook for ReplayHook {
    fn notes(&self, ctx: &PhaseSpec, outcome: &RunOutcome) -> Vec<String> {
        notes(ctx, outcome)
    }

    fn failed(&self, ctx: &PhaseSpec) -> bool {
        trace_failed(ctx)
    }

    fn timeline(&self, ctx: &PhaseSpec, rows: &mut [kvlab_measure::TimelineRow]) {
        intended_into(ctx, rows)
    }
}
