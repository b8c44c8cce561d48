//! The process-set registry the root daemon (or the DVM head's root daemon) holds: every
//! dynamic set with the op and inputs that made it, a dictionary per set, and the resource
//! changes in their life cycle (granted -> pending -> finalized, or cancelled with a reason).
//! Pure state: the daemon feeds it requests, spawn outcomes, exits and the clock, and carries
//! out what it asks (start processes, kill a retired one that overstays).

use ibdyn_pmi::pset_ops::{
    Change, ChangeState, Member, PsetDesc, PsetOp, PsetReply, PsetRequest, SetRef,
};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// In the refusal of a change to a set whose previous change is not finalized yet
/// (`ibdyn resize` waits and asks again on it).
pub(crate) const BUSY: &str = "is busy:";

/// How long retired processes have, once the application finalised a shrink, to finalise
/// and exit before they are killed (`IBDYN_RETIRE_LIMIT_MS` changes it).
const RETIRE_LIMIT: Duration = Duration::from_secs(10);
/// Live processes the daemon set accepts by default (`IBDYN_MAX_PROCS` changes it).
const DEFAULT_MAX_PROCS: u32 = 1024;

pub(crate) type Reply = Result<PsetReply, String>;

/// The asking process and what the registry needs to know of the jobs.
pub(crate) struct Caller<'a> {
    pub(crate) who: Member,
    /// The size of a job (None: not a job of this daemon set).
    pub(crate) job_size: &'a dyn Fn(u32) -> Option<u32>,
    /// Live processes in the daemon set.
    pub(crate) live: u32,
    /// A fresh job id (random, as the launcher's: ids are global on the node, e.g. in
    /// shared-memory names).
    pub(crate) new_job: &'a dyn Fn() -> u32,
}

/// What the daemon must do for the registry.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Start `n` processes as job `job`, running what rank 0 of `like_job` runs.
    Start {
        change: u64,
        job: u32,
        n: u32,
        like_job: u32,
    },
    /// A retired process overstayed: kill it.
    Kill(Member),
}

struct SetEntry {
    members: Vec<Member>,
    origin: Option<(PsetOp, Vec<String>)>,
    data: BTreeMap<String, String>,
}

struct ChangeEntry {
    op: PsetOp,
    state: ChangeState,
    input: String,
    delta: String,
    new_main: String,
    /// Set when the application asked to finalise a change that retires processes.
    finalize_by: Option<Instant>,
    /// Why it ended badly (cancelled, or a retired process killed), reported once.
    note: Option<String>,
    cancelled: bool,
    reported: bool,
}

pub(crate) struct PsetRegistry {
    sets: BTreeMap<String, SetEntry>,
    changes: BTreeMap<u64, ChangeEntry>,
    /// The open (granted or pending) change of each set.
    open: HashMap<String, u64>,
    next_op: u64,
    /// The name of a job's `mpi://WORLD` (a grown job's is its delta set).
    world_of: HashMap<u32, String>,
    /// The main set of each job as `ibdyn resize` sees it, by the job the launcher started.
    main_of: HashMap<u32, String>,
    /// Which launched job a grown job belongs to.
    lineage: HashMap<u32, u32>,
    exited: HashMap<Member, bool>,
    max_procs: u32,
    retire_limit: Duration,
    /// Requests held until their answer is there (see `held`).
    held: super::held::HeldRequests,
}

fn desc(name: &str, e: &SetEntry) -> PsetDesc {
    PsetDesc {
        name: unscoped(name).to_string(),
        members: e.members.clone(),
        origin: e
            .origin
            .as_ref()
            .map(|(op, ins)| (*op, ins.iter().map(|i| unscoped(i).to_string()).collect())),
    }
}

/// Marks a set a job named itself (on the launcher: `--pset`) in its registered name:
/// `ibdyn://jobJ/named/NAME`, so two jobs may name different sets alike.
const NAMED: &str = "/named/";

/// The name a job knows a registered set by.
fn unscoped(key: &str) -> &str {
    match key.split_once(NAMED) {
        Some((job, name)) if job.starts_with("ibdyn://job") => name,
        _ => key,
    }
}

