//! Neighbor collectives (MPI_Neighbor_allgather(v), _alltoall(v/w), their `I` and `_c`
//! forms) on Cartesian, graph and distributed-graph communicators: each block goes straight
//! to or from one neighbor by point-to-point on the communicator's collective context (never
//! matched by user receives), tagged by its edge's slot (`crate::topology::Edge`) so that
//! two edges between the same processes stay apart. MPI_PROC_NULL neighbors move nothing
//! and leave their receive block untouched. The `I` forms complete within the call.

use super::framework::{done, Call};
use crate::api::buffers::{recv_buf, send_buf};
use crate::api::read_array;
use crate::consts::*;
use crate::derived;
use crate::error::{err, MpiError, MpiResult};
use crate::state::with_state;
use crate::topology::Edge;
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;

/// Tags of neighbor traffic: this minus the edge's slot.
const TAG: i32 = i32::MAX - 64;

/// One block: the caller's address, element count and datatype.
type Block = (usize, i64, Handle);

/// The in- and out-edges of this process on `comm`.
fn edges(comm: Handle) -> MpiResult<(Vec<Edge>, Vec<Edge>)> {
    with_state(|s| {
        let e = s.comm(comm)?;
        let me = e.comm.raw().rank();
        match &e.topo {
            Some(t) => Ok(t.neighbors(me)),
            None => err(
                MPI_ERR_TOPOLOGY,
                format!("communicator {comm:#x} has no process topology: neighbor collectives need MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create(_adjacent)"),
            ),
        }
    })
}

/// In-neighbors of this process on `comm` (the entries of a per-in-neighbor array).
pub(super) fn in_degree(comm: Handle) -> MpiResult<usize> {
    Ok(edges(comm)?.0.len())
}

/// Out-neighbors of this process on `comm`.
pub(super) fn out_degree(comm: Handle) -> MpiResult<usize> {
    Ok(edges(comm)?.1.len())
}

fn extent(ty: Handle) -> MpiResult<isize> {
    Ok(derived::resolve(ty, true)?.extent)
}

/// Moves `sends[j]` to out-edge j and `recvs[i]` from in-edge i, then completes `call`.
fn exchange(
    call: &Call,
    ins: &[Edge],
    outs: &[Edge],
    sends: Vec<Block>,
    recvs: Vec<Block>,
) -> MpiResult<()> {
    // SAFETY: the caller's buffers, used during this call only.
    let sb = sends
        .iter()
        .map(|&(p, n, t)| unsafe { send_buf(p as *const c_void, n, t) })
        .collect::<MpiResult<Vec<_>>>()?;
    // SAFETY: as above.
    let mut rb = recvs
        .iter()
        .map(|&(p, n, t)| unsafe { recv_buf(p as *mut c_void, n, t) })
        .collect::<MpiResult<Vec<_>>>()?;
    let raw = with_state(|s| Ok(s.comm(call.comm)?.comm.raw().collective_view()))?;
    // With the state released, the waits let other threads in (MPI_THREAD_MULTIPLE).
    let got = crate::threads::yielding(|| {
        let mut reqs = Vec::with_capacity(ins.len() + outs.len());
        for (e, b) in ins.iter().zip(rb.iter_mut()) {
            reqs.push(raw.irecv(b.bytes(), e.rank, TAG - e.slot)?);
        }
        let nrecv = reqs.len();
        for (e, b) in outs.iter().zip(&sb) {
            reqs.push(raw.isend(b, e.rank, TAG - e.slot)?);
        }
        let st = ibdyn_intercomm::wait_all(reqs).map_err(MpiError::from)?;
        Ok::<_, MpiError>(
            st.into_iter()
                .take(nrecv)
                .map(|s| s.count)
                .collect::<Vec<_>>(),
        )
    })?;
    for ((b, n), e) in rb.into_iter().zip(got).zip(ins) {
        if e.rank != MPI_PROC_NULL {
            b.finish(n);
        }
    }
    with_state(|s| done(s, call))
}

