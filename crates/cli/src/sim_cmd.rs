//! `kvlab sim TRACE`: cache eviction simulated over a trace, libCacheSim's semantics, many
//! (policy, size) pairs on all cores, and LRU's miss-ratio curve in one pass.

use kvlab_cachesim::mrc;
use kvlab_cachesim::{simulate_many, Capacity, LoadOptions, Mode, PolicySpec, SimOptions};
use kvlab_cachesim::{SimResult, SimTrace};

use super::*;

/// `kvlab sim`.
#[derive(Args, Debug)]
pub(crate) struct SimCommand {
    #[command(flatten)]
    pub(crate) input: trace_cmd::InputArgs,
    /// Policies, comma-separated, or `all`: LRU, FIFO, Clock, Clock2bit, Sieve, LFU,
    /// S3FIFO, ARC, LIRS, TwoQ, SLRU, WTinyLFU, GDSF, LFUDA, Belady, SampledLRU; with
    /// parameters as `S3FIFO:small=0.1,ghost=0.9,threshold=2`.
    #[arg(long, value_name = "POLICIES", default_value = "LRU")]
    pub(crate) policy: String,
    /// Cache sizes, comma-separated: object counts (1000), byte sizes (64MiB) or a share
    /// of the working set (5%).
    #[arg(long, value_name = "SIZES", default_value = "1%,5%,10%,25%,50%")]
    pub(crate) size: String,
    /// Byte mode: objects have the trace's sizes and capacities are bytes (default:
    /// object mode, every object of size 1).
    #[arg(long)]
    pub(crate) bytes: bool,
    /// The same as a word: `obj` (default) or `byte` (= --bytes).
    #[arg(long, value_name = "obj|byte", value_parser = ["obj", "byte"])]
    pub(crate) mode: Option<String>,
    /// Op-aware: a delete removes the object and a write inserts it without counting a
    /// lookup (default: every request is a lookup, as libCacheSim).
    #[arg(long)]
    pub(crate) op_aware: bool,
    /// Simulate requests of size 0 too (libCacheSim skips them; so does kvlab by default).
    #[arg(long)]
    pub(crate) keep_zero_size: bool,
    /// Print one JSON array (one object per policy and size) instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    /// LRU's whole miss-ratio curve in one pass (exact stack distances): written to
    /// --out DIR as mrc.csv and mrc.json, with the simulated points beside it.
    #[arg(long)]
    pub(crate) mrc: bool,
    /// With --mrc: estimate the curve by SHARDS sampling at this rate (e.g. 0.01) for
    /// traces too large for the exact pass.
    #[arg(long, value_name = "RATE")]
    pub(crate) shards: Option<f64>,
    /// Directory for results.json (and with --mrc, the curve; with --html, a page).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Also write index.html with the miss ratio against size, one line per policy.
    #[arg(long)]
    pub(crate) html: bool,
    /// Simulations run at once (default: every core).
    #[arg(long, value_name = "N", default_value = "0")]
    pub(crate) threads: usize,
}

/// Splits a policy list on commas, keeping `name:key=v,key=v` parameters together.
fn policies(text: &str) -> Result<Vec<PolicySpec>> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(PolicySpec::all());
    }
    let mut items: Vec<String> = Vec::new();
    for piece in text.split(',') {
        let piece = piece.trim();
        match items.last_mut() {
            Some(last) if last.contains(':') && piece.contains('=') && !piece.contains(':') => {
                last.push(',');
                last.push_str(piece);
            }
            _ if piece.is_empty() => {}
            _ => items.push(piece.to_string()),
        }
    }
    items
        .iter()
        .map(|p| p.parse::<PolicySpec>().map_err(|e| usage(e.to_string())))
        .collect()
}

