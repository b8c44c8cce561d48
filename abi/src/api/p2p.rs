//! Point-to-point: the send modes (standard, synchronous, ready, buffered) blocking,
//! non-blocking and persistent, receives, Sendrecv(_replace), probes (also matched), counts.

use super::buffers::{checked_len, recv_buf, send_buf, RecvBuf, SendBuf};
use super::out;
use super::p2p_multiple::blocking;
use crate::consts::*;
use crate::derived;
use crate::error::{err, MpiError, MpiResult};
use crate::request::{Active, Mode, Persistent, ReqEntry};
use crate::state::{with_state, State};
use crate::status::{self, MpiStatus};
use crate::{call, export};
use ibdyn_intercomm::CommError;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::ptr::null_mut;

/// MPI entry points that only call `$imp`: each passes its arguments through, with its
/// MPI name (and send mode) first; `$imp` widens the count (int or MPI_Count).
macro_rules! thin_entries {
    ($imp:ident $params:tt;
     $($vis:vis fn $f:ident($name:literal, $count:ty $(, $mode:expr)?);)*) => {$(
        thin_entries!(@one $imp $params $vis $f $name $count $(, $mode)?);
    )*};
    (@one $imp:ident (buf: $bt:ty, count, $($a:ident: $t:ty),*)
     $vis:vis $f:ident $name:literal $count:ty $(, $mode:expr)?) => {
        $vis unsafe fn $f(buf: $bt, count: $count, $($a: $t),*) -> c_int {
            // SAFETY: passed through.
            unsafe { $imp($name, $($mode,)? buf, count, $($a),*) }
        }
    };
}

/// Blocking sends that differ in name, count width and mode only.
macro_rules! blocking_send {
    ($($vis:vis fn $f:ident($name:literal, $count:ty, $mode:expr);)*) => {
        thin_entries! {
            send_mode(buf: *const c_void, count, ty: Handle, dest: c_int, tag: c_int, comm: Handle);
            $($vis fn $f($name, $count, $mode);)*
        }
    };
}

/// Non-blocking sends that differ in name, count width and mode only.
macro_rules! nonblocking_send {
    ($($vis:vis fn $f:ident($name:literal, $count:ty, $mode:expr);)*) => {
        thin_entries! {
            isend_mode(buf: *const c_void, count, ty: Handle, dest: c_int, tag: c_int, comm: Handle,
                request: *mut Handle);
            $($vis fn $f($name, $count, $mode);)*
        }
    };
}

/// A send of `data` in `mode` on communicator `comm`, started.
pub(super) fn start_send(
    s: &mut State,
    mode: Mode,
    data: SendBuf<'static>,
    dest: c_int,
    tag: c_int,
    comm: Handle,
) -> MpiResult<Active> {
    send_on(s.comm(comm)?.comm.raw(), mode, data, dest, tag)
}

/// A send of `mode` on runtime communicator `raw` (a communicator's, or a private channel
/// of one), started.
pub(super) fn send_on(
    raw: &ibdyn_intercomm::Communicator,
    mode: Mode,
    data: SendBuf<'static>,
    dest: c_int,
    tag: c_int,
) -> MpiResult<Active> {
    let (dest, tag) = (status::dest(dest)?, status::send_tag(tag)?);
    // SAFETY: the bytes stay where they are: the caller's memory (MPI's rule until
    // completion) or the heap block of `packed`, which the request entry keeps.
    let bytes: &'static [u8] = unsafe { std::slice::from_raw_parts(data.as_ptr(), data.len()) };
    let req = match mode {
        Mode::Ssend => raw.issend(bytes, dest, tag)?,
        _ => raw.isend(bytes, dest, tag)?,
    };
    let packed = matches!(data, SendBuf::Packed(_)).then_some(data);
    Ok(Active::P2p {
        req,
        staged: None,
        packed,
        recv: false,
    })
}

/// A receive into `buf` on communicator `comm`, started.
pub(super) fn start_recv(
    s: &mut State,
    buf: RecvBuf<'static>,
    source: c_int,
    tag: c_int,
    comm: Handle,
) -> MpiResult<Active> {
    recv_on(s.comm(comm)?.comm.raw(), buf, source, tag)
}

