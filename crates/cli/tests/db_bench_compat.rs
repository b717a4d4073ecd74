//! `kvlab db_bench --benchmarks=mixgraph` beside Debian's `db_bench` 7.8.3 (package
//! rocksdb-tools) with the same flags and seed, one thread, each on a fresh database:
//! the same operations, the same `reads F in R found` (Gets found plus Seeks that landed
//! on their key), the same `avg size` of values and scans, the bytes behind `MB/s`
//! within the rounding of the printed figures, and one format for the whole line.

use std::path::Path;
use std::process::Command;

use crate::common::{ok, text};

/// db_bench's report line of a mixgraph run, taken apart.
#[derive(Debug)]
struct ReportLine {
    line: String,
    seconds: f64,
    operations: u64,
    mb_per_s: Option<f64>,
    gets: u64,
    puts: u64,
    seeks: u64,
    found: u64,
    reads: u64,
    avg_value: String,
    avg_scan: String,
}

/// The text between `before` and the next `after` in `s`.
fn between<'a>(s: &'a str, before: &str, after: &str) -> &'a str {
    let start = s
        .find(before)
        .unwrap_or_else(|| panic!("no {before:?} in {s:?}"))
        + before.len();
    let len = s[start..]
        .find(after)
        .unwrap_or_else(|| panic!("no {after:?} after {before:?} in {s:?}"));
    s[start..start + len].trim()
}

fn number<T: std::str::FromStr>(s: &str, what: &str, line: &str) -> T {
    s.parse()
        .unwrap_or_else(|_| panic!("{what}: {s:?} is not a number in {line:?}"))
}

/// The `mixgraph :` line of a db_bench (or kvlab db_bench) report.
fn report_line(stdout: &str) -> ReportLine {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("mixgraph"))
        .unwrap_or_else(|| panic!("no mixgraph line in:\n{stdout}"))
        .to_string();
    let l = line.as_str();
    let mb_per_s = l
        .contains(" MB/s ")
        .then(|| number(between(l, "operations;", "MB/s"), "MB/s", l));
    ReportLine {
        seconds: number(between(l, "ops/sec", "seconds"), "seconds", l),
        operations: number(between(l, "seconds", "operations;"), "operations", l),
        mb_per_s,
        gets: number(between(l, "Gets:", " "), "Gets", l),
        puts: number(between(l, "Puts:", " "), "Puts", l),
        seeks: number(between(l, "Seek:", ","), "Seek", l),
        found: number(between(l, ", reads", " in "), "found", l),
        reads: number(between(l, " in ", " found"), "reads", l),
        avg_value: between(l, "avg size:", " value").to_string(),
        avg_scan: between(l, "value,", " scan)").to_string(),
        line,
    }
}

