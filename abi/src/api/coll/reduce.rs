//! Barrier, Bcast and the reductions (Reduce, Allreduce, Reduce_scatter(_block), Scan,
//! Exscan, Reduce_local), blocking and non-blocking; Op_create, Op_free, Op_commutative.

use super::framework::{colls, fix, fix_mut, run, Call, Colls};
use super::{in_place, inter_role, intra_root};
use crate::api::buffers::{recv_buf_of, send_buf_of, RecvBuf, SendBuf};
use crate::api::out;
use crate::consts::*;
use crate::derived::{self, Ty};
use crate::error::{err, MpiResult};
use crate::ops::{self, UserFn, UserFnC, UserFunc};
use crate::state::with_state;
use crate::{call, export};
use ibdyn_collectives::InterRole;
use std::ffi::c_void;
use std::os::raw::c_int;

/// The receive buffer and the contribution of a reduction into `count` elements at `recvbuf`:
/// with MPI_IN_PLACE the contribution is the receive buffer's current contents.
///
/// # Safety
/// The caller's buffers hold `count` elements of `ty` (MPI's rules).
unsafe fn reduction_bufs(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    ty: &Ty,
) -> MpiResult<(SendBuf<'static>, RecvBuf<'static>)> {
    let ip = in_place(sendbuf);
    // SAFETY: the caller's contract.
    let mut rb = unsafe { recv_buf_of(recvbuf, count, ty.clone(), ip) }?;
    let sb = if ip {
        SendBuf::Packed(rb.bytes().to_vec())
    } else {
        // SAFETY: the caller's contract.
        unsafe { send_buf_of(sendbuf, count, ty) }?
    };
    Ok((sb, rb))
}

unsafe fn barrier_impl(call: Call, name: &'static str) -> c_int {
    crate::call(name, call.comm, || {
        with_state(|s| match colls(s, &call)?.0 {
            Colls::Intra(rc) => {
                // SAFETY: `rc` is kept with the request.
                let cl = unsafe { fix(&*rc) };
                let none = RecvBuf::Direct(&mut []);
                run!(s, call, cl, store_intra, rc, none, barrier / ibarrier())
            }
            Colls::Inter(rc) => {
                // SAFETY: as above.
                let cl = unsafe { fix(&*rc) };
                let none = RecvBuf::Direct(&mut []);
                run!(s, call, cl, store_inter, rc, none, barrier / ibarrier())
            }
        })
    })
}

