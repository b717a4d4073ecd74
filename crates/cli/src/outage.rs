//! A store that stops answering mid-run (a server killed or unreachable): said on
//! stderr when it happens and when it answers again, and summed up in the result, so a
//! throughput averaged over time without a server is never taken for the store's own.

use kvlab_core::StoreErrorKind;
use kvlab_runner::Interval;

use crate::progress::Progress;

/// Follows the measured intervals' connection failures.
#[derive(Debug, Default)]
pub(crate) struct Outage {
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
    /// none succeeded counts whole as unreachable time, one with both half.
    pub(crate) fn interval(&mut self, iv: &Interval<'_>, display: &mut Progress) {
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
        } else if let Some(since) = self.since.take() {
            display.message(&format!(
                "kvlab: {start:.1} s: the store answers again, after {:.1} s",
                start - since
            ));
        }
    }

    /// Seconds of the run the store could not be reached; 0 when it always answered.
    pub(crate) fn unreachable_s(&self) -> f64 {
        self.unreachable_s
    }

    /// What the result's notes say about it, if anything happened.
    pub(crate) fn note(&self, elapsed_s: f64) -> Option<String> {
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
