//! Error handlers of sessions: MPI_Session_create/set/get/call_errhandler.

use super::out;
use super::session::session_call;
use crate::consts::*;
use crate::error::{self, err, MpiError};
use crate::state::with_state;
use crate::user_errhandler::{self as user, ErrFn, Kind};
use crate::{call_with, export};
use std::os::raw::c_int;

unsafe fn session_create_errhandler(func: Option<ErrFn>, handler: *mut Handle) -> c_int {
    // Sessions may make handlers before any exists: errors go to the fatal handler.
    call_with(
        "MPI_Session_create_errhandler",
        || error::ErrHandler::Fatal,
        || {
            let Some(func) = func else {
                return err(MPI_ERR_ARG, "the error handler function is NULL");
            };
            // SAFETY: the caller's output argument.
            unsafe {
                out(
                    handler,
                    user::create(user::Func::Classic(func), Kind::Session, None),
                    "errhandler",
                )
            }
        },
    )
}

unsafe fn session_set_errhandler(session: Handle, handler: Handle) -> c_int {
    session_call("MPI_Session_set_errhandler", session, || {
        let eh = user::resolve(handler, Kind::Session)?;
        with_state(|s| {
            let i = s.session_index(session)?;
            if let Some(e) = s.sessions.get_mut(i) {
                e.1 = eh;
            }
            Ok(())
        })
    })
}

unsafe fn session_get_errhandler(session: Handle, handler: *mut Handle) -> c_int {
    session_call("MPI_Session_get_errhandler", session, || {
        let eh = with_state(|s| {
            let i = s.session_index(session)?;
            Ok(s.sessions.get(i).map(|e| e.1))
        })?
        .ok_or_else(|| MpiError::new(MPI_ERR_SESSION, "no such session"))?;
        // SAFETY: the caller's output argument.
        unsafe { out(handler, user::handle_for_get(eh), "errhandler") }
    })
}

/// Hands `code` to the error handler of `session`; MPI_SUCCESS once the handler returned.
unsafe fn session_call_errhandler(session: Handle, code: c_int) -> c_int {
    let found = with_state(|s| {
        let i = s.session_index(session)?;
        Ok(s.sessions.get(i).map(|e| e.1.about(session)))
    });
    match found {
        Ok(Some(eh)) => {
            let e = MpiError::new(code, "raised by the program (MPI_Session_call_errhandler)");
            error::raise("MPI_Session_call_errhandler", e, eh);
            MPI_SUCCESS
        }
        Ok(None) | Err(_) => session_call("MPI_Session_call_errhandler", session, || {
            err(
                MPI_ERR_SESSION,
                format!("{session:#x} is not an open session"),
            )
        }),
    }
}

export!(MPI_Session_create_errhandler, PMPI_Session_create_errhandler, session_create_errhandler,
    (session_errhandler_fn: Option<ErrFn>, errhandler: *mut Handle) -> c_int);
export!(MPI_Session_set_errhandler, PMPI_Session_set_errhandler, session_set_errhandler,
    (session: Handle, errhandler: Handle) -> c_int);
export!(MPI_Session_get_errhandler, PMPI_Session_get_errhandler, session_get_errhandler,
    (session: Handle, errhandler: *mut Handle) -> c_int);
export!(MPI_Session_call_errhandler, PMPI_Session_call_errhandler, session_call_errhandler,
    (session: Handle, errorcode: c_int) -> c_int);
