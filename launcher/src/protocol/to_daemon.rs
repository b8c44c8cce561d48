//! What a launcher (`ibdyn run`, or the DVM controller) tells its node daemons.

use super::{decode_u32s, encode_u32s, malformed, opt_num, EncodedRequest, JobEnv};
use ibdyn_pmi::wire::{hex_decode, hex_encode, Command};
use ibdyn_pmi::PmiError;

/// A job to start (to the root daemon).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Submission {
    /// Request id: the spawn result answers it; the job and its descendants are announced
    /// with it as their owner.
    pub(crate) id: u64,
    pub(crate) req: EncodedRequest,
    /// The job id to use (a fresh one when None).
    pub(crate) jobid: Option<u32>,
    /// The daemon of every rank (least-loaded placement when None).
    pub(crate) nodes: Option<Vec<u32>>,
    /// Rank 0 reads the launcher's stdin.
    pub(crate) stdin: bool,
    /// The ranks' environment and working directory (the daemon's own when None).
    pub(crate) env: Option<JobEnv>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ToDaemon {
    /// The first line after the hello: where the daemon's parent in the tree listens.
    Peers {
        parent_port: Option<u16>,
        /// The parent's address (loopback when absent).
        parent_ip: Option<std::net::IpAddr>,
    },
    /// Bytes of the launcher's stdin, for rank 0 of the job that reads it.
    Stdin(Vec<u8>),
    StdinEof,
    /// Bytes of a DVM client's stdin for rank 0 of its job `job` (None: end of file).
    JobStdin {
        job: u32,
        data: Option<Vec<u8>>,
    },
    /// Forward a signal to every rank.
    Signal(i32),
    /// Pass a signal on to the ranks of one job (a DVM client's).
    SignalJob {
        job: u32,
        signum: i32,
    },
    /// Terminate every rank (SIGTERM, SIGKILL after a grace period).
    Kill,
    /// Kill one job's ranks (to the root, which passes it on).
    KillJob(u32),
    /// Leave.
    Shutdown,
    Spawn(Submission),
    /// Adopt a running singleton as rank 0 of job `jobid`.
    Adopt {
        id: u64,
        jobid: u32,
    },
}

impl ToDaemon {
    pub(crate) fn encode(&self) -> Command {
        match self {
            ToDaemon::Peers {
                parent_port,
                parent_ip,
            } => {
                let mut c = Command::new("l_peers");
                if let Some(p) = parent_port {
                    c = c.arg("parent_port", p);
                }
                if let Some(ip) = parent_ip {
                    c = c.arg("parent_ip", ip);
                }
                c
            }
            ToDaemon::Stdin(data) => Command::new("l_stdin").arg("data", hex_encode(data)),
            ToDaemon::StdinEof => Command::new("l_stdin_eof"),
            ToDaemon::JobStdin { job, data } => {
                let c = Command::new("l_job_stdin").arg("job", job);
                match data {
                    Some(d) => c.arg("data", hex_encode(d)),
                    None => c.arg("eof", 1),
                }
            }
            ToDaemon::Signal(s) => Command::new("l_signal").arg("signum", s),
            ToDaemon::SignalJob { job, signum } => Command::new("l_signal_job")
                .arg("job", job)
                .arg("signum", signum),
            ToDaemon::Kill => Command::new("l_kill"),
            ToDaemon::KillJob(job) => Command::new("l_kill_job").arg("job", job),
            ToDaemon::Shutdown => Command::new("l_shutdown"),
            ToDaemon::Spawn(s) => {
                let mut c = Command::new("l_spawn")
                    .arg("id", s.id)
                    .arg("req", s.req.as_wire());
                if let Some(j) = s.jobid {
                    c = c.arg("jobid", j);
                }
                if let Some(n) = &s.nodes {
                    c = c.arg("nodes", encode_u32s(n));
                }
                if s.stdin {
                    c = c.arg("stdin", 1);
                }
                match &s.env {
                    Some(e) => e.add_to(c),
                    None => c,
                }
            }
            ToDaemon::Adopt { id, jobid } => {
                Command::new("l_adopt").arg("id", id).arg("jobid", jobid)
            }
        }
    }

