//! Point-to-point: Send, Recv, Isend, Irecv, Sendrecv, Probe, Iprobe, Get_count.

use super::{out, recv_bytes, send_bytes};
use crate::consts::*;
use crate::datatype;
use crate::state::{with_state, ReqEntry};
use crate::status::{self, MpiStatus};
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;

unsafe fn send(
    buf: *const c_void,
    count: c_int,
    ty: Handle,
    dest: c_int,
    tag: c_int,
    comm: Handle,
) -> c_int {
    call("MPI_Send", comm, || {
        // SAFETY: the caller's send buffer, read during the call only.
        let bytes = unsafe { send_bytes(buf, count, ty) }?;
        let (dest, tag) = (status::dest(dest)?, status::send_tag(tag)?);
        with_state(|s| Ok(s.comm(comm)?.comm.raw().send(bytes, dest, tag)?))
    })
}

unsafe fn recv(
    buf: *mut c_void,
    count: c_int,
    ty: Handle,
    source: c_int,
    tag: c_int,
    comm: Handle,
    st: *mut MpiStatus,
) -> c_int {
    call("MPI_Recv", comm, || {
        // SAFETY: the caller's receive buffer, written during the call only.
        let bytes = unsafe { recv_bytes(buf, count, ty) }?;
        let (src, tag) = (status::source(source)?, status::recv_tag(tag)?);
        let got = with_state(|s| Ok(s.comm(comm)?.comm.raw().recv(bytes, src, tag)?))?;
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
        unsafe { status::store(st, &got) };
        Ok(())
    })
}

unsafe fn isend(
    buf: *const c_void,
    count: c_int,
    ty: Handle,
    dest: c_int,
    tag: c_int,
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    call("MPI_Isend", comm, || {
        // SAFETY: MPI's rule: the buffer stays valid and unchanged until the request
        // completes, which the request table enforces by waiting before it lets go.
        let bytes: &'static [u8] = unsafe { send_bytes(buf, count, ty) }?;
        let (dest, tag) = (status::dest(dest)?, status::send_tag(tag)?);
        let h = with_state(|s| {
            let ci = s.comm_index(comm)?;
            let req = s.comm(comm)?.comm.raw().isend(bytes, dest, tag)?;
            Ok(s.add_req(ReqEntry { req, comm: ci }))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

unsafe fn irecv(
    buf: *mut c_void,
    count: c_int,
    ty: Handle,
    source: c_int,
    tag: c_int,
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    call("MPI_Irecv", comm, || {
        // SAFETY: MPI's rule: the buffer is the request's alone until it completes.
        let bytes: &'static mut [u8] = unsafe { recv_bytes(buf, count, ty) }?;
        let (src, tag) = (status::source(source)?, status::recv_tag(tag)?);
        let h = with_state(|s| {
            let ci = s.comm_index(comm)?;
            let req = s.comm(comm)?.comm.raw().irecv(bytes, src, tag)?;
            Ok(s.add_req(ReqEntry { req, comm: ci }))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Handle,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Handle,
    source: c_int,
    recvtag: c_int,
    comm: Handle,
    st: *mut MpiStatus,
) -> c_int {
    call("MPI_Sendrecv", comm, || {
        // SAFETY: the caller's buffers, used during the call only; MPI forbids overlap.
        let (sb, rb) = unsafe {
            (
                send_bytes(sendbuf, sendcount, sendtype)?,
                recv_bytes(recvbuf, recvcount, recvtype)?,
            )
        };
        let (dest, stag) = (status::dest(dest)?, status::send_tag(sendtag)?);
        let (src, rtag) = (status::source(source)?, status::recv_tag(recvtag)?);
        let got = with_state(|s| {
            Ok(s.comm(comm)?
                .comm
                .raw()
                .sendrecv(sb, dest, stag, rb, src, rtag)?)
        })?;
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
        unsafe { status::store(st, &got) };
        Ok(())
    })
}

unsafe fn probe(source: c_int, tag: c_int, comm: Handle, st: *mut MpiStatus) -> c_int {
    call("MPI_Probe", comm, || {
        let (src, tag) = (status::source(source)?, status::recv_tag(tag)?);
        let got = with_state(|s| Ok(s.comm(comm)?.comm.raw().probe(src, tag)?))?;
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
        unsafe { status::store(st, &got) };
        Ok(())
    })
}

unsafe fn iprobe(
    source: c_int,
    tag: c_int,
    comm: Handle,
    flag: *mut c_int,
    st: *mut MpiStatus,
) -> c_int {
    call("MPI_Iprobe", comm, || {
        let (src, tag) = (status::source(source)?, status::recv_tag(tag)?);
        let got = with_state(|s| Ok(s.comm(comm)?.comm.raw().iprobe(src, tag)?))?;
        if let Some(got) = &got {
            // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
            unsafe { status::store(st, got) };
        }
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(got.is_some()), "flag") }
    })
}

unsafe fn get_count(st: *const MpiStatus, ty: Handle, count: *mut c_int) -> c_int {
    call("MPI_Get_count", MPI_COMM_SELF, || {
        let size = datatype::lookup(ty)?.size as u64;
        // SAFETY: the caller's status, read only.
        let Some(st) = (unsafe { st.as_ref() }) else {
            return crate::error::err(MPI_ERR_ARG, "status is NULL");
        };
        let bytes = st.count();
        let n = match size {
            0 => 0,
            s if bytes % s == 0 => c_int::try_from(bytes / s).unwrap_or(MPI_UNDEFINED),
            _ => MPI_UNDEFINED,
        };
        // SAFETY: the caller's output argument.
        unsafe { out(count, n, "count") }
    })
}

export!(MPI_Send, PMPI_Send, send,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) -> c_int);
export!(MPI_Recv, PMPI_Recv, recv,
    (buf: *mut c_void, count: c_int, datatype: Handle, source: c_int, tag: c_int, comm: Handle,
     status: *mut MpiStatus) -> c_int);
export!(MPI_Isend, PMPI_Isend, isend,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Irecv, PMPI_Irecv, irecv,
    (buf: *mut c_void, count: c_int, datatype: Handle, source: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Sendrecv, PMPI_Sendrecv, sendrecv,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, dest: c_int, sendtag: c_int,
     recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, source: c_int, recvtag: c_int,
     comm: Handle, status: *mut MpiStatus) -> c_int);
export!(MPI_Probe, PMPI_Probe, probe,
    (source: c_int, tag: c_int, comm: Handle, status: *mut MpiStatus) -> c_int);
export!(MPI_Iprobe, PMPI_Iprobe, iprobe,
    (source: c_int, tag: c_int, comm: Handle, flag: *mut c_int, status: *mut MpiStatus) -> c_int);
export!(MPI_Get_count, PMPI_Get_count, get_count,
    (status: *const MpiStatus, datatype: Handle, count: *mut c_int) -> c_int);
