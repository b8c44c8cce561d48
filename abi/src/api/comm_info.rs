//! Communicator hints: MPI_Comm_set_info, MPI_Comm_get_info, MPI_Comm_dup_with_info,
//! MPI_Comm_idup_with_info. ibdyn acts on none of the standard's communicator hints (the
//! standard lets an implementation ignore them), so the info objects are checked and not
//! kept, and MPI_Comm_get_info returns a new, empty info object: the hints in use.

use super::out;
use crate::consts::*;
use crate::error::MpiResult;
use crate::state::with_state;
use crate::{call, export};
use std::os::raw::c_int;

/// Checks that `info` is MPI_INFO_NULL or a live info object.
fn check_info(info: Handle) -> MpiResult<()> {
    super::info::entries(info).map(|_| ())
}

unsafe fn comm_set_info(comm: Handle, info: Handle) -> c_int {
    call("MPI_Comm_set_info", comm, || {
        with_state(|s| s.comm(comm).map(|_| ()))?;
        check_info(info)
    })
}

unsafe fn comm_get_info(comm: Handle, info_used: *mut Handle) -> c_int {
    call("MPI_Comm_get_info", comm, || {
        with_state(|s| s.comm(comm).map(|_| ()))?;
        let h = crate::infos::add(Vec::new())?;
        // SAFETY: the caller's output argument.
        unsafe { out(info_used, h, "info_used") }
    })
}

unsafe fn comm_dup_with_info(comm: Handle, info: Handle, newcomm: *mut Handle) -> c_int {
    if let Err(e) = check_info(info) {
        return call("MPI_Comm_dup_with_info", comm, || Err(e));
    }
    // SAFETY: passed through.
    unsafe { super::comm::comm_dup(comm, newcomm) }
}

unsafe fn comm_idup_with_info(
    comm: Handle,
    info: Handle,
    newcomm: *mut Handle,
    request: *mut Handle,
) -> c_int {
    if let Err(e) = check_info(info) {
        return call("MPI_Comm_idup_with_info", comm, || Err(e));
    }
    // SAFETY: passed through.
    unsafe { super::comm::comm_idup(comm, newcomm, request) }
}

export!(MPI_Comm_set_info, PMPI_Comm_set_info, comm_set_info, (comm: Handle, info: Handle) -> c_int);
export!(MPI_Comm_get_info, PMPI_Comm_get_info, comm_get_info,
    (comm: Handle, info_used: *mut Handle) -> c_int);
export!(MPI_Comm_dup_with_info, PMPI_Comm_dup_with_info, comm_dup_with_info,
    (comm: Handle, info: Handle, newcomm: *mut Handle) -> c_int);
export!(MPI_Comm_idup_with_info, PMPI_Comm_idup_with_info, comm_idup_with_info,
    (comm: Handle, info: Handle, newcomm: *mut Handle, request: *mut Handle) -> c_int);
