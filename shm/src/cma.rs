//! Cross-memory attach: single-copy transfers between processes with `process_vm_readv` and
//! `process_vm_writev` (the modern form of LiMIC's kernel-assisted copy).

use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use crate::ShmError;

// Yama's prctl (linux/prctl.h); not exported by the libc crate for Linux.
const PR_SET_PTRACER: libc::c_int = 0x5961_6d61;
const PR_SET_PTRACER_ANY: libc::c_ulong = libc::c_ulong::MAX;

/// The kernel moves at most about 2 GiB per call anyway; stay well under it.
const MAX_CALL_BYTES: usize = 1 << 30;

/// Whether peers of this node may read this process's memory with CMA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CmaStatus {
    Permitted,
    Refused(String),
}

impl fmt::Display for CmaStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CmaStatus::Permitted => write!(f, "permitted"),
            CmaStatus::Refused(why) => write!(f, "refused: {why}"),
        }
    }
}

/// `/proc/sys/kernel/yama/ptrace_scope`, or `None` when Yama is not active.
pub fn ptrace_scope() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Tests for real whether a non-ancestor peer (a forked child reading its parent) can read
/// this process, and explains a refusal. Takes a few milliseconds (one fork).
pub fn probe() -> CmaStatus {
    let scope = ptrace_scope();
    match test_read_by_child() {
        Ok(()) => CmaStatus::Permitted,
        Err(errno) => CmaStatus::Refused(explain(errno, scope)),
    }
}

fn explain(errno: i32, scope: Option<u32>) -> String {
    let os = io::Error::from_raw_os_error(errno);
    match (errno, scope) {
        (libc::EPERM, Some(1)) => "Yama ptrace_scope=1 and this process has not set \
            PR_SET_PTRACER (call cma::allow_peers)"
            .to_string(),
        (libc::EPERM, Some(2)) => "Yama ptrace_scope=2: only CAP_SYS_PTRACE may attach".to_string(),
        (libc::EPERM, Some(3)) => "Yama ptrace_scope=3: attaching is disabled".to_string(),
        (libc::EPERM, _) => format!("{os} (container or security policy)"),
        (libc::ENOSYS, _) => format!("{os} (kernel without CMA, or a seccomp filter)"),
        _ => format!("test read failed: {os}"),
    }
}

/// Forks a child that reads a pattern from this process; its exit code is 0 or the errno.
fn test_read_by_child() -> Result<(), i32> {
    let pattern: [u8; 64] = std::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x5a);
    let parent = std::process::id() as libc::pid_t;
    let addr = pattern.as_ptr() as usize;
    // SAFETY: the child only makes raw syscalls on stack data and calls _exit, which is
    // async-signal-safe and so fine after fork in a multi-threaded parent.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    if child == 0 {
        let mut got = [0u8; 64];
        let code = match read_raw(parent, addr, &mut got) {
            Ok(()) if got == pattern => 0,
            Ok(()) => libc::EIO,
            Err(e) => e,
        };
        // SAFETY: terminates the child without running the parent's atexit handlers.
        unsafe { libc::_exit(code) };
    }
    let code = reap(child, Duration::from_secs(5));
    std::hint::black_box(&pattern);
    match code {
        Some(0) => Ok(()),
        Some(e) => Err(e),
        None => Err(libc::ETIMEDOUT),
    }
}

/// Waits for `child` at most `limit`, killing it on expiry. Returns its exit code.
fn reap(child: libc::pid_t, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: plain waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) };
        if r == child {
            return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        }
        if r < 0 {
            return None;
        }
        if start.elapsed() > limit {
            // SAFETY: signalling and reaping our own child.
            unsafe {
                libc::kill(child, libc::SIGKILL);
                libc::waitpid(child, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Lets any process of this user read our memory where Yama (ptrace_scope=1) would refuse it.
/// A no-op without Yama or with ptrace_scope=0; an error where no process may grant it.
pub fn allow_peers() -> Result<(), ShmError> {
    match ptrace_scope() {
        None | Some(0) => Ok(()),
        Some(1) => {
            // SAFETY: prctl with integer arguments only.
            let r = unsafe { libc::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) };
            if r == 0 {
                Ok(())
            } else {
                Err(ShmError::CmaSetup(format!(
                    "prctl(PR_SET_PTRACER, ANY): {}",
                    io::Error::last_os_error()
                )))
            }
        }
        Some(s) => Err(ShmError::CmaSetup(format!(
            "Yama ptrace_scope={s} does not let a process grant access"
        ))),
    }
}

/// Copies `local.len()` bytes from `remote_addr` in process `pid` into `local`.
pub fn read(pid: i32, remote_addr: usize, local: &mut [u8]) -> Result<(), ShmError> {
    check_range(pid, remote_addr, local.len(), "read")?;
    read_raw(pid, remote_addr, local)
        .map_err(|e| cma_error("read", pid, remote_addr, local.len(), e))
}

/// Copies `local` to `remote_addr` in process `pid`.
pub fn write(pid: i32, remote_addr: usize, local: &[u8]) -> Result<(), ShmError> {
    check_range(pid, remote_addr, local.len(), "write")?;
    transfer(
        pid,
        remote_addr,
        local.as_ptr() as *mut u8,
        local.len(),
        false,
    )
    .map_err(|e| cma_error("write", pid, remote_addr, local.len(), e))
}

fn check_range(pid: i32, addr: usize, len: usize, op: &'static str) -> Result<(), ShmError> {
    if addr.checked_add(len).is_none() {
        return Err(ShmError::BadAddress { op, pid, addr, len });
    }
    Ok(())
}

fn read_raw(pid: i32, remote_addr: usize, local: &mut [u8]) -> Result<(), i32> {
    transfer(pid, remote_addr, local.as_mut_ptr(), local.len(), true)
}

/// Loops over partial transfers; `Err(errno)`. No allocation (runs in forked children).
fn transfer(pid: i32, remote: usize, local: *mut u8, len: usize, read: bool) -> Result<(), i32> {
    let mut done = 0;
    while done < len {
        let chunk = (len - done).min(MAX_CALL_BYTES);
        let liov = libc::iovec {
            // SAFETY: `done < len`, so the pointer stays inside the caller's buffer.
            iov_base: unsafe { local.add(done) } as *mut libc::c_void,
            iov_len: chunk,
        };
        let riov = libc::iovec {
            iov_base: (remote + done) as *mut libc::c_void,
            iov_len: chunk,
        };
        // SAFETY: the local iovec covers memory the caller lends us (writable for a read);
        // the kernel checks the remote one against the peer's address space.
        let n = unsafe {
            if read {
                libc::process_vm_readv(pid, &liov, 1, &riov, 1, 0)
            } else {
                libc::process_vm_writev(pid, &liov, 1, &riov, 1, 0)
            }
        };
        if n < 0 {
            let errno = io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if errno == libc::EINTR {
                continue;
            }
            return Err(errno);
        }
        if n == 0 {
            return Err(libc::EFAULT);
        }
        done += n as usize;
    }
    Ok(())
}

fn cma_error(op: &'static str, pid: i32, addr: usize, len: usize, errno: i32) -> ShmError {
    match errno {
        libc::EPERM => ShmError::CmaRefused {
            pid,
            reason: explain(errno, ptrace_scope()),
        },
        libc::ESRCH => ShmError::PeerGone { pid },
        libc::EFAULT => ShmError::BadAddress { op, pid, addr, len },
        _ => ShmError::Cma {
            op,
            pid,
            source: io::Error::from_raw_os_error(errno),
        },
    }
}
