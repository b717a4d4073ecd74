//! A stable, deterministic stand-in for the cargo-fuzz target: its body
//! (`kvlab_trace::fuzzing`) run over inputs mutated from the head of every sample trace,
//! read as their own format, as another format and with the format told from the bytes,
//! with a fixed seed.

use std::io::Read;

use kvlab_fuzzkit::{rounds, Mutator};
use kvlab_trace::fuzzing;
use kvlab_trace::{Format, TraceRecord};

use crate::common::{data, encode, reader};

/// Tokens that sit on the formats' edges: separators, signs, huge and negative numbers,
/// magic bytes.
const INTERESTING: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b",",
    b" ",
    b"\t",
    b"\"",
    b"\\",
    b"-",
    b"-1",
    b"0",
    b"99999999999999999999",
    b"18446744073709551616",
    b"1e309",
    b"NaN",
    b"\0",
    b"\xff\xff\xff\xff",
    b"\x7f\xff\xff\xff",
    b"\x80\x00\x00\x00",
    b"\xef\xbe\xad\xde\xef\xbe\xad\xde",
    b"KVTRACE\0",
    b"\x28\xb5\x2f\xfd",
    b"1700000000.123456 [0 127.0.0.1:1234] \"GET\" \"k\"\n",
];

/// The first `n` decompressed bytes of a sample trace.
fn head(rel: &str, n: usize) -> Vec<u8> {
    let path = data(rel);
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = std::io::BufReader::new(file);
    let raw: Box<dyn Read> = match path.extension().and_then(|e| e.to_str()) {
        Some("zst") => Box::new(zstd::Decoder::new(file).unwrap()),
        Some("gz") => Box::new(flate2::read::MultiGzDecoder::new(file)),
        Some("xz") => Box::new(xz2::read::XzDecoder::new(file)),
        Some("bz2") => Box::new(bzip2::read::MultiBzDecoder::new(file)),
        _ => Box::new(file),
    };
    let mut out = Vec::new();
    raw.take(n as u64).read_to_end(&mut out).unwrap();
    out
}

/// A small kvtrace of the first records of a RocksDB trace, as bytes.
fn kvtrace_seed() -> Vec<u8> {
    let mut r = reader("rocksdb/mixgraph.trace", None);
    let mut recs = Vec::new();
    let mut rec = TraceRecord::default();
    while recs.len() < 300 && r.read(&mut rec).expect("reading the sample") {
        recs.push(rec.clone());
    }
    encode(r.info(), &recs)
}

/// The sample traces the seeds are cut from, with their formats and how many
/// (decompressed) bytes of each.
const SAMPLES: &[(Format, &str, usize)] = &[
    (Format::Rocksdb, "rocksdb/mixgraph.trace", 4096),
    (Format::Rocksdb, "rocksdb/multireadrandom.trace", 4096),
    (Format::Rocksdb, "rocksdb/seekrandom_bounded.trace", 4096),
    (Format::Rocksdb, "rocksdb/mergerandom.trace", 4096),
    (Format::Rocksdb, "rocksdb/deleterandom_batch4.trace", 4096),
    (
        Format::OracleGeneral,
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        2400,
    ),
    // No twr sample: oracleGeneral's records are the nearest binary layout at hand.
    (
        Format::Twr,
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        2400,
    ),
    (Format::Vscsi, "libcachesim/cloudPhysicsIO.vscsi", 4096),
    (Format::Csv, "libcachesim/cloudPhysicsIO.csv", 2048),
    (Format::Txt, "libcachesim/cloudPhysicsIO.txt", 1024),
    // lcs: the 8 KiB header and some records.
    (Format::Lcs, "derived/cloudPhysicsIO.lcs", 12_000),
    (Format::Msr, "caffeine/snia/msr-cambridge1-sample.csv", 2048),
    (
        Format::Tencent,
        "caffeine/snia/tencent-cloud_storage-sample.bz2",
        4096,
    ),
    (Format::Lirs, "caffeine/lirs/loop.trace.gz", 4096),
    (Format::Cache2k, "caffeine/cache2k/web07.trace.xz", 4096),
    (Format::Scarab, "caffeine/scarab/scarab-recs.trace.xz", 4096),
    (
        Format::AdaptSize,
        "caffeine/adapt_size/request.trace.xz",
        4096,
    ),
    (Format::Arc, "arc/OLTP.lis.zst", 4096),
    (
        Format::Twitter,
        "derived/adapt_size_request.twitter.csv.zst",
        4096,
    ),
];

