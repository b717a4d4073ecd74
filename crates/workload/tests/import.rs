//! Import, key-file and plan workloads, driven the way the runner drives them: `next`
//! for each request, then `completed` with the slot.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

use kvlab_core::{OpKind, Outcome, Slot};
use kvlab_workload::{
    ImportSpec, ImportWorkload, KeyFile, KeyFileWorkload, KeySample, OpSource, Plan, PlanWorkload,
    Properties, Proportions, Ticket, TrailingDelimiter, ValueFormat, Workload,
};

/// Runs `source` dry, completing every request successfully; returns the requests'
/// (key, stored value) pairs.
fn drain<S: OpSource>(source: &mut S) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut slot = Slot::default();
    while let Some(t) = next(source, &mut slot) {
        let mut value = Vec::new();
        slot.request.encode_value(&mut value);
        out.push((slot.request.key.clone(), value));
        source.completed(&slot, t);
    }
    out
}

fn next<S: OpSource>(source: &mut S, slot: &mut Slot) -> Option<Ticket> {
    slot.request.clear();
    let t = source.next(&mut slot.request)?;
    slot.result = Ok(Outcome::Written { bytes: 1 });
    Some(t)
}

fn file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn keys_and_values_follow_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let data = file(dir.path(), "t.tbl", "1|a|x|p|\n2|b|y|q|\n\n3|c|z|r|\r\n");
    // Key fields 2,0: the key is `x|1`; the value is the others joined, `a|p`.
    let w = std::sync::Arc::new(
        ImportWorkload::open(&data, ImportSpec::new(b'|', vec![2, 0])).unwrap(),
    );
    assert_eq!(w.expected_fields(), 4);
    let got = drain(&mut w.source(1, 0, 1));
    let got: Vec<(String, String)> = got
        .into_iter()
        .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
        .collect();
    assert_eq!(
        got,
        [("x|1", "a|p"), ("y|2", "b|q"), ("z|3", "c|r")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    let r = w.finish();
    assert_eq!((r.lines, r.blank, r.malformed), (4, 1, 0));

    // Fields: YCSB fields numbered over the value fields.
    let spec = ImportSpec {
        value_format: ValueFormat::Fields,
        ..ImportSpec::new(b'|', vec![0])
    };
    let w = std::sync::Arc::new(ImportWorkload::open(&data, spec).unwrap());
    let mut s = w.source(1, 0, 1);
    let mut slot = Slot::default();
    next(&mut s, &mut slot).unwrap();
    assert!(!slot.request.value.is_blob());
    let fields: Vec<(&[u8], &[u8])> = slot.request.value.fields().iter().collect();
    assert_eq!(
        fields,
        [
            (&b"field0"[..], &b"a"[..]),
            (b"field1", b"x"),
            (b"field2", b"p")
        ]
    );

    // Keeping the trailing delimiter makes an empty last field.
    let spec = ImportSpec {
        trailing_delimiter: TrailingDelimiter::Keep,
        ..ImportSpec::new(b'|', vec![0])
    };
    let w = std::sync::Arc::new(ImportWorkload::open(&data, spec).unwrap());
    assert_eq!(w.expected_fields(), 5);
    assert_eq!(drain(&mut w.source(1, 0, 1))[0].1, b"a|x|p|");
}

#[test]
fn malformed_lines_are_skipped_or_stop_a_strict_import() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 1..=50 {
        if i == 7 || i == 31 {
            text.push_str(&format!("{i}|only two|\n"));
        } else {
            text.push_str(&format!("{i}|a|b|\n"));
        }
    }
    let data = file(dir.path(), "m.tbl", &text);
    let w =
        std::sync::Arc::new(ImportWorkload::open(&data, ImportSpec::new(b'|', vec![0])).unwrap());
    assert_eq!(drain(&mut w.source(0, 0, 1)).len(), 48);
    let r = w.finish().clone();
    assert_eq!(r.malformed, 2);
    assert_eq!(
        r.first_malformed
            .iter()
            .map(|m| (m.line, m.fields))
            .collect::<Vec<_>>(),
        [(7, 2), (31, 2)]
    );
    assert!(!r.failed());

    let spec = ImportSpec {
        strict: true,
        ..ImportSpec::new(b'|', vec![0])
    };
    let w = std::sync::Arc::new(ImportWorkload::open(&data, spec).unwrap());
    assert_eq!(drain(&mut w.source(0, 0, 1)).len(), 6);
    let r = w.finish();
    assert_eq!(r.strict_failure.as_ref().map(|m| m.line), Some(7));
    assert!(r.failed());

    // The key fields are checked against the first line.
    let err = ImportWorkload::open(&data, ImportSpec::new(b'|', vec![0, 3])).unwrap_err();
    assert!(err.to_string().contains("m.tbl:1"), "{err}");
}

