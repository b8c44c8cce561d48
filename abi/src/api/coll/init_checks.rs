//! What a persistent collective's init call (MPI_Bcast_init, MPI_Allreduce_init, ...) checks
//! of its arguments, as its non-blocking call checks them at every start: the count, the
//! root, the operation on the datatype, an intracommunicator for the scans. A bad one fails at the
//! init call with the non-blocking call's error class and message.

use super::{inter_role, intra_root};
use crate::consts::*;
use crate::derived;
use crate::error::{err, MpiResult};
use crate::ops;
use crate::state::with_state;
use std::os::raw::c_int;

/// Whether `comm` is an intercommunicator, its size, and the size of the group ranks name.
fn shape(comm: Handle) -> MpiResult<(bool, c_int, c_int)> {
    with_state(|s| {
        let raw = s.comm(comm)?.comm.raw();
        Ok((raw.is_inter(), raw.size(), raw.remote_size()))
    })
}

/// The root of a rooted collective: a rank of the communicator, or on an intercommunicator
/// MPI_ROOT, MPI_PROC_NULL or a rank of the remote group.
pub(super) fn root(_name: &str, comm: Handle, root: c_int) -> MpiResult<()> {
    let (inter, size, remote_size) = shape(comm)?;
    if inter {
        inter_role(root, remote_size).map(drop)
    } else {
        intra_root(root, size).map(drop)
    }
}

/// A count of elements: not negative.
pub(super) fn count(_name: &str, _comm: Handle, n: impl Into<i64>) -> MpiResult<()> {
    match n.into() {
        n if n < 0 => err(MPI_ERR_COUNT, format!("count {n} is negative")),
        _ => Ok(()),
    }
}

/// A datatype.
pub(super) fn ty(_name: &str, _comm: Handle, datatype: Handle) -> MpiResult<()> {
    derived::resolve(datatype, true).map(drop)
}

/// A reduction operation defined on the datatype.
pub(super) fn op(_name: &str, _comm: Handle, op: Handle, datatype: Handle) -> MpiResult<()> {
    let t = derived::resolve(datatype, true)?;
    ops::reduction(op, datatype, &t).map(drop)
}

/// An intracommunicator (the scans have no intercommunicator form).
pub(super) fn intra(name: &str, comm: Handle) -> MpiResult<()> {
    if shape(comm)?.0 {
        return err(MPI_ERR_COMM, format!("{name} needs an intracommunicator"));
    }
    Ok(())
}