unsafe fn bcast_impl(
    call: Call,
    name: &'static str,
    buf: *mut c_void,
    count: i64,
    ty: Handle,
    root: c_int,
) -> c_int {
    crate::call(name, call.comm, || {
        let t = derived::resolve(ty, true)?;
        with_state(|s| {
            let (c, rank, size, rsize) = colls(s, &call)?;
            match c {
                Colls::Intra(rc) => {
                    let root = intra_root(root, size as c_int)?;
                    // SAFETY: the caller's buffer (the root's holds the data: loaded).
                    let mut rb = unsafe { recv_buf_of(buf, count, t, rank == root) }?;
                    // SAFETY: `rc` and the staging bytes are kept with the request.
                    let (cl, rv) = unsafe { (fix(&*rc), fix_mut(rb.bytes())) };
                    run!(s, call, cl, store_intra, rc, rb, bcast / ibcast(rv, root))
                }
                Colls::Inter(rc) => {
                    let role = inter_role(root, rsize as c_int)?;
                    let mut rb = match role {
                        InterRole::ProcNull => RecvBuf::Direct(&mut []),
                        // SAFETY: the caller's buffer (the root's holds the data).
                        _ => unsafe { recv_buf_of(buf, count, t, role == InterRole::Root) }?,
                    };
                    // SAFETY: as above.
                    let (cl, rv) = unsafe { (fix(&*rc), fix_mut(rb.bytes())) };
                    run!(s, call, cl, store_inter, rc, rb, bcast / ibcast(rv, role))
                }
            }
        })
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn reduce_impl(
    call: Call,
    name: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    ty: Handle,
    op: Handle,
    root: c_int,
) -> c_int {
    crate::call(name, call.comm, || {
        let t = derived::resolve(ty, true)?;
        let op = ops::reduction(op, ty, &t)?;
        with_state(|s| {
            let (c, rank, size, rsize) = colls(s, &call)?;
            match c {
                Colls::Intra(rc) => {
                    let root = intra_root(root, size as c_int)?;
                    let (sb, mut rb) = if rank == root {
                        // SAFETY: the caller's buffers.
                        unsafe { reduction_bufs(sendbuf, recvbuf, count, &t) }?
                    } else {
                        // SAFETY: the caller's contribution.
                        (
                            unsafe { send_buf_of(sendbuf, count, &t) }?,
                            RecvBuf::Direct(&mut []),
                        )
                    };
                    // SAFETY: kept with the request.
                    let (cl, sv, rv) = unsafe { (fix(&*rc), fix(&*sb), fix_mut(rb.bytes())) };
                    run!(
                        s,
                        call,
                        cl,
                        store_intra,
                        (rc, sb),
                        rb,
                        reduce / ireduce(sv, rv, &op, root)
                    )
                }
                Colls::Inter(rc) => {
                    let role = inter_role(root, rsize as c_int)?;
                    // SAFETY: the caller's buffers, per role.
                    let (sb, mut rb) = unsafe {
                        match role {
                            InterRole::Root => {
                                (SendBuf::Direct(&[]), recv_buf_of(recvbuf, count, t, false)?)
                            }
                            InterRole::ProcNull => (SendBuf::Direct(&[]), RecvBuf::Direct(&mut [])),
                            InterRole::Remote(_) => {
                                (send_buf_of(sendbuf, count, &t)?, RecvBuf::Direct(&mut []))
                            }
                        }
                    };
                    // SAFETY: kept with the request.
                    let (cl, sv, rv) = unsafe { (fix(&*rc), fix(&*sb), fix_mut(rb.bytes())) };
                    run!(
                        s,
                        call,
                        cl,
                        store_inter,
                        (rc, sb),
                        rb,
                        reduce / ireduce(sv, rv, &op, role)
                    )
                }
            }
        })
    })
}

/// The reductions whose every process gets a result: allreduce, scan, exscan,
/// reduce_scatter_block and reduce_scatter.
#[derive(Clone, Copy, PartialEq)]
enum AllKind {
    Allreduce,
    Scan,
    Exscan,
    ScatterBlock,
    Scatter,
}

#[allow(clippy::too_many_arguments)]
unsafe fn all_impl(
    call: Call,
    name: &'static str,
    kind: AllKind,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    counts: *const c_int,
    ty: Handle,
    op: Handle,
) -> c_int {
    crate::call(name, call.comm, || {
        let t = derived::resolve(ty, true)?;
        let op = ops::reduction(op, ty, &t)?;
        with_state(|s| {
            let (c, rank, size, _) = colls(s, &call)?;
            // The counts of reduce_scatter, per local rank, in elements of the datatype.
            let counts: Vec<usize> = if kind == AllKind::Scatter {
                if counts.is_null() {
                    return err(MPI_ERR_ARG, "recvcounts is NULL");
                }
                // SAFETY: the caller's array of one count per local rank.
                let cs = unsafe { std::slice::from_raw_parts(counts, size) };
                cs.iter()
                    .map(|&c| {
                        usize::try_from(c).map_err(|_| {
                            crate::error::MpiError::new(
                                MPI_ERR_COUNT,
                                format!("count {c} is negative"),
                            )
                        })
                    })
                    .collect::<MpiResult<_>>()?
            } else {
                Vec::new()
            };
            // Elements of the whole contribution and of this process's result.
            let (total, mine) = match kind {
                AllKind::ScatterBlock => (count * size as i64, count),
                AllKind::Scatter => (counts.iter().sum::<usize>() as i64, counts[rank] as i64),
                _ => (count, count),
            };
            let ip = in_place(sendbuf);
            if ip && matches!(c, Colls::Inter(_)) {
                return err(
                    MPI_ERR_ARG,
                    "MPI_IN_PLACE is not allowed on an intercommunicator",
                );
            }
            // SAFETY: the caller's buffers: the result (the whole contribution in place).
            let mut rb =
                unsafe { recv_buf_of(recvbuf, if ip { total } else { mine }, t.clone(), ip) }?;
            let sb = if ip {
                SendBuf::Packed(rb.bytes().to_vec())
            } else {
                // SAFETY: the caller's contribution.
                unsafe { send_buf_of(sendbuf, total, &t) }?
            };
            let per = t.size / op.elem_size().max(1);
            let ecounts: Vec<usize> = counts.iter().map(|c| c * per).collect();
            let mine_bytes = mine as usize * t.size;
            // SAFETY: kept with the request.
            let (sv, rv) = unsafe { (fix(&*sb), fix_mut(&mut rb.bytes()[..mine_bytes])) };
            match c {
                Colls::Intra(rc) => {
                    // SAFETY: as above.
                    let cl = unsafe { fix(&*rc) };
                    let keep = (rc, sb);
                    match kind {
                        AllKind::Allreduce => run!(
                            s,
                            call,
                            cl,
                            store_intra,
                            keep,
                            rb,
                            allreduce / iallreduce(sv, rv, &op)
                        ),
                        AllKind::Scan => run!(
                            s,
                            call,
                            cl,
                            store_intra,
                            keep,
                            rb,
                            scan / iscan(sv, rv, &op)
                        ),
                        AllKind::Exscan => run!(
                            s,
                            call,
                            cl,
                            store_intra,
                            keep,
                            rb,
                            exscan / iexscan(sv, rv, &op)
                        ),
                        AllKind::ScatterBlock => run!(
                            s,
                            call,
                            cl,
                            store_intra,
                            keep,
                            rb,
                            reduce_scatter_block / ireduce_scatter_block(sv, rv, &op)
                        ),
                        AllKind::Scatter => run!(
                            s,
                            call,
                            cl,
                            store_intra,
                            keep,
                            rb,
                            reduce_scatter / ireduce_scatter(sv, rv, &ecounts, &op)
                        ),
                    }
                }
                Colls::Inter(rc) => {
                    // SAFETY: as above.
                    let cl = unsafe { fix(&*rc) };
                    let keep = (rc, sb);
                    macro_rules! inter {
                        ($($op:tt)*) => { run!(s, call, cl, store_inter, keep, rb, $($op)*) };
                    }
                    match kind {
                        AllKind::Allreduce => inter!(allreduce / iallreduce(sv, rv, &op)),
                        AllKind::ScatterBlock => {
                            inter!(reduce_scatter_block / ireduce_scatter_block(sv, rv, &op))
                        }
                        AllKind::Scatter => {
                            inter!(reduce_scatter / ireduce_scatter(sv, rv, &ecounts, &op))
                        }
                        AllKind::Scan | AllKind::Exscan => {
                            err(MPI_ERR_COMM, format!("{name} needs an intracommunicator"))
                        }
                    }
                }
            }
        })
    })
}

pub(crate) unsafe fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    ty: Handle,
    op: Handle,
) -> c_int {
    call("MPI_Reduce_local", MPI_COMM_SELF, || {
        let t = derived::resolve(ty, true)?;
        let o = ops::reduction(op, ty, &t)?;
        // SAFETY: the caller's buffers of `count` elements.
        let (sb, mut rb) = unsafe {
            (
                send_buf_of(inbuf, count.into(), &t)?,
                recv_buf_of(inoutbuf, count.into(), t, true)?,
            )
        };
        o.apply(&sb, rb.bytes());
        rb.finish(usize::MAX);
        Ok(())
    })
}

fn op_create_of(name: &str, f: Option<UserFunc>, commute: c_int, op: *mut Handle) -> c_int {
    call(name, MPI_COMM_SELF, || {
        let Some(f) = f else {
            return err(MPI_ERR_ARG, "user_fn is NULL");
        };
        // SAFETY: the caller's output argument.
        unsafe { out(op, ops::create(f, commute != 0), "op") }
    })
}

unsafe fn op_create(f: Option<UserFn>, commute: c_int, op: *mut Handle) -> c_int {
    op_create_of("MPI_Op_create", f.map(UserFunc::Int), commute, op)
}

unsafe fn op_create_c(f: Option<UserFnC>, commute: c_int, op: *mut Handle) -> c_int {
    op_create_of("MPI_Op_create_c", f.map(UserFunc::Count), commute, op)
}

unsafe fn op_free(op: *mut Handle) -> c_int {
    call("MPI_Op_free", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        ops::free(unsafe { crate::api::read(op, "op") }?)?;
        // SAFETY: as above.
        unsafe { out(op, MPI_OP_NULL, "op") }
    })
}

unsafe fn op_commutative(op: Handle, commute: *mut c_int) -> c_int {
    call("MPI_Op_commutative", MPI_COMM_SELF, || {
        let c = ops::commutative(op)?;
        // SAFETY: the caller's output argument.
        unsafe { out(commute, c_int::from(c), "commute") }
    })
}

const B: *mut Handle = std::ptr::null_mut();

/// The blocking and non-blocking entry points of one collective.
macro_rules! pair {
    ($blocking:ident, $nb:ident, $imp:ident, $name:literal, $iname:literal,
     ($($arg:ident : $ty:ty),*) => ($($pass:expr),*)) => {
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $blocking($($arg: $ty,)* comm: Handle) -> c_int {
            // SAFETY: passed through.
            unsafe { $imp(Call { comm, request: B }, $name, $($pass),*) }
        }
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $nb($($arg: $ty,)* comm: Handle, request: *mut Handle) -> c_int {
            // SAFETY: passed through.
            unsafe { $imp(Call { comm, request }, $iname, $($pass),*) }
        }
    };
}

unsafe fn barrier(comm: Handle) -> c_int {
    // SAFETY: no pointers.
    unsafe { barrier_impl(Call { comm, request: B }, "MPI_Barrier") }
}
pub(crate) unsafe fn ibarrier(comm: Handle, request: *mut Handle) -> c_int {
    // SAFETY: the caller's output argument.
    unsafe { barrier_impl(Call { comm, request }, "MPI_Ibarrier") }
}
pair!(bcast, ibcast, bcast_impl, "MPI_Bcast", "MPI_Ibcast",
    (buf: *mut c_void, count: c_int, ty: Handle, root: c_int) => (buf, count.into(), ty, root));
pair!(bcast_c, ibcast_c, bcast_impl, "MPI_Bcast_c", "MPI_Ibcast_c",
    (buf: *mut c_void, count: i64, ty: Handle, root: c_int) => (buf, count, ty, root));
pair!(reduce, ireduce, reduce_impl, "MPI_Reduce", "MPI_Ireduce",
    (sb: *const c_void, rb: *mut c_void, count: c_int, ty: Handle, op: Handle, root: c_int)
    => (sb, rb, count.into(), ty, op, root));
pair!(allreduce, iallreduce, all_impl, "MPI_Allreduce", "MPI_Iallreduce",
    (sb: *const c_void, rb: *mut c_void, count: c_int, ty: Handle, op: Handle)
    => (AllKind::Allreduce, sb, rb, count.into(), std::ptr::null(), ty, op));
pair!(allreduce_c, iallreduce_c, all_impl, "MPI_Allreduce_c", "MPI_Iallreduce_c",
    (sb: *const c_void, rb: *mut c_void, count: i64, ty: Handle, op: Handle)
    => (AllKind::Allreduce, sb, rb, count, std::ptr::null(), ty, op));
pair!(scan, iscan, all_impl, "MPI_Scan", "MPI_Iscan",
    (sb: *const c_void, rb: *mut c_void, count: c_int, ty: Handle, op: Handle)
    => (AllKind::Scan, sb, rb, count.into(), std::ptr::null(), ty, op));
pair!(exscan, iexscan, all_impl, "MPI_Exscan", "MPI_Iexscan",
    (sb: *const c_void, rb: *mut c_void, count: c_int, ty: Handle, op: Handle)
    => (AllKind::Exscan, sb, rb, count.into(), std::ptr::null(), ty, op));
pair!(reduce_scatter_block, ireduce_scatter_block, all_impl, "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block",
    (sb: *const c_void, rb: *mut c_void, count: c_int, ty: Handle, op: Handle)
    => (AllKind::ScatterBlock, sb, rb, count.into(), std::ptr::null(), ty, op));
pair!(reduce_scatter, ireduce_scatter, all_impl, "MPI_Reduce_scatter", "MPI_Ireduce_scatter",
    (sb: *const c_void, rb: *mut c_void, counts: *const c_int, ty: Handle, op: Handle)
    => (AllKind::Scatter, sb, rb, 0, counts, ty, op));

export!(MPI_Barrier, PMPI_Barrier, barrier, (comm: Handle) -> c_int);
export!(MPI_Ibarrier, PMPI_Ibarrier, ibarrier, (comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Bcast, PMPI_Bcast, bcast,
    (buffer: *mut c_void, count: c_int, datatype: Handle, root: c_int, comm: Handle) -> c_int);
export!(MPI_Ibcast, PMPI_Ibcast, ibcast,
    (buffer: *mut c_void, count: c_int, datatype: Handle, root: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Bcast_c, PMPI_Bcast_c, bcast_c,
    (buffer: *mut c_void, count: i64, datatype: Handle, root: c_int, comm: Handle) -> c_int);
export!(MPI_Ibcast_c, PMPI_Ibcast_c, ibcast_c,
    (buffer: *mut c_void, count: i64, datatype: Handle, root: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Reduce, PMPI_Reduce, reduce,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     root: c_int, comm: Handle) -> c_int);
export!(MPI_Ireduce, PMPI_Ireduce, ireduce,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     root: c_int, comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Allreduce, PMPI_Allreduce, allreduce,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     comm: Handle) -> c_int);
export!(MPI_Iallreduce, PMPI_Iallreduce, iallreduce,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Allreduce_c, PMPI_Allreduce_c, allreduce_c,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle,
     comm: Handle) -> c_int);
export!(MPI_Iallreduce_c, PMPI_Iallreduce_c, iallreduce_c,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle,
     comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Scan, PMPI_Scan, scan,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     comm: Handle) -> c_int);
