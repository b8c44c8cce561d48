//! Dynamic process sets (seed 000, with MPI naming): operations on sets run by the daemons'
//! registry (set algebra, and resource changes that start or retire processes), the pending
//! change of a set, its finalisation, and a dictionary per set. Blocking calls and their
//! non-blocking forms (`PsetRequest` with `test`/`wait`).

use crate::pset::{SELF, WORLD};
use crate::{CommError, Gpid, Group, Result, Session};
use ibdyn_intercomm::process;
use ibdyn_pmi::pset_ops::{self as wire, PsetDesc, PsetReply, SetRef};
use std::time::{Duration, Instant};

pub use ibdyn_pmi::pset_ops::{ChangeState, PsetOp};

/// The scheme of the sets the daemons make (`ibdyn://op7/delta`, ...).
pub const DYNAMIC_SCHEME: &str = "ibdyn://";

/// How a process-set operation runs (MPI's info argument).
#[derive(Clone, Debug)]
pub struct PsetOpOptions {
    /// Processes to start or retire (Add, Sub, Grow, Shrink, Replace); ignored by set
    /// algebra. A Sub/Shrink with 0 and a second input set retires that set's members.
    pub n: u32,
    /// Bound on waiting for a grow's processes to start, or a shrink's to exit.
    pub timeout: Duration,
}

impl Default for PsetOpOptions {
    fn default() -> Self {
        PsetOpOptions {
            n: 0,
            timeout: Duration::from_secs(60),
        }
    }
}

impl PsetOpOptions {
    /// `n` processes, the default bound.
    pub fn processes(n: u32) -> PsetOpOptions {
        PsetOpOptions {
            n,
            ..PsetOpOptions::default()
        }
    }
}

/// A resource change of a set, as the registry describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsetChange {
    /// The operation that made the change.
    pub op: PsetOp,
    /// Where it is in its life (granted, pending, finalized).
    pub state: ChangeState,
    /// The set the change applies to (the registry's name for it).
    pub input: String,
    /// The processes added or retired.
    pub delta: String,
    /// The input after the change.
    pub new_main: String,
    /// Whether this process is in the delta (added, or retired).
    pub included: bool,
}

fn registry_error(e: String) -> CommError {
    CommError::Pmi(ibdyn_pmi::PmiError::Server {
        cmd: "process-set operation".into(),
        msg: e,
    })
}

fn group_of(d: &PsetDesc) -> Group {
    Group::new(
        d.members
            .iter()
            .map(|&(job, rank)| Gpid { job, rank })
            .collect(),
    )
}

/// One request to the registry; learns the sets it describes.
fn ask(s: &Session, req: &wire::PsetRequest) -> Result<PsetReply> {
    s.check()?;
    let reply = process::with_pmi(|pmi| pmi.pset(req))??;
    let reply = reply.map_err(registry_error)?;
    let mut learn = |d: &PsetDesc| s.learn(&d.name, group_of(d));
    match &reply {
        PsetReply::Made(sets) => sets.iter().for_each(&mut learn),
        PsetReply::Set(d) => learn(d),
        PsetReply::Change(Some(c)) => {
            learn(&c.delta);
            learn(&c.new_main);
        }
        _ => {}
    }
    Ok(reply)
}

fn unexpected(r: PsetReply) -> CommError {
    CommError::Malformed(format!(
        "unexpected answer of the process-set registry: {r:?}"
    ))
}

/// How a set is named to the registry: with its members when only this process knows them
/// (the launcher's sets).
fn setref(s: &Session, name: &str) -> Result<SetRef> {
    crate::pset::check_name(name)?;
    if name == WORLD || name == SELF || name.starts_with(DYNAMIC_SCHEME) {
        return Ok(SetRef::named(name));
    }
    let g = s.known(name).ok_or_else(|| CommError::UnknownPset {
        name: name.to_string(),
        known: "see Session::nth_pset".into(),
    })?;
    Ok(SetRef {
        name: name.to_string(),
        members: Some(g.members().iter().map(|p| (p.job, p.rank)).collect()),
    })
}

/// Asks the registry for a set it made; false when it knows none of that name.
pub(crate) fn lookup(s: &Session, name: &str) -> Result<bool> {
    if !name.starts_with(DYNAMIC_SCHEME) {
        return Ok(false);
    }
    let req = wire::PsetRequest::Lookup {
        set: SetRef::named(name),
    };
    match ask(s, &req) {
        Ok(_) => Ok(true),
        Err(CommError::Pmi(ibdyn_pmi::PmiError::Server { .. })) => Ok(false),
        Err(e) => Err(e),
    }
}