#[test]
fn the_key_sample_depends_on_the_seed_not_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..20_000).map(|i| format!("{i}|v{i}|\n")).collect();
    let data = file(dir.path(), "s.tbl", &text);
    let sampled = |clients: usize, seed: u64, name: &str| -> BTreeSet<String> {
        let out = dir.path().join(name);
        let spec = ImportSpec {
            sample: Some(KeySample {
                fraction: 0.07,
                path: out.clone(),
            }),
            ..ImportSpec::new(b'|', vec![0])
        };
        let w = std::sync::Arc::new(ImportWorkload::open(&data, spec).unwrap());
        // Clients take turns a request at a time, as threads would interleave.
        let mut sources: Vec<_> = (0..clients).map(|c| w.source(seed, c, clients)).collect();
        let mut slot = Slot::default();
        let mut live = clients;
        while live > 0 {
            live = 0;
            for s in &mut sources {
                if let Some(t) = next(s, &mut slot) {
                    s.completed(&slot, t);
                    live += 1;
                }
            }
        }
        drop(sources);
        let r = w.finish();
        let keys: BTreeSet<String> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(r.sampled_keys, keys.len() as u64);
        keys
    };
    let one = sampled(1, 9, "a.txt");
    assert_eq!(one, sampled(3, 9, "b.txt"));
    assert_ne!(one, sampled(1, 10, "c.txt"));
    // Binomial(20000, 0.07): mean 1400, sd ≈ 36.
    assert!((1_220..=1_580).contains(&one.len()), "{}", one.len());
}

#[test]
fn a_fifo_is_read_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            // Stops early once the reader has what it wants and goes away (EPIPE).
            for i in 0..100_000 {
                if writeln!(f, "{i}|{}|", "x".repeat(i % 50)).is_err() {
                    break;
                }
            }
        })
    };
    let spec = ImportSpec {
        limit: Some(99_999),
        ..ImportSpec::new(b'|', vec![0])
    };
    let w = std::sync::Arc::new(ImportWorkload::open(&fifo, spec).unwrap());
    let got = drain(&mut w.source(0, 0, 1));
    assert_eq!(got.len(), 99_999);
    assert_eq!(got[12_345].0, b"12345");
    assert_eq!(got[12_345].1, "x".repeat(12_345 % 50).as_bytes());
    drop(w);
    writer.join().unwrap();
}

fn key_file(dir: &Path, n: usize) -> Arc<KeyFile> {
    let text: String = (0..n).map(|i| format!("{i}|k\n")).collect();
    Arc::new(KeyFile::load(&file(dir, "keys.txt", &text)).unwrap())
}

fn props(text: &str) -> Properties {
    let mut p = Properties::new();
    p.parse_str(text, Path::new("w")).unwrap();
    p
}

