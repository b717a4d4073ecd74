//! `kvlab sim`'s outputs: the table of simulated miss ratios, the HTML page that draws
//! them against cache size, and the comparison with hit ratios measured by runs
//! (`--compare RESULT_DIR`).

use kvlab_cachesim::{Mode, SimResult};

/// The results as a table, one row per (policy, size), naming the integer capacity.
pub fn table(results: &[SimResult]) -> String {
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

/// A paragraph for each measured run not drawn: where it was measured, and why no
/// simulated row stands beside it.
fn not_drawn(mode: Mode, results: &[SimResult], measured: &[compare::Measured]) -> String {
    measured
        .iter()
        .filter(|m| {
            !results.iter().any(|r| {
                compare::matching(r, results, measured).is_some_and(|x| std::ptr::eq(x, *m))
            })
        })
        .map(|m| {
            let size = m
                .cache_size_bytes
                .map_or("a size the result does not name".into(), |b| {
                    format!("{b} bytes")
                });
            let why = if mode == Mode::Byte {
                format!("no {} row was simulated at that size", m.closest.name())
            } else {
                format!(
                    "its size in objects is unknown ({} was simulated at several sizes)",
                    m.closest.name()
                )
            };
            format!(
                "<p>{} ({}): measured at {size}; {why}: not drawn.</p>",
                m.store,
                m.dir.display(),
            )
        })
        .collect()
}

/// Ticks at 1, 2 and 5 × 10ⁿ between the smallest size drawn and the largest, which
/// the axis then spans (not the whole decades around them, which would crowd the
/// sizes again).
fn size_ticks(series: &[kvlab_report::chart::Series]) -> Vec<(f64, String)> {
    let (lo, hi) = series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| p.x)
        .filter(|x| *x > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    let mut ticks = Vec::new();
    if lo.is_finite() {
        for e in (lo.log10().floor() as i32)..=(hi.log10().ceil() as i32) {
            for m in [1.0, 2.0, 5.0] {
                let v = m * 10f64.powi(e);
                if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                    let (d, suffix) = match v {
                        v if v >= 1e9 => (1e9, "G"),
                        v if v >= 1e6 => (1e6, "M"),
                        v if v >= 1e3 => (1e3, "k"),
                        _ => (1.0, ""),
                    };
                    ticks.push((v, format!("{}{suffix}", v / d)));
                }
            }
        }
    }
    ticks
}

/// A self-contained page: miss ratio against cache size, one line per policy (and the
/// LRU curve when computed), drawn by the report's line chart. Sizes are on a logarithmic
/// axis (the curve spans the whole working set, the simulated sizes often its first
/// percent); a measured run is a square at the size it was measured at, drawn only where
/// a simulated row is at that size ([`compare::matching`]).
pub fn page(
    trace: &str,
    mode: Mode,
    results: &[SimResult],
    curve: &[(u64, f64)],
    measured: &[compare::Measured],
) -> String {
    use kvlab_report::chart::{Axis, LineChart, Palette, Point, Scale, Series};
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
        // A dense curve: a marker at each of its points would hide the dashes.
        lru.line_only = true;
        series.push(lru);
    }
    // Measured runs: a square at the size each was measured at (the simulated row it
    // stands beside), at the miss ratio the store measured.
    let mut stores: Vec<&str> = Vec::new();
    for m in measured {
        if !stores.contains(&m.store.as_str()) {
            stores.push(&m.store);
        }
    }
    let mut drawn = 0;
    for (k, store) in stores.iter().enumerate() {
        let mut points: Vec<Point> = results
            .iter()
            .filter_map(|r| compare::matching(r, results, measured).map(|m| (r, m)))
            .filter(|(_, m)| m.store == *store)
            .map(|(r, m)| Point::new(r.cache_size as f64, 1.0 - m.hit_ratio()))
            .collect();
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
        points.dedup_by(|a, b| a.x == b.x);
        drawn += points.len();
        let mut s = Series::new(
            format!("{store} (measured)"),
            Palette::nth(names.len() + 1 + k),
            points,
        );
        s.points_only = true;
        series.push(s);
    }
    let not_drawn = not_drawn(mode, results, measured);
    let unit = if mode == Mode::Byte {
        "bytes"
    } else {
        "objects"
    };
    let ticks = size_ticks(&series);
    let mut x = Axis::linear(format!("Cache size ({unit})")).with_scale(Scale::Log10);
    if ticks.len() >= 2 {
        x = x.with_ticks(ticks);
    }
    let chart = LineChart {
        title: "Miss ratio against cache size".into(),
        x,
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
         <style>body{{font-family:sans-serif;margin:2em}}h1{{overflow-wrap:anywhere}}\
         td,th{{padding:2px 8px;text-align:right}}\
         svg{{max-width:100%;height:auto}}</style>\
         </head><body><h1>Cache simulation of {name}</h1><p>{mode} mode{lru}</p>{svg}{not_drawn}\
         <table><tr><th>policy</th><th>cache_size</th><th>requests</th><th>misses</th>\
         <th>miss_ratio</th><th>byte_miss_ratio</th></tr>{rows}</table></body></html>\n",
        name = trace,
        mode = if mode == Mode::Byte { "byte" } else { "object" },
        lru = match (curve.is_empty(), drawn == 0) {
            (true, true) => "",
            (false, true) => "; dashed: LRU's exact miss-ratio curve",
            (true, false) => "; squares: miss ratios the stores measured, at their sizes",
            (false, false) => {
                "; dashed: LRU's exact miss-ratio curve; squares: miss ratios the stores \
                 measured, at their sizes"
            }
        },
    )
}

