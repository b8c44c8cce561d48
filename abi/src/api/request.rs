//! Completion: MPI_Wait, MPI_Waitall, MPI_Test.

use super::{out, read};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::state::{self, with_state};
use crate::status::{self, MpiStatus};
use crate::{call_with, export};
use std::cell::Cell;
use std::os::raw::c_int;

/// Waits for request `h` and removes it; returns its status, or its error and the index of
/// its communicator.
fn wait_one(h: Handle) -> Result<ibdyn::Status, (MpiError, usize)> {
    let entry = with_state(|s| {
        let i = s.req_index(h)?;
        Ok(s.reqs.remove(i).expect("req_index checked the slot"))
    })
    .map_err(|e| (e, 1))?;
    let comm = entry.comm;
    // Waiting needs no table: the request holds the engine.
    entry.req.wait().map_err(|e| (MpiError::from(e), comm))
}

unsafe fn wait(request: *mut Handle, st: *mut MpiStatus) -> c_int {
    let comm = Cell::new(1);
    call_with(
        "MPI_Wait",
        || state::errhandler_of_index(comm.get()),
        || {
            // SAFETY: the caller's in/out argument.
            let h = unsafe { read(request, "request") }?;
            if h == MPI_REQUEST_NULL {
                // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
                unsafe { status::store_empty(st) };
                return Ok(());
            }
            let result = wait_one(h);
            // SAFETY: checked above: the request is complete, whatever the outcome.
            unsafe { out(request, MPI_REQUEST_NULL, "request") }?;
            match result {
                Ok(got) => {
                    // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
                    unsafe { status::store(st, &got) };
                    Ok(())
                }
                Err((e, c)) => {
                    comm.set(c);
                    Err(e)
                }
            }
        },
    )
}

unsafe fn waitall(count: c_int, requests: *mut Handle, statuses: *mut MpiStatus) -> c_int {
    let comm = Cell::new(1);
    call_with(
        "MPI_Waitall",
        || state::errhandler_of_index(comm.get()),
        || {
            let Ok(n) = usize::try_from(count) else {
                return err(MPI_ERR_COUNT, format!("count {count} is negative"));
            };
            if n > 0 && requests.is_null() {
                return err(MPI_ERR_ARG, "array_of_requests is NULL");
            }
            let mut failed: Option<MpiError> = None;
            for i in 0..n {
                // SAFETY: the caller's array has `count` requests (and statuses, unless
                // MPI_STATUSES_IGNORE).
                let (slot, st) = unsafe {
                    (
                        requests.add(i),
                        if statuses.is_null() {
                            std::ptr::null_mut()
                        } else {
                            statuses.add(i)
                        },
                    )
                };
                // SAFETY: as above.
                let h = unsafe { slot.read() };
                let code = if h == MPI_REQUEST_NULL {
                    // SAFETY: as above.
                    unsafe { status::store_empty(st) };
                    MPI_SUCCESS
                } else {
                    let result = wait_one(h);
                    // SAFETY: as above.
                    unsafe { slot.write(MPI_REQUEST_NULL) };
                    match result {
                        Ok(got) => {
                            // SAFETY: as above.
                            unsafe { status::store(st, &got) };
                            MPI_SUCCESS
                        }
                        Err((e, c)) => {
                            comm.set(c);
                            let class = e.class;
                            failed.get_or_insert(e);
                            class
                        }
                    }
                };
                // SAFETY: as above.
                if let Some(st) = unsafe { st.as_mut() } {
                    st.error = code;
                }
            }
            match failed {
                None => Ok(()),
                Some(e) if statuses.is_null() => Err(e),
                Some(e) => Err(MpiError::new(
                    MPI_ERR_IN_STATUS,
                    format!("a request failed (see the statuses): {}", e.message),
                )),
            }
        },
    )
}

unsafe fn test(request: *mut Handle, flag: *mut c_int, st: *mut MpiStatus) -> c_int {
    let comm = Cell::new(1);
    call_with(
        "MPI_Test",
        || state::errhandler_of_index(comm.get()),
        || {
            // SAFETY: the caller's in/out argument.
            let h = unsafe { read(request, "request") }?;
            if h == MPI_REQUEST_NULL {
                // SAFETY: the caller's status and flag.
                unsafe { status::store_empty(st) };
                return unsafe { out(flag, 1, "flag") };
            }
            let done: MpiResult<Option<ibdyn::Status>> = with_state(|s| {
                let i = s.req_index(h)?;
                let e = s.reqs.get_mut(i).expect("req_index checked the slot");
                comm.set(e.comm);
                match e.req.test() {
                    Ok(None) => Ok(None),
                    Ok(Some(got)) => {
                        s.reqs.remove(i);
                        Ok(Some(got))
                    }
                    Err(err) => {
                        s.reqs.remove(i);
                        Err(err.into())
                    }
                }
            });
            let done = match done {
                Ok(d) => d,
                Err(e) => {
                    if e.class != MPI_ERR_REQUEST {
                        // SAFETY: the caller's in/out argument: the request has ended.
                        unsafe { out(request, MPI_REQUEST_NULL, "request") }?;
                    }
                    return Err(e);
                }
            };
            // SAFETY: the caller's output arguments.
            unsafe {
                if let Some(got) = &done {
                    status::store(st, got);
                    out(request, MPI_REQUEST_NULL, "request")?;
                }
                out(flag, c_int::from(done.is_some()), "flag")
            }
        },
    )
}

export!(MPI_Wait, PMPI_Wait, wait, (request: *mut Handle, status: *mut MpiStatus) -> c_int);
export!(MPI_Waitall, PMPI_Waitall, waitall,
    (count: c_int, array_of_requests: *mut Handle, array_of_statuses: *mut MpiStatus) -> c_int);
export!(MPI_Test, PMPI_Test, test,
    (request: *mut Handle, flag: *mut c_int, status: *mut MpiStatus) -> c_int);
