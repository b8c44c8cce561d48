//! The starting thread's templates (`ibdyn_pmi::prestart::template`): for each command whose
//! copies may be forked, one copy of the program is started as a template; the copies are
//! then forked from it. A command whose template cannot serve (the program starts threads
//! before its initialisation, prints more than a pipe holds before it, does not reach it
//! within `READY_LIMIT`, or is not an ibdyn program) has its copies exec'd one by one. So are
//! the copies ordered while its template is still starting: a copy comes back at once, as
//! before (a spawn may be waiting for it on the event loop), and the template takes over once
//! it is ready.
//!
//! What the program printed before its initialisation was printed once, by the template: it
//! is put in each forked copy's pipes before the copy runs, so a copy that becomes a rank
//! shows it as an exec'd one would.

use super::{launch_copy, Key, Order, Waiting};
use ibdyn_pmi::prestart::template::{FromTemplate, FORK_REQUEST, TEMPLATE};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// A template's start-up, up to its initialisation, at most.
const READY_LIMIT: Duration = Duration::from_secs(10);
/// A fork and the template's answer, at most.
const REPLY_LIMIT: Duration = Duration::from_secs(5);
/// Templates kept at once per daemon (one per command); starting another ends the one used
/// least recently.
const MAX_TEMPLATES: usize = 8;
/// Commands remembered as not forkable, at most (then forgotten, and tried again).
const MAX_UNUSABLE: usize = 1024;
/// The most a program may print before its initialisation and be forked: a copy's pipe takes
/// it whole before the copy runs.
const MAX_PREFACE: usize = 32 << 10;

struct Template {
    pid: i32,
    /// Signals the template, never another process that got its pid.
    pidfd: OwnedFd,
    conn: UnixStream,
    /// Its connection's descriptor number, which the forked copies' `PMI_FD` names too.
    fd_in_copy: RawFd,
    /// Its stdout and stderr, and what it printed on them before its initialisation.
    output: [(OwnedFd, Vec<u8>); 2],
    ready: bool,
    started: Instant,
    last_used: Instant,
}

/// Why a fork did not give a copy.
enum Failure {
    /// The fork failed; the template goes on.
    Fork(String),
    /// The template is gone or broken.
    Gone(String),
}

#[derive(Default)]
pub(super) struct Templates {
    by_key: HashMap<Key, Template>,
    /// Commands whose templates could not serve: their copies are exec'd.
    unusable: HashSet<Key>,
}

impl Templates {
    /// A copy for `o` forked from its command's template, which is started first if need be
    /// (`started` is told its pid); None when the command has no template that serves yet:
    /// the caller execs the copy.
    pub(super) fn fork(&mut self, o: &Order, started: &mut impl FnMut(i32)) -> Option<Waiting> {
        if !o.fork || self.unusable.contains(&o.key) {
            return None;
        }
        // A template that ended (its idle limit) is replaced once.
        for _ in 0..2 {
            if !self.by_key.contains_key(&o.key) {
                self.make_room();
                match start(o) {
                    Ok(t) => {
                        started(t.pid);
                        self.by_key.insert(o.key.clone(), t);
                    }
                    Err(e) => return self.give_up(&o.key, &format!("cannot start it: {e}")),
                }
            }
            let t = self.by_key.get_mut(&o.key)?;
            t.last_used = Instant::now();
            let was_ready = t.ready;
            if !t.ready {
                match t.check_ready() {
                    Ok(true) => {}
                    Ok(false) if t.started.elapsed() < READY_LIMIT => return None,
                    Ok(false) => {
                        let why = format!(
                            "it did not reach ibdyn's initialisation within {READY_LIMIT:?}"
                        );
                        return self.give_up(&o.key, &why);
                    }
                    Err(why) => return self.give_up(&o.key, &why),
                }
            }
            match t.fork_one() {
                Ok(w) => return Some(w),
                Err(Failure::Fork(why)) => {
                    tracing::warn!("prestart template pid {}: {why}", t.pid);
                    return None;
                }
                Err(Failure::Gone(why)) if was_ready => {
                    tracing::debug!("prestart template pid {}: {why}", t.pid);
                    self.by_key.remove(&o.key);
                }
                Err(Failure::Gone(why)) => return self.give_up(&o.key, &why),
            }
        }
        None
    }

    /// Ends the template used least recently if there are `MAX_TEMPLATES` (commands spawned
    /// with ever new arguments would otherwise keep one process each).
    fn make_room(&mut self) {
        if self.by_key.len() < MAX_TEMPLATES {
            return;
        }
        let oldest = self
            .by_key
            .iter()
            .min_by_key(|(_, t)| t.last_used)
            .map(|(k, _)| k.clone());
        if let Some(k) = oldest {
            tracing::debug!(
                "prestart template of {}: ended to make room",
                k.path.display()
            );
            self.by_key.remove(&k);
        }
    }

    fn give_up(&mut self, key: &Key, why: &str) -> Option<Waiting> {
        tracing::info!(
            "prestart template of {}: {why}; its copies are started one by one",
            key.path.display()
        );
        self.by_key.remove(key);
        if self.unusable.len() >= MAX_UNUSABLE {
            self.unusable.clear();
        }
        self.unusable.insert(key.clone());
        None
    }
}