    pub(crate) fn decode(cmd: &Command) -> Result<ToDaemon, PmiError> {
        Ok(match cmd.name.as_str() {
            "l_peers" => ToDaemon::Peers {
                parent_port: opt_num(cmd, "parent_port")?,
                parent_ip: match cmd.get("parent_ip") {
                    Some(ip) => Some(ip.parse().map_err(|_| malformed(cmd, "bad parent_ip"))?),
                    None => None,
                },
            },
            "l_stdin" => ToDaemon::Stdin(hex_decode(cmd.require("data")?)?),
            "l_stdin_eof" => ToDaemon::StdinEof,
            "l_job_stdin" => ToDaemon::JobStdin {
                job: cmd.num("job")?,
                data: match (cmd.get("data"), cmd.get("eof")) {
                    (Some(d), None) => Some(hex_decode(d)?),
                    (None, Some("1")) => None,
                    _ => return Err(malformed(cmd, "needs data= or eof=1")),
                },
            },
            "l_signal" => ToDaemon::Signal(cmd.num("signum")?),
            "l_signal_job" => ToDaemon::SignalJob {
                job: cmd.num("job")?,
                signum: cmd.num("signum")?,
            },
            "l_kill" => ToDaemon::Kill,
            "l_kill_job" => ToDaemon::KillJob(cmd.num("job")?),
            "l_shutdown" => ToDaemon::Shutdown,
            "l_spawn" => ToDaemon::Spawn(Submission {
                id: cmd.num("id")?,
                req: EncodedRequest::from_wire(cmd, cmd.require("req")?)?,
                jobid: opt_num(cmd, "jobid")?,
                nodes: cmd.get("nodes").map(|n| decode_u32s(cmd, n)).transpose()?,
                stdin: cmd.get("stdin") == Some("1"),
                env: JobEnv::from_wire(cmd)?,
            }),
            "l_adopt" => ToDaemon::Adopt {
                id: cmd.num("id")?,
                jobid: cmd.num("jobid")?,
            },
            other => return Err(malformed(cmd, format!("{other} is not a launcher command"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{line_of, request};
    use super::*;

    #[test]
    fn every_launcher_command_reads_back_as_built() {
        let all = [
            ToDaemon::Peers {
                parent_port: None,
                parent_ip: None,
            },
            ToDaemon::Peers {
                parent_port: Some(40001),
                parent_ip: Some("10.1.2.3".parse().unwrap()),
            },
            ToDaemon::Stdin(b"line\n\0\xff".to_vec()),
            ToDaemon::Stdin(Vec::new()),
            ToDaemon::StdinEof,
            ToDaemon::JobStdin {
                job: 3,
                data: Some(b"x\n".to_vec()),
            },
            ToDaemon::JobStdin { job: 3, data: None },
            ToDaemon::Signal(15),
            ToDaemon::SignalJob { job: 9, signum: 10 },
            ToDaemon::Kill,
            ToDaemon::KillJob(77),
            ToDaemon::Shutdown,
            ToDaemon::Spawn(Submission {
                id: 0,
                req: request(),
                jobid: Some(1234),
                nodes: Some(vec![0, 1, 1]),
                stdin: true,
                env: None,
            }),
            ToDaemon::Spawn(Submission {
                id: u64::MAX,
                req: request(),
                jobid: None,
                nodes: None,
                stdin: false,
                env: Some(JobEnv {
                    vars: vec![("IBDYN_LOG".into(), "debug".into())],
                    cwd: "/tmp".into(),
                }),
            }),
            ToDaemon::Adopt { id: 0, jobid: 9 },
        ];
        for m in all {
            assert_eq!(ToDaemon::decode(&line_of(m.encode())).expect("decodes"), m);
        }
    }

    #[test]
    fn malformed_launcher_commands_are_errors() {
        for c in [
            Command::new("l_what"),
            Command::new("d_exit"),
            Command::new("l_stdin"),
            Command::new("l_stdin").arg("data", "abc"),
            Command::new("l_signal").arg("signum", "TERM"),
            Command::new("l_kill_job"),
            Command::new("l_signal_job").arg("job", 9),
            Command::new("l_peers").arg("parent_port", "70000"),
            Command::new("l_spawn").arg("id", 1),
            Command::new("l_spawn").arg("id", 1).arg("req", "00"),
            Command::new("l_spawn")
                .arg("id", 1)
                .arg("req", request().as_wire())
                .arg("nodes", "0,x"),
            Command::new("l_adopt").arg("id", 1),
        ] {
            assert!(ToDaemon::decode(&c).is_err(), "{c:?}");
        }
    }
}
