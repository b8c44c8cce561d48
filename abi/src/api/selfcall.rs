//! The library's own exported entry points, for functions built from other MPI calls (the
//! windows of one-sided communication and the files of MPI-IO run their collective steps on
//! a private communicator through them), and the collective steps they share. Each entry
//! point is defined by an `export!` elsewhere in this crate.

use crate::consts::*;
use crate::error::{err, MpiResult};
use std::ffi::c_void;
use std::os::raw::c_int;

/// The result of such an internal MPI call; `what` names it (with its owner) in the error.
pub fn check(rc: c_int, what: &str) -> MpiResult<()> {
    match rc {
        MPI_SUCCESS => Ok(()),
        rc => err(rc, format!("{what} failed")),
    }
}

/// One plain value from each process of `comm`, in rank order.
pub fn allgather<T: Copy + Default>(v: T, n: usize, comm: Handle) -> MpiResult<Vec<T>> {
    let mut all = vec![T::default(); n];
    let bytes = std::mem::size_of::<T>() as c_int;
    // SAFETY: `v` and `all` hold one and `n` values of `bytes` bytes.
    let rc = unsafe {
        PMPI_Allgather(
            (&v as *const T).cast(),
            bytes,
            MPI_BYTE,
            all.as_mut_ptr().cast(),
            bytes,
            MPI_BYTE,
            comm,
        )
    };
    check(rc, "MPI_Allgather")?;
    Ok(all)
}

/// `op` (MPI_MIN, MPI_MAX) of one int from each process of `comm`.
pub fn reduce_int(v: c_int, op: Handle, comm: Handle) -> MpiResult<c_int> {
    let mut all = 0;
    // SAFETY: one int each way.
    let rc = unsafe {
        PMPI_Allreduce(
            (&v as *const c_int).cast(),
            (&mut all as *mut c_int).cast(),
            1,
            MPI_INT,
            op,
            comm,
        )
    };
    check(rc, "MPI_Allreduce")?;
    Ok(all)
}

/// Whether every process of `comm` says `ok`.
pub fn all_ok(ok: bool, comm: Handle) -> MpiResult<bool> {
    Ok(reduce_int(c_int::from(ok), MPI_MIN, comm)? == 1)
}

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
    pub fn PMPI_Ireduce_scatter_block(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        recvcount: c_int,
        datatype: Handle,
        op: Handle,
        comm: Handle,
        request: *mut Handle,
    ) -> c_int;
    pub fn PMPI_Test(request: *mut Handle, flag: *mut c_int, status: *mut c_void) -> c_int;
    pub fn PMPI_Comm_split(comm: Handle, color: c_int, key: c_int, newcomm: *mut Handle) -> c_int;
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

/// A file the first process of `comm` makes (`open(true)`) and the others then open
/// (`open(false)`); once every process has it, the first removes its name, so nothing stays
/// on disk or in /dev/shm, also when the job is killed. A process that failed returns its
/// error, the others an error of `class` saying which process failed.
pub fn shared_file<T>(
    comm: Handle,
    rank: usize,
    path: &str,
    (what, class): (&str, c_int),
    open: impl Fn(bool) -> MpiResult<T>,
) -> MpiResult<T> {
    let made = (rank == 0).then(|| open(true));
    if !all_ok(made.as_ref().is_none_or(|r| r.is_ok()), comm)? {
        return match made {
            Some(Err(e)) => Err(e),
            _ => err(class, format!("the first process could not make {what}")),
        };
    }
    let mine = made.unwrap_or_else(|| open(false));
    let everyone = all_ok(mine.is_ok(), comm)?;
    if rank == 0 {
        if let Ok(c) = std::ffi::CString::new(path) {
            // SAFETY: removing the file this process made; every process holds it open.
            unsafe { libc::unlink(c.as_ptr()) };
        }
    }
    match mine {
        Ok(_) if !everyone => err(class, format!("a process could not open {what}")),
        r => r,
    }
}
