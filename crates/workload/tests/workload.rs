//! CoreWorkload against YCSB: key names, values, validation errors, op streams, load
//! split, and the committed workload files.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use common::{assert_fits, props, workload, ycsb_dir, ycsb_workload, OTHER_KNOWN};
use kvlab_core::{OpKind, Record, Request};
use kvlab_workload::{CoreWorkload, Properties};

fn key(wl: &CoreWorkload, keynum: u64) -> String {
    let mut out = b"garbage".to_vec();
    wl.key_name(keynum, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn key_names_match_ycsb_build_key_name() {
    let hashed = workload("recordcount=10\n").unwrap();
    assert_eq!(key(&hashed, 0), "user6284781860667377211");
    assert_eq!(key(&hashed, 1), "user8517097267634966620");
    let padded = workload("recordcount=10\nzeropadding=25\n").unwrap();
    assert_eq!(key(&padded, 2), "user0000001820151046732198393");
    let ordered = workload("recordcount=10\ninsertorder=ordered\n").unwrap();
    assert_eq!(key(&ordered, 5), "user5");
    let ordered = workload("recordcount=10\ninsertorder=ordered\nzeropadding=8\n").unwrap();
    assert_eq!(key(&ordered, 5), "user00000005");
    assert_eq!(
        key(&ordered, 123456789),
        "user123456789",
        "padding never truncates"
    );
}

#[test]
fn deterministic_values_match_ycsb() {
    // Strings printed by YCSB's buildDeterministicValue (run with a JDK).
    let wl = workload("recordcount=10\ndataintegrity=true\n").unwrap();
    let mut rec = Record::new();
    wl.expected_record(0, &mut rec);
    assert_eq!(rec.len(), 10);
    assert_eq!(
        rec.get(b"field0").unwrap(),
        b"user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:\
          -169193395:-1039977118:-10"
    );
    let wl = workload("recordcount=10\ndataintegrity=true\nfieldlength=64\n").unwrap();
    wl.expected_record(1, &mut rec);
    assert_eq!(
        rec.get(b"field9").unwrap(),
        b"user8517097267634966620:field9:-557952544:-154748015:-999445747:"
    );
    let wl = workload(
        "recordcount=10\ndataintegrity=true\nfieldlength=10\nfieldnameprefix=f\n\
         insertorder=ordered\nfieldcount=1\n",
    )
    .unwrap();
    wl.expected_record(1, &mut rec);
    assert_eq!(rec.len(), 1);
    assert_eq!(
        rec.get(b"f0").unwrap(),
        b"user1:f0:2",
        "truncated mid-hash, as YCSB"
    );
}

#[test]
fn data_integrity_round_trip_and_corruption() {
    let wl = workload("recordcount=100\ndataintegrity=true\n").unwrap();
    let mut load = wl.load_worker(1, 0, 1);
    let mut req = Request::default();
    let mut n = 0;
    while load.next(&mut req) {
        assert!(
            wl.check_read(&req.key, req.value.fields()),
            "loaded record verifies"
        );
        n += 1;
    }
    assert_eq!(n, 100);
    let mut rec = Record::new();
    wl.expected_record(7, &mut rec);
    let mut k = Vec::new();
    wl.key_name(7, &mut k);
    assert!(wl.check_read(&k, &rec));
    let mut other = Vec::new();
    wl.key_name(8, &mut other);
    assert!(
        !wl.check_read(&other, &rec),
        "values of another key must not verify"
    );
    let mut corrupt = Record::new();
    for (name, value) in rec.iter() {
        let mut v = value.to_vec();
        if name == b"field3" {
            v[50] ^= 1;
        }
        corrupt.push(name, &v);
    }
    assert!(!wl.check_read(&k, &corrupt));
    assert!(
        !wl.check_read(&k, &Record::new()),
        "an empty reply is an error, as YCSB"
    );
}

#[test]
fn load_records_have_ycsb_shape() {
    let wl = workload("recordcount=10\n").unwrap();
    let mut load = wl.load_worker(1, 0, 1);
    let mut req = Request::default();
    req.value.fields_mut().push(b"stale", b"stale");
    assert!(load.next(&mut req));
    assert_eq!(req.kind, OpKind::Insert);
    assert_eq!(req.value.fields().len(), 10);
    for (i, (name, value)) in req.value.fields().iter().enumerate() {
        assert_eq!(name, format!("field{i}").as_bytes());
        assert_eq!(value.len(), 100);
        assert!(
            value.iter().all(|b| (b' '..=b' ' + 95).contains(b)),
            "printable"
        );
    }
    // Values differ between fields and records.
    let first = req.value.fields().field(0).1.to_vec();
    assert_ne!(first, req.value.fields().field(1).1);
    assert!(load.next(&mut req));
    assert_ne!(first, req.value.fields().field(0).1);
}

#[test]
fn field_length_distributions() {
    let wl = workload(
        "recordcount=10\nfieldlengthdistribution=uniform\nminfieldlength=5\nfieldlength=9\n",
    )
    .unwrap();
    let mut load = wl.load_worker(3, 0, 1);
    let mut req = Request::default();
    let mut counts = [0u64; 5];
    for _ in 0..10 {
        assert!(load.next(&mut req));
        for (_, v) in req.value.fields().iter() {
            counts[v.len() - 5] += 1;
        }
    }
    assert_fits("uniform field lengths", &counts, &[0.2; 5]);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hist.txt"),
        "BlockSize\t8\n0\t0\n1\t10\n2\t30\n3\t0\n",
    )
    .unwrap();
    let file = dir.path().join("w");
    std::fs::write(
        &file,
        "recordcount=500\nfieldlengthdistribution=histogram\nfieldlengthhistogram=hist.txt\n",
    )
    .unwrap();
    let mut p = Properties::new();
    p.load_file(&file).unwrap();
    let wl = CoreWorkload::from_properties(&p, &[], &[]).unwrap();
    assert_eq!(wl.max_field_length_bytes(), 24);
    let mut load = wl.load_worker(3, 0, 1);
    let mut sizes: HashMap<usize, u64> = HashMap::new();
    while load.next(&mut req) {
        for (_, v) in req.value.fields().iter() {
            *sizes.entry(v.len()).or_default() += 1;
        }
    }
    // number in [0, 40): 0 → bucket 0 (8 bytes); 1..=10 → bucket 1 (16); 11..=39 → 24.
    let observed = [sizes[&8], sizes[&16], sizes[&24]];
    assert_eq!(sizes.len(), 3);
    assert_fits(
        "histogram field lengths",
        &observed,
        &[1.0 / 40.0, 10.0 / 40.0, 29.0 / 40.0],
    );
}

#[test]
fn unknown_property_suggests_the_closest_name() {
    let err = workload("recordcount=10\n\nreadproportoin=0.5\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown property `readproportoin` (workloads/x:3); did you mean `readproportion`?"
    );
    let err = workload("recordcount=10\nthreadcont=4\n").unwrap_err();
    assert!(
        err.to_string().ends_with("did you mean `threadcount`?"),
        "{err}"
    );
    let err = workload("zzzzzzzz=1\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown property `zzzzzzzz` (workloads/x:1)"
    );
    // Other layers' names and passthrough prefixes are accepted.
    workload("recordcount=10\nthreadcount=4\nrocksdb.block_cache_size=1\n").unwrap();
}

#[test]
fn bad_enumeration_lists_the_choices() {
    let err = workload("recordcount=10\nrequestdistribution=zipf\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value `zipf` for `requestdistribution` (workloads/x:2): expected one of \
         uniform, zipfian, latest, hotspot, exponential, sequential"
    );
    let err = workload("fieldlengthdistribution=normal\n").unwrap_err();
    assert!(err
        .to_string()
        .contains("(workloads/x:1): expected one of constant, uniform"));
    let err = workload("scanlengthdistribution=latest\n").unwrap_err();
    assert!(err.to_string().contains("one of uniform, zipfian"), "{err}");
    let err = workload("insertorder=random\n").unwrap_err();
    assert!(err.to_string().contains("one of hashed, ordered"), "{err}");
    let err = workload("readallfields=yes\n").unwrap_err();
    assert!(
        err.to_string()
            .contains("(workloads/x:1): expected one of true, false"),
        "{err}"
    );
    let err = workload("workload=site.ycsb.workloads.TimeSeriesWorkload\n").unwrap_err();
    assert!(
        err.to_string().contains("site.ycsb.workloads.CoreWorkload"),
        "{err}"
    );
}

#[test]
fn bad_numbers_name_key_and_origin() {
    let err = workload("recordcount=ten\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value `ten` for `recordcount` (workloads/x:1): expected a non-negative integer"
    );
    let err = workload("recordcount=10\n#\nfieldcount=-3\n").unwrap_err();
    assert!(
        err.to_string().contains("`fieldcount` (workloads/x:3)"),
        "{err}"
    );
    let err = workload("readproportion=-0.5\n").unwrap_err();
    assert!(err
        .to_string()
        .contains("`readproportion` (workloads/x:1): expected a non-negative number"));
    let mut p = props("recordcount=10\n");
    p.set_override("updateproportion=lots").unwrap();
    let err = CoreWorkload::from_properties(&p, &[], &[]).unwrap_err();
    assert!(err.to_string().contains("`updateproportion` (-p)"), "{err}");
    let err = workload("zipfianconstant=1\n").unwrap_err();
    assert!(
        err.to_string().contains("strictly between 0 and 1"),
        "{err}"
    );
    let err = workload("hotspotopnfraction=1.5\n").unwrap_err();
    assert!(
        err.to_string()
            .contains("`hotspotopnfraction` (workloads/x:1)"),
        "{err}"
    );
    let err = workload("fieldcount=0\n").unwrap_err();
    assert!(
        err.to_string().contains("`fieldcount` (workloads/x:1)"),
        "{err}"
    );
}

#[test]
fn contradictions_are_errors() {
    let err =
        workload("recordcount=10\nreadproportion=0\nupdateproportion=0\ninsertproportion=0.0\n")
            .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("operation proportions sum to 0"), "{msg}");
    assert!(msg.contains("readproportion=0 (workloads/x:2)"), "{msg}");
    assert!(msg.contains("scanproportion=0 (default)"), "{msg}");

    let err = workload("recordcount=10\ndataintegrity=true\nfieldlengthdistribution=uniform\n")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "dataintegrity=true (workloads/x:2) requires fieldlengthdistribution=constant, not \
         `uniform` (workloads/x:3)"
    );
    let err = workload("recordcount=10\ninsertstart=5\ninsertcount=6\n").unwrap_err();
    assert!(
        err.to_string()
            .contains("exceeds recordcount=10 (workloads/x:1)"),
        "{err}"
    );
    let err = workload("minscanlength=10\nmaxscanlength=5\n").unwrap_err();
    assert!(
        err.to_string().contains("minscanlength=10 (workloads/x:1)"),
        "{err}"
    );
}

