//! memtier_benchmark's result files, written after each run (`-x`: run 1, 2, …):
//!
//! - `--hdr-file-prefix=PREFIX` ([`write_hdr_files`]): `PREFIX_FULL_RUN_N`,
//!   `PREFIX_GET_command_run_N` and `PREFIX_SET_command_run_N` (with `--command`,
//!   `PREFIX_NAME_command_run_N` per command name instead), each as `.txt` (the
//!   percentile distribution in HdrHistogram's classic text, milliseconds) and `.hgrm`
//!   (a one-histogram HdrHistogram log for `HistogramLogProcessor`, microseconds), for
//!   the types that have requests — memtier's `run_stats::save_hdr_*`.
//! - `--client-stats=PREFIX` ([`write_client_stats`]): `PREFIX-RUN-THREAD-CLIENT.csv`
//!   per client, its requests second by second and its GET, SET (and WAIT) latency
//!   distributions — memtier's `client_group::write_client_stats` and
//!   `run_stats::save_csv`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use kvlab_core::{CommandId, OpKind};
use kvlab_measure::{percentile_steps, ClientStats, PercentileFormat, HIGHEST_TRACKABLE_NS};
use kvlab_runner::RunOutcome;

/// memtier's `LATENCY_HDR_GRANULARITY`: percentile steps per halving of the distance to
/// 100 %.
const TICKS_PER_HALF_DISTANCE: u32 = 10;

/// Nanoseconds per millisecond, the unit of the `.txt` distribution.
const NS_PER_MS: f64 = 1e6;

/// Writes the run's HDR histogram files (see the module documentation) and returns
/// their paths. `started` is when the run began; it ended `outcome.elapsed` later.
/// `commands` names the arbitrary commands (`--command`) in [`CommandId`] order; empty
/// for SET/GET runs.
pub fn write_hdr_files(
    prefix: &str,
    run: u32,
    outcome: &RunOutcome,
    started: SystemTime,
    commands: &[String],
) -> Result<Vec<PathBuf>> {
    let total = &outcome.total;
    let all = total.overall();
    let mut files = vec![(format!("{prefix}_FULL_RUN_{run}"), "Full Run", &all)];
    if commands.is_empty() {
        files.push((
            format!("{prefix}_GET_command_run_{run}"),
            "GET",
            total.histogram(OpKind::Read),
        ));
        files.push((
            format!("{prefix}_SET_command_run_{run}"),
            "SET",
            total.histogram(OpKind::Insert),
        ));
    }
    let empty = Histogram::<u64>::new(2).expect("2 significant digits is valid");
    for (i, name) in commands.iter().enumerate() {
        let h = total
            .command_histogram(CommandId(i as u16))
            .unwrap_or(&empty);
        files.push((format!("{prefix}_{name}_command_run_{run}"), name, h));
    }
    let ended = started + outcome.elapsed;
    let mut written = Vec::new();
    for (stem, what, h) in files {
        let txt = PathBuf::from(format!("{stem}.txt"));
        let hgrm = PathBuf::from(format!("{stem}.hgrm"));
        if h.is_empty() {
            // memtier's `save_hdr_arbitrary_commands` names a command's files on stderr
            // even when it has no requests (and then writes none); the full run's, GETs'
            // and SETs' lines are only printed with requests.
            if !commands.is_empty() && what != "Full Run" {
                eprintln!(
                    "Writing {what} command HDR latency histogram results to {}...",
                    txt.display()
                );
                eprintln!(
                    "Writing {what} command HDR latency histogram results in \
                     HistogramLogProcessor format to {}...",
                    hgrm.display()
                );
            }
            continue;
        }
        eprintln!(
            "Writing {what} command HDR latency histogram results to {}...",
            txt.display()
        );
        let mut text = Vec::new();
        kvlab_measure::write_percentile_distribution(
            h,
            TICKS_PER_HALF_DISTANCE,
            NS_PER_MS,
            PercentileFormat::Classic,
            &mut text,
        )?;
        std::fs::write(&txt, text).with_context(|| format!("writing {}", txt.display()))?;
        written.push(txt);

        eprintln!(
            "Writing {what} command HDR latency histogram results in HistogramLogProcessor \
             format to {}...",
            hgrm.display()
        );
        let mut log = Vec::new();
        let comment = format!("{what} command HDR latency histogram results");
        kvlab_measure::write_histogram_log(&mut log, &comment, started, ended, &micros(h))?;
        std::fs::write(&hgrm, log).with_context(|| format!("writing {}", hgrm.display()))?;
        written.push(hgrm);
    }
    Ok(written)
}

