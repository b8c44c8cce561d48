//! Waits that let other threads of the process in. The runtime's state belongs to one thread
//! at a time, and a wait inside the engine keeps it. At MPI_THREAD_MULTIPLE the MPI library
//! runs its blocking collectives and its communicating constructors (split, create, windows,
//! files) with its own tables released (`ibdyn_owner::unborrowed`); there the waits of this
//! crate and of the collectives test their requests between turns of the process's wait
//! hook, which may hand the runtime to a thread waiting for it. So two threads may each wait
//! in such a call on their own communicator, in any order across processes, without a
//! deadlock.

use crate::error::Result;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The process's wait hook (`set_wait_hook`), as a function address; 0: none.
static HOOK: AtomicUsize = AtomicUsize::new(0);

/// Polls of a wait, spinning, before its turns may block.
const SPINS: u32 = 64;

/// Installs `hook`, which a wait outside the engine calls between two tests of its requests
/// (the collectives' waits, and the waits of this crate where turns are allowed):
/// `hook(false)` after a test that found nothing, `hook(true)` where the wait would block.
/// It may let other threads make their calls meanwhile, or move other work on; from
/// `hook(true)` it returns whether it waited itself (else the wait blocks in the engine).
pub fn set_wait_hook(hook: fn(bool) -> bool) {
    HOOK.store(hook as usize, Ordering::Release);
}

/// Whether this thread's waits take turns: a hook is installed and the caller's entry
/// borrows nothing of the state (`ibdyn_owner::turns_allowed`).
pub(crate) fn taken() -> bool {
    HOOK.load(Ordering::Relaxed) != 0 && ibdyn_owner::turns_allowed()
}

/// Calls the wait hook, if one is installed; what it returned (false without one). The hook
/// decides what it may do where it is called (`ibdyn_owner::turns_allowed`).
pub fn wait_hook(block: bool) -> bool {
    match HOOK.load(Ordering::Acquire) {
        0 => false,
        // SAFETY: only `set_wait_hook` stores, and only a `fn(bool) -> bool`'s address.
        f => unsafe { std::mem::transmute::<usize, fn(bool) -> bool>(f)(block) },
    }
}

/// Tests until `test` gives a value, taking turns between tests (for a wait where `taken`).
/// Where the hook does not wait itself, the engine's idle block does (bounded, and it
/// checks the liveness of the peers pending requests depend on).
pub(crate) fn wait_taking_turns<T>(mut test: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    let mut polls = 0u32;
    loop {
        if let Some(v) = test()? {
            return Ok(v);
        }
        polls = polls.saturating_add(1);
        if polls <= SPINS {
            wait_hook(false);
            std::hint::spin_loop();
        } else if !wait_hook(true) {
            crate::process::idle_for(std::time::Duration::from_micros(200));
        }
    }
}