#[test]
fn effective_properties_include_defaults() {
    let wl = workload("recordcount=100\ninsertstart=10\nrequestdistribution=zipfian\n").unwrap();
    let eff = wl.effective();
    let names: Vec<&str> = eff.iter().map(|(k, _)| k.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    let get = |k: &str| eff.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("insertcount"), Some("90"));
    assert_eq!(get("readproportion"), Some("0.95"));
    assert_eq!(get("fieldlength"), Some("100"));
    assert_eq!(get("requestdistribution"), Some("zipfian"));
    assert_eq!(get("zipfianconstant"), Some("0.99"));
    assert_eq!(get("table"), Some("usertable"));
    assert_eq!(eff.len(), 35);
    assert_eq!(
        (wl.insert_start(), wl.insert_count(), wl.record_count()),
        (10, 90, 100)
    );
    assert!(!wl.needs_scan());
    assert!(workload("scanproportion=0.1\n").unwrap().needs_scan());
    assert_eq!(
        workload("fieldcount=2\n").unwrap().record_count(),
        i32::MAX as u64
    );
}

/// One request of a stream: kind, key, fields written, fields read by name, scan length.
type Step = (OpKind, Vec<u8>, Record, Option<Record>, u32);

fn stream(wl: &Arc<CoreWorkload>, seed: u64, worker: usize, ops: usize) -> Vec<Step> {
    let mut w = wl.run_worker(seed, worker);
    let mut req = Request::default();
    (0..ops)
        .map(|_| {
            if let Some(k) = w.next(&mut req) {
                w.acknowledge(k);
            }
            (
                req.kind,
                req.key.clone(),
                req.value.fields().clone(),
                req.read.names().cloned(),
                req.scan_len,
            )
        })
        .collect()
}

