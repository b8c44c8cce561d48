//! Dynamic process sets: the requests a process (or `ibdyn resize`) makes of the registry the
//! daemons hold, and its replies, as types. Each travels as one `ibdyn_pset` PMI line whose
//! fields are built and read only here (names and values hex, so any set name or datum passes).

use crate::error::{PmiError, Result};
use crate::wire::{hex_decode, hex_encode, Command};

/// A process: (job, rank).
pub type Member = (u32, u32);

/// A process-set operation (MPI_Session_pset_create_op / the resource changes of seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PsetOp {
    /// Resource change: add `n` processes to the input set (started at once).
    Add,
    /// Resource change: remove `n` processes (or the named second input) from the set.
    Sub,
    /// Like `Add`, the input being the job's main set.
    Grow,
    /// Like `Sub`, the input being the job's main set.
    Shrink,
    /// Remove `n` processes and start `n` new ones.
    Replace,
    /// Set algebra: every member of any input, first-seen order.
    Union,
    /// Set algebra: the first input's members that are in none of the others.
    Difference,
    /// Set algebra: the first input's members that are in every other.
    Intersection,
}

const OPS: [(PsetOp, &str); 8] = [
    (PsetOp::Add, "add"),
    (PsetOp::Sub, "sub"),
    (PsetOp::Grow, "grow"),
    (PsetOp::Shrink, "shrink"),
    (PsetOp::Replace, "replace"),
    (PsetOp::Union, "union"),
    (PsetOp::Difference, "difference"),
    (PsetOp::Intersection, "intersection"),
];

impl PsetOp {
    pub fn name(self) -> &'static str {
        OPS.iter().find(|(o, _)| *o == self).map_or("?", |(_, n)| n)
    }

    pub fn parse(s: &str) -> Option<PsetOp> {
        OPS.iter().find(|(_, n)| *n == s).map(|(o, _)| *o)
    }

    /// Whether processes start or stop (else it is set algebra).
    pub fn is_resource_change(self) -> bool {
        !matches!(
            self,
            PsetOp::Union | PsetOp::Difference | PsetOp::Intersection
        )
    }

    /// Whether the op starts processes.
    pub fn starts(self) -> bool {
        matches!(self, PsetOp::Add | PsetOp::Grow | PsetOp::Replace)
    }

    /// Whether the op retires processes.
    pub fn retires(self) -> bool {
        matches!(self, PsetOp::Sub | PsetOp::Shrink | PsetOp::Replace)
    }
}

/// A set named in a request: its name, with its members when the caller resolved it itself
/// (the launcher's sets); `mpi://WORLD`, `mpi://SELF` and dynamic sets the registry resolves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetRef {
    pub name: String,
    pub members: Option<Vec<Member>>,
}

impl SetRef {
    pub fn named(name: &str) -> SetRef {
        SetRef {
            name: name.to_string(),
            members: None,
        }
    }
}

/// A request to the process-set registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PsetRequest {
    /// Run `op` on `inputs`; `n` processes for Add/Sub/Grow/Shrink/Replace (0 for Sub with
    /// a second input naming the processes to remove).
    Op {
        op: PsetOp,
        inputs: Vec<SetRef>,
        n: u32,
    },
    /// A set's members and origin.
    Lookup { set: SetRef },
    /// The pending change whose input or delta is `set` (`mpi://SELF`: the latest pending
    /// change whose delta holds the caller).
    Query { set: SetRef },
    /// The application has adapted to the pending change of `set`.
    Finalize { set: SetRef },
    /// Stores `kv` in the set's dictionary.
    SetData {
        set: SetRef,
        kv: Vec<(String, String)>,
    },
    /// Reads `keys` of the set's dictionary, waiting up to `wait_ms` for missing ones.
    GetData {
        set: SetRef,
        keys: Vec<String>,
        wait_ms: u64,
    },
    /// The scheduler's side (`ibdyn resize`): `op` (Grow, Shrink, or Sub of the named set)
    /// against the main set of job `job` (0: the only job the daemons run).
    Resize {
        job: u32,
        op: PsetOp,
        n: u32,
        set: Option<String>,
    },
    /// The main set of every job the launcher started on these daemons (`ibdyn resize
    /// --list`).
    Jobs,
}

/// Where a resource change is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeState {
    /// Granted, its processes starting.
    Granted,
    /// Visible to queries, waiting for the application to adapt.
    Pending,
    /// Done.
    Finalized,
}

/// A set as the registry describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsetDesc {
    pub name: String,
    pub members: Vec<Member>,
    /// The op and input names that made it (None for a predefined set).
    pub origin: Option<(PsetOp, Vec<String>)>,
}

