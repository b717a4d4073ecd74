//! [`IntervalLog`]: HdrHistogram interval logs, one tagged histogram per kind per interval.

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use kvlab_core::{CommandId, OpKind};

use crate::{MeasureError, Recorder};

/// Java's `HistogramLogWriter` divides the interval max by this (nanoseconds →
/// milliseconds) so the column is readable; the histograms themselves stay in nanoseconds.
const MAX_VALUE_UNIT_RATIO: f64 = 1_000_000.0;

/// An HdrHistogram interval log, as Java's `HistogramLogWriter` writes it and
/// `HistogramLogProcessor` (or hdrhistogram's `IntervalLogIterator`) reads it.
///
/// The header holds the log format version, `StartTime` and `BaseTime` (both the run's
/// start, so interval timestamps are seconds since the start) and the column legend. Each
/// [`IntervalLog::write_interval`] then writes:
///
/// - one untagged line with the overall service-time histogram (all kinds but
///   read-modify-write, see [`Recorder::overall`]) — what `HistogramLogProcessor` reads by
///   default;
/// - one line tagged with the kind's YCSB name (`Tag=READ,…`) for every kind recorded so far
///   in this log, so each tag has a line in every interval from its first on;
/// - likewise `Tag=Intended-READ,…` lines for intended-start latencies;
/// - then, for each named arbitrary command (a replay's `MERGE`), a `Tag=MERGE,…` line
///   from its first interval on, and `Tag=Intended-MERGE,…` lines likewise.
///
/// Histograms are in nanoseconds, V2 deflate-compressed and base64-encoded; the
/// `Interval_Max` column is in milliseconds, as Java writes it.
pub struct IntervalLog<W: Write> {
    out: W,
    serializer: V2DeflateSerializer,
    buf: Vec<u8>,
    text: String,
    seen: [bool; OpKind::ALL.len()],
    seen_intended: [bool; OpKind::ALL.len()],
    /// Per command id: (service, intended) histograms seen so far.
    seen_commands: Vec<(bool, bool)>,
}

impl<W: Write> std::fmt::Debug for IntervalLog<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntervalLog").finish_non_exhaustive()
    }
}

