//! Collectives on intra- and intercommunicators, blocking and non-blocking (the `I` forms
//! store a request). They run the byte-level
//! algorithms of `ibdyn-collectives` on the communicator's cached collective state; data of
//! non-contiguous datatypes is packed around them.

mod framework;
mod gather;
mod init_checks;
mod inter_v;
mod neighbor;
pub(crate) mod persistent;
mod reduce;

/// The entry points other files wrap (the `_c` forms).
pub mod exports {
    pub(crate) use super::gather::{
        allgather, alltoall, gather, iallgather, ialltoall, ialltoallw, igather, iscatter, scatter,
    };
    pub(crate) use super::reduce::{
        exscan, iexscan, ireduce, ireduce_scatter, ireduce_scatter_block, iscan, reduce,
        reduce_local, reduce_scatter_block, scan,
    };
}

use crate::consts::*;
use crate::error::{err, MpiResult};
use ibdyn_collectives::InterRole;
use std::os::raw::c_int;

/// Entries of a per-process array argument on `comm`: its size, or its remote size if inter.
pub(crate) fn array_len(comm: Handle) -> MpiResult<usize> {
    crate::state::with_state(|s| {
        let raw = s.comm(comm)?.comm.raw();
        let n = if raw.is_inter() {
            raw.remote_size()
        } else {
            raw.size()
        };
        Ok(n as usize)
    })
}

/// Whether a send buffer argument is MPI_IN_PLACE.
fn in_place<T>(p: *const T) -> bool {
    p as usize == MPI_IN_PLACE
}

/// A root argument of a rooted collective on an intercommunicator.
fn inter_role(root: c_int, remote_size: c_int) -> MpiResult<InterRole> {
    match root {
        MPI_ROOT => Ok(InterRole::Root),
        MPI_PROC_NULL => Ok(InterRole::ProcNull),
        r if (0..remote_size).contains(&r) => Ok(InterRole::Remote(r as usize)),
        r => err(
            MPI_ERR_ROOT,
            format!("root {r} is invalid on an intercommunicator whose remote group has {remote_size} processes (MPI_ROOT, MPI_PROC_NULL or a remote rank)"),
        ),
    }
}

/// A root argument of a rooted collective on an intracommunicator.
fn intra_root(root: c_int, size: c_int) -> MpiResult<usize> {
    if (0..size).contains(&root) {
        Ok(root as usize)
    } else {
        err(
            MPI_ERR_ROOT,
            format!("root {root} is out of range for a communicator of {size}"),
        )
    }
}
