//! Signals become events: the signals are blocked in every thread (call `watch` before any
//! thread starts) and one thread takes them with sigwait.

use crate::error::{LaunchError, Result};
use nix::sys::signal::{SigSet, Signal};

pub const WATCHED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

pub fn watch(on_signal: impl Fn(i32) + Send + 'static) -> Result<()> {
    let mut set = SigSet::empty();
    for s in WATCHED {
        set.add(s);
    }
    set.thread_block()
        .map_err(|e| LaunchError::io("block signals", e.into()))?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            match set.wait() {
                Ok(sig) => on_signal(sig as i32),
                Err(e) => {
                    tracing::warn!("sigwait failed: {e}");
                    return;
                }
            }
        })
        .map_err(|e| LaunchError::io("start the signal thread", e))?;
    Ok(())
}

/// "SIGSEGV" for 11.
pub fn name(sig: i32) -> String {
    Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

/// Empties the signal mask; for a `pre_exec` hook (the watched signals are blocked in the
/// parent and a mask survives exec). Only async-signal-safe calls.
pub fn unblock_all_in_child() {
    // SAFETY: sigemptyset fills a local set; sigprocmask is async-signal-safe.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}