#[test]
fn same_seed_same_stream_and_workers_differ() {
    let wl = ycsb_workload("workloada", &["recordcount=10000", "readallfields=false"]);
    let a = stream(&wl, 42, 0, 2000);
    let wl2 = ycsb_workload("workloada", &["recordcount=10000", "readallfields=false"]);
    assert!(
        a == stream(&wl2, 42, 0, 2000),
        "same seed, same worker: identical stream"
    );
    let b = stream(&wl2, 42, 1, 2000);
    let c = stream(&wl2, 43, 0, 2000);
    let same_keys = |x: &[Step], y: &[Step]| x.iter().zip(y).filter(|(p, q)| p.1 == q.1).count();
    // Zipfian keys repeat often by chance, but far from always.
    assert!(same_keys(&a, &b) < 500, "{}", same_keys(&a, &b));
    assert!(same_keys(&a, &c) < 500, "{}", same_keys(&a, &c));
    assert_ne!(a, b);
}

#[test]
fn request_shapes_per_kind() {
    let wl = ycsb_workload(
        "workload_template",
        &[
            "readproportion=1",
            "updateproportion=1",
            "scanproportion=1",
            "readmodifywriteproportion=1",
            "deleteproportion=1",
            "insertproportion=1",
            "readallfields=false",
            "maxscanlength=7",
        ],
    );
    let mut w = wl.run_worker(9, 0);
    let mut req = Request::default();
    let mut seen = HashMap::new();
    for _ in 0..600 {
        let inserted = w.next(&mut req);
        *seen.entry(req.kind).or_insert(0) += 1;
        assert!(req.key.starts_with(b"user"));
        match req.kind {
            OpKind::Read | OpKind::Scan => {
                let names = req.read.names().expect("readallfields=false names a field");
                assert_eq!(names.len(), 1);
                assert!(names.field(0).1.is_empty());
                if req.kind == OpKind::Scan {
                    assert!((1..=7).contains(&req.scan_len));
                }
            }
            OpKind::Update | OpKind::ReadModifyWrite => {
                let fields = req.value.fields();
                assert_eq!(fields.len(), 1, "writeallfields=false: one field");
                assert_eq!(fields.field(0).1.len(), 100);
                if req.kind == OpKind::ReadModifyWrite {
                    let names = req.read.names().expect("the read's own random field");
                    assert_eq!(names.len(), 1, "the read's own random field");
                }
            }
            OpKind::Insert => {
                assert_eq!(req.value.fields().len(), 10);
                w.acknowledge(inserted.expect("inserts return their key number"));
                continue;
            }
            OpKind::Delete => assert!(req.value.fields().is_empty()),
        }
        assert_eq!(inserted, None);
    }
    assert_eq!(seen.len(), 6, "{seen:?}");
}

