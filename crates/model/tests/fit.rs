//! Fits against known parameters: plain draws of each size candidate, and traces written
//! by Debian's `db_bench` 7.8.3 (package rocksdb-tools) running `mixgraph` with known
//! flags — the fitted model must give those flags back, and kvlab's generator (bit-exact
//! with db_bench, see kvlab-dist's tests) running the fitted model must reproduce the
//! trace's key-range profile.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use kvlab_dist::mixgraph::{pareto_cdf_inversion, KeyRanges, MixGraph, MixGraphConfig, Mt19937_64};
use kvlab_model::keys::ranked_shares;
use kvlab_model::sizes::{fit_sizes, fit_sizes_clamped, DrawGrid, SizeClamp, SizeModel};
use kvlab_model::{fit, FitOptions, FitReport, KeyRangeRule, Model, RangeCut};
use kvlab_trace::{OpenOptions, TraceReader, TraceRecord};

/// Uniform draws in (0, 1) from `mt19937_64`.
fn uniforms(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Mt19937_64::new(seed);
    (0..n)
        .map(|_| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64)
        .collect()
}

fn histogram(sizes: impl Iterator<Item = u64>) -> BTreeMap<u64, u64> {
    let mut h = BTreeMap::new();
    for s in sizes {
        *h.entry(s).or_insert(0) += 1;
    }
    h
}

#[test]
fn generalized_pareto_draws_give_back_db_bench_value_flags() {
    // db_bench's default value size: ParetoCdfInversion(u, 0, 0.2615, 25.45).
    let h = histogram(
        uniforms(1, 200_000)
            .into_iter()
            .map(|u| pareto_cdf_inversion(u, 0.0, 0.2615, 25.45) as u64),
    );
    let f = fit_sizes(&h).expect("sizes");
    assert_eq!(f.best().model.name(), "generalized_pareto", "{f:#?}");
    let (theta, k, sigma, rmse) = f.generalized_pareto().expect("a GPD candidate");
    assert_eq!(theta, 0.0);
    assert!((k - 0.2615).abs() < 0.01, "k {k}");
    assert!((sigma / 25.45 - 1.0).abs() < 0.02, "sigma {sigma}");
    assert!(rmse < 0.003, "rmse {rmse}");
}

#[test]
fn each_candidate_is_chosen_for_its_own_draws() {
    let u = uniforms(2, 100_000);
    let v = uniforms(3, 100_000);
    // Box–Muller normals.
    let normal: Vec<f64> = u
        .iter()
        .zip(&v)
        .map(|(a, b)| (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos())
        .collect();
    let lognormal = histogram(normal.iter().map(|z| (5.0 + 0.8 * z).exp().ceil() as u64));
    let f = fit_sizes(&lognormal).expect("sizes");
    assert_eq!(f.best().model.name(), "lognormal", "{f:#?}");
    let SizeModel::Lognormal { mu, sigma } = f.best().model else {
        unreachable!("checked above")
    };
    assert!(
        (mu - 5.0).abs() < 0.02 && (sigma - 0.8).abs() < 0.02,
        "{mu} {sigma}"
    );

    // Weibull, scale 300, shape 2.5 (a light tail no Pareto-type candidate matches).
    let weibull = histogram(
        u.iter()
            .map(|u| (300.0 * (-u.ln()).powf(1.0 / 2.5)).ceil() as u64),
    );
    let f = fit_sizes(&weibull).expect("sizes");
    assert_eq!(f.best().model.name(), "weibull", "{f:#?}");
    let SizeModel::Weibull { scale, shape } = f.best().model else {
        unreachable!("checked above")
    };
    assert!(
        (scale / 300.0 - 1.0).abs() < 0.01 && (shape - 2.5).abs() < 0.05,
        "{scale} {shape}"
    );

    // Pareto, x_m = 100, α = 1.5.
    let pareto = histogram(u.iter().map(|u| (100.0 * u.powf(-1.0 / 1.5)).ceil() as u64));
    let f = fit_sizes(&pareto).expect("sizes");
    let best = f.best().model.name();
    // A Pareto is a generalized Pareto (k = 1/α, σ = x_m/α, θ = x_m): either may win.
    assert!(best == "pareto" || best == "generalized_pareto", "{f:#?}");
    let p = f
        .candidates
        .iter()
        .find_map(|c| match c.model {
            SizeModel::Pareto { scale, shape } => Some((scale, shape)),
            _ => None,
        })
        .expect("a Pareto candidate");
    assert!(
        (p.0 / 100.0 - 1.0).abs() < 0.02 && (p.1 - 1.5).abs() < 0.05,
        "{p:?}"
    );
}

fn db_bench() -> &'static str {
    let path = "/usr/bin/db_bench";
    assert!(
        Path::new(path).exists(),
        "{path} is missing: apt-get install -y rocksdb-tools librocksdb-dev"
    );
    path
}