/// The line with every number (and `-nan`) as `#` and runs of spaces as one: what
/// db_bench's format fixes, whatever the figures.
fn skeleton(line: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in line.replace("-nan", "#").chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs Debian's db_bench's mixgraph with `flags` on a fresh database in `dir`.
fn db_bench(dir: &Path, flags: &[&str]) -> ReportLine {
    let o = Command::new("db_bench")
        .arg("--benchmarks=mixgraph")
        .arg(format!("--db={}", dir.join("db_bench").display()))
        .args(flags)
        .output()
        .expect("db_bench runs (Debian's rocksdb-tools: apt-get install -y rocksdb-tools)");
    let (stdout, stderr) = text(&o);
    assert!(
        o.status.success(),
        "db_bench {flags:?}:\n{stdout}\n{stderr}"
    );
    report_line(&stdout)
}

/// Runs `kvlab db_bench` with `flags` on a fresh RocksDB database in `dir`.
fn kvlab_db_bench(dir: &Path, flags: &[&str]) -> ReportLine {
    let db = format!("--db={}", dir.join("kvlab").display());
    let mut args = vec!["db_bench", "--benchmarks=mixgraph", db.as_str()];
    args.extend_from_slice(flags);
    report_line(&ok(&args))
}

/// The two lines agree: same operations and counts, same found, same mean sizes, the
/// same MiB read within the rounding of `MB/s` (0.1) and seconds (0.001), one format.
fn assert_same_report(flags: &[&str], theirs: &ReportLine, ours: &ReportLine) {
    let both = format!(
        "{flags:?}\ndb_bench: {}\nkvlab:    {}",
        theirs.line, ours.line
    );
    assert_eq!(
        skeleton(&theirs.line),
        skeleton(&ours.line),
        "format\n{both}"
    );
    assert_eq!(
        (theirs.operations, theirs.gets, theirs.puts, theirs.seeks),
        (ours.operations, ours.gets, ours.puts, ours.seeks),
        "operations\n{both}"
    );
    assert_eq!(theirs.reads, ours.reads, "reads\n{both}");
    assert_eq!(theirs.found, ours.found, "found\n{both}");
    assert_eq!(theirs.avg_value, ours.avg_value, "avg value size\n{both}");
    assert_eq!(theirs.avg_scan, ours.avg_scan, "avg scan length\n{both}");
    match (theirs.mb_per_s, ours.mb_per_s) {
        (None, None) => {}
        (Some(a), Some(b)) => {
            // MiB read = MB/s × seconds, each printed rounded: the products agree within
            // the sum of their rounding errors.
            let (mib_a, mib_b) = (a * theirs.seconds, b * ours.seconds);
            let slack = |mbs: f64, secs: f64| 0.05 * secs + 0.0005 * mbs + 0.05 * 0.0005;
            let tolerance = slack(a, theirs.seconds) + slack(b, ours.seconds);
            assert!(
                (mib_a - mib_b).abs() <= tolerance,
                "MiB read: db_bench {mib_a:.4}, kvlab {mib_b:.4} (± {tolerance:.4})\n{both}"
            );
        }
        _ => panic!("MB/s in one line only\n{both}"),
    }
}

#[test]
fn found_and_sizes_match_db_bench() {
    // The power model (and key ranges) lets Gets find what Puts wrote and Seeks land on
    // it: with db_bench's uniform keys an op's kind follows from its key, so on a fresh
    // database nothing is ever found.
    let power: &[&str] = &[
        "--num=20000",
        "--reads=30000",
        "--key_dist_a=0.002312",
        "--key_dist_b=0.3467",
        "--mix_get_ratio=0.8",
        "--mix_put_ratio=0.15",
        "--mix_seek_ratio=0.05",
        "--seed=7",
    ];
    let ranges: &[&str] = &[
        "--num=50000",
        "--reads=30000",
        "--key_size=48",
        "--keyrange_num=10",
        "--keyrange_dist_a=14.18",
        "--keyrange_dist_b=-2.917",
        "--keyrange_dist_c=0.0164",
        "--keyrange_dist_d=-0.08082",
        "--key_dist_a=0.002312",
        "--key_dist_b=0.3467",
        "--mix_get_ratio=0.83",
        "--mix_put_ratio=0.14",
        "--mix_seek_ratio=0.03",
        "--value_k=0.35",
        "--value_sigma=40",
        "--seed=11",
    ];
    for flags in [power, ranges] {
        let dir = tempfile::tempdir().unwrap();
        let theirs = db_bench(dir.path(), flags);
        let ours = kvlab_db_bench(dir.path(), flags);
        eprintln!("db_bench: {}\nkvlab:    {}", theirs.line, ours.line);
        assert_same_report(flags, &theirs, &ours);
        // Something was found, by Gets and by Seeks alike, and bytes were read: the
        // comparison above compared figures, not zeros.
        assert!(
            theirs.found > 0 && theirs.mb_per_s.is_some(),
            "{}",
            theirs.line
        );
    }
}

#[test]
fn a_run_that_reads_nothing_has_no_mb_per_s_and_nan_sizes() {
    // Gets only on a fresh database: nothing found, no byte read (db_bench leaves
    // `MB/s` out), no Put or Seek (`-nan` means).
    let flags: &[&str] = &["--num=1000", "--reads=300", "--seed=3"];
    let dir = tempfile::tempdir().unwrap();
    let theirs = db_bench(dir.path(), flags);
    let ours = kvlab_db_bench(dir.path(), flags);
    assert_same_report(flags, &theirs, &ours);
    assert_eq!(
        (
            ours.mb_per_s,
            ours.avg_value.as_str(),
            ours.avg_scan.as_str()
        ),
        (None, "-nan", "-nan"),
        "{}",
        ours.line
    );
}
