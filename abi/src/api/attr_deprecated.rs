//! The MPI-1 names of the communicator attribute functions, deprecated since MPI-2 and still
//! in the standard ABI, which old codes call (e.g. `MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB,
//! ...)`): MPI_Keyval_create, MPI_Keyval_free, MPI_Attr_put, MPI_Attr_get, MPI_Attr_delete.
//! Each is its successor under its own name (errors name the function called).

use super::attr;
use crate::consts::*;
use crate::export;
use crate::objects::DeleteFn;
use std::os::raw::c_int;

unsafe fn keyval_create(
    copy: usize,
    delete: Option<DeleteFn>,
    keyval: *mut c_int,
    extra: usize,
) -> c_int {
    // SAFETY: passed through; MPI_Copy_function has MPI_Comm_copy_attr_function's signature.
    unsafe { attr::create_keyval("MPI_Keyval_create", copy, delete, keyval, extra) }
}

unsafe fn keyval_free(keyval: *mut c_int) -> c_int {
    // SAFETY: passed through.
    unsafe { attr::free_keyval("MPI_Keyval_free", keyval) }
}

unsafe fn attr_put(comm: Handle, keyval: c_int, value: usize) -> c_int {
    // SAFETY: passed through.
    unsafe { attr::set_attr("MPI_Attr_put", comm, keyval, value) }
}

unsafe fn attr_get(comm: Handle, keyval: c_int, value: *mut usize, flag: *mut c_int) -> c_int {
    // SAFETY: passed through.
    unsafe { attr::get_attr("MPI_Attr_get", comm, keyval, value, flag) }
}

unsafe fn attr_delete(comm: Handle, keyval: c_int) -> c_int {
    attr::delete_attr("MPI_Attr_delete", comm, keyval)
}

export!(MPI_Keyval_create, PMPI_Keyval_create, keyval_create,
    (copy_fn: usize, delete_fn: Option<DeleteFn>, keyval: *mut c_int, extra_state: usize) -> c_int);
export!(MPI_Keyval_free, PMPI_Keyval_free, keyval_free, (keyval: *mut c_int) -> c_int);
export!(MPI_Attr_put, PMPI_Attr_put, attr_put,
    (comm: Handle, keyval: c_int, attribute_val: usize) -> c_int);
export!(MPI_Attr_get, PMPI_Attr_get, attr_get,
    (comm: Handle, keyval: c_int, attribute_val: *mut usize, flag: *mut c_int) -> c_int);
export!(MPI_Attr_delete, PMPI_Attr_delete, attr_delete, (comm: Handle, keyval: c_int) -> c_int);