/// Runs db_bench's mixgraph with `flags` in `dir`; returns the trace's path.
fn db_bench_trace(dir: &Path, flags: &[&str]) -> PathBuf {
    let trace = dir.join("mixgraph.trace");
    let out = Command::new(db_bench())
        .arg("--benchmarks=mixgraph")
        .arg(format!("-db={}", dir.join("db").display()))
        .arg(format!("-trace_file={}", trace.display()))
        .arg("-use_existing_db=false")
        .args(flags)
        .output()
        .expect("db_bench runs");
    assert!(
        out.status.success(),
        "db_bench {flags:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    trace
}

fn fit_path(path: &Path, options: &FitOptions) -> kvlab_model::Fit {
    let mut reader = kvlab_trace::open(path, &OpenOptions::default()).expect("trace opens");
    fit(&mut reader, options).expect("trace fits")
}

/// The Kolmogorov–Smirnov distance between two discrete distributions over the same
/// ordered bins.
fn ks(p: &[f64], q: &[f64]) -> f64 {
    let (mut cp, mut cq, mut d) = (0.0, 0.0, 0.0f64);
    for i in 0..p.len().max(q.len()) {
        cp += p.get(i).copied().unwrap_or(0.0);
        cq += q.get(i).copied().unwrap_or(0.0);
        d = d.max((cp - cq).abs());
    }
    d
}

/// The flags of PR #5953's ZippyDB-like example, on a smaller key space.
const ZIPPY: &[&str] = &[
    "-num=50000",
    "-reads=1000000",
    "-seed=7",
    "-key_size=48",
    "-keyrange_num=10",
    "-keyrange_dist_a=14.18",
    "-keyrange_dist_b=-2.917",
    "-keyrange_dist_c=0.0164",
    "-keyrange_dist_d=-0.08082",
    "-key_dist_a=0.002312",
    "-key_dist_b=0.3467",
    "-mix_get_ratio=0.85",
    "-mix_put_ratio=0.14",
    "-mix_seek_ratio=0.01",
    "-value_k=0.2615",
    "-value_sigma=25.45",
];

/// Accesses per key range of `config`'s generator over `ops` operations, in range order.
fn regenerated_range_accesses(config: &MixGraphConfig, ops: usize) -> Vec<u64> {
    let mut g = MixGraph::new(config, 0).expect("the fitted model runs");
    let per = (config.num / config.keyrange_num) as u64;
    let last = config.keyrange_num as usize - 1;
    let mut counts = vec![0u64; last + 1];
    for _ in 0..ops {
        let k = g.next_op().key_number;
        counts[((k / per) as usize).min(last)] += 1;
    }
    counts
}

/// The CDF of accesses over keys ranked by count inside their range (ranges of `per`
/// key numbers, ranks pooled), at 100 evenly spaced fractions of the range.
fn in_range_rank_cdf(counts: &HashMap<u64, u64>, per: u64, ranges: usize) -> Vec<f64> {
    let mut by_range = vec![Vec::new(); ranges];
    for (&k, &c) in counts {
        by_range[((k / per) as usize).min(ranges - 1)].push(c);
    }
    let mut pooled = vec![0u64; per as usize];
    for r in &mut by_range {
        r.sort_unstable_by(|a, b| b.cmp(a));
        for (p, &c) in pooled.iter_mut().zip(r.iter()) {
            *p += c;
        }
    }
    let total: u64 = pooled.iter().sum();
    let mut cum = Vec::with_capacity(pooled.len());
    let mut s = 0;
    for c in pooled {
        s += c;
        cum.push(s as f64 / total as f64);
    }
    (1..=100)
        .map(|i| cum[(i * cum.len() / 100).saturating_sub(1)])
        .collect()
}

fn print_report(r: &FitReport) {
    eprintln!("{r}");
}

#[test]
fn db_bench_mixgraph_trace_gives_back_its_flags() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = db_bench_trace(dir.path(), ZIPPY);
    let (flags, _) =
        MixGraphConfig::from_db_bench_args(ZIPPY.iter().copied()).expect("valid flags");
    let f = fit_path(
        &trace,
        &FitOptions {
            source: trace.display().to_string(),
            key_ranges: KeyRangeRule::Ranges(10),
            range_cut: RangeCut::EqualSpan,
            ..FitOptions::default()
        },
    );
    print_report(&f.report);
    let c = f.model.to_config();

    // Op mix: db_bench's bounds are ⌈1000·ratio⌉ out of 1000, so the flags are the exact
    // probabilities; 10⁶ ops give a standard error under 4·10⁻⁴.
    // The trace's shares: within 0.15 percentage points (1 % relative for get and put).
    for (fitted, flag) in f.report.mix.into_iter().zip([0.85, 0.14, 0.01]) {
        assert!((fitted - flag).abs() < 0.0015, "mix {fitted} vs -{flag}");
        assert!(
            (fitted - flag).abs() / flag < 0.01 || flag < 0.05,
            "mix {fitted} vs {flag}"
        );
    }
    // The model's, at db_bench's resolution (thousandths): the flags exactly.
    assert_eq!(
        (c.mix_get_ratio, c.mix_put_ratio, c.mix_seek_ratio),
        (0.85, 0.14, 0.01)
    );
    assert_eq!((c.key_size, c.keyrange_num), (48, 10));
    // The key space: db_bench's key numbers 0..50000, seen through the keys accessed.
    assert!((49_000..=50_000).contains(&c.num), "num {}", c.num);

    // Key ranges: the fitted b and d against the flags, and the fitted profile against
    // the shares db_bench's own table gives (kvlab-dist's KeyRanges is db_bench's
    // InitiateExpDistribution, floors included).
    assert!(
        (c.keyrange_dist_b - -2.917).abs() < 0.1,
        "b {}",
        c.keyrange_dist_b
    );
    assert!(
        (c.keyrange_dist_d - -0.08082).abs() < 0.05,
        "d {}",
        c.keyrange_dist_d
    );
    let mut table = KeyRanges::new(&flags).expect("valid").probabilities();
    table.sort_by(|a, b| b.total_cmp(a));
    let traced = f.report.key_ranges.ranked_shares();
    let d_trace = ks(&traced, &table);
    assert!(d_trace < 0.01, "trace vs db_bench's table: KS {d_trace}");
    let mut refitted = KeyRanges::new(&c).expect("valid").probabilities();
    refitted.sort_by(|a, b| b.total_cmp(a));
    let d_model = ks(&refitted, &table);
    assert!(
        d_model < 0.02,
        "fitted table vs db_bench's: KS {d_model}\n{refitted:?}\n{table:?}"
    );

    // The fitted model, run by kvlab's generator, regenerates the trace's profile.
    let regenerated = ranked_shares(&regenerated_range_accesses(&c, 1_000_000));
    let d_regen = ks(&regenerated, &traced);
    assert!(
        d_regen < 0.02,
        "regenerated vs trace: KS {d_regen}\n{regenerated:?}\n{traced:?}"
    );
    eprintln!("KS trace/db_bench table {d_trace:.4}, fitted table/db_bench table {d_model:.4}, regenerated/trace {d_regen:.4}");

    // Value sizes: db_bench takes a Put's size from the draw that chose Put, so
    // `u = draw/num ≥ 850/num` (the Put bound starts at 850): the largest size is the
    // inverse at u = 850/50000, and the tail above is cut (why value_k is recovered in
    // its own test, with a large -num).
    let v = f.report.value_sizes.as_ref().expect("value sizes fitted");
    let largest = pareto_cdf_inversion(850.0 / 50_000.0, 0.0, 0.2615, 25.45);
    assert_eq!(v.max as i64, largest);

    // Scan lengths are not in RocksDB query traces: db_bench's defaults are kept.
    assert!(f.report.scan_lengths.is_none());
    assert_eq!((c.iter_k, c.iter_sigma), (2.517, 14.236));

    // The power model: the in-range popularity of the fitted model, regenerated, against
    // the trace's: the CDF of accesses over each range's keys ranked by count, at 100
    // evenly spaced fractions of the range.
    let p = f.report.power.as_ref().expect("power model fitted");
    let mut traced_keys: HashMap<u64, u64> = HashMap::new();
    let mut reader = kvlab_trace::open(&trace, &OpenOptions::default()).expect("trace opens");
    let mut rec = TraceRecord::default();
    while reader.read(&mut rec).expect("trace reads") {
        let mut w = [0u8; 8];
        w.copy_from_slice(&rec.key[..8]);
        *traced_keys.entry(u64::from_be_bytes(w)).or_insert(0) += 1;
    }
    let mut g = MixGraph::new(&c, 0).expect("the fitted model runs");
    let mut regenerated_keys: HashMap<u64, u64> = HashMap::new();
    for _ in 0..1_000_000 {
        *regenerated_keys.entry(g.next_op().key_number).or_insert(0) += 1;
    }
    let ours = in_range_rank_cdf(&regenerated_keys, (c.num / 10) as u64, 10);
    let theirs = in_range_rank_cdf(&traced_keys, 5000, 10);
    let d_power = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "power model: fitted a={} b={} (flags a=0.002312 b=0.3467); in-range rank CDF KS \
         regenerated/trace {d_power:.4}",
        p.a, p.b
    );
    assert!(
        d_power < 0.25,
        "in-range popularity: KS {d_power}\n{ours:?}\n{theirs:?}"
    );

    // The trace lasts about 13 s: no rate fit.
    assert!(!c.sine_mix_rate);

    // db_bench itself, run with the fitted model's flags, gives the trace's range profile
    // and op mix back.
    let rerun_dir = tempfile::tempdir().expect("temp dir");
    let mut args = f.model.db_bench_args();
    args.push("-seed=11".into());
    let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let rerun = db_bench_trace(rerun_dir.path(), &arg_refs);
    let g = fit_path(
        &rerun,
        &FitOptions {
            key_ranges: KeyRangeRule::Ranges(10),
            range_cut: RangeCut::EqualSpan,
            ..FitOptions::default()
        },
    );
    let d_rerun = ks(&g.report.key_ranges.ranked_shares(), &traced);
    eprintln!("KS db_bench rerun with the fitted flags/trace {d_rerun:.4}");
    assert!(d_rerun < 0.02, "db_bench rerun vs trace: KS {d_rerun}");
    for (a, b) in g.report.mix.iter().zip(&f.report.mix) {
        assert!(
            (a - b).abs() < 0.0015,
            "mix {:?} vs {:?}",
            g.report.mix,
            f.report.mix
        );
    }

    // The model file reads back to the same config; the JSON report parses.
    let text = f.model.to_toml();
    let back = Model::from_toml(&text, Path::new("zippy.model.toml")).expect("reads back");
    assert_eq!(back.to_config(), c);
    assert!(text.contains("[fit.value_size.weibull]"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&f.report.to_json()).expect("JSON");
    assert_eq!(json["requests"], 1_000_000);
    assert_eq!(
        json["value_sizes"]["candidates"].as_array().map(Vec::len),
        Some(6)
    );
}

