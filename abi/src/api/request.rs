//! Completion: Wait, Test and their any/all/some forms, Start(all), Request_free, Cancel,
//! Test_cancelled, Request_get_status.

use super::{out, read};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::state::{self, with_state, State};
use crate::status::{self, MpiStatus};
use crate::{call_with, export};
use std::cell::Cell;
use std::os::raw::c_int;
use std::ptr::null_mut;

/// The outcome of advancing one request.
enum Step {
    /// MPI_REQUEST_NULL or an inactive persistent request: nothing to complete.
    Null,
    Pending,
    Done(ibdyn::Status, bool),
}

/// Advances request `h` (blocking if `block`); a completed non-persistent request is removed.
/// Errors carry the index of the request's communicator.
fn step(s: &mut State, h: Handle, block: bool) -> Result<Step, (MpiError, usize)> {
    if h == MPI_REQUEST_NULL {
        return Ok(Step::Null);
    }
    let i = s.req_index(h).map_err(|e| (e, 1))?;
    if block && s.colls.any_other(&s.reqs, Some(i)) {
        return wait_moving_the_others(s, h, i);
    }
    let e = s.reqs.get_mut(i).expect("req_index checked the slot");
    let comm = e.comm;
    if e.active.is_none() {
        return Ok(Step::Null);
    }
    let r = e.step(block);
    let cancelled = e.cancelled;
    let persistent = e.is_persistent();
    match r {
        Ok(None) => Ok(Step::Pending),
        Ok(Some(st)) => {
            if !persistent {
                s.reqs.remove(i);
            }
            Ok(Step::Done(st, cancelled))
        }
        Err(err) => {
            if !persistent {
                s.reqs.remove(i);
            }
            Err((err, comm))
        }
    }
}

/// A blocking wait for request `h` (at index `i`) while non-blocking collectives are in
/// flight: MPI's progress rule wants them moved on too. A process may complete them in
/// another order than its peers, or wait for a message that a peer sends only once a
/// collective is done: blocking in `h` alone left both sides waiting for ever.
fn wait_moving_the_others(s: &mut State, h: Handle, i: usize) -> Result<Step, (MpiError, usize)> {
    let mut turns = crate::threads::Turns::default();
    loop {
        match step(s, h, false)? {
            Step::Pending => {}
            done => return Ok(done),
        }
        s.colls.poll(&mut s.reqs, Some(i));
        turns.idle();
    }
}

/// Whether request `h` is freed by completion (not persistent).
fn is_persistent(s: &State, h: Handle) -> bool {
    s.req_index(h)
        .ok()
        .and_then(|i| s.reqs.get(i))
        .is_some_and(|e| e.is_persistent())
}

/// Writes one completion into the caller's slots: the status, and MPI_REQUEST_NULL for a
/// request that is gone.
///
/// # Safety
/// `slot` is valid; `st` is null or valid.
unsafe fn deliver(s: &State, slot: *mut Handle, st: *mut MpiStatus, got: &Step) {
    // SAFETY: the caller's contract.
    unsafe {
        match got {
            Step::Null => status::store_empty(st),
            Step::Pending => {}
            Step::Done(g, cancelled) => {
                status::store(st, g);
                status::set_cancelled(st, *cancelled);
                if !is_persistent(s, slot.read()) {
                    slot.write(MPI_REQUEST_NULL);
                }
            }
        }
    }
}

/// Runs `f` over the request array of a multiple-completion call, with the error handler of
/// the communicator whose request failed.
fn with_requests(
    name: &'static str,
    count: c_int,
    requests: *mut Handle,
    f: impl FnOnce(usize, &Cell<usize>) -> MpiResult<()>,
) -> c_int {
    let comm = Cell::new(1);
    call_with(
        name,
        || state::errhandler_of_index(comm.get()),
        || {
            let Ok(n) = usize::try_from(count) else {
                return err(MPI_ERR_COUNT, format!("count {count} is negative"));
            };
            if n > 0 && requests.is_null() {
                return err(MPI_ERR_ARG, "array_of_requests is NULL");
            }
            f(n, &comm)
        },
    )
}

