//! The `_c` (large-count) forms whose implementation takes `int` counts: they accept any
//! count that fits an `int` and report MPI_ERR_COUNT (naming the function) for a larger one.
//! (`Send_c`, `Recv_c`, `Isend_c`, `Irecv_c`, `Get_count_c`, `Bcast_c`, `Allreduce_c`,
//! `Type_size_c` take the full range; see their files.)

use super::out;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::status::MpiStatus;
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;

/// `count` as an `int`, or MPI_ERR_COUNT through MPI_COMM_SELF's handler.
fn narrow(name: &'static str, count: i64) -> MpiResult<c_int> {
    c_int::try_from(count).or_else(|_| {
        err(
            MPI_ERR_COUNT,
            format!("{name}: count {count} does not fit an int (ibdyn's {name} takes counts up to 2^31-1)"),
        )
    })
}

/// Defines `$c` (the `_c` form) calling `$int` (the `int` form) with every `count` argument
/// narrowed; exports it as `$export`/`$pexport`.
macro_rules! narrowed {
    ($($export:ident $pexport:ident $c:ident => $int:path, $name:literal
       ($($arg:ident : $ty:ty),*) [$($count:ident),*];)*) => {$(
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $c($($arg: $ty),*) -> c_int {
            $(
                let $count = match narrow($name, $count) {
                    Ok(c) => c,
                    Err(e) => return crate::call($name, MPI_COMM_SELF, || Err(e)),
                };
            )*
            // SAFETY: passed through with the same meaning.
            unsafe { $int($($arg),*) }
        }
        export!($export, $pexport, $c, ($($arg: $ty),*) -> c_int);
    )*};
}

use super::coll::exports as coll;
use super::p2p;
use super::types;

