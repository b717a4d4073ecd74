//! kvlab's percentiles are Java HdrHistogram's: the figures `result.json` reports are the
//! ones HdrHistogram 2.2.2's `getValueAtPercentile` reads from the run's own
//! `latency.hlog`, at exact ranks too.

use std::process::Command;

use crate::common::java::compile;
use crate::common::{ok, text};

/// Adds up the interval histograms tagged args[1] of the log args[0]; prints the count,
/// then getValueAtPercentile of each of args[2..], one a line, in the log's unit.
const LOG_PERCENTILES: &str = r#"
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import java.util.Objects;

public class LogPercentiles {
    public static void main(String[] args) throws Exception {
        Histogram sum = new Histogram(3);
        HistogramLogReader reader = new HistogramLogReader(args[0]);
        EncodableHistogram h;
        while ((h = reader.nextIntervalHistogram()) != null) {
            if (Objects.equals(h.getTag(), args[1])) sum.add((Histogram) h);
        }
        System.out.println(sum.getTotalCount());
        for (int i = 2; i < args.length; i++) {
            System.out.println(sum.getValueAtPercentile(Double.parseDouble(args[i])));
        }
    }
}
"#;

/// A run of exactly 10 000 reads (99.9 % of them is rank 9 990 exactly, where
/// `99.9 / 100 × 10 000` rounds to 9 990.000000000002): each of `result.json`'s READ
/// percentiles equals Java's `getValueAtPercentile` on the READ histograms of the run's
/// `latency.hlog`, to the nanosecond, for several runs.
#[test]
fn result_percentiles_are_java_hdrhistograms_at_exact_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let classpath = compile(dir.path(), "LogPercentiles", LOG_PERCENTILES);
    let names = [
        ("p50_us", "50"),
        ("p90_us", "90"),
        ("p95_us", "95"),
        ("p99_us", "99"),
        ("p999_us", "99.9"),
        ("p9999_us", "99.99"),
    ];
    for (i, store) in ["moka", "null", "moka"].iter().enumerate() {
        let out = dir.path().join(format!("run{i}"));
        ok(&[
            "run",
            "-P",
            "workloads/ycsb/workloadc",
            "-p",
            "recordcount=1000",
            "-p",
            "operationcount=10000",
            "--db",
            store,
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--progress",
            "never",
        ]);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap())
                .unwrap();
        let read = doc["results"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == "READ")
            .expect("READ in result.json");
        let log = out.join("latency.hlog");
        let o = Command::new("java")
            .args(["-cp", &classpath, "LogPercentiles"])
            .arg(&log)
            .arg("READ")
            .args(names.iter().map(|(_, p)| *p))
            .output()
            .expect("running java");
        let (stdout, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let java: Vec<u64> = stdout.lines().map(|l| l.trim().parse().unwrap()).collect();
        assert_eq!(java[0], 10_000, "{store}: reads in the log");
        assert_eq!(read["operations"], 10_000, "{store}");
        for ((name, p), ns) in names.iter().zip(&java[1..]) {
            let ours = read["latency"][name].as_f64().unwrap();
            assert_eq!(
                (ours * 1000.0).round() as u64,
                *ns,
                "{store} run {i}: {name} (getValueAtPercentile({p})): kvlab {ours} µs, \
                 Java {ns} ns"
            );
        }
    }
}
