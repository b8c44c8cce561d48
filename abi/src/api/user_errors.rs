//! MPI_Add_error_class, _code, _string and MPI 4.1's MPI_Remove_error_class, _code, _string
//! over `crate::user_errors`.

use super::info::text;
use super::out;
use crate::consts::*;
use crate::user_errors as reg;
use crate::{call, export};
use std::os::raw::{c_char, c_int};

unsafe fn add_error_class(errorclass: *mut c_int) -> c_int {
    call("MPI_Add_error_class", MPI_COMM_SELF, || {
        // SAFETY: the caller's output argument.
        unsafe { out(errorclass, reg::add_class(), "errorclass") }
    })
}

unsafe fn add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
    call("MPI_Add_error_code", MPI_COMM_SELF, || {
        let c = reg::add_code(errorclass)?;
        // SAFETY: the caller's output argument.
        unsafe { out(errorcode, c, "errorcode") }
    })
}

unsafe fn add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    call("MPI_Add_error_string", MPI_COMM_SELF, || {
        // SAFETY: the caller's C string.
        let s = unsafe { text(string, "string") }?;
        reg::set_string(errorcode, s)
    })
}

unsafe fn remove_error_class(errorclass: c_int) -> c_int {
    call("MPI_Remove_error_class", MPI_COMM_SELF, || {
        reg::remove_class(errorclass)
    })
}

unsafe fn remove_error_code(errorcode: c_int) -> c_int {
    call("MPI_Remove_error_code", MPI_COMM_SELF, || {
        reg::remove_code(errorcode)
    })
}

unsafe fn remove_error_string(errorcode: c_int) -> c_int {
    call("MPI_Remove_error_string", MPI_COMM_SELF, || {
        reg::remove_string(errorcode)
    })
}

export!(MPI_Add_error_class, PMPI_Add_error_class, add_error_class, (errorclass: *mut c_int) -> c_int);
export!(MPI_Add_error_code, PMPI_Add_error_code, add_error_code,
    (errorclass: c_int, errorcode: *mut c_int) -> c_int);
export!(MPI_Add_error_string, PMPI_Add_error_string, add_error_string,
    (errorcode: c_int, string: *const c_char) -> c_int);
export!(MPI_Remove_error_class, PMPI_Remove_error_class, remove_error_class, (errorclass: c_int) -> c_int);
export!(MPI_Remove_error_code, PMPI_Remove_error_code, remove_error_code, (errorcode: c_int) -> c_int);
export!(MPI_Remove_error_string, PMPI_Remove_error_string, remove_error_string, (errorcode: c_int) -> c_int);
