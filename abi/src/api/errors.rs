//! Error handlers and error texts: MPI_Comm_set/get_errhandler, MPI_Error_string/class.

use super::{out, out_string};
use crate::consts::*;
use crate::error::{self, err, ErrHandler};
use crate::state::with_state;
use crate::{call, export};
use std::os::raw::{c_char, c_int};

unsafe fn comm_set_errhandler(comm: Handle, handler: Handle) -> c_int {
    call("MPI_Comm_set_errhandler", comm, || {
        let h = ErrHandler::from_handle(handler)?;
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
        unsafe { out(handler, h.handle(), "errhandler") }
    })
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
        if !error::is_valid_code(code) {
            return err(MPI_ERR_ARG, format!("{code} is not an error code"));
        }
        // Error codes are the classes themselves.
        // SAFETY: the caller's output argument.
        unsafe { out(class, code, "errorclass") }
    })
}

export!(MPI_Comm_set_errhandler, PMPI_Comm_set_errhandler, comm_set_errhandler,
    (comm: Handle, errhandler: Handle) -> c_int);
export!(MPI_Comm_get_errhandler, PMPI_Comm_get_errhandler, comm_get_errhandler,
    (comm: Handle, errhandler: *mut Handle) -> c_int);
export!(MPI_Error_string, PMPI_Error_string, error_string,
    (errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int);
export!(MPI_Error_class, PMPI_Error_class, error_class,
    (errorcode: c_int, errorclass: *mut c_int) -> c_int);
