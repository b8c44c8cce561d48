//! The non-blocking collectives this process has in flight, for MPI's progress rule: a
//! blocking call moves them on while it waits, since its peers may be waiting in them for
//! this process. Kept as the request-table slots where collectives were started and checked
//! lazily (one that completed or was freed drops out at the next look), so that a blocking
//! call of a program that started none pays one load.

use crate::request::ReqEntry;
use crate::table::Table;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many slots are noted, process-wide (the state is the process's).
static NOTED: AtomicUsize = AtomicUsize::new(0);

/// Whether a non-blocking collective may be in flight (false: certainly none).
pub fn maybe() -> bool {
    NOTED.load(Ordering::Relaxed) != 0
}

/// Slots of the request table that held a collective when it started.
#[derive(Default)]
pub struct InFlight(Vec<usize>);

impl InFlight {
    /// Slot `i` now holds a collective in flight.
    pub fn note(&mut self, i: usize) {
        self.0.push(i);
        NOTED.store(self.0.len(), Ordering::Relaxed);
    }

    /// Whether a collective other than the one in slot `except` is in flight; forgets the
    /// slots that no longer hold one.
    pub fn any_other(&mut self, reqs: &Table<ReqEntry>, except: Option<usize>) -> bool {
        if self.0.is_empty() {
            return false;
        }
        self.0
            .retain(|&j| reqs.get(j).is_some_and(ReqEntry::is_coll));
        self.0.sort_unstable();
        self.0.dedup();
        NOTED.store(self.0.len(), Ordering::Relaxed);
        self.0.iter().any(|&j| Some(j) != except)
    }

    /// One step of every collective in flight but the one in slot `except`. A failure stays
    /// with its collective, whose completion reports it.
    pub fn poll(&self, reqs: &mut Table<ReqEntry>, except: Option<usize>) {
        for &j in &self.0 {
            if Some(j) == except {
                continue;
            }
            if let Some(e) = reqs.get_mut(j).filter(|e| e.is_coll()) {
                let _ = e.poll();
            }
        }
    }
}

thread_local! {
    /// This thread is stepping the collectives in flight (`step_from_a_wait`).
    static STEPPING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// From the wait of a blocking call (the runtime's wait hook): one step of every collective
/// in flight where the state is free to take (inside a call that borrows it, nothing), and
/// whether any may be in flight.
pub fn step_from_a_wait() -> bool {
    if !maybe() {
        return false;
    }
    if !STEPPING.with(|s| s.replace(true)) {
        // Refused where the state is borrowed (a wait inside a call that keeps it).
        let _ = progress();
        STEPPING.with(|s| s.set(false));
    }
    maybe()
}

/// One step of every collective in flight, from a blocking call's wait outside the state.
pub fn progress() -> crate::error::MpiResult<()> {
    if !maybe() {
        return Ok(());
    }
    crate::state::with_state(|s| {
        if s.colls.any_other(&s.reqs, None) {
            s.colls.poll(&mut s.reqs, None);
        }
        Ok(())
    })
}