fn epoch_secs(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// A name the interval log format takes as a tag: not empty, no comma (the field
/// separator) and no white space. [`IntervalLog`] writes a line for a measurement only
/// under such a name.
pub fn is_log_tag(name: &str) -> bool {
    !name.is_empty() && !name.contains(|c: char| c == ',' || c.is_whitespace())
}

impl<W: Write> IntervalLog<W> {
    /// Starts a log whose intervals are offsets from `start`, writing its header to `out`.
    pub fn new(mut out: W, start: SystemTime) -> Result<Self, MeasureError> {
        let start_s = epoch_secs(start);
        write!(
            out,
            "#[Logging for: kvlab, latencies in nanoseconds]\n\
             #[Histogram log format version 1.3]\n\
             #[StartTime: {start_s:.3} (seconds since epoch)]\n\
             #[BaseTime: {start_s:.3} (seconds since epoch)]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\
             \"Interval_Compressed_Histogram\"\n"
        )?;
        Ok(IntervalLog {
            out,
            serializer: V2DeflateSerializer::new(),
            buf: Vec::new(),
            text: String::new(),
            seen: [false; OpKind::ALL.len()],
            seen_intended: [false; OpKind::ALL.len()],
            seen_commands: Vec::new(),
        })
    }

    /// Writes the histograms of one interval that began `start_offset` after the log's start
    /// and lasted `duration`. `interval` holds only that interval's records (the caller
    /// resets it, or takes a fresh one, between intervals). Arbitrary command `i` is tagged
    /// `command_names[i]` (as in [`Recorder::summary_named`]); commands past the end of the
    /// list, or whose name cannot be a tag (empty, or with a comma or white space), have
    /// no lines of their own (they are in the untagged one).
    pub fn write_interval(
        &mut self,
        start_offset: Duration,
        duration: Duration,
        interval: &Recorder,
        command_names: &[String],
    ) -> Result<(), MeasureError> {
        self.write_histogram(None, start_offset, duration, &interval.overall())?;
        for kind in OpKind::ALL {
            let i = kind.index();
            self.seen[i] |= !interval.histogram(kind).is_empty();
            if self.seen[i] {
                self.write_histogram(
                    Some(kind.ycsb_name()),
                    start_offset,
                    duration,
                    interval.histogram(kind),
                )?;
            }
        }
        for kind in OpKind::ALL {
            let i = kind.index();
            self.seen_intended[i] |= !interval.intended_histogram(kind).is_empty();
            if self.seen_intended[i] {
                let tag = format!("Intended-{}", kind.ycsb_name());
                let h = interval.intended_histogram(kind);
                self.write_histogram(Some(&tag), start_offset, duration, h)?;
            }
        }
        if self.seen_commands.len() < command_names.len() {
            self.seen_commands
                .resize(command_names.len(), (false, false));
        }
        // A recorder that never saw a command has no histograms for it: an empty one.
        let empty = Histogram::<u64>::new(1).expect("one significant digit is valid");
        for (name, id) in command_names.iter().zip(0u16..) {
            if !is_log_tag(name) {
                continue;
            }
            let service = interval.command_histogram(CommandId(id));
            let intended = interval.command_intended_histogram(CommandId(id));
            let seen = &mut self.seen_commands[usize::from(id)];
            seen.0 |= service.is_some_and(|h| !h.is_empty());
            seen.1 |= intended.is_some_and(|h| !h.is_empty());
            let (seen_service, seen_intended) = *seen;
            if seen_service {
                self.write_histogram(
                    Some(name),
                    start_offset,
                    duration,
                    service.unwrap_or(&empty),
                )?;
            }
            if seen_intended {
                let tag = format!("Intended-{name}");
                let h = intended.unwrap_or(&empty);
                self.write_histogram(Some(&tag), start_offset, duration, h)?;
            }
        }
        self.out.flush()?;
        Ok(())
    }

    /// Gives back the underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Writes one histogram as an interval line of its own, tagged or not: each kind's
    /// line of [`IntervalLog::write_interval`], or the intervals of other logs merged
    /// into this one (`kvlab merge`).
    pub fn write_histogram(
        &mut self,
        tag: Option<&str>,
        start_offset: Duration,
        duration: Duration,
        h: &Histogram<u64>,
    ) -> Result<(), MeasureError> {
        self.buf.clear();
        self.text.clear();
        self.serializer.serialize(h, &mut self.buf)?;
        base64::engine::general_purpose::STANDARD.encode_string(&self.buf, &mut self.text);
        if let Some(tag) = tag {
            write!(self.out, "Tag={tag},")?;
        }
        let max_ms = if h.is_empty() {
            0.0
        } else {
            h.max() as f64 / MAX_VALUE_UNIT_RATIO
        };
        writeln!(
            self.out,
            "{:.3},{:.3},{:.3},{}",
            start_offset.as_secs_f64(),
            duration.as_secs_f64(),
            max_ms,
            self.text
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    use kvlab_core::Status;

    use super::*;

    #[test]
    fn three_intervals_round_trip() {
        let start = UNIX_EPOCH + Duration::from_millis(1_700_000_000_250);
        let mut log = IntervalLog::new(Vec::new(), start).unwrap();
        let mut rec = Recorder::new();
        let mut expected: Vec<BTreeMap<String, u64>> = Vec::new();
        for interval in 0..3u64 {
            rec.reset();
            for i in 0..(100 * (interval + 1)) {
                rec.record(OpKind::Read, Status::Ok, 1_000 + i * 10);
            }
            if interval == 1 {
                rec.record(OpKind::Update, Status::Ok, 50_000);
                rec.record_intended(OpKind::Update, 80_000);
            }
            let mut counts = BTreeMap::new();
            counts.insert(String::new(), rec.overall().len());
            counts.insert("READ".to_string(), rec.count(OpKind::Read));
            if interval >= 1 {
                counts.insert("UPDATE".to_string(), rec.count(OpKind::Update));
                counts.insert(
                    "Intended-UPDATE".to_string(),
                    rec.intended_histogram(OpKind::Update).len(),
                );
            }
            expected.push(counts);
            log.write_interval(
                Duration::from_secs(interval),
                Duration::from_secs(1),
                &rec,
                &[],
            )
            .unwrap();
        }
        let bytes = log.into_inner();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.starts_with("#[Logging for: kvlab"), "{text}");

        let mut deserializer = Deserializer::new();
        let mut got: Vec<BTreeMap<String, u64>> = vec![BTreeMap::new(); 3];
        let mut start_time = None;
        let mut base_time = None;
        for entry in IntervalLogIterator::new(&bytes) {
            match entry.unwrap() {
                LogEntry::StartTime(t) => start_time = Some(t),
                LogEntry::BaseTime(t) => base_time = Some(t),
                LogEntry::Interval(ilh) => {
                    let h: Histogram<u64> = deserializer
                        .deserialize(
                            &mut base64::engine::general_purpose::STANDARD
                                .decode(ilh.encoded_histogram())
                                .unwrap()
                                .as_slice(),
                        )
                        .unwrap();
                    let idx = ilh.start_timestamp().as_secs() as usize;
                    assert_eq!(ilh.duration(), Duration::from_secs(1));
                    let tag = ilh
                        .tag()
                        .map(|t| t.as_str().to_string())
                        .unwrap_or_default();
                    if tag == "READ" {
                        assert!((ilh.max() - h.max() as f64 / 1e6).abs() < 1e-3);
                        assert_eq!(h.max(), rec_max_for(idx));
                    }
                    got[idx].insert(tag, h.len());
                }
            }
        }
        assert_eq!(start_time, Some(Duration::from_millis(1_700_000_000_250)));
        assert_eq!(base_time, start_time);
        // Interval 2 has empty UPDATE lines: once seen, a tag stays.
        assert_eq!(expected[2].get("UPDATE"), Some(&0));
        assert_eq!(got, expected);
    }

    /// The highest equivalent value of the largest READ latency recorded in interval `i`.
    fn rec_max_for(i: usize) -> u64 {
        let mut h = crate::recorder::new_histogram();
        h.record(1_000 + (100 * (i as u64 + 1) - 1) * 10).unwrap();
        h.max()
    }

    /// `(interval, tag, count)` of every tagged line of a log.
    fn tagged_lines(bytes: &[u8]) -> Vec<(u64, String, u64)> {
        let mut deserializer = Deserializer::new();
        IntervalLogIterator::new(bytes)
            .filter_map(|e| match e.unwrap() {
                LogEntry::Interval(ilh) => ilh.tag().map(|t| {
                    let raw = base64::engine::general_purpose::STANDARD
                        .decode(ilh.encoded_histogram())
                        .unwrap();
                    let h: Histogram<u64> = deserializer.deserialize(&mut raw.as_slice()).unwrap();
                    (
                        ilh.start_timestamp().as_secs(),
                        t.as_str().to_string(),
                        h.len(),
                    )
                }),
                _ => None,
            })
            .collect()
    }

    /// A named command (a replay's `MERGE`) has its own tag from its first interval on,
    /// and `Intended-MERGE` likewise; a name that cannot be a tag has none.
    #[test]
    fn named_commands_are_tagged() {
        let mut log = IntervalLog::new(Vec::new(), UNIX_EPOCH).unwrap();
        let names = ["MERGE".to_string(), "TWO WORDS".to_string()];
        let mut rec = Recorder::new();
        for interval in 0..3u64 {
            rec.reset();
            rec.record(OpKind::Read, Status::Ok, 1_000);
            if interval == 1 {
                for _ in 0..4 {
                    rec.record_command(CommandId(0), Status::Ok, 2_000, 10);
                }
                rec.record_command(CommandId(1), Status::Ok, 2_000, 10);
            }
            if interval == 2 {
                rec.record_command(CommandId(0), Status::Ok, 3_000, 10);
                rec.record_command_intended(CommandId(0), 9_000);
            }
            let (start, length) = (Duration::from_secs(interval), Duration::from_secs(1));
            log.write_interval(start, length, &rec, &names).unwrap();
        }
        let lines = tagged_lines(&log.into_inner());
        let tag = |t: &str| (0, t.to_string(), 1);
        let line = |i: u64, t: &str, n: u64| (i, t.to_string(), n);
        assert_eq!(
            lines,
            vec![
                tag("READ"),
                line(1, "READ", 1),
                line(1, "MERGE", 4),
                line(2, "READ", 1),
                line(2, "MERGE", 1),
                line(2, "Intended-MERGE", 1),
            ]
        );
    }
}
