//! Between a DVM client (`ibdyn run --dvm`, `ibdyn dvm stop`) and the DVM controller. A
//! client submits one job per connection; the controller relays everything about the jobs
//! the submission leads to and ends with `Done`.

use super::{malformed, opt_num, text, EncodedRequest, JobEnv};
use crate::placement::MapBy;
use ibdyn_pmi::wire::{hex_decode, hex_encode, Command};
use ibdyn_pmi::PmiError;

/// Client -> DVM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ToDvm {
    /// Start a job whose ranks run with the client's environment and working directory
    /// (the DVM's own when None).
    Run {
        req: EncodedRequest,
        env: Option<JobEnv>,
        /// Place the ranks by this rule, as `ibdyn run` does (least-loaded when None).
        map_by: Option<MapBy>,
    },
    /// Bytes of the client's stdin for rank 0 of its job; None: end of file.
    Stdin(Option<Vec<u8>>),
    /// Pass this signal on to the ranks of the client's jobs (`SIGUSR1`, `SIGUSR2`).
    Signal(i32),
    /// End the DVM.
    Stop,
}

impl ToDvm {
    pub(crate) fn encode(&self) -> Command {
        match self {
            ToDvm::Run { req, env, map_by } => {
                let mut c = Command::new("c_run").arg("req", req.as_wire());
                if let Some(m) = map_by {
                    c = c.arg("map_by", map_by_name(*m));
                }
                match env {
                    Some(e) => e.add_to(c),
                    None => c,
                }
            }
            ToDvm::Stdin(Some(data)) => Command::new("c_stdin").arg("data", hex_encode(data)),
            ToDvm::Stdin(None) => Command::new("c_stdin_eof"),
            ToDvm::Signal(s) => Command::new("c_signal").arg("signum", s),
            ToDvm::Stop => Command::new("c_stop"),
        }
    }

    pub(crate) fn decode(cmd: &Command) -> Result<ToDvm, PmiError> {
        Ok(match cmd.name.as_str() {
            "c_run" => ToDvm::Run {
                req: EncodedRequest::from_wire(cmd, cmd.require("req")?)?,
                env: JobEnv::from_wire(cmd)?,
                map_by: match cmd.get("map_by") {
                    None => None,
                    Some("slot") => Some(MapBy::Slot),
                    Some("node") => Some(MapBy::Node),
                    Some(other) => {
                        return Err(malformed(
                            cmd,
                            format!("map_by={other} is not slot or node"),
                        ))
                    }
                },
            },
            "c_stdin" => ToDvm::Stdin(Some(hex_decode(cmd.require("data")?)?)),
            "c_stdin_eof" => ToDvm::Stdin(None),
            "c_signal" => ToDvm::Signal(cmd.num("signum")?),
            "c_stop" => ToDvm::Stop,
            other => return Err(malformed(cmd, format!("{other} is not a DVM request"))),
        })
    }
}

fn map_by_name(m: MapBy) -> &'static str {
    match m {
        MapBy::Slot => "slot",
        MapBy::Node => "node",
    }
}

/// DVM -> client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FromDvm {
    /// The submitted job has this id.
    Started {
        job: u32,
    },
    Output {
        job: u32,
        rank: u32,
        fd: u32,
        data: Vec<u8>,
    },
    /// A rank ended abnormally: an exit code or a signal (neither: it vanished).
    Exit {
        job: u32,
        rank: u32,
        code: Option<i32>,
        signal: Option<i32>,
    },
    Error(String),
    /// Ranks of spawned jobs that ended abnormally during the teardown of a failed job.
    TornDown {
        ranks: u32,
    },
    /// Every job of the submission is over and its output sent: the client's exit status.
    Done {
        status: i32,
    },
}

impl FromDvm {
    pub(crate) fn encode(&self) -> Command {
        match self {
            FromDvm::Started { job } => Command::new("c_started").arg("job", job),
            FromDvm::Output {
                job,
                rank,
                fd,
                data,
            } => Command::new("c_io")
                .arg("job", job)
                .arg("rank", rank)
                .arg("fd", fd)
                .arg("data", hex_encode(data)),
            FromDvm::Exit {
                job,
                rank,
                code,
                signal,
            } => {
                let mut c = Command::new("c_exit").arg("job", job).arg("rank", rank);
                if let Some(code) = code {
                    c = c.arg("code", code);
                }
                if let Some(signal) = signal {
                    c = c.arg("signal", signal);
                }
                c
            }
            FromDvm::Error(msg) => Command::new("c_error").arg("msg", hex_encode(msg.as_bytes())),
            FromDvm::TornDown { ranks } => Command::new("c_torn_down").arg("ranks", ranks),
            FromDvm::Done { status } => Command::new("c_done").arg("status", status),
        }
    }