/// Runs `kvlab sim`.
pub(crate) fn sim(cmd: SimCommand) -> Result<ExitCode> {
    let specs = policies(&cmd.policy)?;
    let sizes: Vec<Capacity> = cmd
        .size
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.parse::<Capacity>().map_err(|e| usage(e.to_string())))
        .collect::<Result<_>>()?;
    if (cmd.html || cmd.mrc) && cmd.out.is_none() {
        return Err(usage("--mrc and --html write files: give --out DIR"));
    }
    let mode = if cmd.bytes || cmd.mode.as_deref() == Some("byte") {
        Mode::Byte
    } else {
        Mode::Object
    };
    let mut reader = cmd.input.open(None)?;
    // A trace without sizes (ARC, LIRS, cache2k, txt …) has none to skip: every
    // request is an object of size 1 in object mode.
    let has_sizes = reader.info().has_sizes;
    let load = LoadOptions {
        skip_zero_size: has_sizes && !cmd.keep_zero_size,
        ..LoadOptions::default()
    };
    let started = std::time::Instant::now();
    let trace = SimTrace::from_reader(&mut *reader, load).map_err(|e| anyhow::anyhow!(e))?;
    eprintln!(
        "kvlab: {} requests, {} objects ({} of size 0 skipped) from {} in {:.2} s",
        trace.len(),
        trace.n_objects(),
        trace.skipped_zero_size(),
        cmd.input.trace.display(),
        started.elapsed().as_secs_f64()
    );
    if mode == Mode::Byte && trace.requested_bytes() == 0 {
        return Err(usage(format!(
            "{} has no object sizes: byte mode (--bytes) needs them",
            cmd.input.trace.display()
        )));
    }
    let mut jobs = Vec::new();
    for spec in &specs {
        for size in &sizes {
            jobs.push((spec.clone(), size.resolve(&trace, mode)));
        }
    }
    let options = SimOptions {
        mode,
        op_aware: cmd.op_aware,
    };
    let mut results = Vec::new();
    let mut failed = 0;
    for r in simulate_many(&trace, &jobs, options, cmd.threads) {
        match r {
            Ok(r) => results.push(r),
            Err(e) => {
                failed += 1;
                eprintln!("kvlab: {e}");
            }
        }
    }
    if cmd.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        print!("{}", table(&results));
    }
    if let Some(dir) = &cmd.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join("results.json");
        std::fs::write(&path, serde_json::to_string_pretty(&results)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
        let mut curve = Vec::new();
        if cmd.mrc {
            let t = std::time::Instant::now();
            let m = match cmd.shards {
                Some(rate) => mrc::shards_fixed_rate(&trace, mode, rate),
                None => mrc::lru_stack_distances(&trace, mode),
            };
            let ws = trace.working_set(mode);
            let points: Vec<u64> = (1..=100).map(|i| (ws * i / 100).max(1)).collect();
            curve = m.curve(&points);
            eprintln!(
                "kvlab: LRU miss-ratio curve ({}) in {:.2} s",
                if cmd.shards.is_some() {
                    "SHARDS"
                } else {
                    "exact"
                },
                t.elapsed().as_secs_f64()
            );
            let mut csv = String::from("cache_size,miss_ratio\n");
            for (s, r) in &curve {
                csv.push_str(&format!("{s},{r}\n"));
            }
            std::fs::write(dir.join("mrc.csv"), csv)?;
            let json: Vec<_> = curve
                .iter()
                .map(|(s, r)| serde_json::json!({"cache_size": s, "miss_ratio": r}))
                .collect();
            std::fs::write(
                dir.join("mrc.json"),
                serde_json::to_string_pretty(&json)? + "\n",
            )?;
        }
        if cmd.html {
            let page = page(&cmd.input.trace, mode, &results, &curve);
            std::fs::write(dir.join("index.html"), page)?;
        }
        eprintln!("kvlab: results in {}", dir.display());
    }
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The results as a table, one row per (policy, size), naming the integer capacity.
fn table(results: &[SimResult]) -> String {
    let mut t = format!(
        "{:<12} {:>14} {:>4} {:>10} {:>10} {:>10} {:>10} {:>8}\n",
        "policy", "cache_size", "mode", "requests", "misses", "miss_ratio", "byte_miss", "seconds"
    );
    for r in results {
        t.push_str(&format!(
            "{:<12} {:>14} {:>4} {:>10} {:>10} {:>10.4} {:>10.4} {:>8.3}\n",
            r.policy,
            r.cache_size,
            r.mode.name(),
            r.requests,
            r.misses,
            r.miss_ratio,
            r.byte_miss_ratio,
            r.seconds
        ));
    }
    t
}

/// A self-contained page: miss ratio against cache size, one line per policy (and the
/// LRU curve when computed), drawn by the report's line chart.
fn page(trace: &Path, mode: Mode, results: &[SimResult], curve: &[(u64, f64)]) -> String {
    use kvlab_report::chart::{Axis, LineChart, Palette, Point, Series};
    let mut names: Vec<&str> = results.iter().map(|r| r.policy.as_str()).collect();
    names.dedup();
    let mut series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut rows: Vec<&SimResult> = results.iter().filter(|r| r.policy == *name).collect();
            rows.sort_by_key(|r| r.cache_size);
            let points = rows
                .iter()
                .map(|r| Point::new(r.cache_size as f64, r.miss_ratio))
                .collect();
            Series::new(*name, Palette::nth(i), points)
        })
        .collect();
    if !curve.is_empty() {
        let points = curve
            .iter()
            .map(|&(s, r)| Point::new(s as f64, r))
            .collect();
        let mut lru = Series::new("LRU (exact curve)", "#999999", points);
        lru.dashed = true;
        series.push(lru);
    }
    let unit = if mode == Mode::Byte {
        "bytes"
    } else {
        "objects"
    };
    let chart = LineChart {
        title: "Miss ratio against cache size".into(),
        x: Axis::linear(format!("Cache size ({unit})")),
        y: Axis::linear("Miss ratio"),
        series,
        markers: true,
    };
    let svg = chart.to_svg();
    let rows: String = results
        .iter()
        .map(|r| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4}</td><td>{:.4}</td></tr>",
                r.policy, r.cache_size, r.requests, r.misses, r.miss_ratio, r.byte_miss_ratio
            )
        })
        .collect();
    format!(
        "<!doctype html><html><head><meta charset='utf-8'><title>kvlab sim: {name}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:2px 8px;text-align:right}}</style>\
         </head><body><h1>Cache simulation of {name}</h1><p>{mode} mode{lru}</p>{svg}\
         <table><tr><th>policy</th><th>cache_size</th><th>requests</th><th>misses</th>\
         <th>miss_ratio</th><th>byte_miss_ratio</th></tr>{rows}</table></body></html>\n",
        name = trace.display(),
        mode = if mode == Mode::Byte { "byte" } else { "object" },
        lru = if curve.is_empty() {
            ""
        } else {
            "; dashed: LRU's exact miss-ratio curve"
        },
    )
}