/// A receive into `buf` on runtime communicator `raw`, started.
pub(super) fn recv_on(
    raw: &ibdyn_intercomm::Communicator,
    buf: RecvBuf<'static>,
    source: c_int,
    tag: c_int,
) -> MpiResult<Active> {
    let (src, tag) = (status::source(source)?, status::recv_tag(tag)?);
    posted_recv(buf, |bytes| raw.irecv(bytes, src, tag))
}

/// A receive into `buf`, posted by `post` on the bytes that receive the message.
fn posted_recv<E>(
    buf: RecvBuf<'static>,
    post: impl FnOnce(&'static mut [u8]) -> Result<ibdyn::Request<'static>, E>,
) -> MpiResult<Active>
where
    MpiError: From<E>,
{
    let (bytes, staged) = match buf {
        RecvBuf::Scratch(_) => return err(MPI_ERR_INTERN, "a scratch buffer for a receive"),
        RecvBuf::Direct(b) => (b, None),
        RecvBuf::Staged(mut st) => {
            // SAFETY: the Staged lives in the same entry as the request, dropped after it.
            (unsafe { st.bytes_static() }, Some(st))
        }
    };
    Ok(Active::P2p {
        req: post(bytes)?,
        staged,
        packed: None,
        recv: true,
    })
}

/// A buffered send: a copy of the data leaves in the background, within the attached buffer.
fn bsend_start(
    s: &mut State,
    data: SendBuf<'_>,
    dest: c_int,
    tag: c_int,
    comm: Handle,
) -> MpiResult<()> {
    if dest == MPI_PROC_NULL {
        // Nothing is sent, so nothing is buffered: no buffer is needed.
        return start_send(s, Mode::Send, SendBuf::Packed(Vec::new()), dest, tag, comm).map(drop);
    }
    let ci = s.comm_index(comm)?;
    let owner = s.bsend.room(ci, data.len() + MPI_BSEND_OVERHEAD)?;
    let len = data.len();
    let copy = SendBuf::Packed(data.to_vec());
    let a = start_send(s, Mode::Send, copy, dest, tag, comm)?;
    s.bsend.push(owner, a, len);
    Ok(())
}

/// Runs a send of `mode` to completion (blocking sends).
#[allow(clippy::too_many_arguments)]
unsafe fn send_mode(
    name: &'static str,
    mode: Mode,
    buf: *const c_void,
    count: impl Into<i64>,
    ty: Handle,
    dest: c_int,
    tag: c_int,
    comm: Handle,
) -> c_int {
    if crate::threads::multiple() || crate::in_flight::maybe() {
        // SAFETY: passed through; `blocking` waits for the send before it returns.
        return unsafe {
            blocking(name, comm, null_mut(), || {
                let data: SendBuf<'static> = send_buf(buf, count.into(), ty)?;
                with_state(|s| {
                    Ok((
                        s.comm_index(comm)?,
                        [start_send(s, mode, data, dest, tag, comm)?],
                    ))
                })
            })
        };
    }
    call(name, comm, || {
        // SAFETY: the caller's send buffer, read during the call only.
        let data = unsafe { send_buf(buf, count.into(), ty) }?;
        with_state(|s| match mode {
            Mode::Send => {
                let (d, t) = (status::dest(dest)?, status::send_tag(tag)?);
                Ok(s.comm(comm)?.comm.raw().send(&data, d, t)?)
            }
            Mode::Recv | Mode::Bsend => err(MPI_ERR_INTERN, "not a mode of a blocking send"),
            Mode::Ssend => {
                // SAFETY: `data` outlives the request, which is waited for right here.
                let data: SendBuf<'static> = unsafe { std::mem::transmute(data) };
                let mut e = ReqEntry::new(start_send(s, mode, data, dest, tag, comm)?, 0);
                e.step(true).map(|_| ())
            }
        })
    })
}

/// MPI_Bsend and friends that complete locally.
pub(super) unsafe fn bsend(
    buf: *const c_void,
    count: c_int,
    ty: Handle,
    dest: c_int,
    tag: c_int,
    comm: Handle,
) -> c_int {
    call("MPI_Bsend", comm, || {
        // SAFETY: the caller's send buffer, copied during the call.
        let data = unsafe { send_buf(buf, count.into(), ty) }?;
        with_state(|s| bsend_start(s, data, dest, tag, comm))
    })
}

blocking_send! {
    fn send("MPI_Send", c_int, Mode::Send);
    fn send_c("MPI_Send_c", i64, Mode::Send);
    // Ready mode: the receive is posted already, so a standard send is a correct one.
    pub(super) fn rsend("MPI_Rsend", c_int, Mode::Send);
    pub(super) fn ssend("MPI_Ssend", c_int, Mode::Ssend);
}

#[allow(clippy::too_many_arguments)]
unsafe fn recv_impl(
    name: &'static str,
    buf: *mut c_void,
    count: impl Into<i64>,
    ty: Handle,
    source: c_int,
    tag: c_int,
    comm: Handle,
    st: *mut MpiStatus,
) -> c_int {
    if crate::threads::multiple() || crate::in_flight::maybe() {
        // SAFETY: passed through; `blocking` waits for the receive before it returns.
        return unsafe {
            blocking(name, comm, st, || {
                let rb: RecvBuf<'static> = recv_buf(buf, count.into(), ty)?;
                with_state(|s| Ok((s.comm_index(comm)?, [start_recv(s, rb, source, tag, comm)?])))
            })
        };
    }
    call(name, comm, || {
        // SAFETY: the caller's receive buffer, written during the call only.
        let mut rb = unsafe { recv_buf(buf, count.into(), ty) }?;
        let (src, tag) = (status::source(source)?, status::recv_tag(tag)?);
        let got = with_state(|s| Ok(s.comm(comm)?.comm.raw().recv(rb.bytes(), src, tag)?));
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                // A truncation still tells who sent what, and what of it is in the buffer.
                if let Some(partial) = &e.status {
                    rb.finish(partial.count);
                    // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
                    unsafe { status::store(st, partial) };
                }
                return Err(e);
            }
        };
        rb.finish(got.count);
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
        unsafe { status::store(st, &got) };
        Ok(())
    })
}

