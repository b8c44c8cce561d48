//! `ibdyn run --timeout SECS` (or `MPIEXEC_TIMEOUT`, as mpiexec reads it): a hung job ends
//! after SECS seconds instead of holding a batch allocation to its end.

use std::time::{Duration, Instant};

/// The status of a job ended by its time limit, as coreutils `timeout` gives.
pub(crate) const TIMED_OUT_STATUS: i32 = 124;

#[derive(Clone, Copy, Debug)]
pub(crate) struct TimeLimit {
    secs: u64,
    deadline: Instant,
}

impl TimeLimit {
    /// A limit of `secs` seconds from now; none for 0 (`MPIEXEC_TIMEOUT=0` means no limit).
    pub(crate) fn starting_now(secs: Option<u64>) -> Option<TimeLimit> {
        let secs = secs.filter(|&s| s > 0)?;
        Some(TimeLimit {
            secs,
            deadline: Instant::now() + Duration::from_secs(secs),
        })
    }

    /// Time left, zero once the limit is reached.
    pub(crate) fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    pub(crate) fn reached(&self) -> bool {
        self.left().is_zero()
    }

    pub(crate) fn message(&self) -> String {
        format!(
            "the job's time limit of {} s (--timeout or MPIEXEC_TIMEOUT) was reached; \
             tearing the job down",
            self.secs
        )
    }
}

/// The shorter of two optional waits (None: no bound).
pub(crate) fn sooner(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_or_none_is_no_limit() {
        assert!(TimeLimit::starting_now(None).is_none());
        assert!(TimeLimit::starting_now(Some(0)).is_none());
        let t = TimeLimit::starting_now(Some(30)).unwrap();
        assert!(!t.reached());
        assert!(t.left() <= Duration::from_secs(30));
        assert!(t.message().contains("30 s"));
    }

    #[test]
    fn sooner_takes_the_bound_that_exists() {
        let s = Duration::from_secs;
        assert_eq!(sooner(None, None), None);
        assert_eq!(sooner(Some(s(2)), None), Some(s(2)));
        assert_eq!(sooner(None, Some(s(3))), Some(s(3)));
        assert_eq!(sooner(Some(s(5)), Some(s(3))), Some(s(3)));
    }
}