/// Blocks of one buffer: `counts[i]` elements at `displs[i]` elements (or bytes, for `w`).
fn blocks(
    buf: usize,
    counts: &[i64],
    displs: &[i64],
    types: &[Handle],
    bytes: bool,
) -> MpiResult<Vec<Block>> {
    (0..counts.len())
        .map(|i| {
            let at = if bytes {
                displs[i] as isize
            } else {
                displs[i] as isize * extent(types[i])?
            };
            Ok((buf.wrapping_add_signed(at), counts[i], types[i]))
        })
        .collect()
}

/// `n` entries of an array argument, widened.
///
/// # Safety
/// `p` is valid for `n` reads when `n > 0`.
unsafe fn arr<T: Copy + TryInto<i64>>(p: *const T, n: usize, what: &str) -> MpiResult<Vec<i64>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }
        .iter()
        .map(|&v| v.try_into().unwrap_or(-1))
        .collect())
}

/// The regular forms: `same` sends the one send block to every out-neighbor (allgather),
/// otherwise block j goes to out-neighbor j (alltoall).
#[allow(clippy::too_many_arguments)]
fn regular(
    name: &str,
    c: Call,
    same: bool,
    sb: usize,
    sc: i64,
    st: Handle,
    rb: usize,
    rc: i64,
    rt: Handle,
) -> c_int {
    call(name, c.comm, || {
        let (ins, outs) = edges(c.comm)?;
        let (se, re) = (extent(st)?, extent(rt)?);
        let step = if same { 0 } else { sc as isize * se };
        let sends = (0..outs.len())
            .map(|j| (sb.wrapping_add_signed(j as isize * step), sc, st))
            .collect();
        let recvs = (0..ins.len())
            .map(|i| {
                (
                    rb.wrapping_add_signed(i as isize * rc as isize * re),
                    rc,
                    rt,
                )
            })
            .collect();
        exchange(&c, &ins, &outs, sends, recvs)
    })
}

macro_rules! regular_forms {
    ($($f:ident $name:literal $count:ty, same = $same:expr;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn $f(sb: *const c_void, sc: $count, st: Handle, rb: *mut c_void, rc: $count, rt: Handle, comm: Handle, request: *mut Handle) -> c_int {
            regular($name, Call { comm, request }, $same, sb as usize, i64::from(sc), st, rb as usize, i64::from(rc), rt)
        }
    )*};
}

regular_forms! {
    ineighbor_allgather "MPI_Ineighbor_allgather" c_int, same = true;
    ineighbor_allgather_c "MPI_Ineighbor_allgather_c" i64, same = true;
    ineighbor_alltoall "MPI_Ineighbor_alltoall" c_int, same = false;
    ineighbor_alltoall_c "MPI_Ineighbor_alltoall_c" i64, same = false;
}

macro_rules! blocking_of {
    ($($f:ident => $nb:ident $count:ty;)*) => {$(
        unsafe fn $f(sb: *const c_void, sc: $count, st: Handle, rb: *mut c_void, rc: $count, rt: Handle, comm: Handle) -> c_int {
            // SAFETY: passed on; a null request makes the call blocking.
            unsafe { $nb(sb, sc, st, rb, rc, rt, comm, std::ptr::null_mut()) }
        }
    )*};
}

blocking_of! {
    neighbor_allgather => ineighbor_allgather c_int;
    neighbor_allgather_c => ineighbor_allgather_c i64;
    neighbor_alltoall => ineighbor_alltoall c_int;
    neighbor_alltoall_c => ineighbor_alltoall_c i64;
}

/// The v and w forms: per-neighbor counts and displacements (and types, for w).
#[allow(clippy::too_many_arguments)]
fn varied(
    call: Call,
    sb: usize,
    send: Option<(Vec<i64>, Vec<i64>, Vec<Handle>)>,
    rb: usize,
    recv: (Vec<i64>, Vec<i64>, Vec<Handle>),
    bytes: bool,
    ins: &[Edge],
    outs: &[Edge],
) -> MpiResult<()> {
    let sends = match send {
        Some((c, d, t)) => blocks(sb, &c, &d, &t, bytes)?,
        None => Vec::new(),
    };
    let recvs = blocks(rb, &recv.0, &recv.1, &recv.2, bytes)?;
    exchange(&call, ins, outs, sends, recvs)
}