impl Default for PsetRegistry {
    fn default() -> Self {
        let max_procs = std::env::var("IBDYN_MAX_PROCS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_MAX_PROCS);
        let mut r = PsetRegistry::new(max_procs);
        if let Some(ms) = std::env::var("IBDYN_RETIRE_LIMIT_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            r.retire_limit = Duration::from_millis(ms);
        }
        r
    }
}

impl PsetRegistry {
    pub(crate) fn new(max_procs: u32) -> PsetRegistry {
        PsetRegistry {
            sets: BTreeMap::new(),
            changes: BTreeMap::new(),
            open: HashMap::new(),
            next_op: 1,
            world_of: HashMap::new(),
            main_of: HashMap::new(),
            lineage: HashMap::new(),
            exited: HashMap::new(),
            max_procs,
            retire_limit: RETIRE_LIMIT,
            held: Default::default(),
        }
    }

    fn world_name(&mut self, job: u32, c: &Caller) -> Result<String, String> {
        if let Some(n) = self.world_of.get(&job) {
            return Ok(n.clone());
        }
        let size = (c.job_size)(job).ok_or_else(|| format!("no job {job} in this daemon set"))?;
        let name = format!("ibdyn://job{job}/world");
        self.sets.insert(
            name.clone(),
            SetEntry {
                members: (0..size).map(|r| (job, r)).collect(),
                origin: None,
                data: BTreeMap::new(),
            },
        );
        self.world_of.insert(job, name.clone());
        Ok(name)
    }

    /// The registered name of a set named by a caller (`mpi://SELF` is registered as a set
    /// of one under a name of its own).
    fn resolve(&mut self, s: &SetRef, c: &Caller) -> Result<String, String> {
        match s.name.as_str() {
            "mpi://WORLD" => self.world_name(c.who.0, c),
            "mpi://SELF" => {
                let name = format!("ibdyn://job{}/rank{}", c.who.0, c.who.1);
                self.sets.entry(name.clone()).or_insert_with(|| SetEntry {
                    members: vec![c.who],
                    origin: None,
                    data: BTreeMap::new(),
                });
                Ok(name)
            }
            // A set the caller's job named (sent with its members): kept per job.
            n if s.members.is_some() || !self.sets.contains_key(n) => {
                let root = *self.lineage.get(&c.who.0).unwrap_or(&c.who.0);
                let key = format!("ibdyn://job{root}{NAMED}{n}");
                match (&s.members, self.sets.contains_key(&key)) {
                    (_, true) => Ok(key),
                    (Some(m), false) => {
                        self.sets.insert(
                            key.clone(),
                            SetEntry {
                                members: m.clone(),
                                origin: None,
                                data: BTreeMap::new(),
                            },
                        );
                        Ok(key)
                    }
                    (None, false) => Err(format!(
                        "unknown process set {n} (not predefined and not made by any op)"
                    )),
                }
            }
            n => Ok(n.to_string()),
        }
    }

    fn add_set(&mut self, name: String, members: Vec<Member>, op: PsetOp, ins: &[String]) {
        self.sets.insert(
            name,
            SetEntry {
                members,
                origin: Some((op, ins.to_vec())),
                data: BTreeMap::new(),
            },
        );
    }

    fn members(&self, name: &str) -> Vec<Member> {
        self.sets
            .get(name)
            .map(|e| e.members.clone())
            .unwrap_or_default()
    }

    fn describe(&self, name: &str) -> PsetDesc {
        match self.sets.get(name) {
            Some(e) => desc(name, e),
            None => PsetDesc {
                name: name.to_string(),
                members: vec![],
                origin: None,
            },
        }
    }