    pub(crate) fn decode(cmd: &Command) -> Result<FromDvm, PmiError> {
        Ok(match cmd.name.as_str() {
            "c_started" => FromDvm::Started {
                job: cmd.num("job")?,
            },
            "c_io" => FromDvm::Output {
                job: cmd.num("job")?,
                rank: cmd.num("rank")?,
                fd: cmd.num("fd")?,
                data: hex_decode(cmd.require("data")?)?,
            },
            "c_exit" => FromDvm::Exit {
                job: cmd.num("job")?,
                rank: cmd.num("rank")?,
                code: opt_num(cmd, "code")?,
                signal: opt_num(cmd, "signal")?,
            },
            "c_error" => FromDvm::Error(text(cmd, "msg")?),
            "c_torn_down" => FromDvm::TornDown {
                ranks: cmd.num("ranks")?,
            },
            "c_done" => FromDvm::Done {
                status: cmd.num("status")?,
            },
            other => return Err(malformed(cmd, format!("{other} is not a DVM reply"))),
        })
    }

    /// The DVM has answered the submission (taken the job or refused it).
    pub(crate) fn answers_submission(&self) -> bool {
        matches!(
            self,
            FromDvm::Started { .. } | FromDvm::Error(_) | FromDvm::Done { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{line_of, request};
    use super::*;

    #[test]
    fn client_requests_read_back_as_built() {
        for m in [
            ToDvm::Run {
                req: request(),
                env: Some(JobEnv {
                    vars: vec![("PATH".into(), "/bin".into())],
                    cwd: "/".into(),
                }),
                map_by: Some(MapBy::Node),
            },
            ToDvm::Run {
                req: request(),
                env: None,
                map_by: None,
            },
            ToDvm::Run {
                req: request(),
                env: None,
                map_by: Some(MapBy::Slot),
            },
            ToDvm::Stdin(Some(b"a b\n".to_vec())),
            ToDvm::Stdin(Some(Vec::new())),
            ToDvm::Stdin(None),
            ToDvm::Signal(12),
            ToDvm::Stop,
        ] {
            assert_eq!(ToDvm::decode(&line_of(m.encode())).expect("decodes"), m);
        }
        for c in [
            Command::new("c_what"),
            Command::new("c_run"),
            Command::new("c_run").arg("req", "nothex"),
            Command::new("c_run")
                .arg("req", request().as_wire())
                .arg("map_by", "diagonal"),
            Command::new("c_stdin"),
            Command::new("c_stdin").arg("data", "xyz"),
            Command::new("c_signal").arg("signum", "usr1"),
            Command::new("c_run")
                .arg("req", request().as_wire())
                .arg("env", "x")
                .arg("cwd", "2f"),
        ] {
            assert!(ToDvm::decode(&c).is_err(), "{c:?}");
        }
    }

    #[test]
    fn dvm_replies_read_back_as_built() {
        for m in [
            FromDvm::Started { job: 5 },
            FromDvm::Output {
                job: 5,
                rank: 1,
                fd: 2,
                data: b"x y\n".to_vec(),
            },
            FromDvm::Exit {
                job: 5,
                rank: 0,
                code: Some(3),
                signal: None,
            },
            FromDvm::Exit {
                job: 5,
                rank: 0,
                code: None,
                signal: Some(9),
            },
            FromDvm::Error("cannot start rank 0: No such file (os_error 2)".into()),
            FromDvm::TornDown { ranks: 4000 },
            FromDvm::Done { status: -1 },
        ] {
            assert_eq!(FromDvm::decode(&line_of(m.encode())).expect("decodes"), m);
        }
        for c in [
            Command::new("c_what"),
            Command::new("c_io")
                .arg("job", 1)
                .arg("rank", 0)
                .arg("fd", 1),
            Command::new("c_exit")
                .arg("job", 1)
                .arg("rank", 0)
                .arg("code", "x"),
            Command::new("c_done"),
            Command::new("c_torn_down").arg("ranks", -2),
            Command::new("c_started").arg("job", -1),
        ] {
            assert!(FromDvm::decode(&c).is_err(), "{c:?}");
        }
    }
}