#[test]
fn key_file_workloads_read_file_keys_and_insert_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let keys = key_file(dir.path(), 500);
    let known: HashSet<Vec<u8>> = keys.iter().map(<[u8]>::to_vec).collect();
    let p =
        props("readproportion=0.5\nupdateproportion=0.25\ninsertproportion=0.25\nfieldlength=20\n");
    let w =
        Arc::new(KeyFileWorkload::from_properties(keys, ValueFormat::Blob, &p, &[], &[]).unwrap());
    let mut counts = [0u64; 6];
    let mut inserted = HashSet::new();
    let mut slot = Slot::default();
    for client in 0..2 {
        let mut s = w.source(7, client, 2);
        for _ in 0..20_000 {
            next(&mut s, &mut slot).unwrap();
            let r = &slot.request;
            counts[r.kind.index()] += 1;
            assert!(r.read.is_blob(), "a blob key-file workload reads blobs");
            if matches!(r.kind, OpKind::Insert | OpKind::Update) {
                assert!(r.value.is_blob(), "a blob key-file workload writes blobs");
            }
            match r.kind {
                OpKind::Read => assert!(known.contains(&r.key)),
                OpKind::Update => {
                    assert!(known.contains(&r.key));
                    assert_eq!(r.value.blob().len(), 20);
                }
                OpKind::Insert => {
                    let (base, suffix) = r.key.split_at(r.key.len() - 17);
                    assert!(known.contains(base));
                    assert_eq!(suffix[0], b'#');
                    assert!(inserted.insert(r.key.clone()), "inserted twice");
                }
                other => panic!("{other:?} is not in the mix"),
            }
        }
    }
    // 40000 draws: shares within 1.5 points (sd ≤ 0.25 points).
    let share = |k: OpKind| counts[k.index()] as f64 / 40_000.0;
    assert!((share(OpKind::Read) - 0.5).abs() < 0.015, "{counts:?}");
    assert!((share(OpKind::Update) - 0.25).abs() < 0.015, "{counts:?}");

    // Unsupported properties are refused.
    let dir2 = tempfile::tempdir().unwrap();
    for bad in [
        "dataintegrity=true\n",
        "requestdistribution=latest\n",
        "readproportion=x\n",
    ] {
        let r = KeyFileWorkload::from_properties(
            key_file(dir2.path(), 3),
            ValueFormat::Blob,
            &props(bad),
            &[],
            &[],
        );
        assert!(r.is_err(), "{bad}");
    }
}

#[test]
fn plan_clients_get_their_groups_mix_and_counts_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let plan = Plan::parse_str(
        "group.r.threads=2\ngroup.r.readproportion=1\ngroup.w.threads=1\ngroup.w.updateproportion=1\n",
        Path::new("plan"),
    )
    .unwrap();
    let base = KeyFileWorkload::from_properties(
        key_file(dir.path(), 100),
        ValueFormat::Blob,
        &props(""),
        &[],
        &[],
    )
    .unwrap();
    let groups = plan
        .groups()
        .iter()
        .map(|g| Arc::new(base.with_mix(g.mix)))
        .collect();
    let w = Arc::new(PlanWorkload::new(plan, groups));
    // 3 threads × 2 connections: clients 0-3 are readers, 4-5 the writer's.
    let mut slot = Slot::default();
    for client in 0..6 {
        let mut s = w.source(1, client, 6);
        for _ in 0..100 {
            let t = next(&mut s, &mut slot).unwrap();
            let want = if client < 4 {
                OpKind::Read
            } else {
                OpKind::Update
            };
            assert_eq!(slot.request.kind, want, "client {client}");
            s.completed(&slot, t);
        }
    }
    let counts = w.counts();
    assert_eq!(counts[0].issued[OpKind::Read.index()], 400);
    assert_eq!(counts[1].issued[OpKind::Update.index()], 200);
    assert_eq!(counts[1].status[OpKind::Update.index()][0], 200);
    assert_eq!(counts[0].total() + counts[1].total(), 600);
    assert_eq!(
        Proportions::new([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap(),
        w.plan().groups()[0].mix
    );
}

#[test]
fn the_example_plan_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/seed-003/plan.txt");
    let plan = Plan::load(&path).unwrap();
    let names: Vec<&str> = plan.groups().iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["readers", "writers"]);
    assert_eq!(plan.threads(), 3);
    assert_eq!(plan.groups()[1].mix.share(OpKind::Insert), 0.5);
}