    /// Serves one request; `actions` gets what the daemon must do.
    pub(crate) fn request(
        &mut self,
        req: &PsetRequest,
        c: &Caller,
        actions: &mut Vec<Action>,
    ) -> Reply {
        match req {
            PsetRequest::Op { op, inputs, n } => self.op(*op, inputs, *n, c, actions),
            PsetRequest::Lookup { set } => {
                let name = self.resolve(set, c)?;
                Ok(PsetReply::Set(self.describe(&name)))
            }
            PsetRequest::Query { set } => self.query(set, c),
            PsetRequest::Jobs => Err("the daemon answers the list of jobs itself".into()),
            PsetRequest::Resize { job, op, n, set } => {
                let main = self.main_set(*job, c)?;
                let mut inputs = vec![SetRef::named(&main)];
                inputs.extend(set.iter().map(|s| SetRef::named(s)));
                self.op(*op, &inputs, *n, c, actions)
            }
            PsetRequest::Finalize { set } => self.finalize(set, c),
            PsetRequest::SetData { set, kv } => {
                let name = self.resolve(set, c)?;
                if let Some(e) = self.sets.get_mut(&name) {
                    e.data.extend(kv.iter().cloned());
                }
                Ok(PsetReply::Done)
            }
            PsetRequest::GetData { set, keys, .. } => {
                let name = self.resolve(set, c)?;
                let e = &self.sets[&name];
                let found: Vec<(String, String)> = keys
                    .iter()
                    .filter_map(|k| e.data.get(k).map(|v| (k.clone(), v.clone())))
                    .collect();
                if found.len() < keys.len() {
                    // The set's members, and those of the set it is the delta of (the two
                    // sides of an integrate).
                    let mut members = e.members.clone();
                    if let Some(ch) = self.changes.values().find(|c| c.delta == name) {
                        members.extend(self.members(&ch.input));
                    }
                    if let Some(&(j, r)) =
                        members.iter().find(|m| self.exited.get(m) == Some(&false))
                    {
                        return Err(format!(
                            "rank {r} of job {j}, a member of {name}, died before the set's \
                             data was complete"
                        ));
                    }
                }
                Ok(PsetReply::Data(found))
            }
        }
    }

    /// The main sets of the launcher's jobs `jobs`.
    pub(crate) fn main_sets(&mut self, jobs: &[u32], c: &Caller) -> Reply {
        let mut out = Vec::new();
        for &j in jobs {
            let name = self.main_set(j, c)?;
            out.push(self.describe(&name));
        }
        Ok(PsetReply::Made(out))
    }

    /// The main set of the launcher's job `job`: its world until a change is finalized,
    /// then the change's new set.
    fn main_set(&mut self, job: u32, c: &Caller) -> Result<String, String> {
        let root = *self.lineage.get(&job).unwrap_or(&job);
        match self.main_of.get(&root) {
            Some(m) => Ok(m.clone()),
            None => {
                let w = self.world_name(root, c)?;
                self.main_of.insert(root, w.clone());
                Ok(w)
            }
        }
    }

