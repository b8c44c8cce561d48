//! The daemon's reader: one thread waits (epoll) on the PMI listening socket, every PMI client
//! connection, every rank's stdout/stderr pipe and every rank's pidfd, and turns what it
//! reads into `Event`s. Starting a rank or accepting a client costs no thread of its own,
//! which keeps the event loop (and so the spawn path) short.

use super::{ConnId, Event};
use crate::link::Outbox;
use crossbeam_channel::{Receiver, Sender};
use ibdyn_pmi::wire::Framer;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

/// A client that leaves its replies unread this long is dropped.
const CLIENT_WRITE_LIMIT: Duration = Duration::from_secs(10);
/// Longest piece of output forwarded without a newline.
const MAX_PENDING: usize = 65536;

/// What a watched descriptor is.
enum Source {
    Output {
        job: u32,
        rank: u32,
        fd: u8,
        pending: Vec<u8>,
    },
    Client {
        id: ConnId,
        framer: Framer,
    },
    /// A pidfd: readable once the process has ended.
    Child {
        pid: i32,
        job: u32,
        rank: u32,
    },
}

struct Watched {
    fd: OwnedFd,
    source: Source,
}

/// The main thread's handle: hands new rank pipes and pidfds to the reader thread.
pub(crate) struct Reactor {
    add: Sender<Watched>,
    wake: OwnedFd,
}

impl Reactor {
    /// Starts the reader thread; PMI clients connect on `listener`.
    pub(crate) fn start(listener: UnixListener, events: Sender<Event>) -> std::io::Result<Self> {
        let (wake_r, wake_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        listener.set_nonblocking(true)?;
        let (add, added) = crossbeam_channel::unbounded();
        std::thread::Builder::new()
            .name("reader".into())
            .spawn(move || read_loop(listener, wake_r, added, events))?;
        Ok(Reactor { add, wake: wake_w })
    }

    fn add(&self, fd: OwnedFd, source: Source) {
        if self.add.send(Watched { fd, source }).is_ok() {
            let _ = nix::unistd::write(&self.wake, &[1]);
        }
    }

    /// Forwards a rank's stdout (`fd` 1) or stderr (2) to the event loop, line by line.
    pub(crate) fn watch_output(&self, pipe: OwnedFd, job: u32, rank: u32, fd: u8) {
        let source = Source::Output {
            job,
            rank,
            fd,
            pending: Vec::new(),
        };
        self.add(pipe, source);
    }

    /// Reaps rank `pid` when it ends (an `Exited` event). False when the kernel has no
    /// pidfds (before Linux 5.3): the caller then waits for it another way.
    pub(crate) fn watch_child(&self, pid: i32, job: u32, rank: u32) -> bool {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return false;
        }
        // SAFETY: the kernel just gave us this descriptor; nothing else owns it.
        let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as RawFd) };
        self.add(fd, Source::Child { pid, job, rank });
        true
    }
}

const WAKE: u64 = 0;
const LISTENER: u64 = 1;

/// An epoll set: the cost of a wake-up does not grow with the number of ranks alive.
struct Poller(OwnedFd);

impl Poller {
    fn new() -> std::io::Result<Poller> {
        // SAFETY: epoll_create1 returns a new descriptor or -1.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the descriptor is new and owned by nothing else.
        Ok(Poller(unsafe {
            <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd)
        }))
    }

    fn add(&self, fd: RawFd, token: u64) -> std::io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: `ev` is a valid epoll_event; `fd` is open.
        if unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stops watching `fd`. Closing it is not enough when the open file lives on in a
    /// duplicate (a client socket's writer half): epoll would keep reporting it.
    fn remove(&self, fd: RawFd) {
        // SAFETY: EPOLL_CTL_DEL ignores the event argument; `fd` is open.
        unsafe {
            libc::epoll_ctl(
                self.0.as_raw_fd(),
                libc::EPOLL_CTL_DEL,
                fd,
                std::ptr::null_mut(),
            )
        };
    }

    /// Ready tokens (waits without a timeout).
    fn wait(&self, out: &mut Vec<u64>) -> std::io::Result<()> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: `evs` has room for the 64 events passed.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), 64, -1) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        out.clear();
        out.extend(evs[..n as usize].iter().map(|e| e.u64));
        Ok(())
    }
}

