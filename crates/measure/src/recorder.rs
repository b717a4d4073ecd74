//! [`Recorder`]: one worker's latency histograms and counters.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use kvlab_core::{CommandId, OpKind, Status, StoreErrorKind, WireBytes};

use crate::summary::{LatencySummary, OpSummary, RunSummary};

/// The largest latency a histogram tracks: one hour, in nanoseconds. Larger values are
/// clamped to it (and so still counted), never rejected.
pub const HIGHEST_TRACKABLE_NS: u64 = 3_600 * 1_000_000_000;

/// Significant decimal digits every histogram keeps (relative error at most 0.1 %).
pub const SIGNIFICANT_DIGITS: u8 = 3;

const KINDS: usize = OpKind::ALL.len();
const STATUSES: usize = Status::ALL.len();

/// Every [`StoreErrorKind`], in the order errors are reported.
const ERROR_KINDS: [StoreErrorKind; 9] = [
    StoreErrorKind::Unsupported,
    StoreErrorKind::Io,
    StoreErrorKind::Connection,
    StoreErrorKind::Timeout,
    StoreErrorKind::Protocol,
    StoreErrorKind::Corrupt,
    StoreErrorKind::Config,
    StoreErrorKind::Server,
    StoreErrorKind::Full,
];

fn error_index(kind: StoreErrorKind) -> usize {
    // An exhaustive match, so a new kind in kvlab-core fails to compile here rather than
    // being counted under the wrong name.
    match kind {
        StoreErrorKind::Unsupported => 0,
        StoreErrorKind::Io => 1,
        StoreErrorKind::Connection => 2,
        StoreErrorKind::Timeout => 3,
        StoreErrorKind::Protocol => 4,
        StoreErrorKind::Corrupt => 5,
        StoreErrorKind::Config => 6,
        StoreErrorKind::Server => 7,
        StoreErrorKind::Full => 8,
    }
}

/// A histogram with kvlab's fixed configuration: nanoseconds, 1 ns to 1 hour, 3 digits.
pub(crate) fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS)
        .expect("1 ns .. 1 h at 3 significant digits is a valid HDR configuration")
}

/// Adds `from` into `into`; both have kvlab's fixed configuration.
pub(crate) fn add_histogram(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    // Adding walks every counter (~270 KiB); most of a recorder's histograms are empty.
    if from.is_empty() {
        return;
    }
    into.add(from)
        .expect("histograms made by new_histogram share one configuration, so addition fits");
}

/// One worker's measurements: a latency histogram per [`OpKind`] (service time, and time
/// from the intended start for open-loop runs), per-status counts, per-kind error counts and
/// byte counters.
///
/// Each worker thread owns one recorder; nothing is shared, so recording takes no lock and
/// never allocates (all histograms are allocated up front, about 270 KiB each, 12 per
/// recorder). Recorders of several workers — or of several intervals — combine exactly with
/// [`Recorder::merge`] (HDR histogram addition).
///
/// Latencies are recorded in nanoseconds with 3 significant digits over 1 ns .. 1 hour;
/// longer latencies are clamped to one hour. Reports convert to microseconds.
///
/// # Arbitrary commands
///
/// Requests that are arbitrary commands (memtier's `--command`, `WAIT`: see
/// [`kvlab_core::Request::command`]) are recorded per [`CommandId`] instead of per kind
/// ([`Recorder::record_command`]), with their own histograms, status counts and bytes.
/// A command's histograms are allocated the first time the recorder sees it (once per
/// recorder, not per request). They count in [`Recorder::operations`] and
/// [`Recorder::overall`], and appear in [`Recorder::summary_named`].
///
/// # Read-modify-write
///
/// As in YCSB, the runner records a [`OpKind::ReadModifyWrite`] as a whole *and* its
/// [`OpKind::Read`] and [`OpKind::Update`] halves. The caller guarantees that each
/// read-modify-write record comes with exactly one read and one update record. So that no
/// store operation is counted twice, [`Recorder::overall`] leaves read-modify-write out,
/// and [`Recorder::operations`] counts each read-modify-write once (as YCSB's throughput
/// does) rather than three times.
#[derive(Clone)]
pub struct Recorder {
    service: [Histogram<u64>; KINDS],
    intended: [Histogram<u64>; KINDS],
    returns: [[u64; STATUSES]; KINDS],
    errors: [u64; ERROR_KINDS.len()],
    retries: [u64; KINDS],
    bytes_read: u64,
    bytes_written: u64,
    /// Per kind: bytes on the wire (network stores), memtier_benchmark's byte counts.
    wire: [WireBytes; KINDS],
    /// Per [`CommandId`]: what the arbitrary commands measured (grown on demand).
    commands: Vec<CommandStats>,
}

