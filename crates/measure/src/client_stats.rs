//! [`ClientStats`]: what one client (connection) did, second by second — memtier's
//! per-client `run_stats`, behind `--client-stats`.

use hdrhistogram::Histogram;
use kvlab_core::{OpKind, Outcome, WireBytes};

/// Highest latency a client's histograms hold, in microseconds (memtier's
/// `LATENCY_HDR_MAX_VALUE`, 60 s); longer ones are recorded as this.
pub const CLIENT_HIGHEST_TRACKABLE_US: u64 = 60_000_000;

/// Significant digits of a client's histograms (memtier's per-client precision,
/// `LATENCY_HDR_SEC_SIGDIGTS`): small enough for thousands of clients.
pub const CLIENT_SIGNIFICANT_DIGITS: u8 = 2;

/// One command type's figures in one second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommandSecond {
    /// Requests completed.
    pub requests: u64,
    /// Their latencies added up, in nanoseconds.
    pub total_latency_ns: u64,
    /// Bytes sent: the requests as encoded, protocol framing included (memtier's
    /// `m_bytes_tx`).
    pub bytes_tx: u64,
    /// Bytes received: the replies as read, protocol framing included (memtier's
    /// `m_bytes_rx`).
    pub bytes_rx: u64,
    /// Keys found (GETs, counted per key).
    pub hits: u64,
    /// Keys not found (GETs, counted per key).
    pub misses: u64,
}

impl CommandSecond {
    /// The mean latency in whole microseconds, 0 without requests (memtier's
    /// `AVERAGE(total, count)`).
    pub fn average_latency_us(&self) -> u64 {
        (self.total_latency_ns / 1000)
            .checked_div(self.requests)
            .unwrap_or(0)
    }
}

/// A second of a client's run: `second` counts from the start of the measured run, and
/// only seconds in which the client completed a request are kept (and second 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientSecond {
    /// Whole seconds since the measured run started.
    pub second: u32,
    /// SETs (kvlab's INSERT requests).
    pub set: CommandSecond,
    /// GETs (kvlab's READ requests).
    pub get: CommandSecond,
}

/// One client's requests, second by second, and its SET and GET latency histograms (in
/// microseconds, [`CLIENT_SIGNIFICANT_DIGITS`] digits).
///
/// Recording allocates only when a new second starts (one row per second).
#[derive(Clone, Debug)]
pub struct ClientStats {
    /// The client's thread.
    pub thread: usize,
    /// The client's index within its thread.
    pub client: usize,
    seconds: Vec<ClientSecond>,
    current: ClientSecond,
    set_latency_us: Histogram<u64>,
    get_latency_us: Histogram<u64>,
}

impl ClientStats {
    /// Empty statistics of client `client` of thread `thread`.
    pub fn new(thread: usize, client: usize) -> ClientStats {
        let histogram = || {
            Histogram::new_with_bounds(1, CLIENT_HIGHEST_TRACKABLE_US, CLIENT_SIGNIFICANT_DIGITS)
                .expect("constant histogram bounds are valid")
        };
        ClientStats {
            thread,
            client,
            seconds: Vec::new(),
            current: ClientSecond::default(),
            set_latency_us: histogram(),
            get_latency_us: histogram(),
        }
    }

    /// Records a request of `kind` completed `at_ns` after the run started, which took
    /// `latency_ns`, took `wire` bytes on the wire and ended with `outcome` (for GETs,
    /// the keys found and missed). Kinds other than INSERT (SET) and READ (GET) are not
    /// counted.
    pub fn record(
        &mut self,
        kind: OpKind,
        at_ns: u64,
        latency_ns: u64,
        wire: WireBytes,
        outcome: Outcome,
    ) {
        let (command, histogram) = match kind {
            OpKind::Insert => (&mut self.current.set, &mut self.set_latency_us),
            OpKind::Read => (&mut self.current.get, &mut self.get_latency_us),
            _ => return,
        };
        let second = (at_ns / 1_000_000_000).min(u64::from(u32::MAX)) as u32;
        let (command, histogram) = if second > self.current.second {
            // memtier's roll_cur_stats: the finished second is kept, idle ones skipped.
            self.seconds.push(self.current);
            self.current = ClientSecond {
                second,
                ..ClientSecond::default()
            };
            match kind {
                OpKind::Insert => (&mut self.current.set, &mut self.set_latency_us),
                _ => (&mut self.current.get, &mut self.get_latency_us),
            }
        } else {
            (command, histogram)
        };
        command.requests += 1;
        command.total_latency_ns += latency_ns;
        let (hits, misses) = outcome.key_hits();
        command.bytes_tx += wire.sent;
        command.bytes_rx += wire.received;
        command.hits += hits;
        command.misses += misses;
        histogram.saturating_record((latency_ns / 1000).max(1));
    }

    /// Every second recorded so far, the current one last.
    pub fn seconds(&self) -> impl Iterator<Item = &ClientSecond> {
        self.seconds.iter().chain(std::iter::once(&self.current))
    }

    /// SET latencies, in microseconds.
    pub fn set_latency_us(&self) -> &Histogram<u64> {
        &self.set_latency_us
    }

    /// GET latencies, in microseconds.
    pub fn get_latency_us(&self) -> &Histogram<u64> {
        &self.get_latency_us
    }

    /// Requests recorded, SETs and GETs.
    pub fn requests(&self) -> u64 {
        self.seconds()
            .map(|s| s.set.requests + s.get.requests)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_roll_and_idle_seconds_are_skipped() {
        let mut c = ClientStats::new(1, 2);
        let wire = |sent, received| WireBytes { sent, received };
        c.record(
            OpKind::Insert,
            10,
            1_500_000,
            wire(140, 5),
            Outcome::Written { bytes: 100 },
        );
        c.record(
            OpKind::Read,
            500_000_000,
            500_000,
            wire(30, 107),
            Outcome::Hit { bytes: 100 },
        );
        c.record(
            OpKind::Read,
            3_200_000_000,
            700_000,
            wire(30, 5),
            Outcome::Miss,
        );
        c.record(
            OpKind::Update,
            3_300_000_000,
            700_000,
            wire(30, 5),
            Outcome::Miss,
        );
        let rows: Vec<_> = c.seconds().copied().collect();
        assert_eq!(rows.iter().map(|r| r.second).collect::<Vec<_>>(), [0, 3]);
        assert_eq!(rows[0].set.requests, 1);
        assert_eq!(rows[0].set.average_latency_us(), 1500);
        assert_eq!((rows[0].get.hits, rows[0].get.bytes_rx), (1, 107));
        assert_eq!((rows[0].set.bytes_tx, rows[0].set.bytes_rx), (140, 5));
        assert_eq!((rows[1].get.bytes_tx, rows[1].get.bytes_rx), (30, 5));
        assert_eq!((rows[1].get.requests, rows[1].get.misses), (1, 1));
        assert_eq!(c.requests(), 3);
        assert_eq!(c.get_latency_us().len(), 2);
        assert_eq!(c.set_latency_us().len(), 1);
        assert_eq!(CommandSecond::default().average_latency_us(), 0);
    }

    #[test]
    fn a_client_without_requests_has_second_zero() {
        let c = ClientStats::new(0, 0);
        assert_eq!(c.seconds().count(), 1);
        assert_eq!(c.requests(), 0);
    }
}
