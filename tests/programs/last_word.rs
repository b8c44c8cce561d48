//! A process's last message reaches its peer even when the peer finds it exited before reading
//! the message. The parent (one process) spawns a child, tells it its pid, and waits for one
//! message from it. The child stops the parent (SIGSTOP) once the parent sleeps in that wait,
//! sends the message, and exits. A helper it forked resumes the parent (SIGCONT) only after the
//! child is reaped and after more than the liveness period: the parent's wait then wakes with
//! the message unread in its queue and a liveness check due, which finds the child gone
//! (without the look into its queue, it failed the receive with "the process has exited").
//! The parent prints `last_word: got it` or `last_word: lost: ERROR` (and exits 1).
//!
//! `last_word recv-only`: the parent never sends to the child (its pid goes in the child's
//! arguments), so it has no route to the child when the check finds it gone, and opening one
//! fails (the child's segment went with it); the unread message must still be read first.

use ibdyn::traits::*;
use ibdyn::InterCommunicator;
#[path = "support/spawn_self.rs"]
mod spawn_self;
use spawn_self::{spawn_self, spawn_self_with};
use std::time::{Duration, Instant};

const PID: i32 = 1;
const WORD: i32 = 2;
const LAST_WORD: &[u8; 8] = b"goodbye!";
/// Bound on every wait for another process's state.
const BOUND: Duration = Duration::from_secs(30);
/// Longer than the engine's liveness period (a second), so the check is due when the parent
/// resumes.
const HOLD: Duration = Duration::from_millis(1500);

fn fail(what: &str) -> ! {
    eprintln!("last_word: {what}");
    std::process::exit(1)
}

fn parent(universe: &ibdyn::Universe, recv_only: bool) {
    let child = if recv_only {
        let args = ["--ppid".to_string(), std::process::id().to_string()];
        spawn_self_with(universe, &args, fail)
    } else {
        let child = spawn_self(universe, fail);
        child
            .send(&std::process::id().to_le_bytes(), 0, PID)
            .unwrap_or_else(|e| fail(&format!("send: {e}")));
        child
    };
    let mut word = [0u8; 8];
    match child.recv(&mut word, 0, WORD) {
        Ok(_) if &word == LAST_WORD => println!("last_word: got it"),
        Ok(_) => fail(&format!("got {word:?} instead of the last word")),
        Err(e) => {
            println!("last_word: lost: {e}");
            std::process::exit(1);
        }
    }
}

/// State letter of process `pid` (/proc/PID/stat field 3), if it exists.
fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// How many times process `pid`'s main thread went to sleep (voluntary context switches).
fn sleeps(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))?
        .trim()
        .parse()
        .ok()
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() > BOUND {
            fail(&format!("gave up waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) with a valid signal number; the pid is the parent's.
    if unsafe { libc::kill(pid, sig) } != 0 {
        fail(&format!(
            "kill({pid}, {sig}): {}",
            std::io::Error::last_os_error()
        ));
    }
}

fn child(parent: InterCommunicator, given_ppid: Option<i32>) {
    let ppid = given_ppid.unwrap_or_else(|| {
        let (pid, _) = parent
            .recv_vec(0, PID)
            .unwrap_or_else(|e| fail(&format!("child: recv: {e}")));
        i32::from_le_bytes(
            pid.try_into()
                .unwrap_or_else(|_| fail("child: the pid is not 4 bytes")),
        )
    });
    // Asleep after a first block of its receive's wait: that block's end started the wait's
    // liveness period (the parent's only sleeps after its send are the wait's blocks).
    let slept = sleeps(ppid).unwrap_or_else(|| fail("child: no parent"));
    wait_for("the parent to sleep in its receive", || {
        sleeps(ppid).is_some_and(|n| n >= slept + 2) && state(ppid) == Some('S')
    });
    signal(ppid, libc::SIGSTOP);
    wait_for("the parent to stop", || state(ppid) == Some('T'));
    let me = std::process::id() as i32;
    let mut ends = [0i32; 2];
    // SAFETY: pipe(2) fills the two-element array.
    if unsafe { libc::pipe(ends.as_mut_ptr()) } != 0 {
        fail("child: pipe");
    }
    // SAFETY: the helper only makes system calls and leaves with _exit, running no destructor
    // of the runtime it shares memory with.
    match unsafe { libc::fork() } {
        -1 => fail("child: fork"),
        // SAFETY: this is the freshly forked helper, and it never returns.
        0 => unsafe { resume_after_exit(ends, me, ppid) },
        _ => {}
    }
    // SAFETY: our copy of the read end, not used here.
    unsafe { libc::close(ends[0]) };
    parent
        .send(LAST_WORD, 0, WORD)
        .unwrap_or_else(|e| fail(&format!("child: send: {e}")));
    // The write end closes as this process exits, which tells the helper.
}

/// The helper: waits until `child` has exited and been reaped, then past the liveness period,
/// and resumes `parent`.
///
/// # Safety
/// Call only in a freshly forked process, which never returns from here.
unsafe fn resume_after_exit(ends: [i32; 2], child: i32, parent: i32) -> ! {
    // SAFETY: plain descriptor calls on descriptors this process owns.
    unsafe {
        // Not keeping the rank's output pipes open: its end is reported once they close.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        libc::dup2(null, 1);
        libc::dup2(null, 2);
        libc::close(ends[1]);
        let mut b = 0u8;
        while libc::read(ends[0], (&mut b as *mut u8).cast(), 1) > 0 {}
    }
    let start = Instant::now();
    // SAFETY: signal 0 only checks existence.
    while unsafe { libc::kill(child, 0) } == 0 && start.elapsed() < BOUND {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(HOLD);
    // SAFETY: as above; _exit ends the helper without running anything of the runtime.
    unsafe {
        libc::kill(parent, libc::SIGCONT);
        libc::_exit(0)
    }
}

fn main() {
    let universe = ibdyn::initialize().unwrap_or_else(|e| fail(&format!("init: {e}")));
    let args: Vec<String> = std::env::args().skip(1).collect();
    match universe.parent() {
        Some(p) => {
            let ppid = match args.as_slice() {
                [flag, pid] if flag == "--ppid" => Some(
                    pid.parse()
                        .unwrap_or_else(|_| fail(&format!("child: bad pid {pid:?}"))),
                ),
                _ => None,
            };
            child(p, ppid)
        }
        None => parent(&universe, args.first().is_some_and(|a| a == "recv-only")),
    }
}
