//! kvtrace: every sample converts to kvtrace and back to the same records; the codec
//! round-trips random records; damaged files are errors naming the file and offset;
//! blocks decode on several threads to the same records.

use std::path::Path;

use kvlab_trace::kvtrace::BlockDecoder;
use kvlab_trace::{
    convert, open, open_kvtrace, KvtraceWriter, Op, OpenOptions, Outcome, Stats, TraceError,
    TraceInfo, TraceReader, TraceRecord,
};
use proptest::prelude::*;

use crate::common::{data, encode, reader, records};

/// Reads a kvtrace file back.
fn decode_file(path: &Path) -> Vec<TraceRecord> {
    let mut r = open(path, &OpenOptions::default()).expect("opening the kvtrace");
    assert_eq!(r.info().format, "kvtrace");
    records(&mut r)
}

#[test]
fn every_format_round_trips_through_kvtrace() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for rel in [
        "rocksdb/mixgraph.trace",
        "rocksdb/deleterandom_batch4.trace",
        "rocksdb/multireadrandom.trace",
        "rocksdb/seekrandom_bounded.trace",
        "rocksdb/mergerandom.trace",
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        "libcachesim/cloudPhysicsIO.vscsi",
        "libcachesim/cloudPhysicsIO.csv",
        "libcachesim/cloudPhysicsIO.txt",
        "derived/cloudPhysicsIO.lcs",
        "derived/adapt_size_request.twitter.csv.zst",
        "caffeine/lirs/cs.trace.gz",
        "caffeine/cache2k/web07.trace.xz",
        "caffeine/adapt_size/request.trace.xz",
        "caffeine/snia/msr-cambridge1-sample.csv",
        "caffeine/snia/tencent-cloud_storage-sample.bz2",
        "arc/OLTP.lis.zst",
    ] {
        let mut src = reader(rel, None);
        let info = src.info().clone();
        let path = dir.path().join("t.kvtrace");
        let file = std::fs::File::create(&path).expect("creating");
        let mut w = KvtraceWriter::new(std::io::BufWriter::new(file), &path, &info).unwrap();
        let n = convert(&mut src, &mut w).expect("converting");
        w.finish().expect("finishing");
        let want = records(&mut reader(rel, None));
        assert_eq!(n, want.len() as u64, "{rel}");
        let got = decode_file(&path);
        assert!(got == want, "{rel}: records differ after the round trip");
        // The header keeps the source's facts.
        let kv = open_kvtrace(&path).unwrap();
        assert_eq!(kv.source_info().format, info.format, "{rel}");
        assert_eq!(kv.source_info().time_unit, info.time_unit, "{rel}");
        assert_eq!(kv.source_info().key_encoding, info.key_encoding, "{rel}");
        // And stats agree, but for the format's name.
        let mut a = Stats::collect(&mut reader(rel, None)).unwrap();
        let b = Stats::collect(&mut open(&path, &OpenOptions::default()).unwrap()).unwrap();
        a.format = b.format.clone();
        assert_eq!(a, b, "{rel}");
    }
}

