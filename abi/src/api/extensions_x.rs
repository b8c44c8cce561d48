//! MPICH's `_x` extensions in the standard ABI: MPIX_Op_create_x and
//! MPIX_{Comm,File,Win,Session}_create_errhandler_x. Their functions take scalars by value
//! and the program's extra state; a destructor runs on that state once the object is freed,
//! when the process's MPI ends (objects that copied the function may call it until then).

use super::out;
use crate::consts::*;
use crate::error::{err, ErrHandler, MpiResult};
use crate::ops::{self, UserFnX, UserFunc};
use crate::user_errhandler::{self as user, DestructorFn, ErrFnX, Func, Kind};
use crate::{call, call_with, export};
use std::ffi::c_void;
use std::os::raw::c_int;

unsafe fn op_create_x(
    f: Option<UserFnX>,
    destructor: Option<DestructorFn>,
    commute: c_int,
    extra: *mut c_void,
    op: *mut Handle,
) -> c_int {
    call("MPIX_Op_create_x", MPI_COMM_SELF, || {
        let Some(f) = f else {
            return err(MPI_ERR_ARG, "user_fn_x is NULL");
        };
        let func = UserFunc::X {
            f,
            extra: extra as usize,
        };
        let h = match destructor {
            Some(d) => ops::create_x(func, commute != 0, (d, extra as usize)),
            None => ops::create(func, commute != 0),
        };
        // SAFETY: the caller's output argument.
        unsafe { out(op, h, "op") }
    })
}

/// A handler of `kind` calling `f` with `extra`.
fn errhandler_x(
    kind: Kind,
    f: Option<ErrFnX>,
    destructor: Option<DestructorFn>,
    extra: *mut c_void,
    handler: *mut Handle,
) -> MpiResult<()> {
    let Some(f) = f else {
        return err(MPI_ERR_ARG, "the error handler function is NULL");
    };
    let func = Func::X {
        f,
        extra: extra as usize,
    };
    // SAFETY: the caller's output argument.
    unsafe { out(handler, user::create(func, kind, destructor), "errhandler") }
}

/// The four exported forms. Their errors go where the classic create calls' go: MPI_COMM_SELF's
/// handler, and for sessions (which may make handlers before MPI runs) the fatal one.
macro_rules! errhandlers_x {
    ($($f:ident $name:literal $kind:ident;)*) => {$(
        unsafe fn $f(
            f: Option<ErrFnX>,
            destructor: Option<DestructorFn>,
            extra: *mut c_void,
            handler: *mut Handle,
        ) -> c_int {
            let make = || errhandler_x(Kind::$kind, f, destructor, extra, handler);
            match Kind::$kind {
                Kind::Session => call_with($name, || ErrHandler::Fatal, make),
                _ => call($name, MPI_COMM_SELF, make),
            }
        }
    )*};
}

errhandlers_x! {
    comm_create_errhandler_x "MPIX_Comm_create_errhandler_x" Comm;
    file_create_errhandler_x "MPIX_File_create_errhandler_x" File;
    win_create_errhandler_x "MPIX_Win_create_errhandler_x" Win;
    session_create_errhandler_x "MPIX_Session_create_errhandler_x" Session;
}

export!(MPIX_Op_create_x, PMPIX_Op_create_x, op_create_x,
    (user_fn_x: Option<UserFnX>, destructor_fn: Option<DestructorFn>, commute: c_int,
     extra_state: *mut c_void, op: *mut Handle) -> c_int);
export!(MPIX_Comm_create_errhandler_x, PMPIX_Comm_create_errhandler_x, comm_create_errhandler_x,
    (comm_errhandler_fn_x: Option<ErrFnX>, destructor_fn: Option<DestructorFn>,
     extra_state: *mut c_void, errhandler: *mut Handle) -> c_int);
export!(MPIX_File_create_errhandler_x, PMPIX_File_create_errhandler_x, file_create_errhandler_x,
    (file_errhandler_fn_x: Option<ErrFnX>, destructor_fn: Option<DestructorFn>,
     extra_state: *mut c_void, errhandler: *mut Handle) -> c_int);
export!(MPIX_Win_create_errhandler_x, PMPIX_Win_create_errhandler_x, win_create_errhandler_x,
    (win_errhandler_fn_x: Option<ErrFnX>, destructor_fn: Option<DestructorFn>,
     extra_state: *mut c_void, errhandler: *mut Handle) -> c_int);
export!(MPIX_Session_create_errhandler_x, PMPIX_Session_create_errhandler_x,
    session_create_errhandler_x,
    (session_errhandler_fn_x: Option<ErrFnX>, destructor_fn: Option<DestructorFn>,
     extra_state: *mut c_void, errhandler: *mut Handle) -> c_int);