    fn op(
        &mut self,
        op: PsetOp,
        inputs: &[SetRef],
        n: u32,
        c: &Caller,
        actions: &mut Vec<Action>,
    ) -> Reply {
        if inputs.is_empty() {
            return Err(format!("{} needs at least one input set", op.name()));
        }
        let names = inputs
            .iter()
            .map(|s| self.resolve(s, c))
            .collect::<Result<Vec<_>, _>>()?;
        let id = self.next_op;
        if !op.is_resource_change() {
            self.next_op += 1;
            let first = self.members(&names[0]);
            let rest: Vec<Vec<Member>> = names[1..].iter().map(|n| self.members(n)).collect();
            let out: Vec<Member> = match op {
                PsetOp::Union => {
                    let mut u = first;
                    for m in rest.iter().flatten() {
                        if !u.contains(m) {
                            u.push(*m);
                        }
                    }
                    u
                }
                PsetOp::Difference => first
                    .into_iter()
                    .filter(|m| !rest.iter().any(|r| r.contains(m)))
                    .collect(),
                _ => first
                    .into_iter()
                    .filter(|m| rest.iter().all(|r| r.contains(m)))
                    .collect(),
            };
            let name = format!("ibdyn://op{id}/{}", op.name());
            self.add_set(name.clone(), out, op, &names);
            return Ok(PsetReply::Made(vec![self.describe(&name)]));
        }
        let input = names[0].clone();
        if let Some(busy) = self.open.get(&input) {
            let ch = &self.changes[busy];
            return Err(format!(
                "process set {input} {BUSY} its {} (op {busy}) is still {}; finalize it first",
                ch.op.name(),
                if ch.state == ChangeState::Granted {
                    "starting"
                } else {
                    "pending"
                }
            ));
        }
        let members = self.members(&input);
        let retired: Vec<Member> = if op.retires() {
            let named = names.get(1).map(|s| self.members(s));
            let r = match named {
                Some(set) if n == 0 => {
                    if let Some(m) = set.iter().find(|m| !members.contains(m)) {
                        return Err(format!(
                            "cannot remove job {} rank {} from {input}: not a member",
                            m.0, m.1
                        ));
                    }
                    set
                }
                _ => {
                    if n == 0 {
                        return Err(format!("{} by 0 processes does nothing", op.name()));
                    }
                    if n as usize >= members.len() {
                        return Err(format!(
                            "cannot {} {input} of {} process(es) by {n}: at least one must stay",
                            op.name(),
                            members.len()
                        ));
                    }
                    members[members.len() - n as usize..].to_vec()
                }
            };
            if r.len() >= members.len() {
                return Err(format!(
                    "cannot remove all {} process(es) of {input}",
                    members.len()
                ));
            }
            r
        } else {
            Vec::new()
        };
        let started = if op.starts() {
            let n = if op == PsetOp::Replace {
                retired.len() as u32
            } else {
                n
            };
            if n == 0 {
                return Err(format!("{} by 0 processes does nothing", op.name()));
            }
            if c.live.saturating_add(n) > self.max_procs {
                return Err(format!(
                    "{} of {input} by {n} cancelled: no room ({} processes run, the limit is \
                     {}; raise IBDYN_MAX_PROCS for the daemons)",
                    op.name(),
                    c.live,
                    self.max_procs
                ));
            }
            n
        } else {
            0
        };
        self.next_op += 1;
        let job = if started > 0 {
            let job = (c.new_job)();
            let root = *self.lineage.get(&c.who.0).unwrap_or(&c.who.0);
            let like = members.first().map_or(c.who.0, |m| m.0);
            self.lineage.insert(job, root);
            actions.push(Action::Start {
                change: id,
                job,
                n: started,
                like_job: like,
            });
            Some(job)
        } else {
            None
        };
        let mut delta: Vec<Member> = retired.clone();
        if let Some(job) = job {
            delta.extend((0..started).map(|r| (job, r)));
        }
        let mut main: Vec<Member> = members
            .iter()
            .filter(|m| !retired.contains(m))
            .copied()
            .collect();
        if let Some(job) = job {
            main.extend((0..started).map(|r| (job, r)));
        }
        let dname = format!("ibdyn://op{id}/delta");
        let mname = format!("ibdyn://op{id}/main");
        self.add_set(dname.clone(), delta, op, &names);
        self.add_set(mname.clone(), main, op, &names);
        if let Some(job) = job {
            self.world_of.insert(job, dname.clone());
        }
        self.changes.insert(
            id,
            ChangeEntry {
                op,
                state: if job.is_some() {
                    ChangeState::Granted
                } else {
                    ChangeState::Pending
                },
                input: input.clone(),
                delta: dname.clone(),
                new_main: mname.clone(),
                finalize_by: None,
                note: None,
                cancelled: false,
                reported: false,
            },
        );
        self.open.insert(input, id);
        Ok(PsetReply::Made(vec![
            self.describe(&dname),
            self.describe(&mname),
        ]))
    }

    fn change_of(&self, id: u64) -> Change {
        let ch = &self.changes[&id];
        Change {
            op: ch.op,
            state: ch.state,
            input: ch.input.clone(),
            delta: self.describe(&ch.delta),
            new_main: self.describe(&ch.new_main),
        }
    }

    fn query(&mut self, set: &SetRef, c: &Caller) -> Reply {
        if set.name == "mpi://SELF" {
            let latest = self
                .changes
                .iter()
                .rev()
                .find(|(_, ch)| {
                    !ch.cancelled
                        && ch.state != ChangeState::Finalized
                        && self.members(&ch.delta).contains(&c.who)
                })
                .map(|(id, _)| *id);
            return Ok(PsetReply::Change(latest.map(|id| self.change_of(id))));
        }
        let name = self.resolve(set, c)?;
        if let Some(&id) = self.open.get(&name) {
            return Ok(PsetReply::Change(Some(self.change_of(id))));
        }
        // A set that is the delta of a change: that change, while it is open or just ended.
        let by_delta = self
            .changes
            .iter()
            .rev()
            .find(|(_, ch)| ch.delta == name)
            .map(|(id, ch)| (*id, ch.cancelled, ch.note.clone()));
        match by_delta {
            Some((_, true, note)) => Err(note.unwrap_or_else(|| "the change was cancelled".into())),
            Some((id, false, _)) => Ok(PsetReply::Change(Some(self.change_of(id)))),
            None => Ok(PsetReply::Change(None)),
        }
    }

