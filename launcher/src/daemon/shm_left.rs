//! What ended ranks left in `/dev/shm`, removed with one read of the directory per turn of
//! the event loop rather than one per rank: thousands of ranks ending together each had the
//! daemon read every other's entries. A rank's end is reported only after that read, so
//! whoever learns that a job ended finds nothing of it left. The ended descendants of ranks
//! that the daemon adopted are reaped in the same turn.

use super::Daemon;
use crate::protocol::{RankEnd, Report};

/// Ended ranks whose objects are still to be removed, and the reports that wait for it.
#[derive(Default)]
pub(crate) struct ShmLeft {
    pids: Vec<i32>,
    held: Vec<HeldExit>,
}

struct HeldExit {
    job: u32,
    rank: u32,
    end: RankEnd,
    code: Option<i32>,
    signal: Option<i32>,
}

impl ShmLeft {
    /// Process `pid` (a rank) ended: its objects go at the end of this turn.
    pub(crate) fn ended(&mut self, pid: i32) {
        self.pids.push(pid);
    }
}

impl Daemon {
    /// Tells the launcher and the root that a rank ended, after its objects are removed.
    pub(crate) fn send_exit(
        &mut self,
        job: u32,
        rank: u32,
        end: RankEnd,
        code: Option<i32>,
        signal: Option<i32>,
    ) {
        if self.shm_left.pids.is_empty() {
            self.to_launcher(Report::Exit { job, rank, end });
            self.exited_up(job, rank, code, signal);
        } else {
            self.shm_left.held.push(HeldExit {
                job,
                rank,
                end,
                code,
                signal,
            });
        }
    }

    /// End of a turn: removes what the ranks that ended left, then sends their reports.
    pub(crate) fn finish_exits(&mut self) {
        if self.shm_left.pids.is_empty() {
            return;
        }
        let pids = std::mem::take(&mut self.shm_left.pids);
        let what = format!("{} ended ranks", pids.len());
        super::ranks::remove_segments(self.me, &pids, &what);
        // Their ended descendants that this daemon adopted go in the same turn: listing the
        // daemon's children costs as many as it has (thousands of prestarted copies), and a
        // listing per rank made 2000 ends of forked copies take 0.5 s more.
        super::adopted::reap_orphans(|p| self.reactor.watches_child(p));
        for h in std::mem::take(&mut self.shm_left.held) {
            self.send_exit(h.job, h.rank, h.end, h.code, h.signal);
        }
    }
}