/// YCSB's `doTransactionReadModifyWrite` with `readallfields=false` reads one random
/// field, drawn apart from the update's: with `writeallfields=true` the update writes all
/// ten fields and the read still names one, uniform over the ten; with
/// `readallfields=true` the read reads every field and names none.
#[test]
fn read_modify_writes_read_one_field_of_their_own() {
    let wl = ycsb_workload("workloadf", &["readallfields=false", "writeallfields=true"]);
    let mut w = wl.run_worker(5, 0);
    let mut req = Request::default();
    let mut names: HashMap<Vec<u8>, u64> = HashMap::new();
    let mut rmws = 0;
    while rmws < 20_000 {
        w.next(&mut req);
        if req.kind != OpKind::ReadModifyWrite {
            continue;
        }
        rmws += 1;
        assert_eq!(
            req.value.fields().len(),
            10,
            "writeallfields=true: every field written"
        );
        let read = req.read.names().expect("readallfields=false names a field");
        assert_eq!(read.len(), 1, "one field read");
        *names.entry(read.field(0).0.to_vec()).or_default() += 1;
    }
    let observed: Vec<u64> = (0..10)
        .map(|i| names[format!("field{i}").as_bytes()])
        .collect();
    assert_fits("read field of read-modify-writes", &observed, &[0.1; 10]);
    let wl = ycsb_workload("workloadf", &[]);
    let mut w = wl.run_worker(5, 0);
    for _ in 0..1000 {
        w.next(&mut req);
        if req.kind == OpKind::ReadModifyWrite {
            assert!(req.read.names().is_none());
        }
    }
}

