//! A prestart template (`IBDYN_PRESTARTED=template`): a copy of a spawned program that runs up
//! to ibdyn's initialisation and then, instead of waiting for an assignment, forks further
//! copies when its node daemon asks ([`FORK_REQUEST`]). A fork skips the exec, the dynamic
//! loader and the program's own start-up that an exec'd copy pays for again each time.
//!
//! Each forked copy is made a child of the daemon (the daemon is a child subreaper; the
//! template forks twice and the middle process exits), gets the daemon's fresh PMI
//! connection, stdout and stderr in place of the template's, and goes on as an ordinary
//! waiting copy. The template forks only while it is the process's one thread.

use super::{idle_limit, pmi_fd, COPY, PRESTARTED_ENV};
use crate::error::{PmiError, Result};
use std::io::{ErrorKind, IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set to 0 (or `no`, `false`, `off`) in a spawned command's environment, its copies are
/// exec'd, not forked.
pub const FORK_ENV: &str = "IBDYN_PRESTART_FORK";

/// Whether a command with this `IBDYN_PRESTART_FORK` value (None: unset) may be forked.
pub fn fork_allowed(value: Option<&str>) -> bool {
    !value.is_some_and(crate::env::is_off)
}
/// `IBDYN_PRESTARTED`'s value in a template.
pub const TEMPLATE: &str = "template";
/// The daemon's request to fork a copy: these bytes, sent with three descriptors
/// (`SCM_RIGHTS`): the copy's PMI connection, its stdout and its stderr.
pub const FORK_REQUEST: &[u8; 8] = b"IBDYNFK1";
const MAGIC: &[u8; 8] = b"IBDYNTP1";
const MAX_TEXT: usize = 4096;
/// A forked copy waits this long at most to become the daemon's child.
const ADOPTION_LIMIT: Duration = Duration::from_secs(5);

/// What a template tells its daemon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FromTemplate {
    /// It reached ibdyn's initialisation as a single thread: it can fork copies.
    Ready,
    /// It cannot serve (why) and ends.
    Refused(String),
    /// It forked a copy: the copy's pid (a child of the daemon by now).
    Forked(i32),
    /// A fork failed (why); the template goes on.
    ForkFailed(String),
}

fn malformed(why: &str) -> PmiError {
    PmiError::Env(format!(
        "malformed message from a prestart template ({why}); \
         is the program's ibdyn the same version as the daemon's?"
    ))
}