/// Every file `--hdr-file-prefix` (`hdr_prefix`) and `--client-stats` (`client_stats`)
/// may write over `runs` runs of `threads` × `clients` clients, each with the flag
/// that names it — to check, before anything runs, that none would replace a file.
/// `commands`: the arbitrary command names, as for [`write_hdr_files`].
pub fn planned_files(
    hdr_prefix: Option<&str>,
    client_stats: Option<&str>,
    runs: u32,
    threads: usize,
    clients: usize,
    commands: &[String],
) -> Vec<(&'static str, PathBuf)> {
    let mut out = Vec::new();
    for run in 1..=runs {
        if let Some(prefix) = hdr_prefix {
            let mut stems = vec![format!("{prefix}_FULL_RUN_{run}")];
            if commands.is_empty() {
                stems.push(format!("{prefix}_GET_command_run_{run}"));
                stems.push(format!("{prefix}_SET_command_run_{run}"));
            }
            for name in commands {
                stems.push(format!("{prefix}_{name}_command_run_{run}"));
            }
            for stem in stems {
                for ext in ["txt", "hgrm"] {
                    out.push(("--hdr-file-prefix", PathBuf::from(format!("{stem}.{ext}"))));
                }
            }
        }
        if let Some(prefix) = client_stats {
            for thread in 0..threads {
                for client in 0..clients {
                    let path = client_stats_path(prefix, run, thread, client);
                    out.push(("--client-stats", path));
                }
            }
        }
    }
    out
}

/// A nanosecond histogram in microseconds (memtier's unit), each bucket's count at its
/// median value rounded to the microsecond.
pub(crate) fn micros(ns: &Histogram<u64>) -> Histogram<u64> {
    let mut us = Histogram::<u64>::new_with_bounds(
        1,
        HIGHEST_TRACKABLE_NS / 1000,
        kvlab_measure::SIGNIFICANT_DIGITS,
    )
    .expect("1 µs .. 1 h at kvlab's precision is a valid HDR configuration");
    for v in ns.iter_recorded() {
        let value = (ns.median_equivalent(v.value_iterated_to()) + 500) / 1000;
        us.saturating_record_n(value.max(1), v.count_at_value());
    }
    us
}

