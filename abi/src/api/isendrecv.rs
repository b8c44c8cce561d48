//! MPI_Isendrecv and MPI_Isendrecv_replace (and their `_c` forms): a receive and a send
//! started together, one request that completes when both have, with the receive's status.
//! The replace form sends a copy of the buffer, since the receive lands in it.

use super::buffers::{recv_buf, send_buf, SendBuf};
use super::out;
use super::p2p::{start_recv, start_send};
use crate::consts::*;
use crate::request::{Active, Mode, Pair, ReqEntry};
use crate::state::with_state;
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;

/// Where the data to send comes from.
enum Source {
    /// The caller's send buffer, which MPI keeps unchanged until completion.
    Buffer(*const c_void),
    /// A copy of the buffer the receive overwrites.
    CopyOf(*mut c_void),
}

#[allow(clippy::too_many_arguments)]
unsafe fn start_pair(
    name: &'static str,
    send: (Source, i64, Handle, c_int, c_int),
    recv: (*mut c_void, i64, Handle, c_int, c_int),
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    call(name, comm, || {
        let (src, scount, stype, dest, stag) = send;
        let (rbuf, rcount, rtype, source, rtag) = recv;
        // SAFETY: MPI's rule: the buffers stay valid (the send buffer unchanged) until the
        // request completes; the request table waits before it lets go of them.
        let data: SendBuf<'static> = match src {
            Source::Buffer(b) => unsafe { send_buf(b, scount, stype) }?,
            Source::CopyOf(b) => SendBuf::Packed(unsafe { send_buf(b, scount, stype) }?.to_vec()),
        };
        // SAFETY: as above.
        let rb = unsafe { recv_buf(rbuf, rcount, rtype) }?;
        let h = with_state(|s| {
            let ci = s.comm_index(comm)?;
            let r = start_recv(s, rb, source, rtag, comm)?;
            let w = start_send(s, Mode::Send, data, dest, stag, comm)?;
            Ok(s.add_req(ReqEntry::new(Active::Pair(Box::new(Pair::new(r, w))), ci)))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

macro_rules! isendrecv {
    ($($f:ident $name:literal $count:ty;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f(
            sendbuf: *const c_void, sendcount: $count, sendtype: Handle, dest: c_int, sendtag: c_int,
            recvbuf: *mut c_void, recvcount: $count, recvtype: Handle, source: c_int, recvtag: c_int,
            comm: Handle, request: *mut Handle,
        ) -> c_int {
            let send = (Source::Buffer(sendbuf), i64::from(sendcount), sendtype, dest, sendtag);
            let recv = (recvbuf, i64::from(recvcount), recvtype, source, recvtag);
            // SAFETY: the caller's arguments, passed on.
            unsafe { start_pair($name, send, recv, comm, request) }
        }
    )*};
}

macro_rules! isendrecv_replace {
    ($($f:ident $name:literal $count:ty;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f(
            buf: *mut c_void, count: $count, datatype: Handle, dest: c_int, sendtag: c_int,
            source: c_int, recvtag: c_int, comm: Handle, request: *mut Handle,
        ) -> c_int {
            let send = (Source::CopyOf(buf), i64::from(count), datatype, dest, sendtag);
            let recv = (buf, i64::from(count), datatype, source, recvtag);
            // SAFETY: the caller's arguments, passed on.
            unsafe { start_pair($name, send, recv, comm, request) }
        }
    )*};
}

isendrecv! {
    isendrecv "MPI_Isendrecv" c_int;
    isendrecv_c "MPI_Isendrecv_c" i64;
}
isendrecv_replace! {
    isendrecv_replace "MPI_Isendrecv_replace" c_int;
    isendrecv_replace_c "MPI_Isendrecv_replace_c" i64;
}

export!(MPI_Isendrecv, PMPI_Isendrecv, isendrecv,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, dest: c_int, sendtag: c_int,
     recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, source: c_int, recvtag: c_int,
     comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Isendrecv_c, PMPI_Isendrecv_c, isendrecv_c,
    (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, dest: c_int, sendtag: c_int,
     recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, source: c_int, recvtag: c_int,
     comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Isendrecv_replace, PMPI_Isendrecv_replace, isendrecv_replace,
    (buf: *mut c_void, count: c_int, datatype: Handle, dest: c_int, sendtag: c_int,
     source: c_int, recvtag: c_int, comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Isendrecv_replace_c, PMPI_Isendrecv_replace_c, isendrecv_replace_c,
    (buf: *mut c_void, count: i64, datatype: Handle, dest: c_int, sendtag: c_int,
     source: c_int, recvtag: c_int, comm: Handle, request: *mut Handle) -> c_int);
