//! The library's own exported entry points, for functions built from other MPI calls (the
//! windows of one-sided communication run their collective steps on a private communicator
//! through them). Each is defined by an `export!` elsewhere in this crate.

use crate::consts::Handle;
use std::ffi::c_void;
use std::os::raw::c_int;

extern "C" {
    pub fn PMPI_Comm_dup(comm: Handle, newcomm: *mut Handle) -> c_int;
    pub fn PMPI_Comm_free(comm: *mut Handle) -> c_int;
    pub fn PMPI_Comm_set_errhandler(comm: Handle, errhandler: Handle) -> c_int;
    pub fn PMPI_Comm_group(comm: Handle, group: *mut Handle) -> c_int;
    pub fn PMPI_Group_translate_ranks(
        group1: Handle,
        n: c_int,
        ranks1: *const c_int,
        group2: Handle,
        ranks2: *mut c_int,
    ) -> c_int;
    pub fn PMPI_Group_size(group: Handle, size: *mut c_int) -> c_int;
    pub fn PMPI_Group_free(group: *mut Handle) -> c_int;
    pub fn PMPI_Allgather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: Handle,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: Handle,
        comm: Handle,
    ) -> c_int;
    pub fn PMPI_Allreduce(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: Handle,
        op: Handle,
        comm: Handle,
    ) -> c_int;
    pub fn PMPI_Barrier(comm: Handle) -> c_int;
    pub fn PMPI_Alltoall(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: Handle,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: Handle,
        comm: Handle,
    ) -> c_int;
    pub fn PMPI_Alltoallv(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const c_int,
        sendtype: Handle,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const c_int,
        recvtype: Handle,
        comm: Handle,
    ) -> c_int;
    pub fn PMPI_Send(
        buf: *const c_void,
        count: c_int,
        datatype: Handle,
        dest: c_int,
        tag: c_int,
        comm: Handle,
    ) -> c_int;
    pub fn PMPI_Recv(
        buf: *mut c_void,
        count: c_int,
        datatype: Handle,
        source: c_int,
        tag: c_int,
        comm: Handle,
        status: *mut c_void,
    ) -> c_int;
    pub fn PMPI_Iprobe(
        source: c_int,
        tag: c_int,
        comm: Handle,
        flag: *mut c_int,
        status: *mut c_void,
    ) -> c_int;
    pub fn PMPI_Info_create(info: *mut Handle) -> c_int;
}
