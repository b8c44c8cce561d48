//! The thread levels this library provides. The runtime's state belongs to one thread at a
//! time (`ibdyn_owner`). Up to MPI_THREAD_FUNNELED the thread that initialised MPI keeps it
//! and calls take no lock. A program that asks for MPI_THREAD_SERIALIZED or MULTIPLE gets
//! MPI_THREAD_SERIALIZED: from then on every MPI call, from any thread, owns the state for its
//! duration (`enter`), so calls the program makes one at a time may come from any thread.
//! MULTIPLE is not provided: a blocking call keeps the state for as long as it waits, so a
//! second thread's call waits for it rather than running beside it.

use crate::consts::*;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Calls own the state through entries (MPI_THREAD_SERIALIZED was asked for).
static SERIALIZED: AtomicBool = AtomicBool::new(false);
/// The thread that called MPI_Init or MPI_Init_thread (its `ibdyn_owner` token).
static MAIN: AtomicU64 = AtomicU64::new(0);

/// Ownership of the state for one MPI call: an entry when calls take it, else the claim of
/// the calling thread if nobody holds the state yet (the thread that starts MPI keeps it).
pub fn enter() -> Option<ibdyn_owner::Entry> {
    if SERIALIZED.load(Ordering::Relaxed) {
        return Some(ibdyn_owner::enter());
    }
    ibdyn_owner::claim();
    None
}

/// Provides `required` (as `provided_for` says): for MPI_THREAD_SERIALIZED and above, calls
/// take the state through entries from now on. Call once the runtime is up, from the call
/// that asked.
pub fn provide(required: c_int) {
    if required >= MPI_THREAD_SERIALIZED {
        SERIALIZED.store(true, Ordering::Release);
        ibdyn_owner::release_claim();
    }
}

/// The level this library provides when a program asks for `required`.
pub fn provided_for(required: c_int) -> c_int {
    if required >= MPI_THREAD_SERIALIZED {
        MPI_THREAD_SERIALIZED
    } else if required >= MPI_THREAD_FUNNELED {
        MPI_THREAD_FUNNELED
    } else {
        MPI_THREAD_SINGLE
    }
}

/// The level in force for the process: what a session or MPI_INFO_ENV reports.
pub fn level() -> c_int {
    if SERIALIZED.load(Ordering::Relaxed) {
        MPI_THREAD_SERIALIZED
    } else {
        MPI_THREAD_FUNNELED
    }
}

/// The name of a level, as info values spell it.
pub fn name(level: c_int) -> &'static str {
    match level {
        MPI_THREAD_SINGLE => "MPI_THREAD_SINGLE",
        MPI_THREAD_FUNNELED => "MPI_THREAD_FUNNELED",
        MPI_THREAD_SERIALIZED => "MPI_THREAD_SERIALIZED",
        _ => "MPI_THREAD_MULTIPLE",
    }
}

/// The level an info value names (`thread_level`), if it names one.
pub fn parse(value: &str) -> Option<c_int> {
    match value.trim() {
        "MPI_THREAD_SINGLE" => Some(MPI_THREAD_SINGLE),
        "MPI_THREAD_FUNNELED" => Some(MPI_THREAD_FUNNELED),
        "MPI_THREAD_SERIALIZED" => Some(MPI_THREAD_SERIALIZED),
        "MPI_THREAD_MULTIPLE" => Some(MPI_THREAD_MULTIPLE),
        _ => None,
    }
}

/// Records the calling thread as the one that initialised MPI.
pub fn set_main() {
    MAIN.store(ibdyn_owner::thread_token(), Ordering::Relaxed);
}

/// Whether the calling thread initialised MPI (MPI_Is_thread_main).
pub fn is_main() -> bool {
    MAIN.load(Ordering::Relaxed) == ibdyn_owner::thread_token()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_names_parse_back() {
        for l in [
            MPI_THREAD_SINGLE,
            MPI_THREAD_FUNNELED,
            MPI_THREAD_SERIALIZED,
            MPI_THREAD_MULTIPLE,
        ] {
            assert_eq!(parse(name(l)), Some(l));
        }
        assert_eq!(parse("MPI_THREAD_ANY"), None);
    }
}
