//! The thread levels this library provides. The runtime's state belongs to one thread at a
//! time (`ibdyn_owner`). Up to MPI_THREAD_FUNNELED the thread that initialised MPI keeps it
//! and calls take no lock. From MPI_THREAD_SERIALIZED on, every MPI call, from any thread,
//! owns the state for its duration (`enter`). At MPI_THREAD_MULTIPLE the blocking
//! point-to-point calls, probes and waits run as their non-blocking form and a wait
//! (`Turns`) that lets other threads' calls in between its tests. Blocking collectives run
//! their own algorithms (every process of a communicator must run the same, whatever its
//! thread level) once the state's tables are released, and so do the exchanges of the calls
//! that make communicators, windows and files (`state::staged`), spawn, accept, connect and
//! join, fences and file I/O; their waits let other threads in too (`yielding`, the runtime's
//! wait hook, `ibdyn_intercomm::turns`), and so do the waits of passive-target locks
//! (`Exposed::lock` with turns). `MPI_Buffer_detach` keeps the state while it waits.

use crate::consts::*;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Calls own the state through entries (MPI_THREAD_SERIALIZED was asked for).
static SERIALIZED: AtomicBool = AtomicBool::new(false);
/// Blocking calls let other threads in while they wait (MPI_THREAD_MULTIPLE).
static MULTIPLE: AtomicBool = AtomicBool::new(false);
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
    ibdyn_intercomm::turns::set_wait_hook(waiting);
    if required >= MPI_THREAD_SERIALIZED {
        if required >= MPI_THREAD_MULTIPLE {
            MULTIPLE.store(true, Ordering::Release);
        }
        SERIALIZED.store(true, Ordering::Release);
        ibdyn_owner::release_claim();
    }
}

/// Whether calls take the state through entries (MPI_THREAD_SERIALIZED and above), so that
/// other threads may call MPI.
#[inline]
pub fn entries() -> bool {
    SERIALIZED.load(Ordering::Relaxed)
}

/// Whether blocking calls must let other threads in while they wait.
pub fn multiple() -> bool {
    MULTIPLE.load(Ordering::Relaxed)
}

/// The turns of a blocking call's wait at MPI_THREAD_MULTIPLE, between two tests of its
/// requests: a thread waiting for the state gets it (`ibdyn_owner::pause`); with nobody
/// waiting, a few spins, then a short block in the engine, which a packet ends (so a
/// single-threaded program keeps its latency). Threads that all only wait back off as one
/// would (`pause_in_loop`).
#[derive(Default)]
pub struct Turns(u32);

impl Turns {
    pub fn next(&mut self) {
        match pause_in_loop() {
            None | Some(Contenders::OnlyWaits) => self.idle(),
            Some(Contenders::Calls) => self.0 = 0,
        }
    }

    /// A turn that keeps the state: spins, then yields, then short blocks in the engine.
    pub fn idle(&mut self) {
        self.0 = self.0.saturating_add(1);
        match self.0 {
            0..=63 => std::hint::spin_loop(),
            64..=127 => std::thread::yield_now(),
            _ => ibdyn_intercomm::process::idle_for(std::time::Duration::from_micros(200)),
        }
    }
}

/// Who else wanted the state when a wait loop's handover gave it back.
enum Contenders {
    /// Threads with calls to make: the loop hands the state over again at once.
    Calls,
    /// Only other wait loops: handing the state back and forth would keep every core busy
    /// for as long as they wait, and none would block in the engine (nor look whether its
    /// peers live), so the loop backs off as a lone waiter does.
    OnlyWaits,
}

/// Threads inside `ibdyn_owner::pause` from a wait loop (`Turns`, `waiting`): handing the
/// state over, or waiting to take it back.
static LOOPS_PAUSED: AtomicUsize = AtomicUsize::new(0);

/// `ibdyn_owner::pause` from a wait loop; None when nobody took the state.
fn pause_in_loop() -> Option<Contenders> {
    LOOPS_PAUSED.fetch_add(1, Ordering::SeqCst);
    let paused = ibdyn_owner::pause();
    LOOPS_PAUSED.fetch_sub(1, Ordering::SeqCst);
    paused.then(|| {
        if ibdyn_owner::waiters() <= LOOPS_PAUSED.load(Ordering::SeqCst) {
            Contenders::OnlyWaits
        } else {
            Contenders::Calls
        }
    })
}

/// Runs `job` with the state released: a blocking collective at MPI_THREAD_MULTIPLE
/// (`state::after_state`), or the exchange of a call that makes an object (`state::staged`).
/// At MPI_THREAD_MULTIPLE its waits let a thread that waits for the state make its calls
/// (`turns`), so threads may run such calls on different communicators at once, in any order.
pub fn yielding<R>(job: impl FnOnce() -> R) -> R {
    ibdyn_owner::unborrowed(job)
}

/// The runtime's wait hook (`ibdyn_intercomm::turns`), called between two polls of a wait
/// outside the engine: it moves the non-blocking collectives in flight on (MPI's progress
/// rule: a blocking collective must not stall them, since peers may wait in them first), and
/// inside `yielding` hands the state to a waiting thread. Where the wait would block in the
/// engine, it blocks in 200 us slices instead while either applies, between which both get
/// their turn; otherwise it leaves the block to the engine.
fn waiting(block: bool) -> bool {
    let collectives = crate::in_flight::step_from_a_wait();
    // Below MPI_THREAD_SERIALIZED no other thread calls MPI (and no entry is held).
    if entries() && ibdyn_owner::turns_allowed() {
        match pause_in_loop() {
            Some(Contenders::Calls) => return true,
            // The other threads only wait too: one of them blocks in the engine at a time
            // (a packet for any of them ends it), also between the polls of a spin.
            Some(Contenders::OnlyWaits) => {
                ibdyn_intercomm::process::idle_for(std::time::Duration::from_micros(200));
                return true;
            }
            None => {}
        }
    } else if !collectives {
        return false;
    }
    if block {
        ibdyn_intercomm::process::idle_for(std::time::Duration::from_micros(200));
    }
    block
}

/// The level this library provides when a program asks for `required`.
pub fn provided_for(required: c_int) -> c_int {
    if required >= MPI_THREAD_MULTIPLE {
        MPI_THREAD_MULTIPLE
    } else if required >= MPI_THREAD_SERIALIZED {
        MPI_THREAD_SERIALIZED
    } else if required >= MPI_THREAD_FUNNELED {
        MPI_THREAD_FUNNELED
    } else {
        MPI_THREAD_SINGLE
    }
}

/// The level in force for the process: what a session or MPI_INFO_ENV reports.
pub fn level() -> c_int {
    if multiple() {
        MPI_THREAD_MULTIPLE
    } else if SERIALIZED.load(Ordering::Relaxed) {
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