/// `--compare`: what a run measured (its `result.json`), the policy closest to its store,
/// and the two side by side.
pub mod compare {
    use std::path::{Path, PathBuf};

    use anyhow::{Context, Result};
    use kvlab_cachesim::{PolicySpec, SimResult};
    use serde_json::Value;

    use crate::phase::checks::usage;

    /// A run's measured hit ratio and the simulated policy closest to its store.
    #[derive(Debug)]
    pub struct Measured {
        /// The result directory.
        pub dir: PathBuf,
        /// The store (`moka`, `redis`, …).
        pub store: String,
        /// Gets that hit (READ returned OK).
        pub hits: u64,
        /// Gets that missed (READ returned NOT_FOUND).
        pub misses: u64,
        /// The store's configured memory, in bytes, when the result names it.
        pub cache_size_bytes: Option<u64>,
        /// The policy closest to the store's eviction.
        pub closest: PolicySpec,
        /// Why that policy (the store's setting it follows).
        pub because: String,
    }

    impl Measured {
        /// Hits over gets.
        pub fn hit_ratio(&self) -> f64 {
            self.hits as f64 / (self.hits + self.misses) as f64
        }

        /// Reads `DIR/result.json`.
        pub fn read(dir: &Path) -> Result<Measured> {
            let path = dir.join("result.json");
            if !path.is_file() {
                return Err(usage(format!(
                    "--compare {}: no result.json there (give the directory `kvlab run --out DIR` wrote)",
                    dir.display()
                )));
            }
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let doc: Value = serde_json::from_str(&text).map_err(|e| {
                usage(format!(
                    "{}: line {} column {}: not a kvlab result ({e})",
                    path.display(),
                    e.line(),
                    e.column()
                ))
            })?;
            let store = doc
                .pointer("/store/name")
                .and_then(Value::as_str)
                .ok_or_else(|| usage(format!("{}: no store.name", path.display())))?
                .to_string();
            let (hits, misses) = read_counts(&doc);
            if hits + misses == 0 {
                return Err(usage(format!(
                    "{}: no hit counts (the run's results have no READ operations that hit or \
                     missed: results.ops[name=READ].returns OK / NOT_FOUND)",
                    path.display()
                )));
            }
            let setting = |name: &str| -> Option<&Value> {
                ["/store/options", "/store/stats"]
                    .iter()
                    .find_map(|section| doc.pointer(section).and_then(|s| s.get(name)))
            };
            let text_of = |name: &str| {
                setting(name).map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
            };
            let int_of = |name: &str| {
                setting(name).and_then(|v| {
                    v.as_u64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                })
            };
            let policy = |text: &str| -> Result<PolicySpec> {
                text.parse()
                    .map_err(|e: kvlab_cachesim::SimError| anyhow::anyhow!(e))
            };
            let (closest, because, cache_size_bytes) = match store.as_str() {
                "moka" => {
                    let eviction = text_of("eviction").unwrap_or_else(|| "tinylfu".into());
                    let p = if eviction == "lru" { "LRU" } else { "WTinyLFU" };
                    (
                        policy(p)?,
                        format!("moka eviction={eviction}"),
                        int_of("capacity_bytes"),
                    )
                }
                "foyer" => {
                    let eviction = text_of("eviction").unwrap_or_else(|| "lfu".into());
                    let p = match eviction.as_str() {
                        "lru" => "LRU",
                        "s3fifo" => "S3FIFO",
                        "fifo" => "FIFO",
                        "sieve" => "Sieve",
                        _ => "WTinyLFU",
                    };
                    let size = int_of("memory_bytes").or_else(|| int_of("capacity_bytes"));
                    (policy(p)?, format!("foyer eviction={eviction}"), size)
                }
                "memcached" => (
                    policy("SLRU")?,
                    "memcached segmented LRU (per slab class)".into(),
                    int_of("limit_maxbytes"),
                ),
                "redis" => {
                    let evict = text_of("maxmemory_policy").unwrap_or_default();
                    let samples = int_of("spawned.config.maxmemory-samples").unwrap_or(5);
                    let p = match evict.as_str() {
                        "allkeys-lru" | "volatile-lru" => {
                            format!("SampledLRU:samples={samples}")
                        }
                        "allkeys-lfu" | "volatile-lfu" => "LFU".to_string(),
                        other => {
                            return Err(usage(format!(
                                "{}: redis maxmemory-policy `{other}` has no simulated \
                                 counterpart (allkeys-lru and allkeys-lfu have)",
                                path.display()
                            )))
                        }
                    };
                    let because =
                        format!("redis maxmemory-policy={evict} maxmemory-samples={samples}");
                    (policy(&p)?, because, int_of("maxmemory").filter(|&m| m > 0))
                }
                other => {
                    return Err(usage(format!(
                        "{}: the store `{other}` is not a cache --compare knows (moka, foyer, \
                         memcached, redis)",
                        path.display()
                    )))
                }
            };
            Ok(Measured {
                dir: dir.to_path_buf(),
                store,
                hits,
                misses,
                cache_size_bytes,
                closest,
                because,
            })
        }
    }