/// The i-th status of an array, or null for MPI_STATUSES_IGNORE.
fn nth(statuses: *mut MpiStatus, i: usize) -> *mut MpiStatus {
    if statuses.is_null() {
        statuses
    } else {
        statuses.wrapping_add(i)
    }
}

/// Notes a failed request of a completion call: its communicator picks the error handler,
/// its slot becomes MPI_REQUEST_NULL (unless it is a persistent request, which stays) and the
/// first failure is kept; a truncated receive's envelope goes to `st`; gives its class.
///
/// # Safety
/// `slot` is valid; `st` is null or a writable MPI_Status.
unsafe fn record_failure(
    s: &State,
    (e, c): (MpiError, usize),
    comm: &Cell<usize>,
    (slot, st): (*mut Handle, *mut MpiStatus),
    failed: &mut Option<MpiError>,
) -> c_int {
    comm.set(c);
    // SAFETY: the caller's contract.
    unsafe {
        if !is_persistent(s, slot.read()) {
            slot.write(MPI_REQUEST_NULL);
        }
        if let Some(partial) = &e.status {
            status::store(st, partial);
        }
    }
    let class = e.class;
    failed.get_or_insert(e);
    class
}

/// A request that failed while `completion` looked whether all had completed (its error,
/// which a look collects): it completes with that error, which its communicator's handler
/// takes (not MPI_COMM_SELF's); the others stay as they were.
///
/// # Safety
/// As `record_failure`'s.
unsafe fn failed_early(
    s: &mut State,
    e: MpiError,
    h: Handle,
    comm: &Cell<usize>,
    (slot, st): (*mut Handle, *mut MpiStatus),
    n: usize,
) -> MpiResult<()> {
    let i = s.req_index(h)?;
    let c = s.reqs.get(i).map_or(1, |r| r.comm);
    if !is_persistent(s, h) {
        s.reqs.remove(i);
    }
    let mut failed = None;
    // SAFETY: the caller's contract.
    let class = unsafe { record_failure(s, (e, c), comm, (slot, st), &mut failed) };
    let e = failed.expect("record_failure keeps the failure");
    // SAFETY: as above.
    match unsafe { st.as_mut() } {
        Some(st) if n > 1 => {
            st.error = class;
            Err(in_status(e))
        }
        _ => Err(e),
    }
}

/// The error of a multiple-completion call whose statuses tell which request failed.
fn in_status(e: MpiError) -> MpiError {
    MpiError::new(
        MPI_ERR_IN_STATUS,
        format!("a request failed (see the statuses): {}", e.message),
    )
}

/// Entry points that only call their implementation with their MPI name and fixed arguments.
macro_rules! forward {
    ($(fn $f:ident($($a:ident: $t:ty),*) => $imp:ident($($arg:expr),*);)*) => {$(
        unsafe fn $f($($a: $t),*) -> c_int {
            // SAFETY: passed through.
            unsafe { $imp($($arg),*) }
        }
    )*};
}

/// Waits for all of `count` requests on behalf of blocking call `name` (which started them
/// in their non-blocking form at MPI_THREAD_MULTIPLE).
///
/// # Safety
/// As MPI_Waitall's arguments.
pub(super) unsafe fn wait_for(
    name: &'static str,
    count: c_int,
    requests: *mut Handle,
    statuses: *mut MpiStatus,
) -> c_int {
    // SAFETY: passed through.
    unsafe { completion(name, count, requests, statuses, true, null_mut()) }
}

