//! `libmpi_abi.so.1`: the MPI 5.0 standard ABI over ibdyn. A thin C layer: handle tables
//! (`state`), the ABI's values (`consts`, `include/mpi.h`), and one file per group of MPI
//! functions (`api/`) that calls the `ibdyn` facade or, where C needs untyped access, the
//! engine and collective crates below it.
//!
//! Every exported function exists twice, as `MPI_x` and `PMPI_x` (the profiling interface),
//! runs its body under `catch_unwind` (a Rust panic becomes MPI_ERR_INTERN and never crosses
//! into C), and hands its errors to the communicator's error handler.

mod api;
mod bsend;
mod cart;
mod complex_ops;
mod consts;
mod datatype;
mod derived;
mod error;
mod file;
mod grequest;
mod in_flight;
mod infos;
mod long_double_ops;
mod objects;
mod op_layout;
mod ops;
mod partitioned;
mod request;
mod rma_target;
mod rma_wire;
mod state;
mod status;
mod table;
mod threads;
mod topology;
mod user_errhandler;
mod user_errors;
mod window;
#[cfg(target_arch = "x86_64")]
mod x87;

use consts::Handle;
use error::{raise, ErrHandler, MpiError, MpiResult};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of MPI function `name`: its errors (and panics) go to the error handler
/// `handler()` names, looked up after the body has run.
fn call_with(
    name: &str,
    handler: impl FnOnce() -> ErrHandler,
    f: impl FnOnce() -> MpiResult<()>,
) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => consts::MPI_SUCCESS,
        Ok(Err(e)) => raise(name, e, handler()),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let e = if what.starts_with(ibdyn_owner::Foreign::MESSAGE) {
                MpiError::new(consts::MPI_ERR_OTHER, what)
            } else {
                MpiError::new(
                    consts::MPI_ERR_INTERN,
                    format!("internal error in ibdyn (please report it): {what}"),
                )
            };
            raise(name, e, handler())
        }
    }
}

/// Runs the body of MPI function `name` whose errors belong to communicator `comm`.
fn call(name: &str, comm: Handle, f: impl FnOnce() -> MpiResult<()>) -> c_int {
    call_with(name, || state::errhandler_for(comm), f)
}

/// Exports `MPI_$name` and `PMPI_$name`, both running `$imp` with the runtime's state
/// owned for the call (`threads::enter`). `any_thread` functions take no ownership: they
/// touch no state of the runtime and must not wait for a call of another thread
/// (MPI_Grequest_complete is called while MPI_Wait waits for it).
macro_rules! export {
    (any_thread $name:ident, $pname:ident, $imp:path, $args:tt -> $ret:ty) => {
        $crate::export!(@emit [] $name, $pname, $imp, $args -> $ret);
    };
    ($name:ident, $pname:ident, $imp:path, $args:tt -> $ret:ty) => {
        $crate::export!(@emit [let _entry = $crate::threads::enter();]
            $name, $pname, $imp, $args -> $ret);
    };
    (@emit [$($enter:tt)*] $name:ident, $pname:ident, $imp:path,
        ($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty) => {
        /// # Safety
        /// Pointer arguments as the MPI standard specifies them for this function.
        #[no_mangle]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> $ret {
            $($enter)*
            // SAFETY: the caller keeps the MPI contract of this function's arguments.
            unsafe { $imp($($arg),*) }
        }
        /// # Safety
        /// Pointer arguments as the MPI standard specifies them for this function.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
            $($enter)*
            // SAFETY: as for the PMPI_ entry point.
            unsafe { $imp($($arg),*) }
        }
    };
}
pub(crate) use export;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_mpi_err_intern_with_its_message() {
        let code = call_with(
            "MPI_Example",
            || ErrHandler::Return,
            || panic!("an invariant broke"),
        );
        assert_eq!(code, consts::MPI_ERR_INTERN);
        let text = error::error_string(code).expect("a known class");
        assert!(
            text.contains("MPI_Example") && text.contains("an invariant broke"),
            "{text}"
        );
    }

    #[test]
    fn errors_return_their_class_through_the_return_handler() {
        let code = call_with(
            "MPI_Example",
            || ErrHandler::Return,
            || error::err(consts::MPI_ERR_RANK, "rank 9 of 4"),
        );
        assert_eq!(code, consts::MPI_ERR_RANK);
    }
}
