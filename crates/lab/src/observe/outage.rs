//! A store that stops answering mid-run (a server killed or unreachable): said on
//! stderr when it happens and when it answers again, and summed up in the result, so a
//! throughput averaged over time without a server is never taken for the store's own.

use kvlab_core::StoreErrorKind;
use kvlab_runner::Interval;

use super::progress::Progress;

/// Follows the measured intervals' connection failures.
#[derive(Debug, Default)]
pub struct Outage {
    /// Since when (seconds into the measured part) requests fail to reach the store.
    since: Option<f64>,
    /// Seconds of the run the store could not be reached (about: see [`Outage::interval`]).
    unreachable_s: f64,
    /// Times the store became unreachable.
    episodes: u64,
    /// Requests that could not reach the store.
    failed: u64,
}

impl Outage {
    /// Reads one measured interval. An interval in which requests failed to connect and
    /// none succeeded counts whole as unreachable time, one with both half. While the
    /// store is unreachable, an interval in which nothing completed (the clients waiting
    /// out their reconnection back-off) counts whole too: only an answer ends an outage.
    pub fn interval(&mut self, iv: &Interval<'_>, display: &mut Progress) {
        if iv.warmup {
            return;
        }
        let failed = iv.recorder.error_count(StoreErrorKind::Connection);
        let answered = iv.recorder.operations() - iv.recorder.errors_total();
        let start = (iv.time_s - iv.interval_s).max(0.0);
        if failed > 0 {
            self.failed += failed;
            self.unreachable_s += if answered == 0 {
                iv.interval_s
            } else {
                iv.interval_s / 2.0
            };
            if self.since.is_none() {
                self.since = Some(start);
                self.episodes += 1;
                display.message(&format!(
                    "kvlab: {start:.1} s: the store does not answer: {failed} requests could \
                     not reach it; reconnecting"
                ));
            }
        } else if answered == 0 {
            if self.since.is_some() {
                self.unreachable_s += iv.interval_s;
            }
        } else if let Some(since) = self.since.take() {
            display.message(&format!(
                "kvlab: {start:.1} s: the store answers again, after {:.1} s",
                start - since
            ));
        }
    }

    /// Seconds of the run the store could not be reached; 0 when it always answered.
    pub fn unreachable_s(&self) -> f64 {
        self.unreachable_s
    }

    /// What the result's notes say about it, if anything happened.
    pub fn note(&self, elapsed_s: f64) -> Option<String> {
        if self.episodes == 0 {
            return None;
        }
        let still = if self.since.is_some() {
            "; it did not answer again before the end"
        } else {
            ""
        };
        Some(format!(
            "the store could not be reached for about {:.1} s of the run's {elapsed_s:.1} s \
             ({} time(s); {} requests could not reach it{still}): throughput and latency \
             include that time",
            self.unreachable_s, self.episodes, self.failed
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvlab_core::{OpKind, Status};
    use kvlab_measure::Recorder;

    /// One second of `ok` answered reads and `refused` connection failures.
    fn second(outage: &mut Outage, at_s: f64, ok: u64, refused: u64) {
        let mut r = Recorder::new();
        for _ in 0..ok {
            r.record(OpKind::Read, Status::Ok, 1_000);
        }
        for _ in 0..refused {
            r.record(OpKind::Read, Status::Error, 1_000);
            r.record_error(StoreErrorKind::Connection);
        }
        let iv = Interval {
            time_s: at_s + 1.0,
            interval_s: 1.0,
            recorder: &r,
            done: 0,
            expected: None,
            duration: None,
            warmup: false,
        };
        outage.interval(
            &iv,
            &mut Progress::new(crate::observe::progress::When::Never, "run"),
        );
    }

    /// A server lost for good: the seconds the clients spent waiting out their back-off
    /// (nothing sent, nothing failed) are not an answer; the outage lasts to the end.
    #[test]
    fn seconds_without_any_answer_do_not_end_an_outage() {
        let mut o = Outage::default();
        second(&mut o, 0.0, 100, 0);
        second(&mut o, 1.0, 50, 3);
        second(&mut o, 2.0, 0, 0);
        second(&mut o, 3.0, 0, 2);
        second(&mut o, 4.0, 0, 0);
        assert_eq!(o.unreachable_s(), 3.5);
        let note = o.note(5.0).unwrap();
        assert!(note.contains("did not answer again"), "{note}");
        assert!(note.contains("5 requests could not reach it"), "{note}");
        // An answer ends it; a quiet second after that is not an outage.
        second(&mut o, 5.0, 10, 0);
        second(&mut o, 6.0, 0, 0);
        assert_eq!(o.unreachable_s(), 3.5);
        assert!(!o.note(7.0).unwrap().contains("did not answer again"));
    }
}