/// Counts op kinds over `ops` operations of one worker, acknowledging inserts.
fn op_mix(wl: &Arc<CoreWorkload>, ops: usize) -> HashMap<OpKind, u64> {
    let mut w = wl.run_worker(2024, 0);
    let mut req = Request::default();
    let mut counts = HashMap::new();
    for _ in 0..ops {
        if let Some(k) = w.next(&mut req) {
            w.acknowledge(k);
        }
        *counts.entry(req.kind).or_insert(0u64) += 1;
    }
    counts
}

#[test]
fn op_mix_matches_proportions_for_ycsb_workloads() {
    let cases: [(&str, &[(OpKind, f64)]); 4] = [
        ("workloada", &[(OpKind::Read, 0.5), (OpKind::Update, 0.5)]),
        ("workloadb", &[(OpKind::Read, 0.95), (OpKind::Update, 0.05)]),
        ("workloade", &[(OpKind::Scan, 0.95), (OpKind::Insert, 0.05)]),
        (
            "workloadf",
            &[(OpKind::Read, 0.5), (OpKind::ReadModifyWrite, 0.5)],
        ),
    ];
    for (file, mix) in cases {
        let wl = ycsb_workload(file, &["operationcount=100000"]);
        let counts = op_mix(&wl, 100_000);
        assert_eq!(counts.len(), mix.len(), "{file}: {counts:?}");
        let observed: Vec<u64> = mix.iter().map(|(k, _)| counts[k]).collect();
        let expected: Vec<f64> = mix.iter().map(|(_, p)| *p).collect();
        assert_fits(file, &observed, &expected);
    }
}

#[test]
fn op_mix_test_detects_a_wrong_mix() {
    // The chi-square check above must be able to fail: workload B's counts do not fit
    // a 90/10 mix.
    let wl = ycsb_workload("workloadb", &[]);
    let counts = op_mix(&wl, 100_000);
    let observed = [counts[&OpKind::Read], counts[&OpKind::Update]];
    let stat = common::chi_square(&observed, &[0.9, 0.1]);
    assert!(stat > common::chi_square_critical(2), "{stat}");
}

#[test]
fn load_split_covers_every_key_once() {
    for (text, workers) in [
        ("recordcount=1000\n", 1),
        ("recordcount=1000\n", 3),
        ("recordcount=1000\n", 7),
        ("recordcount=1000\ninsertstart=100\ninsertcount=555\n", 4),
        ("recordcount=5\n", 8),
    ] {
        let wl = workload(&format!(
            "{text}insertorder=ordered\nfieldcount=1\nfieldlength=1\n"
        ))
        .unwrap();
        let mut seen = vec![0u32; wl.record_count() as usize];
        let mut req = Request::default();
        let mut sizes = Vec::new();
        for worker in 0..workers {
            let mut load = wl.load_worker(5, worker, workers);
            sizes.push(load.remaining());
            while load.next(&mut req) {
                let keynum: usize = std::str::from_utf8(&req.key[4..]).unwrap().parse().unwrap();
                seen[keynum] += 1;
            }
            assert_eq!(load.remaining(), 0);
            assert!(
                req.key.is_empty(),
                "a finished worker leaves the request cleared"
            );
        }
        let (start, count) = (wl.insert_start() as usize, wl.insert_count() as usize);
        for (k, &n) in seen.iter().enumerate() {
            let want = u32::from((start..start + count).contains(&k));
            assert_eq!(n, want, "{text} × {workers}: key {k}");
        }
        // YCSB Client: count / workers each, one more for the first count % workers.
        let expected: Vec<u64> = (0..workers)
            .map(|w| (count / workers + usize::from(w < count % workers)) as u64)
            .collect();
        assert_eq!(sizes, expected, "{text} × {workers}");
    }
}

