//! Between node daemons, along the tree (daemon 0 is the root): requests and arrivals go
//! `Up` toward the root; jobs, results and answers come `Down`. An answer carries the
//! requesting daemon (`origin`) and its request id, and is routed down toward it.

use super::{decode_u32s, encode_u32s, malformed, opt_num, text, EncodedRequest, JobEnv};
use ibdyn_pmi::jobs::{decode_children, decode_exits, encode_children, encode_exits};
use ibdyn_pmi::jobs::{ChildStart, RankExit};
use ibdyn_pmi::pset_ops::{reply_from_token, reply_token, PsetReply, PsetRequest};
use ibdyn_pmi::state::CollKind;
use ibdyn_pmi::wire::{hex_decode, hex_encode, Command};
use ibdyn_pmi::PmiError;

/// A name-service operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameOp {
    Publish,
    Lookup,
    Unpublish,
}

impl NameOp {
    pub(crate) fn name(self) -> &'static str {
        match self {
            NameOp::Publish => "publish",
            NameOp::Lookup => "lookup",
            NameOp::Unpublish => "unpublish",
        }
    }

    fn parse(cmd: &Command, s: &str) -> Result<NameOp, PmiError> {
        [NameOp::Publish, NameOp::Lookup, NameOp::Unpublish]
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| malformed(cmd, format!("unknown name operation {s}")))
    }
}

/// How one rank's start went on its daemon: errno 0 when it runs, else the OS error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StartResult {
    pub(crate) rank: u32,
    pub(crate) errno: i32,
    pub(crate) message: String,
}

/// A job's id, size and the fate of each rank, or why there is no job.
pub(crate) type SpawnAnswer = Result<(u32, u32, Vec<ChildStart>), String>;

/// Child daemon -> parent daemon (passed on to the root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Up {
    Put {
        kvs: String,
        key: String,
        value: String,
    },
    Get {
        origin: u32,
        id: u64,
        kvs: String,
        key: String,
        wait_ms: u64,
    },
    Name {
        origin: u32,
        id: u64,
        op: NameOp,
        service: String,
        /// Empty for a lookup or unpublish.
        port: String,
        /// (job, rank) of a publisher, if known: its names are withdrawn once it is gone.
        owner: Option<(u32, u32)>,
    },
    Spawn {
        origin: u32,
        id: u64,
        req: EncodedRequest,
        /// The job of the rank that asks.
        parent: Option<u32>,
    },
    Status {
        origin: u32,
        id: u64,
        job: u32,
    },
    /// Daemon `node` started (or failed to start) its ranks of `job`.
    Started {
        job: u32,
        node: u32,
        results: Vec<StartResult>,
    },
    Exited {
        job: u32,
        rank: u32,
        code: Option<i32>,
        signal: Option<i32>,
        node: u32,
    },
    /// `count` ranks of a subtree joined collective `seq` of `job`.
    Coll {
        job: u32,
        seq: u64,
        kind: CollKind,
        count: u32,
        vals: Vec<(u32, String)>,
    },
    /// A rank joins no collective from `from_seq` on.
    Gone(Gone),
    /// A process-set request of rank `who` (job, rank), for the root's registry.
    Pset {
        origin: u32,
        id: u64,
        who: (u32, u32),
        req: PsetRequest,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Gone {
    pub(crate) job: u32,
    pub(crate) rank: u32,
    pub(crate) from_seq: u64,
    pub(crate) why: String,
}

impl Gone {
    fn add_to(&self, c: Command) -> Command {
        c.arg("job", self.job)
            .arg("rank", self.rank)
            .arg("from_seq", self.from_seq)
            .arg("why", hex_encode(self.why.as_bytes()))
    }

    fn decode(cmd: &Command) -> Result<Gone, PmiError> {
        Ok(Gone {
            job: cmd.num("job")?,
            rank: cmd.num("rank")?,
            from_seq: cmd.num("from_seq")?,
            why: text(cmd, "why")?,
        })
    }
}

/// A new job, as every daemon learns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Start {
    pub(crate) job: u32,
    /// The daemon of every rank.
    pub(crate) nodes: Vec<u32>,
    /// The launcher request it descends from.
    pub(crate) owner: u64,
    /// Started by the launcher, not spawned by a rank.
    pub(crate) submitted: bool,
    pub(crate) req: EncodedRequest,
    pub(crate) parent: Option<u32>,
    /// Rank 0 reads the launcher's stdin.
    pub(crate) stdin: bool,
    /// Rank 0 is a running singleton, not started here.
    pub(crate) adopt: bool,
    pub(crate) env: Option<JobEnv>,
}