thin_entries! {
    recv_impl(buf: *mut c_void, count, ty: Handle, source: c_int, tag: c_int, comm: Handle,
        st: *mut MpiStatus);
    fn recv("MPI_Recv", c_int);
    fn recv_c("MPI_Recv_c", i64);
}

/// Starts a non-blocking send of `mode` and stores its request.
#[allow(clippy::too_many_arguments)]
unsafe fn isend_mode(
    name: &'static str,
    mode: Mode,
    buf: *const c_void,
    count: impl Into<i64>,
    ty: Handle,
    dest: c_int,
    tag: c_int,
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    call(name, comm, || {
        // SAFETY: MPI's rule: the buffer stays valid and unchanged until the request
        // completes, which the request table enforces by waiting before it lets go.
        let data: SendBuf<'static> = unsafe { send_buf(buf, count.into(), ty) }?;
        let h = with_state(|s| {
            let ci = s.comm_index(comm)?;
            let a = match mode {
                Mode::Recv | Mode::Bsend => {
                    return err(MPI_ERR_INTERN, "not a mode of a non-blocking send")
                }
                m @ (Mode::Send | Mode::Ssend) => start_send(s, m, data, dest, tag, comm)?,
            };
            Ok(s.add_req(ReqEntry::new(a, ci)))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

nonblocking_send! {
    fn isend("MPI_Isend", c_int, Mode::Send);
    fn isend_c("MPI_Isend_c", i64, Mode::Send);
    pub(super) fn irsend("MPI_Irsend", c_int, Mode::Send);
    pub(super) fn issend("MPI_Issend", c_int, Mode::Ssend);
}

pub(super) unsafe fn ibsend(
    buf: *const c_void,
    count: c_int,
    ty: Handle,
    dest: c_int,
    tag: c_int,
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    call("MPI_Ibsend", comm, || {
        // SAFETY: the caller's send buffer, copied during the call.
        let data = unsafe { send_buf(buf, count.into(), ty) }?;
        let h = with_state(|s| {
            let ci = s.comm_index(comm)?;
            bsend_start(s, data, dest, tag, comm)?;
            Ok(s.add_req(ReqEntry::new(Active::Done(crate::request::empty()), ci)))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn irecv_impl(
    name: &'static str,
    buf: *mut c_void,
    count: impl Into<i64>,
    ty: Handle,
    source: c_int,
    tag: c_int,
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    call(name, comm, || {
        // SAFETY: MPI's rule: the buffer is the request's alone until it completes.
        let rb: RecvBuf<'static> = unsafe { recv_buf(buf, count.into(), ty) }?;
        let h = with_state(|s| {
            let ci = s.comm_index(comm)?;
            let a = start_recv(s, rb, source, tag, comm)?;
            Ok(s.add_req(ReqEntry::new(a, ci)))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

thin_entries! {
    irecv_impl(buf: *mut c_void, count, ty: Handle, source: c_int, tag: c_int, comm: Handle,
        request: *mut Handle);
    fn irecv("MPI_Irecv", c_int);
    pub(super) fn irecv_c("MPI_Irecv_c", i64);
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn sendrecv(
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
    let envelopes = ((dest, sendtag), (source, recvtag));
    // SAFETY: the caller's buffers, used during the call only; MPI forbids overlap.
    unsafe {
        sendrecv_of("MPI_Sendrecv", comm, envelopes, st, || {
            let sb = send_buf(sendbuf, sendcount.into(), sendtype)?;
            Ok((sb, recv_buf(recvbuf, recvcount.into(), recvtype)?))
        })
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    ty: Handle,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: Handle,
    st: *mut MpiStatus,
) -> c_int {
    let envelopes = ((dest, sendtag), (source, recvtag));
    // SAFETY: the caller's buffer: copied out first, then received into.
    unsafe {
        sendrecv_of("MPI_Sendrecv_replace", comm, envelopes, st, || {
            let sb = SendBuf::Packed(send_buf(buf, count.into(), ty)?.to_vec());
            Ok((sb, recv_buf(buf, count.into(), ty)?))
        })
    }
}

/// The send-receive `bufs` makes the buffers of, to `dest` with `sendtag` and from `source`
/// with `recvtag` on `comm`: MPI_Sendrecv and MPI_Sendrecv_replace (at MPI_THREAD_MULTIPLE,
/// as a receive and a send waited for together).
///
/// # Safety
/// The buffers stay valid until the call returns.
unsafe fn sendrecv_of(
    name: &'static str,
    comm: Handle,
    ((dest, sendtag), (source, recvtag)): ((c_int, c_int), (c_int, c_int)),
    st: *mut MpiStatus,
    bufs: impl FnOnce() -> MpiResult<(SendBuf<'static>, RecvBuf<'static>)>,
) -> c_int {
    if crate::threads::multiple() || crate::in_flight::maybe() {
        // SAFETY: the caller's contract; `blocking` waits for both before it returns.
        return unsafe {
            blocking(name, comm, st, || {
                let (sb, rb) = bufs()?;
                with_state(|s| {
                    let r = start_recv(s, rb, source, recvtag, comm)?;
                    let w = start_send(s, Mode::Send, sb, dest, sendtag, comm)?;
                    Ok((s.comm_index(comm)?, [r, w]))
                })
            })
        };
    }
    call(name, comm, || {
        let (sb, mut rb) = bufs()?;
        let (dest, stag) = (status::dest(dest)?, status::send_tag(sendtag)?);
        let (src, rtag) = (status::source(source)?, status::recv_tag(recvtag)?);
        let got = with_state(|s| {
            Ok(s.comm(comm)?
                .comm
                .raw()
                .sendrecv(&sb, dest, stag, rb.bytes(), src, rtag)?)
        })?;
        rb.finish(got.count);
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
        unsafe { status::store(st, &got) };
        Ok(())
    })
}

unsafe fn probe(source: c_int, tag: c_int, comm: Handle, st: *mut MpiStatus) -> c_int {
    call("MPI_Probe", comm, || {
        let polling = crate::threads::multiple() || crate::in_flight::maybe();
        let mut turns = crate::threads::Turns::default();
        let got = loop {
            if let Some(got) = with_state(|s| probe_on(s, comm, source, tag, !polling))? {
                break got;
            }
            crate::in_flight::progress()?;
            turns.next();
        };
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
        crate::in_flight::progress()?;
        let got = with_state(|s| probe_on(s, comm, source, tag, false))?;
        if let Some(got) = &got {
            // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
            unsafe { status::store(st, got) };
        }
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(got.is_some()), "flag") }
    })
}

/// A probe (blocking or not) on communicator `comm`; a probe of MPI_PROC_NULL finds its
/// empty message at once.
fn probe_on(
    s: &State,
    comm: Handle,
    source: c_int,
    tag: c_int,
    block: bool,
) -> MpiResult<Option<ibdyn::Status>> {
    let (src, tag) = (status::source(source)?, status::recv_tag(tag)?);
    let raw = s.comm(comm)?.comm.raw();
    if src == ibdyn::PROC_NULL {
        return Ok(Some(status::proc_null()));
    }
    Ok(if block {
        Some(raw.probe(src, tag)?)
    } else {
        raw.iprobe(src, tag)?
    })
}

/// A matched probe (blocking or not) on communicator `comm`: the message is taken out of
/// matching and stored under a new handle. MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC at once.
fn matched_probe(
    s: &mut State,
    comm: Handle,
    source: c_int,
    tag: c_int,
    block: bool,
) -> MpiResult<Option<(Handle, ibdyn::Status)>> {
    let (src, tag) = (status::source(source)?, status::recv_tag(tag)?);
    if src == ibdyn::PROC_NULL {
        return Ok(Some((MPI_MESSAGE_NO_PROC, status::proc_null())));
    }
    let ci = s.comm_index(comm)?;
    let raw = s.comm(comm)?.comm.raw();
    let found = if block {
        Some(raw.mprobe(src, tag)?)
    } else {
        raw.improbe(src, tag)?
    };
    Ok(found.map(|(got, msg)| (s.add_message(ci, msg), got)))
}

unsafe fn mprobe(
    source: c_int,
    tag: c_int,
    comm: Handle,
    message: *mut Handle,
    st: *mut MpiStatus,
) -> c_int {
    call("MPI_Mprobe", comm, || {
        let polling = crate::threads::multiple() || crate::in_flight::maybe();
        let mut turns = crate::threads::Turns::default();
        let (h, got) = loop {
            if let Some(found) = with_state(|s| matched_probe(s, comm, source, tag, !polling))? {
                break found;
            }
            crate::in_flight::progress()?;
            turns.next();
        };
        // SAFETY: the caller's output arguments.
        unsafe {
            status::store(st, &got);
            out(message, h, "message")
        }
    })
}

unsafe fn improbe(
    source: c_int,
    tag: c_int,
    comm: Handle,
    flag: *mut c_int,
    message: *mut Handle,
    st: *mut MpiStatus,
) -> c_int {
    call("MPI_Improbe", comm, || {
        crate::in_flight::progress()?;
        let found = with_state(|s| matched_probe(s, comm, source, tag, false))?;
        // SAFETY: the caller's output arguments.
        unsafe {
            if let Some((h, got)) = &found {
                status::store(st, got);
                out(message, *h, "message")?;
            }
            out(flag, c_int::from(found.is_some()), "flag")
        }
    })
}

/// The communicator and matched message `*message`, which is then gone.
unsafe fn take_message(
    message: *mut Handle,
) -> MpiResult<Option<(Handle, ibdyn_intercomm::Message)>> {
    // SAFETY: the caller's in/out argument.
    let h = unsafe { super::read(message, "message") }?;
    if h == MPI_MESSAGE_NO_PROC {
        // SAFETY: as above.
        unsafe { out(message, MPI_MESSAGE_NULL, "message") }?;
        return Ok(None);
    }
    let m = with_state(|s| s.take_message(h))?;
    // SAFETY: as above.
    unsafe { out(message, MPI_MESSAGE_NULL, "message") }?;
    Ok(Some(m))
}

/// The communicator whose error handler takes the errors of receiving message `*message`
/// (MPI_COMM_SELF when it is not one).
///
/// # Safety
/// `message` is null or the caller's message handle.
unsafe fn message_comm(message: *const Handle) -> Handle {
    // SAFETY: the caller's contract.
    match unsafe { message.as_ref() } {
        Some(&h) => crate::state::with_state(|s| Ok(s.message_comm(h))).unwrap_or(MPI_COMM_SELF),
        None => MPI_COMM_SELF,
    }
}

/// Starts receiving matched message `msg` of `comm` into `buf`.
fn start_mrecv(
    s: &mut State,
    buf: RecvBuf<'static>,
    comm: Handle,
    msg: ibdyn_intercomm::Message,
) -> MpiResult<Active> {
    let raw = s.comm(comm)?.comm.raw();
    posted_recv(buf, |bytes| raw.imrecv(bytes, msg))
}

pub(super) unsafe fn mrecv(
    buf: *mut c_void,
    count: c_int,
    ty: Handle,
    message: *mut Handle,
    st: *mut MpiStatus,
) -> c_int {
    // SAFETY: the caller's message handle.
    let comm_of_message = unsafe { message_comm(message) };
    if crate::threads::multiple() || crate::in_flight::maybe() {
        // SAFETY: passed through; the request is waited for right here.
        return unsafe {
            blocking("MPI_Mrecv", comm_of_message, st, || {
                let Some((comm, msg)) = take_message(message)? else {
                    return Ok((1, [Active::Done(status::proc_null())]));
                };
                let rb: RecvBuf<'static> = recv_buf(buf, count.into(), ty)?;
                with_state(|s| Ok((s.comm_index(comm)?, [start_mrecv(s, rb, comm, msg)?])))
            })
        };
    }
    call("MPI_Mrecv", comm_of_message, || {
        // SAFETY: the caller's in/out argument.
        let Some((comm, msg)) = (unsafe { take_message(message) })? else {
            // SAFETY: the caller's status.
            unsafe { status::store_proc_null(st) };
            return Ok(());
        };
        // SAFETY: the caller's receive buffer, written during the call only.
        let mut rb = unsafe { recv_buf(buf, count.into(), ty) }?;
        let got = with_state(|s| {
            let raw = s.comm(comm)?.comm.raw();
            Ok(raw.imrecv(rb.bytes(), msg)?.wait()?)
        })?;
        rb.finish(got.count);
        // SAFETY: the caller's status (or MPI_STATUS_IGNORE).
        unsafe { status::store(st, &got) };
        Ok(())
    })
}

pub(super) unsafe fn imrecv(
    buf: *mut c_void,
    count: c_int,
    ty: Handle,
    message: *mut Handle,
    request: *mut Handle,
) -> c_int {
    // SAFETY: the caller's message handle.
    let comm_of_message = unsafe { message_comm(message) };
    call("MPI_Imrecv", comm_of_message, || {
        // SAFETY: the caller's in/out argument.
        let m = unsafe { take_message(message) }?;
        // SAFETY: MPI's rule: the buffer is the request's alone until it completes.
        let rb: RecvBuf<'static> = unsafe { recv_buf(buf, count.into(), ty) }?;
        let h = with_state(|s| {
            let (a, ci) = match m {
                None => (Active::Done(status::proc_null()), 1),
                Some((comm, msg)) => (start_mrecv(s, rb, comm, msg)?, s.comm_index(comm)?),
            };
            Ok(s.add_req(ReqEntry::new(a, ci)))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

/// Elements of `ty` in `bytes` bytes: MPI_UNDEFINED unless a whole number.
fn elements(bytes: u64, ty: Handle) -> MpiResult<i64> {
    let size = derived::resolve(ty, false)?.size as u64;
    Ok(match size {
        0 => 0,
        s if bytes.is_multiple_of(s) => (bytes / s) as i64,
        _ => MPI_UNDEFINED as i64,
    })
}

/// Basic elements of `ty` wholly in `bytes` bytes.
pub(super) fn basic_elements(bytes: u64, ty: Handle) -> MpiResult<i64> {
    let n = derived::resolve(ty, false)?.elements_in(bytes);
    Ok(i64::try_from(n).unwrap_or(MPI_UNDEFINED as i64))
}

/// The `int` form of a count: MPI_UNDEFINED when it does not fit (MPI's rule for the
/// non-`_c` queries).
fn as_int(n: i64) -> c_int {
    c_int::try_from(n).unwrap_or(MPI_UNDEFINED)
}

/// `f(bytes received, ty)` for the status at `st`.
///
/// # Safety
/// `st` is null or points to a status.
pub(super) unsafe fn status_query(
    st: *const MpiStatus,
    ty: Handle,
    f: impl FnOnce(u64, Handle) -> MpiResult<i64>,
) -> MpiResult<i64> {
    // SAFETY: the caller's status, read only.
    let st = unsafe { super::read(st, "status") }?;
    f(st.count(), ty)
}

unsafe fn get_count(st: *const MpiStatus, ty: Handle, count: *mut c_int) -> c_int {
    call("MPI_Get_count", MPI_COMM_SELF, || {
        // SAFETY: the caller's status.
        let n = unsafe { status_query(st, ty, elements) }?;
        // SAFETY: the caller's output argument.
        unsafe { out(count, as_int(n), "count") }
    })
}

unsafe fn get_count_c(st: *const MpiStatus, ty: Handle, count: *mut i64) -> c_int {
    call("MPI_Get_count_c", MPI_COMM_SELF, || {
        // SAFETY: the caller's status.
        let n = unsafe { status_query(st, ty, elements) }?;
        // SAFETY: the caller's output argument.
        unsafe { out(count, n, "count") }
    })
}

unsafe fn get_elements(st: *const MpiStatus, ty: Handle, count: *mut c_int) -> c_int {
    call("MPI_Get_elements", MPI_COMM_SELF, || {
        // SAFETY: the caller's status.
        let n = unsafe { status_query(st, ty, basic_elements) }?;
        // SAFETY: the caller's output argument.
        unsafe { out(count, as_int(n), "count") }
    })
}

/// Checks the arguments of persistent request `p` as its non-blocking call checks them
/// (the buffer and count, the peer's rank in the group ranks name, the tag), so a bad one
/// fails at the init call with that call's error.
fn check_persistent(p: &Persistent) -> MpiResult<()> {
    let ty = derived::resolve(p.ty, true)?;
    checked_len(p.buf as *const c_void, p.count, &ty)?;
    if matches!(p.mode, Mode::Recv) {
        status::source(p.peer)?;
        status::recv_tag(p.tag)?;
    } else {
        status::dest(p.peer)?;
        status::send_tag(p.tag)?;
    }
    // Ranks name processes of the remote group of an intercommunicator.
    let size = with_state(|s| Ok(s.comm(p.comm)?.comm.raw().remote_size()))?;
    if p.peer >= size {
        return Err(CommError::InvalidRank {
            rank: p.peer.into(),
            size: size as usize,
        }
        .into());
    }
    Ok(())
}

/// Creates an inactive persistent request.
fn persistent_init(p: Persistent, request: *mut Handle, name: &'static str) -> c_int {
    call(name, p.comm, || {
        check_persistent(&p)?;
        let h = with_state(|s| {
            let ci = s.comm_index(p.comm)?;
            Ok(s.add_req(ReqEntry {
                active: None,
                comm: ci,
                persistent: Some(p),
                restart: None,
                cancelled: false,
                partitions: 0,
            }))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

macro_rules! persistent_send {
    ($f:ident, $name:literal, $mode:expr) => {
        pub(super) unsafe fn $f(
            buf: *const c_void,
            count: c_int,
            ty: Handle,
            dest: c_int,
            tag: c_int,
            comm: Handle,
            request: *mut Handle,
        ) -> c_int {
            let p = Persistent {
                mode: $mode,
                buf: buf as usize,
                count: count.into(),
                ty,
                peer: dest,
                tag,
                comm,
            };
            persistent_init(p, request, $name)
        }
    };
}
persistent_send!(send_init, "MPI_Send_init", Mode::Send);
persistent_send!(ssend_init, "MPI_Ssend_init", Mode::Ssend);
persistent_send!(rsend_init, "MPI_Rsend_init", Mode::Send);
persistent_send!(bsend_init, "MPI_Bsend_init", Mode::Bsend);

pub(super) unsafe fn recv_init(
    buf: *mut c_void,
    count: c_int,
    ty: Handle,
    source: c_int,
    tag: c_int,
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    let p = Persistent {
        mode: Mode::Recv,
        buf: buf as usize,
        count: count.into(),
        ty,
        peer: source,
        tag,
        comm,
    };
    persistent_init(p, request, "MPI_Recv_init")
}

/// Starts persistent request `h` (MPI_Start).
pub fn start_persistent(s: &mut State, h: Handle) -> MpiResult<()> {
    let i = s.req_index(h)?;
    let e = s.reqs.get(i).expect("req_index checked the slot");
    let Some(p) = e.persistent else {
        return err(MPI_ERR_REQUEST, format!("request {h:#x} is not persistent"));
    };
    if e.active.is_some() {
        return err(
            MPI_ERR_REQUEST,
            format!("request {h:#x} is active already: complete it before starting it again"),
        );
    }
    let a = match p.mode {
        // SAFETY: MPI's rule: the buffer of a persistent request stays valid while active.
        Mode::Recv => start_recv(
            s,
            unsafe { recv_buf(p.buf as *mut c_void, p.count, p.ty) }?,
            p.peer,
            p.tag,
            p.comm,
        )?,
        Mode::Bsend => {
            // SAFETY: as above; the data is copied into the attached buffer here.
            let data = unsafe { send_buf(p.buf as *const c_void, p.count, p.ty) }?;
            bsend_start(s, data, p.peer, p.tag, p.comm)?;
            Active::Done(crate::request::empty())
        }
        // SAFETY: as above.
        m => start_send(
            s,
            m,
            unsafe { send_buf(p.buf as *const c_void, p.count, p.ty) }?,
            p.peer,
            p.tag,
            p.comm,
        )?,
    };
    let e = s.reqs.get_mut(i).expect("req_index checked the slot");
    e.active = Some(a);
    e.cancelled = false;
    Ok(())
}

export!(MPI_Send, PMPI_Send, send,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) -> c_int);
export!(MPI_Send_c, PMPI_Send_c, send_c,
    (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) -> c_int);
export!(MPI_Ssend, PMPI_Ssend, ssend,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) -> c_int);
export!(MPI_Rsend, PMPI_Rsend, rsend,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) -> c_int);
export!(MPI_Bsend, PMPI_Bsend, bsend,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle) -> c_int);
export!(MPI_Recv, PMPI_Recv, recv,
    (buf: *mut c_void, count: c_int, datatype: Handle, source: c_int, tag: c_int, comm: Handle,
     status: *mut MpiStatus) -> c_int);
export!(MPI_Recv_c, PMPI_Recv_c, recv_c,
    (buf: *mut c_void, count: i64, datatype: Handle, source: c_int, tag: c_int, comm: Handle,
     status: *mut MpiStatus) -> c_int);
export!(MPI_Isend, PMPI_Isend, isend,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Isend_c, PMPI_Isend_c, isend_c,
    (buf: *const c_void, count: i64, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Issend, PMPI_Issend, issend,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Irsend, PMPI_Irsend, irsend,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Ibsend, PMPI_Ibsend, ibsend,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Irecv, PMPI_Irecv, irecv,
    (buf: *mut c_void, count: c_int, datatype: Handle, source: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Irecv_c, PMPI_Irecv_c, irecv_c,
    (buf: *mut c_void, count: i64, datatype: Handle, source: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Sendrecv, PMPI_Sendrecv, sendrecv,
    (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, dest: c_int, sendtag: c_int,
     recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, source: c_int, recvtag: c_int,
     comm: Handle, status: *mut MpiStatus) -> c_int);
export!(MPI_Sendrecv_replace, PMPI_Sendrecv_replace, sendrecv_replace,
    (buf: *mut c_void, count: c_int, datatype: Handle, dest: c_int, sendtag: c_int, source: c_int,
     recvtag: c_int, comm: Handle, status: *mut MpiStatus) -> c_int);
export!(MPI_Probe, PMPI_Probe, probe,
    (source: c_int, tag: c_int, comm: Handle, status: *mut MpiStatus) -> c_int);
export!(MPI_Iprobe, PMPI_Iprobe, iprobe,
    (source: c_int, tag: c_int, comm: Handle, flag: *mut c_int, status: *mut MpiStatus) -> c_int);
export!(MPI_Mprobe, PMPI_Mprobe, mprobe,
    (source: c_int, tag: c_int, comm: Handle, message: *mut Handle, status: *mut MpiStatus) -> c_int);
export!(MPI_Improbe, PMPI_Improbe, improbe,
    (source: c_int, tag: c_int, comm: Handle, flag: *mut c_int, message: *mut Handle,
     status: *mut MpiStatus) -> c_int);
export!(MPI_Mrecv, PMPI_Mrecv, mrecv,
    (buf: *mut c_void, count: c_int, datatype: Handle, message: *mut Handle,
     status: *mut MpiStatus) -> c_int);
export!(MPI_Imrecv, PMPI_Imrecv, imrecv,
    (buf: *mut c_void, count: c_int, datatype: Handle, message: *mut Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Get_count, PMPI_Get_count, get_count,
    (status: *const MpiStatus, datatype: Handle, count: *mut c_int) -> c_int);
export!(MPI_Get_count_c, PMPI_Get_count_c, get_count_c,
    (status: *const MpiStatus, datatype: Handle, count: *mut i64) -> c_int);
export!(MPI_Get_elements, PMPI_Get_elements, get_elements,
    (status: *const MpiStatus, datatype: Handle, count: *mut c_int) -> c_int);
export!(MPI_Send_init, PMPI_Send_init, send_init,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Bsend_init, PMPI_Bsend_init, bsend_init,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Ssend_init, PMPI_Ssend_init, ssend_init,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Rsend_init, PMPI_Rsend_init, rsend_init,
    (buf: *const c_void, count: c_int, datatype: Handle, dest: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Recv_init, PMPI_Recv_init, recv_init,
    (buf: *mut c_void, count: c_int, datatype: Handle, source: c_int, tag: c_int, comm: Handle,
     request: *mut Handle) -> c_int);
