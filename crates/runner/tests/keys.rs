//! Per-key hit and miss counts of a run: a multi-key read is one operation that counts
//! each of its keys.

use std::sync::atomic::AtomicBool;

use kvlab_core::{OpKind, Status};
use kvlab_runner::{run, RunPlan};
use kvlab_stores::null::NullStore;
use kvlab_workload::memtier::{MemtierSpec, MemtierWorkload, Ratio};

#[test]
fn multi_key_reads_are_one_operation_each_and_count_every_key() {
    // Per client and cycle: 1 SET, then GETs of 4, 4 and 2 keys.
    let spec = MemtierSpec {
        ratio: Ratio { sets: 1, gets: 10 },
        multi_key_get: 4,
        requests: Some(400),
        total_clients: 2,
        ..MemtierSpec::default()
    };
    let workload = std::sync::Arc::new(MemtierWorkload::new(spec).unwrap());
    let plan = RunPlan {
        threads: 2,
        operations: Some(800),
        ..RunPlan::default()
    };
    let outcome = run(
        &NullStore,
        &workload,
        &plan,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let reads = outcome.total.count(OpKind::Read);
    assert_eq!((outcome.total.operations(), reads), (800, 600));
    assert_eq!(outcome.total.status_count(OpKind::Read, Status::Ok), 600);
    // 200 cycles of 10 keys read in 3 requests.
    assert_eq!((outcome.keys_hit, outcome.keys_missed), (2000, 0));
}
