//! What a node daemon tells its launcher (`ibdyn run` or the DVM controller).
//!
//! Ordering, which the readers rely on: every daemon announces a job (`Report::Job`) on its
//! own link before it starts the job's ranks, and before it relays the job's spawn reply to a
//! rank of its node; a rank's output precedes its end on its daemon's link.

use super::{malformed, opt_num, text};
use ibdyn_pmi::jobs::{decode_children, encode_children, ChildStart};
use ibdyn_pmi::wire::{hex_decode, hex_encode, Command};
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
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// The answer to the launcher's spawn or adopt with request id `id`.
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

impl Report {
    pub(crate) fn encode(&self) -> Command {
        match self {
            Report::Job(a) => Command::new("d_job")
                .arg("job", a.job)
                .arg("size", a.size)
                .arg("owner", a.owner)
                .arg("submitted", u8::from(a.submitted)),
            Report::Output {
                job,
                rank,
                fd,
                data,
            } => Command::new("d_io")
                .arg("job", job)
                .arg("rank", rank)
                .arg("fd", fd)
                .arg("data", hex_encode(data)),
            Report::Exit { job, rank, end } => {
                let mut c = Command::new("d_exit").arg("job", job).arg("rank", rank);
                match end {
                    RankEnd::Ran { code, signal } => {
                        if let Some(code) = code {
                            c = c.arg("code", code);
                        }
                        if let Some(signal) = signal {
                            c = c.arg("signal", signal);
                        }
                    }
                    RankEnd::NotStarted => c = c.arg("failed", 1),
                    RankEnd::Cancelled => c = c.arg("cancelled", 1),
                }
                c
            }
            Report::SpawnResult { id, outcome } => {
                let c = Command::new("d_spawn_result").arg("id", id);
                match outcome {
                    Ok((job, children)) => c
                        .arg("jobid", job)
                        .arg("children", encode_children(children)),
                    Err(msg) => c.arg("msg", hex_encode(msg.as_bytes())),
                }
            }
            Report::Abort {
                job,
                rank,
                code,
                msg,
            } => Command::new("d_abort")
                .arg("job", job)
                .arg("rank", rank)
                .arg("code", code)
                .arg("msg", hex_encode(msg.as_bytes())),
        }
    }

    /// Reads a daemon's line; an error names what is wrong with it.
    pub(crate) fn decode(cmd: &Command) -> Result<Report, PmiError> {
        Ok(match cmd.name.as_str() {
            "d_job" => Report::Job(JobAnnounce {
                job: cmd.num("job")?,
                size: cmd.num("size")?,
                owner: cmd.num("owner")?,
                submitted: cmd.num::<u8>("submitted")? == 1,
            }),
            "d_io" => Report::Output {
                job: cmd.num("job")?,
                rank: cmd.num("rank")?,
                fd: cmd.num("fd")?,
                data: hex_decode(cmd.require("data")?)?,
            },
            "d_exit" => {
                let end = if cmd.get("failed").is_some() {
                    RankEnd::NotStarted
                } else if cmd.get("cancelled").is_some() {
                    RankEnd::Cancelled
                } else {
                    RankEnd::Ran {
                        code: opt_num(cmd, "code")?,
                        signal: opt_num(cmd, "signal")?,
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
                    None => Err(text(cmd, "msg")?),
                    Some(_) => Ok((
                        cmd.num("jobid")?,
                        decode_children(cmd.require("children")?)?,
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
                msg: text(cmd, "msg")?,
            },
            other => return Err(malformed(cmd, format!("{other} is not a daemon report"))),
        })
    }
}

/// The first rank of a spawn reply that could not be started, as a message.
/// Why a job did not start (its first rank that did not), with the exit status a shell would
/// give: 127 when the program was not found, 126 when it was found but could not run.
pub(crate) fn start_failure(children: &[ChildStart]) -> Option<(String, i32)> {
    children.iter().find(|c| !c.started()).map(|c| {
        let msg = format!("cannot start rank {}: {}", c.rank, c.message);
        let status = if c.errno == libc::ENOENT {
            NOT_FOUND
        } else {
            NOT_EXECUTABLE
        };
        (msg, status)
    })
}

/// Exit status of a job whose program was not found (as a shell gives for a missing command),
/// or that could not be started at all.
pub(crate) const NOT_FOUND: i32 = 127;

/// Exit status of a job whose program was found but could not be executed.
pub(crate) const NOT_EXECUTABLE: i32 = 126;

#[cfg(test)]
mod tests {
    use super::super::tests::line_of;
    use super::*;

    #[test]
    fn every_report_reads_back_as_built() {
        let mut all = vec![
            Report::Job(JobAnnounce {
                job: 7,
                size: 3,
                owner: 42,
                submitted: true,
            }),
            Report::Job(JobAnnounce {
                job: 7,
                size: 3,
                owner: 0,
                submitted: false,
            }),
            Report::Output {
                job: 7,
                rank: 1,
                fd: 2,
                data: b"a b\n\0".to_vec(),
            },
            Report::SpawnResult {
                id: 3,
                outcome: Ok((
                    9,
                    vec![
                        ChildStart {
                            rank: 0,
                            node: 1,
                            errno: 0,
                            message: String::new(),
                        },
                        ChildStart {
                            rank: 1,
                            node: 0,
                            errno: 2,
                            message: "no such file: x".into(),
                        },
                    ],
                )),
            },
            Report::SpawnResult {
                id: 3,
                outcome: Err("only 2 node daemons (0..1)".into()),
            },
            Report::Abort {
                job: 7,
                rank: 0,
                code: 4,
                msg: "gave up_here".into(),
            },
        ];
        for end in [
            RankEnd::Ran {
                code: Some(3),
                signal: None,
            },
            RankEnd::Ran {
                code: None,
                signal: Some(9),
            },
            RankEnd::Ran {
                code: None,
                signal: None,
            },
            RankEnd::NotStarted,
            RankEnd::Cancelled,
        ] {
            all.push(Report::Exit {
                job: 7,
                rank: 2,
                end,
            });
        }
        for r in all {
            assert_eq!(Report::decode(&line_of(r.encode())).expect("decodes"), r);
        }
    }

    #[test]
    fn a_line_that_is_not_a_report_or_misses_a_field_is_an_error() {
        for c in [
            Command::new("d_what"),
            Command::new("l_kill"),
            Command::new("d_io").arg("job", 1),
            Command::new("d_job").arg("job", 1).arg("size", 2),
            Command::new("d_exit")
                .arg("job", 1)
                .arg("rank", 0)
                .arg("code", "x"),
            Command::new("d_spawn_result")
                .arg("id", 1)
                .arg("jobid", 2)
                .arg("children", "0:x"),
            Command::new("d_spawn_result")
                .arg("id", 1)
                .arg("msg", "not hex"),
            Command::new("d_abort")
                .arg("job", 1)
                .arg("rank", 0)
                .arg("code", 1),
        ] {
            assert!(Report::decode(&c).is_err(), "{c:?}");
        }
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
