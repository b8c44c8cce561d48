//! A daemon that forks prestarted copies from templates is a child subreaper: a forked copy,
//! whose parent (the template's middle process) exits at once, is given to the daemon and
//! reaped by it like every rank. Orphaned descendants of ranks come to it the same way (they
//! went to init before); `reap_orphans` reaps those that ended. They are told apart from the
//! processes the daemon started by their process group: the daemon puts each of those in a
//! group of its own (pgid = pid).

use std::sync::atomic::{AtomicBool, Ordering};

static ADOPTING: AtomicBool = AtomicBool::new(false);

/// Makes this process a child subreaper (once).
pub(crate) fn become_subreaper() -> std::io::Result<()> {
    if ADOPTING.load(Ordering::Acquire) {
        return Ok(());
    }
    nix::sys::prctl::set_child_subreaper(true)?;
    ADOPTING.store(true, Ordering::Release);
    Ok(())
}

/// Reaps the adopted descendants of ranks that have ended. `known` tells the processes the
/// daemon watches itself, which are not looked at: with hundreds of ranks ending one after
/// the other, reading every child's `/proc` entry at each end made the ends quadratic (500
/// ends: 250,000 files opened, seconds of the daemon's time).
pub(crate) fn reap_orphans(known: impl Fn(i32) -> bool) {
    if !ADOPTING.load(Ordering::Acquire) {
        return;
    }
    for pid in children().into_iter().filter(|&p| !known(p)) {
        if let Some((state, pgid)) = state_and_group(pid) {
            if state == 'Z' && pgid != pid {
                let _ = nix::sys::wait::waitpid(
                    nix::unistd::Pid::from_raw(pid),
                    Some(nix::sys::wait::WaitPidFlag::WNOHANG),
                );
            }
        }
    }
}

/// The children of every thread of this process.
fn children() -> Vec<i32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten() {
        let Ok(task) = task else { continue };
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    out
}

/// A process's state letter and process group (/proc/PID/stat fields 3 and 5).
fn state_and_group(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut f = stat.rsplit_once(')')?.1.split_whitespace();
    let state = f.next()?.chars().next()?;
    let pgid = f.nth(1)?.parse().ok()?;
    Some((state, pgid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_reads_its_own_state_and_group() {
        let me = std::process::id() as i32;
        let (state, pgid) = state_and_group(me).unwrap();
        assert!(matches!(state, 'R' | 'S'), "{state}");
        assert_eq!(pgid, nix::unistd::getpgrp().as_raw());
    }

    #[test]
    fn children_lists_a_child_started_here() {
        let child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let listed = children().contains(&pid);
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        assert!(listed, "pid {pid} not among {:?}", children());
    }
}