fn read_loop(
    listener: UnixListener,
    wake: OwnedFd,
    added: Receiver<Watched>,
    events: Sender<Event>,
) {
    let poller = match Poller::new().and_then(|p| {
        p.add(wake.as_raw_fd(), WAKE)?;
        p.add(listener.as_raw_fd(), LISTENER)?;
        Ok(p)
    }) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("daemon reader: epoll: {e}");
            return;
        }
    };
    let mut watched: std::collections::HashMap<u64, Watched> = Default::default();
    let mut next_token = LISTENER + 1;
    let mut register = |w: Watched, watched: &mut std::collections::HashMap<u64, Watched>| {
        match poller.add(w.fd.as_raw_fd(), next_token) {
            Ok(()) => {
                watched.insert(next_token, w);
            }
            Err(e) => {
                tracing::warn!("daemon reader: cannot watch a descriptor: {e}");
                closed(w.source, &events);
            }
        }
        next_token += 1;
    };
    let mut next_id: ConnId = 1;
    let mut buf = vec![0u8; 65536];
    let mut ready = Vec::new();
    loop {
        if let Err(e) = poller.wait(&mut ready) {
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            tracing::warn!("daemon reader: epoll_wait: {e}");
            return;
        }
        for &token in &ready {
            match token {
                WAKE => {
                    let _ = read_fd(wake.as_raw_fd(), &mut buf);
                    for w in added.try_iter() {
                        register(w, &mut watched);
                    }
                }
                LISTENER => {
                    while let Ok((stream, _)) = listener.accept() {
                        match open_client(stream, next_id, &events) {
                            Ok(w) => register(w, &mut watched),
                            Err(e) => tracing::warn!("daemon: PMI client {next_id}: {e}"),
                        }
                        next_id += 1;
                    }
                }
                t => {
                    let Some(w) = watched.get_mut(&t) else {
                        continue;
                    };
                    let open = match w.source {
                        Source::Child { pid, job, rank } => !reap(pid, job, rank, &events),
                        _ => match read_fd(w.fd.as_raw_fd(), &mut buf) {
                            Ok(0) => false,
                            Ok(n) => deliver(&mut w.source, &buf[..n], &events),
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => true,
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => true,
                            Err(_) => false,
                        },
                    };
                    if !open {
                        if let Some(gone) = watched.remove(&t) {
                            poller.remove(gone.fd.as_raw_fd());
                            closed(gone.source, &events);
                        }
                    }
                }
            }
        }
    }
}

fn open_client(stream: UnixStream, id: ConnId, events: &Sender<Event>) -> std::io::Result<Watched> {
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(CLIENT_WRITE_LIMIT))?;
    let out = Outbox::direct(stream.try_clone()?);
    let _ = events.send(Event::ClientOpen(id, out));
    Ok(Watched {
        fd: stream.into(),
        source: Source::Client {
            id,
            framer: Framer::default(),
        },
    })
}

fn read_fd(fd: RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: `buf` is valid for `buf.len()` bytes of writes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Hands what was read to the event loop; false once the receiver is gone.
fn deliver(source: &mut Source, data: &[u8], events: &Sender<Event>) -> bool {
    match source {
        Source::Child { .. } => true,
        Source::Client { id, framer } => framer
            .push(data)
            .into_iter()
            .all(|f| events.send(Event::ClientFrame(*id, f)).is_ok()),
        Source::Output {
            job,
            rank,
            fd,
            pending,
        } => {
            pending.extend_from_slice(data);
            // Forward whole lines; a very long line goes in pieces.
            let cut = match pending.iter().rposition(|&b| b == b'\n') {
                Some(p) => p + 1,
                None if pending.len() >= MAX_PENDING => pending.len(),
                None => return true,
            };
            let data: Vec<u8> = pending.drain(..cut).collect();
            events.send(output(*job, *rank, *fd, data)).is_ok()
        }
    }
}

fn output(job: u32, rank: u32, fd: u8, data: Vec<u8>) -> Event {
    Event::Output {
        job,
        rank,
        fd,
        data,
    }
}

fn closed(source: Source, events: &Sender<Event>) {
    let _ = match source {
        Source::Child { .. } => Ok(()),
        Source::Client { id, .. } => events.send(Event::ClientClosed(id)),
        Source::Output {
            job,
            rank,
            fd,
            pending,
        } => {
            if !pending.is_empty() {
                let _ = events.send(output(job, rank, fd, pending));
            }
            events.send(Event::OutputEof { job, rank })
        }
    };
}

/// Reaps an ended rank; false if it has not ended after all.
fn reap(pid: i32, job: u32, rank: u32, events: &Sender<Event>) -> bool {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    let (code, signal) = match waitpid(nix::unistd::Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG))
    {
        Ok(WaitStatus::Exited(_, code)) => (Some(code), None),
        Ok(WaitStatus::Signaled(_, sig, _)) => (None, Some(sig as i32)),
        Ok(_) | Err(nix::errno::Errno::EINTR) => return false,
        Err(e) => {
            tracing::warn!("waitpid({pid}) for rank {rank}: {e}");
            (None, None)
        }
    };
    let _ = events.send(Event::Exited {
        job,
        rank,
        pid,
        code,
        signal,
    });
    true
}
