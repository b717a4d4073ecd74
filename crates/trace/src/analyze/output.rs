//! The files [`Analysis::write`] makes in its output directory.
//!
//! | file | columns |
//! | --- | --- |
//! | `summary.json` | the [`Summary`](super::Summary): `requests`, `objects`, `compulsory_miss_ratio`, `one_hit_objects`, `x_hit`, `zipf_alpha`, `zipf_r2`, `top_frequencies`, … |
//! | `ops.csv` | `op,requests,fraction` |
//! | `cf_ops.csv` | `cf,op,requests,fraction_of_cf` (column family, tenant or client) |
//! | `qps.csv` | `start_s,width_s,total,<op>…`: requests per second in each bucket (`start_request,width_requests` and requests per bucket for traces without a clock) |
//! | `sizes.csv` | `field,op,size_bytes,requests,cdf`: key and value sizes per op (`field` `key`, `value`), and object sizes (key + value) at each object's first request (`field` `object`, op `all`, counting objects) |
//! | `size_stats.csv` | `field,op,requests,min_bytes,mean_bytes,p50_bytes,p99_bytes,max_bytes,rounded` (`rounded`: sizes above 1023 kept to 8 significant bits) |
//! | `scan_length.csv` | `op,scan_len,requests,cdf` (Seek, SeekForPrev, Scan) |
//! | `access_count_cdf.csv` | `op,requests_per_key,keys,cdf_keys,cdf_requests` (`op` = `all` over every op) |
//! | `popularity.csv` | `requests_per_object,objects,first_rank,last_rank` (libCacheSim's `.popularity`, with ranks; objects and ranks scaled by the sampling weight when keys were sampled) |
//! | `top_keys.csv` | `rank,key,id,requests,fraction` |
//! | `heatmap.csv` | `bucket,first_key,last_key,keys,requests,reads,writes,max_key_requests`: keys in sorted order, cut into runs of equal key count |
//! | `keyranges.csv` | `range,first_rank,first_key,last_key,keys,requests,share`: the key ranges ([`KeyRangeRule`](super::KeyRangeRule), `--key-ranges`), in key order; `first_rank` is where the range starts on the heatmap's and the series' key-rank axis, `share` its fraction of the requests |
//! | `keyranges.json` | `{"rule": "ranges:30", "ranges": [{"first_rank", "first_key", "last_key", "keys", "requests", "share"}, …], "column_families": [{"cf", "requests", "keys", "ranges": […]}, …]}`: the same ranges, and each column family's |
//! | `time_series.csv` | `time_s,key_rank,op`: sampled requests (`time_request` without a clock) |
//! | `heatmap.cf<N>.csv`, `keyranges.cf<N>.csv`, `time_series.cf<N>.csv` | the same three over the keys of column family (tenant) `N` alone, `key_rank` its keys' ranks; written when the trace has more than one, for the 16 most requested ([`Analysis::per_cf`](super::Analysis::per_cf)) |
//! | `stack_distance.csv` | `bucket,distance_lo,distance_hi,requests,cdf,lru_hit_ratio`: exact LRU stack distances; `lru_hit_ratio` is the hit ratio of an LRU cache of `distance_hi` objects |
//! | `reuse_requests.csv` | `bucket,requests_lo,requests_hi,requests,cdf`: requests since the key's previous request |
//! | `reuse_seconds.csv` | `bucket,seconds_lo,seconds_hi,requests,cdf`: time since the key's previous request |
//! | `reuse_lcs.csv` | `bucket,requests`: libCacheSim's "reuse virtual time" histogram (log base 1.5; bucket -1: first requests) |
//! | `working_set.csv` | `window,start_s,requests,distinct_keys,new_keys` (`start_request` without a clock) |
//! | `correlation.csv` | `a,b,pearson_r` |
//! | `index.html` | every chart as inline SVG, with `html` |

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::hist::{Log2Hist, ValueHist};
use super::{Analysis, HeatBucket, KeyRange, SeriesPoint, CORRELATED};
use crate::error::TraceError;