export!(MPI_Iscan, PMPI_Iscan, iscan,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Exscan, PMPI_Exscan, exscan,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     comm: Handle) -> c_int);
export!(MPI_Iexscan, PMPI_Iexscan, iexscan,
    (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle,
     comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block, reduce_scatter_block,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: Handle, op: Handle,
     comm: Handle) -> c_int);
export!(MPI_Ireduce_scatter_block, PMPI_Ireduce_scatter_block, ireduce_scatter_block,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: Handle, op: Handle,
     comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Reduce_scatter, PMPI_Reduce_scatter, reduce_scatter,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: Handle,
     op: Handle, comm: Handle) -> c_int);
export!(MPI_Ireduce_scatter, PMPI_Ireduce_scatter, ireduce_scatter,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: Handle,
     op: Handle, comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Reduce_local, PMPI_Reduce_local, reduce_local,
    (inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle) -> c_int);
export!(MPI_Op_create, PMPI_Op_create, op_create,
    (user_fn: Option<UserFn>, commute: c_int, op: *mut Handle) -> c_int);
export!(MPI_Op_create_c, PMPI_Op_create_c, op_create_c,
    (user_fn: Option<UserFnC>, commute: c_int, op: *mut Handle) -> c_int);
export!(MPI_Op_free, PMPI_Op_free, op_free, (op: *mut Handle) -> c_int);
export!(MPI_Op_commutative, PMPI_Op_commutative, op_commutative,
    (op: Handle, commute: *mut c_int) -> c_int);