#[test]
fn every_committed_ycsb_workload_file_validates() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(ycsb_dir()).unwrap() {
        let path = entry.unwrap().path();
        let mut p = Properties::new();
        p.load_file(&path).unwrap();
        CoreWorkload::from_properties(&p, OTHER_KNOWN, &[])
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        names.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    names.sort();
    for expected in [
        "balanced",
        "readheavy",
        "readheavy-uniform",
        "readlatest",
        "readonly",
        "updateheavy",
        "workload_template",
        "workloada",
        "workloadb",
        "workloadc",
        "workloadd",
        "workloade",
        "workloadf",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "missing {expected}: {names:?}"
        );
    }
    let e = ycsb_workload("workloade", &[]);
    assert!(e.needs_scan());
    assert_eq!((e.record_count(), e.operation_count()), (1000, 1000));
}

#[test]
fn reads_of_all_fields_name_them_with_readallfieldsbyname_or_dataintegrity() {
    for (props, by_name) in [
        (&["fieldcount=4"][..], false),
        (&["fieldcount=4", "readallfieldsbyname=true"][..], true),
        (&["fieldcount=4", "dataintegrity=true"][..], true),
    ] {
        let mut all = props.to_vec();
        all.extend([
            "readproportion=0.5",
            "scanproportion=0.5",
            "updateproportion=0",
        ]);
        let wl = ycsb_workload("workload_template", &all);
        let mut w = wl.run_worker(3, 0);
        let mut req = Request::default();
        let mut kinds = HashMap::new();
        for _ in 0..200 {
            w.next(&mut req);
            *kinds.entry(req.kind).or_insert(0) += 1;
            // As YCSB's doTransactionRead: the full field set for reads; scans ask for
            // all fields either way.
            if req.kind == OpKind::Read && by_name {
                let read = req.read.names().expect("reads name every field");
                let names: Vec<&[u8]> = read.iter().map(|(n, _)| n).collect();
                assert_eq!(names, [&b"field0"[..], b"field1", b"field2", b"field3"]);
            } else {
                assert!(req.read.names().is_none(), "{props:?} {:?}", req.kind);
            }
        }
        assert!(
            kinds[&OpKind::Read] > 50 && kinds[&OpKind::Scan] > 50,
            "{kinds:?}"
        );
    }
}

/// A one-field record is stored bare by one-value stores (Redis' string model,
/// memcached), under its field's name; records of several fields keep the encoding.
#[test]
fn a_one_field_workload_lays_its_record_out_as_the_field() {
    use kvlab_core::ValueLayout;
    use kvlab_workload::AnyWorkload;
    let layout = |text: &str| AnyWorkload::Core(Arc::new(workload(text).unwrap())).value_layout();
    assert_eq!(
        layout("recordcount=10\nfieldcount=1\n"),
        ValueLayout::SingleField(b"field0".to_vec())
    );
    assert_eq!(
        layout("recordcount=10\nfieldcount=1\nfieldnameprefix=col\n"),
        ValueLayout::SingleField(b"col0".to_vec())
    );
    assert_eq!(
        layout("recordcount=10\nfieldcount=10\n"),
        ValueLayout::Encoded
    );
    assert_eq!(
        layout("recordcount=10\n"),
        ValueLayout::Encoded,
        "YCSB's default is 10 fields"
    );
}
