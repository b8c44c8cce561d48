//! The jobs of a daemon set as a launcher (or the DVM controller) sees them: which exist,
//! whom they belong to, which ranks have ended, and so which are over.
//!
//! Every daemon announces every job once, on its own link, before anything else it says
//! about that job (see `report`). A job is live from its first announcement until each of
//! its ranks has ended; its entry stays (as over) until the last daemon's announcement has
//! come too, so that a late announcement never brings an ended job back.

use crate::protocol::JobAnnounce;
use std::collections::{BTreeSet, HashMap};

struct Entry {
    /// From the first announcement.
    info: Option<JobAnnounce>,
    announcements: u32,
    ended: BTreeSet<u32>,
    over: bool,
}

impl Entry {
    fn complete(&self) -> bool {
        self.info
            .is_some_and(|i| self.ended.len() as u64 >= u64::from(i.size))
    }
}

/// What an announcement or an end changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    /// The job was heard of for the first time.
    pub(crate) new: bool,
    /// The job is over now (every rank ended), and was not before.
    pub(crate) over: bool,
}

pub(crate) struct JobTable {
    nnodes: u32,
    jobs: HashMap<u32, Entry>,
}

impl JobTable {
    /// A table for a set of `nnodes` daemons (each announces every job).
    pub(crate) fn new(nnodes: u32) -> JobTable {
        JobTable {
            nnodes: nnodes.max(1),
            jobs: HashMap::new(),
        }
    }

    fn entry(&mut self, job: u32) -> &mut Entry {
        self.jobs.entry(job).or_insert_with(|| Entry {
            info: None,
            announcements: 0,
            ended: BTreeSet::new(),
            over: false,
        })
    }

    /// One daemon's `d_job`.
    pub(crate) fn announce(&mut self, a: JobAnnounce) -> Change {
        let e = self.entry(a.job);
        let new = e.info.is_none();
        if new {
            e.info = Some(a);
        }
        e.announcements += 1;
        self.settle(a.job, new)
    }

    /// Rank `rank` of `job` ended (a repeated end changes nothing). An end before any
    /// announcement of its job is kept until one comes.
    pub(crate) fn end(&mut self, job: u32, rank: u32) -> Change {
        let e = self.entry(job);
        if e.info.is_some_and(|i| rank >= i.size) {
            tracing::warn!("end of rank {rank} of job {job}, which has fewer ranks");
        } else {
            e.ended.insert(rank);
        }
        self.settle(job, false)
    }

    fn settle(&mut self, job: u32, new: bool) -> Change {
        let nnodes = self.nnodes;
        let Some(e) = self.jobs.get_mut(&job) else {
            return Change { new, over: false };
        };
        let over = !e.over && e.complete();
        if over {
            e.over = true;
        }
        if e.over && e.announcements >= nnodes {
            self.jobs.remove(&job);
        }
        Change { new, over }
    }

    /// The job as first announced (None before its announcement, or once it is over and
    /// every daemon has announced it).
    pub(crate) fn info(&self, job: u32) -> Option<JobAnnounce> {
        self.jobs.get(&job).and_then(|e| e.info)
    }

    /// Whether the job has been announced and is not over yet.
    #[cfg(test)]
    pub(crate) fn is_live(&self, job: u32) -> bool {
        self.jobs
            .get(&job)
            .is_some_and(|e| e.info.is_some() && !e.over)
    }

    /// The live jobs of `owner`.
    pub(crate) fn live_of(&self, owner: u64) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .jobs
            .iter()
            .filter(|(_, e)| !e.over && e.info.is_some_and(|i| i.owner == owner))
            .map(|(j, _)| *j)
            .collect();
        v.sort_unstable();
        v
    }

    /// Whether any job is live.
    pub(crate) fn any_live(&self) -> bool {
        self.jobs.values().any(|e| e.info.is_some() && !e.over)
    }

    /// Entries kept (live jobs, and ended ones some daemon has not announced yet).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.jobs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(job: u32, size: u32, owner: u64) -> JobAnnounce {
        JobAnnounce {
            job,
            size,
            owner,
            submitted: true,
        }
    }

    #[test]
    fn a_job_is_over_when_every_rank_ended_and_goes_after_the_last_announcement() {
        let mut t = JobTable::new(2);
        assert_eq!(
            t.announce(job(5, 2, 1)),
            Change {
                new: true,
                over: false
            }
        );
        assert!(t.is_live(5));
        assert_eq!(t.live_of(1), vec![5]);
        assert!(!t.end(5, 0).over);
        assert!(!t.end(5, 0).over, "a repeated end counts once");
        assert!(t.end(5, 1).over);
        assert!(!t.is_live(5) && !t.any_live());
        assert_eq!(t.len(), 1, "kept until daemon 2 has announced it");
        // The late announcement does not bring the job back.
        assert_eq!(
            t.announce(job(5, 2, 1)),
            Change {
                new: false,
                over: false
            }
        );
        assert!(!t.any_live());
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn ends_before_the_announcement_are_kept() {
        let mut t = JobTable::new(1);
        assert!(!t.end(9, 0).over);
        assert!(!t.is_live(9), "not announced yet");
        assert!(!t.any_live());
        let c = t.announce(job(9, 1, 3));
        assert!(c.new && c.over);
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn owners_see_only_their_live_jobs() {
        let mut t = JobTable::new(1);
        t.announce(job(1, 1, 10));
        t.announce(job(2, 2, 10));
        t.announce(job(3, 1, 11));
        t.end(1, 0);
        assert_eq!(t.live_of(10), vec![2]);
        assert_eq!(t.live_of(11), vec![3]);
        assert!(t.live_of(12).is_empty());
        t.end(9, 4);
        assert!(!t.end(2, 7).over, "a rank the job does not have");
    }
}
