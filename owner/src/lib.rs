//! Which thread owns this process's runtime state.
//!
//! The runtime keeps process-wide state that is not thread-safe: the engine behind `Rc`,
//! the communicator and datatype tables of the MPI library, the process manager's idle
//! hook. One thread owns all of it at a time, and only that thread may touch it
//! (`ProcessLocal`). The thread that claims it keeps it (a single-threaded program, or
//! MPI_THREAD_FUNNELED: the thread that starts the runtime). At MPI_THREAD_SERIALIZED the MPI library gives that claim up and
//! every call takes ownership for its duration through `enter`, a lock re-entrant on its
//! holder's thread (a callback the library runs may call MPI again).
//!
//! Claims are explicit: the runtime's start (`claim`) and the MPI library's entry points.
//! A thread that touches state it does not own gets `Err(Foreign)` or a panic with
//! `Foreign::MESSAGE`, never a data race.

mod local;
mod lock;

pub use local::{Foreign, ProcessLocal};
pub use lock::{
    borrowed, claim, enter, enter_within, holds, others_waiting, pause, release_claim,
    thread_token, turns_allowed, unborrowed, waiters, Entry,
};