impl FromTemplate {
    pub fn encode(&self) -> Vec<u8> {
        let (kind, body): (u8, Vec<u8>) = match self {
            FromTemplate::Ready => (0, Vec::new()),
            FromTemplate::Refused(why) => (1, why.as_bytes()[..why.len().min(MAX_TEXT)].into()),
            FromTemplate::Forked(pid) => (2, pid.to_le_bytes().to_vec()),
            FromTemplate::ForkFailed(why) => (3, why.as_bytes()[..why.len().min(MAX_TEXT)].into()),
        };
        let mut out = MAGIC.to_vec();
        out.push(kind);
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// Reads one message (the caller bounds the wait with the stream's read timeout).
    pub fn read_from(r: &mut impl Read) -> Result<FromTemplate> {
        let mut header = [0u8; 13];
        r.read_exact(&mut header).map_err(|e| match e.kind() {
            ErrorKind::UnexpectedEof => PmiError::Closed("a prestart template's message".into()),
            ErrorKind::WouldBlock | ErrorKind::TimedOut => PmiError::Timeout {
                what: "a prestart template's message".into(),
                secs: 0.0,
            },
            _ => PmiError::Io {
                what: "reading a prestart template's message".into(),
                source: e,
            },
        })?;
        if &header[..8] != MAGIC {
            return Err(malformed("wrong magic"));
        }
        let n = u32::from_le_bytes(header[9..].try_into().expect("4 bytes")) as usize;
        if n > MAX_TEXT {
            return Err(malformed("body too large"));
        }
        let mut body = vec![0u8; n];
        r.read_exact(&mut body)
            .map_err(|_| malformed("the message stopped half way"))?;
        let text = || String::from_utf8_lossy(&body).into_owned();
        match header[8] {
            0 if n == 0 => Ok(FromTemplate::Ready),
            1 => Ok(FromTemplate::Refused(text())),
            2 if n == 4 => {
                let pid = i32::from_le_bytes(body[..].try_into().expect("4 bytes"));
                if pid <= 0 {
                    return Err(malformed("not a pid"));
                }
                Ok(FromTemplate::Forked(pid))
            }
            3 => Ok(FromTemplate::ForkFailed(text())),
            _ => Err(malformed("unknown kind or length")),
        }
    }
}

static FORKED: AtomicBool = AtomicBool::new(false);

/// True in a process that was forked from a prestart template.
pub fn was_forked() -> bool {
    FORKED.load(Ordering::Relaxed)
}

/// True in a prestart template that has not forked this process off yet.
pub fn is_template() -> bool {
    std::env::var_os(PRESTARTED_ENV).is_some_and(|v| v == TEMPLATE)
}

/// In a template: tells the daemon it is ready, then forks a copy for each request. Returns
/// in a forked copy (now an ordinary waiting copy: `IBDYN_PRESTARTED=1`); ends the template
/// when the daemon closes the connection or sends nothing for `IBDYN_PRESTART_IDLE` seconds.
/// Elsewhere returns at once.
pub fn serve_forks() -> Result<()> {
    if !is_template() {
        return Ok(());
    }
    let fd = pmi_fd()?;
    // SAFETY: the daemon handed this process the descriptor; it is only borrowed here
    // (ManuallyDrop: never closed by this function).
    let conn = std::mem::ManuallyDrop::new(unsafe { UnixStream::from_raw_fd(fd) });
    let mut out: &UnixStream = &conn;
    let io = |e: std::io::Error| PmiError::Io {
        what: "serving as a prestart template".into(),
        source: e,
    };
    let threads = thread_count();
    if threads != Some(1) {
        let why = format!(
            "the program runs {} threads before ibdyn's initialisation; \
             it is not forked (its copies are started one by one)",
            threads.map_or("several".to_string(), |n| n.to_string())
        );
        let _ = out.write_all(&FromTemplate::Refused(why).encode());
        end_quietly();
    }
    // Forked copies are given to the template's parent when the middle process exits: it
    // must be the daemon (not a wrapper script that started this program).
    let daemon = daemon_pid(&conn);
    if daemon != Some(nix::unistd::getppid()) {
        let why = "the program is not the daemon's own child (a wrapper runs it); \
                   it is not forked (its copies are started one by one)";
        let _ = out.write_all(&FromTemplate::Refused(why.into()).encode());
        end_quietly();
    }
    let daemon = nix::unistd::getppid();
    out.write_all(&FromTemplate::Ready.encode()).map_err(io)?;
    conn.set_read_timeout(Some(idle_limit())).map_err(io)?;
    loop {
        let Some(fds) = receive_request(fd)? else {
            end_quietly();
        };
        let said = match fork_copy(fd, daemon, fds) {
            Ok(None) => return Ok(()),
            Ok(Some(pid)) => FromTemplate::Forked(pid),
            Err(e) => FromTemplate::ForkFailed(e.to_string()),
        };
        out.write_all(&said.encode()).map_err(io)?;
    }
}

/// Ends a template without flushing what the program buffered before its initialisation:
/// that belongs to the copies, which inherited it.
fn end_quietly() -> ! {
    // SAFETY: _exit only ends the process.
    unsafe { libc::_exit(0) }
}

/// The process at the other end of the PMI connection (the daemon made the pair).
fn daemon_pid(conn: &UnixStream) -> Option<nix::unistd::Pid> {
    let cred = nix::sys::socket::getsockopt(conn, nix::sys::socket::sockopt::PeerCredentials);
    cred.ok().map(|c| nix::unistd::Pid::from_raw(c.pid()))
}

/// The threads of this process (from /proc), None if unknown.
fn thread_count() -> Option<usize> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Field 20; the fields after the command name's closing parenthesis start at field 3.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(17)?
        .parse()
        .ok()
}

/// The next fork request's descriptors; None when the daemon closed the connection or sent
/// nothing within the idle limit.
fn receive_request(fd: RawFd) -> Result<Option<[OwnedFd; 3]>> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut bytes = [0u8; 8];
    let mut space = nix::cmsg_space!([RawFd; 3]);
    let mut iov = [IoSliceMut::new(&mut bytes)];
    let msg = loop {
        match recvmsg::<()>(fd, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC) {
            Ok(m) => break m,
            Err(nix::errno::Errno::EAGAIN) => return Ok(None),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => {
                return Err(PmiError::Io {
                    what: "waiting for a fork request".into(),
                    source: e.into(),
                })
            }
        }
    };
    let mut fds = Vec::new();
    for c in msg.cmsgs().map_err(|_| malformed("bad control message"))? {
        if let ControlMessageOwned::ScmRights(r) = c {
            // SAFETY: the kernel installed these descriptors for this process just now.
            fds.extend(r.into_iter().map(|f| unsafe { OwnedFd::from_raw_fd(f) }));
        }
    }
    let n = msg.bytes;
    if n == 0 && fds.is_empty() {
        return Ok(None);
    }
    if n != FORK_REQUEST.len() || bytes != *FORK_REQUEST {
        return Err(malformed("not a fork request"));
    }
    fds.try_into()
        .map(Some)
        .map_err(|_| malformed("a fork request needs three descriptors"))
}