/// The root's answer to a request of daemon `origin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    Get {
        kvs: String,
        key: String,
        /// None: not found, or not put in time (`timed_out`).
        value: Option<String>,
        timed_out: bool,
    },
    /// The port looked up (empty for publish / unpublish), or why not.
    Name(Result<String, String>),
    Spawn(SpawnAnswer),
    /// The job's size and the ends of its ranks so far, or why there is none.
    Status(Result<(u32, Vec<RankExit>), String>),
    /// The registry's answer to a process-set request.
    Pset(Result<PsetReply, String>),
}

/// Parent daemon -> child daemon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Down {
    Start(Box<Start>),
    KillJob(u32),
    /// Every rank of the job ended: its state goes.
    JobDone(u32),
    Answer {
        origin: u32,
        id: u64,
        answer: Answer,
    },
    /// A collective completed: the fence's new keys, or the allgather's values (or why not).
    CollDone {
        job: u32,
        seq: u64,
        kind: CollKind,
        fenced: Option<(String, Vec<(String, String)>)>,
        result: Result<String, String>,
    },
    CollFail(Gone),
    /// A retired rank that overstayed its shrink goes.
    KillRank {
        job: u32,
        rank: u32,
    },
}

fn pairs(cmd: &Command, text: &str) -> Result<Vec<(String, String)>, PmiError> {
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once(':')
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .ok_or_else(|| malformed(cmd, format!("{p:?} is not a:b")))
        })
        .collect()
}

/// The success read from the fields when `ok_key` is present, else the error text of `msg=`.
fn outcome<T>(
    cmd: &Command,
    ok_key: &str,
    read: impl FnOnce() -> Result<T, PmiError>,
) -> Result<Result<T, String>, PmiError> {
    match cmd.get(ok_key) {
        Some(_) => Ok(Ok(read()?)),
        None => Ok(Err(text(cmd, "msg")?)),
    }
}

fn kind_of(cmd: &Command) -> Result<CollKind, PmiError> {
    let k = cmd.require("kind")?;
    CollKind::parse(k).ok_or_else(|| malformed(cmd, format!("unknown collective {k}")))
}

fn flag(cmd: &Command, key: &str) -> bool {
    cmd.get(key) == Some("1")
}