/// A pending resource change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub op: PsetOp,
    pub state: ChangeState,
    /// The set the change applies to.
    pub input: String,
    /// The processes started (Add/Grow) or retired (Sub/Shrink).
    pub delta: PsetDesc,
    /// The input after the change.
    pub new_main: PsetDesc,
}

/// The registry's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PsetReply {
    /// The sets an op made (set algebra: one; a resource change: the delta and the new set).
    Made(Vec<PsetDesc>),
    Set(PsetDesc),
    Change(Option<Change>),
    Done,
    Data(Vec<(String, String)>),
}

// ---- wire form ----

fn bad(cmd: &Command, why: impl Into<String>) -> PmiError {
    PmiError::Malformed {
        line: cmd.to_line().trim_end().to_string(),
        why: why.into(),
    }
}

fn hex_text(cmd: &Command, s: &str) -> Result<String> {
    String::from_utf8(hex_decode(s)?).map_err(|_| bad(cmd, "a name is not UTF-8"))
}

fn list<T>(cmd: &Command, key: &str, item: impl Fn(&Command, &str) -> Result<T>) -> Result<Vec<T>> {
    cmd.require(key)?
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| item(cmd, s))
        .collect()
}

fn members_text(m: &[Member]) -> String {
    let v: Vec<String> = m.iter().map(|(j, r)| format!("{j}.{r}")).collect();
    v.join(";")
}

fn members_of(cmd: &Command, s: &str) -> Result<Vec<Member>> {
    s.split(';')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (j, r) = p
                .split_once('.')
                .ok_or_else(|| bad(cmd, format!("{p:?} is not job.rank")))?;
            match (j.parse(), r.parse()) {
                (Ok(j), Ok(r)) => Ok((j, r)),
                _ => Err(bad(cmd, format!("{p:?} is not job.rank"))),
            }
        })
        .collect()
}

fn setref_text(s: &SetRef) -> String {
    match &s.members {
        Some(m) => format!("{}:{}", hex_encode(s.name.as_bytes()), members_text(m)),
        None => hex_encode(s.name.as_bytes()),
    }
}

fn setref_of(cmd: &Command, s: &str) -> Result<SetRef> {
    let (name, members) = match s.split_once(':') {
        Some((n, m)) => (n, Some(members_of(cmd, m)?)),
        None => (s, None),
    };
    Ok(SetRef {
        name: hex_text(cmd, name)?,
        members,
    })
}

fn kv_text(kv: &[(String, String)]) -> String {
    let v: Vec<String> = kv
        .iter()
        .map(|(k, v)| format!("{}:{}", hex_encode(k.as_bytes()), hex_encode(v.as_bytes())))
        .collect();
    v.join(",")
}

fn kv_of(cmd: &Command, s: &str) -> Result<(String, String)> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| bad(cmd, format!("{s:?} is not key:value")))?;
    Ok((hex_text(cmd, k)?, hex_text(cmd, v)?))
}

fn op_of(cmd: &Command, key: &str) -> Result<PsetOp> {
    let s = cmd.require(key)?;
    PsetOp::parse(s).ok_or_else(|| bad(cmd, format!("unknown process-set operation {s}")))
}

/// The name of a request's PMI line.
pub const REQUEST: &str = "ibdyn_pset";
/// The name of its reply.
pub const REPLY: &str = "ibdyn_pset_result";

impl PsetRequest {
    pub fn encode(&self) -> Command {
        let c = Command::new(REQUEST);
        match self {
            PsetRequest::Op { op, inputs, n } => {
                let ins: Vec<String> = inputs.iter().map(setref_text).collect();
                c.arg("kind", "op")
                    .arg("op", op.name())
                    .arg("n", n)
                    .arg("inputs", ins.join(","))
            }
            PsetRequest::Lookup { set } => c.arg("kind", "lookup").arg("set", setref_text(set)),
            PsetRequest::Query { set } => c.arg("kind", "query").arg("set", setref_text(set)),
            PsetRequest::Finalize { set } => c.arg("kind", "finalize").arg("set", setref_text(set)),
            PsetRequest::SetData { set, kv } => c
                .arg("kind", "set_data")
                .arg("set", setref_text(set))
                .arg("kv", kv_text(kv)),
            PsetRequest::GetData { set, keys, wait_ms } => {
                let keys: Vec<String> = keys.iter().map(|k| hex_encode(k.as_bytes())).collect();
                c.arg("kind", "get_data")
                    .arg("set", setref_text(set))
                    .arg("keys", keys.join(","))
                    .arg("wait_ms", wait_ms)
            }
            PsetRequest::Jobs => c.arg("kind", "jobs"),
            PsetRequest::Resize { job, op, n, set } => {
                let c = c
                    .arg("kind", "resize")
                    .arg("job", job)
                    .arg("op", op.name())
                    .arg("n", n);
                match set {
                    Some(s) => c.arg("set", hex_encode(s.as_bytes())),
                    None => c,
                }
            }
        }
    }

