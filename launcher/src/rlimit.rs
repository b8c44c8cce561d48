//! Descriptor limit: a daemon holds four descriptors per local rank (PMI socket, stdout and
//! stderr pipes, pidfd) and a rank of an all-to-all wire-up one socket per remote peer, so
//! the common soft limit of 1024 ends a 256-rank job on one node. The launcher raises its
//! soft limit towards the hard one at start; daemons and ranks inherit it.

/// Highest soft limit asked for: enough for thousands of ranks, and low enough that programs
/// which walk every possible descriptor (closing them before exec, say) stay quick.
const WANTED: libc::rlim_t = 65536;

/// Raises the soft RLIMIT_NOFILE to min(hard, `WANTED`) if it is lower; returns the soft
/// limit in force afterwards (None if it could not be read).
pub fn raise_nofile() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through the valid pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    let target = lim.rlim_max.min(WANTED);
    if lim.rlim_cur < target {
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads one rlimit through the valid pointer; a soft limit at or
        // below the hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = target;
        }
    }
    Some(lim.rlim_cur)
}

#[cfg(test)]
mod tests {
    #[test]
    fn soft_limit_reaches_the_hard_limit_or_the_cap() {
        let mut before = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut before) },
            0
        );
        let soft = super::raise_nofile().expect("limit readable");
        let wanted = before.rlim_max.min(super::WANTED).max(before.rlim_cur);
        assert_eq!(soft, wanted);
    }
}
