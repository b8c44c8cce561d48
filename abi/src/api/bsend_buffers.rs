//! Attaching, detaching and flushing the buffers of buffered sends: the process's
//! (MPI_Buffer_attach/detach/flush/iflush) and MPI 4.1's per communicator
//! (MPI_Comm_attach_buffer, ...) and per session (MPI_Session_attach_buffer, ...), each in
//! `int` and `_c` form; `crate::bsend` keeps them. MPI_BUFFER_AUTOMATIC attaches a buffer
//! without a size limit. A session's buffer is kept and flushed; buffered sends use the
//! communicator's buffer, else the process's.

use super::out;
use super::session::session_call;
use crate::bsend::{Owner, AUTOMATIC};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::request::{Active, ReqEntry};
use crate::state::{with_state, State};
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;

/// Whose buffer a call is about: the process's, a communicator's or a session's.
#[derive(Clone, Copy)]
enum Whose {
    Process,
    Comm(Handle),
    Session(Handle),
}

impl Whose {
    fn owner(self, s: &State) -> MpiResult<Owner> {
        Ok(match self {
            Whose::Process => Owner::Process,
            Whose::Comm(c) => Owner::Comm(s.comm_index(c)?),
            Whose::Session(h) => Owner::Session(s.session_index(h)?),
        })
    }

    /// Runs `f` with the errors going where they belong.
    fn call(self, name: &'static str, f: impl FnOnce() -> MpiResult<()>) -> c_int {
        match self {
            Whose::Process => call(name, MPI_COMM_SELF, f),
            Whose::Comm(c) => call(name, c, f),
            Whose::Session(h) => session_call(name, h, f),
        }
    }
}

fn attach(name: &'static str, whose: Whose, buffer: *mut c_void, size: i64) -> c_int {
    whose.call(name, || {
        let addr = buffer as usize;
        let size = if addr == AUTOMATIC {
            0
        } else {
            usize::try_from(size)
                .or_else(|_| err(MPI_ERR_ARG, format!("buffer size {size} is negative")))?
        };
        with_state(|s| {
            let o = whose.owner(s)?;
            s.bsend.attach(o, addr, size)
        })
    })
}

/// Detaches; `size` gets the size in the caller's width.
fn detach<T>(
    name: &'static str,
    whose: Whose,
    buffer: *mut *mut c_void,
    size: *mut T,
    conv: impl Fn(usize) -> MpiResult<T>,
) -> c_int {
    whose.call(name, || {
        settle(whose)?;
        let (addr, n) = with_state(|s| {
            let o = whose.owner(s)?;
            s.bsend.detach(o)
        })?;
        // SAFETY: the caller's output arguments.
        unsafe {
            out(buffer, addr as *mut c_void, "buffer_addr")?;
            out(size, conv(n)?, "size")
        }
    })
}

fn flush(name: &'static str, whose: Whose, request: Option<*mut Handle>) -> c_int {
    whose.call(name, || {
        settle(whose)?;
        let h = with_state(|s| {
            let o = whose.owner(s)?;
            s.bsend.flush(o)?;
            // The non-blocking form completes within the call.
            Ok(request.map(|_| s.add_req(ReqEntry::new(Active::Done(crate::request::empty()), 1))))
        })?;
        match (request, h) {
            // SAFETY: the caller's output argument.
            (Some(r), Some(h)) => unsafe { out(r, h, "request") },
            _ => Ok(()),
        }
    })
}

/// At MPI_THREAD_MULTIPLE, waits for the buffer's sends to leave between other threads'
/// turns (a receiver may wait for a message from one of them first); then the flush of the
/// detach has nothing left to wait for.
fn settle(whose: Whose) -> MpiResult<()> {
    if !crate::threads::multiple() {
        return Ok(());
    }
    let mut turns = crate::threads::Turns::default();
    while !with_state(|s| {
        let o = whose.owner(s)?;
        s.bsend.settled(o)
    })? {
        turns.next();
    }
    Ok(())
}

fn int_size(n: usize) -> MpiResult<c_int> {
    c_int::try_from(n).or_else(|_| {
        err(
            MPI_ERR_COUNT,
            format!("the buffer's size {n} does not fit an int: use the _c form"),
        )
    })
}

fn count_size(n: usize) -> MpiResult<i64> {
    Ok(n as i64)
}