fn start(o: &Order) -> std::io::Result<Template> {
    crate::daemon::adopted::become_subreaper()?;
    let (started, conn, fd) = launch_copy(o, TEMPLATE)?;
    // The template is not reaped before the event loop hears of it, after this.
    let pidfd = match crate::daemon::launch::pidfd_open(started.pid) {
        Ok(p) => p,
        Err(e) => {
            // SAFETY: kill only sends a signal; the child is not reaped yet, so the pid is its.
            unsafe { libc::kill(started.pid, libc::SIGKILL) };
            let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(started.pid), None);
            return Err(e);
        }
    };
    for fd in [&started.stdout, &started.stderr] {
        nix::fcntl::fcntl(
            fd.as_raw_fd(),
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )?;
    }
    Ok(Template {
        pid: started.pid,
        pidfd,
        conn,
        fd_in_copy: fd,
        output: [(started.stdout, Vec::new()), (started.stderr, Vec::new())],
        ready: false,
        started: Instant::now(),
        last_used: Instant::now(),
    })
}

impl Drop for Template {
    fn drop(&mut self) {
        // SAFETY: pidfd_send_signal on our own pidfd; a process that ended is not signalled.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.pidfd.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
    }
}

impl Template {
    /// Whether the template has reached its initialisation (without waiting), keeping what it
    /// printed so far.
    fn check_ready(&mut self) -> Result<bool, String> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        for i in 0..2 {
            self.keep_output(i)?;
        }
        let mut fds = [PollFd::new(self.conn.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => Ok(false),
            Ok(_) => self.read_ready().map(|()| true),
            Err(e) => Err(format!("poll: {e}")),
        }
    }

    fn read_ready(&mut self) -> Result<(), String> {
        let _ = self.conn.set_read_timeout(Some(REPLY_LIMIT));
        match FromTemplate::read_from(&mut &self.conn) {
            Ok(FromTemplate::Ready) => {
                // Printed before it said so: in the pipes now.
                for i in 0..2 {
                    self.keep_output(i)?;
                }
                self.ready = true;
                Ok(())
            }
            Ok(FromTemplate::Refused(why)) => Err(why),
            Ok(other) => Err(format!("it sent {other:?} before it was ready")),
            Err(e) => Err(format!("it is not an ibdyn program of this version ({e})")),
        }
    }

    /// Reads what the template printed on stream `i` so far.
    fn keep_output(&mut self, i: usize) -> Result<(), String> {
        let (fd, kept) = &mut self.output[i];
        let mut buf = [0u8; 4096];
        loop {
            match nix::unistd::read(fd.as_raw_fd(), &mut buf) {
                Ok(0) | Err(nix::errno::Errno::EAGAIN) => return Ok(()),
                Ok(n) => kept.extend_from_slice(&buf[..n]),
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(format!("reading its output: {e}")),
            }
            if kept.len() > MAX_PREFACE {
                return Err(format!(
                    "it prints more than {} KiB before ibdyn's initialisation",
                    MAX_PREFACE >> 10
                ));
            }
        }
    }

    /// Asks the template for a copy and waits for its pid.
    fn fork_one(&mut self) -> Result<Waiting, Failure> {
        use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
        let gone = |what: &str, e: &dyn std::fmt::Display| Failure::Gone(format!("{what}: {e}"));
        let (ours, theirs) = UnixStream::pair().map_err(|e| gone("socketpair", &e))?;
        let (mut reads, mut writes) = (Vec::with_capacity(2), Vec::with_capacity(2));
        for (_, kept) in &self.output {
            let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
                .map_err(|e| Failure::Fork(format!("pipe: {e}")))?;
            let mut w = std::fs::File::from(w);
            // Below a pipe's capacity: does not block.
            w.write_all(kept)
                .map_err(|e| Failure::Fork(format!("writing the preface: {e}")))?;
            reads.push(r);
            writes.push(OwnedFd::from(w));
        }
        let fds = [
            theirs.as_raw_fd(),
            writes[0].as_raw_fd(),
            writes[1].as_raw_fd(),
        ];
        let iov = [std::io::IoSlice::new(FORK_REQUEST)];
        sendmsg::<()>(
            self.conn.as_raw_fd(),
            &iov,
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::MSG_NOSIGNAL,
            None,
        )
        .map_err(|e| gone("asking for a fork", &e))?;
        drop((theirs, writes));
        let (Some(err), Some(out)) = (reads.pop(), reads.pop()) else {
            return Err(gone("pipes", &"two expected"));
        };
        let _ = self.conn.set_read_timeout(Some(REPLY_LIMIT));
        match FromTemplate::read_from(&mut &self.conn) {
            Ok(FromTemplate::Forked(pid)) => Ok(Waiting {
                pid,
                pmi: ours,
                fd_in_copy: self.fd_in_copy,
                stdout: out,
                stderr: err,
            }),
            Ok(FromTemplate::ForkFailed(why)) => Err(Failure::Fork(why)),
            Ok(other) => Err(gone("unexpected answer", &format!("{other:?}"))),
            Err(e) => Err(gone("its answer", &e)),
        }
    }
}
