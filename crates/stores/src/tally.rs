//! Per-session counters of an in-process store, summed when the store reports.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Every session's counters `T` (a struct of `AtomicU64`s): each session writes only its
/// own, so counting costs no shared cache line; [`Tallies::sum`] adds them up.
#[derive(Debug, Default)]
pub(crate) struct Tallies<T> {
    list: Mutex<Vec<Arc<T>>>,
}

impl<T: Default> Tallies<T> {
    /// Counters for a new session.
    pub(crate) fn register(&self) -> Arc<T> {
        let tally = Arc::new(T::default());
        self.list
            .lock()
            .expect("no session panics holding the tally list")
            .push(Arc::clone(&tally));
        tally
    }

    /// One counter summed over every session.
    pub(crate) fn sum(&self, field: impl Fn(&T) -> &AtomicU64) -> u64 {
        self.list
            .lock()
            .expect("no session panics holding the tally list")
            .iter()
            .map(|t| field(t).load(Ordering::Relaxed))
            .sum()
    }
}
