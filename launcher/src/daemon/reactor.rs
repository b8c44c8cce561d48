//! The daemon's reader: one thread waits (epoll) on the PMI listening socket, every PMI client
//! connection, every rank's stdout/stderr pipe and every rank's pidfd, and turns what it
//! reads into `Event`s. Starting a rank or accepting a client costs no thread of its own,
//! which keeps the event loop (and so the spawn path) short. A rank's end is sent only after
//! what is left in its pipes, so its output precedes its end on the way to the launcher.

use super::{ConnId, Event};
use crate::link::Outbox;
use crossbeam_channel::{Receiver, Sender};
use ibdyn_pmi::wire::Framer;
use std::collections::HashMap;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

/// A client that leaves its replies unread this long is dropped.
const CLIENT_WRITE_LIMIT: Duration = Duration::from_secs(10);
/// Longest piece of output forwarded without a newline.
const MAX_PENDING: usize = 65536;
/// Most read from one pipe of an ended rank at once: more than a pipe holds (1 MiB at
/// most unless `/proc/sys/fs/pipe-max-size` was raised).
const DRAIN_LIMIT: usize = 2 << 20;

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
    /// Starts the reader thread; PMI clients connect on `listener`, or by TCP on `tcp`
    /// (`PMI_PORT`, MPICH's clients that do not inherit a socket).
    pub(crate) fn start(
        listener: UnixListener,
        tcp: TcpListener,
        events: Sender<Event>,
    ) -> std::io::Result<Self> {
        let (wake_r, wake_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        listener.set_nonblocking(true)?;
        tcp.set_nonblocking(true)?;
        let (add, added) = crossbeam_channel::unbounded();
        std::thread::Builder::new()
            .name("reader".into())
            .spawn(move || read_loop(listener, tcp, wake_r, added, events))?;
        Ok(Reactor { add, wake: wake_w })
    }

    /// Queues `fd` for the reader thread; it watches it from the next `wake_reader`. The
    /// ranks of a job are queued together and wake the reader once: each wake-up is a
    /// context switch that would otherwise come between the starts of two ranks.
    fn add(&self, fd: OwnedFd, source: Source) {
        let _ = self.add.send(Watched { fd, source });
    }

    /// Has the reader thread take up the descriptors queued since the last call.
    pub(crate) fn wake_reader(&self) {
        if !self.add.is_empty() {
            let _ = nix::unistd::write(&self.wake, &[1]);
        }
    }

    /// Forwards a rank's stdout (`fd` 1) or stderr (2) to the event loop, line by line.
    pub(crate) fn watch_output(&self, pipe: OwnedFd, job: u32, rank: u32, fd: u8) {
        // Non-blocking: a rank's end drains its pipes until they are empty.
        if let Err(e) = nix::fcntl::fcntl(
            pipe.as_raw_fd(),
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        ) {
            tracing::warn!("daemon reader: O_NONBLOCK on the output of rank {rank}: {e}");
        }
        let source = Source::Output {
            job,
            rank,
            fd,
            pending: Vec::new(),
        };
        self.add(pipe, source);
    }

    /// Serves PMI on `stream`, a connection the daemon made itself (the socket a rank
    /// inherits as `PMI_FD`): frames arrive as from any client, under `id`.
    pub(crate) fn attach_client(&self, stream: UnixStream, id: ConnId) -> std::io::Result<Outbox> {
        let (out, watched) = client_watch(stream, id)?;
        self.add(watched.fd, watched.source);
        Ok(out)
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
const TCP_LISTENER: u64 = 2;

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

/// The reader thread's state.
struct Reader {
    poller: Poller,
    watched: HashMap<u64, Watched>,
    /// Tokens of the output pipes of each rank, so that its end can drain them first.
    outputs: HashMap<(u32, u32), Vec<u64>>,
    next_token: u64,
    events: Sender<Event>,
    buf: Vec<u8>,
}

impl Reader {
    fn register(&mut self, w: Watched) {
        let token = self.next_token;
        self.next_token += 1;
        match self.poller.add(w.fd.as_raw_fd(), token) {
            Ok(()) => {
                if let Source::Output { job, rank, .. } = w.source {
                    self.outputs.entry((job, rank)).or_default().push(token);
                }
                self.watched.insert(token, w);
            }
            Err(e) => {
                tracing::warn!("daemon reader: cannot watch a descriptor: {e}");
                closed(w.source, &self.events);
            }
        }
    }

    fn unregister(&mut self, token: u64) {
        let Some(gone) = self.watched.remove(&token) else {
            return;
        };
        self.poller.remove(gone.fd.as_raw_fd());
        if let Source::Output { job, rank, .. } = gone.source {
            if let Some(tokens) = self.outputs.get_mut(&(job, rank)) {
                tokens.retain(|&t| t != token);
                if tokens.is_empty() {
                    self.outputs.remove(&(job, rank));
                }
            }
        }
        closed(gone.source, &self.events);
    }

    /// Reads what `token` has now; false once it is closed (end of file or an error).
    fn read_once(&mut self, token: u64) -> bool {
        let Some(w) = self.watched.get_mut(&token) else {
            return false;
        };
        match read_fd(w.fd.as_raw_fd(), &mut self.buf) {
            Ok(0) => false,
            Ok(n) => deliver(&mut w.source, &self.buf[..n], &self.events),
            Err(e) => matches!(
                e.kind(),
                std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
            ),
        }
    }

    /// Everything a rank wrote is in its pipes once it has ended: forward all of it (the
    /// pipes are non-blocking), so that its output precedes its end on the way to the
    /// launcher whatever the scheduling of this thread and the event loop.
    fn drain_outputs(&mut self, job: u32, rank: u32) {
        let tokens = self.outputs.get(&(job, rank)).cloned().unwrap_or_default();
        for t in tokens {
            // What the rank left is at most a pipe's capacity; a process it started that
            // keeps writing is read on the usual way afterwards.
            let mut left = DRAIN_LIMIT;
            while let Some(w) = self.watched.get_mut(&t) {
                if left == 0 {
                    break;
                }
                let open = match read_fd(w.fd.as_raw_fd(), &mut self.buf) {
                    Ok(0) => false,
                    Ok(n) => {
                        left = left.saturating_sub(n);
                        deliver(&mut w.source, &self.buf[..n], &self.events)
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // Empty for now (a process the rank started may hold the pipe open).
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => false,
                };
                if !open {
                    self.unregister(t);
                }
            }
        }
    }

    fn on_ready(&mut self, token: u64) {
        let child = match self.watched.get(&token).map(|w| &w.source) {
            None => return,
            Some(Source::Child { pid, job, rank }) => Some((*pid, *job, *rank)),
            Some(_) => None,
        };
        let open = match child {
            Some((pid, job, rank)) => match reap(pid, rank) {
                Some((code, signal)) => {
                    self.drain_outputs(job, rank);
                    let _ = self.events.send(Event::Exited {
                        job,
                        rank,
                        pid,
                        code,
                        signal,
                    });
                    false
                }
                None => true,
            },
            None => self.read_once(token),
        };
        if !open {
            self.unregister(token);
        }
    }
}

fn read_loop(
    listener: UnixListener,
    tcp: TcpListener,
    wake: OwnedFd,
    added: Receiver<Watched>,
    events: Sender<Event>,
) {
    let poller = match Poller::new().and_then(|p| {
        p.add(wake.as_raw_fd(), WAKE)?;
        p.add(listener.as_raw_fd(), LISTENER)?;
        p.add(tcp.as_raw_fd(), TCP_LISTENER)?;
        Ok(p)
    }) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("daemon reader: epoll: {e}");
            return;
        }
    };
    let mut r = Reader {
        poller,
        watched: HashMap::new(),
        outputs: HashMap::new(),
        next_token: TCP_LISTENER + 1,
        events,
        buf: vec![0u8; 65536],
    };
    let mut next_id: ConnId = 1;
    let mut ready = Vec::new();
    loop {
        if let Err(e) = r.poller.wait(&mut ready) {
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            tracing::warn!("daemon reader: epoll_wait: {e}");
            return;
        }
        for &token in &ready {
            match token {
                WAKE => {
                    let _ = read_fd(wake.as_raw_fd(), &mut r.buf);
                    for w in added.try_iter() {
                        r.register(w);
                    }
                }
                LISTENER => {
                    while let Ok((stream, _)) = listener.accept() {
                        match open_client(stream, next_id, &r.events) {
                            Ok(w) => r.register(w),
                            Err(e) => tracing::warn!("daemon: PMI client {next_id}: {e}"),
                        }
                        next_id += 1;
                    }
                }
                TCP_LISTENER => {
                    while let Ok((stream, _)) = tcp.accept() {
                        let _ = stream.set_nodelay(true);
                        // The connection is served with the calls of a local one (read,
                        // write, shutdown, timeouts), which a TCP socket answers the same.
                        let stream = UnixStream::from(OwnedFd::from(stream));
                        match open_client(stream, next_id, &r.events) {
                            Ok(w) => r.register(w),
                            Err(e) => tracing::warn!("daemon: PMI client {next_id}: {e}"),
                        }
                        next_id += 1;
                    }
                }
                t => r.on_ready(t),
            }
        }
    }
}

fn open_client(stream: UnixStream, id: ConnId, events: &Sender<Event>) -> std::io::Result<Watched> {
    let (out, watched) = client_watch(stream, id)?;
    let _ = events.send(Event::ClientOpen(id, out));
    Ok(watched)
}

/// The writer half of a client connection and its reader half to watch.
fn client_watch(stream: UnixStream, id: ConnId) -> std::io::Result<(Outbox, Watched)> {
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(CLIENT_WRITE_LIMIT))?;
    let out = Outbox::direct(stream.try_clone()?);
    let watched = Watched {
        fd: stream.into(),
        source: Source::Client {
            id,
            framer: Framer::default(),
        },
    };
    Ok((out, watched))
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

/// Reaps an ended rank: its (code, signal); None if it has not ended after all.
fn reap(pid: i32, rank: u32) -> Option<(Option<i32>, Option<i32>)> {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    match waitpid(nix::unistd::Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
        Ok(WaitStatus::Exited(_, code)) => Some((Some(code), None)),
        Ok(WaitStatus::Signaled(_, sig, _)) => Some((None, Some(sig as i32))),
        Ok(_) | Err(nix::errno::Errno::EINTR) => None,
        Err(e) => {
            tracing::warn!("waitpid({pid}) for rank {rank}: {e}");
            Some((None, None))
        }
    }
}
