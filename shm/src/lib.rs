//! Intra-node path: per-process receive segments in /dev/shm, lock-free eager queues,
//! CMA single-copy reads.

use std::io;

/// Every shared-memory object ibdyn creates for a process is named with this prefix
/// followed by the owning process id, so a node daemon can remove what a dead child left.
pub fn segment_prefix(pid: i32) -> String {
    format!("ibdyn-{pid}")
}

/// Removes every /dev/shm entry owned by `pid` (named `ibdyn-<pid>` or `ibdyn-<pid>-*`).
/// Returns how many entries were removed.
pub fn remove_segments_of(pid: i32) -> io::Result<usize> {
    let prefix = segment_prefix(pid);
    let mut removed = 0;
    for entry in std::fs::read_dir("/dev/shm")? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let owned = name == prefix
            || name
                .strip_prefix(&prefix)
                .is_some_and(|rest| rest.starts_with('-'));
        if owned && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}
