//! Error handlers and error texts: MPI_Comm_create/set/get/call_errhandler,
//! MPI_Errhandler_free, MPI_Error_string/class.

use super::{out, out_string};
use crate::consts::*;
use crate::error::{self, err, MpiError};
use crate::state;
use crate::state::with_state;
use crate::user_errhandler::{self as user, ErrFn, Kind};
use crate::{call, export};
use std::os::raw::{c_char, c_int};

unsafe fn comm_set_errhandler(comm: Handle, handler: Handle) -> c_int {
    call("MPI_Comm_set_errhandler", comm, || {
        let h = user::resolve(handler, Kind::Comm)?;
        with_state(|s| {
            s.comm_mut(comm)?.errhandler = h;
            Ok(())
        })
    })
}

unsafe fn comm_get_errhandler(comm: Handle, handler: *mut Handle) -> c_int {
    call("MPI_Comm_get_errhandler", comm, || {
        let h = with_state(|s| Ok(s.comm(comm)?.errhandler))?;
        // SAFETY: the caller's output argument.
        unsafe { out(handler, user::handle_for_get(h), "errhandler") }
    })
}

unsafe fn comm_create_errhandler(func: Option<ErrFn>, handler: *mut Handle) -> c_int {
    call("MPI_Comm_create_errhandler", MPI_COMM_SELF, || {
        let Some(func) = func else {
            return err(MPI_ERR_ARG, "the error handler function is NULL");
        };
        // SAFETY: the caller's output argument.
        unsafe {
            out(
                handler,
                user::create(user::Func::Classic(func), Kind::Comm, None),
                "errhandler",
            )
        }
    })
}

unsafe fn errhandler_free(handler: *mut Handle) -> c_int {
    call("MPI_Errhandler_free", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let h = unsafe { super::read(handler, "errhandler") }?;
        user::free(h)?;
        // SAFETY: as above.
        unsafe { out(handler, MPI_ERRHANDLER_NULL, "errhandler") }
    })
}

/// Hands `code` to the error handler of `comm`; MPI_SUCCESS once the handler has returned.
unsafe fn comm_call_errhandler(comm: Handle, code: c_int) -> c_int {
    let eh = match with_state(|s| {
        s.comm(comm)?;
        Ok(s.errhandler_for(comm))
    }) {
        Ok(eh) => eh,
        Err(e) => return error::raise("MPI_Comm_call_errhandler", e, state::errhandler_for(comm)),
    };
    let e = MpiError::new(
        code,
        "raised by the program (MPI_Comm_call_errhandler)".to_string(),
    );
    error::raise("MPI_Comm_call_errhandler", e, eh);
    MPI_SUCCESS
}

unsafe fn error_string(code: c_int, string: *mut c_char, len: *mut c_int) -> c_int {
    call("MPI_Error_string", MPI_COMM_SELF, || {
        let Some(text) = error::error_string(code) else {
            return err(MPI_ERR_ARG, format!("{code} is not an error code"));
        };
        // SAFETY: MPI sizes the buffer MPI_MAX_ERROR_STRING.
        unsafe { out_string(string, MPI_MAX_ERROR_STRING, len, &text) }
    })
}

unsafe fn error_class(code: c_int, class: *mut c_int) -> c_int {
    call("MPI_Error_class", MPI_COMM_SELF, || {
        let Some(c) = error::class_of(code) else {
            return err(MPI_ERR_ARG, format!("{code} is not an error code"));
        };
        // SAFETY: the caller's output argument.
        unsafe { out(class, c, "errorclass") }
    })
}

export!(MPI_Comm_set_errhandler, PMPI_Comm_set_errhandler, comm_set_errhandler,
    (comm: Handle, errhandler: Handle) -> c_int);
export!(MPI_Comm_get_errhandler, PMPI_Comm_get_errhandler, comm_get_errhandler,
    (comm: Handle, errhandler: *mut Handle) -> c_int);
export!(MPI_Comm_create_errhandler, PMPI_Comm_create_errhandler, comm_create_errhandler,
    (comm_errhandler_fn: Option<ErrFn>, errhandler: *mut Handle) -> c_int);
export!(MPI_Errhandler_free, PMPI_Errhandler_free, errhandler_free,
    (errhandler: *mut Handle) -> c_int);
export!(MPI_Comm_call_errhandler, PMPI_Comm_call_errhandler, comm_call_errhandler,
    (comm: Handle, errorcode: c_int) -> c_int);
export!(MPI_Error_string, PMPI_Error_string, error_string,
    (errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int);
export!(MPI_Error_class, PMPI_Error_class, error_class,
    (errorcode: c_int, errorclass: *mut c_int) -> c_int);
