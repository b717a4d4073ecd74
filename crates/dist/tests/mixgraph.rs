//! kvlab's mixgraph generator against Debian's `db_bench` 7.8.3 (package rocksdb-tools):
//! db_bench runs `--benchmarks=mixgraph` with `-trace_file`, RocksDB's own
//! `trace_analyzer` (from `librocksdb.so.7.8`, through a one-line C++ `main`) turns the
//! trace into text, and every thread's sequence of (operation, key bytes, value size)
//! must be kvlab's. Scan lengths, which query traces do not record, are checked against
//! the average db_bench prints after scanning a database filled by `fillseq`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use kvlab_dist::fit::assert_fits;
use kvlab_dist::mixgraph::{
    thread_stream_seed, GlibcRand, KeyModel, MixGraph, MixGraphConfig, MixGraphError, OpKind,
    SineSchedule,
};

/// One traced operation: kind, key bytes, value size (Puts; 0 otherwise).
type Traced = (OpKind, Vec<u8>, u64);

fn db_bench() -> &'static str {
    let path = "/usr/bin/db_bench";
    assert!(
        Path::new(path).exists(),
        "{path} is missing: apt-get install -y rocksdb-tools librocksdb-dev"
    );
    path
}

/// RocksDB's trace_analyzer, linked once per test run from librocksdb.so.7.8.
fn trace_analyzer() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // Cargo's scratch directory for integration tests: rebuilt in place each run.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mixgraph-trace-analyzer");
        std::fs::create_dir_all(&dir).expect("a directory for trace_analyzer");
        let bin = dir.join("trace_analyzer");
        let source = "namespace rocksdb { int trace_analyzer_tool(int, char**); }\n\
                      int main(int c, char** v) { return rocksdb::trace_analyzer_tool(c, v); }\n";
        let src = dir.join("ta.cc");
        std::fs::write(&src, source).expect("write ta.cc");
        let status = Command::new("g++")
            .arg(&src)
            .arg("-o")
            .arg(&bin)
            .arg("-lrocksdb")
            .status()
            .expect("g++ runs (apt-get install -y g++ librocksdb-dev)");
        assert!(
            status.success(),
            "linking trace_analyzer against librocksdb failed"
        );
        bin
    })
}

/// Runs `db_bench` with `args` in a fresh temp dir; returns the trace as RocksDB's
/// trace_analyzer reads it.
fn run_traced(args: &[String]) -> Vec<Traced> {
    let dir = tempfile::tempdir().expect("temp dir");
    run_traced_in(dir.path(), args)
}