    pub fn decode(cmd: &Command) -> Result<PsetRequest> {
        let set = || setref_of(cmd, cmd.require("set")?);
        Ok(match cmd.require("kind")? {
            "op" => PsetRequest::Op {
                op: op_of(cmd, "op")?,
                inputs: list(cmd, "inputs", setref_of)?,
                n: cmd.num("n")?,
            },
            "lookup" => PsetRequest::Lookup { set: set()? },
            "query" => PsetRequest::Query { set: set()? },
            "finalize" => PsetRequest::Finalize { set: set()? },
            "set_data" => PsetRequest::SetData {
                set: set()?,
                kv: list(cmd, "kv", kv_of)?,
            },
            "get_data" => PsetRequest::GetData {
                set: set()?,
                keys: list(cmd, "keys", hex_text)?,
                wait_ms: cmd.num("wait_ms")?,
            },
            "jobs" => PsetRequest::Jobs,
            "resize" => PsetRequest::Resize {
                job: cmd.num("job")?,
                op: op_of(cmd, "op")?,
                n: cmd.num("n")?,
                set: cmd.get("set").map(|s| hex_text(cmd, s)).transpose()?,
            },
            other => return Err(bad(cmd, format!("unknown process-set request {other}"))),
        })
    }

    /// The request as one token (to pass between daemons unparsed).
    pub fn to_token(&self) -> String {
        hex_encode(self.encode().to_line().as_bytes())
    }

    pub fn from_token(token: &str) -> Result<PsetRequest> {
        let text = String::from_utf8(hex_decode(token)?)
            .map_err(|_| PmiError::invalid("process-set request", token, "is not UTF-8"))?;
        PsetRequest::decode(&Command::parse(&text)?)
    }
}

fn desc_text(d: &PsetDesc) -> String {
    let origin = match &d.origin {
        Some((op, ins)) => {
            let ins: Vec<String> = ins.iter().map(|i| hex_encode(i.as_bytes())).collect();
            format!("{}/{}", op.name(), ins.join("+"))
        }
        None => "-".into(),
    };
    format!(
        "{}:{}:{}",
        hex_encode(d.name.as_bytes()),
        members_text(&d.members),
        origin
    )
}

fn desc_of(cmd: &Command, s: &str) -> Result<PsetDesc> {
    let mut it = s.splitn(3, ':');
    let (Some(name), Some(members), Some(origin)) = (it.next(), it.next(), it.next()) else {
        return Err(bad(cmd, format!("{s:?} is not name:members:origin")));
    };
    let origin = match origin {
        "-" => None,
        o => {
            let (op, ins) = o
                .split_once('/')
                .ok_or_else(|| bad(cmd, format!("{o:?} is not op/inputs")))?;
            let op = PsetOp::parse(op).ok_or_else(|| bad(cmd, format!("unknown op {op}")))?;
            let ins = ins
                .split('+')
                .filter(|i| !i.is_empty())
                .map(|i| hex_text(cmd, i))
                .collect::<Result<_>>()?;
            Some((op, ins))
        }
    };
    Ok(PsetDesc {
        name: hex_text(cmd, name)?,
        members: members_of(cmd, members)?,
        origin,
    })
}

fn state_name(s: ChangeState) -> &'static str {
    match s {
        ChangeState::Granted => "granted",
        ChangeState::Pending => "pending",
        ChangeState::Finalized => "finalized",
    }
}

/// Encodes a reply (or the registry's error) as a line.
pub fn encode_reply(r: &std::result::Result<PsetReply, String>) -> Command {
    let c = Command::new(REPLY);
    let r = match r {
        Err(m) => return c.arg("rc", -1).arg("msg", hex_encode(m.as_bytes())),
        Ok(r) => r,
    };
    let c = c.arg("rc", 0);
    match r {
        PsetReply::Made(sets) => {
            let v: Vec<String> = sets.iter().map(desc_text).collect();
            c.arg("kind", "made").arg("sets", v.join(","))
        }
        PsetReply::Set(d) => c.arg("kind", "set").arg("desc", desc_text(d)),
        PsetReply::Change(None) => c.arg("kind", "none"),
        PsetReply::Change(Some(ch)) => c
            .arg("kind", "change")
            .arg("op", ch.op.name())
            .arg("state", state_name(ch.state))
            .arg("input", hex_encode(ch.input.as_bytes()))
            .arg("delta", desc_text(&ch.delta))
            .arg("main", desc_text(&ch.new_main)),
        PsetReply::Done => c.arg("kind", "done"),
        PsetReply::Data(kv) => c.arg("kind", "data").arg("kv", kv_text(kv)),
    }
}