/// How long a wait for a set's data lasts (the daemons hold a blocking one that long).
const DATA_WAIT: Duration = Duration::from_secs(60);

/// One look at the registry: the result once there is one.
type Poll<'s, T> = Box<dyn FnMut(&Session) -> Result<Option<T>> + 's>;

/// A non-blocking process-set call (MPI_Request): `test` asks the registry once, `wait`
/// until done (bounded).
pub struct PsetRequest<'s, T> {
    session: &'s Session,
    poll: Poll<'s, T>,
    deadline: Instant,
    bound: Duration,
    what: String,
    done: Option<T>,
}

impl<'s, T> PsetRequest<'s, T> {
    fn new(
        session: &'s Session,
        what: String,
        timeout: Duration,
        poll: impl FnMut(&Session) -> Result<Option<T>> + 's,
    ) -> Self {
        PsetRequest {
            session,
            poll: Box::new(poll),
            deadline: Instant::now() + timeout,
            bound: timeout,
            what,
            done: None,
        }
    }

    /// Whether the operation has completed (MPI_Test); `wait` then returns at once.
    pub fn test(&mut self) -> Result<bool> {
        if self.done.is_none() {
            self.done = (self.poll)(self.session)?;
        }
        Ok(self.done.is_some())
    }

    /// Waits for the result (MPI_Wait), at most the operation's bound.
    pub fn wait(mut self) -> Result<T> {
        let mut pause = Duration::from_micros(200);
        loop {
            if self.test()? {
                return Ok(self.done.take().expect("tested"));
            }
            if Instant::now() >= self.deadline {
                return Err(CommError::Timeout {
                    what: self.what.clone(),
                    secs: self.bound.as_secs(),
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }
}

fn change_of(s: &Session, c: wire::Change) -> PsetChange {
    let me = s.me();
    PsetChange {
        op: c.op,
        state: c.state,
        input: c.input,
        included: c.delta.members.contains(&(me.job, me.rank)),
        delta: c.delta.name,
        new_main: c.new_main.name,
    }
}

impl Session {
    /// Runs `op` on `inputs` (MPIX_Session_pset_create_op; seed 000's resource changes):
    /// set algebra returns the new set; a resource change returns the delta set and the new
    /// main set, once the started processes run (a grow) or at once (a shrink, whose retired
    /// processes learn it from `query_pset_op`). Every process that asks sees the same sets.
    pub fn pset_op(
        &self,
        op: PsetOp,
        inputs: &[&str],
        opts: &PsetOpOptions,
    ) -> Result<Vec<String>> {
        self.ipset_op(op, inputs, opts)?.wait()
    }

    /// The non-blocking form of `pset_op`: the op is granted (or refused) before this
    /// returns; the request completes when a grow's processes run.
    pub fn ipset_op(
        &self,
        op: PsetOp,
        inputs: &[&str],
        opts: &PsetOpOptions,
    ) -> Result<PsetRequest<'_, Vec<String>>> {
        let inputs = inputs
            .iter()
            .map(|n| setref(self, n))
            .collect::<Result<Vec<_>>>()?;
        let req = wire::PsetRequest::Op {
            op,
            inputs,
            n: opts.n,
        };
        let sets = match ask(self, &req)? {
            PsetReply::Made(sets) => sets,
            r => return Err(unexpected(r)),
        };
        let names: Vec<String> = sets.iter().map(|d| d.name.clone()).collect();
        let delta = (op.is_resource_change()).then(|| names[0].clone());
        Ok(PsetRequest::new(
            self,
            format!("the {} of {}", op.name(), names.join(", ")),
            opts.timeout,
            move |s| {
                let Some(delta) = &delta else {
                    return Ok(Some(names.clone()));
                };
                let q = wire::PsetRequest::Query {
                    set: SetRef::named(delta),
                };
                match ask(s, &q)? {
                    PsetReply::Change(Some(c)) if c.state == ChangeState::Granted => Ok(None),
                    _ => Ok(Some(names.clone())),
                }
            },
        ))
    }

    /// The pending resource change of `input` (MPIX_Session_dyn_query_pset_op), if any: for
    /// `mpi://SELF`, the latest pending change whose delta holds this process. `coll` is the
    /// set over which the call is collective; the registry gives every member the same
    /// answer, so the members need not talk.
    pub fn query_pset_op(&self, coll: &str, input: &str) -> Result<Option<PsetChange>> {
        self.iquery_pset_op(coll, input)?.wait()
    }

    /// The non-blocking form of `query_pset_op`.
    pub fn iquery_pset_op(
        &self,
        coll: &str,
        input: &str,
    ) -> Result<PsetRequest<'_, Option<PsetChange>>> {
        crate::pset::check_name(coll)?;
        let set = setref(self, input)?;
        Ok(PsetRequest::new(
            self,
            format!("the query of {input}"),
            Duration::from_secs(60),
            move |s| {
                let q = wire::PsetRequest::Query { set: set.clone() };
                match ask(s, &q)? {
                    PsetReply::Change(c) => Ok(Some(c.map(|c| change_of(s, c)))),
                    r => Err(unexpected(r)),
                }
            },
        ))
    }

    /// Tells the registry the application has adapted to the pending change of `pset`
    /// (MPIX_Session_dyn_finalize_psetop). A change that retires processes is finalised
    /// when they have exited; one that overstays the daemons' retire limit (10 s,
    /// `IBDYN_RETIRE_LIMIT_MS`) is killed, and the error names it (the change is finalised all the same). An error when nothing is
    /// pending.
    ///
    /// The root daemon holds the request until the change is finalised (bounded by the
    /// retire limit and a little more), so this process does not poll.
    pub fn finalize_pset_op(&self, pset: &str) -> Result<()> {
        let set = setref(self, pset)?;
        let req = wire::PsetRequest::Finalize { set };
        let asked = Instant::now();
        match ask(self, &req)? {
            PsetReply::Done => Ok(()),
            PsetReply::Change(Some(c)) => Err(CommError::Timeout {
                what: format!("the finalization of the {} of {}", c.op.name(), c.input),
                secs: asked.elapsed().as_secs(),
            }),
            r => Err(unexpected(r)),
        }
    }

    /// The operation and input sets that made `pset` (None for a predefined set).
    pub fn pset_origin(&self, pset: &str) -> Result<Option<(PsetOp, Vec<String>)>> {
        let req = wire::PsetRequest::Lookup {
            set: setref(self, pset)?,
        };
        match ask(self, &req)? {
            PsetReply::Set(d) => Ok(d.origin),
            r => Err(unexpected(r)),
        }
    }

    /// Stores `kv` in the dictionary of `pset` (MPIX_Session_set_pset_data).
    pub fn set_pset_data(&self, pset: &str, kv: &[(&str, &str)]) -> Result<()> {
        let req = wire::PsetRequest::SetData {
            set: setref(self, pset)?,
            kv: kv
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        match ask(self, &req)? {
            PsetReply::Done => Ok(()),
            r => Err(unexpected(r)),
        }
    }

    /// Reads `keys` of the dictionary of `pset` (MPIX_Session_get_pset_data); with `wait`,
    /// until every key is there (bounded by 60 s, and failing at once when a member of the
    /// set died). `coll` is the set over which the call is collective (see `query_pset_op`).
    pub fn get_pset_data(
        &self,
        coll: &str,
        pset: &str,
        keys: &[&str],
        wait: bool,
    ) -> Result<Vec<(String, String)>> {
        if !wait {
            return self.iget_pset_data(coll, pset, keys, wait)?.wait();
        }
        // The root daemon holds the request until every key is there (bounded).
        crate::pset::check_name(coll)?;
        let req = wire::PsetRequest::GetData {
            set: setref(self, pset)?,
            keys: keys.iter().map(|k| k.to_string()).collect(),
            wait_ms: DATA_WAIT.as_millis() as u64,
        };
        match ask(self, &req)? {
            PsetReply::Data(kv) if kv.len() == keys.len() => Ok(kv),
            PsetReply::Data(_) => Err(CommError::Timeout {
                what: format!("the data {keys:?} of {pset}"),
                secs: DATA_WAIT.as_secs(),
            }),
            r => Err(unexpected(r)),
        }
    }

    /// The non-blocking form of `get_pset_data`.
    pub fn iget_pset_data(
        &self,
        coll: &str,
        pset: &str,
        keys: &[&str],
        wait: bool,
    ) -> Result<PsetRequest<'_, Vec<(String, String)>>> {
        crate::pset::check_name(coll)?;
        let req = wire::PsetRequest::GetData {
            set: setref(self, pset)?,
            keys: keys.iter().map(|k| k.to_string()).collect(),
            wait_ms: 0,
        };
        let want = keys.len();
        Ok(PsetRequest::new(
            self,
            format!("the data {keys:?} of {pset}"),
            DATA_WAIT,
            move |s| match ask(s, &req)? {
                PsetReply::Data(kv) if !wait || kv.len() == want => Ok(Some(kv)),
                PsetReply::Data(_) => Ok(None),
                r => Err(unexpected(r)),
            },
        ))
    }
}