/// One arbitrary command's measurements in a [`Recorder`].
#[derive(Clone)]
struct CommandStats {
    service: Histogram<u64>,
    intended: Histogram<u64>,
    returns: [u64; STATUSES],
    /// Bytes of the command and of its replies.
    bytes: u64,
    /// Bytes on the wire (network stores).
    wire: WireBytes,
}

impl CommandStats {
    fn new() -> CommandStats {
        CommandStats {
            service: new_histogram(),
            intended: new_histogram(),
            returns: [0; STATUSES],
            bytes: 0,
            wire: WireBytes::default(),
        }
    }
}

/// Counts only: the derived form would print some 400 000 histogram counters.
impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let per_kind = |h: &[Histogram<u64>; KINDS]| {
            OpKind::ALL
                .iter()
                .filter(|k| !h[k.index()].is_empty())
                .map(|k| (k.ycsb_name(), h[k.index()].len()))
                .collect::<Vec<_>>()
        };
        let mut d = f.debug_struct("Recorder");
        d.field("operations", &self.operations())
            .field("service", &per_kind(&self.service))
            .field("intended", &per_kind(&self.intended))
            .field("errors", &self.errors_total())
            .field("bytes_read", &self.bytes_read)
            .field("bytes_written", &self.bytes_written);
        if !self.commands.is_empty() {
            let counts: Vec<u64> = self.commands.iter().map(|c| c.service.len()).collect();
            d.field("commands", &counts);
        }
        d.finish()
    }
}

impl Default for Recorder {
    fn default() -> Recorder {
        Recorder::new()
    }
}

impl Recorder {
    /// An empty recorder with every histogram allocated.
    pub fn new() -> Recorder {
        Recorder {
            service: std::array::from_fn(|_| new_histogram()),
            intended: std::array::from_fn(|_| new_histogram()),
            returns: [[0; STATUSES]; KINDS],
            errors: [0; ERROR_KINDS.len()],
            retries: [0; KINDS],
            bytes_read: 0,
            bytes_written: 0,
            wire: [WireBytes::default(); KINDS],
            commands: Vec::new(),
        }
    }

    /// The stats of `command`, allocated on first use.
    #[inline]
    fn command_stats(&mut self, command: CommandId) -> &mut CommandStats {
        let i = command.index();
        if i >= self.commands.len() {
            self.grow_commands(i + 1);
        }
        &mut self.commands[i]
    }

    #[cold]
    #[inline(never)]
    fn grow_commands(&mut self, len: usize) {
        self.commands.resize_with(len, CommandStats::new);
    }

    /// Records one arbitrary command's service time and status, and the bytes of the
    /// command and its reply.
    #[inline]
    pub fn record_command(
        &mut self,
        command: CommandId,
        status: Status,
        latency_ns: u64,
        bytes: u64,
    ) {
        let c = self.command_stats(command);
        c.service.saturating_record(latency_ns);
        c.returns[status.index()] += 1;
        c.bytes += bytes;
    }

    /// Records one arbitrary command's latency from its intended start (open loop).
    #[inline]
    pub fn record_command_intended(&mut self, command: CommandId, latency_ns: u64) {
        self.command_stats(command)
            .intended
            .saturating_record(latency_ns);
    }

    /// How many commands the recorder has room for: one more than the highest
    /// [`CommandId`] recorded (0 when none was).
    pub fn commands(&self) -> usize {
        self.commands.len()
    }

    /// The service-time histogram of `command` (`None` when it was never recorded).
    pub fn command_histogram(&self, command: CommandId) -> Option<&Histogram<u64>> {
        self.commands.get(command.index()).map(|c| &c.service)
    }