macro_rules! v_forms {
    ($($f:ident $name:literal $count:ty, $displ:ty;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn $f(sb: *const c_void, sc: $count, st: Handle, rb: *mut c_void, rcs: *const $count, rds: *const $displ, rt: Handle, comm: Handle, request: *mut Handle) -> c_int {
            call($name, comm, || {
                let (ins, outs) = edges(comm)?;
                // SAFETY: the caller's arrays, one entry per in-neighbor.
                let (c, d) = unsafe { (arr(rcs, ins.len(), "recvcounts")?, arr(rds, ins.len(), "displs")?) };
                let send = (vec![i64::from(sc); outs.len()], vec![0; outs.len()], vec![st; outs.len()]);
                let recv = (c, d, vec![rt; ins.len()]);
                varied(Call { comm, request }, sb as usize, Some(send), rb as usize, recv, false, &ins, &outs)
            })
        }
    )*};
}

v_forms! {
    ineighbor_allgatherv "MPI_Ineighbor_allgatherv" c_int, c_int;
    ineighbor_allgatherv_c "MPI_Ineighbor_allgatherv_c" i64, isize;
}

macro_rules! vv_forms {
    ($($f:ident $name:literal $count:ty, $displ:ty;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn $f(sb: *const c_void, scs: *const $count, sds: *const $displ, st: Handle, rb: *mut c_void, rcs: *const $count, rds: *const $displ, rt: Handle, comm: Handle, request: *mut Handle) -> c_int {
            call($name, comm, || {
                let (ins, outs) = edges(comm)?;
                // SAFETY: the caller's arrays, one entry per neighbor.
                let send = unsafe { (arr(scs, outs.len(), "sendcounts")?, arr(sds, outs.len(), "sdispls")?, vec![st; outs.len()]) };
                // SAFETY: as above.
                let recv = unsafe { (arr(rcs, ins.len(), "recvcounts")?, arr(rds, ins.len(), "rdispls")?, vec![rt; ins.len()]) };
                varied(Call { comm, request }, sb as usize, Some(send), rb as usize, recv, false, &ins, &outs)
            })
        }
    )*};
}

vv_forms! {
    ineighbor_alltoallv "MPI_Ineighbor_alltoallv" c_int, c_int;
    ineighbor_alltoallv_c "MPI_Ineighbor_alltoallv_c" i64, isize;
}

macro_rules! w_forms {
    ($($f:ident $name:literal $count:ty;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn $f(sb: *const c_void, scs: *const $count, sds: *const isize, sts: *const Handle, rb: *mut c_void, rcs: *const $count, rds: *const isize, rts: *const Handle, comm: Handle, request: *mut Handle) -> c_int {
            call($name, comm, || {
                let (ins, outs) = edges(comm)?;
                // SAFETY: the caller's arrays, one entry per neighbor.
                let send = unsafe { (arr(scs, outs.len(), "sendcounts")?, arr(sds, outs.len(), "sdispls")?, read_array(sts, outs.len(), "sendtypes")?) };
                // SAFETY: as above.
                let recv = unsafe { (arr(rcs, ins.len(), "recvcounts")?, arr(rds, ins.len(), "rdispls")?, read_array(rts, ins.len(), "recvtypes")?) };
                varied(Call { comm, request }, sb as usize, Some(send), rb as usize, recv, true, &ins, &outs)
            })
        }
    )*};
}

w_forms! {
    ineighbor_alltoallw "MPI_Ineighbor_alltoallw" c_int;
    ineighbor_alltoallw_c "MPI_Ineighbor_alltoallw_c" i64;
}

/// The blocking forms of the v and w collectives: the `I` form with a null request.
macro_rules! blocking_v {
    ($($f:ident => $nb:ident ($($a:ident : $t:ty),*);)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f($($a: $t,)* comm: Handle) -> c_int {
            // SAFETY: passed on; a null request makes the call blocking.
            unsafe { $nb($($a,)* comm, std::ptr::null_mut()) }
        }
    )*};
}

