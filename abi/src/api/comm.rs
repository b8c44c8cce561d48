//! Communicators: size, rank, remote size, test_inter, dup, split, free.

use super::{out, read};
use crate::consts::*;
use crate::error::err;
use crate::state::{with_state, Comm};
use crate::{call, export};
use ibdyn::traits::*;
use std::os::raw::c_int;

unsafe fn comm_size(comm: Handle, size: *mut c_int) -> c_int {
    call("MPI_Comm_size", comm, || {
        let n = with_state(|s| Ok(s.comm(comm)?.comm.raw().size()))?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

unsafe fn comm_rank(comm: Handle, rank: *mut c_int) -> c_int {
    call("MPI_Comm_rank", comm, || {
        let r = with_state(|s| Ok(s.comm(comm)?.comm.raw().rank()))?;
        // SAFETY: the caller's output argument.
        unsafe { out(rank, r, "rank") }
    })
}

unsafe fn comm_remote_size(comm: Handle, size: *mut c_int) -> c_int {
    call("MPI_Comm_remote_size", comm, || {
        let n = with_state(|s| {
            Ok(s.comm(comm)?
                .comm
                .inter("MPI_Comm_remote_size")?
                .remote_size())
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

unsafe fn comm_test_inter(comm: Handle, flag: *mut c_int) -> c_int {
    call("MPI_Comm_test_inter", comm, || {
        let inter = with_state(|s| Ok(matches!(s.comm(comm)?.comm, Comm::Inter(_))))?;
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(inter), "flag") }
    })
}

unsafe fn comm_dup(comm: Handle, newcomm: *mut Handle) -> c_int {
    call("MPI_Comm_dup", comm, || {
        let h = with_state(|s| {
            let e = s.comm(comm)?;
            let dup = match &e.comm {
                Comm::Intra(c) => Comm::Intra(c.duplicate()?),
                Comm::Inter(c) => Comm::Inter(c.duplicate()?),
            };
            let eh = e.errhandler;
            Ok(s.add_comm(dup, eh))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

unsafe fn comm_split(comm: Handle, color: c_int, key: c_int, newcomm: *mut Handle) -> c_int {
    call("MPI_Comm_split", comm, || {
        let colour = match color {
            MPI_UNDEFINED => None,
            c if c >= 0 => Some(c as u32),
            c => {
                return err(
                    MPI_ERR_ARG,
                    format!("colour {c} is invalid (>= 0, or MPI_UNDEFINED)"),
                )
            }
        };
        let h = with_state(|s| {
            let e = s.comm(comm)?;
            let intra = e
                .comm
                .intra("MPI_Comm_split (on intercommunicators: a later step)")?;
            let eh = e.errhandler;
            Ok(match intra.split(colour, key)? {
                Some(c) => s.add_comm(Comm::Intra(c), eh),
                None => MPI_COMM_NULL,
            })
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

unsafe fn comm_free(comm: *mut Handle) -> c_int {
    // SAFETY: the caller's in/out argument (checked for NULL).
    let h = unsafe { read(comm, "comm") }.unwrap_or(MPI_COMM_NULL);
    call("MPI_Comm_free", h, || {
        // SAFETY: as above.
        let h = unsafe { read(comm, "comm") }?;
        with_state(|s| {
            let e = s.remove_comm(h)?;
            match &e.comm {
                Comm::Intra(c) => c.free(),
                Comm::Inter(c) => c.free(),
            }
            Ok(())
        })?;
        // SAFETY: checked above.
        unsafe { out(comm, MPI_COMM_NULL, "comm") }
    })
}

export!(MPI_Comm_size, PMPI_Comm_size, comm_size, (comm: Handle, size: *mut c_int) -> c_int);
export!(MPI_Comm_rank, PMPI_Comm_rank, comm_rank, (comm: Handle, rank: *mut c_int) -> c_int);
export!(MPI_Comm_remote_size, PMPI_Comm_remote_size, comm_remote_size,
    (comm: Handle, size: *mut c_int) -> c_int);
export!(MPI_Comm_test_inter, PMPI_Comm_test_inter, comm_test_inter,
    (comm: Handle, flag: *mut c_int) -> c_int);
export!(MPI_Comm_dup, PMPI_Comm_dup, comm_dup, (comm: Handle, newcomm: *mut Handle) -> c_int);
export!(MPI_Comm_split, PMPI_Comm_split, comm_split,
    (comm: Handle, color: c_int, key: c_int, newcomm: *mut Handle) -> c_int);
export!(MPI_Comm_free, PMPI_Comm_free, comm_free, (comm: *mut Handle) -> c_int);