    /// The intended-start histogram of `command` (`None` when it was never recorded).
    pub fn command_intended_histogram(&self, command: CommandId) -> Option<&Histogram<u64>> {
        self.commands.get(command.index()).map(|c| &c.intended)
    }

    /// The number of `command`s that ended with `status`.
    pub fn command_status_count(&self, command: CommandId, status: Status) -> u64 {
        self.commands
            .get(command.index())
            .map_or(0, |c| c.returns[status.index()])
    }

    /// The number of `command`s recorded, all statuses.
    pub fn command_count(&self, command: CommandId) -> u64 {
        self.command_histogram(command).map_or(0, Histogram::len)
    }

    /// Bytes of `command`s sent and of their replies.
    pub fn command_bytes(&self, command: CommandId) -> u64 {
        self.commands.get(command.index()).map_or(0, |c| c.bytes)
    }

    /// Adds the wire bytes of one `command` ([`kvlab_core::Slot::wire`]).
    #[inline]
    pub fn add_command_wire(&mut self, command: CommandId, wire: WireBytes) {
        self.command_stats(command).wire.add(wire);
    }

    /// Bytes `command`s took on the wire, sent and received (zero for embedded stores).
    pub fn command_wire_bytes(&self, command: CommandId) -> WireBytes {
        self.commands
            .get(command.index())
            .map_or_else(WireBytes::default, |c| c.wire)
    }

    /// Records one operation's service time (from send to completion) and its status.
    #[inline]
    pub fn record(&mut self, kind: OpKind, status: Status, latency_ns: u64) {
        let k = kind.index();
        self.service[k].saturating_record(latency_ns);
        self.returns[k][status.index()] += 1;
    }

    /// Records one operation's latency from its intended start time (open loop), which
    /// includes any time it waited because the client fell behind its schedule.
    #[inline]
    pub fn record_intended(&mut self, kind: OpKind, latency_ns: u64) {
        self.intended[kind.index()].saturating_record(latency_ns);
    }

    /// Counts one store error of the given kind.
    #[inline]
    pub fn record_error(&mut self, kind: StoreErrorKind) {
        self.errors[error_index(kind)] += 1;
    }

    /// Counts one failed attempt of an operation that is sent again (YCSB's insertion
    /// retries). The attempt is not an operation: only the last attempt is recorded with
    /// [`Recorder::record`].
    #[inline]
    pub fn record_retry(&mut self, kind: OpKind) {
        self.retries[kind.index()] += 1;
    }

    /// Adds to the byte counters (payload bytes read from and written to the store).
    #[inline]
    pub fn add_bytes(&mut self, read: u64, written: u64) {
        self.bytes_read += read;
        self.bytes_written += written;
    }

    /// Adds the wire bytes of one operation of `kind` ([`kvlab_core::Slot::wire`]).
    #[inline]
    pub fn add_wire(&mut self, kind: OpKind, wire: WireBytes) {
        self.wire[kind.index()].add(wire);
    }

    /// Bytes the operations of `kind` took on the wire, sent and received, protocol
    /// framing included, as memtier_benchmark counts them (zero for embedded stores).
    pub fn wire_bytes(&self, kind: OpKind) -> WireBytes {
        self.wire[kind.index()]
    }

    /// Adds everything `other` recorded into this recorder. Exact: merging recorders gives
    /// the same counts and percentiles as recording everything into one.
    pub fn merge(&mut self, other: &Recorder) {
        for (into, from) in self.service.iter_mut().zip(&other.service) {
            add_histogram(into, from);
        }
        for (into, from) in self.intended.iter_mut().zip(&other.intended) {
            add_histogram(into, from);
        }
        for (into, from) in self.returns.iter_mut().zip(&other.returns) {
            for (a, b) in into.iter_mut().zip(from) {
                *a += b;
            }
        }
        for (a, b) in self.errors.iter_mut().zip(&other.errors) {
            *a += b;
        }
        for (a, b) in self.retries.iter_mut().zip(&other.retries) {
            *a += b;
        }
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        for (a, b) in self.wire.iter_mut().zip(&other.wire) {
            a.add(*b);
        }
        if self.commands.len() < other.commands.len() {
            self.grow_commands(other.commands.len());
        }
        for (into, from) in self.commands.iter_mut().zip(&other.commands) {
            add_histogram(&mut into.service, &from.service);
            add_histogram(&mut into.intended, &from.intended);
            for (a, b) in into.returns.iter_mut().zip(&from.returns) {
                *a += b;
            }
            into.bytes += from.bytes;
            into.wire.add(from.wire);
        }
    }

