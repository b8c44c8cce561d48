//! Process identity and liveness, for the producer field of cells.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Once;

/// False once `pid` has exited (a zombie counts as exited).
pub(crate) fn process_alive(pid: u32) -> bool {
    process_alive_since(pid, 0)
}

/// False once no process has `pid` any more (exited and reaped): one system call, for a check
/// on a path that must stay cheap. A zombie, or a later process given the same pid, still
/// counts; `process_alive_since` tells those apart.
pub fn pid_exists(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks existence and permission.
    let found = unsafe { libc::kill(pid, 0) } == 0;
    found || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Whether `pid` is a live process that started at `start` (clock ticks after boot, as in
/// [`my_start_time`]; 0: any start). False once it has exited, while it is a zombie, and once
/// the pid belongs to a later process: pids are reused, and a wait for a peer that died long
/// ago must not take a newcomer for it.
pub fn process_alive_since(pid: u32, start: u64) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks existence and permission.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => match parse_stat(&stat) {
            Some((state, started)) => {
                !matches!(state, 'Z' | 'X') && (start == 0 || started == start)
            }
            None => true,
        },
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// This process's start time in clock ticks after boot (field 22 of `/proc/self/stat`), which
/// with its pid names it among every process the node has run; 0 if /proc cannot tell.
/// Cached; a fork handler clears the cache in the child (a forked copy started later).
pub fn my_start_time() -> u64 {
    let start = START.load(Ordering::Relaxed);
    if start != 0 {
        return start;
    }
    forget_at_fork();
    let start = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| parse_stat(&s))
        .map_or(0, |(_, start)| start);
    START.store(start, Ordering::Relaxed);
    start
}

static START: AtomicU64 = AtomicU64::new(0);

/// The state letter and the start time of a `/proc/PID/stat` line.
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    // The command name is parenthesised and may itself hold ") "; the fields after it start
    // with the state (field 3), so the start time (field 22) is the 20th.
    let (_, rest) = stat.rsplit_once(") ")?;
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

/// This process's id, cached; a fork handler clears the cache in the child.
#[inline]
pub(crate) fn my_pid() -> u32 {
    let pid = PID.load(Ordering::Relaxed);
    if pid != 0 {
        return pid;
    }
    learn_pid()
}

static PID: AtomicU32 = AtomicU32::new(0);

/// Registers (once) the fork handler that clears the cached pid and start time in a child.
fn forget_at_fork() {
    static HANDLER: Once = Once::new();
    extern "C" fn forget() {
        PID.store(0, Ordering::Relaxed);
        START.store(0, Ordering::Relaxed);
    }
    HANDLER.call_once(|| {
        // SAFETY: registers a handler that only stores to atomics, which is async-signal-safe.
        unsafe { libc::pthread_atfork(None, None, Some(forget)) };
    });
}

#[cold]
fn learn_pid() -> u32 {
    forget_at_fork();
    let pid = std::process::id();
    PID.store(pid, Ordering::Relaxed);
    pid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_alive_only_with_its_own_start_time() {
        let me = std::process::id();
        let start = my_start_time();
        assert_ne!(start, 0, "/proc/self/stat gives a start time");
        assert!(process_alive_since(me, start));
        assert!(process_alive_since(me, 0));
        assert!(
            !process_alive_since(me, start + 1),
            "another start: a later process"
        );
    }

    #[test]
    fn a_forked_child_has_its_own_start_time() {
        let parent = my_start_time();
        // Fork only once the tick clock has passed the parent's start, so that the child's
        // start time differs from the cached one.
        let ticks = || -> u64 {
            let up = std::fs::read_to_string("/proc/uptime").unwrap();
            let secs: f64 = up.split_whitespace().next().unwrap().parse().unwrap();
            // SAFETY: sysconf has no preconditions.
            (secs * unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64) as u64
        };
        while ticks() <= parent + 2 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // SAFETY: the child only reads files and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let fresh = std::fs::read_to_string("/proc/self/stat")
                .ok()
                .and_then(|s| parse_stat(&s))
                .map(|(_, start)| start);
            let ok = fresh == Some(my_start_time()) && fresh != Some(parent);
            // SAFETY: ends the child.
            unsafe { libc::_exit(i32::from(!ok)) };
        }
        let mut st = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(pid, &mut st, 0) };
        assert!(libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0, "{st}");
    }

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let tail = "S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21";
        assert_eq!(parse_stat(&format!("7 (a) b) {tail}")), Some(('S', 4242)));
        assert_eq!(parse_stat("7 (cut) S 1 2"), None);
    }
}