/// A Twitter-format trace of 60 000 requests over 6 000 8-byte keys whose sets have
/// Weibull(300, 2.5) value sizes: a light tail no generalized Pareto matches.
fn weibull_trace(dir: &Path) -> PathBuf {
    let path = dir.join("weibull.twitter.csv");
    let mut text = String::new();
    for (i, u) in uniforms(11, 60_000).into_iter().enumerate() {
        let key = format!("key{:05}", (i * 7919) % 6000);
        if i % 2 == 0 {
            let size = (300.0 * (-u.ln()).powf(1.0 / 2.5)).ceil() as u64;
            text.push_str(&format!("{},{key},8,{size},1,set,0\n", i / 100));
        } else {
            text.push_str(&format!("{},{key},8,0,1,get,0\n", i / 100));
        }
    }
    std::fs::write(&path, text).expect("trace written");
    path
}

#[test]
fn the_sst_rule_cuts_ranges_of_the_given_file_size() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = weibull_trace(dir.path());
    let ranges = |sst_file_bytes| {
        let options = FitOptions {
            sst_file_bytes,
            locality: false,
            ..FitOptions::default()
        };
        fit_path(&path, &options).report.key_ranges.keyrange_num
    };
    // 64 MiB holds all 6 000 keys (8 B + ~270 B); 100 KiB files hold ~370 keys each.
    assert_eq!(ranges(64 << 20), 1);
    let small = ranges(100 << 10);
    assert!((15..=18).contains(&small), "{small} ranges");
}

