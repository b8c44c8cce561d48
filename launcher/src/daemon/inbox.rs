//! The event loop's inbox for what the daemon's other threads produce (the links to the
//! launcher and the other daemons, signals, a waiter for a rank without a pidfd). Each send
//! rings a bell, an eventfd in the loop's epoll set, so one wait covers the inbox and every
//! descriptor the loop reads itself.

use super::Event;
use crossbeam_channel::{Receiver, Sender};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

/// The sending side, one clone per producing thread.
#[derive(Clone)]
pub(crate) struct EventTx {
    tx: Sender<Event>,
    bell: Arc<OwnedFd>,
}

impl EventTx {
    /// Queues `ev` and wakes the event loop; false once the loop is gone.
    pub(crate) fn send(&self, ev: Event) -> bool {
        if self.tx.send(ev).is_err() {
            return false;
        }
        let one = 1u64.to_ne_bytes();
        // An eventfd's counter only saturates after 2^64-2 rings, and a full counter still
        // reads as rung: the result does not matter.
        let _ = nix::unistd::write(&*self.bell, &one);
        true
    }
}

/// The receiving side, read by the event loop only.
pub(crate) struct Inbox {
    rx: Receiver<Event>,
    bell: Arc<OwnedFd>,
}

impl Inbox {
    /// The descriptor to wait on: readable while the bell is rung.
    pub(crate) fn bell(&self) -> RawFd {
        self.bell.as_raw_fd()
    }

    /// Silences the bell, then hands over what is queued. A send that races with this call
    /// either is taken now or rings again, so nothing waits for a later wake-up.
    pub(crate) fn take(&self) -> crossbeam_channel::TryIter<'_, Event> {
        let mut count = [0u8; 8];
        // Non-blocking: fails with EAGAIN when the bell was not rung.
        let _ = nix::unistd::read(self.bell.as_raw_fd(), &mut count);
        self.rx.try_iter()
    }
}

/// A new inbox and its first sender.
pub(crate) fn inbox() -> std::io::Result<(EventTx, Inbox)> {
    // SAFETY: eventfd takes an initial value and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
    let bell = Arc::new(unsafe { OwnedFd::from_raw_fd(fd) });
    let (tx, rx) = crossbeam_channel::unbounded();
    Ok((
        EventTx {
            tx,
            bell: bell.clone(),
        },
        Inbox { rx, bell },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(fd: RawFd) -> bool {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no timeout.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    }

    #[test]
    fn a_send_rings_the_bell_until_the_loop_takes_what_is_queued() {
        let (tx, inbox) = inbox().unwrap();
        assert!(!readable(inbox.bell()));
        assert!(tx.send(Event::Signal(15)));
        assert!(tx.clone().send(Event::Signal(2)));
        assert!(readable(inbox.bell()));
        let got: Vec<i32> = inbox
            .take()
            .map(|e| match e {
                Event::Signal(s) => s,
                _ => -1,
            })
            .collect();
        assert_eq!(got, [15, 2]);
        assert!(!readable(inbox.bell()));
        assert_eq!(inbox.take().count(), 0);
    }

    #[test]
    fn a_send_after_the_loop_is_gone_says_so() {
        let (tx, inbox) = inbox().unwrap();
        drop(inbox);
        assert!(!tx.send(Event::Signal(15)));
    }
}