    fn finalize(&mut self, set: &SetRef, c: &Caller) -> Reply {
        let name = self.resolve(set, c)?;
        let id = match self.open.get(&name) {
            Some(&id) => id,
            None => {
                // The outcome of a change that ended since the last ask, reported once.
                let ended = self
                    .changes
                    .iter_mut()
                    .rev()
                    .find(|(_, ch)| (ch.input == name || ch.delta == name) && !ch.reported);
                return match ended {
                    Some((_, ch)) if ch.state == ChangeState::Finalized => {
                        ch.reported = true;
                        match ch.note.clone() {
                            Some(n) => Err(n),
                            None => Ok(PsetReply::Done),
                        }
                    }
                    _ => Err(format!(
                        "nothing to finalize: {name} has no pending resource change"
                    )),
                };
            }
        };
        let ch = self.changes.get_mut(&id).expect("open change is recorded");
        if ch.state == ChangeState::Granted {
            return Err(format!(
                "the {} of {name} (op {id}) is still starting its processes: wait for it \
                 to be pending",
                ch.op.name()
            ));
        }
        if ch.op.retires() {
            ch.finalize_by
                .get_or_insert(Instant::now() + self.retire_limit);
        }
        self.settle(id, Instant::now(), None);
        let ch = &self.changes[&id];
        if ch.state == ChangeState::Finalized {
            let ch = self.changes.get_mut(&id).expect("recorded");
            ch.reported = true;
            return match ch.note.clone() {
                Some(n) => Err(n),
                None => Ok(PsetReply::Done),
            };
        }
        Ok(PsetReply::Change(Some(self.change_of(id))))
    }

    /// Finalises change `id` once its retired processes are gone, or (only with `kill`, the
    /// timer's call, which carries out the kills) once they overstayed.
    fn settle(&mut self, id: u64, now: Instant, kill: Option<&mut Vec<Action>>) {
        let Some(ch) = self.changes.get(&id) else {
            return;
        };
        if ch.state != ChangeState::Pending {
            return;
        }
        let mut note = None;
        if ch.op.retires() {
            let Some(by) = ch.finalize_by else {
                return;
            };
            let retired: Vec<Member> = self
                .members(&ch.delta)
                .into_iter()
                .filter(|m| self.members(&ch.input).contains(m))
                .collect();
            let staying: Vec<Member> = retired
                .into_iter()
                .filter(|m| !self.exited.contains_key(m))
                .collect();
            if !staying.is_empty() {
                let Some(actions) = kill.filter(|_| now >= by) else {
                    return;
                };
                let list: Vec<String> = staying
                    .iter()
                    .map(|(j, r)| format!("job {j} rank {r}"))
                    .collect();
                note = Some(format!(
                    "retired process(es) {} of {} did not finalize and exit within {:.1} s: \
                     killed; the change is finalized",
                    list.join(", "),
                    ch.delta,
                    self.retire_limit.as_secs_f64()
                ));
                actions.extend(staying.into_iter().map(Action::Kill));
            }
        }
        let ch = self.changes.get_mut(&id).expect("recorded");
        ch.state = ChangeState::Finalized;
        ch.note = note;
        let (input, main) = (ch.input.clone(), ch.new_main.clone());
        self.open.remove(&input);
        // The launched jobs whose main set this was move on to the new one.
        let roots: Vec<u32> = self
            .world_of
            .keys()
            .filter(|j| !self.lineage.contains_key(j))
            .copied()
            .collect();
        for r in roots {
            let current = self.main_of.get(&r).or_else(|| self.world_of.get(&r));
            if current == Some(&input) {
                self.main_of.insert(r, main.clone());
            }
        }
    }

    /// The processes of change `id` started (Ok) or could not (Err: why, per node).
    pub(crate) fn started(&mut self, id: u64, outcome: Result<(), String>) {
        let Some(ch) = self.changes.get_mut(&id) else {
            return;
        };
        match outcome {
            Ok(()) => ch.state = ChangeState::Pending,
            Err(why) => {
                ch.cancelled = true;
                ch.state = ChangeState::Finalized;
                ch.note = Some(format!(
                    "the {} of {} (op {id}) was cancelled: its processes did not start: {why}",
                    ch.op.name(),
                    ch.input
                ));
                let input = ch.input.clone();
                self.open.remove(&input);
            }
        }
    }

    /// A process ended (`clean`: after finalising, with status 0).
    pub(crate) fn exited(&mut self, who: Member, clean: bool) {
        self.exited.insert(who, clean);
        let waiting: Vec<u64> = self
            .changes
            .iter()
            .filter(|(_, c)| c.finalize_by.is_some() && c.state == ChangeState::Pending)
            .map(|(id, _)| *id)
            .collect();
        for id in waiting {
            self.settle(id, Instant::now(), None);
        }
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.changes
            .values()
            .filter(|c| c.state == ChangeState::Pending)
            .filter_map(|c| c.finalize_by)
            .chain(self.held.next_deadline())
            .min()
    }