fn io_err(path: PathBuf) -> impl FnOnce(std::io::Error) -> TraceError {
    move |source| TraceError::Io { path, source }
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
pub(crate) fn field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

/// A float for a CSV or JSON cell: shortest round-trip form, empty when undefined.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

fn push_value_cdf(out: &mut String, prefix: &str, h: &ValueHist) {
    let total = h.count().max(1) as f64;
    let mut seen = 0;
    for (v, n) in h.sorted() {
        seen += n;
        let _ = writeln!(out, "{prefix}{v},{n},{}", num(seen as f64 / total));
    }
}

fn heatmap_csv(heatmap: &[HeatBucket]) -> String {
    let mut s =
        String::from("bucket,first_key,last_key,keys,requests,reads,writes,max_key_requests\n");
    for (i, b) in heatmap.iter().enumerate() {
        let _ = writeln!(
            s,
            "{i},{},{},{},{},{},{},{}",
            field(&b.first_key),
            field(&b.last_key),
            b.keys,
            b.requests,
            b.reads,
            b.writes,
            b.max_key_requests
        );
    }
    s
}

fn key_ranges_csv(ranges: &[KeyRange]) -> String {
    let mut s = String::from("range,first_rank,first_key,last_key,keys,requests,share\n");
    for (i, r) in ranges.iter().enumerate() {
        let _ = writeln!(
            s,
            "{i},{},{},{},{},{},{}",
            r.first_rank,
            field(&r.first_key),
            field(&r.last_key),
            r.keys,
            r.requests,
            num(r.share)
        );
    }
    s
}

/// `tcol`: `s`, or `request` for traces without a clock.
fn time_series_csv(series: &[SeriesPoint], tcol: &str) -> String {
    let mut s = format!("time_{tcol},key_rank,op\n");
    for p in series {
        let _ = writeln!(s, "{},{},{}", num(p.time), p.key_rank, p.op.name());
    }
    s
}

fn push_log2(out: &mut String, h: &Log2Hist, scale: f64) {
    let total = h.total().max(1) as f64;
    let mut seen = 0;
    for b in 0..h.used() {
        let (lo, hi) = Log2Hist::bounds(b);
        seen += h.buckets[b];
        let _ = writeln!(
            out,
            "{b},{},{},{},{}",
            num(lo as f64 * scale),
            num(hi as f64 * scale),
            h.buckets[b],
            num(seen as f64 / total)
        );
    }
}

impl Analysis {
    /// The LRU hit ratio of a cache of `2^k` objects for each `k` up to the largest
    /// distance seen: requests whose stack distance is below the size, over all requests.
    pub fn lru_hit_ratios(&self) -> Vec<(u64, f64)> {
        let total = self.summary.requests.max(1) as f64;
        let mut hits = 0;
        (0..self.stack_distance.used())
            .map(|b| {
                hits += self.stack_distance.buckets[b];
                (Log2Hist::bounds(b).1, hits as f64 / total)
            })
            .collect()
    }

    /// The CSV files, as `(name, contents)`.
    pub fn csv_files(&self) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = Vec::new();
        let n = self.summary.requests.max(1) as f64;
        let tcol = if self.has_clock { "s" } else { "request" };

        let mut s = String::from("op,requests,fraction\n");
        for (op, c) in &self.ops {
            let _ = writeln!(s, "{},{c},{}", op.name(), num(*c as f64 / n));
        }
        files.push(("ops.csv".into(), s));

        let mut s = String::from("cf,op,requests,fraction_of_cf\n");
        let mut cf_totals = std::collections::HashMap::new();
        for (cf, _, c) in &self.cf_ops {
            *cf_totals.entry(*cf).or_insert(0u64) += c;
        }
        for (cf, op, c) in &self.cf_ops {
            let total = cf_totals.get(cf).copied().unwrap_or(0).max(1);
            let _ = writeln!(
                s,
                "{cf},{},{c},{}",
                op.name(),
                num(*c as f64 / total as f64)
            );
        }
        files.push(("cf_ops.csv".into(), s));

        let width = self.qps_bucket;
        let per = if self.has_clock { width } else { 1.0 };
        let mut s = if self.has_clock {
            String::from("start_s,width_s,total")
        } else {
            String::from("start_request,width_requests,total")
        };
        for (op, _) in &self.qps {
            let _ = write!(s, ",{}", op.name());
        }
        s.push('\n');
        let len = self.qps.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
        for b in 0..len {
            let counts: Vec<u64> = self
                .qps
                .iter()
                .map(|(_, v)| v.get(b).copied().unwrap_or(0))
                .collect();
            let total: u64 = counts.iter().sum();
            let _ = write!(
                s,
                "{},{},{}",
                num(b as f64 * width),
                num(width),
                num(total as f64 / per)
            );
            for c in counts {
                let _ = write!(s, ",{}", num(c as f64 / per));
            }
            s.push('\n');
        }
        files.push(("qps.csv".into(), s));

        let mut s = String::from("field,op,size_bytes,requests,cdf\n");
        let mut st = String::from(
            "field,op,requests,min_bytes,mean_bytes,p50_bytes,p99_bytes,max_bytes,rounded\n",
        );
        for (field_name, hists) in [("key", &self.key_sizes), ("value", &self.value_sizes)] {
            for (op, h) in hists.iter() {
                push_value_cdf(&mut s, &format!("{field_name},{},", op.name()), h);
                let _ = writeln!(
                    st,
                    "{field_name},{},{},{},{},{},{},{},{}",
                    op.name(),
                    h.count(),
                    h.min(),
                    num(h.mean()),
                    h.quantile(0.5),
                    h.quantile(0.99),
                    h.max(),
                    h.is_rounded()
                );
            }
        }
        push_value_cdf(&mut s, "object,all,", &self.object_sizes);
        let h = &self.object_sizes;
        let _ = writeln!(
            st,
            "object,all,{},{},{},{},{},{},{}",
            h.count(),
            h.min(),
            num(h.mean()),
            h.quantile(0.5),
            h.quantile(0.99),
            h.max(),
            h.is_rounded()
        );
        files.push(("sizes.csv".into(), s));
        files.push(("size_stats.csv".into(), st));

        let mut s = String::from("op,scan_len,requests,cdf\n");
        for (op, h) in &self.scan_lengths {
            push_value_cdf(&mut s, &format!("{},", op.name()), h);
        }
        files.push(("scan_length.csv".into(), s));

        let mut s = String::from("op,requests_per_key,keys,cdf_keys,cdf_requests\n");
        for (op, counts) in &self.access_counts {
            let name = op.map_or("all", |o| o.name());
            let keys: u64 = counts.iter().map(|c| c.1).sum();
            let reqs: u64 = counts.iter().map(|c| c.0 * c.1).sum();
            let (mut k, mut r) = (0, 0);
            for (c, nk) in counts {
                k += nk;
                r += c * nk;
                let _ = writeln!(
                    s,
                    "{name},{c},{nk},{},{}",
                    num(k as f64 / keys.max(1) as f64),
                    num(r as f64 / reqs.max(1) as f64)
                );
            }
        }
        files.push(("access_count_cdf.csv".into(), s));

        let w = self
            .summary
            .sampling
            .as_ref()
            .map_or(1, |s| s.weight as usize);
        let mut s = String::from("requests_per_object,objects,first_rank,last_rank\n");
        let mut i = 0;
        while i < self.popularity.len() {
            let c = self.popularity[i];
            let j = i + self.popularity[i..].iter().take_while(|&&x| x == c).count();
            // A sampled object stands for `weight` objects (1 without sampling).
            let _ = writeln!(s, "{c},{},{},{}", (j - i) * w, i * w + 1, j * w);
            i = j;
        }
        files.push(("popularity.csv".into(), s));

        let mut s = String::from("rank,key,id,requests,fraction\n");
        for (i, (key, id, c)) in self.top_keys.iter().enumerate() {
            let _ = writeln!(
                s,
                "{},{},{id},{c},{}",
                i + 1,
                field(key),
                num(*c as f64 / n)
            );
        }
        files.push(("top_keys.csv".into(), s));

        files.push(("heatmap.csv".into(), heatmap_csv(&self.heatmap)));
        files.push(("keyranges.csv".into(), key_ranges_csv(&self.key_ranges)));
        files.push((
            "time_series.csv".into(),
            time_series_csv(&self.time_series, tcol),
        ));
        for c in &self.per_cf {
            let cf = c.cf;
            files.push((format!("heatmap.cf{cf}.csv"), heatmap_csv(&c.heatmap)));
            files.push((
                format!("keyranges.cf{cf}.csv"),
                key_ranges_csv(&c.key_ranges),
            ));
            files.push((
                format!("time_series.cf{cf}.csv"),
                time_series_csv(&c.time_series, tcol),
            ));
        }

        let mut s = String::from("bucket,distance_lo,distance_hi,requests,cdf,lru_hit_ratio\n");
        let hits = self.lru_hit_ratios();
        let total = self.stack_distance.total().max(1) as f64;
        let mut seen = 0;
        for (b, (_, hit)) in hits.iter().enumerate() {
            let (lo, hi) = Log2Hist::bounds(b);
            seen += self.stack_distance.buckets[b];
            let _ = writeln!(
                s,
                "{b},{lo},{hi},{},{},{}",
                self.stack_distance.buckets[b],
                num(seen as f64 / total),
                num(*hit)
            );
        }
        files.push(("stack_distance.csv".into(), s));

        let mut s = String::from("bucket,requests_lo,requests_hi,requests,cdf\n");
        push_log2(&mut s, &self.reuse_requests, 1.0);
        files.push(("reuse_requests.csv".into(), s));
        let mut s = String::from("bucket,seconds_lo,seconds_hi,requests,cdf\n");
        push_log2(&mut s, &self.reuse_ns, 1e-9);
        files.push(("reuse_seconds.csv".into(), s));

        let mut s = format!("bucket,requests\n-1,{}\n", self.cold_requests);
        for (b, c) in self.reuse_lcs_vtime.iter().enumerate() {
            if *c > 0 {
                let _ = writeln!(s, "{b},{c}");
            }
        }
        files.push(("reuse_lcs.csv".into(), s));

        let mut s = format!("window,start_{tcol},requests,distinct_keys,new_keys\n");
        for (i, w) in self.windows.iter().enumerate() {
            let _ = writeln!(
                s,
                "{i},{},{},{},{}",
                num(i as f64 * self.window),
                w.requests,
                w.distinct_keys,
                w.new_keys
            );
        }
        files.push(("working_set.csv".into(), s));

        let mut s = String::from("a,b,pearson_r\n");
        for (i, a) in CORRELATED.iter().enumerate() {
            for (j, b) in CORRELATED.iter().enumerate().skip(i + 1) {
                let r = self.correlations[i][j].map_or(String::new(), num);
                let _ = writeln!(s, "{a},{b},{r}");
            }
        }
        files.push(("correlation.csv".into(), s));
        files
    }

    /// `keyranges.json`: the rule, the key ranges over all keys, and each column
    /// family's ([`Analysis::per_cf`]).
    pub fn key_ranges_json(&self) -> serde_json::Value {
        serde_json::json!({
            "rule": self.key_range_rule.to_string(),
            "ranges": self.key_ranges,
            "column_families": self
                .per_cf
                .iter()
                .map(|c| serde_json::json!({
                    "cf": c.cf,
                    "requests": c.requests,
                    "keys": c.keys,
                    "ranges": c.key_ranges,
                }))
                .collect::<Vec<_>>(),
        })
    }

    /// Writes `summary.json`, `keyranges.json`, the CSV files and, with `html`,
    /// `index.html` into `dir` (made if missing).
    pub fn write(&self, dir: &Path, html: bool) -> Result<(), TraceError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir.to_path_buf()))?;
        let put = |name: &str, text: &str| -> Result<(), TraceError> {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(io_err(path))
        };
        let json = serde_json::to_string_pretty(&self.summary)
            .expect("a summary of numbers and strings always serializes");
        put("summary.json", &(json + "\n"))?;
        let json = serde_json::to_string_pretty(&self.key_ranges_json())
            .expect("key ranges of numbers and strings always serialize");
        put("keyranges.json", &(json + "\n"))?;
        for (name, text) in self.csv_files() {
            put(&name, &text)?;
        }
        if html {
            put("index.html", &super::html::page(self))?;
        }
        Ok(())
    }
}