/// Wait/Test for all of `count` requests. Testall completes none unless all are complete.
unsafe fn completion(
    name: &'static str,
    count: c_int,
    requests: *mut Handle,
    statuses: *mut MpiStatus,
    block: bool,
    flag: *mut c_int,
) -> c_int {
    if block && crate::threads::multiple() {
        // Tests until all have completed, letting other threads' calls in between.
        let mut turns = crate::threads::Turns::default();
        loop {
            let mut all: c_int = 0;
            // SAFETY: passed through; `all` is this frame's.
            let rc = unsafe { completion(name, count, requests, statuses, false, &mut all) };
            if rc != MPI_SUCCESS || all != 0 {
                return rc;
            }
            turns.next();
        }
    }
    with_requests(name, count, requests, |n, comm| {
        if !block {
            // A test loop must move the collectives in flight on too.
            crate::in_flight::progress()?;
        }
        with_state(|s| {
            if !block {
                // All or nothing: first look whether every request has completed.
                for i in 0..n {
                    // SAFETY: the caller's array of `count` requests.
                    let (slot, st) = unsafe { (requests.add(i), nth(statuses, i)) };
                    // SAFETY: as above.
                    let h = unsafe { slot.read() };
                    if h == MPI_REQUEST_NULL {
                        continue;
                    }
                    match s.req_done(h) {
                        Ok(true) => {}
                        // SAFETY: the caller's output argument.
                        Ok(false) => return unsafe { out(flag, 0, "flag") },
                        Err(e) => {
                            if n == 1 && !flag.is_null() {
                                // MPI_Test: the request has completed, with its error.
                                // SAFETY: the caller's output argument.
                                unsafe { out(flag, 1, "flag") }?;
                            }
                            // MPI_Testall: the others are left as they are, pending.
                            for j in (0..n).filter(|&j| n > 1 && j != i) {
                                // SAFETY: the caller's array of `count` statuses (or ignore).
                                if let Some(other) = unsafe { nth(statuses, j).as_mut() } {
                                    other.error = MPI_ERR_PENDING;
                                }
                            }
                            // SAFETY: as above.
                            return unsafe { failed_early(s, e, h, comm, (slot, st), n) };
                        }
                    }
                }
            }
            let mut failed: Option<MpiError> = None;
            for i in 0..n {
                // SAFETY: the caller's arrays of `count` entries (statuses may be ignored).
                let (slot, st) = unsafe { (requests.add(i), nth(statuses, i)) };
                // SAFETY: as above.
                let h = unsafe { slot.read() };
                let code = match step(s, h, true) {
                    Ok(got) => {
                        // SAFETY: as above.
                        unsafe { deliver(s, slot, st, &got) };
                        MPI_SUCCESS
                    }
                    // SAFETY: as above.
                    Err(failure) => unsafe {
                        record_failure(s, failure, comm, (slot, st), &mut failed)
                    },
                };
                // SAFETY: as above.
                if n > 1 {
                    if let Some(st) = unsafe { st.as_mut() } {
                        st.error = code;
                    }
                }
            }
            if !flag.is_null() {
                // SAFETY: the caller's output argument.
                unsafe { out(flag, 1, "flag") }?;
            }
            match failed {
                None => Ok(()),
                Some(e) if statuses.is_null() || n == 1 => Err(e),
                Some(e) => Err(in_status(e)),
            }
        })
    })
}

