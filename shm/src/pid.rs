//! Process identity and liveness, for the producer field of cells.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

/// False once `pid` has exited (a zombie counts as exited).
pub(crate) fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks existence and permission.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name, which may itself hold ") ".
        Ok(stat) => !matches!(
            stat.rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next()),
            Some('Z' | 'X')
        ),
        Err(_) => true,
    }
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

#[cold]
fn learn_pid() -> u32 {
    static HANDLER: Once = Once::new();
    extern "C" fn forget_pid() {
        PID.store(0, Ordering::Relaxed);
    }
    HANDLER.call_once(|| {
        // SAFETY: registers a handler that only stores to an atomic, which is async-signal-safe.
        unsafe { libc::pthread_atfork(None, None, Some(forget_pid)) };
    });
    let pid = std::process::id();
    PID.store(pid, Ordering::Relaxed);
    pid
}
