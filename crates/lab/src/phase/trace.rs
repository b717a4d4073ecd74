//! A workload as a trace, without a file: the requests `kvlab run --db null --threads 1
//! --record T` would record, handed from the run's tap to a simulator's trace as they are
//! made (`kvlab sim -P FILE`).

use std::sync::Arc;

use anyhow::Result;
use kvlab_cachesim::{LoadOptions, SimTrace};
use kvlab_report::Phase;
use kvlab_stores::null::NullStore;
use kvlab_workload::AnyWorkload;

use crate::options::PhaseOptions;
use crate::phase::open::preload;
use crate::phase::run_once;
use crate::phase::select::select_phase;

/// The requests of a run of `options`' workload against the null store (one client, the
/// options' seed), as a simulator's trace loaded with `load`: `limit` operations, else the
/// workload's operation count. The null store answers every read with an empty value, so
/// a look-aside workload issues no fills (the simulator's miss inserts the object, which
/// is what a fill does); a read of a cache workload's key is sized as the key's value.
/// Memory is bounded by the recorder's queue: nothing is written to disk.
///
/// `name` names the workload in what is said on stderr.
pub fn workload_trace(
    options: PhaseOptions,
    limit: Option<u64>,
    load: LoadOptions,
    name: &str,
) -> Result<SimTrace> {
    let mut ctx = select_phase(Phase::Run, options)?;
    ctx.plan.duration = None;
    ctx.plan.operations = Some(
        limit
            .or(ctx.plan.operations)
            .unwrap_or_else(|| ctx.workload.operation_count()),
    );
    eprintln!(
        "kvlab: generating {} operations of {name} (seed {}, one client, as `kvlab run --db null --threads 1`)",
        ctx.plan.operations.unwrap_or(0),
        ctx.plan.seed,
    );
    let store = NullStore;
    // The preload is not part of the workload's requests: the tap comes after it.
    preload(&ctx, &store, "the null store")?;
    let (recorder, stream) = kvlab_trace::TraceRecorder::streaming();
    let recorder = Arc::new(recorder);
    ctx.plan.tap = Some(Arc::clone(&recorder) as Arc<dyn kvlab_core::Tap>);
    // The null store returns empty values. A cache workload's key has one value size
    // (CacheBench's model): a read of it gets that size, as a store holding the key
    // would return — byte mode needs it, object mode is unchanged. Other reads without a
    // value take their object's nearest written size (LoadOptions).
    let cache = match &ctx.workload {
        AnyWorkload::Cache(w) => Some(Arc::clone(w)),
        _ => None,
    };
    let records = stream.map(|mut rec| {
        if let Some(w) = &cache {
            if rec.op.is_read() && rec.value_size == 0 {
                if let Some(i) = w.key_index(&rec.key) {
                    rec.value_size = w.value_size_of(i) as u64;
                }
            }
        }
        Ok(rec)
    });
    let (trace, ran) = std::thread::scope(|scope| {
        let generator = scope.spawn(|| {
            let ran = run_once(&ctx, &store, None, 1).map(|_| ());
            // Ends the stream, also after a failed run.
            let finished = recorder.finish().map(|_| ()).map_err(anyhow::Error::from);
            ran.and(finished)
        });
        // Reading ends with the stream; a trace that fails to build drops the stream,
        // which lets the run finish without a reader.
        let trace = SimTrace::from_records(records, load).map_err(|e| anyhow::anyhow!(e));
        let ran = generator
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the workload's generator panicked")));
        (trace, ran)
    });
    ran?;
    let trace = trace?;
    eprintln!(
        "kvlab: {} requests, {} objects",
        trace.len(),
        trace.n_objects()
    );
    Ok(trace)
}