/// Waitany/Testany: completes one active request; `index` is MPI_UNDEFINED when none is.
unsafe fn any(
    name: &'static str,
    count: c_int,
    requests: *mut Handle,
    index: *mut c_int,
    st: *mut MpiStatus,
    flag: *mut c_int,
) -> c_int {
    let mut turns = crate::threads::Turns::default();
    let mut first = true;
    with_requests(name, count, requests, |n, comm| loop {
        // The collectives in flight move on, and between two passes a turn (other threads'
        // calls, else backing off to a block in the engine that a packet ends).
        crate::in_flight::progress()?;
        if !std::mem::take(&mut first) {
            turns.next();
        }
        let mut active = false;
        let found = with_state(|s| {
            for i in 0..n {
                // SAFETY: the caller's array of `count` requests.
                let slot = unsafe { requests.add(i) };
                // SAFETY: as above.
                let h = unsafe { slot.read() };
                match step(s, h, false) {
                    Ok(Step::Null) => {}
                    Ok(Step::Pending) => active = true,
                    Ok(got) => {
                        // SAFETY: as above.
                        unsafe { deliver(s, slot, st, &got) };
                        return Ok(Some(i));
                    }
                    Err((e, c)) => {
                        comm.set(c);
                        // SAFETY: as above.
                        unsafe {
                            slot.write(MPI_REQUEST_NULL);
                            out(index, i as c_int, "index")?;
                            if let Some(partial) = &e.status {
                                status::store(st, partial);
                            }
                        }
                        return Err(e);
                    }
                }
            }
            Ok(None)
        })?;
        let done = match found {
            Some(i) => Some(i as c_int),
            None if !active => {
                // SAFETY: the caller's status.
                unsafe { status::store_empty(st) };
                Some(MPI_UNDEFINED)
            }
            None if flag.is_null() => None,
            None => {
                // SAFETY: the caller's output argument.
                return unsafe { out(flag, 0, "flag") };
            }
        };
        if let Some(i) = done {
            // SAFETY: the caller's output arguments.
            unsafe {
                out(index, i, "index")?;
                if !flag.is_null() {
                    out(flag, 1, "flag")?;
                }
            }
            return Ok(());
        }
    })
}

/// Waitsome/Testsome: completes every request that can complete now (Waitsome: at least
/// one); `outcount` is MPI_UNDEFINED when no request is active.
unsafe fn some(
    name: &'static str,
    incount: c_int,
    requests: *mut Handle,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MpiStatus,
    block: bool,
) -> c_int {
    let mut turns = crate::threads::Turns::default();
    let mut first = true;
    with_requests(name, incount, requests, |n, comm| loop {
        crate::in_flight::progress()?;
        if !std::mem::take(&mut first) {
            turns.next();
        }
        let mut active = false;
        let mut k = 0usize;
        let mut failed = None;
        with_state(|s| {
            for i in 0..n {
                // SAFETY: the caller's array of `incount` requests.
                let slot = unsafe { requests.add(i) };
                // SAFETY: as above.
                let h = unsafe { slot.read() };
                let st = nth(statuses, k);
                let code = match step(s, h, false) {
                    Ok(Step::Null) => continue,
                    Ok(Step::Pending) => {
                        active = true;
                        continue;
                    }
                    Ok(got) => {
                        // SAFETY: as above.
                        unsafe { deliver(s, slot, st, &got) };
                        MPI_SUCCESS
                    }
                    // SAFETY: as above.
                    Err(failure) => unsafe {
                        record_failure(s, failure, comm, (slot, st), &mut failed)
                    },
                };
                // SAFETY: the caller's arrays hold `incount` entries.
                unsafe {
                    indices.add(k).write(i as c_int);
                    if let Some(st) = st.as_mut() {
                        st.error = code;
                    }
                }
                k += 1;
            }
            Ok(())
        })?;
        if k > 0 || !active || !block {
            let oc = if k == 0 && !active {
                MPI_UNDEFINED
            } else {
                k as c_int
            };
            // SAFETY: the caller's output argument.
            unsafe { out(outcount, oc, "outcount") }?;
            return match failed {
                None => Ok(()),
                Some(e) => Err(in_status(e)),
            };
        }
    })
}

