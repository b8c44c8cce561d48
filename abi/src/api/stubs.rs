//! Every function of the standard ABI that ibdyn does not implement: it exists, so programs
//! that merely link it load, and reports MPI_ERR_UNSUPPORTED_OPERATION naming itself through
//! MPI_COMM_SELF's error handler (the handler of errors tied to no object). The list is made
//! by build.rs from `functions.txt` minus the functions `src/api/` exports.
//!
//! A stub takes no parameters: under the C calling convention the caller's arguments are
//! simply not read. The list is empty now (every function is implemented); the machinery
//! stays for the functions a later ABI version adds.

use crate::call;
use crate::consts::*;
use crate::error::err;
use std::os::raw::c_int;

#[allow(dead_code)]
fn unsupported(name: &'static str) -> c_int {
    call(name, MPI_COMM_SELF, || {
        err(
            MPI_ERR_UNSUPPORTED_OPERATION,
            format!("{name} is not supported by ibdyn (the function exists so that programs linking it load)"),
        )
    })
}

#[allow(unused_macros)]
macro_rules! unsupported {
    ($name:ident, $pname:ident) => {
        #[no_mangle]
        pub extern "C" fn $name() -> c_int {
            unsupported(stringify!($name))
        }
        #[no_mangle]
        pub extern "C" fn $pname() -> c_int {
            unsupported(stringify!($name))
        }
    };
}

include!(concat!(env!("OUT_DIR"), "/stubs.rs"));
