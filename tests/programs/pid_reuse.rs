//! A peer that died is found dead even when its pid already belongs to another process. The
//! parent (one process) spawns a child on its node, learns its pid, and waits until the child
//! has exited and been reaped. It then gives that very pid to a sleeping process of its own
//! (through `/proc/sys/kernel/ns_last_pid`, as checkpoint-restore tools do) and posts a receive
//! from the dead child. Liveness by pid alone takes the sleeper for the child and waits forever;
//! by pid and start time, the receive fails as from a dead peer.
//!
//! Prints `pid_reuse: failed as dead: ERROR`, or `pid_reuse: SKIPPED: WHY` where this process
//! may not choose the next pid (not root, or no such file); anything else exits 1.

use ibdyn::traits::*;
#[path = "support/spawn_self.rs"]
mod spawn_self;
use spawn_self::spawn_self;
use std::time::{Duration, Instant};

const PID: i32 = 1;
const NEVER: i32 = 2;
/// Bound on every wait for another process's state, and on the receive itself.
const BOUND: Duration = Duration::from_secs(30);
const NS_LAST_PID: &str = "/proc/sys/kernel/ns_last_pid";

fn fail(what: &str) -> ! {
    println!("pid_reuse: {what}");
    std::process::exit(1)
}

fn exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// When process `pid` started, in clock ticks after boot (/proc/PID/stat field 22).
fn start_time(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// Starts a process that sleeps with pid `pid` and a start time other than `not_at` (the
/// clock ticks every 10 ms, and a short-lived child may end within its tick), or says why
/// it cannot.
fn sleeper_with_pid(pid: i32, not_at: u64) -> Result<i32, String> {
    for _ in 0..100 {
        if exists(pid) {
            return Err(format!("pid {pid} was taken by another process first"));
        }
        std::fs::write(NS_LAST_PID, (pid - 1).to_string())
            .map_err(|e| format!("cannot write {NS_LAST_PID}: {e}"))?;
        // SAFETY: the new process only makes system calls and leaves with _exit.
        match unsafe { libc::fork() } {
            -1 => return Err(format!("fork: {}", std::io::Error::last_os_error())),
            // SAFETY: the freshly forked process; it never returns.
            0 => unsafe { sleep_then_exit() },
            got if got == pid && start_time(&got.to_string()) != Some(not_at) => return Ok(got),
            got if got == pid => {
                reap(got);
                std::thread::sleep(Duration::from_millis(5));
            }
            // Another process forked in between: drop this one and try again.
            other => reap(other),
        }
    }
    Err(format!("did not get pid {pid} in 100 forks"))
}

/// # Safety
/// Call only in a freshly forked process, which never returns from here.
unsafe fn sleep_then_exit() -> ! {
    // SAFETY: plain system calls; _exit runs nothing of the runtime this process shares.
    unsafe {
        // Gone with the parent, and in any case after the bound.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        libc::dup2(null, 1);
        libc::dup2(null, 2);
        libc::sleep(BOUND.as_secs() as u32 * 2);
        libc::_exit(0)
    }
}

fn reap(pid: i32) {
    // SAFETY: kill and waitpid on a child of this process.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

fn parent(universe: &ibdyn::Universe) {
    let child = spawn_self(universe, fail);
    // A first message opens the way to the child while it lives (as any exchange would).
    child
        .send(b"hi", 0, PID)
        .unwrap_or_else(|e| fail(&format!("send: {e}")));
    let (pid, _) = child
        .recv_vec(0, PID)
        .unwrap_or_else(|e| fail(&format!("recv: {e}")));
    if pid.len() != 12 {
        fail("the child's pid and start time are not 12 bytes");
    }
    let (pid, started) = pid.split_at(4);
    let pid = i32::from_le_bytes(pid.try_into().expect("4 bytes"));
    let started = u64::from_le_bytes(started.try_into().expect("8 bytes"));
    let start = Instant::now();
    while exists(pid) {
        if start.elapsed() > BOUND {
            fail(&format!("the child (pid {pid}) did not end"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let sleeper = match sleeper_with_pid(pid, started) {
        Ok(s) => s,
        Err(why) => {
            println!("pid_reuse: SKIPPED: {why}");
            return;
        }
    };
    std::thread::spawn(|| {
        std::thread::sleep(BOUND);
        fail("still waiting for the dead child: the process now at its pid was taken for it");
    });
    let mut buf = [0u8; 8];
    let got = child.recv(&mut buf, 0, NEVER);
    reap(sleeper);
    match got {
        Err(e) => println!("pid_reuse: failed as dead: {e}"),
        Ok(_) => fail("a message came from a process that never sent one"),
    }
}

fn main() {
    let universe = ibdyn::initialize().unwrap_or_else(|e| fail(&format!("initialize: {e}")));
    match universe.parent() {
        None => parent(&universe),
        Some(parent) => {
            // The child: its pid, then gone without a word more.
            parent
                .recv_vec(0, PID)
                .unwrap_or_else(|e| fail(&format!("child: recv: {e}")));
            let started = start_time("self").unwrap_or_else(|| fail("child: no start time"));
            let mut card = std::process::id().to_le_bytes().to_vec();
            card.extend_from_slice(&started.to_le_bytes());
            parent
                .send(&card, 0, PID)
                .unwrap_or_else(|e| fail(&format!("child: send: {e}")));
        }
    }
    if let Err(e) = universe.finalize() {
        fail(&format!("finalize: {e}"));
    }
}