/// Writes one CSV file per client, `PREFIX-RUN-THREAD-CLIENT.csv` (see the module
/// documentation), and returns their paths. `commands` names the arbitrary commands
/// (`--command`) in [`CommandId`] order; empty for SET/GET runs, whose WAITs
/// (`--wait-ratio`) are command 0.
pub fn write_client_stats(
    prefix: &str,
    run: u32,
    outcome: &RunOutcome,
    commands: &[String],
) -> Result<Vec<PathBuf>> {
    eprintln!("[RUN {run}] Writing client stats files...");
    let mut written = Vec::with_capacity(outcome.clients.len());
    for client in &outcome.clients {
        let path = client_stats_path(prefix, run, client.thread, client.client);
        let text = if commands.is_empty() {
            client_csv(client)
        } else {
            client_commands_csv(client, commands)
        };
        std::fs::write(&path, text)
            .with_context(|| format!("writing client stats {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// `PREFIX-RUN-THREAD-CLIENT.csv` (memtier's `"%s-%u-%u"` prefix per thread, then
/// `"%s-%u.csv"` per client).
pub fn client_stats_path(prefix: &str, run: u32, thread: usize, client: usize) -> PathBuf {
    PathBuf::from(format!("{prefix}-{run}-{thread}-{client}.csv"))
}

/// memtier's `USEC_FORMAT`: microseconds as seconds with six decimals.
fn seconds_of(us: u64) -> String {
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

/// The WAITs of a SET/GET run ([`kvlab_workload::memtier`] sends them as command 0).
const WAIT: CommandId = CommandId(0);

/// One client's file of a SET/GET run: memtier's `save_csv_one_sec` rows, then the
/// `Full-Test` latency distributions of GETs, SETs and WAITs
/// (`run_stats::save_csv_set_get_commands`).
fn client_csv(c: &ClientStats) -> String {
    let mut out = String::from(
        "Per-Second Benchmark Data\n\
         Second,SET Requests,SET Average Latency,SET Total Bytes,SET Total Bytes TX,\
         SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,\
         GET Total Bytes TX,GET Total Bytes RX,GET Misses,GET Hits,WAIT Requests,\
         WAIT Average Latency\n",
    );
    for s in c.seconds() {
        let (set, get, wait) = (&s.set, &s.get, s.command(WAIT));
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.second,
            set.requests,
            seconds_of(set.average_latency_us()),
            set.bytes_rx + set.bytes_tx,
            set.bytes_tx,
            set.bytes_rx,
            get.requests,
            seconds_of(get.average_latency_us()),
            get.bytes_rx + get.bytes_tx,
            get.bytes_tx,
            get.bytes_rx,
            get.misses,
            get.hits,
            wait.requests,
            seconds_of(wait.average_latency_us())
        );
    }
    let none = empty_client_histogram();
    for (name, h) in [
        ("GET", c.get_latency_us()),
        ("SET", c.set_latency_us()),
        ("WAIT", c.command_latency_us(WAIT).unwrap_or(&none)),
    ] {
        write_latency_section(&mut out, name, h);
    }
    out
}

/// One client's file of a `--command` run (`run_stats::save_csv_arbitrary_commands`):
/// `Per-Second Benchmark Arbitrary Commands Data`, five columns per command (no hits or
/// misses), each row ending in a comma as memtier's does, then a `Full-Test` latency
/// distribution per command, in command order.
fn client_commands_csv(c: &ClientStats, commands: &[String]) -> String {
    let mut out = String::from("Per-Second Benchmark Arbitrary Commands Data\nSecond");
    for name in commands {
        let _ = write!(
            out,
            ",{name} Requests,{name} Average Latency,{name} Total Bytes,{name} Total Bytes TX,\
             {name} Total Bytes RX"
        );
    }
    out.push('\n');
    for s in c.seconds() {
        let _ = write!(out, "{},", s.second);
        for i in 0..commands.len() {
            let f = s.command(CommandId(i as u16));
            let _ = write!(
                out,
                "{},{},{},{},{},",
                f.requests,
                seconds_of(f.average_latency_us()),
                f.bytes_rx + f.bytes_tx,
                f.bytes_tx,
                f.bytes_rx
            );
        }
        out.push('\n');
    }
    let none = empty_client_histogram();
    for (i, name) in commands.iter().enumerate() {
        let h = c.command_latency_us(CommandId(i as u16)).unwrap_or(&none);
        write_latency_section(&mut out, name, h);
    }
    out
}

/// A histogram without values: memtier's section of a type the client did not send.
fn empty_client_histogram() -> Histogram<u64> {
    Histogram::<u64>::new(2).expect("2 significant digits is valid")
}

/// `\nFull-Test NAME Latency`, its column names and memtier's percentile steps of `h`
/// (microseconds) in milliseconds, `%8.3f,%.3f`.
fn write_latency_section(out: &mut String, name: &str, h: &Histogram<u64>) {
    let _ = write!(
        out,
        "\nFull-Test {name} Latency\nLatency (<= msec),Percent\n"
    );
    for step in percentile_steps(h, TICKS_PER_HALF_DISTANCE) {
        let _ = writeln!(
            out,
            "{:8.3},{:.3}",
            step.value as f64 / 1000.0,
            step.percentile
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvlab_core::{Outcome, WireBytes};

    #[test]
    fn client_csv_has_memtiers_sections_and_columns() {
        let mut c = ClientStats::new(0, 1);
        let wire = |sent, received| WireBytes { sent, received };
        // `SET k v` of a 4-byte key and 32-byte value in RESP is 56 bytes, `+OK` 5; a
        // GET of it 24, the hit's reply 39, a miss's `$-1` 5.
        c.record(
            OpKind::Insert,
            None,
            1_000,
            250_000,
            wire(56, 5),
            Outcome::Written { bytes: 36 },
        );
        c.record(
            OpKind::Read,
            None,
            2_000,
            1_250_000,
            wire(24, 39),
            Outcome::Hit { bytes: 32 },
        );
        c.record(
            OpKind::Read,
            None,
            2_100_000_000,
            1_000_000,
            wire(24, 5),
            Outcome::Miss,
        );
        let text = client_csv(&c);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Per-Second Benchmark Data");
        assert_eq!(lines[1].split(',').count(), 15);
        assert_eq!(
            lines[2],
            "0,1,0.000250,61,56,5,1,0.001250,63,24,39,0,1,0,0.000000"
        );
        assert_eq!(
            lines[3],
            "2,0,0.000000,0,0,0,1,0.001000,29,24,5,1,0,0,0.000000"
        );
        assert_eq!(lines[4], "");
        assert_eq!(lines[5], "Full-Test GET Latency");
        assert_eq!(lines[6], "Latency (<= msec),Percent");
        assert!(text
            .contains("\nFull-Test WAIT Latency\nLatency (<= msec),Percent\n   0.000,100.000\n"));
        let set = text.split("Full-Test SET Latency\n").nth(1).unwrap();
        assert_eq!(set.lines().nth(1), Some("   0.250,0.000"));
        assert_eq!(set.lines().nth(2), Some("   0.250,100.000"));
    }

    #[test]
    fn microseconds_keep_counts_and_values() {
        let mut ns = kvlab_measure::Recorder::new();
        for v in [1_000u64, 2_000_000, 2_000_000, 300] {
            ns.record(OpKind::Read, kvlab_core::Status::Ok, v);
        }
        let us = micros(ns.histogram(OpKind::Read));
        assert_eq!(us.len(), 4);
        assert_eq!(us.value_at_quantile(1.0), 2000);
        assert_eq!(
            us.min(),
            1,
            "300 ns rounds to 0 µs, recorded as the lowest, 1 µs"
        );
    }
}
