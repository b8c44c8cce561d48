//! MPI_Request_get_status_all, _any and _some (MPI 4.1): MPI_Testall/any/some that neither
//! free nor deactivate a request; a completed request gives its operation's status.

use super::out;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::state::{self, with_state};
use crate::status::{self, MpiStatus};
use crate::{call_with, export};
use ibdyn::Status;
use std::os::raw::c_int;

/// A completed request's status and whether its operation was cancelled.
type Outcome = (Status, bool);

/// The requests' states: None for MPI_REQUEST_NULL, else the outcome once complete.
///
/// # Safety
/// `requests` holds `count` handles.
unsafe fn done_flags(
    count: c_int,
    requests: *const Handle,
) -> MpiResult<Vec<Option<Option<Outcome>>>> {
    let Ok(n) = usize::try_from(count) else {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    };
    if n > 0 && requests.is_null() {
        return err(MPI_ERR_ARG, "array_of_requests is NULL");
    }
    let hs: &[Handle] = if n == 0 {
        &[]
    } else {
        // SAFETY: the caller's array of `count` handles (checked non-null).
        unsafe { std::slice::from_raw_parts(requests, n) }
    };
    with_state(|s| {
        hs.iter()
            .map(|&h| {
                if h == MPI_REQUEST_NULL {
                    Ok(None)
                } else {
                    s.req_status(h).map(Some)
                }
            })
            .collect()
    })
}

/// The i-th status of an array, or null for MPI_STATUSES_IGNORE.
fn nth(statuses: *mut MpiStatus, i: usize) -> *mut MpiStatus {
    if statuses.is_null() {
        statuses
    } else {
        statuses.wrapping_add(i)
    }
}

/// Stores a request's status, or the empty one (MPI_ERROR cleared) for MPI_REQUEST_NULL.
///
/// # Safety
/// `out` is null or a writable MPI_Status.
unsafe fn put(out: *mut MpiStatus, st: Option<Outcome>) {
    // SAFETY: the caller's contract.
    unsafe {
        match st {
            Some((st, cancelled)) => {
                status::store(out, &st);
                status::set_cancelled(out, cancelled);
            }
            None => status::store_empty(out),
        }
    }
}

fn on_self(name: &str, f: impl FnOnce() -> MpiResult<()>) -> c_int {
    call_with(name, || state::errhandler_for(MPI_COMM_SELF), f)
}

unsafe fn get_status_all(
    count: c_int,
    requests: *const Handle,
    flag: *mut c_int,
    statuses: *mut MpiStatus,
) -> c_int {
    on_self("MPI_Request_get_status_all", || {
        // SAFETY: the caller's array.
        let d = unsafe { done_flags(count, requests) }?;
        let all = d.iter().all(|x| x.as_ref().is_none_or(Option::is_some));
        if all {
            for (i, x) in d.iter().enumerate() {
                // SAFETY: the caller's array of `count` statuses (or MPI_STATUSES_IGNORE).
                unsafe { put(nth(statuses, i), x.flatten()) };
            }
        }
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(all), "flag") }
    })
}

unsafe fn get_status_any(
    count: c_int,
    requests: *const Handle,
    index: *mut c_int,
    flag: *mut c_int,
    st: *mut MpiStatus,
) -> c_int {
    on_self("MPI_Request_get_status_any", || {
        // SAFETY: the caller's array.
        let d = unsafe { done_flags(count, requests) }?;
        let first = d.iter().position(|x| matches!(x, Some(Some(_))));
        let none_active = d.iter().all(Option::is_none);
        if first.is_some() || none_active {
            // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
            unsafe { put(st, first.and_then(|i| d[i].flatten())) };
        }
        let i = first.map_or(MPI_UNDEFINED, |i| i as c_int);
        // SAFETY: the caller's output arguments.
        unsafe {
            out(index, i, "index")?;
            out(flag, c_int::from(first.is_some() || none_active), "flag")
        }
    })
}

unsafe fn get_status_some(
    incount: c_int,
    requests: *const Handle,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MpiStatus,
) -> c_int {
    on_self("MPI_Request_get_status_some", || {
        // SAFETY: the caller's array.
        let d = unsafe { done_flags(incount, requests) }?;
        if d.iter().all(Option::is_none) {
            // SAFETY: the caller's output argument.
            return unsafe { out(outcount, MPI_UNDEFINED, "outcount") };
        }
        let done: Vec<(usize, Outcome)> = (0..d.len())
            .filter_map(|i| d[i].flatten().map(|st| (i, st)))
            .collect();
        if !done.is_empty() && indices.is_null() {
            return err(MPI_ERR_ARG, "array_of_indices is NULL");
        }
        for (k, (i, st)) in done.iter().enumerate() {
            // SAFETY: the caller's arrays of `incount` entries (checked non-null above).
            unsafe {
                indices.add(k).write(*i as c_int);
                put(nth(statuses, k), Some(*st));
            }
        }
        // SAFETY: the caller's output argument.
        unsafe { out(outcount, done.len() as c_int, "outcount") }
    })
}

export!(MPI_Request_get_status_all, PMPI_Request_get_status_all, get_status_all,
    (count: c_int, array_of_requests: *const Handle, flag: *mut c_int,
     array_of_statuses: *mut MpiStatus) -> c_int);
export!(MPI_Request_get_status_any, PMPI_Request_get_status_any, get_status_any,
    (count: c_int, array_of_requests: *const Handle, index: *mut c_int, flag: *mut c_int,
     status: *mut MpiStatus) -> c_int);
export!(MPI_Request_get_status_some, PMPI_Request_get_status_some, get_status_some,
    (incount: c_int, array_of_requests: *const Handle, outcount: *mut c_int,
     array_of_indices: *mut c_int, array_of_statuses: *mut MpiStatus) -> c_int);