impl Up {
    pub(crate) fn encode(&self) -> Command {
        match self {
            Up::Put { kvs, key, value } => Command::new("d_put")
                .arg("kvs", kvs)
                .arg("key", key)
                .arg("value", hex_encode(value.as_bytes())),
            Up::Get {
                origin,
                id,
                kvs,
                key,
                wait_ms,
            } => Command::new("d_get")
                .arg("origin", origin)
                .arg("id", id)
                .arg("kvs", kvs)
                .arg("key", key)
                .arg("wait_ms", wait_ms),
            Up::Name {
                origin,
                id,
                op,
                service,
                port,
                owner,
            } => {
                let c = Command::new("d_ns")
                    .arg("origin", origin)
                    .arg("id", id)
                    .arg("op", op.name())
                    .arg("service", service)
                    .arg("port", hex_encode(port.as_bytes()));
                match owner {
                    Some((job, rank)) => c.arg("job", job).arg("rank", rank),
                    None => c,
                }
            }
            Up::Spawn {
                origin,
                id,
                req,
                parent,
            } => {
                let c = Command::new("d_spawn")
                    .arg("origin", origin)
                    .arg("id", id)
                    .arg("req", req.as_wire());
                match parent {
                    Some(p) => c.arg("parent", p),
                    None => c,
                }
            }
            Up::Status { origin, id, job } => Command::new("d_status")
                .arg("origin", origin)
                .arg("id", id)
                .arg("job", job),
            Up::Started { job, node, results } => {
                let items: Vec<String> = results
                    .iter()
                    .map(|r| {
                        format!(
                            "{}:{}:{}",
                            r.rank,
                            r.errno,
                            hex_encode(r.message.as_bytes())
                        )
                    })
                    .collect();
                Command::new("d_started")
                    .arg("job", job)
                    .arg("node", node)
                    .arg("results", items.join(","))
            }
            Up::Exited {
                job,
                rank,
                code,
                signal,
                node,
            } => {
                let mut c = Command::new("d_exited").arg("job", job).arg("rank", rank);
                if let Some(code) = code {
                    c = c.arg("code", code);
                }
                if let Some(signal) = signal {
                    c = c.arg("signal", signal);
                }
                c.arg("node", node)
            }
            Up::Coll {
                job,
                seq,
                kind,
                count,
                vals,
            } => {
                let vals: Vec<String> = vals.iter().map(|(r, v)| format!("{r}:{v}")).collect();
                Command::new("d_coll")
                    .arg("job", job)
                    .arg("seq", seq)
                    .arg("kind", kind.name())
                    .arg("count", count)
                    .arg("vals", vals.join(","))
            }
            Up::Gone(g) => g.add_to(Command::new("d_gone")),
            Up::Pset {
                origin,
                id,
                who,
                req,
            } => Command::new("d_pset")
                .arg("origin", origin)
                .arg("id", id)
                .arg("job", who.0)
                .arg("rank", who.1)
                .arg("req", req.to_token()),
        }
    }

    pub(crate) fn decode(cmd: &Command) -> Result<Up, PmiError> {
        Ok(match cmd.name.as_str() {
            "d_put" => Up::Put {
                kvs: cmd.require("kvs")?.into(),
                key: cmd.require("key")?.into(),
                value: text(cmd, "value")?,
            },
            "d_get" => Up::Get {
                origin: cmd.num("origin")?,
                id: cmd.num("id")?,
                kvs: cmd.require("kvs")?.into(),
                key: cmd.require("key")?.into(),
                wait_ms: cmd.num("wait_ms")?,
            },
            "d_ns" => Up::Name {
                origin: cmd.num("origin")?,
                id: cmd.num("id")?,
                op: NameOp::parse(cmd, cmd.require("op")?)?,
                service: cmd.require("service")?.into(),
                port: text(cmd, "port")?,
                owner: match (opt_num(cmd, "job")?, opt_num(cmd, "rank")?) {
                    (Some(job), Some(rank)) => Some((job, rank)),
                    _ => None,
                },
            },
            "d_spawn" => Up::Spawn {
                origin: cmd.num("origin")?,
                id: cmd.num("id")?,
                req: EncodedRequest::from_wire(cmd, cmd.require("req")?)?,
                parent: opt_num(cmd, "parent")?,
            },
            "d_status" => Up::Status {
                origin: cmd.num("origin")?,
                id: cmd.num("id")?,
                job: cmd.num("job")?,
            },
            "d_started" => {
                let mut results = Vec::new();
                for item in cmd.require("results")?.split(',').filter(|i| !i.is_empty()) {
                    let mut it = item.splitn(3, ':');
                    let (Some(r), Some(e), Some(m)) = (it.next(), it.next(), it.next()) else {
                        return Err(malformed(cmd, format!("{item:?} is not rank:errno:msg")));
                    };
                    let (Ok(rank), Ok(errno)) = (r.parse(), e.parse()) else {
                        return Err(malformed(cmd, format!("{item:?} is not rank:errno:msg")));
                    };
                    let message = String::from_utf8_lossy(&hex_decode(m)?).into_owned();
                    results.push(StartResult {
                        rank,
                        errno,
                        message,
                    });
                }
                Up::Started {
                    job: cmd.num("job")?,
                    node: cmd.num("node")?,
                    results,
                }
            }
            "d_exited" => Up::Exited {
                job: cmd.num("job")?,
                rank: cmd.num("rank")?,
                code: opt_num(cmd, "code")?,
                signal: opt_num(cmd, "signal")?,
                node: cmd.num("node")?,
            },
            "d_coll" => Up::Coll {
                job: cmd.num("job")?,
                seq: cmd.num("seq")?,
                kind: kind_of(cmd)?,
                count: cmd.num("count")?,
                vals: pairs(cmd, cmd.require("vals")?)?
                    .into_iter()
                    .map(|(r, v)| {
                        r.parse()
                            .map(|r| (r, v))
                            .map_err(|_| malformed(cmd, format!("rank {r:?} in vals")))
                    })
                    .collect::<Result<_, _>>()?,
            },
            "d_gone" => Up::Gone(Gone::decode(cmd)?),
            "d_pset" => Up::Pset {
                origin: cmd.num("origin")?,
                id: cmd.num("id")?,
                who: (cmd.num("job")?, cmd.num("rank")?),
                req: PsetRequest::from_token(cmd.require("req")?)?,
            },
            other => return Err(malformed(cmd, format!("{other} is not a daemon request"))),
        })
    }
}

