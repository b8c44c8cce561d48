//! Fork helpers for tests: children run a closure and `_exit` with its code; parents reap
//! them with a bound.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Forks; the child runs `body` and exits with its return value (101 on panic).
pub fn fork_child(body: impl FnOnce() -> i32) -> libc::pid_t {
    // SAFETY: the child only runs `body` (test code that allocates at most, which glibc makes
    // safe after fork) and then `_exit`s without returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(101);
        // SAFETY: ends the child immediately.
        unsafe { libc::_exit(code) };
    }
    pid
}

/// Exit code of `pid`, killing it if it runs longer than `limit`.
pub fn reap(pid: libc::pid_t, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        }
        assert!(r >= 0, "waitpid: {}", std::io::Error::last_os_error());
        if start.elapsed() > limit {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

pub fn shm_exists(name: &str) -> bool {
    std::path::Path::new(&format!("/dev/shm/{name}")).exists()
}

pub fn my_pid() -> i32 {
    std::process::id() as i32
}

/// Children that are killed and reaped if the test panics before reaping them.
pub struct Children(pub Vec<libc::pid_t>);

impl Children {
    /// Reaps every child (bounded), returning their exit codes.
    pub fn reap_all(&mut self, limit: Duration) -> Vec<Option<i32>> {
        self.0.drain(..).map(|pid| reap(pid, limit)).collect()
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for pid in self.0.drain(..) {
            reap(pid, Duration::ZERO);
        }
    }
}