narrowed! {
    MPI_Ssend_c PMPI_Ssend_c ssend_c => p2p::ssend, "MPI_Ssend_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) [count];
    MPI_Rsend_c PMPI_Rsend_c rsend_c => p2p::rsend, "MPI_Rsend_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) [count];
    MPI_Bsend_c PMPI_Bsend_c bsend_c => p2p::bsend, "MPI_Bsend_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) [count];
    MPI_Issend_c PMPI_Issend_c issend_c => p2p::issend, "MPI_Issend_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Irsend_c PMPI_Irsend_c irsend_c => p2p::irsend, "MPI_Irsend_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Ibsend_c PMPI_Ibsend_c ibsend_c => p2p::ibsend, "MPI_Ibsend_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Send_init_c PMPI_Send_init_c send_init_c => p2p::send_init, "MPI_Send_init_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Bsend_init_c PMPI_Bsend_init_c bsend_init_c => p2p::bsend_init, "MPI_Bsend_init_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Ssend_init_c PMPI_Ssend_init_c ssend_init_c => p2p::ssend_init, "MPI_Ssend_init_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Rsend_init_c PMPI_Rsend_init_c rsend_init_c => p2p::rsend_init, "MPI_Rsend_init_c"
        (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Recv_init_c PMPI_Recv_init_c recv_init_c => p2p::recv_init, "MPI_Recv_init_c"
        (buf: *mut c_void, count: i64, datatype: Handle, source: c_int, tag: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Sendrecv_c PMPI_Sendrecv_c sendrecv_c => p2p::sendrecv, "MPI_Sendrecv_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, dest: c_int, sendtag: c_int,
         recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, source: c_int, recvtag: c_int,
         comm: Handle, status: *mut MpiStatus) [sendcount, recvcount];
    MPI_Sendrecv_replace_c PMPI_Sendrecv_replace_c sendrecv_replace_c => p2p::sendrecv_replace, "MPI_Sendrecv_replace_c"
        (buf: *mut c_void, count: i64, datatype: Handle, dest: c_int, sendtag: c_int, source: c_int,
         recvtag: c_int, comm: Handle, status: *mut MpiStatus) [count];
    MPI_Mrecv_c PMPI_Mrecv_c mrecv_c => p2p::mrecv, "MPI_Mrecv_c"
        (buf: *mut c_void, count: i64, datatype: Handle, message: *mut Handle, status: *mut MpiStatus) [count];
    MPI_Imrecv_c PMPI_Imrecv_c imrecv_c => p2p::imrecv, "MPI_Imrecv_c"
        (buf: *mut c_void, count: i64, datatype: Handle, message: *mut Handle, request: *mut Handle) [count];
    MPI_Reduce_c PMPI_Reduce_c reduce_c => coll::reduce, "MPI_Reduce_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle, root: c_int, comm: Handle) [count];
    MPI_Ireduce_c PMPI_Ireduce_c ireduce_c => coll::ireduce, "MPI_Ireduce_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle, root: c_int, comm: Handle, request: *mut Handle) [count];
    MPI_Scan_c PMPI_Scan_c scan_c => coll::scan, "MPI_Scan_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle, comm: Handle) [count];
    MPI_Exscan_c PMPI_Exscan_c exscan_c => coll::exscan, "MPI_Exscan_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle, comm: Handle) [count];
    MPI_Reduce_scatter_block_c PMPI_Reduce_scatter_block_c reduce_scatter_block_c => coll::reduce_scatter_block, "MPI_Reduce_scatter_block_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: i64, datatype: Handle, op: Handle, comm: Handle) [recvcount];
    MPI_Reduce_local_c PMPI_Reduce_local_c reduce_local_c => coll::reduce_local, "MPI_Reduce_local_c"
        (inbuf: *const c_void, inoutbuf: *mut c_void, count: i64, datatype: Handle, op: Handle) [count];
    MPI_Gather_c PMPI_Gather_c gather_c => coll::gather, "MPI_Gather_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int, comm: Handle) [sendcount, recvcount];
    MPI_Scatter_c PMPI_Scatter_c scatter_c => coll::scatter, "MPI_Scatter_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int, comm: Handle) [sendcount, recvcount];
    MPI_Allgather_c PMPI_Allgather_c allgather_c => coll::allgather, "MPI_Allgather_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, comm: Handle) [sendcount, recvcount];
    MPI_Alltoall_c PMPI_Alltoall_c alltoall_c => coll::alltoall, "MPI_Alltoall_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, comm: Handle) [sendcount, recvcount];
    MPI_Iscan_c PMPI_Iscan_c iscan_c => coll::iscan, "MPI_Iscan_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle, comm: Handle, request: *mut Handle) [count];
    MPI_Iexscan_c PMPI_Iexscan_c iexscan_c => coll::iexscan, "MPI_Iexscan_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: Handle, op: Handle, comm: Handle, request: *mut Handle) [count];
    MPI_Ireduce_scatter_block_c PMPI_Ireduce_scatter_block_c ireduce_scatter_block_c => coll::ireduce_scatter_block, "MPI_Ireduce_scatter_block_c"
        (sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: i64, datatype: Handle, op: Handle, comm: Handle, request: *mut Handle) [recvcount];
    MPI_Igather_c PMPI_Igather_c igather_c => coll::igather, "MPI_Igather_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int, comm: Handle, request: *mut Handle) [sendcount, recvcount];
    MPI_Iscatter_c PMPI_Iscatter_c iscatter_c => coll::iscatter, "MPI_Iscatter_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int, comm: Handle, request: *mut Handle) [sendcount, recvcount];
    MPI_Iallgather_c PMPI_Iallgather_c iallgather_c => coll::iallgather, "MPI_Iallgather_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, comm: Handle, request: *mut Handle) [sendcount, recvcount];
    MPI_Ialltoall_c PMPI_Ialltoall_c ialltoall_c => coll::ialltoall, "MPI_Ialltoall_c"
        (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, comm: Handle, request: *mut Handle) [sendcount, recvcount];
}

unsafe fn type_get_extent_c(datatype: Handle, lb: *mut i64, extent: *mut i64) -> c_int {
    // MPI_Count and MPI_Aint are both 64-bit here.
    // SAFETY: passed through; the pointees have the same size and meaning.
    unsafe { types::type_get_extent(datatype, lb.cast(), extent.cast()) }
}

unsafe fn type_get_true_extent_c(datatype: Handle, lb: *mut i64, extent: *mut i64) -> c_int {
    // SAFETY: as above.
    unsafe { types::type_get_true_extent(datatype, lb.cast(), extent.cast()) }
}

unsafe fn get_elements_c(st: *const MpiStatus, ty: Handle, count: *mut i64) -> c_int {
    call("MPI_Get_elements_c", MPI_COMM_SELF, || {
        // SAFETY: the caller's status.
        let n = unsafe { p2p::status_query(st, ty, p2p::basic_elements) }?;
        // SAFETY: the caller's output argument.
        unsafe { out(count, n, "count") }
    })
}

export!(MPI_Type_get_extent_c, PMPI_Type_get_extent_c, type_get_extent_c,
    (datatype: Handle, lb: *mut i64, extent: *mut i64) -> c_int);
export!(MPI_Type_get_true_extent_c, PMPI_Type_get_true_extent_c, type_get_true_extent_c,
    (datatype: Handle, true_lb: *mut i64, true_extent: *mut i64) -> c_int);
export!(MPI_Get_elements_c, PMPI_Get_elements_c, get_elements_c,
    (status: *const MpiStatus, datatype: Handle, count: *mut i64) -> c_int);

// The MPI-3 `_x` names of the same four queries (deprecated in MPI-4, still in the ABI).
export!(MPI_Type_size_x, PMPI_Type_size_x, types::type_size_c,
    (datatype: Handle, size: *mut i64) -> c_int);
export!(MPI_Type_get_extent_x, PMPI_Type_get_extent_x, type_get_extent_c,
    (datatype: Handle, lb: *mut i64, extent: *mut i64) -> c_int);
export!(MPI_Type_get_true_extent_x, PMPI_Type_get_true_extent_x, type_get_true_extent_c,
    (datatype: Handle, true_lb: *mut i64, true_extent: *mut i64) -> c_int);
export!(MPI_Get_elements_x, PMPI_Get_elements_x, get_elements_c,
    (status: *const MpiStatus, datatype: Handle, count: *mut i64) -> c_int);
