//! Signals become events: the signals are blocked in every thread (call `watch` before any
//! thread starts) and one thread takes them with sigwait.

use crate::error::{LaunchError, Result};
use nix::sys::signal::{SigSet, Signal};

/// Signals that end the job: whichever process of ours gets one ends its ranks.
const ENDING: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// Signals passed on to the ranks, and nothing more: a checkpoint warning such as Slurm's
/// `--signal=USR1@60`, as mpirun and srun pass them on (by default they would end the
/// launcher or a daemon, and the job with it), and job control: Ctrl-Z (SIGTSTP) stops the
/// ranks, SIGCONT (`fg`, `bg`) continues them.
const PASSED_ON: [Signal; 4] = [
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGTSTP,
    Signal::SIGCONT,
];

/// The signal that the ranks get for `sig`, when `sig` is passed on rather than ending the
/// job: itself, or SIGSTOP for SIGTSTP (which a rank could ignore).
pub fn for_ranks(sig: i32) -> Option<i32> {
    match Signal::try_from(sig) {
        Ok(Signal::SIGTSTP) => Some(libc::SIGSTOP),
        Ok(s) if PASSED_ON.contains(&s) => Some(sig),
        _ => None,
    }
}

/// Whether `sig` may be passed on to a job's ranks on a client's request (what
/// [`for_ranks`] gives).
pub fn may_pass_on(sig: i32) -> bool {
    [libc::SIGUSR1, libc::SIGUSR2, libc::SIGSTOP, libc::SIGCONT].contains(&sig)
}

/// After passing SIGTSTP on as SIGSTOP, the launcher (or a DVM client) stops itself, so that
/// the shell that sent Ctrl-Z sees its job stopped.
pub fn stop_self_if_asked(sig: i32) {
    if sig == libc::SIGTSTP {
        // SAFETY: raise has no preconditions; SIGSTOP cannot be caught or blocked.
        unsafe { libc::raise(libc::SIGSTOP) };
    }
}

/// Takes the signals that end the job and those passed on ([`for_ranks`]) as calls of
/// `on_signal`, on a thread of their own.
pub fn watch(on_signal: impl Fn(i32) + Send + 'static) -> Result<()> {
    let mut set = SigSet::empty();
    for s in ENDING.into_iter().chain(PASSED_ON) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passed_on_signals_map_to_what_a_dvm_passes_on() {
        for s in PASSED_ON {
            let to_ranks = for_ranks(s as i32).expect("passed on");
            assert!(may_pass_on(to_ranks), "{s}");
        }
        assert_eq!(for_ranks(libc::SIGTSTP), Some(libc::SIGSTOP));
        for s in ENDING {
            assert_eq!(for_ranks(s as i32), None, "{s}");
        }
        assert!(!may_pass_on(libc::SIGKILL));
    }
}
