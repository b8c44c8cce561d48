//! Blocking point-to-point calls at MPI_THREAD_MULTIPLE, or while non-blocking collectives
//! are in flight (which their waits move on: `in_flight`). They run as their non-blocking
//! operations, which the call tests itself, outside the request table, for as long as no
//! other thread waits for the state: a program that makes its calls from one thread at a
//! time pays for no handle and no table. Once another thread waits, what is still in flight
//! moves to the table and `wait_for` lets other threads' calls in between its tests.

use super::request::wait_for;
use crate::call;
use crate::consts::*;
use crate::error::MpiResult;
use crate::request::{Active, ReqEntry};
use crate::status::{self, MpiStatus};
use std::os::raw::c_int;

/// Runs blocking call `name` on `comm`: `start` begins its operations (a receive first, if
/// there is one) and names the table index of the communicator whose error handler their
/// errors go to; `st` gets the first operation's status.
///
/// # Safety
/// `st` is null or the caller's status; the operations' buffers stay valid until the call
/// returns (the blocking call's arguments).
pub(super) unsafe fn blocking<const N: usize>(
    name: &'static str,
    comm: Handle,
    st: *mut MpiStatus,
    start: impl FnOnce() -> MpiResult<(usize, [Active; N])>,
) -> c_int {
    let mut left = [MPI_REQUEST_NULL; N];
    let mut first = None;
    let code = call(name, comm, || {
        let (ci, active) = start()?;
        let mut entries = active.map(|a| Some(ReqEntry::new(a, ci)));
        let mut turns = crate::threads::Turns::default();
        loop {
            for (i, slot) in entries.iter_mut().enumerate() {
                let Some(e) = slot else { continue };
                if let Some(got) = e.step(false)? {
                    if i == 0 {
                        first = Some(got);
                    }
                    *slot = None;
                }
            }
            if entries.iter().all(Option::is_none) {
                return Ok(());
            }
            if ibdyn_owner::others_waiting() {
                break;
            }
            crate::in_flight::progress()?;
            turns.idle();
        }
        crate::state::with_state(|s| {
            for (h, e) in left.iter_mut().zip(entries) {
                if let Some(e) = e {
                    *h = s.add_req(e);
                }
            }
            Ok(())
        })
    });
    if code != MPI_SUCCESS {
        return code;
    }
    let waited = left[0] != MPI_REQUEST_NULL;
    let mut code = MPI_SUCCESS;
    if left.iter().any(|&h| h != MPI_REQUEST_NULL) {
        // SAFETY: a status is plain integers; all zeros is a valid one.
        let mut sts: [MpiStatus; N] = unsafe { std::mem::zeroed() };
        // SAFETY: this frame's requests and statuses.
        code = unsafe { wait_for(name, N as c_int, left.as_mut_ptr(), sts.as_mut_ptr()) };
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
        if let (true, Some(st)) = (waited, unsafe { st.as_mut() }) {
            *st = sts[0];
        }
    }
    if let Some(got) = first {
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
        unsafe { status::store(st, &got) };
    }
    code
}
