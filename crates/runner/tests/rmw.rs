//! A read-modify-write reaches the store as a read and an update, shaped as YCSB's
//! `doTransactionReadModifyWrite` shapes them.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use kvlab_core::{Batch, Capabilities, OpKind, Outcome, Session, Store, StoreError};
use kvlab_runner::{run, RunPlan};
use kvlab_workload::{CoreWorkload, Properties};

/// Per request the store saw: its kind, whether it read every field, and how many fields
/// it named or wrote.
type Seen = Arc<Mutex<Vec<(OpKind, bool, usize)>>>;

/// A store that keeps the shape of every request and completes it at once.
struct Recording(Seen);

struct RecordingSession(Seen);

impl Store for Recording {
    type Session = RecordingSession;

    fn name(&self) -> &'static str {
        "recording"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }

    fn session(&self) -> Result<RecordingSession, StoreError> {
        Ok(RecordingSession(self.0.clone()))
    }
}

impl Session for RecordingSession {
    fn execute(&mut self, batch: &mut Batch) -> impl std::future::Future<Output = ()> + Send {
        let mut seen = self
            .0
            .lock()
            .expect("no test thread panicked holding the log");
        for slot in batch.slots_mut() {
            let r = &slot.request;
            let fields = match r.kind {
                OpKind::Read => r.read.names().map_or(0, |n| n.len()),
                _ => r.value.fields().len(),
            };
            seen.push((r.kind, r.read.names().is_none(), fields));
            let outcome = match r.kind {
                OpKind::Read => Ok(Outcome::Hit { bytes: 1 }),
                _ => Ok(Outcome::Written { bytes: 1 }),
            };
            slot.complete(outcome);
        }
        std::future::ready(())
    }
}

fn workload_f(overrides: &[&str]) -> Arc<CoreWorkload> {
    let mut p = Properties::new();
    p.load_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/ycsb/workloadf"),
    )
    .expect("workloadf loads");
    for o in overrides {
        p.set_override(o).expect("override parses");
    }
    Arc::new(CoreWorkload::from_properties(&p, &[], &[]).expect("workload validates"))
}

fn shapes(overrides: &[&str]) -> Vec<(OpKind, bool, usize)> {
    let seen = Seen::default();
    let plan = RunPlan {
        operations: Some(2000),
        ..RunPlan::default()
    };
    let wl = workload_f(overrides);
    run(
        &Recording(seen.clone()),
        &wl,
        &plan,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .expect("the run completes");
    let seen = seen.lock().expect("the run is over");
    seen.clone()
}

#[test]
fn read_modify_writes_read_one_field_and_write_all_with_writeallfields() {
    // Workload F is reads and read-modify-writes, no updates: every update the store
    // sees is a read-modify-write's. With readallfields=false YCSB reads one random field,
    // however many fields the update writes.
    let seen = shapes(&["readallfields=false", "writeallfields=true"]);
    let updates = seen.iter().filter(|s| s.0 == OpKind::Update).count();
    assert!(updates > 800, "about half of 2000 operations: {updates}");
    for (kind, read_all, fields) in &seen {
        match kind {
            OpKind::Read => assert_eq!((*read_all, *fields), (false, 1), "one field read"),
            OpKind::Update => assert_eq!(*fields, 10, "every field written"),
            other => panic!("workload F has no {other:?}"),
        }
    }
    // readallfields=true: the read reads every field, the update writes one.
    for (kind, read_all, fields) in shapes(&[]) {
        match kind {
            OpKind::Read => assert!(read_all),
            _ => assert_eq!(fields, 1),
        }
    }
}