    /// Hits and misses of a result's gets: `results.ops[READ].returns` (OK, NOT_FOUND),
    /// else the runner's per-key counts.
    fn read_counts(doc: &Value) -> (u64, u64) {
        let read = doc
            .pointer("/results/ops")
            .and_then(Value::as_array)
            .and_then(|ops| ops.iter().find(|o| o.get("name") == Some(&"READ".into())));
        let count = |v: Option<&Value>, name: &str| {
            v.and_then(|r| r.pointer(&format!("/returns/{name}")))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let (hits, misses) = (count(read, "OK"), count(read, "NOT_FOUND"));
        if hits + misses > 0 {
            return (hits, misses);
        }
        let runner = |name: &str| {
            doc.pointer(&format!("/runner/{name}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        (runner("keys_found"), runner("keys_not_found"))
    }

    /// The run a simulated row stands beside: one whose closest policy is the row's, at
    /// the size the run was measured at. In byte mode that is the store's configured
    /// memory, which the row's size must equal. In object mode the result does not say
    /// how many objects the store held: a run stands beside its policy's row only when
    /// that policy was simulated at one size (the size given for it), and only when it is
    /// the one run of that policy.
    pub fn matching<'a>(
        r: &SimResult,
        results: &[SimResult],
        measured: &'a [Measured],
    ) -> Option<&'a Measured> {
        let mut same = measured.iter().filter(|m| m.closest.name() == r.policy);
        if r.mode == kvlab_cachesim::Mode::Byte {
            return same.find(|m| m.cache_size_bytes == Some(r.cache_size));
        }
        let one_size = results
            .iter()
            .filter(|x| x.policy == r.policy)
            .all(|x| x.cache_size == r.cache_size);
        match (same.next(), same.next()) {
            (Some(m), None) if one_size => Some(m),
            _ => None,
        }
    }

    /// The JSON rows: each result's fields, and beside the ones a run matches,
    /// `hit_ratio` (simulated), `measured_store`, `measured_hit_ratio`, `measured_gets`,
    /// `measured_cache_size_bytes`, `measured_result` and `closest_because`.
    pub fn rows(results: &[SimResult], measured: &[Measured]) -> Result<Vec<Value>> {
        results
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r)?;
                if let (Some(m), Some(obj)) = (matching(r, results, measured), v.as_object_mut()) {
                    obj.insert("hit_ratio".into(), (1.0 - r.miss_ratio).into());
                    obj.insert("measured_store".into(), m.store.clone().into());
                    obj.insert("measured_hit_ratio".into(), m.hit_ratio().into());
                    obj.insert("measured_gets".into(), (m.hits + m.misses).into());
                    obj.insert(
                        "measured_cache_size_bytes".into(),
                        m.cache_size_bytes.into(),
                    );
                    obj.insert("measured_result".into(), m.dir.display().to_string().into());
                    obj.insert("closest_because".into(), m.because.clone().into());
                }
                Ok(v)
            })
            .collect()
    }

    /// The measured hit ratios beside the simulated ones, one line per matched row.
    pub fn table(results: &[SimResult], measured: &[Measured]) -> String {
        let mut t = format!(
            "\n{:<10} {:>14} {:>9} {:<24} {:>14} {:>9} {:>8}  {}\n",
            "store",
            "store_bytes",
            "measured",
            "simulated policy",
            "cache_size",
            "simulated",
            "diff",
            "result"
        );
        for r in results {
            if let Some(m) = matching(r, results, measured) {
                let sim = 1.0 - r.miss_ratio;
                t.push_str(&format!(
                    "{:<10} {:>14} {:>9.4} {:<24} {:>14} {:>9.4} {:>+8.4}  {} ({})\n",
                    m.store,
                    m.cache_size_bytes.map_or("-".into(), |b| b.to_string()),
                    m.hit_ratio(),
                    r.policy,
                    r.cache_size,
                    sim,
                    sim - m.hit_ratio(),
                    m.dir.display(),
                    m.because
                ));
            }
        }
        for m in measured {
            if !results
                .iter()
                .any(|r| matching(r, results, measured).is_some_and(|x| std::ptr::eq(x, m)))
            {
                let sizes: Vec<String> = results
                    .iter()
                    .filter(|r| r.policy == m.closest.name())
                    .map(|r| r.cache_size.to_string())
                    .collect();
                let why = match (results.first().map(|r| r.mode), m.cache_size_bytes) {
                    (Some(kvlab_cachesim::Mode::Byte), Some(b)) => format!(
                        "not compared: no simulated {} row at its size, {b} bytes (simulated \
                         at {}; add --size {b})",
                        m.closest.name(),
                        sizes.join(", ")
                    ),
                    (Some(kvlab_cachesim::Mode::Byte), None) => format!(
                        "not compared: the result does not name the store's memory, so no \
                         simulated {} row is at its size",
                        m.closest.name()
                    ),
                    _ => format!(
                        "not compared: its size in objects is unknown; simulate {} at one \
                         size (the store's object count), or in byte mode (--bytes)",
                        m.closest.name()
                    ),
                };
                t.push_str(&format!(
                    "{:<10} {:>14} {:>9.4} ({why})  {}\n",
                    m.store,
                    m.cache_size_bytes.map_or("-".into(), |b| b.to_string()),
                    m.hit_ratio(),
                    m.dir.display()
                ));
            }
        }
        t
    }
}
