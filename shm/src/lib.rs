//! Intra-node path: per-process receive segments in /dev/shm, lock-free eager queues,
//! CMA single-copy reads.
//!
//! Each process owns one receive segment `/dev/shm/ibdyn-<pid>` ([`RecvQueue`]); any process
//! of the node maps it ([`SendQueue`]) and pushes packets into it. Large messages move with
//! [`cma::read`] straight between the processes' buffers.
//!
//! ```
//! use ibdyn_shm::{RecvQueue, SendQueue, ShmConfig};
//! let inbox = RecvQueue::create(&ShmConfig::default())?;     // /dev/shm/ibdyn-<pid>
//! let to_me = SendQueue::open(inbox.name())?;                 // what a peer does
//! assert!(to_me.try_send(&[b"header", b"payload"])?);         // Ok(false) would mean full
//! let len = inbox.try_recv(|packet| packet.len());            // in place, no copy
//! assert_eq!(len, Some(13));
//! # Ok::<(), ibdyn_shm::ShmError>(())
//! ```
//!
//! Senders never make a system call unless the receiver announced it sleeps in
//! [`RecvQueue::wait`] (or armed its bell with [`RecvQueue::arm_bell`] to sleep in a poll of its
//! own); the receiver's progress loop should spin and yield before waiting.

mod bell;
pub mod cma;
mod collbuf;
mod config;
mod copy;
mod cores;
mod doorbell;
mod error;
mod layout;
mod owned;
mod pid;
mod recv;
mod room;
mod segment;
mod send;

use std::io;

pub use collbuf::{CollBuf, COLL_TIMEOUT};
pub use config::ShmConfig;
pub use copy::copy_bytes;
pub use cores::usable_cores;
pub use error::ShmError;
pub use owned::remove_own_segments;
pub use pid::{my_start_time, pid_exists, process_alive_since};
pub use recv::{BellArm, RecvQueue};
pub use room::{check_room, dev_shm_room, mib};
pub use send::SendQueue;

/// Every shared-memory object ibdyn creates for a process is named with this prefix
/// followed by the owning process id, so a node daemon can remove what a dead child left.
pub fn segment_prefix(pid: i32) -> String {
    format!("{NAME_PREFIX}{pid}")
}

const NAME_PREFIX: &str = "ibdyn-";

/// Removes every /dev/shm entry owned by `pid` (named `ibdyn-<pid>` or `ibdyn-<pid>-*`).
/// Returns how many entries were removed. It reads the whole directory: a process removing
/// its own objects calls [`remove_own_segments`] instead.
pub fn remove_segments_of(pid: i32) -> io::Result<usize> {
    remove_segments_of_any(&[pid])
}

/// [`remove_segments_of`] for several processes, with one read of the directory.
pub fn remove_segments_of_any(pids: &[i32]) -> io::Result<usize> {
    let mut pids = pids.to_vec();
    pids.sort_unstable();
    remove_entries_where(|pid, _| pids.binary_search(&pid).is_ok())
}

/// Removes the /dev/shm entries of ibdyn processes that have exited (a zombie counts), among
/// those this user owns; returns how many. For the launcher after a node daemon died, and
/// for every node daemon as it ends: the lost daemon's ranks died with it
/// (`PR_SET_PDEATHSIG`), and the daemon that would have removed their objects is gone. A pid
/// that names a live process keeps its entries, whoever it is.
pub fn remove_segments_of_exited() -> io::Result<usize> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    remove_entries_where(|pid, entry| {
        entry.metadata().is_ok_and(|m| m.uid() == me) && !pid::process_alive(pid as u32)
    })
}

/// Removes the ibdyn entries of /dev/shm for which `doomed(owner pid, entry)` holds, with one
/// read of the directory; returns how many.
fn remove_entries_where(
    mut doomed: impl FnMut(i32, &std::fs::DirEntry) -> bool,
) -> io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir("/dev/shm")? {
        let entry = entry?;
        let Some(pid) = entry.file_name().to_str().and_then(owner_pid) else {
            continue;
        };
        if doomed(pid, &entry) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// The process id in an ibdyn object's name (`ibdyn-<pid>` or `ibdyn-<pid>-*`).
pub(crate) fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(NAME_PREFIX)?;
    let digits = rest.split_once('-').map_or(rest, |(d, _)| d);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
