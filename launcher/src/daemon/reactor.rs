//! The daemon's descriptors: one epoll set holds the PMI listening sockets, every PMI client
//! connection, every rank's stdout/stderr pipe, every rank's pidfd and the bell of the
//! event loop's inbox. The event loop waits on it itself and turns what it reads into
//! `Event`s, so a rank's request (a spawn's above all) is read and handled by one thread,
//! with no hand-over between threads. Starting a rank or accepting a client costs no
//! thread. A rank's end comes after what is left in its pipes, so its output precedes its
//! end on the way to the launcher.

use super::{ConnId, Event};
use crate::link::Outbox;
use ibdyn_pmi::wire::Framer;
use std::collections::{HashMap, HashSet};
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

/// The event loop's descriptors and what it knows of each.
pub(crate) struct Reactor {
    poller: Poller,
    listener: UnixListener,
    tcp: TcpListener,
    watched: HashMap<u64, Watched>,
    /// Tokens of the output pipes of each rank, so that its end can drain them first.
    outputs: HashMap<(u32, u32), Vec<u64>>,
    /// The processes watched through a pidfd.
    children: HashSet<i32>,
    next_token: u64,
    /// Id of the next accepted PMI client.
    next_id: ConnId,
    buf: Vec<u8>,
    ready: Vec<u64>,
    /// Events of descriptors that could not be watched, for the next `poll`.
    early: Vec<Event>,
}

impl Reactor {
    /// PMI clients connect on `listener`, or by TCP on `tcp` (`PMI_PORT`, MPICH's clients
    /// that do not inherit a socket); `bell` is the inbox's.
    pub(crate) fn new(
        listener: UnixListener,
        tcp: TcpListener,
        bell: RawFd,
    ) -> std::io::Result<Self> {
        listener.set_nonblocking(true)?;
        tcp.set_nonblocking(true)?;
        let poller = Poller::new()?;
        poller.add(bell, WAKE)?;
        poller.add(listener.as_raw_fd(), LISTENER)?;
        poller.add(tcp.as_raw_fd(), TCP_LISTENER)?;
        Ok(Reactor {
            poller,
            listener,
            tcp,
            watched: HashMap::new(),
            outputs: HashMap::new(),
            children: HashSet::new(),
            next_token: TCP_LISTENER + 1,
            next_id: 1,
            buf: vec![0u8; 65536],
            ready: Vec::new(),
            early: Vec::new(),
        })
    }

    /// Forwards a rank's stdout (`fd` 1) or stderr (2) to the event loop, line by line.
    pub(crate) fn watch_output(&mut self, pipe: OwnedFd, job: u32, rank: u32, fd: u8) {
        // Non-blocking: a rank's end drains its pipes until they are empty.
        if let Err(e) = nix::fcntl::fcntl(
            pipe.as_raw_fd(),
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        ) {
            tracing::warn!("daemon: O_NONBLOCK on the output of rank {rank}: {e}");
        }
        let source = Source::Output {
            job,
            rank,
            fd,
            pending: Vec::new(),
        };
        self.register(Watched { fd: pipe, source });
    }

    /// Serves PMI on `stream`, a connection the daemon made itself (the socket a rank
    /// inherits as `PMI_FD`): frames arrive as from any client, under `id`.
    pub(crate) fn attach_client(
        &mut self,
        stream: UnixStream,
        id: ConnId,
    ) -> std::io::Result<Outbox> {
        let (out, watched) = client_watch(stream, id)?;
        self.try_watch(watched).map_err(|(_, e)| e)?;
        Ok(out)
    }

    /// Whether `pid` is a process watched through a pidfd (started by the daemon).
    pub(crate) fn watches_child(&self, pid: i32) -> bool {
        self.children.contains(&pid)
    }

    /// Reaps rank `pid` when it ends (an `Exited` event). False when the kernel has no
    /// pidfds (before Linux 5.3): the caller then waits for it another way.
    pub(crate) fn watch_child(&mut self, pid: i32, job: u32, rank: u32) -> bool {
        let Ok(fd) = super::launch::pidfd_open(pid) else {
            return false;
        };
        let source = Source::Child { pid, job, rank };
        self.try_watch(Watched { fd, source }).is_ok()
    }

    /// Waits until a descriptor is ready or `timeout` has passed (None: no limit), and
    /// appends what was read to `out`. The inbox's bell only ends the wait: the caller
    /// takes the inbox.
    pub(crate) fn poll(
        &mut self,
        timeout: Option<Duration>,
        out: &mut Vec<Event>,
    ) -> std::io::Result<()> {
        out.append(&mut self.early);
        let timeout = if out.is_empty() {
            timeout
        } else {
            Some(Duration::ZERO)
        };
        let mut ready = std::mem::take(&mut self.ready);
        // On an error `ready` is empty.
        let waited = self.poller.wait(&mut ready, timeout);
        for &token in &ready {
            match token {
                WAKE => {}
                LISTENER => {
                    while let Ok((stream, _)) = self.listener.accept() {
                        self.open_client(stream, out);
                    }
                }
                TCP_LISTENER => {
                    while let Ok((stream, _)) = self.tcp.accept() {
                        let _ = stream.set_nodelay(true);
                        // The connection is served with the calls of a local one (read,
                        // write, shutdown, timeouts), which a TCP socket answers the same.
                        self.open_client(UnixStream::from(OwnedFd::from(stream)), out);
                    }
                }
                t => self.on_ready(t, out),
            }
        }
        self.ready = ready;
        match waited {
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => Err(e),
            _ => Ok(()),
        }
    }

