//! memtier_benchmark's result files from `kvlab memtier` against real servers:
//! `--hdr-file-prefix` (HDR percentile text and histogram logs per run and command type)
//! and `--client-stats` (per-client CSV files), checked against the run's own summary
//! and the server's counters.

use std::path::Path;

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use kvlab_spawn::ServerKind;

use crate::common;
use common::servers::start;
use common::{memtier_on, section_row, text};

/// The file names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The body lines of an HdrHistogram classic percentile text: (value, percentile,
/// total count).
fn percentile_lines(txt: &str) -> Vec<(f64, f64, u64)> {
    let mut lines = txt.lines();
    assert_eq!(
        lines.next(),
        Some("       Value   Percentile   TotalCount 1/(1-Percentile)")
    );
    assert_eq!(lines.next(), Some(""));
    lines
        .take_while(|l| !l.starts_with('#'))
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(c.len(), 4, "{l}");
            (
                c[0].parse().unwrap(),
                c[1].parse().unwrap(),
                c[2].parse().unwrap(),
            )
        })
        .collect()
}

/// `#[Max     = VALUE, Total count    = COUNT]` of a classic percentile text.
fn footer_total(txt: &str) -> u64 {
    let line = txt.lines().find(|l| l.starts_with("#[Max")).unwrap();
    line.rsplit('=')
        .next()
        .unwrap()
        .trim_end_matches(']')
        .trim()
        .parse()
        .unwrap()
}