#[test]
fn a_better_law_than_db_benchs_is_written_to_the_model_and_drawn_by_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = weibull_trace(dir.path());
    let f = fit_path(&path, &FitOptions::default());
    print_report(&f.report);
    let law = f.model.kvlab.value_model.expect("a value_model");
    let SizeModel::Weibull { scale, shape } = law else {
        panic!("not a Weibull: {law:?}")
    };
    assert!(
        (scale / 300.0 - 1.0).abs() < 0.02 && (shape - 2.5).abs() < 0.1,
        "{law:?}"
    );
    // The [mixgraph] keys keep the generalized Pareto, for db_bench.
    assert!(f.model.mixgraph.value_k.is_some());
    let text = f.model.to_toml();
    assert!(
        text.contains("value_model = { model = \"weibull\", scale = "),
        "{text}"
    );
    assert!(text.contains("[fit.key_sizes]\n8 = 60000\n"), "{text}");

    // Read back and run: Put sizes follow the Weibull, not the generalized Pareto.
    let mut model = Model::from_toml(&text, Path::new("m.toml")).expect("reads back");
    assert_eq!(model.kvlab.value_model, Some(law));
    model.locality = None;
    let mut config = model.to_config();
    assert_eq!(config.value_model, Some(law));
    // Independent draws: with db_bench's one draw per op, Puts of 6 000 key numbers take
    // only the draws whose `draw % 1000` falls in the Put band, which skews any law.
    config.decorrelate = true;
    let mut g = MixGraph::new(&config, 0).expect("runs");
    let mut sizes = Vec::new();
    for _ in 0..200_000 {
        let op = g.next_op();
        if op.value_size_bytes > 0 {
            sizes.push(op.value_size_bytes);
        }
    }
    sizes.sort_unstable();
    assert!(sizes.len() > 50_000, "{} puts", sizes.len());
    let worst = [100u64, 200, 250, 300, 350, 450, 600]
        .iter()
        .map(|&x| {
            let below = sizes.partition_point(|&s| s <= x) as f64 / sizes.len() as f64;
            (below - law.cdf(x as f64)).abs()
        })
        .fold(0.0, f64::max);
    assert!(worst < 0.02, "CDF off by {worst}");
    let mut gpd_only = config.clone();
    gpd_only.value_model = None;
    let mut g = MixGraph::new(&gpd_only, 0).expect("runs");
    let mut differ = 0;
    let mut g2 = MixGraph::new(&config, 0).expect("runs");
    for _ in 0..1000 {
        let (a, b) = (g.next_op().value_size_bytes, g2.next_op().value_size_bytes);
        differ += usize::from(a != b);
    }
    assert!(
        differ > 100,
        "the law changes the sizes ({differ} of 1000 differ)"
    );
}