forward! {
    // A single wait is a wait for all of one.
    fn wait(request: *mut Handle, st: *mut MpiStatus)
        => completion("MPI_Wait", 1, request, st, true, null_mut());
    fn test(request: *mut Handle, flag: *mut c_int, st: *mut MpiStatus)
        => completion("MPI_Test", 1, request, st, false, flag);
    fn waitall(count: c_int, requests: *mut Handle, statuses: *mut MpiStatus)
        => completion("MPI_Waitall", count, requests, statuses, true, null_mut());
    fn testall(count: c_int, requests: *mut Handle, flag: *mut c_int, statuses: *mut MpiStatus)
        => completion("MPI_Testall", count, requests, statuses, false, flag);
    fn waitany(count: c_int, requests: *mut Handle, index: *mut c_int, st: *mut MpiStatus)
        => any("MPI_Waitany", count, requests, index, st, null_mut());
    fn testany(count: c_int, requests: *mut Handle, index: *mut c_int, flag: *mut c_int,
            st: *mut MpiStatus)
        => any("MPI_Testany", count, requests, index, st, flag);
    fn waitsome(incount: c_int, requests: *mut Handle, outcount: *mut c_int,
            indices: *mut c_int, statuses: *mut MpiStatus)
        => some("MPI_Waitsome", incount, requests, outcount, indices, statuses, true);
    fn testsome(incount: c_int, requests: *mut Handle, outcount: *mut c_int,
            indices: *mut c_int, statuses: *mut MpiStatus)
        => some("MPI_Testsome", incount, requests, outcount, indices, statuses, false);
}

unsafe fn start(request: *mut Handle) -> c_int {
    // SAFETY: passed through.
    unsafe { start_each("MPI_Start", 1, request) }
}

unsafe fn startall(count: c_int, requests: *mut Handle) -> c_int {
    // SAFETY: passed through.
    unsafe { start_each("MPI_Startall", count, requests) }
}

/// MPI_Start and MPI_Startall (`name`): starts each of `count` persistent requests.
unsafe fn start_each(name: &'static str, count: c_int, requests: *mut Handle) -> c_int {
    with_requests(name, count, requests, |n, comm| {
        for i in 0..n {
            // SAFETY: the caller's array of `count` requests.
            let h = unsafe { requests.add(i).read() };
            let restart = with_state(|s| {
                if let Ok(ri) = s.req_index(h) {
                    comm.set(s.reqs.get(ri).map_or(1, |e| e.comm));
                }
                match super::coll::persistent::restart_of(s, h)? {
                    Some(r) => Ok(Some(r)),
                    None => super::p2p::start_persistent(s, h).map(|()| None),
                }
            })?;
            if let Some(r) = restart {
                super::coll::persistent::start(h, &*r)?;
            }
        }
        Ok(())
    })
}

unsafe fn request_free(request: *mut Handle) -> c_int {
    call_with(
        "MPI_Request_free",
        || state::errhandler_for(MPI_COMM_SELF),
        || {
            // SAFETY: the caller's in/out argument.
            let h = unsafe { read(request, "request") }?;
            with_state(|s| {
                let i = s.req_index(h)?;
                // An operation in flight still completes (dropping the entry waits for data
                // that is moving, and cancels a receive nobody has matched).
                s.reqs.remove(i);
                Ok(())
            })?;
            // SAFETY: as above.
            unsafe { out(request, MPI_REQUEST_NULL, "request") }
        },
    )
}

unsafe fn cancel(request: *mut Handle) -> c_int {
    call_with(
        "MPI_Cancel",
        || state::errhandler_for(MPI_COMM_SELF),
        || {
            // SAFETY: the caller's in/out argument.
            let h = unsafe { read(request, "request") }?;
            with_state(|s| {
                let i = s.req_index(h)?;
                let e = s.reqs.get_mut(i).expect("req_index checked the slot");
                e.cancel()
            })
        },
    )
}

unsafe fn test_cancelled(st: *const MpiStatus, flag: *mut c_int) -> c_int {
    call_with(
        "MPI_Test_cancelled",
        || state::errhandler_for(MPI_COMM_SELF),
        || {
            // SAFETY: the caller's status, read only.
            let st = unsafe { read(st, "status") }?;
            // SAFETY: the caller's output argument.
            unsafe { out(flag, c_int::from(status::is_cancelled(&st)), "flag") }
        },
    )
}