/// Reads a reply line: the registry's answer, or its error text as `Err(String)`.
pub fn decode_reply(cmd: &Command) -> Result<std::result::Result<PsetReply, String>> {
    if cmd.rc() != 0 {
        return Ok(Err(hex_text(cmd, cmd.get("msg").unwrap_or(""))
            .unwrap_or_else(|_| "the registry refused".into())));
    }
    Ok(Ok(match cmd.require("kind")? {
        "made" => PsetReply::Made(list(cmd, "sets", desc_of)?),
        "set" => PsetReply::Set(desc_of(cmd, cmd.require("desc")?)?),
        "none" => PsetReply::Change(None),
        "change" => {
            let state = match cmd.require("state")? {
                "granted" => ChangeState::Granted,
                "pending" => ChangeState::Pending,
                "finalized" => ChangeState::Finalized,
                s => return Err(bad(cmd, format!("unknown state {s}"))),
            };
            PsetReply::Change(Some(Change {
                op: op_of(cmd, "op")?,
                state,
                input: hex_text(cmd, cmd.require("input")?)?,
                delta: desc_of(cmd, cmd.require("delta")?)?,
                new_main: desc_of(cmd, cmd.require("main")?)?,
            }))
        }
        "done" => PsetReply::Done,
        "data" => PsetReply::Data(list(cmd, "kv", kv_of)?),
        other => return Err(bad(cmd, format!("unknown process-set reply {other}"))),
    }))
}

/// A reply as one token.
pub fn reply_token(r: &std::result::Result<PsetReply, String>) -> String {
    hex_encode(encode_reply(r).to_line().as_bytes())
}

pub fn reply_from_token(token: &str) -> Result<std::result::Result<PsetReply, String>> {
    let text = String::from_utf8(hex_decode(token)?)
        .map_err(|_| PmiError::invalid("process-set reply", token, "is not UTF-8"))?;
    decode_reply(&Command::parse(&text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(name: &str) -> PsetDesc {
        PsetDesc {
            name: name.into(),
            members: vec![(3, 0), (9, 1)],
            origin: Some((PsetOp::Union, vec!["a://x y".into(), "mpi://WORLD".into()])),
        }
    }

    #[test]
    fn requests_read_back_as_written() {
        let reqs = [
            PsetRequest::Op {
                op: PsetOp::Grow,
                inputs: vec![
                    SetRef::named("mpi://WORLD"),
                    SetRef {
                        name: "app://even=;,".into(),
                        members: Some(vec![(1, 0), (1, 2)]),
                    },
                ],
                n: 4,
            },
            PsetRequest::Lookup {
                set: SetRef::named("x://y"),
            },
            PsetRequest::Query {
                set: SetRef::named("mpi://SELF"),
            },
            PsetRequest::Finalize {
                set: SetRef::named("x://y"),
            },
            PsetRequest::SetData {
                set: SetRef::named("x://y"),
                kv: vec![("k 1".into(), "v:,2".into()), ("e".into(), "".into())],
            },
            PsetRequest::GetData {
                set: SetRef::named("x://y"),
                keys: vec!["a".into(), "b".into()],
                wait_ms: 50,
            },
            PsetRequest::Resize {
                job: 7,
                op: PsetOp::Sub,
                n: 0,
                set: Some("app://x".into()),
            },
            PsetRequest::Resize {
                job: 0,
                op: PsetOp::Grow,
                n: 2,
                set: None,
            },
            PsetRequest::Jobs,
        ];
        for r in reqs {
            assert_eq!(PsetRequest::from_token(&r.to_token()).unwrap(), r);
        }
        assert!(PsetRequest::from_token("zz").is_err());
        let c = Command::new(REQUEST).arg("kind", "op").arg("op", "explode");
        assert!(PsetRequest::decode(&c).is_err());
    }

    #[test]
    fn replies_read_back_as_written() {
        let replies = [
            Ok(PsetReply::Made(vec![desc("a://1"), desc("a://2")])),
            Ok(PsetReply::Set(PsetDesc {
                name: "mpi://WORLD".into(),
                members: vec![],
                origin: None,
            })),
            Ok(PsetReply::Change(None)),
            Ok(PsetReply::Change(Some(Change {
                op: PsetOp::Shrink,
                state: ChangeState::Pending,
                input: "ibdyn://1/world".into(),
                delta: desc("d://x"),
                new_main: desc("m://x"),
            }))),
            Ok(PsetReply::Done),
            Ok(PsetReply::Data(vec![("k".into(), "v v".into())])),
            Err("set x://y is busy".to_string()),
        ];
        for r in replies {
            assert_eq!(reply_from_token(&reply_token(&r)).unwrap(), r);
        }
    }
}