impl Down {
    pub(crate) fn encode(&self) -> Command {
        match self {
            Down::Start(s) => {
                let mut c = Command::new("d_start")
                    .arg("job", s.job)
                    .arg("nodes", encode_u32s(&s.nodes))
                    .arg("owner", s.owner)
                    .arg("submitted", u8::from(s.submitted))
                    .arg("req", s.req.as_wire())
                    .arg("stdin", u8::from(s.stdin))
                    .arg("adopt", u8::from(s.adopt));
                if let Some(p) = s.parent {
                    c = c.arg("parent", p);
                }
                match &s.env {
                    Some(e) => e.add_to(c),
                    None => c,
                }
            }
            Down::KillJob(job) => Command::new("d_kill_job").arg("job", job),
            Down::JobDone(job) => Command::new("d_job_done").arg("job", job),
            Down::Answer { origin, id, answer } => {
                let with = |name: &str| Command::new(name).arg("origin", origin).arg("id", id);
                let err = |c: Command, m: &str| c.arg("msg", hex_encode(m.as_bytes()));
                match answer {
                    Answer::Get {
                        kvs,
                        key,
                        value,
                        timed_out,
                    } => {
                        let c = with("d_get_result").arg("kvs", kvs).arg("key", key);
                        match value {
                            Some(v) => c.arg("value", hex_encode(v.as_bytes())),
                            None => c.arg("timed_out", u8::from(*timed_out)),
                        }
                    }
                    Answer::Name(Ok(port)) => {
                        with("d_ns_result").arg("port", hex_encode(port.as_bytes()))
                    }
                    Answer::Name(Err(m)) => err(with("d_ns_result"), m),
                    Answer::Spawn(Ok((job, size, children))) => with("d_spawn_result")
                        .arg("jobid", job)
                        .arg("size", size)
                        .arg("children", encode_children(children)),
                    Answer::Spawn(Err(m)) => err(with("d_spawn_result"), m),
                    Answer::Status(Ok((size, exits))) => with("d_status_result")
                        .arg("size", size)
                        .arg("exited", encode_exits(exits)),
                    Answer::Status(Err(m)) => err(with("d_status_result"), m),
                    Answer::Pset(r) => with("d_pset_result").arg("reply", reply_token(r)),
                }
            }
            Down::CollDone {
                job,
                seq,
                kind,
                fenced,
                result,
            } => {
                let mut c = Command::new("d_coll_done")
                    .arg("job", job)
                    .arg("seq", seq)
                    .arg("kind", kind.name());
                if let Some((kvs, data)) = fenced {
                    let data: Vec<String> = data
                        .iter()
                        .map(|(k, v)| {
                            format!("{}:{}", hex_encode(k.as_bytes()), hex_encode(v.as_bytes()))
                        })
                        .collect();
                    c = c.arg("kvs", kvs).arg("data", data.join(","));
                }
                match result {
                    Ok(values) => c.arg("values", values),
                    Err(m) => c.arg("msg", hex_encode(m.as_bytes())),
                }
            }
            Down::CollFail(g) => g.add_to(Command::new("d_coll_fail")),
            Down::KillRank { job, rank } => Command::new("d_kill_rank")
                .arg("job", job)
                .arg("rank", rank),
        }
    }

