//! Persistent collectives (MPI 4): MPI_<op>_init keeps the arguments; each MPI_Start begins
//! the non-blocking MPI_I<op> with them, and the persistent request carries that operation
//! until it completes (then turns inactive, ready for the next start). The buffers stay the
//! caller's until the request is freed, as MPI requires; the count, displacement and type
//! arrays are copied at the init call (programs and mpi4py free them once it returns).

use super::super::out;
use super::init_checks;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::request::{ReqEntry, Restart};
use crate::state::{with_state, State};
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::rc::Rc;

/// Stores an inactive persistent collective on `comm`, once `check` has found its arguments
/// right.
fn init(
    name: &str,
    comm: Handle,
    info: Handle,
    request: *mut Handle,
    restart: Rc<Restart>,
    check: impl FnOnce() -> MpiResult<()>,
) -> c_int {
    call(name, comm, || {
        super::super::info::entries(info)?;
        check()?;
        let h = with_state(|s| {
            let ci = s.comm_index(comm)?;
            Ok(s.add_req(ReqEntry::restartable(ci, restart)))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

/// The start of `h` if it is an inactive persistent collective; an active one is an error.
pub fn restart_of(s: &State, h: Handle) -> MpiResult<Option<Rc<Restart>>> {
    let i = s.req_index(h)?;
    let e = s.reqs.get(i).expect("req_index checked the slot");
    let Some(r) = &e.restart else {
        return Ok(None);
    };
    if e.active.is_some() {
        return err(
            MPI_ERR_REQUEST,
            format!("request {h:#x} is active already: complete it before starting it again"),
        );
    }
    Ok(Some(r.clone()))
}

/// Starts persistent collective `h`: runs the non-blocking call, then moves the operation it
/// started into `h`.
pub fn start(h: Handle, restart: &Restart) -> MpiResult<()> {
    let mut started = MPI_REQUEST_NULL;
    let rc = restart(&mut started);
    if rc != MPI_SUCCESS {
        // The non-blocking call has reported it through the communicator's handler already.
        return Err(MpiError::new(
            rc,
            "the persistent collective could not start",
        ));
    }
    with_state(|s| {
        let j = s.req_index(started)?;
        let op = s.reqs.remove(j).and_then(|e| e.active);
        let i = s.req_index(h)?;
        let e = s.reqs.get_mut(i).expect("req_index checked the slot");
        e.active = op;
        e.cancelled = false;
        s.colls.note(i);
        Ok(())
    })
}

/// A copy of an array argument: one entry per process of the (remote) group, or none for a
/// NULL pointer (an argument significant only at the root).
struct Kept<T>(Option<Vec<T>>);

impl<T: Copy> Kept<T> {
    /// # Safety
    /// `p` is NULL or valid for `n` reads.
    unsafe fn of(p: *const T, n: usize) -> Kept<T> {
        if p.is_null() {
            return Kept(None);
        }
        // SAFETY: the caller's contract.
        Kept(Some(unsafe { std::slice::from_raw_parts(p, n) }.to_vec()))
    }

    fn ptr(&self) -> *const T {
        self.0.as_ref().map_or(std::ptr::null(), |v| v.as_ptr())
    }
}

/// Entries of the per-process arrays (`all`), and of the per-neighbor ones (`ins`, `outs`).
fn all(comm: Handle) -> MpiResult<usize> {
    super::array_len(comm)
}
use super::neighbor::{in_degree as ins, out_degree as outs};

/// `MPI_<op>_init` over `MPI_I<op>`: `$f` keeps the arguments for `$nb`, with copies of the
/// arrays named in brackets (`[len => arrays]`: their length comes from `len(comm)`), after
/// the checks of `init_checks` named in `check { .. }` (each gets the name, the communicator
/// and the arguments listed).
macro_rules! persistent {
    ($($export:ident $pexport:ident $f:ident => $nb:path, $name:literal
       ($($arg:ident : $ty:ty),*) $([$len:ident => $($arr:ident),*])*
       $(check { $($check:ident($($carg:ident),*)),* })?;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f($($arg: $ty,)* comm: Handle, info: Handle, request: *mut Handle) -> c_int {
            $(
                let n = match $len(comm) {
                    Ok(n) => n,
                    Err(e) => return call($name, comm, || Err(e)),
                };
                // SAFETY: MPI's rule: one entry per process of the (remote) group, or per
                // neighbor.
                $(let $arr = unsafe { Kept::of($arr, n) };)*
            )*
            let restart: Rc<Restart> = Rc::new(move |req| {
                $($(let $arr = $arr.ptr();)*)*
                // SAFETY: MPI keeps the buffers of a persistent collective valid until its
                // request is freed; the arrays are this closure's copies.
                unsafe { $nb($($arg,)* comm, req) }
            });
            let check = || -> MpiResult<()> {
                $($(init_checks::$check($name, comm $(, $carg)*)?;)*)?
                Ok(())
            };
            init($name, comm, info, request, restart, check)
        }
        export!($export, $pexport, $f,
            ($($arg: $ty,)* comm: Handle, info: Handle, request: *mut Handle) -> c_int);
    )*};
}

use super::super::large::{
    iallgather_c, ialltoall_c, iexscan_c, igather_c, ireduce_c, ireduce_scatter_block_c, iscan_c,
    iscatter_c,
};
use super::super::large_types::ialltoallw_c;
use super::super::large_types::ireduce_scatter_c;
use super::exports::{
    iallgather, ialltoall, iexscan, igather, ireduce, ireduce_scatter, ireduce_scatter_block,
    iscan, iscatter,
};
use super::gather::{iallgatherv, ialltoallv, ialltoallw, igatherv, iscatterv};
use super::gather::{iallgatherv_c, ialltoallv_c, igatherv_c, iscatterv_c};
use super::neighbor::{
    ineighbor_allgather, ineighbor_allgather_c, ineighbor_allgatherv, ineighbor_allgatherv_c,
    ineighbor_alltoall, ineighbor_alltoall_c, ineighbor_alltoallv, ineighbor_alltoallv_c,
    ineighbor_alltoallw, ineighbor_alltoallw_c,
};
use super::reduce::{iallreduce, ibcast};
use super::reduce::{iallreduce_c, ibarrier, ibcast_c};

persistent! {
    MPI_Barrier_init PMPI_Barrier_init barrier_init => ibarrier, "MPI_Barrier_init" ();
    MPI_Bcast_init PMPI_Bcast_init bcast_init => ibcast, "MPI_Bcast_init"
        (buffer: *mut c_void, count: c_int, datatype: Handle, root: c_int) check { count(count), ty(datatype), root(root) };
    MPI_Bcast_init_c PMPI_Bcast_init_c bcast_init_c => ibcast_c, "MPI_Bcast_init_c"
        (buffer: *mut c_void, count: i64, datatype: Handle, root: c_int) check { count(count), ty(datatype), root(root) };
    MPI_Reduce_init PMPI_Reduce_init reduce_init => ireduce, "MPI_Reduce_init"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle, root: c_int) check { count(count), op(op, datatype), root(root) };
    MPI_Reduce_init_c PMPI_Reduce_init_c reduce_init_c => ireduce_c, "MPI_Reduce_init_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle, root: c_int) check { count(count), op(op, datatype), root(root) };
    MPI_Allreduce_init PMPI_Allreduce_init allreduce_init => iallreduce, "MPI_Allreduce_init"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle) check { count(count), op(op, datatype) };
    MPI_Allreduce_init_c PMPI_Allreduce_init_c allreduce_init_c => iallreduce_c, "MPI_Allreduce_init_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle) check { count(count), op(op, datatype) };
    MPI_Scan_init PMPI_Scan_init scan_init => iscan, "MPI_Scan_init"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle) check { count(count), intra(), op(op, datatype) };
    MPI_Scan_init_c PMPI_Scan_init_c scan_init_c => iscan_c, "MPI_Scan_init_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle) check { count(count), intra(), op(op, datatype) };
    MPI_Exscan_init PMPI_Exscan_init exscan_init => iexscan, "MPI_Exscan_init"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Handle, op: Handle) check { count(count), intra(), op(op, datatype) };
    MPI_Exscan_init_c PMPI_Exscan_init_c exscan_init_c => iexscan_c, "MPI_Exscan_init_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle) check { count(count), intra(), op(op, datatype) };
    MPI_Reduce_scatter_block_init PMPI_Reduce_scatter_block_init reduce_scatter_block_init
        => ireduce_scatter_block, "MPI_Reduce_scatter_block_init"
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: Handle, op: Handle) check { count(recvcount), op(op, datatype) };
    MPI_Reduce_scatter_block_init_c PMPI_Reduce_scatter_block_init_c reduce_scatter_block_init_c
        => ireduce_scatter_block_c, "MPI_Reduce_scatter_block_init_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: i64, datatype: Handle, op: Handle) check { count(recvcount), op(op, datatype) };
    MPI_Reduce_scatter_init PMPI_Reduce_scatter_init reduce_scatter_init
        => ireduce_scatter, "MPI_Reduce_scatter_init"
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: Handle, op: Handle) [all => recvcounts] check { op(op, datatype) };
    MPI_Reduce_scatter_init_c PMPI_Reduce_scatter_init_c reduce_scatter_init_c
        => ireduce_scatter_c, "MPI_Reduce_scatter_init_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const i64, datatype: Handle, op: Handle) [all => recvcounts] check { op(op, datatype) };
    MPI_Gather_init PMPI_Gather_init gather_init => igather, "MPI_Gather_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int) check { root(root) };
    MPI_Gather_init_c PMPI_Gather_init_c gather_init_c => igather_c, "MPI_Gather_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int) check { root(root) };
    MPI_Scatter_init PMPI_Scatter_init scatter_init => iscatter, "MPI_Scatter_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int) check { root(root) };
    MPI_Scatter_init_c PMPI_Scatter_init_c scatter_init_c => iscatter_c, "MPI_Scatter_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int) check { root(root) };
    MPI_Allgather_init PMPI_Allgather_init allgather_init => iallgather, "MPI_Allgather_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle);
    MPI_Allgather_init_c PMPI_Allgather_init_c allgather_init_c => iallgather_c, "MPI_Allgather_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle);
    MPI_Alltoall_init PMPI_Alltoall_init alltoall_init => ialltoall, "MPI_Alltoall_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle);
    MPI_Alltoall_init_c PMPI_Alltoall_init_c alltoall_init_c => ialltoall_c, "MPI_Alltoall_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle);
    MPI_Gatherv_init PMPI_Gatherv_init gatherv_init => igatherv, "MPI_Gatherv_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle, root: c_int) [all => recvcounts, displs] check { root(root) };
    MPI_Gatherv_init_c PMPI_Gatherv_init_c gatherv_init_c => igatherv_c, "MPI_Gatherv_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle, root: c_int) [all => recvcounts, displs] check { root(root) };
    MPI_Scatterv_init PMPI_Scatterv_init scatterv_init => iscatterv, "MPI_Scatterv_init"
        (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int) [all => sendcounts, displs] check { root(root) };
    MPI_Scatterv_init_c PMPI_Scatterv_init_c scatterv_init_c => iscatterv_c, "MPI_Scatterv_init_c"
        (sendbuf: *const c_void, sendcounts: *const i64, displs: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int) [all => sendcounts, displs] check { root(root) };
    MPI_Allgatherv_init PMPI_Allgatherv_init allgatherv_init => iallgatherv, "MPI_Allgatherv_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle) [all => recvcounts, displs];
    MPI_Allgatherv_init_c PMPI_Allgatherv_init_c allgatherv_init_c => iallgatherv_c, "MPI_Allgatherv_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle) [all => recvcounts, displs];
    MPI_Alltoallv_init PMPI_Alltoallv_init alltoallv_init => ialltoallv, "MPI_Alltoallv_init"
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Handle) [all => sendcounts, sdispls, recvcounts, rdispls];
    MPI_Alltoallv_init_c PMPI_Alltoallv_init_c alltoallv_init_c => ialltoallv_c, "MPI_Alltoallv_init_c"
        (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: Handle) [all => sendcounts, sdispls, recvcounts, rdispls];
    MPI_Alltoallw_init PMPI_Alltoallw_init alltoallw_init => ialltoallw, "MPI_Alltoallw_init"
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const Handle) [all => sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes];
    MPI_Alltoallw_init_c PMPI_Alltoallw_init_c alltoallw_init_c => ialltoallw_c, "MPI_Alltoallw_init_c"
        (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const Handle) [all => sendcounts, sdispls, sendtypes, recvcounts, rdispls, recvtypes];
    MPI_Neighbor_allgather_init PMPI_Neighbor_allgather_init neighbor_allgather_init => ineighbor_allgather, "MPI_Neighbor_allgather_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle);
    MPI_Neighbor_allgather_init_c PMPI_Neighbor_allgather_init_c neighbor_allgather_init_c => ineighbor_allgather_c, "MPI_Neighbor_allgather_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle);
    MPI_Neighbor_alltoall_init PMPI_Neighbor_alltoall_init neighbor_alltoall_init => ineighbor_alltoall, "MPI_Neighbor_alltoall_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle);
    MPI_Neighbor_alltoall_init_c PMPI_Neighbor_alltoall_init_c neighbor_alltoall_init_c => ineighbor_alltoall_c, "MPI_Neighbor_alltoall_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle);
    MPI_Neighbor_allgatherv_init PMPI_Neighbor_allgatherv_init neighbor_allgatherv_init => ineighbor_allgatherv, "MPI_Neighbor_allgatherv_init"
        (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle) [ins => recvcounts, displs];
    MPI_Neighbor_allgatherv_init_c PMPI_Neighbor_allgatherv_init_c neighbor_allgatherv_init_c => ineighbor_allgatherv_c, "MPI_Neighbor_allgatherv_init_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle) [ins => recvcounts, displs];
    MPI_Neighbor_alltoallv_init PMPI_Neighbor_alltoallv_init neighbor_alltoallv_init => ineighbor_alltoallv, "MPI_Neighbor_alltoallv_init"
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Handle) [outs => sendcounts, sdispls] [ins => recvcounts, rdispls];
    MPI_Neighbor_alltoallv_init_c PMPI_Neighbor_alltoallv_init_c neighbor_alltoallv_init_c => ineighbor_alltoallv_c, "MPI_Neighbor_alltoallv_init_c"
        (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: Handle) [outs => sendcounts, sdispls] [ins => recvcounts, rdispls];
    MPI_Neighbor_alltoallw_init PMPI_Neighbor_alltoallw_init neighbor_alltoallw_init => ineighbor_alltoallw, "MPI_Neighbor_alltoallw_init"
        (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const isize, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const isize, recvtypes: *const Handle) [outs => sendcounts, sdispls, sendtypes] [ins => recvcounts, rdispls, recvtypes];
    MPI_Neighbor_alltoallw_init_c PMPI_Neighbor_alltoallw_init_c neighbor_alltoallw_init_c => ineighbor_alltoallw_c, "MPI_Neighbor_alltoallw_init_c"
        (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const Handle) [outs => sendcounts, sdispls, sendtypes] [ins => recvcounts, rdispls, recvtypes];
}
