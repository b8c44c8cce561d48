//! Where the daemon keeps the descriptors it holds for its ranks (PMI socket, output pipes,
//! pidfd: four per live rank): at or above `KEPT_FROM`. A new process is cloned sharing the
//! daemon's descriptor table and at once takes a private copy of only the descriptors below
//! that number (`close_range(KEPT_FROM, ~0, CLOSE_RANGE_UNSHARE)`, Linux 5.9), which hold
//! the daemon's few own and the new process's. Copying the whole table made each spawn copy,
//! and then close at its exec, thousands of descriptors once thousands of ranks were alive.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// The first descriptor number of the kept ones.
pub(crate) const KEPT_FROM: RawFd = 1024;

/// Whether new processes copy only the descriptors below `KEPT_FROM`: the kernel has
/// `CLOSE_RANGE_UNSHARE` and the descriptor limit leaves room above it.
pub(crate) fn short_copy() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| kernel_at_least(5, 9) && room_above())
}

/// `fd` moved to a number at or above `KEPT_FROM` (close-on-exec), or as it was where new
/// processes copy the whole table or no number is free up there.
pub(crate) fn keep_high(fd: OwnedFd) -> OwnedFd {
    if !short_copy() || fd.as_raw_fd() >= KEPT_FROM {
        return fd;
    }
    // SAFETY: F_DUPFD_CLOEXEC on an open descriptor returns a new one (or -1).
    let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, KEPT_FROM) };
    if moved < 0 {
        return fd;
    }
    // SAFETY: the descriptor was just made and nothing else owns it.
    unsafe { OwnedFd::from_raw_fd(moved) }
}

fn room_above() -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit through the valid pointer.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    read && lim.rlim_cur >= 2 * KEPT_FROM as libc::rlim_t
}

fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    parse_release(&release) >= (major, minor)
}

fn parse_release(release: &str) -> (u32, u32) {
    let mut v = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    (v.next().unwrap_or(0), v.next().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_read_as_major_and_minor() {
        assert_eq!(parse_release("6.18.44-fc-v669\n"), (6, 18));
        assert_eq!(parse_release("5.10.0-28-amd64"), (5, 10));
        assert_eq!(parse_release("4.19"), (4, 19));
        assert_eq!(parse_release(""), (0, 0));
        assert!(parse_release("5.9.1") >= (5, 9) && parse_release("5.8.18") < (5, 9));
    }

    #[test]
    fn a_kept_descriptor_moves_up_and_still_works() {
        let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        let (r, w) = (keep_high(r), keep_high(w));
        if short_copy() {
            assert!(r.as_raw_fd() >= KEPT_FROM && w.as_raw_fd() >= KEPT_FROM);
        }
        nix::unistd::write(&w, b"x").unwrap();
        let mut b = [0u8; 1];
        assert_eq!(nix::unistd::read(r.as_raw_fd(), &mut b).unwrap(), 1);
        // SAFETY: F_GETFD on an open descriptor.
        let flags = unsafe { libc::fcntl(r.as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
    }
}