#[test]
fn db_bench_value_sizes_give_back_value_flags() {
    // Puts only over 5·10⁶ key numbers: u = draw/num covers (0, 1) (db_bench writes
    // max(⌈X⌉, 10), wrapping sizes over 1024, so the CDF from 10 to 1024 is the GPD's).
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = db_bench_trace(
        dir.path(),
        &[
            "-num=5000000",
            "-reads=300000",
            "-seed=5",
            "-mix_get_ratio=0",
            "-mix_put_ratio=1",
            "-mix_seek_ratio=0",
            "-value_k=0.2615",
            "-value_sigma=25.45",
        ],
    );
    let f = fit_path(&trace, &FitOptions::default());
    print_report(&f.report);
    let v = f.report.value_sizes.as_ref().expect("value sizes fitted");
    assert_eq!(v.samples, 300_000);
    assert_eq!(v.best().model.name(), "generalized_pareto", "{v:#?}");
    assert_eq!(
        f.model.kvlab.value_model, None,
        "db_bench's own law needs no other"
    );
    let c = f.model.to_config();
    assert_eq!(c.value_theta, 0.0);
    assert!((c.value_k - 0.2615).abs() < 0.02, "value_k {}", c.value_k);
    assert!(
        (c.value_sigma / 25.45 - 1.0).abs() < 0.05,
        "value_sigma {}",
        c.value_sigma
    );
    assert_eq!(
        (c.mix_get_ratio, c.mix_put_ratio, c.mix_seek_ratio),
        (0.0, 1.0, 0.0)
    );
}

#[test]
fn db_bench_sine_rate_is_found() {
    // 45 s at 3000 ± 1000 ops/s, period 2π/0.3 ≈ 21 s (two periods after the first and
    // last seconds are dropped); every 100 ms refill holds at least 100 ops (Debian's
    // db_bench asserts that). A low rate, so that db_bench keeps up on a loaded machine:
    // when it falls behind, its rate (not the fit) leaves the flags.
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = db_bench_trace(
        dir.path(),
        &[
            "-num=20000",
            "-duration=45",
            "-seed=3",
            "-sine_mix_rate=true",
            "-sine_a=1000",
            "-sine_b=0.3",
            "-sine_c=0.5",
            "-sine_d=3000",
            "-sine_mix_rate_interval_milliseconds=500",
        ],
    );
    let f = fit_path(&trace, &FitOptions::default());
    print_report(&f.report);
    let q = f.report.qps.as_ref().expect("45 s of rates");
    assert!(q.sine_chosen, "{q:?}");
    let c = f.model.to_config();
    assert!(c.sine_mix_rate);
    assert!((c.sine_b / 0.3 - 1.0).abs() < 0.03, "sine_b {}", c.sine_b);
    assert!(
        (c.sine_a / 1000.0 - 1.0).abs() < 0.15,
        "sine_a {}",
        c.sine_a
    );
    assert!(
        (c.sine_d / 3000.0 - 1.0).abs() < 0.05,
        "sine_d {}",
        c.sine_d
    );
    // db_bench's t counts from its start, the fit's from the first request: close.
    assert!((c.sine_c - 0.5).abs() < 0.3, "sine_c {}", c.sine_c);
    assert!(
        q.sine_r2 > 0.8 && q.sine_rmse < 0.5 * q.constant_rmse,
        "{q:?}"
    );
}

