//! db_bench's summary line for a phase run as `kvlab db_bench`.

use kvlab_runner::RunOutcome;
use kvlab_workload::AnyWorkload;

/// db_bench's report line of a mixgraph run, as RocksDB 7.8.3's `Stats::Report` and
/// `MixGraph` (tools/db_bench_tool.cc) build it:
/// `mixgraph : X micros/op Y ops/sec Z seconds N operations; W MB/s ( Gets:… Puts:…
/// Seek:…, reads F in R found, avg size: V value, S scan)` and an empty line (db_bench's
/// message ends in a newline).
///
/// - `found`: Gets that found their key plus Seeks that landed on their own key
///   (db_bench's `get_found + seek_found`), `in` Gets plus Seeks.
/// - `MB/s`: db_bench's `bytes` (key and value of every Get found and of every record
///   a Seek visited) in MiB over the elapsed seconds; left out, as db_bench leaves it
///   out, when no byte was read. A visited record's key counts `key_size` bytes: every
///   key of a database db_bench or kvlab's mixgraph wrote has that size.
/// - `avg size`: the mean value size written by Puts and the mean records a Seek
///   visited; `-nan` without Puts (Seeks), as glibc prints db_bench's `0.0 / 0`.
///
/// db_bench merges its threads' statistics but keeps one thread's message, so with
/// `-threads` over 1 its counts in parentheses are one thread's; kvlab's are every
/// client's.
pub fn summary_line(outcome: &RunOutcome, threads: usize, work: &AnyWorkload) -> String {
    use kvlab_core::{OpKind, Status};
    let t = &outcome.total;
    let ops = t.operations();
    let secs = outcome.elapsed.as_secs_f64();
    let micros_per_op = if ops > 0 {
        secs * 1e6 * threads as f64 / ops as f64
    } else {
        0.0
    };
    let (key_size, seek_found, scanned) = match work {
        AnyWorkload::MixGraph(w) => (
            u64::try_from(w.config().key_size).unwrap_or(0),
            w.seeks().found(),
            w.seeks().records(),
        ),
        _ => (0, 0, 0),
    };
    let (gets, puts, seeks) = (
        t.count(OpKind::Read),
        t.count(OpKind::Insert),
        t.count(OpKind::Scan),
    );
    let get_found = t.status_count(OpKind::Read, Status::Ok);
    // The recorder's bytes read are the values of Gets found and of visited records;
    // db_bench adds their keys.
    let bytes = t.bytes_read() + key_size * (get_found + scanned);
    // The recorder's bytes written are each Put's key and value.
    let value_bytes = t.bytes_written().saturating_sub(key_size * puts);
    let mean = |total: u64, n: u64| {
        if n == 0 {
            "-nan".to_owned()
        } else {
            format!("{:.1}", total as f64 / n as f64)
        }
    };
    let message = format!(
        "( Gets:{gets} Puts:{puts} Seek:{seeks}, reads {} in {} found, avg size: {} value, {} \
         scan)\n",
        get_found + seek_found,
        gets + seeks,
        mean(value_bytes, puts),
        mean(scanned, seeks),
    );
    let rate = if bytes > 0 && secs > 0.0 {
        format!("{:6.1} MB/s ", bytes as f64 / 1_048_576.0 / secs)
    } else {
        String::new()
    };
    format!(
        "{:<12} : {micros_per_op:11.3} micros/op {} ops/sec {secs:.3} seconds {ops} operations; \
         {rate}{message}",
        "mixgraph",
        if secs > 0.0 {
            (ops as f64 / secs) as u64
        } else {
            0
        },
    )
}