/// Standard base64, as HdrHistogram logs encode histograms.
fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|&c| c != b'=') {
        acc = (acc << 6) | u32::from(value(c));
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// The one histogram of a memtier `.hgrm` log, read with hdrhistogram's own log reader.
fn log_histogram(hgrm: &str) -> Histogram<u64> {
    let intervals: Vec<_> = IntervalLogIterator::new(hgrm.as_bytes())
        .map(|e| e.unwrap())
        .filter_map(|e| match e {
            LogEntry::Interval(i) => Some(i),
            _ => None,
        })
        .collect();
    assert_eq!(intervals.len(), 1, "{hgrm}");
    let bytes = base64_decode(intervals[0].encoded_histogram());
    Deserializer::new().deserialize(&mut &bytes[..]).unwrap()
}

#[test]
fn hdr_files_are_memtiers_per_run_and_type_and_agree_with_the_summary() {
    let server = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("lat");
    let prefix_arg = format!("--hdr-file-prefix={}", prefix.display());
    let json_dir = tempfile::tempdir().unwrap();
    let json = json_dir.path().join("runs.json");
    let json_arg = format!("--json-out-file={}", json.display());
    // Two runs of 2 × 3 clients × 200 requests at 1:3: 300 SETs and 900 GETs per run.
    let o = memtier_on(
        &server.port().to_string(),
        &[
            "-t",
            "2",
            "-c",
            "3",
            "-n",
            "200",
            "--ratio=1:3",
            "--key-maximum=2000",
            "--hide-histogram",
            "-x",
            "2",
            "--print-all-runs",
            &prefix_arg,
            &json_arg,
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    // memtier_benchmark 2.3.0 with `-x 2 --print-all-runs` writes each run's section,
    // with its per-second series, before the best, the worst and their average.
    let raw = std::fs::read_to_string(&json).unwrap();
    let at = |title: &str| raw.find(&format!("\"{title}\"")).unwrap_or(usize::MAX);
    let order = [
        "run information",
        "RUN #1 RESULTS",
        "RUN #2 RESULTS",
        "BEST RUN RESULTS",
        "WORST RUN RESULTS",
        "AGGREGATED AVERAGE RESULTS (2 runs)",
    ];
    for pair in order.windows(2) {
        assert!(at(pair[0]) < at(pair[1]), "{pair:?} in {raw}");
    }
    let doc: serde_json::Value = serde_json::from_str(&raw).unwrap();
    for run in ["RUN #1 RESULTS", "RUN #2 RESULTS"] {
        let sets = &doc[run]["Sets"];
        assert_eq!(sets["Count"], serde_json::json!(300), "{run}");
        assert!(
            sets["Time-Serie"]["0"]["Count"].as_u64().unwrap() > 0,
            "{run}"
        );
    }
    let mut expected = Vec::new();
    for run in 1..=2 {
        for stem in ["FULL_RUN_", "GET_command_run_", "SET_command_run_"] {
            for ext in ["hgrm", "txt"] {
                expected.push(format!("lat_{stem}{run}.{ext}"));
            }
        }
    }
    expected.sort();
    assert_eq!(names(dir.path()), expected);
    assert!(stderr.contains(&format!(
        "Writing GET command HDR latency histogram results to {}_GET_command_run_1.txt...",
        prefix.display()
    )));

    for run in 1..=2 {
        let table = format!("RUN #{run} RESULTS");
        for (stem, row, count) in [
            ("FULL_RUN_", "Totals", 1200),
            ("GET_command_run_", "Gets", 900),
            ("SET_command_run_", "Sets", 300),
        ] {
            let path = |ext: &str| dir.path().join(format!("lat_{stem}{run}.{ext}"));
            let txt = std::fs::read_to_string(path("txt")).unwrap();
            let lines = percentile_lines(&txt);
            assert_eq!(footer_total(&txt), count, "{txt}");
            let last = lines.last().unwrap();
            assert_eq!((last.1, last.2), (1.0, count), "{txt}");
            assert!(txt.contains("SubBuckets     =         2048]"), "{txt}");
            // The summary's p50 and p99 (milliseconds, 5 decimals): p50 is a step of the
            // distribution, p99 lies between two steps.
            let cols = section_row(&stdout, &table, row);
            let (p50, p99): (f64, f64) = (cols[5].parse().unwrap(), cols[6].parse().unwrap());
            let median = lines.iter().find(|l| l.1 == 0.5).unwrap();
            assert!(
                (median.0 - p50).abs() <= 0.000_51,
                "p50 {p50} vs {median:?}"
            );
            let i = lines.iter().position(|l| l.1 >= 0.99).unwrap();
            assert!(
                lines[i - 1].0 - 0.000_51 <= p99 && p99 <= lines[i].0 + 0.000_51,
                "p99 {p99} vs {:?} {:?}",
                lines[i - 1],
                lines[i]
            );

            let hgrm = std::fs::read_to_string(path("hgrm")).unwrap();
            let mut header = hgrm.lines();
            let what = if row == "Totals" {
                "Full Run"
            } else {
                &stem[..3]
            };
            assert_eq!(
                header.next().unwrap(),
                format!("#[{what} command HDR latency histogram results]")
            );
            assert_eq!(header.next(), Some("#[Histogram log format version 1.2]"));
            assert!(header.next().unwrap().starts_with("#[StartTime: "));
            assert_eq!(
                header.next(),
                Some("\"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\"")
            );
            // Microseconds, as memtier logs them.
            let h = log_histogram(&hgrm);
            assert_eq!(h.len(), count);
            let p50_us = h.value_at_quantile(0.5) as f64;
            assert!(
                (p50_us - p50 * 1000.0).abs() <= 1.0 + p50 * 1000.0 * 0.002,
                "{p50_us} µs vs {p50} ms"
            );
        }
    }
}

#[test]
fn client_stats_are_one_file_per_client_whose_seconds_add_up_to_the_run() {
    let server = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("cs");
    let prefix_arg = format!("--client-stats={}", prefix.display());
    let json = dir.path().join("run.json");
    let json_arg = format!("--json-out-file={}", json.display());
    let o = memtier_on(
        &server.port().to_string(),
        &[
            "-t",
            "2",
            "-c",
            "2",
            "-n",
            "300",
            "--ratio=1:2",
            "--key-maximum=500",
            "--hide-histogram",
            &prefix_arg,
            &json_arg,
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("[RUN 1] Writing client stats files..."),
        "{stderr}"
    );
    let files = [
        "cs-1-0-0.csv",
        "cs-1-0-1.csv",
        "cs-1-1-0.csv",
        "cs-1-1-1.csv",
    ];
    let mut expected: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    expected.push("run.json".into());
    assert_eq!(names(dir.path()), expected);

    let (mut sets, mut gets, mut hits, mut misses) = (0u64, 0u64, 0u64, 0u64);
    for f in files {
        let csv = std::fs::read_to_string(dir.path().join(f)).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("Per-Second Benchmark Data"));
        assert_eq!(
            lines.next(),
            Some(
                "Second,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,\
                 SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,\
                 GET Total Bytes TX,GET Total Bytes RX,GET Misses,GET Hits,WAIT Requests,\
                 WAIT Average Latency"
            )
        );
        let (mut client_sets, mut client_gets) = (0, 0);
        let mut last_second = None;
        for row in lines.by_ref().take_while(|l| !l.is_empty()) {
            let c: Vec<&str> = row.split(',').collect();
            assert_eq!(c.len(), 15, "{row}");
            let n = |i: usize| c[i].parse::<u64>().unwrap();
            let second = n(0);
            assert!(last_second.is_none_or(|s| second > s), "{csv}");
            last_second = Some(second);
            client_sets += n(1);
            client_gets += n(6);
            misses += n(11);
            hits += n(12);
            assert_eq!(n(3), n(4) + n(5));
            assert!(
                c[2].len() == 8 && c[2].as_bytes()[1] == b'.',
                "seconds.micros: {row}"
            );
            // Each SET sends its key (memtier-N) and a 32-byte value.
            assert!(n(4) >= (32 + 9) * n(1), "{row}");
        }
        // Each client sends its 300 requests: 100 SETs and 200 GETs.
        assert_eq!((client_sets, client_gets), (100, 200), "{f}:\n{csv}");
        sets += client_sets;
        gets += client_gets;
        for (section, count) in [("GET", 200), ("SET", 100), ("WAIT", 0)] {
            let part = csv
                .split(&format!(
                    "\nFull-Test {section} Latency\nLatency (<= msec),Percent\n"
                ))
                .nth(1)
                .unwrap_or_else(|| panic!("no {section} section in {f}:\n{csv}"));
            let steps: Vec<(f64, f64)> = part
                .lines()
                .take_while(|l| !l.is_empty())
                .map(|l| {
                    let (v, p) = l.split_once(',').unwrap();
                    (v.trim().parse().unwrap(), p.parse().unwrap())
                })
                .collect();
            assert_eq!(steps.last().unwrap().1, 100.0, "{section} of {f}");
            if count > 0 {
                assert_eq!(steps[0].1, 0.0);
                assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{section} of {f}");
            } else {
                assert_eq!(steps, [(0.0, 100.0)]);
            }
        }
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let stats = &doc["ALL STATS"];
    assert_eq!(stats["Sets"]["Count"], serde_json::json!(sets));
    assert_eq!(stats["Gets"]["Count"], serde_json::json!(gets));
    assert_eq!(stats["Totals"]["Count"], serde_json::json!(1200));
    // The GETs' hits and misses are the server's.
    let info = kvlab_spawn::resp::command(server.addr(), &["INFO", "stats"]).unwrap();
    let info = info.as_str().unwrap().to_string();
    let counter = |name: &str| -> u64 {
        info.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{name}:")))
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        (hits, misses),
        (counter("keyspace_hits"), counter("keyspace_misses"))
    );
}

/// With `--command`, the files are per command name (`PREFIX_HSET_command_run_1`), and
/// the full run's counts every command's requests.
#[test]
fn hdr_files_of_arbitrary_commands_are_named_by_command() {
    let server = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("cmd");
    let prefix_arg = format!("--hdr-file-prefix={}", prefix.display());
    // 2 clients × 60 requests of HSET (ratio 1) and GET (ratio 2).
    let o = memtier_on(
        &server.port().to_string(),
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "60",
            "--command=hset __key__ f __data__",
            "--command=get __key__",
            "--command-ratio=2",
            "--hide-histogram",
            &prefix_arg,
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let mut expected: Vec<String> = ["FULL_RUN_1", "GET_command_run_1", "HSET_command_run_1"]
        .iter()
        .flat_map(|s| [format!("cmd_{s}.hgrm"), format!("cmd_{s}.txt")])
        .collect();
    expected.sort();
    assert_eq!(names(dir.path()), expected);
    // The requests of each command, as the server counted them.
    let info = kvlab_spawn::resp::command(server.addr(), &["INFO", "commandstats"]).unwrap();
    let calls = |name: &str| -> u64 {
        let prefix = format!("cmdstat_{name}:calls=");
        let line = info
            .as_str()
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix(&prefix));
        line.and_then(|v| v.split(',').next())
            .unwrap()
            .parse()
            .unwrap()
    };
    let (hsets, gets) = (calls("hset"), calls("get"));
    assert_eq!(hsets + gets, 120);
    for (stem, count) in [
        ("FULL_RUN_1", 120),
        ("HSET_command_run_1", hsets),
        ("GET_command_run_1", gets),
    ] {
        let txt = std::fs::read_to_string(dir.path().join(format!("cmd_{stem}.txt"))).unwrap();
        assert_eq!(footer_total(&txt), count, "{stem}:\n{txt}");
    }
}

/// The rows of a `--client-stats` file's per-second part (after its two header lines),
/// each split at its commas.
fn csv_rows(csv: &str) -> Vec<Vec<String>> {
    csv.lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// The `(msec, percent)` steps of a `--client-stats` file's `Full-Test NAME Latency`
/// section; panics when the file has none.
fn csv_latency_steps(csv: &str, name: &str) -> Vec<(f64, f64)> {
    let part = csv
        .split(&format!(
            "\nFull-Test {name} Latency\nLatency (<= msec),Percent\n"
        ))
        .nth(1)
        .unwrap_or_else(|| panic!("no {name} section in:\n{csv}"));
    part.lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let (v, p) = l.split_once(',').unwrap();
            (v.trim().parse().unwrap(), p.parse().unwrap())
        })
        .collect()
}

/// `calls` of `cmdstat_NAME` in the server's `INFO commandstats` (0 when absent).
fn command_calls(server: &kvlab_spawn::Server, name: &str) -> u64 {
    let info = kvlab_spawn::resp::command(server.addr(), &["INFO", "commandstats"]).unwrap();
    let prefix = format!("cmdstat_{name}:calls=");
    info.as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map_or(0, |v| v.split(',').next().unwrap().parse().unwrap())
}

/// WAITs (`--wait-ratio`) go to the WAIT columns and the `Full-Test WAIT Latency` section
/// of the client files, not to the GETs'. memtier_benchmark 2.3.0, `-t 1 -c 2 -n 200
/// --ratio=1:1 --wait-ratio=1:1 --client-stats=cs --hdr-file-prefix=hdr`, wrote e.g.
/// `0,80,0.000714,6311,5911,400,79,0.000337,3798,2757,1041,60,19,41,0.000272` (41 WAITs
/// of 200 requests, no bytes counted for them) and a WAIT distribution of many steps;
/// its HDR files are FULL_RUN (every request, WAITs included), GET and SET — none for
/// WAIT. kvlab counted the WAITs as GETs and left WAIT at 0.
#[test]
fn client_stats_count_waits_as_waits() {
    let server = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let cs = format!("--client-stats={}", dir.path().join("cs").display());
    let hdr = format!("--hdr-file-prefix={}", dir.path().join("hdr").display());
    let o = memtier_on(
        &server.port().to_string(),
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "200",
            "--ratio=1:1",
            "--wait-ratio=1:1",
            "--hide-histogram",
            "--no-server-queries",
            &cs,
            &hdr,
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let mut expected: Vec<String> = ["cs-1-0-0.csv", "cs-1-0-1.csv"]
        .iter()
        .map(|s| s.to_string())
        .chain(
            ["FULL_RUN_1", "GET_command_run_1", "SET_command_run_1"]
                .iter()
                .flat_map(|s| [format!("hdr_{s}.hgrm"), format!("hdr_{s}.txt")]),
        )
        .collect();
    expected.sort();
    assert_eq!(names(dir.path()), expected);
    let (mut sets, mut gets, mut waits) = (0, 0, 0);
    for f in ["cs-1-0-0.csv", "cs-1-0-1.csv"] {
        let csv = std::fs::read_to_string(dir.path().join(f)).unwrap();
        let (mut client_waits, mut client_requests) = (0, 0);
        for row in csv_rows(&csv) {
            assert_eq!(row.len(), 15, "{row:?}");
            let n = |i: usize| row[i].parse::<u64>().unwrap();
            sets += n(1);
            gets += n(6);
            waits += n(13);
            client_waits += n(13);
            client_requests += n(1) + n(6) + n(13);
            // A GET of one key is a hit or a miss.
            assert_eq!(n(11) + n(12), n(6), "{row:?}");
            assert!(
                row[14].len() == 8 && row[14].as_bytes()[1] == b'.',
                "{row:?}"
            );
        }
        assert_eq!(client_requests, 200, "{f}:\n{csv}");
        let steps = csv_latency_steps(&csv, "WAIT");
        assert!(client_waits > 0 && steps.len() > 1, "{f}:\n{csv}");
        assert_eq!(steps.last().unwrap().1, 100.0);
    }
    assert_eq!(
        (sets, gets, waits),
        (
            command_calls(&server, "set"),
            command_calls(&server, "get"),
            command_calls(&server, "wait")
        )
    );
    let full = std::fs::read_to_string(dir.path().join("hdr_FULL_RUN_1.txt")).unwrap();
    assert_eq!(footer_total(&full), 400);
    let get = std::fs::read_to_string(dir.path().join("hdr_GET_command_run_1.txt")).unwrap();
    assert_eq!(footer_total(&get), gets);
}

/// With `--command`, a client file is memtier's arbitrary-command file, not the SET/GET
/// one. memtier_benchmark 2.3.0, `-t 1 -c 2 -n 200 --command="set __key__ __data__"
/// --command-ratio=2 --command-key-pattern=S --command="get __key__" --command-ratio=3
/// --command="hset h:__key__ f __data__" --client-stats=cs`, wrote
///
/// ```text
/// Per-Second Benchmark Arbitrary Commands Data
/// Second,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,SET Total Bytes RX,GET Requests,…,HSET Total Bytes RX
/// 0,68,0.000587,5012,4672,340,99,0.000506,7317,3456,3861,33,0.000397,2897,2765,132,
///
/// Full-Test SET Latency
/// …
/// Full-Test GET Latency
/// …
/// Full-Test HSET Latency
/// ```
///
/// — five columns a command, no hits or misses, each row ending in a comma, a latency
/// section per command in command order and no WAIT section.
#[test]
fn client_stats_of_arbitrary_commands_are_memtiers_command_files() {
    let server = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let cs = format!("--client-stats={}", dir.path().join("cs").display());
    let o = memtier_on(
        &server.port().to_string(),
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "200",
            "--command=set __key__ __data__",
            "--command-ratio=2",
            "--command-key-pattern=S",
            "--command=get __key__",
            "--command-ratio=3",
            "--command=hset h:__key__ f __data__",
            "--hide-histogram",
            "--no-server-queries",
            &cs,
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(names(dir.path()), ["cs-1-0-0.csv", "cs-1-0-1.csv"]);
    let names = ["SET", "GET", "HSET"];
    let mut header = String::from("Second");
    for n in names {
        header += &format!(
            ",{n} Requests,{n} Average Latency,{n} Total Bytes,{n} Total Bytes TX,{n} Total Bytes RX"
        );
    }
    let mut requests = [0u64; 3];
    for f in ["cs-1-0-0.csv", "cs-1-0-1.csv"] {
        let csv = std::fs::read_to_string(dir.path().join(f)).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("Per-Second Benchmark Arbitrary Commands Data")
        );
        assert_eq!(lines.next(), Some(header.as_str()));
        let rows = csv_rows(&csv);
        assert!(!rows.is_empty());
        for row in rows {
            // The second, 5 columns for each of 3 commands, and the empty field after the
            // row's last comma.
            assert_eq!(row.len(), 17, "{row:?}");
            assert_eq!(row[16], "", "{row:?}");
            for (i, count) in requests.iter_mut().enumerate() {
                let c = |j: usize| row[1 + 5 * i + j].parse::<u64>().unwrap();
                *count += c(0);
                assert_eq!(c(2), c(3) + c(4), "{row:?}");
                assert!(
                    row[2 + 5 * i].len() == 8 && row[2 + 5 * i].as_bytes()[1] == b'.',
                    "{row:?}"
                );
            }
        }
        // The sections, in command order, and nothing else.
        let sections: Vec<&str> = csv
            .lines()
            .filter_map(|l| l.strip_prefix("Full-Test "))
            .collect();
        assert_eq!(
            sections,
            ["SET Latency", "GET Latency", "HSET Latency"],
            "{csv}"
        );
        for n in names {
            let steps = csv_latency_steps(&csv, n);
            assert_eq!(steps.last().unwrap().1, 100.0, "{n} in {f}");
            assert!(steps.len() > 1, "{n} in {f}");
        }
    }
    assert_eq!(
        requests,
        [
            command_calls(&server, "set"),
            command_calls(&server, "get"),
            command_calls(&server, "hset")
        ]
    );
    assert_eq!(requests.iter().sum::<u64>(), 400);
}

/// memtier_benchmark 2.3.0, `-t 1 -c 1 -n 1 --command="set __key__ __data__"
/// --command="get __key__" --client-stats=cs --hdr-file-prefix=hdr`: the one request is
/// a SET, so the GET has no HDR files, but memtier still names them on stderr; the
/// client file has the GET's columns (zeros) and its empty `0.000,100.000` section. And
/// on stderr `[RUN 1] Writing client stats files...` comes before the HDR lines (memtier
/// writes the client files as its threads end, the HDR files after the run).
#[test]
fn a_command_without_requests_is_named_but_has_no_hdr_files() {
    let server = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let cs = format!("--client-stats={}", dir.path().join("cs").display());
    let prefix = dir.path().join("hdr");
    let hdr = format!("--hdr-file-prefix={}", prefix.display());
    let o = memtier_on(
        &server.port().to_string(),
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "1",
            "--command=set __key__ __data__",
            "--command=get __key__",
            "--hide-histogram",
            "--no-server-queries",
            &cs,
            &hdr,
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let mut expected: Vec<String> = ["FULL_RUN_1", "SET_command_run_1"]
        .iter()
        .flat_map(|s| [format!("hdr_{s}.hgrm"), format!("hdr_{s}.txt")])
        .collect();
    expected.push("cs-1-0-0.csv".into());
    expected.sort();
    assert_eq!(names(dir.path()), expected);
    let p = prefix.display();
    let writing: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("Writing") && !l.starts_with("Writing results"))
        .collect();
    assert_eq!(
        writing,
        [
            "[RUN 1] Writing client stats files...".to_string(),
            format!("Writing Full Run command HDR latency histogram results to {p}_FULL_RUN_1.txt..."),
            format!("Writing Full Run command HDR latency histogram results in HistogramLogProcessor format to {p}_FULL_RUN_1.hgrm..."),
            format!("Writing SET command HDR latency histogram results to {p}_SET_command_run_1.txt..."),
            format!("Writing SET command HDR latency histogram results in HistogramLogProcessor format to {p}_SET_command_run_1.hgrm..."),
            format!("Writing GET command HDR latency histogram results to {p}_GET_command_run_1.txt..."),
            format!("Writing GET command HDR latency histogram results in HistogramLogProcessor format to {p}_GET_command_run_1.hgrm..."),
        ]
    );
    let csv = std::fs::read_to_string(dir.path().join("cs-1-0-0.csv")).unwrap();
    let rows = csv_rows(&csv);
    assert_eq!(rows.len(), 1, "{csv}");
    assert_eq!(&rows[0][1..2], ["1"]);
    assert_eq!(&rows[0][6..], ["0", "0.000000", "0", "0", "0", ""]);
    assert_eq!(csv_latency_steps(&csv, "GET"), [(0.0, 100.0)]);
}

/// kvlab replaces no file without `--overwrite`: a result file of `--client-stats` or
/// `--hdr-file-prefix` that exists stops the run before it starts (exit code 2, naming
/// the flag), where memtier would write over it; with `--overwrite` it is replaced.
#[test]
fn existing_result_files_are_replaced_only_with_overwrite() {
    let server = start(ServerKind::Redis, "");
    let port = server.port().to_string();
    for (flag, existing) in [
        ("--client-stats", "x-1-0-1.csv"),
        ("--hdr-file-prefix", "x_SET_command_run_2.hgrm"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(existing), "keep").unwrap();
        let arg = format!("{flag}={}", dir.path().join("x").display());
        let args = [
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "10",
            "-x",
            "2",
            "--hide-histogram",
            "--no-server-queries",
            &arg,
        ];
        let o = memtier_on(&port, &args);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains(existing) && stderr.contains("--overwrite"),
            "{stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(existing)).unwrap(),
            "keep"
        );
        assert_eq!(names(dir.path()), [existing]);
        let o = memtier_on(&port, &[&args[..], &["--overwrite"]].concat());
        assert!(o.status.success(), "{}", text(&o).1);
        assert_ne!(
            std::fs::read_to_string(dir.path().join(existing)).unwrap(),
            "keep"
        );
    }
}
