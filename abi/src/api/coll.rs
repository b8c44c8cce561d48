//! Collectives: Barrier, Bcast, Reduce, Allreduce (predefined operations on the numeric
//! predefined datatypes), on intra- and intercommunicators. They run the byte-level
//! algorithms of `ibdyn-collectives` on the communicator's cached collective state.

use super::{recv_bytes, send_bytes};
use crate::consts::*;
use crate::datatype;
use crate::error::{err, MpiResult};
use crate::state::{with_state, Comm};
use crate::{call, export};
use ibdyn::traits::*;
use ibdyn_collectives::{BuiltinOp, InterRole, Op};
use std::ffi::c_void;
use std::os::raw::c_int;

/// The reduction `op` on elements of datatype `ty`.
fn reduction(op: Handle, ty: Handle) -> MpiResult<Op> {
    let builtin = match op {
        MPI_SUM => BuiltinOp::Sum,
        MPI_PROD => BuiltinOp::Prod,
        MPI_MIN => BuiltinOp::Min,
        MPI_MAX => BuiltinOp::Max,
        MPI_LAND => BuiltinOp::LogicalAnd,
        MPI_LOR => BuiltinOp::LogicalOr,
        MPI_LXOR => BuiltinOp::LogicalXor,
        MPI_BAND => BuiltinOp::BitAnd,
        MPI_BOR => BuiltinOp::BitOr,
        MPI_BXOR => BuiltinOp::BitXor,
        MPI_OP_NULL => return err(MPI_ERR_OP, "MPI_OP_NULL is not an operation"),
        other => {
            return err(
                MPI_ERR_OP,
                format!("operation {other:#x} is not supported yet (the predefined arithmetic, logical and bitwise ones are)"),
            )
        }
    };
    let Some(elem) = datatype::lookup(ty)?.elem else {
        return err(
            MPI_ERR_OP,
            format!("predefined operations are not defined on datatype {ty:#x} (yet)"),
        );
    };
    Ok(Op::builtin(builtin, elem)?)
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

unsafe fn barrier(comm: Handle) -> c_int {
    call("MPI_Barrier", comm, || {
        with_state(|s| {
            match &s.comm(comm)?.comm {
                Comm::Intra(c) => c.barrier()?,
                Comm::Inter(c) => c.barrier()?,
            }
            Ok(())
        })
    })
}

unsafe fn bcast(buf: *mut c_void, count: c_int, ty: Handle, root: c_int, comm: Handle) -> c_int {
    call("MPI_Bcast", comm, || {
        with_state(|s| {
            let raw = s.comm(comm)?.comm.raw();
            if raw.is_inter() {
                let role = inter_role(root, raw.remote_size())?;
                // SAFETY: the caller's buffer, used during the call only (the root's
                // group's other processes pass none).
                let bytes = match role {
                    InterRole::ProcNull => &mut [],
                    _ => unsafe { recv_bytes(buf, count, ty) }?,
                };
                ibdyn_collectives::inter_collectives_of(raw)?.bcast(bytes, role)?;
            } else {
                let root = intra_root(root, raw.size())?;
                // SAFETY: the caller's buffer, used during the call only.
                let bytes = unsafe { recv_bytes(buf, count, ty) }?;
                ibdyn_collectives::collectives_of(raw)?.bcast(bytes, root)?;
            }
            Ok(())
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    ty: Handle,
    op: Handle,
    root: c_int,
    comm: Handle,
) -> c_int {
    call("MPI_Reduce", comm, || {
        let op = reduction(op, ty)?;
        with_state(|s| {
            let raw = s.comm(comm)?.comm.raw();
            if raw.is_inter() {
                let role = inter_role(root, raw.remote_size())?;
                let ic = ibdyn_collectives::inter_collectives_of(raw)?;
                match role {
                    // SAFETY: the root's result buffer, used during the call only.
                    InterRole::Root => {
                        ic.reduce(&[], unsafe { recv_bytes(recvbuf, count, ty) }?, &op, role)?
                    }
                    InterRole::ProcNull => ic.reduce(&[], &mut [], &op, role)?,
                    // SAFETY: the contribution, read during the call only.
                    InterRole::Remote(_) => ic.reduce(
                        unsafe { send_bytes(sendbuf, count, ty) }?,
                        &mut [],
                        &op,
                        role,
                    )?,
                }
                return Ok(());
            }
            let root = intra_root(root, raw.size())?;
            let colls = ibdyn_collectives::collectives_of(raw)?;
            if raw.rank() as usize == root {
                // SAFETY: the root's result buffer, used during the call only.
                let recv = unsafe { recv_bytes(recvbuf, count, ty) }?;
                if sendbuf as usize == MPI_IN_PLACE {
                    let own = recv.to_vec();
                    colls.reduce(&own, recv, &op, root)?;
                } else {
                    // SAFETY: the contribution, read during the call only.
                    let send = unsafe { send_bytes(sendbuf, count, ty) }?;
                    colls.reduce(send, recv, &op, root)?;
                }
            } else {
                // SAFETY: the contribution, read during the call only.
                let send = unsafe { send_bytes(sendbuf, count, ty) }?;
                colls.reduce(send, &mut [], &op, root)?;
            }
            Ok(())
        })
    })
}

unsafe fn allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    ty: Handle,
    op: Handle,
    comm: Handle,
) -> c_int {
    call("MPI_Allreduce", comm, || {
        let op = reduction(op, ty)?;
        // SAFETY: the caller's result buffer, used during the call only.
        let recv = unsafe { recv_bytes(recvbuf, count, ty) }?;
        let in_place = sendbuf as usize == MPI_IN_PLACE;
        let own;
        let send: &[u8] = if in_place {
            own = recv.to_vec();
            &own
        } else {
            // SAFETY: the contribution, read during the call only.
            unsafe { send_bytes(sendbuf, count, ty) }?
        };
        with_state(|s| {
            let raw = s.comm(comm)?.comm.raw();
            if in_place && raw.is_inter() {
                return err(
                    MPI_ERR_ARG,
                    "MPI_IN_PLACE is not allowed on an intercommunicator",
                );
            }
            if raw.is_inter() {
                ibdyn_collectives::inter_collectives_of(raw)?.allreduce(send, recv, &op)?;
            } else {
                ibdyn_collectives::collectives_of(raw)?.allreduce(send, recv, &op)?;
            }
            Ok(())
        })
    })
}

export!(MPI_Barrier, PMPI_Barrier, barrier, (comm: Handle) -> c_int);
export!(MPI_Bcast, PMPI_Bcast, bcast,
    (buffer: *mut c_void, count: c_int, datatype: Handle, root: c_int, comm: Handle) -> c_int);
export!(MPI_Reduce, PMPI_Reduce, reduce,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     root: c_int, comm: Handle) -> c_int);
export!(MPI_Allreduce, PMPI_Allreduce, allreduce,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     comm: Handle) -> c_int);
