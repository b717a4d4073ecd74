//! [`ClientStats`]: what one client (connection) did, second by second — memtier's
//! per-client `run_stats`, behind `--client-stats`.

use hdrhistogram::Histogram;
use kvlab_core::{CommandId, OpKind, Outcome, WireBytes};

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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientSecond {
    /// Whole seconds since the measured run started.
    pub second: u32,
    /// SETs (kvlab's INSERT requests that are not commands).
    pub set: CommandSecond,
    /// GETs (kvlab's READ requests that are not commands).
    pub get: CommandSecond,
    /// Requests that are commands ([`kvlab_core::Request::command`]: memtier's
    /// `--command` lines, or its WAITs), indexed by [`CommandId`]; as long as the
    /// highest id the client has sent so far.
    pub commands: Vec<CommandSecond>,
}

impl ClientSecond {
    /// Command `id`'s figures in this second (zero when the client sent none).
    pub fn command(&self, id: CommandId) -> CommandSecond {
        self.commands
            .get(usize::from(id.0))
            .copied()
            .unwrap_or_default()
    }
}

/// One client's requests, second by second, and its SET, GET and command latency
/// histograms (in microseconds, [`CLIENT_SIGNIFICANT_DIGITS`] digits).
///
/// Recording allocates only when a new second starts (one row per second) and the first
/// time the client sends a command of a new [`CommandId`].
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
    /// Per [`CommandId`] (grown on demand).
    command_latency_us: Vec<Histogram<u64>>,
}

/// An empty histogram of a client's precision.
fn client_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, CLIENT_HIGHEST_TRACKABLE_US, CLIENT_SIGNIFICANT_DIGITS)
        .expect("constant histogram bounds are valid")
}

impl ClientStats {
    /// Empty statistics of client `client` of thread `thread`.
    pub fn new(thread: usize, client: usize) -> ClientStats {
        ClientStats {
            thread,
            client,
            seconds: Vec::new(),
            current: ClientSecond::default(),
            set_latency_us: client_histogram(),
            get_latency_us: client_histogram(),
            command_latency_us: Vec::new(),
        }
    }

    /// Records a request of `kind` — or, when `command` is set, of that command — completed
    /// `at_ns` after the run started, which took `latency_ns`, took `wire` bytes on the
    /// wire and ended with `outcome` (for GETs, the keys found and missed). Kinds other
    /// than INSERT (SET) and READ (GET) are not counted unless they are commands.
    pub fn record(
        &mut self,
        kind: OpKind,
        command: Option<CommandId>,
        at_ns: u64,
        latency_ns: u64,
        wire: WireBytes,
        outcome: Outcome,
    ) {
        if command.is_none() && !matches!(kind, OpKind::Insert | OpKind::Read) {
            return;
        }
        let second = (at_ns / 1_000_000_000).min(u64::from(u32::MAX)) as u32;
        if second > self.current.second {
            // memtier's roll_cur_stats: the finished second is kept, idle ones skipped.
            let commands = vec![CommandSecond::default(); self.current.commands.len()];
            let finished = std::mem::replace(
                &mut self.current,
                ClientSecond {
                    second,
                    commands,
                    ..ClientSecond::default()
                },
            );
            self.seconds.push(finished);
        }
        let (figures, histogram) = match command {
            Some(id) => {
                let i = usize::from(id.0);
                if self.current.commands.len() <= i {
                    self.current
                        .commands
                        .resize(i + 1, CommandSecond::default());
                }
                while self.command_latency_us.len() <= i {
                    self.command_latency_us.push(client_histogram());
                }
                (
                    &mut self.current.commands[i],
                    &mut self.command_latency_us[i],
                )
            }
            None if kind == OpKind::Insert => (&mut self.current.set, &mut self.set_latency_us),
            None => (&mut self.current.get, &mut self.get_latency_us),
        };
        figures.requests += 1;
        figures.total_latency_ns += latency_ns;
        figures.bytes_tx += wire.sent;
        figures.bytes_rx += wire.received;
        if command.is_none() {
            let (hits, misses) = outcome.key_hits();
            figures.hits += hits;
            figures.misses += misses;
        }
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

    /// Latencies of command `id`, in microseconds; `None` when the client sent none.
    pub fn command_latency_us(&self, id: CommandId) -> Option<&Histogram<u64>> {
        self.command_latency_us.get(usize::from(id.0))
    }

    /// Requests recorded: SETs, GETs and commands.
    pub fn requests(&self) -> u64 {
        self.seconds()
            .map(|s| {
                s.set.requests + s.get.requests + s.commands.iter().map(|c| c.requests).sum::<u64>()
            })
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
            None,
            10,
            1_500_000,
            wire(140, 5),
            Outcome::Written { bytes: 100 },
        );
        c.record(
            OpKind::Read,
            None,
            500_000_000,
            500_000,
            wire(30, 107),
            Outcome::Hit { bytes: 100 },
        );
        c.record(
            OpKind::Read,
            None,
            3_200_000_000,
            700_000,
            wire(30, 5),
            Outcome::Miss,
        );
        c.record(
            OpKind::Update,
            None,
            3_300_000_000,
            700_000,
            wire(30, 5),
            Outcome::Miss,
        );
        let rows: Vec<_> = c.seconds().cloned().collect();
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
    fn commands_are_counted_per_id_and_not_as_sets_or_gets() {
        let mut c = ClientStats::new(0, 0);
        let wire = |sent, received| WireBytes { sent, received };
        // A WAIT (a READ request that is command 0) and an HSET (command 1) in second 0,
        // command 1 again in second 2.
        c.record(
            OpKind::Read,
            Some(CommandId(0)),
            10,
            300_000,
            wire(0, 0),
            Outcome::Hit { bytes: 0 },
        );
        c.record(
            OpKind::Update,
            Some(CommandId(1)),
            20,
            100_000,
            wire(40, 4),
            Outcome::Written { bytes: 10 },
        );
        c.record(
            OpKind::Update,
            Some(CommandId(1)),
            2_000_000_000,
            200_000,
            wire(40, 4),
            Outcome::Written { bytes: 10 },
        );
        let rows: Vec<_> = c.seconds().cloned().collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].get, CommandSecond::default(), "a WAIT is not a GET");
        assert_eq!(rows[0].command(CommandId(0)).requests, 1);
        assert_eq!(rows[0].command(CommandId(0)).hits, 0);
        assert_eq!(rows[0].command(CommandId(1)).bytes_tx, 40);
        assert_eq!(rows[1].second, 2);
        assert_eq!(rows[1].command(CommandId(0)), CommandSecond::default());
        assert_eq!(rows[1].command(CommandId(1)).average_latency_us(), 200);
        assert_eq!(rows[1].command(CommandId(7)), CommandSecond::default());
        assert_eq!(c.command_latency_us(CommandId(1)).unwrap().len(), 2);
        assert!(c.command_latency_us(CommandId(2)).is_none());
        assert_eq!(c.requests(), 3);
    }

    #[test]
    fn a_client_without_requests_has_second_zero() {
        let c = ClientStats::new(0, 0);
        assert_eq!(c.seconds().count(), 1);
        assert_eq!(c.requests(), 0);
    }
}