unsafe fn buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    attach("MPI_Buffer_attach", Whose::Process, buffer, size.into())
}
unsafe fn buffer_attach_c(buffer: *mut c_void, size: i64) -> c_int {
    attach("MPI_Buffer_attach_c", Whose::Process, buffer, size)
}
unsafe fn buffer_detach(buffer: *mut *mut c_void, size: *mut c_int) -> c_int {
    detach("MPI_Buffer_detach", Whose::Process, buffer, size, int_size)
}
unsafe fn buffer_detach_c(buffer: *mut *mut c_void, size: *mut i64) -> c_int {
    detach(
        "MPI_Buffer_detach_c",
        Whose::Process,
        buffer,
        size,
        count_size,
    )
}
unsafe fn buffer_flush() -> c_int {
    flush("MPI_Buffer_flush", Whose::Process, None)
}
unsafe fn buffer_iflush(request: *mut Handle) -> c_int {
    flush("MPI_Buffer_iflush", Whose::Process, Some(request))
}
unsafe fn comm_attach_buffer(comm: Handle, buffer: *mut c_void, size: c_int) -> c_int {
    attach(
        "MPI_Comm_attach_buffer",
        Whose::Comm(comm),
        buffer,
        size.into(),
    )
}
unsafe fn comm_attach_buffer_c(comm: Handle, buffer: *mut c_void, size: i64) -> c_int {
    attach("MPI_Comm_attach_buffer_c", Whose::Comm(comm), buffer, size)
}
unsafe fn comm_detach_buffer(comm: Handle, buffer: *mut *mut c_void, size: *mut c_int) -> c_int {
    detach(
        "MPI_Comm_detach_buffer",
        Whose::Comm(comm),
        buffer,
        size,
        int_size,
    )
}
unsafe fn comm_detach_buffer_c(comm: Handle, buffer: *mut *mut c_void, size: *mut i64) -> c_int {
    detach(
        "MPI_Comm_detach_buffer_c",
        Whose::Comm(comm),
        buffer,
        size,
        count_size,
    )
}
unsafe fn comm_flush_buffer(comm: Handle) -> c_int {
    flush("MPI_Comm_flush_buffer", Whose::Comm(comm), None)
}
unsafe fn comm_iflush_buffer(comm: Handle, request: *mut Handle) -> c_int {
    flush("MPI_Comm_iflush_buffer", Whose::Comm(comm), Some(request))
}
unsafe fn session_attach_buffer(session: Handle, buffer: *mut c_void, size: c_int) -> c_int {
    attach(
        "MPI_Session_attach_buffer",
        Whose::Session(session),
        buffer,
        size.into(),
    )
}
unsafe fn session_attach_buffer_c(session: Handle, buffer: *mut c_void, size: i64) -> c_int {
    attach(
        "MPI_Session_attach_buffer_c",
        Whose::Session(session),
        buffer,
        size,
    )
}
unsafe fn session_detach_buffer(
    session: Handle,
    buffer: *mut *mut c_void,
    size: *mut c_int,
) -> c_int {
    detach(
        "MPI_Session_detach_buffer",
        Whose::Session(session),
        buffer,
        size,
        int_size,
    )
}
unsafe fn session_detach_buffer_c(
    session: Handle,
    buffer: *mut *mut c_void,
    size: *mut i64,
) -> c_int {
    detach(
        "MPI_Session_detach_buffer_c",
        Whose::Session(session),
        buffer,
        size,
        count_size,
    )
}
unsafe fn session_flush_buffer(session: Handle) -> c_int {
    flush("MPI_Session_flush_buffer", Whose::Session(session), None)
}
unsafe fn session_iflush_buffer(session: Handle, request: *mut Handle) -> c_int {
    flush(
        "MPI_Session_iflush_buffer",
        Whose::Session(session),
        Some(request),
    )
}

export!(MPI_Buffer_attach, PMPI_Buffer_attach, buffer_attach, (buffer: *mut c_void, size: c_int) -> c_int);
export!(MPI_Buffer_attach_c, PMPI_Buffer_attach_c, buffer_attach_c, (buffer: *mut c_void, size: i64) -> c_int);
export!(MPI_Buffer_detach, PMPI_Buffer_detach, buffer_detach,
    (buffer_addr: *mut *mut c_void, size: *mut c_int) -> c_int);
export!(MPI_Buffer_detach_c, PMPI_Buffer_detach_c, buffer_detach_c,
    (buffer_addr: *mut *mut c_void, size: *mut i64) -> c_int);
export!(MPI_Buffer_flush, PMPI_Buffer_flush, buffer_flush, () -> c_int);
export!(MPI_Buffer_iflush, PMPI_Buffer_iflush, buffer_iflush, (request: *mut Handle) -> c_int);
export!(MPI_Comm_attach_buffer, PMPI_Comm_attach_buffer, comm_attach_buffer,
    (comm: Handle, buffer: *mut c_void, size: c_int) -> c_int);
export!(MPI_Comm_attach_buffer_c, PMPI_Comm_attach_buffer_c, comm_attach_buffer_c,
    (comm: Handle, buffer: *mut c_void, size: i64) -> c_int);
export!(MPI_Comm_detach_buffer, PMPI_Comm_detach_buffer, comm_detach_buffer,
    (comm: Handle, buffer_addr: *mut *mut c_void, size: *mut c_int) -> c_int);
export!(MPI_Comm_detach_buffer_c, PMPI_Comm_detach_buffer_c, comm_detach_buffer_c,
    (comm: Handle, buffer_addr: *mut *mut c_void, size: *mut i64) -> c_int);
export!(MPI_Comm_flush_buffer, PMPI_Comm_flush_buffer, comm_flush_buffer, (comm: Handle) -> c_int);
export!(MPI_Comm_iflush_buffer, PMPI_Comm_iflush_buffer, comm_iflush_buffer,
    (comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Session_attach_buffer, PMPI_Session_attach_buffer, session_attach_buffer,
    (session: Handle, buffer: *mut c_void, size: c_int) -> c_int);
export!(MPI_Session_attach_buffer_c, PMPI_Session_attach_buffer_c, session_attach_buffer_c,
    (session: Handle, buffer: *mut c_void, size: i64) -> c_int);
export!(MPI_Session_detach_buffer, PMPI_Session_detach_buffer, session_detach_buffer,
    (session: Handle, buffer_addr: *mut *mut c_void, size: *mut c_int) -> c_int);
export!(MPI_Session_detach_buffer_c, PMPI_Session_detach_buffer_c, session_detach_buffer_c,
    (session: Handle, buffer_addr: *mut *mut c_void, size: *mut i64) -> c_int);
export!(MPI_Session_flush_buffer, PMPI_Session_flush_buffer, session_flush_buffer, (session: Handle) -> c_int);
export!(MPI_Session_iflush_buffer, PMPI_Session_iflush_buffer, session_iflush_buffer,
    (session: Handle, request: *mut Handle) -> c_int);