    pub(crate) fn decode(cmd: &Command) -> Result<Down, PmiError> {
        let answer = |a: Answer| -> Result<Down, PmiError> {
            Ok(Down::Answer {
                origin: cmd.num("origin")?,
                id: cmd.num("id")?,
                answer: a,
            })
        };
        Ok(match cmd.name.as_str() {
            "d_start" => Down::Start(Box::new(Start {
                job: cmd.num("job")?,
                nodes: decode_u32s(cmd, cmd.require("nodes")?)?,
                owner: cmd.num("owner")?,
                submitted: flag(cmd, "submitted"),
                req: EncodedRequest::from_wire(cmd, cmd.require("req")?)?,
                parent: opt_num(cmd, "parent")?,
                stdin: flag(cmd, "stdin"),
                adopt: flag(cmd, "adopt"),
                env: JobEnv::from_wire(cmd)?,
            })),
            "d_kill_job" => Down::KillJob(cmd.num("job")?),
            "d_job_done" => Down::JobDone(cmd.num("job")?),
            "d_get_result" => {
                let value = cmd.get("value").map(|_| text(cmd, "value")).transpose()?;
                answer(Answer::Get {
                    kvs: cmd.require("kvs")?.into(),
                    key: cmd.require("key")?.into(),
                    value,
                    timed_out: flag(cmd, "timed_out"),
                })?
            }
            "d_ns_result" => answer(Answer::Name(outcome(cmd, "port", || text(cmd, "port"))?))?,
            "d_spawn_result" => answer(Answer::Spawn(outcome(cmd, "jobid", || {
                Ok((
                    cmd.num("jobid")?,
                    cmd.num("size")?,
                    decode_children(cmd.require("children")?)?,
                ))
            })?))?,
            "d_status_result" => answer(Answer::Status(outcome(cmd, "size", || {
                Ok((cmd.num("size")?, decode_exits(cmd.require("exited")?)?))
            })?))?,
            "d_coll_done" => {
                let fenced = match cmd.get("kvs") {
                    None => None,
                    Some(kvs) => {
                        let mut data = Vec::new();
                        for (k, v) in pairs(cmd, cmd.require("data")?)? {
                            let k = String::from_utf8_lossy(&hex_decode(&k)?).into_owned();
                            let v = String::from_utf8_lossy(&hex_decode(&v)?).into_owned();
                            data.push((k, v));
                        }
                        Some((kvs.to_string(), data))
                    }
                };
                Down::CollDone {
                    job: cmd.num("job")?,
                    seq: cmd.num("seq")?,
                    kind: kind_of(cmd)?,
                    fenced,
                    result: outcome(cmd, "values", || Ok(cmd.require("values")?.to_string()))?,
                }
            }
            "d_coll_fail" => Down::CollFail(Gone::decode(cmd)?),
            "d_kill_rank" => Down::KillRank {
                job: cmd.num("job")?,
                rank: cmd.num("rank")?,
            },
            "d_pset_result" => answer(Answer::Pset(reply_from_token(cmd.require("reply")?)?))?,
            other => return Err(malformed(cmd, format!("{other} is not a daemon message"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{line_of, request};
    use super::*;

    fn gone() -> Gone {
        Gone {
            job: 4,
            rank: 2,
            from_seq: 7,
            why: "exited with code 1".into(),
        }
    }

    #[test]
    fn every_message_up_the_tree_reads_back_as_built() {
        let all = [
            Up::Put {
                kvs: "kvs_4".into(),
                key: "card-0".into(),
                value: "".into(),
            },
            Up::Get {
                origin: 3,
                id: 9,
                kvs: "kvs_4".into(),
                key: "card-1".into(),
                wait_ms: 500,
            },
            Up::Name {
                origin: 1,
                id: 2,
                op: NameOp::Publish,
                service: "svc".into(),
                port: "tag#1$port".into(),
                owner: Some((7, 3)),
            },
            Up::Name {
                origin: 1,
                id: 2,
                op: NameOp::Lookup,
                service: "svc".into(),
                port: "".into(),
                owner: None,
            },
            Up::Spawn {
                origin: 2,
                id: 5,
                req: request(),
                parent: Some(4),
            },
            Up::Spawn {
                origin: 2,
                id: 5,
                req: request(),
                parent: None,
            },
            Up::Status {
                origin: 2,
                id: 6,
                job: 4,
            },
            Up::Pset {
                origin: 2,
                id: 8,
                who: (4, 1),
                req: PsetRequest::Lookup {
                    set: ibdyn_pmi::pset_ops::SetRef::named("ibdyn://op1/delta"),
                },
            },
            Up::Started {
                job: 4,
                node: 1,
                results: vec![
                    StartResult {
                        rank: 1,
                        errno: 0,
                        message: String::new(),
                    },
                    StartResult {
                        rank: 2,
                        errno: 13,
                        message: "cannot execute: Permission denied".into(),
                    },
                ],
            },
            Up::Started {
                job: 4,
                node: 1,
                results: vec![],
            },
            Up::Exited {
                job: 4,
                rank: 1,
                code: Some(0),
                signal: None,
                node: 1,
            },
            Up::Exited {
                job: 4,
                rank: 1,
                code: None,
                signal: Some(9),
                node: 1,
            },
            Up::Coll {
                job: 4,
                seq: 3,
                kind: CollKind::Allgather,
                count: 2,
                vals: vec![(0, "aa".into()), (1, "bb".into())],
            },
            Up::Coll {
                job: 4,
                seq: 3,
                kind: CollKind::Fence,
                count: 1,
                vals: vec![],
            },
            Up::Gone(gone()),
        ];
        for m in all {
            assert_eq!(Up::decode(&line_of(m.encode())).expect("decodes"), m);
        }
    }

    #[test]
    fn every_message_down_the_tree_reads_back_as_built() {
        let answer = |a| Down::Answer {
            origin: 3,
            id: 8,
            answer: a,
        };
        let all = [
            Down::Start(Box::new(Start {
                job: 4,
                nodes: vec![0, 1, 0],
                owner: 12,
                submitted: true,
                req: request(),
                parent: None,
                stdin: true,
                adopt: false,
                env: Some(JobEnv {
                    vars: vec![("A".into(), "1".into())],
                    cwd: "/w".into(),
                }),
            })),
            Down::Start(Box::new(Start {
                job: 5,
                nodes: vec![1],
                owner: 0,
                submitted: false,
                req: request(),
                parent: Some(4),
                stdin: false,
                adopt: true,
                env: None,
            })),
            Down::KillJob(4),
            Down::JobDone(4),
            answer(Answer::Get {
                kvs: "kvs_4".into(),
                key: "k".into(),
                value: Some("v".into()),
                timed_out: false,
            }),
            answer(Answer::Get {
                kvs: "kvs_4".into(),
                key: "k".into(),
                value: None,
                timed_out: true,
            }),
            answer(Answer::Name(Ok("port-name".into()))),
            answer(Answer::Name(Ok(String::new()))),
            answer(Answer::Name(Err("service svc not published".into()))),
            answer(Answer::Spawn(Ok((
                5,
                2,
                vec![ChildStart {
                    rank: 0,
                    node: 1,
                    errno: 0,
                    message: String::new(),
                }],
            )))),
            answer(Answer::Spawn(Err(
                "a spawn needs at least one process".into()
            ))),
            answer(Answer::Status(Ok((
                2,
                vec![RankExit {
                    rank: 1,
                    code: Some(3),
                    signal: None,
                    start_error: None,
                }],
            )))),
            answer(Answer::Status(Err("no job 9 in this daemon set".into()))),
            Down::CollDone {
                job: 4,
                seq: 1,
                kind: CollKind::Fence,
                fenced: Some(("kvs_4".into(), vec![("k 1".into(), "v,:2".into())])),
                result: Ok(String::new()),
            },
            Down::CollDone {
                job: 4,
                seq: 2,
                kind: CollKind::Allgather,
                fenced: None,
                result: Ok("aa,bb".into()),
            },
            Down::CollDone {
                job: 4,
                seq: 2,
                kind: CollKind::Allgather,
                fenced: None,
                result: Err("rank 1 left".into()),
            },
            Down::CollFail(gone()),
        ];
        for m in all {
            assert_eq!(Down::decode(&line_of(m.encode())).expect("decodes"), m);
        }
    }

    #[test]
    fn malformed_tree_messages_are_errors() {
        for c in [
            Command::new("d_what"),
            Command::new("d_put").arg("kvs", "k"),
            Command::new("d_ns")
                .arg("origin", 1)
                .arg("id", 1)
                .arg("op", "steal")
                .arg("service", "s")
                .arg("port", ""),
            Command::new("d_started")
                .arg("job", 1)
                .arg("node", 0)
                .arg("results", "1:x:"),
            Command::new("d_coll")
                .arg("job", 1)
                .arg("seq", 1)
                .arg("kind", "reduce")
                .arg("count", 1)
                .arg("vals", ""),
            Command::new("d_coll")
                .arg("job", 1)
                .arg("seq", 1)
                .arg("kind", "allgather")
                .arg("count", 1)
                .arg("vals", "x:1"),
            Command::new("d_gone").arg("job", 1),
        ] {
            assert!(Up::decode(&c).is_err(), "{c:?}");
        }
        for c in [
            Command::new("d_put"),
            Command::new("d_start").arg("job", 1).arg("nodes", "0"),
            Command::new("d_kill_job").arg("job", "x"),
            Command::new("d_get_result").arg("origin", 1).arg("id", 1),
            Command::new("d_spawn_result")
                .arg("origin", 1)
                .arg("id", 1)
                .arg("jobid", 2)
                .arg("size", 1)
                .arg("children", "bad"),
            Command::new("d_status_result")
                .arg("origin", 1)
                .arg("id", 1),
            Command::new("d_coll_done")
                .arg("job", 1)
                .arg("seq", 1)
                .arg("kind", "fence")
                .arg("kvs", "k")
                .arg("data", "zz:00")
                .arg("values", ""),
        ] {
            assert!(Down::decode(&c).is_err(), "{c:?}");
        }
    }

    #[test]
    fn process_set_answers_and_kills_read_back_as_built() {
        use ibdyn_pmi::pset_ops::PsetDesc;
        let all = [
            Down::KillRank { job: 4, rank: 3 },
            Down::Answer {
                origin: 1,
                id: 3,
                answer: Answer::Pset(Ok(PsetReply::Made(vec![PsetDesc {
                    name: "ibdyn://op1/delta".into(),
                    members: vec![(4, 0)],
                    origin: None,
                }]))),
            },
            Down::Answer {
                origin: 1,
                id: 3,
                answer: Answer::Pset(Err("set x://y is busy".into())),
            },
        ];
        for m in all {
            assert_eq!(Down::decode(&line_of(m.encode())).expect("decodes"), m);
        }
    }
}