/// Redis MONITOR lines: plain, a binary escape, a unix socket and a script as clients.
const MONITOR: &[u8] = b"1700000000.123456 [0 127.0.0.1:50000] \"SET\" \"user1\" \"abc\"\n\
1700000000.123500 [0 127.0.0.1:50000] \"GET\" \"user1\"\n\
1700000000.123600 [0 unix:/tmp/r.sock] \"MGET\" \"a\" \"b\\x00c\"\n\
1700000000.123700 [0 lua] \"DEL\" \"a\"\n";

/// Every seed with its format: the samples' heads, a kvtrace, MONITOR lines, and one
/// compressed text trace (so that mutations reach the decompressors too).
fn seeds() -> Vec<(Format, Vec<u8>)> {
    let mut s: Vec<_> = SAMPLES
        .iter()
        .map(|&(format, rel, n)| (format, head(rel, n)))
        .collect();
    s.push((Format::Kvtrace, kvtrace_seed()));
    s.push((Format::Monitor, MONITOR.to_vec()));
    let txt = head("libcachesim/cloudPhysicsIO.txt", 1024);
    s.push((Format::Txt, zstd::encode_all(&txt[..], 3).unwrap()));
    s
}

#[test]
fn every_reader_survives_mutated_traces() {
    let seeds = seeds();
    let bytes: Vec<Vec<u8>> = seeds.iter().map(|(_, b)| b.clone()).collect();
    // Every seed reads cleanly as its own format first (or it would not test much).
    for (format, seed) in &seeds {
        let n = fuzzing::read_trace(Some(*format), seed, 0);
        assert!(
            n > 0,
            "a {format} seed of {} bytes gave no record",
            seed.len()
        );
        fuzzing::read_trace(None, seed, 0);
    }
    let targeted: Vec<Vec<u8>> = seeds
        .iter()
        .map(|(format, b)| {
            let selector = Format::ALL.iter().position(|f| f == format).unwrap() as u8;
            [&[selector][..], b].concat()
        })
        .collect();
    kvlab_fuzzkit::export_seeds("read_any", &targeted);
    let mut m = Mutator::new(&bytes, INTERESTING);
    for round in 0..rounds(1500) {
        for (i, (format, _)) in seeds.iter().enumerate() {
            let input = m.mutate(i);
            let threads = round % 7 / 6; // one kvtrace read in seven decodes on a thread
            fuzzing::read_trace(Some(*format), &input, threads);
            match m.rng.below(4) {
                0 => {
                    fuzzing::read_trace(None, &input, 0);
                }
                1 => {
                    let other = Format::ALL[m.rng.below(Format::ALL.len())];
                    fuzzing::read_trace(Some(other), &input, 0);
                }
                _ => {}
            }
        }
    }
}

#[test]
fn the_fuzz_target_takes_its_format_from_the_first_byte() {
    assert_eq!(fuzzing::format_of(0), Some(Format::ALL[0]));
    assert_eq!(fuzzing::format_of(Format::ALL.len() as u8), None);
    assert_eq!(fuzzing::read_any(&[]), 0);
    let mut input = vec![Format::ALL.iter().position(|f| *f == Format::Txt).unwrap() as u8];
    input.extend_from_slice(b"1\n2\n3\n");
    assert_eq!(fuzzing::read_any(&input), 3);
}

/// The raw (decompressed) blocks of a kvtrace: the one block of `encode(records)`.
fn raw_block(info: &kvlab_trace::TraceInfo, recs: &[TraceRecord]) -> Vec<u8> {
    let stream = encode(info, recs);
    let info_len = u32::from_le_bytes(stream[12..16].try_into().unwrap()) as usize;
    let block = &stream[16 + info_len..];
    let compressed_len = u32::from_le_bytes(block[0..4].try_into().unwrap()) as usize;
    zstd::decode_all(&block[16..16 + compressed_len]).unwrap()
}

/// Raw blocks of the first records of sample traces (keys, bounds, batches, sizes and
/// next-access times), each behind a version byte.
fn block_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (rel, n) in [
        ("rocksdb/seekrandom_bounded.trace", 40),
        ("rocksdb/deleterandom_batch4.trace", 40),
        ("libcachesim/cloudPhysicsIO.oracleGeneral.bin", 60),
    ] {
        let mut r = reader(rel, None);
        let mut recs = Vec::new();
        let mut rec = TraceRecord::default();
        while recs.len() < n && r.read(&mut rec).expect("reading the sample") {
            recs.push(rec.clone());
        }
        for version in [0u8, 1] {
            let mut seed = vec![version];
            seed.extend(raw_block(r.info(), &recs));
            seeds.push(seed);
        }
    }
    seeds
}