unsafe fn request_get_status(request: Handle, flag: *mut c_int, st: *mut MpiStatus) -> c_int {
    // An error goes to the handler of the request's communicator (MPI_COMM_SELF's until known).
    let comm = Cell::new(1);
    call_with(
        "MPI_Request_get_status",
        || state::errhandler_of_index(comm.get()),
        || {
            if request == MPI_REQUEST_NULL {
                // SAFETY: the caller's status and flag.
                unsafe { status::store_empty(st) };
                // SAFETY: as above.
                return unsafe { out(flag, 1, "flag") };
            }
            let done = with_state(|s| {
                let i = s.req_index(request)?;
                comm.set(s.reqs.get(i).map_or(1, |e| e.comm));
                s.req_status(request)
            });
            let done = match done {
                Err(e) if e.class != MPI_ERR_REQUEST => {
                    // The operation has completed, with an error.
                    // SAFETY: the caller's output argument.
                    unsafe { out(flag, 1, "flag") }?;
                    return Err(e);
                }
                r => r?,
            };
            if let Some((got, cancelled)) = &done {
                // SAFETY: the caller's status; the request stays (MPI: it is not freed).
                unsafe {
                    status::store(st, got);
                    status::set_cancelled(st, *cancelled);
                }
            }
            // SAFETY: the caller's output argument.
            unsafe { out(flag, c_int::from(done.is_some()), "flag") }
        },
    )
}

export!(MPI_Wait, PMPI_Wait, wait, (request: *mut Handle, status: *mut MpiStatus) -> c_int);
export!(MPI_Test, PMPI_Test, test,
    (request: *mut Handle, flag: *mut c_int, status: *mut MpiStatus) -> c_int);
export!(MPI_Waitall, PMPI_Waitall, waitall,
    (count: c_int, array_of_requests: *mut Handle, array_of_statuses: *mut MpiStatus) -> c_int);
export!(MPI_Testall, PMPI_Testall, testall,
    (count: c_int, array_of_requests: *mut Handle, flag: *mut c_int,
     array_of_statuses: *mut MpiStatus) -> c_int);
export!(MPI_Waitany, PMPI_Waitany, waitany,
    (count: c_int, array_of_requests: *mut Handle, index: *mut c_int, status: *mut MpiStatus) -> c_int);
export!(MPI_Testany, PMPI_Testany, testany,
    (count: c_int, array_of_requests: *mut Handle, index: *mut c_int, flag: *mut c_int,
     status: *mut MpiStatus) -> c_int);
export!(MPI_Waitsome, PMPI_Waitsome, waitsome,
    (incount: c_int, array_of_requests: *mut Handle, outcount: *mut c_int,
     array_of_indices: *mut c_int, array_of_statuses: *mut MpiStatus) -> c_int);
export!(MPI_Testsome, PMPI_Testsome, testsome,
    (incount: c_int, array_of_requests: *mut Handle, outcount: *mut c_int,
     array_of_indices: *mut c_int, array_of_statuses: *mut MpiStatus) -> c_int);
export!(MPI_Start, PMPI_Start, start, (request: *mut Handle) -> c_int);
export!(MPI_Startall, PMPI_Startall, startall,
    (count: c_int, array_of_requests: *mut Handle) -> c_int);
export!(MPI_Request_free, PMPI_Request_free, request_free, (request: *mut Handle) -> c_int);
export!(MPI_Cancel, PMPI_Cancel, cancel, (request: *mut Handle) -> c_int);
export!(MPI_Test_cancelled, PMPI_Test_cancelled, test_cancelled,
    (status: *const MpiStatus, flag: *mut c_int) -> c_int);
export!(MPI_Request_get_status, PMPI_Request_get_status, request_get_status,
    (request: Handle, flag: *mut c_int, status: *mut MpiStatus) -> c_int);
