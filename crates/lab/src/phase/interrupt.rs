//! Ctrl-C during a phase, and the seed of a run that names none.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

/// Handles Ctrl-C: the first stops the run (the results so far are written; replies a
/// stalled server owes are given up after a quarter second), the second says so again
/// (a press in the middle of writing them must not lose them), the third stops any
/// server kvlab started and leaves at once, without results.
pub fn install_stop_handler() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let presses = std::sync::atomic::AtomicU32::new(0);
    {
        let stop = Arc::clone(&stop);
        let _ = ctrlc::set_handler(move || {
            stop.store(true, Ordering::SeqCst);
            match presses.fetch_add(1, Ordering::SeqCst) {
                0 => eprintln!("\nkvlab: stopping: writing the results so far"),
                1 => eprintln!(
                    "\nkvlab: still writing the results so far; Ctrl-C once more to quit at \
                     once, without them"
                ),
                _ => {
                    kvlab_spawn::stop_all_spawned();
                    std::process::exit(130);
                }
            }
        });
    }
    stop
}

/// A seed for a run that names none: the time and the process id, hashed.
pub fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    h.finish()
}