/// [`run_traced`] in `dir`, which keeps the analyzer's output in `dir/analyzed`.
fn run_traced_in(dir: &Path, args: &[String]) -> Vec<Traced> {
    let trace = dir.join("mixgraph.trace");
    let out = Command::new(db_bench())
        .arg("--benchmarks=mixgraph")
        .arg(format!("-db={}", dir.join("db").display()))
        .arg(format!("-trace_file={}", trace.display()))
        .arg("-use_existing_db=false")
        .args(args)
        .output()
        .expect("db_bench runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "db_bench {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let analyzed = dir.join("analyzed");
    std::fs::create_dir_all(&analyzed).expect("analyzer output dir");
    let ta = Command::new(trace_analyzer())
        .arg(format!("-trace_path={}", trace.display()))
        .arg(format!("-output_dir={}", analyzed.display()))
        .arg("-output_prefix=t")
        .arg("-convert_to_human_readable_trace")
        .output()
        .expect("trace_analyzer runs");
    assert!(ta.status.success(), "trace_analyzer failed: {ta:?}");
    let text = std::fs::read_to_string(analyzed.join("t-human_readable_trace.txt"))
        .expect("trace_analyzer's human-readable trace");
    text.lines()
        .enumerate()
        .map(|(line, l)| parse_human_line(l).unwrap_or_else(|| panic!("line {}: {l}", line + 1)))
        .collect()
}

/// The timestamps (µs) of a human-readable trace's lines.
fn timestamps_us(dir: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(dir.join("t-human_readable_trace.txt"))
        .expect("trace_analyzer's human-readable trace");
    text.lines()
        .map(|l| {
            l.split_whitespace()
                .nth(4)
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| panic!("no timestamp in {l}"))
        })
        .collect()
}

/// `0x<KEY HEX> <type> <cf> <value size> <timestamp>`; types 0 Get, 1 Put, 6 Seek.
fn parse_human_line(line: &str) -> Option<Traced> {
    let mut f = line.split_whitespace();
    let hex = f.next()?.strip_prefix("0x")?;
    let key = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    let kind = match f.next()? {
        "0" => OpKind::Get,
        "1" => OpKind::Put,
        "6" => OpKind::Seek,
        _ => return None,
    };
    let _cf = f.next()?;
    let size: u64 = f.next()?.parse().ok()?;
    Some((kind, key, if kind == OpKind::Put { size } else { 0 }))
}

/// db_bench's flags for `config` (those that differ from the defaults matter; all are
/// passed).
fn flags(c: &MixGraphConfig) -> Vec<String> {
    let mut v = vec![
        format!("-num={}", c.num),
        format!("-reads={}", c.reads),
        format!("-threads={}", c.threads),
        format!("-seed={}", c.seed),
        format!("-key_size={}", c.key_size),
        format!("-prefix_size={}", c.prefix_size),
        format!("-keys_per_prefix={}", c.keys_per_prefix),
        format!("-keyrange_num={}", c.keyrange_num),
        format!("-mix_max_scan_len={}", c.mix_max_scan_len),
        format!("-mix_max_value_size={}", c.mix_max_value_size),
        format!("-duration={}", c.duration),
        format!("-sine_mix_rate={}", c.sine_mix_rate),
        format!(
            "-sine_mix_rate_interval_milliseconds={}",
            c.sine_mix_rate_interval_milliseconds
        ),
    ];
    for (name, x) in [
        ("keyrange_dist_a", c.keyrange_dist_a),
        ("keyrange_dist_b", c.keyrange_dist_b),
        ("keyrange_dist_c", c.keyrange_dist_c),
        ("keyrange_dist_d", c.keyrange_dist_d),
        ("key_dist_a", c.key_dist_a),
        ("key_dist_b", c.key_dist_b),
        ("value_theta", c.value_theta),
        ("value_k", c.value_k),
        ("value_sigma", c.value_sigma),
        ("iter_theta", c.iter_theta),
        ("iter_k", c.iter_k),
        ("iter_sigma", c.iter_sigma),
        ("mix_get_ratio", c.mix_get_ratio),
        ("mix_put_ratio", c.mix_put_ratio),
        ("mix_seek_ratio", c.mix_seek_ratio),
        ("sine_a", c.sine_a),
        ("sine_b", c.sine_b),
        ("sine_c", c.sine_c),
        ("sine_d", c.sine_d),
        ("sine_mix_rate_noise", c.sine_mix_rate_noise),
    ] {
        // Rust's shortest round-trip form; gflags parses it with strtod.
        v.push(format!("-{name}={x:?}"));
    }
    v
}

/// PR #5953's ZippyDB-like flags, scaled down.
fn zippy(seed: i64, threads: i32) -> MixGraphConfig {
    MixGraphConfig {
        num: 50_000,
        reads: 2000,
        seed,
        threads,
        ..MixGraphConfig::zippydb_example()
    }
}

fn ours(config: &MixGraphConfig, thread: u32) -> Vec<Traced> {
    let mut g = MixGraph::new(config, thread).expect("valid config");
    let n = config
        .ops_per_thread()
        .expect("a fixed number of operations");
    (0..n)
        .map(|_| {
            let op = g.next_op();
            (op.kind, op.key.to_vec(), op.value_size_bytes)
        })
        .collect()
}

#[track_caller]
fn assert_same_sequence(what: &str, ours: &[Traced], traced: &[Traced]) {
    if let Some(i) = (0..ours.len().max(traced.len())).find(|&i| ours.get(i) != traced.get(i)) {
        panic!(
            "{what}: first difference at op {i} of {} (db_bench {}):\n kvlab    {:?}\n db_bench {:?}",
            ours.len(),
            traced.len(),
            ours.get(i),
            traced.get(i)
        );
    }
}

/// Whether `merged` is an interleaving of `a` and `b` (each kept in order): the set of
/// reachable positions in `a` after each merged element.
fn is_interleaving(merged: &[Traced], a: &[Traced], b: &[Traced]) -> bool {
    if merged.len() != a.len() + b.len() {
        return false;
    }
    let mut reach = vec![0usize];
    for (n, op) in merged.iter().enumerate() {
        let mut next = Vec::new();
        for &i in &reach {
            let j = n - i;
            if a.get(i) == Some(op) {
                next.push(i + 1);
            }
            if b.get(j) == Some(op) {
                next.push(i);
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            return false;
        }
        reach = next;
    }
    true
}

fn check_against_db_bench(what: &str, config: &MixGraphConfig) {
    let traced = run_traced(&flags(config));
    match config.threads {
        1 => assert_same_sequence(what, &ours(config, 0), &traced),
        2 => {
            let (t0, t1) = (ours(config, 0), ours(config, 1));
            // A sibling sharing thread 0's model and table draws thread 1's stream.
            let mut sibling = MixGraph::new(config, 0).expect("valid").for_thread(1);
            let shared: Vec<Traced> = (0..t1.len())
                .map(|_| {
                    let op = sibling.next_op();
                    (op.kind, op.key.to_vec(), op.value_size_bytes)
                })
                .collect();
            assert_eq!(shared, t1, "{what}: for_thread(1) differs from new(1)");
            assert!(
                is_interleaving(&traced, &t0, &t1),
                "{what}: the trace ({} ops) is no interleaving of kvlab's threads 0 and 1",
                traced.len()
            );
            // Not vacuous: the two streams differ.
            assert_ne!(t0, t1);
        }
        n => panic!("{n} threads: not compared"),
    }
}

#[test]
fn key_ranges_match_db_bench() {
    for seed in [1, 7, 20_201_124] {
        let c = zippy(seed, 1);
        assert_eq!(c.effective_key_model(), KeyModel::PrefixDist);
        check_against_db_bench(&format!("zippy seed {seed}"), &c);
    }
}

#[test]
fn key_ranges_two_threads_match_db_bench() {
    for seed in [3, 99] {
        check_against_db_bench(&format!("zippy 2 threads seed {seed}"), &zippy(seed, 2));
    }
}

#[test]
fn power_model_without_ranges_matches_db_bench() {
    // All_dist: a signed remainder, so negative key numbers (0xFF… keys) appear.
    for (seed, threads) in [(5, 1), (11, 1), (13, 2)] {
        let c = MixGraphConfig {
            num: 30_000,
            reads: 3000,
            seed,
            threads,
            key_size: 20,
            key_dist_a: 0.002312,
            key_dist_b: 0.3467,
            mix_get_ratio: 0.6,
            mix_put_ratio: 0.3,
            mix_seek_ratio: 0.1,
            ..MixGraphConfig::default()
        };
        assert_eq!(c.effective_key_model(), KeyModel::AllDist);
        let keys = ours(&c, 0);
        assert!(
            keys.iter().any(|(_, k, _)| k[0] == 0xFF),
            "some negative key number"
        );
        check_against_db_bench(&format!("power seed {seed} threads {threads}"), &c);
    }
}

#[test]
fn uniform_keys_with_prefixes_and_wraps_match_db_bench() {
    // All_random (db_bench's default), a key prefix, short keys, small values that wrap.
    for seed in [2, 17] {
        let c = MixGraphConfig {
            num: 20_000,
            reads: 3000,
            seed,
            key_size: 12,
            keys_per_prefix: 10,
            prefix_size: 6,
            mix_get_ratio: 0.3,
            mix_put_ratio: 0.5,
            mix_seek_ratio: 0.2,
            mix_max_value_size: 40,
            value_sigma: 60.0,
            ..MixGraphConfig::default()
        };
        assert_eq!(c.effective_key_model(), KeyModel::AllRandom);
        let ops = ours(&c, 0);
        assert!(
            ops.iter().any(|&(k, _, s)| k == OpKind::Put && s < 10),
            "some wrapped value size under the minimum"
        );
        check_against_db_bench(&format!("uniform prefixed seed {seed}"), &c);
    }
}

#[test]
fn infinite_inversions_cast_as_db_bench_does() {
    // num = 97: draw 0 (u = 0) comes once in 97 ops; with only Puts, u = 0 gives
    // pow(0, -k) = inf, cast to INT64_MIN, raised to the minimum of 10; with b < 0 the
    // power rank is infinite too.
    let c = MixGraphConfig {
        num: 97,
        reads: 3000,
        seed: 4,
        key_size: 8,
        key_dist_a: 0.5,
        key_dist_b: -0.7,
        mix_get_ratio: 0.0,
        mix_put_ratio: 1.0,
        ..MixGraphConfig::default()
    };
    check_against_db_bench("u = 0 casts", &c);
}

/// Fills a database with `fillseq` and runs mixgraph on it — in two processes, or in one
/// (`--benchmarks=fillseq,mixgraph`, where fillseq's thread is the first db_bench counts,
/// so mixgraph's thread gets `seed + 2`); returns mixgraph's printed `avg size: V value,
/// S scan`.
fn printed_averages(config: &MixGraphConfig, one_process: bool) -> (f64, f64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = format!("-db={}", dir.path().join("db").display());
    let fill = |benchmarks: &str| {
        let mut cmd = Command::new(db_bench());
        cmd.args([benchmarks, "-use_existing_db=false", &db, "-value_size=10"])
            .args(flags(config));
        cmd
    };
    let out = if one_process {
        fill("--benchmarks=fillseq,mixgraph")
            .output()
            .expect("db_bench runs")
    } else {
        let filled = fill("--benchmarks=fillseq")
            .output()
            .expect("db_bench fillseq runs");
        assert!(filled.status.success(), "fillseq failed: {filled:?}");
        Command::new(db_bench())
            .args(["--benchmarks=mixgraph", "-use_existing_db=true", &db])
            .args(flags(config))
            .output()
            .expect("db_bench mixgraph runs")
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "mixgraph failed: {stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("mixgraph"))
        .unwrap_or_else(|| panic!("no mixgraph line in {stdout}"));
    let tail = line
        .split("avg size: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no averages in {line}"));
    let mut nums = tail.split([' ', ',']).filter_map(|w| w.parse::<f64>().ok());
    let value = nums.next().expect("average value size");
    let scan = nums.next().expect("average scan length");
    (value, scan)
}

#[test]
fn scan_lengths_match_db_bench_printed_average() {
    // A full database of keys 0..num: a Seek lands on its key (position = key number)
    // and scans min(scan_len, num − key number) entries.
    for (seed, seek, one_process) in [(8, 0.2, false), (21, 0.5, true), (5, 0.3, true)] {
        let c = MixGraphConfig {
            num: 20_000,
            reads: 4000,
            mix_get_ratio: 1.0 - seek - 0.1,
            mix_put_ratio: 0.1,
            mix_seek_ratio: seek,
            mix_max_scan_len: 300,
            ..zippy(seed, 1)
        };
        let threads_before = u32::from(one_process);
        let stream = thread_stream_seed(seed, threads_before, 0);
        let mut g = MixGraph::with_stream_seed(&c, stream).expect("valid");
        let (mut seeks, mut scanned, mut puts, mut values) = (0u64, 0u64, 0u64, 0u64);
        for _ in 0..c.reads {
            let op = g.next_op();
            match op.kind {
                OpKind::Seek => {
                    seeks += 1;
                    scanned += op.scan_len.min(c.num as u64 - op.key_number);
                }
                OpKind::Put => {
                    puts += 1;
                    values += op.value_size_bytes;
                }
                OpKind::Get => {}
            }
        }
        assert!(
            seeks > 100 && scanned > seeks,
            "{seeks} seeks, {scanned} scanned"
        );
        let (value, scan) = printed_averages(&c, one_process);
        let (our_value, our_scan) = (values as f64 / puts as f64, scanned as f64 / seeks as f64);
        // db_bench prints one decimal.
        assert!(
            (our_scan - scan).abs() <= 0.05 + 1e-9,
            "scan: kvlab {our_scan}, db_bench {scan}"
        );
        assert!(
            (our_value - value).abs() <= 0.05 + 1e-9,
            "value: kvlab {our_value}, db_bench {value}"
        );
    }
}

#[test]
fn glibc_rand_matches_the_c_library() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("r.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <stdlib.h>\nint main(int c, char** v) {\n\
         if (c > 1) srand(atoi(v[1]));\n\
         for (int i = 0; i < 1000; i++) printf(\"%d\\n\", rand());\n return 0; }\n",
    )
    .expect("write r.c");
    let bin = dir.path().join("r");
    let status = Command::new("cc")
        .arg(&src)
        .arg("-o")
        .arg(&bin)
        .status()
        .expect("cc runs");
    assert!(status.success());
    for seed in [None, Some(1u32), Some(12345), Some(0)] {
        let mut cmd = Command::new(&bin);
        if let Some(s) = seed {
            cmd.arg(s.to_string());
        }
        let out = String::from_utf8(cmd.output().expect("r runs").stdout).expect("utf-8");
        let theirs: Vec<i32> = out.lines().map(|l| l.parse().expect("a number")).collect();
        let mut g = GlibcRand::new(seed.unwrap_or(1));
        let mine: Vec<i32> = (0..1000).map(|_| g.rand()).collect();
        assert_eq!(mine, theirs, "seed {seed:?}");
    }
}

// ---- statistical signatures of the four key models (no db_bench: these are kvlab's) ----

fn model(m: KeyModel) -> MixGraphConfig {
    MixGraphConfig {
        num: 300_000,
        keyrange_num: 30,
        key_model: Some(m),
        ..zippy(42, 1)
    }
}

/// Range ids of `n` draws, and the key numbers.
fn draws(c: &MixGraphConfig, n: usize) -> (Vec<usize>, Vec<u64>) {
    let mut g = MixGraph::new(c, 0).expect("valid");
    let size = c.num / c.keyrange_num;
    (0..n)
        .map(|_| {
            let k = g.next_op().key_number;
            ((k / size as u64) as usize, k)
        })
        .unzip()
}

#[test]
fn prefix_models_share_range_hotness() {
    let n = 200_000;
    let (dist_ranges, dist_keys) = draws(&model(KeyModel::PrefixDist), n);
    let (random_ranges, random_keys) = draws(&model(KeyModel::PrefixRandom), n);
    // Same draw, same range: the two models differ only inside a range.
    assert_eq!(dist_ranges, random_ranges);
    assert_ne!(dist_keys, random_keys);
    // Range frequencies fit the table's shares (ranges with a share only).
    let g = MixGraph::new(&model(KeyModel::PrefixDist), 0).expect("valid");
    let p = g.key_ranges().expect("a key-range table").probabilities();
    let mut counts = vec![0u64; p.len()];
    for r in &dist_ranges {
        counts[*r] += 1;
    }
    let (mut obs, mut exp) = (Vec::new(), Vec::new());
    let (mut o_rest, mut p_rest) = (0, 0.0);
    for (c, q) in counts.iter().zip(&p) {
        if q * n as f64 >= 20.0 {
            obs.push(*c);
            exp.push(*q);
        } else {
            o_rest += c;
            p_rest += q;
        }
    }
    if p_rest * n as f64 >= 5.0 {
        obs.push(o_rest);
        exp.push(p_rest);
    }
    assert!(obs.len() >= 3, "hot ranges: {counts:?}");
    assert_fits("range hotness", &obs, &exp);
    // The hottest range is far above the average share.
    let max = *counts.iter().max().expect("ranges");
    assert!(max as f64 > 3.0 * n as f64 / p.len() as f64, "{counts:?}");
}

/// Offsets inside the hottest range, in 50 bins.
fn offsets_in_hottest(ranges: &[usize], keys: &[u64], size: u64) -> Vec<u64> {
    let mut per = HashMap::new();
    for r in ranges {
        *per.entry(*r).or_insert(0u64) += 1;
    }
    let hot = *per.iter().max_by_key(|(_, c)| **c).expect("ranges").0;
    let mut bins = vec![0u64; 50];
    for (r, k) in ranges.iter().zip(keys) {
        if *r == hot {
            bins[((k % size) * 50 / size) as usize] += 1;
        }
    }
    bins
}

#[test]
fn prefix_random_is_uniform_inside_a_range_and_prefix_dist_is_not() {
    let n = 200_000;
    let c = model(KeyModel::PrefixRandom);
    let size = (c.num / c.keyrange_num) as u64;
    let (ranges, keys) = draws(&c, n);
    let bins = offsets_in_hottest(&ranges, &keys, size);
    assert_fits("Prefix_random offsets", &bins, &[1.0 / 50.0; 50]);
    // Prefix_dist: the power model's low ranks take far more draws than any key of
    // Prefix_random (rank 1 alone takes a·1^b = 0.23 % of a range's draws; a uniform
    // key 0.01 %), and many keys of the range are never drawn.
    let (dranges, dkeys) = draws(&model(KeyModel::PrefixDist), n);
    let hot = dranges[0];
    let freq = |ranges: &[usize], keys: &[u64]| {
        let mut f: HashMap<u64, u64> = HashMap::new();
        for (r, k) in ranges.iter().zip(keys) {
            if *r == hot {
                *f.entry(*k).or_default() += 1;
            }
        }
        f
    };
    let (fd, fr) = (freq(&dranges, &dkeys), freq(&ranges, &keys));
    let max = |f: &HashMap<u64, u64>| *f.values().max().expect("draws in the hot range");
    assert!(
        max(&fd) > 5 * max(&fr),
        "hottest key: Prefix_dist {}, Prefix_random {}",
        max(&fd),
        max(&fr)
    );
    assert!(
        (fd.len() as f64) < 0.8 * fr.len() as f64,
        "distinct keys: Prefix_dist {}, Prefix_random {}",
        fd.len(),
        fr.len()
    );
}

#[test]
fn all_random_is_uniform_and_all_dist_is_skewed() {
    let n = 200_000;
    let c = MixGraphConfig {
        key_model: Some(KeyModel::AllRandom),
        ..model(KeyModel::AllRandom)
    };
    let (_, keys) = draws(&c, n);
    let mut bins = vec![0u64; 64];
    for k in &keys {
        bins[(k * 64 / c.num as u64) as usize] += 1;
    }
    assert_fits("All_random keys", &bins, &[1.0 / 64.0; 64]);
    let (_, dkeys) = draws(&model(KeyModel::AllDist), n);
    let mut freq = HashMap::new();
    for k in &dkeys {
        *freq.entry(*k).or_insert(0u64) += 1;
    }
    let mut counts: Vec<u64> = freq.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let top: u64 = counts.iter().take(100).sum();
    // The power model's ranks 1..=100 take P(u ≤ a·100^b) of the draws (1.1 % here);
    // uniform keys would give the 100 hottest of 300 000 keys about 0.2 %.
    let (a, b) = (c.key_dist_a, c.key_dist_b);
    let expected = a * 100f64.powf(b) * n as f64;
    assert!(
        top as f64 > 0.9 * expected,
        "top 100 keys: {top} of {n}, expected {expected:.0}"
    );
}

#[test]
fn decorrelate_keeps_the_marginals_and_breaks_the_coupling() {
    for decorrelate in [false, true] {
        let c = MixGraphConfig {
            decorrelate,
            ..model(KeyModel::AllRandom)
        };
        let mut g = MixGraph::new(&c, 0).expect("valid");
        let p = g.op_mix().probabilities();
        let mut counts = [0u64; 3];
        let mut kind_of: HashMap<u64, OpKind> = HashMap::new();
        let mut coupled = true;
        for _ in 0..100_000 {
            let op = g.next_op();
            counts[op.kind as usize] += 1;
            if *kind_of.entry(op.key_number).or_insert(op.kind) != op.kind {
                coupled = false;
            }
        }
        assert_fits(&format!("op mix (decorrelate {decorrelate})"), &counts, &p);
        // db_bench: a key's op type is a function of the key's draw.
        assert_eq!(coupled, !decorrelate);
    }
}

#[test]
fn config_errors_name_the_flag_and_range() {
    let bad = |c: MixGraphConfig| MixGraph::new(&c, 0).expect_err("refused");
    let d = MixGraphConfig::default;
    let e = bad(MixGraphConfig {
        keyrange_num: 0,
        ..d()
    });
    assert!(
        matches!(
            e,
            MixGraphError::Flag {
                flag: "keyrange_num",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "mixgraph flag -keyrange_num=0: expected 1 to num (1000000), at most 16777216"
    );
    for (c, flag) in [
        (MixGraphConfig { num: 0, ..d() }, "num"),
        (
            MixGraphConfig {
                mix_put_ratio: -1.0,
                ..d()
            },
            "mix_put_ratio",
        ),
        (
            MixGraphConfig {
                mix_get_ratio: 0.0,
                ..d()
            },
            "mix_get_ratio",
        ),
        (
            MixGraphConfig {
                mix_max_scan_len: 0,
                ..d()
            },
            "mix_max_scan_len",
        ),
        (
            MixGraphConfig {
                mix_max_value_size: -5,
                ..d()
            },
            "mix_max_value_size",
        ),
        (
            MixGraphConfig {
                prefix_size: 17,
                ..d()
            },
            "prefix_size",
        ),
        (
            MixGraphConfig {
                keys_per_prefix: 2_000_000,
                ..d()
            },
            "keys_per_prefix",
        ),
        (
            MixGraphConfig {
                value_k: f64::NAN,
                ..d()
            },
            "value_k",
        ),
        (
            MixGraphConfig {
                sine_mix_rate_noise: 1.5,
                ..d()
            },
            "sine_mix_rate_noise",
        ),
        (
            MixGraphConfig {
                sine_mix_rate: true,
                sine_a: 0.5,
                ..d()
            },
            "sine_a",
        ),
        (MixGraphConfig { key_size: 0, ..d() }, "key_size"),
        (
            MixGraphConfig {
                sine_mix_rate_interval_milliseconds: u64::MAX,
                ..d()
            },
            "sine_mix_rate_interval_milliseconds",
        ),
        (
            MixGraphConfig {
                num: i64::MAX,
                keyrange_num: 1 << 30,
                ..d()
            },
            "keyrange_num",
        ),
        (
            MixGraphConfig {
                keyrange_dist_a: 1e-20,
                key_dist_a: 0.1,
                key_dist_b: 0.1,
                ..d()
            },
            "keyrange_dist_a",
        ),
    ] {
        let e = bad(c);
        assert!(
            matches!(&e, MixGraphError::Flag { flag: f, .. } if *f == flag),
            "{flag}: {e}"
        );
        assert!(e.to_string().contains(&format!("-{flag}=")), "{e}");
    }
    let e = bad(MixGraphConfig {
        key_model: Some(KeyModel::PrefixDist),
        ..d()
    });
    assert!(
        matches!(
            e,
            MixGraphError::KeyModel {
                model: "Prefix_dist",
                ..
            }
        ),
        "{e}"
    );
    let e = bad(MixGraphConfig {
        key_model: Some(KeyModel::AllDist),
        ..d()
    });
    assert!(e.to_string().contains("key_dist_a"), "{e}");
}

#[test]
fn sine_schedule_follows_db_bench_formula() {
    let c = MixGraphConfig {
        sine_mix_rate: true,
        sine_a: 1000.0,
        sine_b: 0.5,
        sine_c: 0.25,
        sine_d: 5000.0,
        sine_mix_rate_interval_milliseconds: 100,
        sine_mix_rate_noise: 0.5,
        ..MixGraphConfig::default()
    };
    let mut s = SineSchedule::new(&c).expect("valid");
    let mut noise = GlibcRand::new(1);
    let mut last = 0u64;
    let mut per_interval: HashMap<u64, Vec<u64>> = HashMap::new();
    while last < 2_000_000_000 {
        last = s.next_due_ns();
        per_interval
            .entry(last / 100_000_000)
            .or_default()
            .push(last);
    }
    // Interval 0 runs at db_bench's initial limit: 1e6/s over 100 ms.
    assert_eq!(per_interval[&0].len(), 100_000);
    for i in 1..20u64 {
        let t = i as f64 * 0.1;
        let origin = 1000.0 * (0.5 * t + 0.25).sin() + 5000.0;
        let delta = f64::from(noise.rand() % 1000 - 500) * 0.5;
        let rate = origin + delta;
        let got = per_interval[&i].len() as f64;
        // Requests in a 100 ms interval: rate × 0.1 s, ± one at either edge.
        assert!(
            (got - rate * 0.1).abs() <= 2.0,
            "interval {i}: {got} vs rate {rate}"
        );
    }
}

#[test]
fn sine_rate_matches_db_bench_over_time() {
    // Gets only (db_bench's read limiter; the write limiter's rate stays unset), rates
    // 4000..8000 ops/s so every 100 ms refill holds at least 100 ops (Debian's db_bench
    // asserts that), 250 ms intervals, 3 s.
    let c = MixGraphConfig {
        num: 20_000,
        duration: 3,
        seed: 2,
        sine_mix_rate: true,
        sine_a: 2000.0,
        sine_b: 3.0,
        sine_c: 0.0,
        sine_d: 6000.0,
        sine_mix_rate_interval_milliseconds: 250,
        ..MixGraphConfig::default()
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let args = flags(&c);
    run_traced_in(dir.path(), &args);
    let ts = timestamps_us(&dir.path().join("analyzed"));
    let t0 = ts[0];
    let mut theirs = [0u64; 12];
    for t in &ts {
        if let Some(w) = theirs.get_mut(((t - t0) / 250_000) as usize) {
            *w += 1;
        }
    }
    let mut s = SineSchedule::new(&c).expect("valid");
    let mut ours = [0u64; 12];
    loop {
        let due = s.next_due_ns();
        match ours.get_mut((due / 250_000_000) as usize) {
            Some(w) => *w += 1,
            None => break,
        }
    }
    // Interval 0 runs at the limiters' initial 1e6 ops/s: far above the sine's 1500 per
    // 250 ms, whatever this machine manages.
    assert!(
        theirs[0] > 4 * 1500,
        "interval 0: db_bench {} ops",
        theirs[0]
    );
    // From interval 2 on (interval 1 still spends tokens of the initial rate), db_bench's
    // limiter refills every 100 ms, so 250 ms windows alternate between two and three
    // refills: compare the sum.
    let (sum_theirs, sum_ours): (u64, u64) = (theirs[2..].iter().sum(), ours[2..].iter().sum());
    let ratio = sum_theirs as f64 / sum_ours as f64;
    assert!(
        (ratio - 1.0).abs() < 0.06,
        "intervals 2..12: db_bench {sum_theirs} ops {theirs:?}, kvlab {sum_ours} {ours:?}"
    );
}

#[test]
fn edge_flags_match_db_bench() {
    // Short keys and prefixes (< 8 bytes), the k = 0 (logarithm) branch with a θ, reads
    // defaulting to num, a scan bound that wraps.
    let c = MixGraphConfig {
        num: 3000,
        reads: -1,
        seed: 31,
        key_size: 6,
        keys_per_prefix: 4,
        prefix_size: 3,
        value_theta: 5.0,
        value_k: 0.0,
        value_sigma: 40.0,
        iter_k: 0.0,
        mix_get_ratio: 0.2,
        mix_put_ratio: 0.7,
        mix_seek_ratio: 0.1,
        mix_max_value_size: 2000,
        mix_max_scan_len: 7,
        key_dist_a: 0.01,
        key_dist_b: 0.5,
        keyrange_dist_a: 1.0,
        keyrange_dist_b: -0.5,
        keyrange_num: 7,
        ..MixGraphConfig::default()
    };
    assert_eq!(c.ops_per_thread(), Some(3000));
    check_against_db_bench("edge flags", &c);
}

#[test]
fn db_bench_command_lines_parse() {
    // PR #5953's example, with flags mixgraph does not read among them.
    let line = "--benchmarks=mixgraph -use_direct_io_for_flush_and_compaction=true \
        -use_direct_reads=true -cache_size=268435456 -key_dist_a=0.002312 \
        -key_dist_b=0.3467 -keyrange_dist_a=14.18 -keyrange_dist_b=-2.917 \
        -keyrange_dist_c=0.0164 -keyrange_dist_d=-0.08082 -keyrange_num=30 \
        -value_k=0.2615 -value_sigma=25.45 -iter_k=2.517 -iter_sigma=14.236 \
        -mix_get_ratio=0.85 -mix_put_ratio=0.14 -mix_seek_ratio=0.01 \
        -sine_mix_rate_interval_milliseconds=5000 -sine_a=350 -sine_b=0.0105 \
        -sine_d=50000 --perf_level=2 -reads=1000000 -num=5000000 -key_size=48";
    let args: Vec<&str> = line.split_whitespace().collect();
    let (c, unused) = MixGraphConfig::from_db_bench_args(args).expect("parses");
    assert_eq!(c, MixGraphConfig::zippydb_example());
    assert_eq!(
        unused,
        [
            "--benchmarks=mixgraph",
            "-use_direct_io_for_flush_and_compaction=true",
            "-use_direct_reads=true",
            "-cache_size=268435456",
            "--perf_level=2"
        ]
    );
    // What the db_bench tests pass round-trips.
    let z = zippy(9, 2);
    let f = flags(&z);
    let (back, unused) =
        MixGraphConfig::from_db_bench_args(f.iter().map(String::as_str)).expect("parses");
    assert!(unused.is_empty(), "{unused:?}");
    assert_eq!(back, z);
    let (c, _) =
        MixGraphConfig::from_db_bench_args(["-sine_mix_rate", "-sine_a=10"]).expect("parses");
    assert!(c.sine_mix_rate);
    let e = MixGraphConfig::from_db_bench_args(["-num=lots"]).expect_err("refused");
    assert_eq!(
        e.to_string(),
        "mixgraph flag -num=lots: expected an integer"
    );
    let e = MixGraphConfig::from_db_bench_args(["-keyrange_num=0"]).expect_err("refused");
    assert!(
        matches!(
            e,
            MixGraphError::Flag {
                flag: "keyrange_num",
                ..
            }
        ),
        "{e}"
    );
}
