//! YCSB's `SequentialGenerator` and `CounterGenerator`.

use super::*;

/// `start, start+1, …, end, start, …` from one counter shared by every user (YCSB
/// `SequentialGenerator`, whose counter is shared by all client threads).
#[derive(Debug)]
pub struct Sequential {
    pub(super) counter: AtomicU64,
    pub(super) start: u64,
    pub(super) interval: u64,
}

impl Sequential {
    /// A sequence over `[start, end]`. The caller guarantees `start <= end`.
    pub fn new(start: u64, end: u64) -> Sequential {
        Sequential {
            counter: AtomicU64::new(0),
            start,
            interval: end - start + 1,
        }
    }

    /// The next value in the shared sequence.
    #[inline]
    pub fn next(&self) -> u64 {
        self.start + self.counter.fetch_add(1, Ordering::Relaxed) % self.interval
    }
}

/// A plain shared counter from `start` (YCSB `CounterGenerator`).
#[derive(Debug)]
pub struct Counter {
    pub(super) next: AtomicU64,
}

impl Counter {
    /// A counter whose first value is `start`.
    pub fn new(start: u64) -> Counter {
        Counter {
            next: AtomicU64::new(start),
        }
    }

    /// Hands out the next value.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }
}