/// Forks a copy whose parent is the daemon: Some(pid) in the template, None in the copy.
fn fork_copy(
    pmi: RawFd,
    daemon: nix::unistd::Pid,
    fds: [OwnedFd; 3],
) -> std::io::Result<Option<i32>> {
    use nix::unistd::{fork, ForkResult};
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    // SAFETY: the process has one thread (checked before it said Ready), so the child may
    // do anything the parent could.
    match unsafe { fork() }? {
        ForkResult::Child => {
            drop(r);
            let middle = nix::unistd::getpid();
            // SAFETY: as above; the middle process only reports and exits.
            let said = match unsafe { fork() } {
                Ok(ForkResult::Child) => {
                    drop(w);
                    return match become_copy(pmi, daemon, middle, fds) {
                        Ok(()) => Ok(None),
                        Err(e) => {
                            let _ = writeln!(std::io::stderr(), "ibdyn: a forked copy: {e}");
                            // SAFETY: _exit only ends the process.
                            unsafe { libc::_exit(1) }
                        }
                    };
                }
                Ok(ForkResult::Parent { child }) => child.as_raw(),
                Err(e) => -(e as i32),
            };
            let _ = std::fs::File::from(w).write_all(&said.to_le_bytes());
            // SAFETY: _exit only ends the process (its copy of the template must not flush).
            unsafe { libc::_exit(0) }
        }
        ForkResult::Parent { child } => {
            drop(w);
            drop(fds);
            let _ = nix::sys::wait::waitpid(child, None);
            let mut b = [0u8; 4];
            std::fs::File::from(r).read_exact(&mut b)?;
            match i32::from_le_bytes(b) {
                pid if pid > 0 => Ok(Some(pid)),
                e => Err(std::io::Error::from_raw_os_error(-e)),
            }
        }
    }
}

/// In the forked copy: takes the daemon's descriptors, waits to be the daemon's child, and
/// becomes an ordinary waiting copy.
fn become_copy(
    pmi: RawFd,
    daemon: nix::unistd::Pid,
    middle: nix::unistd::Pid,
    fds: [OwnedFd; 3],
) -> std::io::Result<()> {
    use nix::unistd::{dup2, getppid};
    // A group of its own, like every process the daemon starts (the daemon tells those from
    // orphans it adopted by this).
    nix::unistd::setpgid(nix::unistd::Pid::from_raw(0), nix::unistd::Pid::from_raw(0))?;
    let [conn, stdout, stderr] = fds;
    dup2(stdout.as_raw_fd(), 1)?;
    dup2(stderr.as_raw_fd(), 2)?;
    // In place of the template's connection, under the number PMI_FD names.
    dup2(conn.as_raw_fd(), pmi)?;
    drop((conn, stdout, stderr));
    // The middle process is exiting; then the kernel gives this one to the subreaper.
    let deadline = Instant::now() + ADOPTION_LIMIT;
    while getppid() == middle {
        if Instant::now() > deadline {
            return Err(std::io::Error::other(format!(
                "not adopted by the node daemon (pid {daemon}) within {ADOPTION_LIMIT:?}"
            )));
        }
        std::thread::yield_now();
    }
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
    if getppid() != daemon {
        return Err(std::io::Error::other(format!(
            "adopted by pid {} rather than the node daemon (pid {daemon}): it ended, or is no \
             child subreaper",
            getppid()
        )));
    }
    std::env::set_var(PRESTARTED_ENV, COPY);
    FORKED.store(true, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(m: &FromTemplate) -> Result<FromTemplate> {
        FromTemplate::read_from(&mut &m.encode()[..])
    }

    #[test]
    fn template_messages_survive_the_wire() {
        for m in [
            FromTemplate::Ready,
            FromTemplate::Refused("two threads".into()),
            FromTemplate::Forked(4242),
            FromTemplate::ForkFailed("EAGAIN".into()),
        ] {
            assert_eq!(roundtrip(&m).unwrap(), m);
        }
    }

    #[test]
    fn malformed_template_messages_are_errors_not_panics() {
        let good = FromTemplate::Forked(7).encode();
        for cut in 0..good.len() {
            assert!(
                FromTemplate::read_from(&mut &good[..cut]).is_err(),
                "cut {cut}"
            );
        }
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(FromTemplate::read_from(&mut &bad[..]).is_err());
        let mut kind = good.clone();
        kind[8] = 9;
        assert!(FromTemplate::read_from(&mut &kind[..]).is_err());
        let zero = [&MAGIC[..], &[2], &4u32.to_le_bytes(), &0i32.to_le_bytes()].concat();
        assert!(FromTemplate::read_from(&mut &zero[..]).is_err());
        let huge = [&MAGIC[..], &[1], &u32::MAX.to_le_bytes()].concat();
        assert!(FromTemplate::read_from(&mut &huge[..]).is_err());
        let ready_with_body = [&MAGIC[..], &[0], &1u32.to_le_bytes(), b"x"].concat();
        assert!(FromTemplate::read_from(&mut &ready_with_body[..]).is_err());
    }

    #[test]
    fn ibdyn_prestart_fork_off_values() {
        for off in ["0", "no", "False", " off "] {
            assert!(!fork_allowed(Some(off)), "{off:?}");
        }
        for on in [None, Some("1"), Some(""), Some("yes")] {
            assert!(fork_allowed(on), "{on:?}");
        }
    }

    #[test]
    fn a_process_that_is_not_a_template_does_not_serve() {
        assert!(!is_template());
        serve_forks().unwrap();
        assert!(!was_forked());
    }

    #[test]
    fn this_test_process_counts_its_threads() {
        // The test harness runs tests on threads of its own: at least one.
        assert!(thread_count().is_some_and(|n| n >= 1));
    }
}
