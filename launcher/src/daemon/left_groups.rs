//! Process groups of a finished job's ranks that still have members: helpers a rank started
//! in the background and left running. The job's record goes once its last rank has ended,
//! which can be before the teardown that ends the helpers reaches this daemon (the root's
//! word that the job is done overtakes the launcher's kill), so the groups are kept here for
//! the teardown.

/// (job, group number) of ended ranks whose groups had members when the job was done.
#[derive(Default)]
pub(crate) struct LeftGroups {
    groups: Vec<(u32, i32)>,
}

/// Whether process group `pgid` has a member (a zombie counts).
pub(crate) fn has_members(pgid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only asks whether the group has a member.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

impl LeftGroups {
    /// Job `job` is done here; rank group `pgid` still had members when its leader was reaped.
    pub(crate) fn keep(&mut self, job: u32, pgid: i32) {
        self.groups.retain(|&(_, g)| has_members(g));
        if has_members(pgid) {
            self.groups.push((job, pgid));
        }
    }

    /// A new rank leads group `pid`: a kept group of that number had emptied.
    pub(crate) fn forget(&mut self, pid: i32) {
        self.groups.retain(|&(_, g)| g != pid);
    }

    /// Signals the kept groups of `only` (or of every job); the emptied ones are dropped.
    pub(crate) fn signal(&mut self, me: u32, sig: i32, only: Option<u32>) {
        self.groups.retain(|&(job, pgid)| {
            if !has_members(pgid) {
                return false;
            }
            if only.is_none_or(|o| o == job) {
                tracing::debug!(
                    "daemon {me}: {} to the helpers job {job} left in group {pgid}",
                    crate::signals::name(sig)
                );
                // SAFETY: kill(2) on a group that has members, so its number is still the
                // ended rank's (Linux gives no new process the number of a live group).
                unsafe { libc::kill(-pgid, sig) };
            }
            true
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::Command;

    fn group_leader() -> (std::process::Child, i32) {
        let child = Command::new("sleep")
            .arg("300")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        (child, pgid)
    }

    #[test]
    fn a_kept_group_is_signalled_by_its_own_jobs_teardown_only() {
        let (mut child, pgid) = group_leader();
        let mut left = LeftGroups::default();
        left.keep(4, pgid);
        left.signal(0, libc::SIGTERM, Some(5));
        assert!(
            child.try_wait().unwrap().is_none(),
            "another job's teardown reached it"
        );
        left.signal(0, libc::SIGTERM, Some(4));
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
        left.signal(0, libc::SIGTERM, None);
        assert!(left.groups.is_empty(), "an emptied group was kept");
    }

    #[test]
    fn a_group_number_a_new_rank_took_is_forgotten() {
        let (mut child, pgid) = group_leader();
        let mut left = LeftGroups::default();
        left.keep(4, pgid);
        assert_eq!(left.groups, [(4, pgid)]);
        left.forget(pgid);
        assert!(left.groups.is_empty());
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
