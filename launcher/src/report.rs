//! What a node daemon tells its launcher (`ibdyn run` or the DVM controller), as types: the
//! lines `d_job`, `d_io`, `d_exit`, `d_spawn_result` and `d_abort`, built by the daemons
//! and read back here.
//!
//! Ordering, which the readers rely on: every daemon announces a job (`d_job`) on its own
//! link before it starts the job's ranks, and before it relays the job's spawn reply to a
//! rank of its node; a rank's output (`d_io`) precedes its end (`d_exit`) on its daemon's
//! link.

use ibdyn_pmi::jobs::{decode_children, ChildStart};
use ibdyn_pmi::wire::{hex_decode, msg_text, Command};
use ibdyn_pmi::PmiError;

/// A job as one daemon announces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobAnnounce {
    pub(crate) job: u32,
    pub(crate) size: u32,
    /// The launcher's request id of the submission this job descends from (the submitted job
    /// itself, or a job spawned by one of its descendants); 0 for `ibdyn run`.
    pub(crate) owner: u64,
    /// Started by the launcher (`l_spawn`), not spawned by a rank.
    pub(crate) submitted: bool,
}

impl JobAnnounce {
    pub(crate) fn to_command(self) -> Command {
        Command::new("d_job")
            .arg("job", self.job)
            .arg("size", self.size)
            .arg("owner", self.owner)
            .arg("submitted", u8::from(self.submitted))
    }
}

/// How a rank ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RankEnd {
    /// Ran and ended: an exit code or a signal (neither: the wait for it failed).
    Ran {
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// Never started (its spawn reply says why).
    NotStarted,
    /// Killed because its spawn failed elsewhere or its job was cancelled: not news.
    Cancelled,
}

impl RankEnd {
    /// A run that did not end with code 0: worth reporting.
    pub(crate) fn abnormal(self) -> Option<(Option<i32>, Option<i32>)> {
        match self {
            RankEnd::Ran { code: Some(0), .. } => None,
            RankEnd::Ran { code, signal } => Some((code, signal)),
            RankEnd::NotStarted | RankEnd::Cancelled => None,
        }
    }
}

/// A spawn's job id and the fate of each rank, or why there is no job.
pub(crate) type SpawnOutcome = Result<(u32, Vec<ChildStart>), String>;

/// One line from a daemon.
#[derive(Debug)]
pub(crate) enum Report {
    Job(JobAnnounce),
    Output {
        job: u32,
        rank: u32,
        fd: u32,
        data: Vec<u8>,
    },
    Exit {
        job: u32,
        rank: u32,
        end: RankEnd,
    },
    /// The answer to the launcher's `l_spawn` / `l_adopt` with request id `id`.
    SpawnResult {
        id: u64,
        outcome: SpawnOutcome,
    },
    Abort {
        job: u32,
        rank: u32,
        code: i32,
        msg: String,
    },
}

/// The `d_exit` line of a rank's end.
pub(crate) fn exit_command(job: u32, rank: u32, end: RankEnd) -> Command {
    let cmd = Command::new("d_exit").arg("job", job).arg("rank", rank);
    match end {
        RankEnd::Ran { code, signal } => {
            let cmd = match code {
                Some(c) => cmd.arg("code", c),
                None => cmd,
            };
            match signal {
                Some(s) => cmd.arg("signal", s),
                None => cmd,
            }
        }
        RankEnd::NotStarted => cmd.arg("failed", 1),
        RankEnd::Cancelled => cmd.arg("cancelled", 1),
    }
}

impl Report {
    /// Reads a daemon's line; an error names what is wrong with it.
    pub(crate) fn parse(cmd: &Command) -> Result<Report, PmiError> {
        let opt = |k: &str| cmd.get(k).and_then(|v| v.parse::<i32>().ok());
        Ok(match cmd.name.as_str() {
            "d_job" => Report::Job(JobAnnounce {
                job: cmd.num("job")?,
                size: cmd.num("size")?,
                owner: cmd.num("owner")?,
                submitted: cmd.get("submitted") == Some("1"),
            }),
            "d_io" => Report::Output {
                job: cmd.num("job")?,
                rank: cmd.num("rank")?,
                fd: cmd.num("fd")?,
                data: hex_decode(cmd.get("data").unwrap_or(""))?,
            },
            "d_exit" => {
                let end = if cmd.get("failed").is_some() {
                    RankEnd::NotStarted
                } else if cmd.get("cancelled").is_some() {
                    RankEnd::Cancelled
                } else {
                    RankEnd::Ran {
                        code: opt("code"),
                        signal: opt("signal"),
                    }
                };
                Report::Exit {
                    job: cmd.num("job")?,
                    rank: cmd.num("rank")?,
                    end,
                }
            }
            "d_spawn_result" => {
                let outcome = match cmd.get("jobid") {
                    None => Err(msg_text(cmd.get("msg").unwrap_or("cannot start the job"))),
                    Some(_) => Ok((
                        cmd.num("jobid")?,
                        decode_children(cmd.get("children").unwrap_or(""))?,
                    )),
                };
                Report::SpawnResult {
                    id: cmd.num("id")?,
                    outcome,
                }
            }
            "d_abort" => Report::Abort {
                job: cmd.num("job")?,
                rank: cmd.num("rank")?,
                code: cmd.num("code")?,
                msg: msg_text(cmd.get("msg").unwrap_or("")),
            },
            other => {
                return Err(PmiError::Malformed {
                    line: cmd.to_line().trim_end().to_string(),
                    why: format!("{other} is not a daemon report"),
                })
            }
        })
    }
}

/// The first rank of a spawn reply that could not be started, as a message.
pub(crate) fn start_failure(children: &[ChildStart]) -> Option<String> {
    children
        .iter()
        .find(|c| !c.started())
        .map(|c| format!("cannot start rank {}: {}", c.rank, c.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(cmd: Command) -> Report {
        let line = cmd.to_line();
        Report::parse(&Command::parse(line.trim_end()).expect("parse")).expect("report")
    }

    #[test]
    fn announcements_and_exits_read_back_as_built() {
        let a = JobAnnounce {
            job: 7,
            size: 3,
            owner: 42,
            submitted: true,
        };
        assert!(matches!(round_trip(a.to_command()), Report::Job(b) if b == a));
        for end in [
            RankEnd::Ran {
                code: Some(3),
                signal: None,
            },
            RankEnd::Ran {
                code: None,
                signal: Some(9),
            },
            RankEnd::NotStarted,
            RankEnd::Cancelled,
        ] {
            match round_trip(exit_command(7, 2, end)) {
                Report::Exit { job, rank, end: e } => assert_eq!((job, rank, e), (7, 2, end)),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_line_that_is_not_a_report_or_misses_a_field_is_an_error() {
        assert!(Report::parse(&Command::new("d_what")).is_err());
        assert!(Report::parse(&Command::new("d_io").arg("job", 1)).is_err());
        assert!(Report::parse(&Command::new("d_job").arg("job", 1).arg("size", 2)).is_err());
    }

    #[test]
    fn only_abnormal_runs_are_news() {
        let ran = |code, signal| RankEnd::Ran { code, signal };
        assert_eq!(ran(Some(0), None).abnormal(), None);
        assert_eq!(ran(Some(2), None).abnormal(), Some((Some(2), None)));
        assert_eq!(ran(None, Some(15)).abnormal(), Some((None, Some(15))));
        assert_eq!(RankEnd::NotStarted.abnormal(), None);
        assert_eq!(RankEnd::Cancelled.abnormal(), None);
    }
}
