//! MPI_Grequest_start and MPI_Grequest_complete (the request logic is in `crate::grequest`).

use super::out;
use crate::consts::*;
use crate::grequest::{self, CancelFn, FreeFn, Greq, QueryFn};
use crate::request::{Active, ReqEntry};
use crate::state::with_state;
use crate::{call, export};
use std::os::raw::c_int;

unsafe fn grequest_start(
    query: Option<QueryFn>,
    free: Option<FreeFn>,
    cancel: Option<CancelFn>,
    extra: usize,
    request: *mut Handle,
) -> c_int {
    call("MPI_Grequest_start", MPI_COMM_SELF, || {
        if request.is_null() {
            return crate::error::err(MPI_ERR_ARG, "the output argument request is NULL");
        }
        let cb = grequest::Callbacks {
            query,
            free,
            cancel,
            extra,
        };
        let h = with_state(|s| {
            // Index 1: MPI_COMM_SELF's error handler takes the request's errors.
            let h = s.add_req(ReqEntry::new(
                Active::Generalized(Box::new(Greq::new(cb))),
                1,
            ));
            let i = s.req_index(h)?;
            if let Some(Active::Generalized(g)) = &mut s.reqs.get_mut(i).expect("just added").active
            {
                g.register(h);
            }
            Ok(h)
        })?;
        // SAFETY: the caller's output argument (checked non-null).
        unsafe { out(request, h, "request") }
    })
}

unsafe fn grequest_complete(request: Handle) -> c_int {
    // From any thread: the completion needs no state of the MPI thread.
    call("MPI_Grequest_complete", MPI_COMM_SELF, || {
        grequest::complete(request)
    })
}

export!(MPI_Grequest_start, PMPI_Grequest_start, grequest_start,
    (query_fn: Option<QueryFn>, free_fn: Option<FreeFn>, cancel_fn: Option<CancelFn>,
     extra_state: usize, request: *mut Handle) -> c_int);
export!(any_thread MPI_Grequest_complete, PMPI_Grequest_complete, grequest_complete,
    (request: Handle) -> c_int);