#[test]
fn arc_trace_fits_every_request() {
    // ARC's OLTP trace: 914 145 reads of numeric ids (README.moka-arc.md), no clock, no
    // sizes.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/traces/arc/OLTP.lis.zst");
    let f = fit_path(&path, &FitOptions::default());
    assert_eq!(f.report.requests, 914_145);
    assert_eq!(f.report.kinds.get, 914_145);
    let c = f.model.to_config();
    assert_eq!((c.mix_get_ratio, c.keyrange_num), (1.0, 1));
    assert!(c.key_dist_a > 0.0 && c.key_dist_b > 0.0);
    // ARC's table: 186 880 unique pages.
    assert_eq!(f.report.distinct_keys, 186_880);
    assert_eq!(c.num, 186_880);
    assert!(f.report.qps.is_none() && !c.sine_mix_rate);
    c.validate().expect("the fitted model is one db_bench runs");
}

/// A trace held in memory.
struct Records {
    info: kvlab_trace::TraceInfo,
    records: std::vec::IntoIter<TraceRecord>,
}

impl TraceReader for Records {
    fn info(&self) -> &kvlab_trace::TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, kvlab_trace::TraceError> {
        match self.records.next() {
            Some(r) => {
                *rec = r;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

#[test]
fn ops_map_to_db_bench_kinds_and_ranges_follow_the_rule() {
    use kvlab_trace::{KeyEncoding, Op, TimeUnit, TraceInfo};
    // 1000 keys (bytes, 12 B); per key: 6 gets, 2 merges, 1 put, 1 seek, 1 delete, on
    // column families 0 and 1; each write 100 B.
    let mut records = Vec::new();
    for k in 0..1000u32 {
        for (i, op) in [
            Op::Get,
            Op::Get,
            Op::MultiGet,
            Op::Get,
            Op::Gets,
            Op::Read,
            Op::Merge,
            Op::Merge,
            Op::Put,
            Op::SeekForPrev,
            Op::Delete,
        ]
        .into_iter()
        .enumerate()
        {
            let mut r = TraceRecord::default();
            r.clear();
            r.set_key(format!("key{k:09}").as_bytes());
            r.op = op;
            r.cf = (i % 2) as u32;
            r.ts = u64::from(k);
            r.value_size = if op.is_write() { 100 } else { 0 };
            records.push(r);
        }
    }
    let info = TraceInfo {
        format: "memory".into(),
        key_encoding: KeyEncoding::Bytes,
        time_unit: TimeUnit::Micros,
        has_sizes: true,
        ..TraceInfo::default()
    };
    let mut reader = Records {
        info,
        records: records.clone().into_iter(),
    };
    let f = fit(
        &mut reader,
        &FitOptions {
            key_ranges: KeyRangeRule::KeysPerRange(100),
            ..FitOptions::default()
        },
    )
    .expect("fits");
    let r = &f.report;
    assert_eq!((r.kinds.get, r.kinds.put, r.kinds.seek), (6000, 3000, 1000));
    assert_eq!((r.kinds.delete, r.kinds.other), (1000, 0));
    assert_eq!(r.column_families[&0].get + r.column_families[&1].get, 6000);
    assert_eq!(r.column_families[&1].delete, 0);
    assert_eq!(r.column_families[&0].delete, 1000);
    assert_eq!(r.mix, [0.6, 0.3, 0.1]);
    assert_eq!((r.key_size, r.distinct_keys), (12, 1000));
    assert!(
        r.notes.iter().any(|n| n.contains("1000 deletes")),
        "{:?}",
        r.notes
    );
    // 1000 keys, 100 per range; equal accesses: a flat profile.
    let c = f.model.to_config();
    assert_eq!((c.num, c.keyrange_num), (1000, 10));
    for s in f.report.key_ranges.ranked_shares() {
        assert!((s - 0.1).abs() < 1e-12);
    }
    // RocksDB's defaults: 64 MiB / (12 + 100) B = 599 186 keys per range: one range, and
    // the model is db_bench's All_dist (no keyrange_dist_*).
    let mut sst = Records {
        info: reader.info.clone(),
        records: records.into_iter(),
    };
    let f = fit(&mut sst, &FitOptions::default()).expect("fits");
    let c = f.model.to_config();
    assert_eq!(c.keyrange_num, 1);
    assert!(!c.uses_key_ranges() && c.uses_power_model());
    let mut reader = Records {
        info: reader.info.clone(),
        records: Vec::new().into_iter(),
    };
    assert!(
        fit(&mut reader, &FitOptions::default()).is_err(),
        "an empty trace"
    );
}

#[test]
fn recorded_scan_lengths_give_back_iter_flags() {
    use kvlab_trace::{KeyEncoding, Op, TimeUnit, TraceInfo};
    // Seeks whose scan lengths are db_bench's ParetoCdfInversion(u, 0, 0.3, 20) (kvtrace
    // records scan lengths; RocksDB query traces do not).
    let records: Vec<TraceRecord> = uniforms(4, 100_000)
        .into_iter()
        .enumerate()
        .map(|(i, u)| {
            let mut r = TraceRecord::default();
            r.clear();
            r.id = i as u64 % 5000;
            r.op = Op::Scan;
            r.scan_len = pareto_cdf_inversion(u, 0.0, 0.3, 20.0).clamp(1, 1 << 30) as u32;
            r
        })
        .collect();
    let mut reader = Records {
        info: TraceInfo {
            format: "memory".into(),
            key_encoding: KeyEncoding::Id,
            time_unit: TimeUnit::Sequence,
            ..TraceInfo::default()
        },
        records: records.into_iter(),
    };
    let f = fit(&mut reader, &FitOptions::default()).expect("fits");
    let c = f.model.to_config();
    assert_eq!(c.mix_seek_ratio, 1.0);
    assert_eq!(c.iter_theta, 0.0);
    assert!((c.iter_k - 0.3).abs() < 0.02, "iter_k {}", c.iter_k);
    assert!(
        (c.iter_sigma / 20.0 - 1.0).abs() < 0.03,
        "iter_sigma {}",
        c.iter_sigma
    );
    assert!(c.mix_max_scan_len as u64 > f.report.scan_lengths.as_ref().map_or(0, |s| s.max));
    // No sizes in the trace: value flags stay db_bench's.
    assert_eq!((c.value_k, c.value_sigma), (0.2615, 25.45));
}

#[test]
fn the_locality_layer_is_fitted_only_where_key_numbers_are_ranks() {
    use kvlab_dist::mixgraph::KeyRangeLayout;
    use kvlab_trace::{KeyEncoding, Op, TimeUnit, TraceInfo};
    // Ids `step·k` for k in 0..200, scanned three times.
    let trace = |step: u64| Records {
        info: TraceInfo {
            format: "memory".into(),
            key_encoding: KeyEncoding::Id,
            time_unit: TimeUnit::Micros,
            ..TraceInfo::default()
        },
        records: (0..600u64)
            .map(|i| {
                let mut r = TraceRecord::default();
                r.clear();
                r.id = step * (i % 200);
                r.op = Op::Get;
                r.ts = i;
                r
            })
            .collect::<Vec<_>>()
            .into_iter(),
    };
    let options = |end: u64| FitOptions {
        key_ranges: KeyRangeRule::SstLayout("/db".into()),
        layout: Some(KeyRangeLayout {
            starts: vec![0, end / 2],
            end,
            source: "sst:/db".into(),
        }),
        ..FitOptions::default()
    };
    // Ids 0..200: the layout's key numbers are the ranks.
    let f = fit(&mut trace(1), &options(200)).expect("fits");
    let l = f.model.locality.expect("a locality layer");
    assert!((l.new_share - 200.0 / 600.0).abs() < 1e-12, "{l:?}");
    // Ids 0, 3, 6, …: positions are not ranks; no layer, and a note says why.
    let f = fit(&mut trace(3), &options(600)).expect("fits");
    assert!(f.model.locality.is_none());
    assert!(
        f.report
            .notes
            .iter()
            .any(|n| n.contains("no locality layer")),
        "{:?}",
        f.report.notes
    );
    // Without a layout the same trace's key numbers are its ranks.
    let f = fit(&mut trace(3), &FitOptions::default()).expect("fits");
    assert!(f.model.locality.is_some());
}

/// The value sizes of `ops` operations of kvlab's mixgraph generator (bit-exact with
/// db_bench's, see kvlab-dist's tests) under `config`.
fn generated_value_sizes(config: &MixGraphConfig, ops: u64) -> BTreeMap<u64, u64> {
    let mut g = MixGraph::new(config, 0).expect("valid flags");
    let mut h = BTreeMap::new();
    for _ in 0..ops {
        let op = g.next_op();
        if op.kind == kvlab_dist::mixgraph::OpKind::Put {
            *h.entry(op.value_size_bytes).or_insert(0u64) += 1;
        }
    }
    h
}

#[test]
fn value_sizes_through_db_benchs_clamp_give_back_k_and_sigma() {
    // db_bench's Put sizes: max(⌈X⌉, 10) (a third of them 10 with the default flags),
    // wrapped over 1024, drawn from u = r/num with r a Put's draw. Within 10 % for k and
    // σ through the clamp (and, with a small num, the cut under the first Put slot).
    for (k, sigma, num, ops, mix) in [
        (0.2615, 25.45, 1_000_000i64, 100_000u64, [0.83, 0.14, 0.03]),
        (0.2615, 25.45, 100_000, 100_000, [0.83, 0.14, 0.03]),
        (0.2615, 25.45, 50_000, 100_000, [0.85, 0.14, 0.01]),
        (0.5, 40.0, 1_000_000, 200_000, [0.83, 0.14, 0.03]),
        (0.35, 8.0, 200_000, 200_000, [0.5, 0.5, 0.0]),
    ] {
        let config = MixGraphConfig {
            num,
            reads: ops as i64,
            value_k: k,
            value_sigma: sigma,
            mix_get_ratio: mix[0],
            mix_put_ratio: mix[1],
            mix_seek_ratio: mix[2],
            seed: 7,
            ..MixGraphConfig::default()
        };
        let h = generated_value_sizes(&config, ops);
        let (first_put_slot, ..) = kvlab_dist::mixgraph::OpMix::new(&config).put_slots();
        let clamp = SizeClamp::db_bench_values(1024).with_grid(DrawGrid {
            num: num as u64,
            first_put_slot,
        });
        let fit = fit_sizes_clamped(&h, Some(clamp)).expect("sizes");
        let (theta, fk, fsigma, _) = fit.generalized_pareto().expect("a GPD candidate");
        let at_floor = fit.censored as f64 / fit.samples as f64;
        eprintln!(
            "k {k} σ {sigma} num {num}: {} sizes, {:.1} % at 10 B: θ {theta} k {fk:.4} \
             σ {fsigma:.3}",
            fit.samples,
            100.0 * at_floor
        );
        assert!(fit.censored > 0 && fit.clamp == Some(clamp));
        assert_eq!(theta, 0.0, "k {k} σ {sigma} num {num}");
        assert!(
            (fk / k - 1.0).abs() < 0.1,
            "k {k} σ {sigma} num {num}: k {fk}"
        );
        assert!(
            (fsigma / sigma - 1.0).abs() < 0.1,
            "k {k} σ {sigma} num {num}: σ {fsigma}"
        );
    }
}

#[test]
fn the_clamp_changes_nothing_without_clamped_sizes() {
    // Sizes all over the floor and under the wrap: the censored likelihood is the plain
    // one, so the maximum-likelihood fit gives back the draws' law too.
    let h = histogram(
        uniforms(4, 100_000)
            .into_iter()
            .map(|u| 20 + pareto_cdf_inversion(u, 0.0, 0.2, 50.0).min(900) as u64),
    );
    let fit = fit_sizes_clamped(&h, Some(SizeClamp::db_bench_values(1024))).expect("sizes");
    assert_eq!(fit.censored, 0);
    let (theta, k, sigma, _) = fit.generalized_pareto().expect("a GPD candidate");
    // θ = 20 is found (its likelihood ratio over θ = 0 is large).
    assert!((theta - 20.0).abs() < 1.5, "θ {theta}");
    assert!(
        (k - 0.2).abs() < 0.03 && (sigma / 50.0 - 1.0).abs() < 0.05,
        "{k} {sigma}"
    );
}

#[test]
fn clamped_fit_of_many_distinct_sizes_and_odd_histograms_ends() {
    // 60 000 draws over a 1 MiB wrap, most sizes distinct: the likelihood takes
    // neighbouring sizes together (at most 1000 bins) and still gives the law back.
    let h = histogram(uniforms(5, 60_000).into_iter().map(|u| {
        SizeClamp::db_bench_values(1 << 20).apply(pareto_cdf_inversion(u, 0.0, 0.4, 5000.0))
    }));
    assert!(h.len() > 10_000, "{} distinct sizes", h.len());
    let t = std::time::Instant::now();
    let fit = fit_sizes_clamped(&h, Some(SizeClamp::db_bench_values(1 << 20))).expect("sizes");
    let (_, k, sigma, _) = fit.generalized_pareto().expect("a GPD candidate");
    eprintln!(
        "{} distinct sizes: k {k} σ {sigma} in {:?}",
        h.len(),
        t.elapsed()
    );
    assert!(
        (k / 0.4 - 1.0).abs() < 0.1 && (sigma / 5000.0 - 1.0).abs() < 0.1,
        "{k} {sigma}"
    );
    // Every size at the floor, one size, sizes over the wrap, a zero size: a fit, no
    // panic, finite parameters.
    for h in [
        BTreeMap::from([(10u64, 500u64)]),
        BTreeMap::from([(3u64, 5u64)]),
        BTreeMap::from([(77u64, 1u64)]),
        BTreeMap::from([(0u64, 2u64), (5000, 3), (u64::MAX, 1)]),
    ] {
        let fit = fit_sizes_clamped(&h, Some(SizeClamp::db_bench_values(1024))).expect("sizes");
        let (theta, k, sigma, _) = fit.generalized_pareto().expect("a GPD candidate");
        assert!(
            theta.is_finite() && k.is_finite() && sigma.is_finite(),
            "{h:?}: {fit:?}"
        );
    }
}