    fn open_client(&mut self, stream: UnixStream, out: &mut Vec<Event>) {
        let id = self.next_id;
        self.next_id += 1;
        match client_watch(stream, id) {
            Ok((outbox, w)) => {
                out.push(Event::ClientOpen(id, outbox));
                self.register(w);
            }
            Err(e) => tracing::warn!("daemon: PMI client {id}: {e}"),
        }
    }

    /// Watches `w` under a new token; gives its source back when epoll refuses it.
    fn try_watch(&mut self, w: Watched) -> Result<(), (Source, std::io::Error)> {
        let token = self.next_token;
        self.next_token += 1;
        if let Err(e) = self.poller.add(w.fd.as_raw_fd(), token) {
            return Err((w.source, e));
        }
        match w.source {
            Source::Output { job, rank, .. } => {
                self.outputs.entry((job, rank)).or_default().push(token)
            }
            Source::Child { pid, .. } => {
                self.children.insert(pid);
            }
            Source::Client { .. } => {}
        }
        self.watched.insert(token, w);
        Ok(())
    }

    /// Watches `w`; one that cannot be watched is closed at once (its events go out with
    /// the next `poll`).
    fn register(&mut self, w: Watched) {
        if let Err((source, e)) = self.try_watch(w) {
            tracing::warn!("daemon: cannot watch a descriptor: {e}");
            closed(source, &mut self.early);
        }
    }

    fn unregister(&mut self, token: u64, out: &mut Vec<Event>) {
        let Some(gone) = self.watched.remove(&token) else {
            return;
        };
        self.poller.remove(gone.fd.as_raw_fd());
        match gone.source {
            Source::Output { job, rank, .. } => {
                if let Some(tokens) = self.outputs.get_mut(&(job, rank)) {
                    tokens.retain(|&t| t != token);
                    if tokens.is_empty() {
                        self.outputs.remove(&(job, rank));
                    }
                }
            }
            Source::Child { pid, .. } => {
                self.children.remove(&pid);
            }
            Source::Client { .. } => {}
        }
        closed(gone.source, out);
    }

    /// Reads what `token` has now; false once it is closed (end of file or an error).
    fn read_once(&mut self, token: u64, out: &mut Vec<Event>) -> bool {
        let Some(w) = self.watched.get_mut(&token) else {
            return false;
        };
        match read_fd(w.fd.as_raw_fd(), &mut self.buf) {
            Ok(0) => false,
            Ok(n) => {
                deliver(&mut w.source, &self.buf[..n], out);
                true
            }
            Err(e) => matches!(
                e.kind(),
                std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
            ),
        }
    }

    /// Everything a rank wrote is in its pipes once it has ended: forward all of it (the
    /// pipes are non-blocking), so that its output precedes its end.
    fn drain_outputs(&mut self, job: u32, rank: u32, out: &mut Vec<Event>) {
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
                        deliver(&mut w.source, &self.buf[..n], out);
                        true
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // Empty for now (a process the rank started may hold the pipe open).
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => false,
                };
                if !open {
                    self.unregister(t, out);
                }
            }
        }
    }

    fn on_ready(&mut self, token: u64, out: &mut Vec<Event>) {
        let child = match self.watched.get(&token).map(|w| &w.source) {
            None => return,
            Some(Source::Child { pid, job, rank }) => Some((*pid, *job, *rank)),
            Some(_) => None,
        };
        let open = match child {
            Some((pid, job, rank)) => match reap(pid, rank) {
                Some((code, signal)) => {
                    self.drain_outputs(job, rank, out);
                    out.push(Event::Exited {
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
            None => self.read_once(token, out),
        };
        if !open {
            self.unregister(token, out);
        }
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

    /// Ready tokens, waiting at most `timeout` (None: no limit) for the first.
    fn wait(&self, out: &mut Vec<u64>, timeout: Option<Duration>) -> std::io::Result<()> {
        out.clear();
        // Whole milliseconds, rounded up: a deadline is never woken for early and spun on.
        let ms = timeout.map_or(-1, |t| {
            i32::try_from(t.as_micros().div_ceil(1000)).unwrap_or(i32::MAX)
        });
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: `evs` has room for the 64 events passed.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), 64, ms) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        out.extend(evs[..n as usize].iter().map(|e| e.u64));
        Ok(())
    }
}

/// The writer half of a client connection and its reader half to watch.
fn client_watch(stream: UnixStream, id: ConnId) -> std::io::Result<(Outbox, Watched)> {
    use super::kept_fds::keep_high;
    let stream = UnixStream::from(keep_high(stream.into()));
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(CLIENT_WRITE_LIMIT))?;
    let out = Outbox::direct(UnixStream::from(keep_high(stream.try_clone()?.into())));
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

/// Turns what was read into events: whole PMI frames, whole lines of output.
fn deliver(source: &mut Source, data: &[u8], events: &mut Vec<Event>) {
    match source {
        Source::Child { .. } => {}
        Source::Client { id, framer } => events.extend(
            framer
                .push(data)
                .into_iter()
                .map(|f| Event::ClientFrame(*id, f)),
        ),
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
                None => return,
            };
            let data: Vec<u8> = pending.drain(..cut).collect();
            events.push(output(*job, *rank, *fd, data));
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

fn closed(source: Source, events: &mut Vec<Event>) {
    match source {
        Source::Child { .. } => {}
        Source::Client { id, .. } => events.push(Event::ClientClosed(id)),
        Source::Output {
            job,
            rank,
            fd,
            pending,
        } => {
            if !pending.is_empty() {
                events.push(output(job, rank, fd, pending));
            }
            events.push(Event::OutputEof { job, rank });
        }
    }
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