#[test]
fn blocks_decode_in_parallel_to_the_same_records() {
    let mut src = reader("arc/OLTP.lis.zst", None);
    let info = src.info().clone();
    let want = records(&mut reader("arc/OLTP.lis.zst", None));
    let bytes = encode(&info, &records(&mut src));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("oltp.kvtrace");
    std::fs::write(&path, &bytes).unwrap();
    let mut kv = open_kvtrace(&path).unwrap();
    let mut blocks = Vec::new();
    while let Some(b) = kv.next_block().unwrap() {
        blocks.push(b);
    }
    assert!(blocks.len() > 4, "a large trace makes several blocks");
    let halves: Vec<Vec<TraceRecord>> = std::thread::scope(|s| {
        let (a, b) = blocks.split_at(blocks.len() / 2);
        let hs: Vec<_> = [a, b]
            .into_iter()
            .map(|part| {
                let path = &path;
                s.spawn(move || {
                    let mut d = BlockDecoder::new(path).unwrap();
                    let mut out = Vec::new();
                    for b in part {
                        d.decode(b, |r| out.push(r.clone())).unwrap();
                    }
                    out
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let got: Vec<TraceRecord> = halves.into_iter().flatten().collect();
    assert!(got == want);
}

fn sample_records() -> (TraceInfo, Vec<TraceRecord>) {
    let mut r = reader("rocksdb/mixgraph.trace", None);
    let info = r.info().clone();
    (info, records(&mut r))
}

#[test]
fn a_kvtrace_cut_short_is_an_error_after_the_whole_blocks() {
    let (info, recs) = sample_records();
    let bytes = encode(&info, &recs);
    let dir = tempfile::tempdir().unwrap();
    // Without the end marker: every record, then an error at the end's offset.
    let path = dir.path().join("no-end.kvtrace");
    std::fs::write(&path, &bytes[..bytes.len() - 16]).unwrap();
    let s = Stats::collect(&mut open(&path, &OpenOptions::default()).unwrap()).unwrap();
    assert_eq!(s.requests, recs.len() as u64);
    assert_eq!(s.damaged_at, Some(bytes.len() as u64 - 16));
    assert!(s.damage.as_deref().unwrap_or("").contains("no-end.kvtrace"));
    // Cut inside a block: the records of the blocks before it, then an error.
    let path = dir.path().join("cut.kvtrace");
    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    let mut r = open(&path, &OpenOptions::default()).unwrap();
    let mut rec = TraceRecord::default();
    let mut n = 0;
    let err = loop {
        match r.read(&mut rec) {
            Ok(true) => n += 1,
            Ok(false) => panic!("a cut kvtrace read to its end"),
            Err(e) => break e,
        }
    };
    assert!(n < recs.len(), "{n}");
    match err {
        TraceError::Corrupt {
            path: p, offset, ..
        } => {
            assert_eq!(p, path);
            assert!(offset < bytes.len() as u64);
        }
        e => panic!("expected a corruption, got {e}"),
    }
}

#[test]
fn a_corrupt_block_is_an_error_naming_its_offset() {
    let (info, recs) = sample_records();
    let mut bytes = encode(&info, &recs);
    // Flip bytes inside the first block's compressed frame (after the header and the
    // 16-byte block header).
    let header_len = 16 + u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    for b in &mut bytes[header_len + 40..header_len + 60] {
        *b ^= 0x5a;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.kvtrace");
    std::fs::write(&path, &bytes).unwrap();
    let mut r = open(&path, &OpenOptions::default()).unwrap();
    let mut rec = TraceRecord::default();
    let err = loop {
        match r.read(&mut rec) {
            Ok(true) => {}
            Ok(false) => panic!("a corrupt kvtrace read to its end"),
            Err(e) => break e,
        }
    };
    match err {
        TraceError::Corrupt { offset, .. } => assert_eq!(offset, header_len as u64),
        e => panic!("expected a corruption, got {e}"),
    }
}

fn arb_op() -> impl Strategy<Value = Op> {
    (0..Op::ALL.len()).prop_map(|i| Op::ALL[i])
}

fn arb_outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Unknown),
        Just(Outcome::Hit),
        Just(Outcome::Miss),
        Just(Outcome::Error)
    ]
}

prop_compose! {
    fn arb_record()(
        ts in any::<u64>(),
        op in arb_op(),
        key in proptest::collection::vec(any::<u8>(), 0..40),
        id in any::<u64>(),
        explicit_id in any::<bool>(),
        key_size in prop_oneof![Just(None), any::<u32>().prop_map(Some)],
        value_size in prop_oneof![Just(0u64), any::<u64>()],
        scan_len in prop_oneof![Just(0u32), any::<u32>()],
        ttl_s in prop_oneof![Just(0u32), any::<u32>()],
        cf in prop_oneof![Just(0u32), any::<u32>()],
        next_access in prop_oneof![Just(-1i64), any::<i64>()],
        batch in prop_oneof![Just((1u32, 0u32)), (any::<u32>(), any::<u32>())],
        outcome in arb_outcome(),
        latency_ns in prop_oneof![Just(0u64), any::<u64>()],
        intended_ns in prop_oneof![Just(0u64), any::<u64>()],
        lower in proptest::collection::vec(any::<u8>(), 0..8),
        upper in proptest::collection::vec(any::<u8>(), 0..8),
    ) -> TraceRecord {
        let mut r = TraceRecord::default();
        r.clear();
        r.ts = ts;
        r.op = op;
        if !key.is_empty() {
            r.set_key(&key);
        }
        if explicit_id || key.is_empty() {
            r.id = id;
        }
        if let Some(k) = key_size {
            r.key_size = k;
        }
        r.value_size = value_size;
        r.scan_len = scan_len;
        r.ttl_s = ttl_s;
        r.cf = cf;
        r.next_access = next_access;
        (r.batch_len, r.batch_pos) = batch;
        r.outcome = outcome;
        r.latency_ns = latency_ns;
        r.intended_ns = intended_ns;
        r.lower_bound = lower;
        r.upper_bound = upper;
        r
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_codec_round_trips_any_records(recs in proptest::collection::vec(arb_record(), 0..300)) {
        let info = TraceInfo { format: "test".to_string(), ..TraceInfo::default() };
        let bytes = encode(&info, &recs);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.kvtrace");
        std::fs::write(&path, &bytes).unwrap();
        let got = decode_file(&path);
        prop_assert_eq!(got, recs);
    }

    #[test]
    fn damaged_bytes_never_panic(cut in 0usize..2000, flip in 0usize..2000, mask in 1u8..) {
        let recs: Vec<TraceRecord> = (0..200u64).map(|i| {
            let mut r = TraceRecord::default();
            r.clear();
            r.ts = i * 7;
            r.set_key(format!("key{i}").as_bytes());
            r.value_size = i;
            r
        }).collect();
        let mut bytes = encode(&TraceInfo::default(), &recs);
        let flip = flip % bytes.len();
        bytes[flip] ^= mask;
        bytes.truncate(bytes.len().saturating_sub(cut));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.kvtrace");
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(mut r) = open(&path, &OpenOptions { format: Some(kvlab_trace::Format::Kvtrace), ..OpenOptions::default() }) {
            let mut rec = TraceRecord::default();
            let mut n = 0;
            while let Ok(true) = r.read(&mut rec) {
                n += 1;
                prop_assert!(n <= 100_000, "a damaged file must not read forever");
            }
        }
    }
}

#[test]
fn the_sample_paths_exist() {
    assert!(data("rocksdb/mixgraph.trace").exists());
}

#[test]
fn flushed_records_survive_a_writer_that_never_finished() {
    let (info, recs) = sample_records();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crashed.kvtrace");
    let file = std::fs::File::create(&path).unwrap();
    let mut w = KvtraceWriter::new(file, &path, &info).unwrap();
    for r in &recs[..1000] {
        w.write(r).unwrap();
    }
    w.flush().unwrap();
    for r in &recs[1000..1500] {
        w.write(r).unwrap();
    }
    // The writer dies here: neither the last 500 records nor the end marker are written.
    std::mem::forget(w);
    let s = Stats::collect(&mut open(&path, &OpenOptions::default()).unwrap()).unwrap();
    assert_eq!(s.requests, 1000);
    assert_eq!(s.damaged_at, Some(std::fs::metadata(&path).unwrap().len()));
}

/// Records per block of [`many_blocks`]: a prime, so that blocks and the records'
/// patterns do not line up.
const PER_BLOCK: usize = 97;

/// A trace of `n` varied records in blocks of [`PER_BLOCK`] (the writer's `flush`
/// writes a block however few records it holds), and its bytes.
fn many_blocks(n: usize) -> (Vec<TraceRecord>, Vec<u8>) {
    let info = TraceInfo {
        format: "test".to_string(),
        ..TraceInfo::default()
    };
    let mut w = KvtraceWriter::new(Vec::new(), Path::new("mem.kvtrace"), &info).unwrap();
    let mut recs = Vec::with_capacity(n);
    for i in 0..n {
        let mut r = TraceRecord::default();
        r.clear();
        r.ts = i as u64 * 3;
        r.op = Op::ALL[i % Op::ALL.len()];
        r.set_key(format!("key{}", i * 7919 % 1000).as_bytes());
        r.value_size = (i % 500) as u64;
        r.latency_ns = (i % 13) as u64 * 1000;
        w.write(&r).unwrap();
        if (i + 1) % PER_BLOCK == 0 {
            w.flush().unwrap();
        }
        recs.push(r);
    }
    (recs, w.finish().unwrap())
}

/// The byte offset of each block of the kvtrace at `path`.
fn block_offsets(path: &Path) -> Vec<u64> {
    let mut kv = open_kvtrace(path).unwrap();
    let mut offsets = Vec::new();
    while let Some(b) = kv.next_block().unwrap() {
        offsets.push(b.offset);
    }
    offsets
}

/// Every record `reader` hands out, and the error's text that ends them, if any (after
/// which the reader is done).
fn read_all(mut r: Box<dyn TraceReader>) -> (Vec<TraceRecord>, Option<String>) {
    let mut out = Vec::new();
    let mut rec = TraceRecord::default();
    loop {
        match r.read(&mut rec) {
            Ok(true) => out.push(rec.clone()),
            Ok(false) => return (out, None),
            Err(e) => {
                assert!(matches!(r.read(&mut rec), Ok(false)), "done after {e}");
                return (out, Some(e.to_string()));
            }
        }
    }
}

/// Reads the trace at `path` with `threads` decoder threads.
fn read_with(path: &Path, threads: usize) -> (Vec<TraceRecord>, Option<String>) {
    let opts = OpenOptions {
        decode_threads: Some(threads),
        ..OpenOptions::default()
    };
    read_all(open(path, &opts).expect("opening the kvtrace"))
}

#[test]
fn decoder_threads_hand_out_the_records_in_file_order() {
    let (recs, bytes) = many_blocks(100 * PER_BLOCK + 13);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blocks.kvtrace");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(block_offsets(&path).len(), 101);
    let (one, err) = read_with(&path, 0);
    assert_eq!(err, None);
    assert!(one == recs, "decoding on the calling thread");
    for threads in [1, 2, 4] {
        let (got, err) = read_with(&path, threads);
        assert_eq!(err, None, "{threads} threads");
        assert!(got == one, "{threads} threads: records differ");
    }
    // From a stream, as from standard input.
    let opts = OpenOptions {
        decode_threads: Some(2),
        ..OpenOptions::default()
    };
    let stream = Box::new(std::io::Cursor::new(bytes));
    let (got, err) = read_all(kvlab_trace::open_reader(stream, "-", &opts).unwrap());
    assert_eq!(err, None);
    assert!(got == one, "from a stream");
    // The default, and a trace of one block, which decodes on the calling thread.
    assert!(read_all(open(&path, &OpenOptions::default()).unwrap()).0 == one);
    let (small, bytes) = many_blocks(PER_BLOCK - 1);
    let path = dir.path().join("small.kvtrace");
    std::fs::write(&path, &bytes).unwrap();
    assert!(read_with(&path, 4) == (small, None));
}

#[test]
fn a_damaged_block_mid_file_ends_the_same_records_with_the_same_error_on_any_threads() {
    let (recs, bytes) = many_blocks(60 * PER_BLOCK);
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.kvtrace");
    std::fs::write(&good, &bytes).unwrap();
    let offsets = block_offsets(&good);
    let bad = 37;
    let at = offsets[bad] as usize;
    let word = move |b: &mut Vec<u8>, i: usize, v: u32| {
        b[at + 4 * i..at + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
    };
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let damages: [(&str, usize, Damage, &str); 5] = [
        (
            "flipped",
            at,
            Box::new(move |b: &mut Vec<u8>| {
                b[at + 20..at + 40].iter_mut().for_each(|x| *x ^= 0x5a)
            }),
            "block does not decompress",
        ),
        (
            "raw_len",
            at,
            Box::new(move |b: &mut Vec<u8>| word(b, 1, 12345)),
            "its header says 12345",
        ),
        (
            "cut",
            at,
            Box::new(move |b: &mut Vec<u8>| b.truncate(at + 30)),
            "the stream ends inside the block",
        ),
        (
            "compressed_len",
            at,
            Box::new(move |b: &mut Vec<u8>| word(b, 0, 1 << 31)),
            "at most",
        ),
        (
            "no-end",
            bytes.len() - 16,
            Box::new(|b: &mut Vec<u8>| b.truncate(b.len() - 16)),
            "without the end marker",
        ),
    ];
    for (name, offset, damage, what) in damages {
        let mut b = bytes.clone();
        damage(&mut b);
        let path = dir.path().join(format!("{name}.kvtrace"));
        std::fs::write(&path, &b).unwrap();
        let (want, err) = read_with(&path, 0);
        let whole = if name == "no-end" { 60 } else { bad };
        assert!(
            want == recs[..whole * PER_BLOCK],
            "{name}: the blocks before"
        );
        let err = err.unwrap_or_else(|| panic!("{name}: no error"));
        let at_byte = format!("{}: at byte {offset}: ", path.display());
        assert!(
            err.starts_with(&at_byte) && err.contains(what),
            "{name}: {err}"
        );
        for threads in [1, 2, 4] {
            let (got, e) = read_with(&path, threads);
            assert!(
                got == want,
                "{name}, {threads} threads: {} records",
                got.len()
            );
            assert_eq!(
                e.as_deref(),
                Some(err.as_str()),
                "{name}, {threads} threads"
            );
        }
    }
}

#[test]
fn dropping_a_reader_mid_file_stops_its_threads() {
    let (recs, bytes) = many_blocks(200 * PER_BLOCK);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("drop.kvtrace");
    std::fs::write(&path, &bytes).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for threads in [1, 2, 4] {
            for read in [0, 1, 1000, recs.len() - 1] {
                let opts = OpenOptions {
                    decode_threads: Some(threads),
                    ..OpenOptions::default()
                };
                let mut r = open(&path, &opts).unwrap();
                let mut rec = TraceRecord::default();
                for want in &recs[..read] {
                    assert!(r.read(&mut rec).unwrap());
                    assert!(&rec == want);
                }
                drop(r);
            }
        }
        tx.send(()).unwrap();
    });
    let waited = rx.recv_timeout(std::time::Duration::from_secs(120));
    assert!(waited.is_ok(), "dropping a reader mid-file hangs");
}