blocking_v! {
    neighbor_allgatherv => ineighbor_allgatherv (sb: *const c_void, sc: c_int, st: Handle, rb: *mut c_void, rcs: *const c_int, rds: *const c_int, rt: Handle);
    neighbor_allgatherv_c => ineighbor_allgatherv_c (sb: *const c_void, sc: i64, st: Handle, rb: *mut c_void, rcs: *const i64, rds: *const isize, rt: Handle);
    neighbor_alltoallv => ineighbor_alltoallv (sb: *const c_void, scs: *const c_int, sds: *const c_int, st: Handle, rb: *mut c_void, rcs: *const c_int, rds: *const c_int, rt: Handle);
    neighbor_alltoallv_c => ineighbor_alltoallv_c (sb: *const c_void, scs: *const i64, sds: *const isize, st: Handle, rb: *mut c_void, rcs: *const i64, rds: *const isize, rt: Handle);
    neighbor_alltoallw => ineighbor_alltoallw (sb: *const c_void, scs: *const c_int, sds: *const isize, sts: *const Handle, rb: *mut c_void, rcs: *const c_int, rds: *const isize, rts: *const Handle);
    neighbor_alltoallw_c => ineighbor_alltoallw_c (sb: *const c_void, scs: *const i64, sds: *const isize, sts: *const Handle, rb: *mut c_void, rcs: *const i64, rds: *const isize, rts: *const Handle);
}

macro_rules! exports {
    ($($m:ident $pm:ident $f:ident ($($a:ident : $t:ty),*);)*) => {$(
        export!($m, $pm, $f, ($($a: $t),*) -> c_int);
    )*};
}

exports! {
    MPI_Neighbor_allgather PMPI_Neighbor_allgather neighbor_allgather (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, comm: Handle);
    MPI_Neighbor_allgather_c PMPI_Neighbor_allgather_c neighbor_allgather_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, comm: Handle);
    MPI_Ineighbor_allgather PMPI_Ineighbor_allgather ineighbor_allgather (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Ineighbor_allgather_c PMPI_Ineighbor_allgather_c ineighbor_allgather_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Neighbor_alltoall PMPI_Neighbor_alltoall neighbor_alltoall (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, comm: Handle);
    MPI_Neighbor_alltoall_c PMPI_Neighbor_alltoall_c neighbor_alltoall_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, comm: Handle);
    MPI_Ineighbor_alltoall PMPI_Ineighbor_alltoall ineighbor_alltoall (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Ineighbor_alltoall_c PMPI_Ineighbor_alltoall_c ineighbor_alltoall_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Neighbor_allgatherv PMPI_Neighbor_allgatherv neighbor_allgatherv (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle, comm: Handle);
    MPI_Neighbor_allgatherv_c PMPI_Neighbor_allgatherv_c neighbor_allgatherv_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle, comm: Handle);
    MPI_Ineighbor_allgatherv PMPI_Ineighbor_allgatherv ineighbor_allgatherv (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Ineighbor_allgatherv_c PMPI_Ineighbor_allgatherv_c ineighbor_allgatherv_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Neighbor_alltoallv PMPI_Neighbor_alltoallv neighbor_alltoallv (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Handle, comm: Handle);
    MPI_Neighbor_alltoallv_c PMPI_Neighbor_alltoallv_c neighbor_alltoallv_c (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: Handle, comm: Handle);
    MPI_Ineighbor_alltoallv PMPI_Ineighbor_alltoallv ineighbor_alltoallv (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Ineighbor_alltoallv_c PMPI_Ineighbor_alltoallv_c ineighbor_alltoallv_c (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Neighbor_alltoallw PMPI_Neighbor_alltoallw neighbor_alltoallw (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const isize, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const isize, recvtypes: *const Handle, comm: Handle);
    MPI_Neighbor_alltoallw_c PMPI_Neighbor_alltoallw_c neighbor_alltoallw_c (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const Handle, comm: Handle);
    MPI_Ineighbor_alltoallw PMPI_Ineighbor_alltoallw ineighbor_alltoallw (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const isize, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const isize, recvtypes: *const Handle, comm: Handle, request: *mut Handle);
    MPI_Ineighbor_alltoallw_c PMPI_Ineighbor_alltoallw_c ineighbor_alltoallw_c (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const Handle, comm: Handle, request: *mut Handle);
}