    /// Clears every count, keeping the histograms' allocations.
    pub fn reset(&mut self) {
        // Resetting zeroes every counter (~270 KiB): only those that counted something.
        let reset = |h: &mut Histogram<u64>| {
            if !h.is_empty() {
                h.reset();
            }
        };
        self.service.iter_mut().for_each(reset);
        self.intended.iter_mut().for_each(reset);
        self.returns = [[0; STATUSES]; KINDS];
        self.errors = [0; ERROR_KINDS.len()];
        self.retries = [0; KINDS];
        self.bytes_read = 0;
        self.bytes_written = 0;
        self.wire = [WireBytes::default(); KINDS];
        for c in &mut self.commands {
            reset(&mut c.service);
            reset(&mut c.intended);
            c.returns = [0; STATUSES];
            c.bytes = 0;
            c.wire = WireBytes::default();
        }
    }

    /// The number of operations, all kinds and statuses, counting each read-modify-write
    /// once (see the type's docs), and every arbitrary command: the figure throughput is
    /// computed from.
    pub fn operations(&self) -> u64 {
        let store_ops: u64 = OpKind::ALL
            .iter()
            .filter(|k| **k != OpKind::ReadModifyWrite)
            .map(|k| self.count(*k))
            .sum();
        let commands: u64 = self.commands.iter().map(|c| c.service.len()).sum();
        // Each read-modify-write was also recorded as one read and one update: count the
        // pair once.
        store_ops.saturating_sub(self.count(OpKind::ReadModifyWrite)) + commands
    }

    /// The number of service-time records of one kind, all statuses.
    pub fn count(&self, kind: OpKind) -> u64 {
        self.service[kind.index()].len()
    }

    /// The number of records of one kind that ended with `status`.
    pub fn status_count(&self, kind: OpKind, status: Status) -> u64 {
        self.returns[kind.index()][status.index()]
    }

    /// The number of retried attempts of one operation kind ([`Recorder::record_retry`]).
    pub fn retries(&self, kind: OpKind) -> u64 {
        self.retries[kind.index()]
    }

    /// The number of errors of one kind.
    pub fn error_count(&self, kind: StoreErrorKind) -> u64 {
        self.errors[error_index(kind)]
    }

    /// The number of errors of every kind.
    pub fn errors_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Payload bytes read from the store.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Payload bytes written to the store: the key and value of every write, and the key
    /// and operand of every merge (a command whose outcome is written).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// The service-time histogram of one kind, in nanoseconds.
    pub fn histogram(&self, kind: OpKind) -> &Histogram<u64> {
        &self.service[kind.index()]
    }

    /// The intended-start latency histogram of one kind, in nanoseconds (empty in closed
    /// loop runs).
    pub fn intended_histogram(&self, kind: OpKind) -> &Histogram<u64> {
        &self.intended[kind.index()]
    }

    /// The service times of every kind merged, in nanoseconds — except read-modify-write,
    /// whose read and update halves are already in it. Allocates; not for the hot path.
    pub fn overall(&self) -> Histogram<u64> {
        let mut all = new_histogram();
        for kind in OpKind::ALL {
            if kind != OpKind::ReadModifyWrite {
                add_histogram(&mut all, self.histogram(kind));
            }
        }
        for c in &self.commands {
            add_histogram(&mut all, &c.service);
        }
        all
    }

    /// Summarizes everything recorded over a run that took `elapsed`; arbitrary commands
    /// are named `COMMAND-0`, `COMMAND-1`, … (see [`Recorder::summary_named`]).
    pub fn summary(&self, elapsed: Duration) -> RunSummary {
        self.summary_named(elapsed, &[])
    }