    /// How long `req` may be held when `reply` is its answer so far (None: final).
    pub(crate) fn hold_bound(&self, req: &PsetRequest, reply: &Reply) -> Option<Duration> {
        super::held::bound(req, reply, self.retire_limit)
    }

    pub(crate) fn hold(&mut self, h: super::held::Held) {
        self.held.hold(h);
    }

    pub(crate) fn take_held(&mut self) -> Vec<super::held::Held> {
        self.held.take()
    }

    pub(crate) fn on_timer(&mut self, now: Instant) -> Vec<Action> {
        let mut actions = Vec::new();
        let due: Vec<u64> = self
            .changes
            .iter()
            .filter(|(_, c)| {
                c.state == ChangeState::Pending && c.finalize_by.is_some_and(|t| t <= now)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            self.settle(id, now, Some(&mut actions));
        }
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(job_size: &dyn Fn(u32) -> Option<u32>, who: Member) -> Caller<'_> {
        Caller {
            who,
            job_size,
            live: 4,
            new_job: &|| 77,
        }
    }

    fn made(r: Reply) -> Vec<PsetDesc> {
        match r {
            Ok(PsetReply::Made(v)) => v,
            other => panic!("expected sets, got {other:?}"),
        }
    }

    fn op(op: PsetOp, ins: &[&str], n: u32) -> PsetRequest {
        PsetRequest::Op {
            op,
            inputs: ins.iter().map(|s| SetRef::named(s)).collect(),
            n,
        }
    }

    #[test]
    fn set_algebra_remembers_its_origin() {
        let sizes = |j: u32| (j == 1).then_some(4);
        let c = caller(&sizes, (1, 0));
        let mut reg = PsetRegistry::new(64);
        let mut acts = Vec::new();
        let even = SetRef {
            name: "app://even".into(),
            members: Some(vec![(1, 0), (1, 2)]),
        };
        let req = PsetRequest::Op {
            op: PsetOp::Difference,
            inputs: vec![SetRef::named("mpi://WORLD"), even.clone()],
            n: 0,
        };
        let odd = made(reg.request(&req, &c, &mut acts)).remove(0);
        assert_eq!(odd.members, vec![(1, 1), (1, 3)]);
        assert_eq!(
            odd.origin,
            Some((
                PsetOp::Difference,
                vec!["ibdyn://job1/world".into(), "app://even".into()]
            ))
        );
        let u = made(reg.request(
            &op(PsetOp::Union, &[&odd.name, "app://even"], 0),
            &c,
            &mut acts,
        ));
        assert_eq!(u[0].members, vec![(1, 1), (1, 3), (1, 0), (1, 2)]);
        let i = made(reg.request(
            &op(PsetOp::Intersection, &["mpi://WORLD", &odd.name], 0),
            &c,
            &mut acts,
        ));
        assert_eq!(i[0].members, vec![(1, 1), (1, 3)]);
        assert!(acts.is_empty());
        let e = reg
            .request(&op(PsetOp::Union, &["app://nope"], 0), &c, &mut acts)
            .unwrap_err();
        assert!(e.contains("unknown process set app://nope"), "{e}");
    }

    #[test]
    fn sets_jobs_named_alike_stay_apart() {
        let sizes = |j: u32| (j == 1 || j == 2).then_some(4);
        let mut reg = PsetRegistry::new(64);
        let mut acts = Vec::new();
        let x = |job: u32, ranks: &[u32]| SetRef {
            name: "app://x".into(),
            members: Some(ranks.iter().map(|&r| (job, r)).collect()),
        };
        for (job, ranks) in [(1, vec![0, 2]), (2, vec![1, 3])] {
            let c = caller(&sizes, (job, 0));
            let req = PsetRequest::Op {
                op: PsetOp::Union,
                inputs: vec![x(job, &ranks)],
                n: 0,
            };
            let u = made(reg.request(&req, &c, &mut acts)).remove(0);
            let want: Vec<Member> = ranks.iter().map(|&r| (job, r)).collect();
            assert_eq!(u.members, want, "job {job}");
            assert_eq!(u.origin, Some((PsetOp::Union, vec!["app://x".into()])));
            // Named again without members: still the job's own set.
            let look = PsetRequest::Lookup {
                set: SetRef::named("app://x"),
            };
            match reg.request(&look, &c, &mut acts) {
                Ok(PsetReply::Set(d)) => {
                    assert_eq!((d.name.as_str(), d.members), ("app://x", want))
                }
                other => panic!("job {job}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_shrink_finalizes_after_the_retired_exit_and_refuses_what_it_must() {
        let sizes = |j: u32| (j == 1).then_some(4);
        let c = caller(&sizes, (1, 0));
        let mut reg = PsetRegistry::new(64);
        let mut acts = Vec::new();
        let e = reg
            .request(&op(PsetOp::Shrink, &["mpi://WORLD"], 4), &c, &mut acts)
            .unwrap_err();
        assert!(e.contains("at least one must stay"), "{e}");
        let e = reg
            .request(
                &PsetRequest::Finalize {
                    set: SetRef::named("mpi://WORLD"),
                },
                &c,
                &mut acts,
            )
            .unwrap_err();
        assert!(e.contains("nothing to finalize"), "{e}");
        let sets = made(reg.request(&op(PsetOp::Shrink, &["mpi://WORLD"], 2), &c, &mut acts));
        assert_eq!(sets[0].members, vec![(1, 2), (1, 3)]);
        assert_eq!(sets[1].members, vec![(1, 0), (1, 1)]);
        let e = reg
            .request(&op(PsetOp::Shrink, &["mpi://WORLD"], 1), &c, &mut acts)
            .unwrap_err();
        assert!(e.contains("busy"), "{e}");
        // A retired process sees the change through mpi://SELF.
        let r3 = caller(&sizes, (1, 3));
        match reg.request(
            &PsetRequest::Query {
                set: SetRef::named("mpi://SELF"),
            },
            &r3,
            &mut acts,
        ) {
            Ok(PsetReply::Change(Some(ch))) => assert_eq!(ch.state, ChangeState::Pending),
            other => panic!("{other:?}"),
        }
        let fin = PsetRequest::Finalize {
            set: SetRef::named("mpi://WORLD"),
        };
        assert!(matches!(
            reg.request(&fin, &c, &mut acts),
            Ok(PsetReply::Change(Some(_)))
        ));
        reg.exited((1, 2), true);
        reg.exited((1, 3), true);
        assert_eq!(reg.request(&fin, &c, &mut acts), Ok(PsetReply::Done));
        // The job's main set (what `ibdyn resize` targets) follows the finalized change.
        assert_eq!(reg.main_set(1, &c).unwrap(), "ibdyn://op1/main");
    }

    #[test]
    fn an_overstaying_retired_process_is_killed_and_named() {
        let sizes = |j: u32| (j == 1).then_some(3);
        let c = caller(&sizes, (1, 0));
        let mut reg = PsetRegistry::new(64);
        reg.retire_limit = Duration::from_millis(200);
        let mut acts = Vec::new();
        assert_eq!(reg.main_set(1, &c).unwrap(), "ibdyn://job1/world");
        made(reg.request(
            &op(PsetOp::Shrink, &["ibdyn://job1/world"], 1),
            &c,
            &mut acts,
        ));
        let fin = PsetRequest::Finalize {
            set: SetRef::named("mpi://WORLD"),
        };
        reg.request(&fin, &c, &mut acts).unwrap();
        assert!(reg.on_timer(Instant::now()).is_empty());
        let late = reg.next_deadline().unwrap() + Duration::from_millis(1);
        // Forced race: past the deadline, an exit or a finalize poll comes before the timer;
        // only the timer, which carries out the kill, may end the change.
        while Instant::now() < late {
            std::thread::sleep(Duration::from_millis(50));
        }
        reg.exited((1, 1), true);
        assert!(matches!(
            reg.request(&fin, &c, &mut acts),
            Ok(PsetReply::Change(Some(_)))
        ));
        assert_eq!(reg.on_timer(late), vec![Action::Kill((1, 2))]);
        let e = reg.request(&fin, &c, &mut acts).unwrap_err();
        assert!(e.contains("job 1 rank 2") && e.contains("killed"), "{e}");
        assert_eq!(reg.main_set(1, &c).unwrap(), "ibdyn://op1/main");
    }

    #[test]
    fn a_grow_starts_processes_and_can_be_cancelled() {
        let sizes = |j: u32| (j == 1).then_some(2);
        let c = caller(&sizes, (1, 0));
        let mut reg = PsetRegistry::new(6);
        let mut acts = Vec::new();
        let e = reg
            .request(&op(PsetOp::Grow, &["mpi://WORLD"], 3), &c, &mut acts)
            .unwrap_err();
        assert!(
            e.contains("no room") && e.contains("IBDYN_MAX_PROCS"),
            "{e}"
        );
        let sets = made(reg.request(&op(PsetOp::Grow, &["mpi://WORLD"], 2), &c, &mut acts));
        let [Action::Start {
            change,
            job,
            n: 2,
            like_job: 1,
        }] = acts[..]
        else {
            panic!("{acts:?}");
        };
        assert_eq!(sets[0].members, vec![(job, 0), (job, 1)]);
        assert_eq!(sets[1].members, vec![(1, 0), (1, 1), (job, 0), (job, 1)]);
        // The new processes' world is the delta.
        let newbie = caller(&sizes, (job, 1));
        let look = PsetRequest::Lookup {
            set: SetRef::named("mpi://WORLD"),
        };
        match reg.request(&look, &newbie, &mut acts) {
            Ok(PsetReply::Set(d)) => assert_eq!(d.name, sets[0].name),
            other => panic!("{other:?}"),
        }
        let fin = PsetRequest::Finalize {
            set: SetRef::named("mpi://WORLD"),
        };
        assert!(reg
            .request(&fin, &c, &mut acts)
            .unwrap_err()
            .contains("still starting"));
        reg.started(change, Ok(()));
        assert_eq!(reg.request(&fin, &c, &mut acts), Ok(PsetReply::Done));
        // A failed start cancels the next grow, with the reason.
        acts.clear();
        made(reg.request(&op(PsetOp::Grow, &[&sets[1].name], 1), &c, &mut acts));
        let [Action::Start { change, .. }] = acts[..] else {
            panic!("{acts:?}");
        };
        reg.started(change, Err("rank 0 on node 1: No such file".into()));
        let q = PsetRequest::Query {
            set: SetRef::named(&format!("ibdyn://op{change}/delta")),
        };
        let e = reg.request(&q, &c, &mut acts).unwrap_err();
        assert!(e.contains("cancelled") && e.contains("No such file"), "{e}");
    }

    #[test]
    fn a_replace_retires_and_starts_as_many() {
        let sizes = |j: u32| (j == 1).then_some(3);
        let c = caller(&sizes, (1, 0));
        let mut reg = PsetRegistry::new(64);
        let mut acts = Vec::new();
        let sets = made(reg.request(&op(PsetOp::Replace, &["mpi://WORLD"], 1), &c, &mut acts));
        let [Action::Start {
            change, job, n: 1, ..
        }] = acts[..]
        else {
            panic!("{acts:?}");
        };
        assert_eq!(sets[0].members, vec![(1, 2), (job, 0)]);
        assert_eq!(sets[1].members, vec![(1, 0), (1, 1), (job, 0)]);
        reg.started(change, Ok(()));
        let fin = PsetRequest::Finalize {
            set: SetRef::named("mpi://WORLD"),
        };
        assert!(matches!(
            reg.request(&fin, &c, &mut acts),
            Ok(PsetReply::Change(Some(_)))
        ));
        reg.exited((1, 2), true);
        assert_eq!(reg.request(&fin, &c, &mut acts), Ok(PsetReply::Done));
    }

    #[test]
    fn data_waits_are_refused_once_a_member_died() {
        let sizes = |j: u32| (j == 1).then_some(2);
        let c = caller(&sizes, (1, 0));
        let mut reg = PsetRegistry::new(6);
        let mut acts = Vec::new();
        let w = SetRef::named("mpi://WORLD");
        let set = PsetRequest::SetData {
            set: w.clone(),
            kv: vec![("a".into(), "1".into())],
        };
        assert_eq!(reg.request(&set, &c, &mut acts), Ok(PsetReply::Done));
        let get = PsetRequest::GetData {
            set: w,
            keys: vec!["a".into(), "b".into()],
            wait_ms: 0,
        };
        assert_eq!(
            reg.request(&get, &c, &mut acts),
            Ok(PsetReply::Data(vec![("a".into(), "1".into())]))
        );
        reg.exited((1, 1), false);
        let e = reg.request(&get, &c, &mut acts).unwrap_err();
        assert!(
            e.contains("rank 1 of job 1") && e.contains("ibdyn://job1/world"),
            "{e}"
        );
    }
}
