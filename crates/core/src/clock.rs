//! [`Timestamp`]: the clock latencies are measured with.
//!
//! Every request is timed twice (sent, completed), so the clock is on the hot path:
//! `std::time::Instant::now` costs ~30 ns on a virtual machine's vDSO, reading the
//! CPU's time-stamp counter ~10 ns. Where the counter is invariant (x86-64 with
//! `constant_tsc` and `nonstop_tsc`), timestamps come from it, converted to nanoseconds
//! with a rate calibrated once against `Instant`; elsewhere they come from `Instant`.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A point in time, in nanoseconds since the process's clock epoch. Cheap to take
/// ([`Timestamp::now`]), totally ordered, and convertible from an [`Instant`] so that
/// schedules kept in `Instant`s compare with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

struct Calibration {
    epoch: Instant,
    /// `None`: no invariant time-stamp counter; use `Instant`.
    tsc: Option<Tsc>,
}

struct Tsc {
    /// Counter value at `epoch`.
    base: u64,
    /// Nanoseconds per tick, as a 32.32 fixed-point number.
    ns_per_tick_q32: u64,
}

#[inline]
fn calibration() -> &'static Calibration {
    static CAL: OnceLock<Calibration> = OnceLock::new();
    CAL.get_or_init(calibrate)
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn read_tsc() -> u64 {
    // SAFETY: `rdtsc` is available on every x86-64 CPU and has no preconditions.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "x86_64")]
fn invariant_tsc() -> bool {
    if std::env::var_os("KVLAB_CLOCK").is_some_and(|v| v == "instant") {
        return false;
    }
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return false;
    };
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

#[cfg(target_arch = "x86_64")]
fn calibrate() -> Calibration {
    if !invariant_tsc() {
        return Calibration {
            epoch: Instant::now(),
            tsc: None,
        };
    }
    // Ticks against wall time over ~20 ms, bracketing each counter read with Instant
    // reads so the pair is taken at (nearly) one moment. Both clocks run while the thread
    // sleeps, so it sleeps through the 20 ms rather than spinning: a spin cost 20 ms of
    // CPU at every start, most of what a short `kvlab memtier --rate-limiting=100` run
    // spends.
    let pair = || {
        let a = Instant::now();
        let t = read_tsc();
        let b = Instant::now();
        (a + (b - a) / 2, t)
    };
    let (i0, t0) = pair();
    while let Some(left) = Duration::from_millis(20).checked_sub(i0.elapsed()) {
        std::thread::sleep(left);
    }
    let (i1, t1) = pair();
    let ticks = t1.wrapping_sub(t0);
    let nanos = (i1 - i0).as_nanos() as u64;
    if ticks == 0 || nanos == 0 {
        return Calibration {
            epoch: i0,
            tsc: None,
        };
    }
    let ns_per_tick_q32 = ((nanos as u128) << 32) / ticks as u128;
    Calibration {
        epoch: i0,
        tsc: Some(Tsc {
            base: t0,
            ns_per_tick_q32: ns_per_tick_q32 as u64,
        }),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn calibrate() -> Calibration {
    Calibration {
        epoch: Instant::now(),
        tsc: None,
    }
}

impl Timestamp {
    /// The current time.
    #[inline]
    pub fn now() -> Timestamp {
        let cal = calibration();
        #[cfg(target_arch = "x86_64")]
        if let Some(tsc) = &cal.tsc {
            let ticks = read_tsc().wrapping_sub(tsc.base);
            return Timestamp(((ticks as u128 * tsc.ns_per_tick_q32 as u128) >> 32) as u64);
        }
        Timestamp(cal.epoch.elapsed().as_nanos() as u64)
    }

    /// Calibrates the clock now (it takes ~20 ms once), so that the first timed request
    /// does not pay for it.
    pub fn calibrate() {
        calibration();
    }

    /// The timestamp of `instant` (times before the clock's epoch are its epoch).
    pub fn from_instant(instant: Instant) -> Timestamp {
        let epoch = calibration().epoch;
        Timestamp(instant.saturating_duration_since(epoch).as_nanos() as u64)
    }

    /// Nanoseconds from `earlier` to `self`; 0 when `earlier` is later.
    #[inline]
    pub fn nanos_since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// Nanoseconds since the clock's epoch.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_follow_wall_time() {
        Timestamp::calibrate();
        let (i0, t0) = (Instant::now(), Timestamp::now());
        std::thread::sleep(Duration::from_millis(50));
        let (t1, i1) = (Timestamp::now(), Instant::now());
        let wall = (i1 - i0).as_nanos() as f64;
        let ours = t1.nanos_since(t0) as f64;
        assert!(
            ours > 0.0 && (ours / wall - 1.0).abs() < 0.05,
            "{ours} ns vs {wall} ns"
        );
        // An instant converts onto the same scale.
        let from = Timestamp::from_instant(i1);
        assert!(from.nanos_since(t1) < 5_000_000 && t1.nanos_since(from) < 5_000_000);
        assert_eq!(t0.nanos_since(t1), 0);
    }
}