#[test]
fn kvtrace_blocks_survive_mutation() {
    let seeds = block_seeds();
    for seed in &seeds {
        assert!(
            fuzzing::kvtrace_block(seed) > 0,
            "a seed block gave no record"
        );
    }
    let tokens: &[&[u8]] = &[
        b"\0",
        b"\x01",
        b"\x02",
        b"\x04",
        b"\x08",
        b"\x03",
        b"\x80",
        b"\xff\xff\xff\xff\x0f",
        b"\x80\x80\x01",
        b"\xff",
    ];
    kvlab_fuzzkit::export_seeds("kvtrace_block", &seeds);
    let mut m = Mutator::new(&seeds, tokens);
    for _ in 0..rounds(1500) {
        for i in 0..seeds.len() {
            fuzzing::kvtrace_block(&m.mutate(i));
        }
    }
}

/// Found while writing the `kvtrace_block` target: a raw block of 18 bytes (a count and 17
/// empty columns) could say it held 2³² − 1 default records, and a reader handed them all
/// out. A block holds at most `BLOCK_RECORDS` records, as the writer writes them.
#[test]
fn kvtrace_block_a_count_past_the_writers_bound_is_an_error() {
    let mut raw = vec![1u8]; // version 2
    raw.extend_from_slice(b"\xff\xff\xff\xff\x0f");
    raw.extend_from_slice(&[0; 17]);
    assert_eq!(fuzzing::kvtrace_block(&raw), 0);
    let mut most = vec![1u8, 0x80, 0x80, 0x01]; // 16 384 records
    most.extend_from_slice(&[0; 17]);
    assert_eq!(
        fuzzing::kvtrace_block(&most),
        kvlab_trace::kvtrace::BLOCK_RECORDS as u64
    );
}

#[cfg(feature = "parquet")]
#[test]
fn parquet_exports_survive_mutation() {
    let mut seeds = Vec::new();
    for (rel, n) in [
        ("rocksdb/seekrandom_bounded.trace", 20),
        ("libcachesim/cloudPhysicsIO.oracleGeneral.bin", 30),
    ] {
        let mut r = reader(rel, None);
        let mut recs = Vec::new();
        let mut rec = TraceRecord::default();
        while recs.len() < n && r.read(&mut rec).expect("reading the sample") {
            recs.push(rec.clone());
        }
        let kvtrace = encode(r.info(), &recs);
        let mut src = kvlab_trace::open_reader(
            Box::new(std::io::Cursor::new(kvtrace)),
            "mem.kvtrace",
            &kvlab_trace::OpenOptions::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        kvlab_trace::parquet::write_parquet(&mut src, &mut out, std::path::Path::new("p")).unwrap();
        seeds.push(out);
    }
    for seed in &seeds {
        assert!(fuzzing::parquet(seed) > 0, "a seed export gave no record");
    }
    let tokens: &[&[u8]] = &[b"PAR1", b"\0\0\0\0", b"\xff\xff\xff\x7f", b"\x15", b"\x19"];
    kvlab_fuzzkit::export_seeds("parquet", &seeds);
    let mut m = Mutator::new(&seeds, tokens);
    for _ in 0..rounds(300) {
        for i in 0..seeds.len() {
            fuzzing::parquet(&m.mutate(i));
        }
    }
}

/// Found by the first `parquet` campaign: two small files on which the parquet crate
/// panics — an index out of bounds in its RLE decoder while reading rows, and a capacity
/// overflow decoding the footer's metadata. kvlab's reader reports them as errors.
#[cfg(feature = "parquet")]
#[test]
fn parquet_files_the_parquet_crate_panics_on_are_errors() {
    use kvlab_trace::TraceReader;

    for name in [
        "parquet-rle-index-out-of-bounds.parquet",
        "parquet-metadata-capacity-overflow.parquet",
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fuzz")
            .join(name);
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        fuzzing::parquet(&data);
        let mut reader = match kvlab_trace::parquet::open_parquet(&path) {
            Ok(reader) => reader,
            Err(e) => {
                assert!(e.to_string().contains(name), "{e}");
                continue;
            }
        };
        let mut rec = TraceRecord::default();
        let err = loop {
            match reader.read(&mut rec) {
                Ok(true) => {}
                Ok(false) => panic!("{name} read to its end"),
                Err(e) => break e,
            }
        };
        assert!(err.to_string().contains("corrupt Parquet"), "{err}");
    }
}
