//! Readiness of the connections' streams through one epoll set, so that a progress round
//! costs the same with a thousand connections as with one: a master connected to a thousand
//! workers on another node spent two thirds of its time in poll(2) over all their sockets.
//! The set's descriptor goes into the provider's poll(2) and is readable while a stream is.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Events taken from the set per call; more ready streams are taken by further calls.
const BATCH: usize = 64;

pub(super) struct StreamSet {
    /// None where no set could be made, or once a stream could not be added to it: the
    /// provider then polls every stream itself.
    epoll: Option<OwnedFd>,
}

impl StreamSet {
    pub(super) fn new() -> StreamSet {
        // SAFETY: epoll_create1 takes flags only and returns a new descriptor or -1.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            tracing::debug!(
                "epoll_create1: {}; every stream is polled itself",
                std::io::Error::last_os_error()
            );
            return StreamSet { epoll: None };
        }
        StreamSet {
            // SAFETY: `fd` was just returned by epoll_create1 and is owned by no one else.
            epoll: Some(unsafe { OwnedFd::from_raw_fd(fd) }),
        }
    }

    /// Watches the stream `fd` of endpoint `qp` for input (level-triggered). Closing the
    /// stream's descriptor takes it out of the set.
    pub(super) fn watch(&mut self, qp: u32, fd: RawFd) {
        let Some(ep) = &self.epoll else { return };
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: u64::from(qp),
        };
        // SAFETY: `ep` and `fd` are open descriptors; `ev` lives for the call.
        if unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) } != 0 {
            tracing::debug!(
                "epoll_ctl(ADD) of endpoint {qp}: {}; every stream is polled itself",
                std::io::Error::last_os_error()
            );
            self.epoll = None;
        }
    }

    /// The descriptor to include in a poll(2) (readable while a stream is), if any.
    pub(super) fn fd(&self) -> Option<RawFd> {
        self.epoll.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// Appends endpoints whose streams have input (or an error, or a hang-up) now, at most
    /// `BATCH`: the set is level-triggered and hands out the others at the next call.
    pub(super) fn take_ready(&self, out: &mut Vec<u32>) {
        let Some(ep) = &self.epoll else { return };
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; BATCH];
        // SAFETY: `evs` has room for BATCH events; a zero timeout does not block.
        let n =
            unsafe { libc::epoll_wait(ep.as_raw_fd(), evs.as_mut_ptr(), BATCH as libc::c_int, 0) };
        if n > 0 {
            out.extend(evs[..n as usize].iter().map(|e| e.u64 as u32));
        }
    }
}
