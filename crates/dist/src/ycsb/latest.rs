//! YCSB's `AcknowledgedCounterGenerator` and `SkewedLatestGenerator`.

use super::*;

/// A counter that hands out consecutive values but only *reports* a value (via
/// [`AcknowledgedCounter::last_value`]) once it and every value before it have been
/// acknowledged (YCSB `AcknowledgedCounterGenerator`).
///
/// CoreWorkload uses it for transaction-phase inserts: readers never choose a key whose
/// insert has not completed. Shared by all workers; lock-free: acknowledgements set a
/// bit in a window of [`AcknowledgedCounter::WINDOW_SIZE`] bits, and whichever
/// acknowledger wins a try-lock (a flag, never waited on) slides the limit over the
/// contiguous acknowledged prefix. Unlike YCSB, an acknowledger that loses the try-lock
/// race re-checks after the winner releases, so the limit never lags behind a completed
/// prefix until the next acknowledgement.
#[derive(Debug)]
pub struct AcknowledgedCounter {
    pub(super) next: AtomicU64,
    /// Every value below this has been acknowledged (YCSB's `limit + 1`).
    pub(super) acked_below: AtomicU64,
    pub(super) sliding: AtomicBool,
    pub(super) window: Box<[AtomicU64]>,
}

impl AcknowledgedCounter {
    /// Bits in the window of pending acknowledgements (YCSB: 2²⁰).
    pub const WINDOW_SIZE: u64 = 1 << 20;
    const MASK: u64 = Self::WINDOW_SIZE - 1;

    /// A counter whose first value is `start`; values below `start` count as
    /// acknowledged.
    pub fn new(start: u64) -> AcknowledgedCounter {
        AcknowledgedCounter {
            next: AtomicU64::new(start),
            acked_below: AtomicU64::new(start),
            sliding: AtomicBool::new(false),
            window: (0..Self::WINDOW_SIZE / 64)
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// Hands out the next value.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Every value below the returned one has been acknowledged (or was below `start`).
    #[inline]
    pub fn acknowledged_below(&self) -> u64 {
        self.acked_below.load(Ordering::Acquire)
    }

    /// The highest value such that it and all below it are acknowledged (YCSB
    /// `lastValue()`); `None` if the counter started at 0 and 0 is not acknowledged yet.
    #[inline]
    pub fn last_value(&self) -> Option<u64> {
        self.acknowledged_below().checked_sub(1)
    }

    #[inline]
    pub(super) fn bit(&self, value: u64) -> (&AtomicU64, u64) {
        let slot = value & Self::MASK;
        (&self.window[(slot >> 6) as usize], 1u64 << (slot & 63))
    }

    /// Marks `value` (returned by [`AcknowledgedCounter::next`]) as done.
    ///
    /// The caller guarantees each value is acknowledged once.
    ///
    /// # Panics
    ///
    /// When more than [`AcknowledgedCounter::WINDOW_SIZE`] values are outstanding (YCSB
    /// throws "Too many unacknowledged insertion keys").
    #[inline]
    pub fn acknowledge(&self, value: u64) {
        let (word, mask) = self.bit(value);
        let previous = word.fetch_or(mask, Ordering::AcqRel);
        assert!(
            previous & mask == 0,
            "too many unacknowledged insertion keys: more than {} outstanding",
            Self::WINDOW_SIZE
        );
        loop {
            if self
                .sliding
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                // The slider will see our bit, or re-check after releasing.
                return;
            }
            let mut limit = self.acked_below.load(Ordering::Relaxed);
            let stop = limit + Self::WINDOW_SIZE;
            while limit < stop {
                let (word, mask) = self.bit(limit);
                if word.load(Ordering::Acquire) & mask == 0 {
                    break;
                }
                word.fetch_and(!mask, Ordering::AcqRel);
                limit += 1;
            }
            self.acked_below.store(limit, Ordering::Release);
            self.sliding.store(false, Ordering::Release);
            let (word, mask) = self.bit(limit);
            if word.load(Ordering::Acquire) & mask == 0 {
                return;
            }
        }
    }
}

/// Recent items favoured: `last − zipf(last)`, where `last` is the basis counter's
/// highest acknowledged value (YCSB `SkewedLatestGenerator`).
///
/// Never returns a value above the basis's [`AcknowledgedCounter::last_value`] at the
/// time of the call. Inherited from YCSB: the Zipfian draws from `0..last`, so the
/// smallest value (key 0 when the counter starts at `recordcount`) is never chosen.
/// The inner Zipfian's ζ grows incrementally with `last`, per clone (one per worker).
#[derive(Clone, Debug)]
pub struct SkewedLatest {
    pub(super) basis: Arc<AcknowledgedCounter>,
    pub(super) zipfian: Zipfian,
}

impl SkewedLatest {
    /// A generator over `basis` with Zipfian constant `theta`. The caller guarantees
    /// `basis` started at 1 or more (CoreWorkload starts it at `recordcount`).
    pub fn new(basis: Arc<AcknowledgedCounter>, theta: f64) -> SkewedLatest {
        let items = basis.acknowledged_below().saturating_sub(1);
        let zipfian = Zipfian::with_zetan(0, items, theta, zeta(items, theta));
        SkewedLatest { basis, zipfian }
    }

    /// The basis counter.
    pub fn basis(&self) -> &Arc<AcknowledgedCounter> {
        &self.basis
    }

    /// The next value.
    #[inline]
    pub fn next<R: RngCore>(&mut self, rng: &mut R) -> u64 {
        let max = self.basis.acknowledged_below().saturating_sub(1);
        max - self.zipfian.next_for_count(rng, max).min(max)
    }
}