    /// [`Recorder::summary`] with the arbitrary commands named: command `i` is
    /// `command_names[i]` (`COMMAND-i` past the end of the list). They follow the
    /// operation kinds, in command order, with their intended-time entries after the
    /// kinds' (`Intended-NAME`).
    pub fn summary_named(&self, elapsed: Duration, command_names: &[String]) -> RunSummary {
        let name = |i: usize| {
            command_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("COMMAND-{i}"))
        };
        let mut summary = self.kinds_summary(elapsed);
        for (i, c) in self.commands.iter().enumerate() {
            if !c.service.is_empty() {
                summary.ops.push(OpSummary {
                    name: name(i),
                    operations: c.service.len(),
                    returns: Status::ALL
                        .iter()
                        .map(|s| (s.ycsb_name().to_string(), c.returns[s.index()]))
                        .filter(|(_, n)| *n > 0)
                        .collect(),
                    retries: 0,
                    latency: LatencySummary::from_histogram(&c.service),
                });
            }
            if !c.intended.is_empty() {
                summary.intended.push(OpSummary {
                    name: format!("Intended-{}", name(i)),
                    operations: c.intended.len(),
                    returns: BTreeMap::new(),
                    retries: 0,
                    latency: LatencySummary::from_histogram(&c.intended),
                });
            }
        }
        summary
    }

    fn kinds_summary(&self, elapsed: Duration) -> RunSummary {
        let operations = self.operations();
        let secs = elapsed.as_secs_f64();
        let overall = self.overall();
        let ops = OpKind::ALL
            .iter()
            .filter(|k| self.count(**k) > 0)
            .map(|k| OpSummary {
                name: k.ycsb_name().to_string(),
                operations: self.count(*k),
                returns: Status::ALL
                    .iter()
                    .map(|s| (s.ycsb_name().to_string(), self.status_count(*k, *s)))
                    .filter(|(_, n)| *n > 0)
                    .collect(),
                retries: self.retries(*k),
                latency: LatencySummary::from_histogram(self.histogram(*k)),
            })
            .collect();
        let intended = OpKind::ALL
            .iter()
            .filter(|k| !self.intended_histogram(**k).is_empty())
            .map(|k| {
                let h = self.intended_histogram(*k);
                OpSummary {
                    name: format!("Intended-{}", k.ycsb_name()),
                    operations: h.len(),
                    returns: BTreeMap::new(),
                    retries: 0,
                    latency: LatencySummary::from_histogram(h),
                }
            })
            .collect();
        RunSummary {
            runtime_ms: secs * 1000.0,
            operations,
            throughput_ops_per_sec: if secs > 0.0 {
                operations as f64 / secs
            } else {
                0.0
            },
            overall: (!overall.is_empty()).then(|| LatencySummary::from_histogram(&overall)),
            ops,
            intended,
            errors: ERROR_KINDS
                .iter()
                .map(|k| (k.name().to_string(), self.error_count(*k)))
                .filter(|(_, n)| *n > 0)
                .collect(),
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn recorder_is_send() {
        assert_send::<Recorder>();
    }

    /// A small deterministic generator (SplitMix64), so the test needs no RNG crate.
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = Recorder::new();
        let mut b = Recorder::new();
        let mut all = Recorder::new();
        let mut s = 42;
        for i in 0..20_000u64 {
            let kind = OpKind::ALL[(splitmix(&mut s) % 6) as usize];
            let status = Status::ALL[(splitmix(&mut s) % 3) as usize];
            // Log-uniform-ish latencies from 100 ns to ~100 ms.
            let latency = 100 + (splitmix(&mut s) % (1 << (7 + splitmix(&mut s) % 20)));
            let intended = latency + splitmix(&mut s) % 1_000_000;
            let part = if i % 3 == 0 { &mut a } else { &mut b };
            for r in [part, &mut all] {
                r.record(kind, status, latency);
                r.record_intended(kind, intended);
                if status == Status::Error {
                    r.record_error(StoreErrorKind::Timeout);
                }
                r.add_bytes(10, 20);
            }
        }
        let mut merged = Recorder::new();
        merged.merge(&a);
        merged.merge(&b);
        for kind in OpKind::ALL {
            assert_eq!(merged.count(kind), all.count(kind));
            assert_eq!(merged.histogram(kind), all.histogram(kind));
            assert_eq!(
                merged.intended_histogram(kind),
                all.intended_histogram(kind)
            );
            for status in Status::ALL {
                assert_eq!(
                    merged.status_count(kind, status),
                    all.status_count(kind, status)
                );
            }
            for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
                assert_eq!(
                    merged.histogram(kind).value_at_quantile(q),
                    all.histogram(kind).value_at_quantile(q)
                );
            }
        }
        assert_eq!(merged.operations(), all.operations());
        assert_eq!(merged.overall(), all.overall());
        let elapsed = Duration::from_millis(1234);
        assert_eq!(merged.summary(elapsed), all.summary(elapsed));
        assert_eq!(merged.bytes_read(), 200_000);
        assert_eq!(merged.bytes_written(), 400_000);
    }

    #[test]
    fn percentiles_of_a_uniform_distribution() {
        let mut r = Recorder::new();
        for ns in 1..=1_000_000u64 {
            r.record(OpKind::Read, Status::Ok, ns);
        }
        let h = r.histogram(OpKind::Read);
        assert_eq!(h.len(), 1_000_000);
        // HDR with 3 significant digits: every reported value within 0.1 % of the truth.
        for (q, truth) in [(0.5, 500_000.0), (0.9, 900_000.0), (0.99, 990_000.0)] {
            let got = h.value_at_quantile(q) as f64;
            assert!(
                (got - truth).abs() / truth <= 0.001,
                "q={q}: {got} vs {truth}"
            );
        }
        let s = r.summary(Duration::from_secs(1));
        let lat = &s.ops[0].latency;
        assert!((lat.p99_us - 990.0).abs() <= 0.99, "p99 {} µs", lat.p99_us);
        assert!((lat.p50_us - 500.0).abs() <= 0.5, "p50 {} µs", lat.p50_us);
        assert!(
            (lat.avg_us - 500.0005).abs() <= 0.5,
            "avg {} µs",
            lat.avg_us
        );
        assert_eq!(lat.min_us, 0.001);
        assert!((lat.max_us - 1000.0).abs() <= 1.0, "max {} µs", lat.max_us);
        assert_eq!(s.operations, 1_000_000);
        assert_eq!(s.throughput_ops_per_sec, 1_000_000.0);
    }

    #[test]
    fn nanoseconds_are_reported_as_microseconds() {
        let mut r = Recorder::new();
        // Below 2048 ns HDR at 3 digits is exact.
        r.record(OpKind::Update, Status::Ok, 1_500);
        r.record(OpKind::Update, Status::Ok, 2_000);
        let s = r.summary(Duration::from_millis(10));
        let lat = &s.ops[0].latency;
        assert_eq!(s.ops[0].name, "UPDATE");
        assert_eq!(lat.min_us, 1.5);
        assert_eq!(lat.max_us, 2.0);
        assert_eq!(lat.avg_us, 1.75);
        assert_eq!(lat.p50_us, 1.5);
        assert_eq!(lat.p99_us, 2.0);
        assert_eq!(s.runtime_ms, 10.0);
        assert_eq!(s.throughput_ops_per_sec, 200.0);
    }

    #[test]
    fn huge_latencies_clamp_instead_of_panicking() {
        let mut r = Recorder::new();
        r.record(OpKind::Read, Status::Ok, u64::MAX);
        r.record(OpKind::Read, Status::Ok, HIGHEST_TRACKABLE_NS * 10);
        r.record_intended(OpKind::Read, u64::MAX);
        r.record(OpKind::Read, Status::Ok, 0);
        assert_eq!(r.count(OpKind::Read), 3);
        let max = r.histogram(OpKind::Read).max();
        // Clamped to one hour, within the histogram's 0.1 % resolution.
        assert!((HIGHEST_TRACKABLE_NS..=HIGHEST_TRACKABLE_NS / 1000 * 1001).contains(&max));
        let mut other = Recorder::new();
        other.merge(&r);
        other.merge(&r);
        assert_eq!(other.count(OpKind::Read), 6);
        let s = other.summary(Duration::from_secs(1));
        assert!(s.ops[0].latency.max_us >= 3.6e9);
    }

    #[test]
    fn read_modify_write_is_left_out_of_overall_and_counted_once() {
        let mut r = Recorder::new();
        r.record(OpKind::Read, Status::Ok, 1_000);
        r.record(OpKind::Update, Status::Ok, 1_000);
        r.record(OpKind::ReadModifyWrite, Status::Ok, 2_100);
        r.record(OpKind::Read, Status::NotFound, 500);
        assert_eq!(r.operations(), 2);
        assert_eq!(r.overall().len(), 3);
        assert_eq!(r.overall().max(), 1_000);
        assert_eq!(
            format!("{r:?}"),
            "Recorder { operations: 2, service: [(\"READ\", 2), (\"UPDATE\", 1), \
             (\"READ-MODIFY-WRITE\", 1)], intended: [], errors: 0, bytes_read: 0, \
             bytes_written: 0 }"
        );
    }

    #[test]
    fn reset_clears_everything() {
        let mut r = Recorder::new();
        r.record(OpKind::Scan, Status::Error, 10_000);
        r.record_intended(OpKind::Scan, 20_000);
        r.record_error(StoreErrorKind::Connection);
        r.add_bytes(1, 2);
        r.reset();
        assert_eq!(r.operations(), 0);
        assert_eq!(r.errors_total(), 0);
        assert_eq!(
            r.summary(Duration::from_secs(1)),
            Recorder::new().summary(Duration::from_secs(1))
        );
    }

    #[test]
    fn summary_names_statuses_errors_and_intended() {
        let mut r = Recorder::new();
        r.record(OpKind::Read, Status::Ok, 1_000);
        r.record(OpKind::Read, Status::NotFound, 1_000);
        r.record(OpKind::Read, Status::Error, 1_000);
        r.record_error(StoreErrorKind::Connection);
        r.record_intended(OpKind::Read, 5_000);
        let s = r.summary(Duration::from_secs(1));
        assert_eq!(s.ops.len(), 1);
        let returns: Vec<_> = s.ops[0]
            .returns
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(returns, [("ERROR", 1), ("NOT_FOUND", 1), ("OK", 1)]);
        assert_eq!(s.intended.len(), 1);
        assert_eq!(s.intended[0].name, "Intended-READ");
        assert_eq!(s.intended[0].operations, 1);
        assert_eq!(s.errors.get("connection"), Some(&1));
        assert!(s.overall.is_some());
        assert_eq!(Recorder::new().summary(Duration::ZERO).overall, None);
    }
    #[test]
    fn commands_are_recorded_per_id_and_merge_and_summarize_by_name() {
        let mut a = Recorder::new();
        let mut b = Recorder::new();
        a.record(OpKind::Read, Status::Ok, 1_000);
        a.record_command(CommandId(0), Status::Ok, 2_000, 10);
        b.record_command(CommandId(2), Status::Error, 3_000, 5);
        b.record_command(CommandId(0), Status::NotFound, 4_000, 1);
        b.record_command_intended(CommandId(0), 9_000);
        assert_eq!((a.commands(), b.commands()), (1, 3));
        a.merge(&b);
        assert_eq!(a.commands(), 3);
        assert_eq!(a.command_count(CommandId(0)), 2);
        assert_eq!(a.command_count(CommandId(1)), 0);
        assert_eq!(a.command_status_count(CommandId(2), Status::Error), 1);
        assert_eq!(a.command_bytes(CommandId(0)), 11);
        assert_eq!(a.operations(), 4, "a read and three commands");
        assert_eq!(a.overall().len(), 4);
        let names = vec!["SET".to_string()];
        let s = a.summary_named(Duration::from_secs(1), &names);
        let ops: Vec<(&str, u64)> = s
            .ops
            .iter()
            .map(|o| (o.name.as_str(), o.operations))
            .collect();
        assert_eq!(ops, [("READ", 1), ("SET", 2), ("COMMAND-2", 1)]);
        assert_eq!(s.ops[1].returns.get("NOT_FOUND"), Some(&1));
        assert_eq!(s.intended[0].name, "Intended-SET");
        assert_eq!(s.operations, 4);
        a.reset();
        assert_eq!((a.operations(), a.command_bytes(CommandId(0))), (0, 0));
    }
}
