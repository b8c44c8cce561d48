//! A doorbell a `poll` can wait on, for a receiver that sleeps in another poll than the
//! queue's futex (the fabric's, when it also has network traffic): a datagram socket in the
//! abstract namespace, named after the receive segment, to which senders write one byte.
//! The kernel removes the name when the receiver's socket closes, so nothing is left behind.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// The abstract socket address of the bell of segment `segment`.
fn address(segment: &str) -> io::Result<SocketAddr> {
    SocketAddr::from_abstract_name(format!("{segment}-bell"))
}

/// The receiver's end: bound, non-blocking.
pub(crate) struct Bell {
    sock: UnixDatagram,
}

impl Bell {
    pub(crate) fn bind(segment: &str) -> io::Result<Bell> {
        let sock = UnixDatagram::bind_addr(&address(segment)?)?;
        sock.set_nonblocking(true)?;
        Ok(Bell { sock })
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }

    /// Reads every ring that arrived, so the next poll blocks again.
    pub(crate) fn drain(&self) {
        let mut b = [0u8; 8];
        while self.sock.recv(&mut b).is_ok() {}
    }
}

/// Writes one byte to the bell of segment `segment`. Failure (the receiver just ended, or
/// its socket buffer is full of earlier rings) leaves it to wake at its timeout. The socket is
/// made for the ring: a process keeps no descriptor for ringing, and rings are rare (one per
/// sleep of a receiver).
pub(crate) fn ring(segment: &str) {
    let sent = address(segment).and_then(|to| {
        let s = UnixDatagram::unbound()?;
        s.set_nonblocking(true)?;
        s.send_to_addr(&[1], &to)
    });
    if let Err(e) = sent {
        tracing::debug!(segment, "ringing the bell failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(bell: &Bell) -> bool {
        let mut pfd = libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(&bell.fd()),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; zero timeout.
        unsafe { libc::poll(&mut pfd, 1, 0) == 1 }
    }

    #[test]
    fn a_ring_makes_the_bell_readable_until_drained_and_the_name_is_taken_while_bound() {
        let name = format!("ibdyn-bell-test-{}", std::process::id());
        let bell = Bell::bind(&name).expect("bind");
        assert!(!readable(&bell));
        ring(&name);
        ring(&name);
        assert!(readable(&bell));
        bell.drain();
        assert!(!readable(&bell));
        assert!(Bell::bind(&name).is_err(), "the name is taken while bound");
        // (Not checked: that the name is free again after the close. Other tests of this
        // binary fork, and a child forked meanwhile holds the socket until it exits.)
        drop(bell);
        // Ringing a bell nobody listens to is not an error for the sender.
        ring(&format!("{name}-nobody"));
    }
}
