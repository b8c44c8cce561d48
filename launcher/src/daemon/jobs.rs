//! Jobs across the daemon set. The root (daemon 0) owns job ids, placement (fewest live
//! processes first), the assembly of spawn replies and the record of every rank's end; the
//! other daemons start their share of a job and report back up the tree.
//!
//! Messages (`protocol::tree`): a rank's spawn goes up to the root (`Up::Spawn`), the new job
//! down to every daemon (`Down::Start`), exec results up (`Up::Started`), the answer to the
//! requester; a spawn failed in part is killed (`Down::KillJob`); a rank's end goes up
//! (`Up::Exited`) and, once every rank ended, the job's state goes everywhere
//! (`Down::JobDone`). To the launcher, every daemon announces the job when it learns it,
//! before anything else about the job (see `protocol::report`).

use super::ranks::{App, Job, JobSpec};
use super::{ConnId, Daemon};
use crate::protocol::{
    Answer, Down, EncodedRequest, JobAnnounce, JobEnv, RankEnd, Report, SpawnAnswer, Start,
    StartResult, Submission, Up,
};
use ibdyn_pmi::jobs::{encode_children, encode_exits, kvsname_of, ChildStart, RankExit};
use ibdyn_pmi::mapping::PROCESS_MAPPING_KEY;
use ibdyn_pmi::wire::{hex_decode, hex_encode, msg_token, Command};
use ibdyn_pmi::{SpawnCommand, SpawnRequest};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// How many finished jobs the root remembers for `job_status`.
const FINISHED_KEPT: usize = 1024;

/// Who gets the answer of a spawn.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Requester {
    Local(ConnId),
    Remote {
        origin: u32,
        id: u64,
    },
    Launcher {
        id: u64,
    },
    /// The processes of a resource change of the process-set registry.
    Pset {
        change: u64,
    },
}

pub(crate) struct JobRecord {
    size: u32,
    /// The launcher request this job descends from (`report::JobAnnounce::owner`).
    owner: u64,
    node_of: Vec<u32>,
    exited: BTreeMap<u32, RankExit>,
}

impl JobRecord {
    pub(crate) fn size(&self) -> u32 {
        self.size
    }
}

/// How long the root waits for every daemon's exec report of a spawn.
const START_REPORT_LIMIT: Duration = Duration::from_secs(60);
/// Pre-put values (hex) up to this size travel in the children's environment as well.
const PREPUT_ENV_LIMIT: usize = 16 * 1024;

pub(crate) struct PendingSpawn {
    pub(crate) deadline: Instant,
    requester: Requester,
    waiting: BTreeSet<u32>,
    children: Vec<ChildStart>,
}

/// The root's bookkeeping.
#[derive(Default)]
pub(crate) struct Registry {
    /// The job's host names by daemon index (the `host` info key names one).
    pub(crate) host_names: Vec<String>,
    pub(crate) records: BTreeMap<u32, JobRecord>,
    pub(crate) finished: VecDeque<u32>,
    pub(crate) pending: BTreeMap<u32, PendingSpawn>,
    /// Live processes per daemon, every job counted.
    pub(crate) load: Vec<u32>,
    /// Dynamic process sets and resource changes.
    pub(crate) psets: crate::psets::PsetRegistry,
    /// Daemons that keep copies of a command (`ibdyn_prestart`), by program and arguments:
    /// later spawns of it go there first.
    pub(crate) warm_nodes: HashMap<(String, Vec<String>), BTreeSet<u32>>,
}

/// The copies a command asks its daemons to keep (`ibdyn_prestart`), if it asks.
fn prestart_count(c: &SpawnCommand) -> Option<u32> {
    let (_, v) = c.info.iter().rev().find(|(k, _)| k == "ibdyn_prestart")?;
    super::prestart::parse_count(v).map(|n| n as u32)
}

/// How a new job is made, beyond its request.
#[derive(Default)]
pub(crate) struct NewJob {
    /// The daemon of every rank (least-loaded placement when None).
    pub(crate) nodes: Option<Vec<u32>>,
    /// The job id to use (a fresh one when None).
    pub(crate) jobid: Option<u32>,
    pub(crate) stdin: bool,
    pub(crate) adopt: bool,
    /// The ranks' environment (a spawned job inherits its parent's).
    pub(crate) env: Option<JobEnv>,
}

/// The daemon a command is forced onto by `host` / `ibdyn_node`, if any.
fn forced_node(c: &SpawnCommand, nnodes: u32, hosts: &[String]) -> Result<Option<u32>, String> {
    for (k, v) in &c.info {
        if let Some(i) = hosts.iter().position(|h| k == "host" && h == v) {
            return Ok(Some(i as u32));
        }
        if k == "host" || k == "ibdyn_node" {
            let n: u32 = v.trim_start_matches("node").parse().map_err(|_| {
                format!("info key {k} ({v}): not a host of the job nor a node daemon index")
            })?;
            if n >= nnodes {
                return Err(format!(
                    "info key {k} ({v}): there are only {nnodes} node daemons (0..{})",
                    nnodes - 1
                ));
            }
            return Ok(Some(n));
        }
    }
    Ok(None)
}

/// The info keys that give a command the environment entries `env` (the inverse of `app_of`'s
/// `env`, `env_hex` and `ibdyn_*` keys).
pub(crate) fn info_of_env(env: &[(String, String)]) -> Vec<(String, String)> {
    env.iter()
        .map(|(k, v)| match k.strip_prefix(ibdyn_pmi::env::INFO_PREFIX) {
            Some(rest) => (format!("ibdyn_{}", rest.to_lowercase()), v.clone()),
            None => (
                "env_hex".into(),
                format!("{k}={}", hex_encode(v.as_bytes())),
            ),
        })
        .collect()
}

/// The environment and working directory a command's info keys ask for.
fn app_of(c: &SpawnCommand, appnum: i32) -> App {
    let mut env = Vec::new();
    let mut wdir = None;
    let mut bind = Default::default();
    let mut report_bindings = false;
    for (k, v) in &c.info {
        match k.as_str() {
            "wdir" => wdir = Some(v.clone()),
            "ibdyn_bind" => match crate::placement::Binding::from_info(v) {
                Some(b) => bind = b,
                None => tracing::warn!(
                    "info ibdyn_bind={v}: not none, core, hwthread or socket (with :N)"
                ),
            },
            "ibdyn_report_bindings" => report_bindings = true,
            "wdir_hex" => match hex_decode(v) {
                Ok(b) => wdir = Some(String::from_utf8_lossy(&b).into()),
                Err(e) => tracing::warn!("info wdir_hex={v}: {e}"),
            },
            "env" => {
                if let Some((name, val)) = v.split_once('=') {
                    env.push((name.to_string(), val.to_string()));
                }
            }
            // For values with whitespace (not allowed in PMI values): `KEY=<hex of value>`.
            "env_hex" => {
                if let Some((name, hex)) = v.split_once('=') {
                    match hex_decode(hex) {
                        Ok(b) => env.push((name.to_string(), String::from_utf8_lossy(&b).into())),
                        Err(e) => tracing::warn!("info env_hex={v}: {e}"),
                    }
                }
            }
            _ => {
                if let Some(rest) = k.strip_prefix("ibdyn_") {
                    env.push((
                        format!("{}{}", ibdyn_pmi::env::INFO_PREFIX, rest.to_uppercase()),
                        v.clone(),
                    ));
                }
            }
        }
    }
    App {
        program: c.program.clone(),
        args: c.args.clone(),
        nprocs: c.nprocs,
        appnum,
        wdir,
        env,
        bind,
        report_bindings,
    }
}

/// The PMI `spawn_result` of a spawn to the rank that asked.
pub(crate) fn spawn_reply(outcome: &SpawnAnswer) -> Command {
    match outcome {
        Ok((job, size, children)) => {
            let ok = children.iter().all(ChildStart::started);
            let mut c = Command::new("spawn_result")
                .arg("rc", if ok { 0 } else { -1 })
                .arg("jobid", job)
                .arg("kvsname", kvsname_of(*job))
                .arg("size", size)
                .arg("children", encode_children(children));
            if !ok {
                c = c.arg("msg", "some_processes_could_not_start");
            }
            c
        }
        Err(m) => Command::new("spawn_result")
            .arg("rc", -1)
            .arg("msg", msg_token(m)),
    }
}

/// The PMI `job_status_result` to the rank that asked.
pub(crate) fn status_reply(status: &Result<(u32, Vec<RankExit>), String>) -> Command {
    match status {
        Ok((size, exits)) => Command::new("job_status_result")
            .arg("rc", 0)
            .arg("size", size)
            .arg("exited", encode_exits(exits)),
        Err(m) => Command::new("job_status_result")
            .arg("rc", -1)
            .arg("msg", msg_token(m)),
    }
}

impl Daemon {
    /// A complete spawn request from a local rank.
    pub(crate) fn request_spawn(&mut self, conn: ConnId, req: SpawnRequest) {
        let parent = self.clients.get(&conn).and_then(|c| c.who).map(|(j, _)| j);
        if self.is_root() {
            self.root_spawn(req, parent, Requester::Local(conn), NewJob::default());
            return;
        }
        let req = match EncodedRequest::new(&req) {
            Ok(r) => r,
            Err(e) => {
                self.reply(conn, spawn_reply(&Err(e.to_string())));
                return;
            }
        };
        let id = self.next_forward;
        self.next_forward += 1;
        self.forwarded
            .insert(id, super::kvs::Forwarded::Spawn { conn });
        self.send_up(&Up::Spawn {
            origin: self.me,
            id,
            req,
            parent,
        });
    }

    fn new_job_id(&self) -> u32 {
        loop {
            let id = crate::secret::random_u64().map_or(1, |r| r as u32 & 0x7fff_ffff);
            if id != 0 && !self.registry.records.contains_key(&id) {
                return id;
            }
        }
    }

    /// Least-loaded placement, commands with `host` forced where they ask; a command that
    /// keeps prestarted copies goes first to the daemons that have them (as many ranks on
    /// each as it keeps copies there).
    fn place(&mut self, req: &SpawnRequest) -> Result<Vec<u32>, String> {
        let mut load = self.registry.load.clone();
        let mut nodes = Vec::new();
        for c in &req.commands {
            let forced = forced_node(c, self.nnodes, &self.registry.host_names)?;
            // Only a command that keeps copies is looked up (and remembered).
            let keep = prestart_count(c).filter(|&k| k > 0);
            let key = keep.map(|_| (c.program.clone(), c.args.clone()));
            let warm = key.as_ref().and_then(|k| self.registry.warm_nodes.get(k));
            let mut here: HashMap<u32, u32> = HashMap::new();
            for _ in 0..c.nprocs {
                let n = forced.unwrap_or_else(|| {
                    let with_copy = warm.and_then(|w| {
                        w.iter()
                            .copied()
                            .filter(|d| here.get(d).copied().unwrap_or(0) < keep.unwrap_or(0))
                            .min_by_key(|&d| (load[d as usize], d))
                    });
                    with_copy.unwrap_or_else(|| {
                        (0..self.nnodes)
                            .min_by_key(|&d| (load[d as usize], d))
                            .unwrap_or(0)
                    })
                });
                load[n as usize] += 1;
                *here.entry(n).or_default() += 1;
                nodes.push(n);
            }
            if let Some(key) = key {
                self.registry
                    .warm_nodes
                    .entry(key)
                    .or_default()
                    .extend(here.keys());
            }
        }
        Ok(nodes)
    }

    /// Root: creates a job from `req` and has every daemon start its share.
    pub(crate) fn root_spawn(
        &mut self,
        mut req: SpawnRequest,
        parent: Option<u32>,
        requester: Requester,
        new: NewJob,
    ) {
        let parent_spec = parent.and_then(|p| self.jobs.get(&p)).map(|j| &j.spec);
        if let Some(p) = parent_spec {
            super::inherit::add_inherited(&mut req, &super::inherit::inherited_info(&p.apps));
        }
        let env = new.env.or_else(|| parent_spec.and_then(|p| p.env.clone()));
        let size: u32 = req.commands.iter().map(|c| c.nprocs).sum();
        let prepared = (|| {
            if req.commands.is_empty() || size == 0 {
                return Err("a spawn needs at least one process".to_string());
            }
            let nodes = match new.nodes {
                Some(n) if n.len() == size as usize => n,
                Some(_) => return Err("placement does not match the job size".into()),
                None => self.place(&req)?,
            };
            let encoded = EncodedRequest::new(&req).map_err(|e| e.to_string())?;
            Ok((nodes, encoded))
        })();
        let (nodes, encoded) = match prepared {
            Ok(p) => p,
            Err(m) => return self.answer_spawn(requester, Err(m)),
        };
        let job = new.jobid.unwrap_or_else(|| self.new_job_id());
        let owner = match requester {
            Requester::Launcher { id } => id,
            _ => parent
                .and_then(|p| self.registry.records.get(&p))
                .map_or(0, |r| r.owner),
        };
        for &n in &nodes {
            self.registry.load[n as usize] += 1;
        }
        self.registry.records.insert(
            job,
            JobRecord {
                size,
                owner,
                node_of: nodes.clone(),
                exited: BTreeMap::new(),
            },
        );
        let waiting: BTreeSet<u32> = nodes.iter().copied().collect();
        self.registry.pending.insert(
            job,
            PendingSpawn {
                deadline: Instant::now() + START_REPORT_LIMIT,
                requester,
                waiting,
                children: (0..size)
                    .map(|r| ChildStart {
                        rank: r,
                        node: nodes[r as usize],
                        errno: 0,
                        message: String::new(),
                    })
                    .collect(),
            },
        );
        let start = Start {
            job,
            nodes,
            owner,
            submitted: matches!(requester, Requester::Launcher { .. }),
            req: encoded,
            parent,
            stdin: new.stdin,
            adopt: new.adopt,
            env,
        };
        self.send_children(&Down::Start(Box::new(start.clone())));
        self.on_start(&start);
    }

    /// Any daemon: a new job; start the ranks placed here and report to the root.
    pub(crate) fn on_start(&mut self, start: &Start) {
        let parsed = (|| -> crate::Result<(JobSpec, SpawnRequest)> {
            let req = start.req.request()?;
            let apps = req
                .commands
                .iter()
                .enumerate()
                .map(|(i, c)| app_of(c, i as i32))
                .collect();
            let preput: Vec<&(String, String)> = req
                .preput
                .iter()
                .filter(|(k, _)| !k.contains(','))
                .collect();
            let values: Vec<String> = preput
                .iter()
                .map(|(_, v)| hex_encode(v.as_bytes()))
                .collect();
            let spec = JobSpec {
                jobid: start.job,
                kvsname: kvsname_of(start.job),
                size: start.nodes.len() as u32,
                apps,
                node_of: start.nodes.clone(),
                parent: start.parent,
                stdin: start.stdin,
                session_dir: self.session_dir.clone(),
                pmi_sock: self.pmi_sock.clone(),
                preput_keys: preput
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                preput_values: (values.iter().map(String::len).sum::<usize>() <= PREPUT_ENV_LIMIT)
                    .then(|| values.join(",")),
                env: start.env.clone(),
            };
            let store = self.dir.kvs(&spec.kvsname);
            store.learn(PROCESS_MAPPING_KEY, &spec.mapping().format());
            store.learn("PMI_universe_size", &spec.size.to_string());
            store.learn("PMI_appnum", "0");
            // MPICH's client reads the failed processes from here (none known: empty).
            store.learn("PMI_dead_processes", "");
            for (k, v) in &req.preput {
                store.learn(k, v);
            }
            Ok((spec, req))
        })();
        let (spec, req) = match parsed {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("daemon {}: bad job {}: {e}", self.me, start.job);
                return;
            }
        };
        if self.is_root() {
            for (k, v) in &req.preput {
                self.wake_key_waiters(&spec.kvsname, k, v);
            }
        }
        let job = spec.jobid;
        let mine = spec.ranks_on(self.me);
        self.jobs
            .insert(job, Job::new(spec.clone(), self.me, self.nnodes));
        // Before any output or end of its ranks, and before its spawn reply passes through
        // here, on this daemon's link to the launcher.
        self.to_launcher(Report::Job(JobAnnounce {
            job,
            size: spec.size,
            owner: start.owner,
            submitted: start.submitted,
        }));
        if mine.is_empty() {
            return;
        }
        let results = if start.adopt {
            if let Some(j) = self.jobs.get_mut(&job) {
                j.ranks.entry(0).or_default().adopted = true;
            }
            vec![StartResult {
                rank: 0,
                errno: 0,
                message: String::new(),
            }]
        } else {
            if spec.stdin {
                self.initial_job = Some(job);
            }
            self.start_ranks(&spec)
        };
        if self.is_root() {
            self.on_started(job, self.me, results);
        } else {
            self.send_up(&Up::Started {
                job,
                node: self.me,
                results,
            });
        }
        self.send_assignments();
        self.order_copies();
    }

    /// Root: one daemon's exec results.
    pub(crate) fn on_started(&mut self, job: u32, node: u32, results: Vec<StartResult>) {
        let Some(p) = self.registry.pending.get_mut(&job) else {
            return;
        };
        for r in results {
            if let Some(c) = p.children.get_mut(r.rank as usize) {
                c.errno = r.errno;
                c.message = r.message;
            }
        }
        p.waiting.remove(&node);
        if !p.waiting.is_empty() {
            return;
        }
        let Some(p) = self.registry.pending.remove(&job) else {
            return;
        };
        let size = p.children.len() as u32;
        if !p.children.iter().all(ChildStart::started) {
            self.kill_job_everywhere(job);
            for c in p.children.iter().filter(|c| !c.started()) {
                self.not_started(job, c.rank, c.message.clone());
            }
        }
        self.answer_spawn(p.requester, Ok((job, size, p.children)));
        // Fast children may all have ended before the last daemon's exec report came.
        self.maybe_job_done(job);
    }

    /// Root (or the launcher through it): a job's ranks go, on every daemon.
    pub(crate) fn kill_job_everywhere(&mut self, job: u32) {
        self.send_children(&Down::KillJob(job));
        self.on_kill_job(job);
    }

    /// Root: spawns whose daemons did not all report in time fail (their ranks are killed).
    pub(crate) fn expire_spawns(&mut self, now: Instant) {
        let late: Vec<u32> = self
            .registry
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(j, _)| *j)
            .collect();
        for job in late {
            let Some(p) = self.registry.pending.remove(&job) else {
                continue;
            };
            self.kill_job_everywhere(job);
            let waiting: Vec<String> = p.waiting.iter().map(u32::to_string).collect();
            let msg = format!(
                "node daemon(s) {} did not report the start of job {job} within {} s",
                waiting.join(","),
                START_REPORT_LIMIT.as_secs()
            );
            // Their ranks count as never started, so that the job ends for the launcher and
            // here; a late start is killed by the KillJob behind its Start.
            for c in p.children.iter().filter(|c| p.waiting.contains(&c.node)) {
                self.not_started(job, c.rank, msg.clone());
            }
            self.answer_spawn(p.requester, Err(msg));
        }
    }

    /// Root: rank `rank` of `job` will never run; the launcher and the job record learn it.
    fn not_started(&mut self, job: u32, rank: u32, why: String) {
        self.to_launcher(Report::Exit {
            job,
            rank,
            end: RankEnd::NotStarted,
        });
        self.record_exit(
            job,
            RankExit {
                rank,
                code: None,
                signal: None,
                start_error: Some(why),
            },
        );
    }

    fn answer_spawn(&mut self, requester: Requester, outcome: SpawnAnswer) {
        match requester {
            Requester::Local(conn) => self.reply(conn, spawn_reply(&outcome)),
            Requester::Launcher { id } => self.to_launcher(Report::SpawnResult {
                id,
                outcome: outcome.map(|(job, _, children)| (job, children)),
            }),
            Requester::Pset { change } => {
                self.pset_started(change, outcome.map(|(_, _, children)| children))
            }
            Requester::Remote { origin, id } => self.send_toward(
                origin,
                Down::Answer {
                    origin,
                    id,
                    answer: Answer::Spawn(outcome),
                },
            ),
        }
    }

    /// A spawn failed in part, or the launcher asks: the job's ranks here go.
    pub(crate) fn on_kill_job(&mut self, job: u32) {
        if let Some(j) = self.jobs.get_mut(&job) {
            for rs in j.ranks.values_mut() {
                rs.cancelled = true;
            }
        }
        self.end_ranks(libc::SIGKILL, Some(job));
    }

    /// A rank's end travels up to the root.
    pub(crate) fn exited_up(
        &mut self,
        job: u32,
        rank: u32,
        code: Option<i32>,
        signal: Option<i32>,
    ) {
        if self.is_root() {
            self.on_exited_up(job, rank, code, signal);
        } else {
            self.send_up(&Up::Exited {
                job,
                rank,
                code,
                signal,
                node: self.me,
            });
        }
    }

    /// Root: a rank ended (reported by its daemon).
    pub(crate) fn on_exited_up(
        &mut self,
        job: u32,
        rank: u32,
        code: Option<i32>,
        signal: Option<i32>,
    ) {
        let e = RankExit {
            rank,
            code,
            signal,
            start_error: None,
        };
        self.record_exit(job, e);
    }

    fn record_exit(&mut self, job: u32, e: RankExit) {
        let Some(rec) = self.registry.records.get_mut(&job) else {
            return;
        };
        let rank = e.rank;
        let clean = e.code == Some(0) && e.signal.is_none() && e.start_error.is_none();
        self.registry.psets.exited((job, rank), clean);
        if rec.exited.insert(rank, e).is_none() {
            if let Some(&n) = rec.node_of.get(rank as usize) {
                let l = &mut self.registry.load[n as usize];
                *l = l.saturating_sub(1);
            }
        }
        self.maybe_job_done(job);
    }

    /// Root: once every rank of a finished spawn has ended, the job's state goes everywhere.
    fn maybe_job_done(&mut self, job: u32) {
        let Some(rec) = self.registry.records.get(&job) else {
            return;
        };
        let ended = rec.exited.len() as u32 >= rec.size;
        if ended
            && !self.registry.pending.contains_key(&job)
            && !self.registry.finished.contains(&job)
        {
            self.registry.finished.push_back(job);
            while self.registry.finished.len() > FINISHED_KEPT {
                if let Some(old) = self.registry.finished.pop_front() {
                    self.registry.records.remove(&old);
                    self.dir.kvs.remove(&kvsname_of(old));
                }
            }
            self.send_children(&Down::JobDone(job));
            self.on_job_done(job);
        }
    }

    /// Every rank of a job has ended: its state goes, everywhere but in the root's key-value
    /// store, which keeps what the job put for as long as it keeps the job's record
    /// (`FINISHED_KEPT` jobs): a parent may read its children's keys after they have exited.
    pub(crate) fn on_job_done(&mut self, job: u32) {
        if let Some(j) = self.jobs.remove(&job) {
            let helped = j.ranks.values().filter(|rs| rs.helpers_left);
            for pid in helped.filter_map(|rs| rs.pid) {
                self.left_groups.keep(job, pid);
            }
            if !self.is_root() {
                self.dir.kvs.remove(&j.spec.kvsname);
            }
        }
        // Nobody of the job can put the keys still waited for now.
        self.end_key_waits(&kvsname_of(job));
        if self.initial_job == Some(job) {
            self.initial_job = None;
        }
    }

    /// A local rank asks for the status of a job.
    pub(crate) fn request_status(&mut self, conn: ConnId, job: u32) {
        if self.is_root() {
            let r = status_reply(&self.job_status(job));
            self.reply(conn, r);
            return;
        }
        let id = self.next_forward;
        self.next_forward += 1;
        self.forwarded
            .insert(id, super::kvs::Forwarded::Status { conn });
        self.send_up(&Up::Status {
            origin: self.me,
            id,
            job,
        });
    }

    /// Root: a job's size and the ends of its ranks so far.
    pub(crate) fn job_status(&self, job: u32) -> Result<(u32, Vec<RankExit>), String> {
        match self.registry.records.get(&job) {
            Some(rec) => Ok((rec.size, rec.exited.values().cloned().collect())),
            None => Err(format!("no job {job} in this daemon set")),
        }
    }

    /// Root: a spawn from below.
    pub(crate) fn on_spawn_up(
        &mut self,
        origin: u32,
        id: u64,
        req: &EncodedRequest,
        parent: Option<u32>,
    ) {
        let requester = Requester::Remote { origin, id };
        match req.request() {
            Ok(req) => self.root_spawn(req, parent, requester, NewJob::default()),
            Err(e) => self.answer_spawn(requester, Err(e.to_string())),
        }
    }

    /// Root: the launcher starts a job.
    pub(crate) fn on_launcher_spawn(&mut self, s: Submission) {
        let requester = Requester::Launcher { id: s.id };
        match s.req.request() {
            Ok(req) => {
                let new = NewJob {
                    nodes: s.nodes,
                    jobid: s.jobid,
                    stdin: s.stdin,
                    adopt: false,
                    env: s.env,
                };
                self.root_spawn(req, None, requester, new)
            }
            Err(e) => self.answer_spawn(requester, Err(e.to_string())),
        }
    }

    /// Root: the launcher adopts a running singleton as rank 0 of job `jobid`.
    pub(crate) fn on_launcher_adopt(&mut self, id: u64, jobid: u32) {
        let req = SpawnRequest {
            commands: vec![SpawnCommand {
                program: "singleton".into(),
                args: vec![],
                nprocs: 1,
                info: vec![],
            }],
            preput: vec![],
        };
        let new = NewJob {
            nodes: Some(vec![0]),
            jobid: Some(jobid),
            adopt: true,
            ..NewJob::default()
        };
        self.root_spawn(req, None, Requester::Launcher { id }, new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commands_environment_survives_its_info_keys() {
        let env: Vec<(String, String)> = vec![
            ("IBDYN_INFO_PRESTART".into(), "2".into()),
            ("PLAIN".into(), "v".into()),
            ("SPACED".into(), "a b=c\td".into()),
        ];
        let c = SpawnCommand {
            program: "p".into(),
            args: vec![],
            nprocs: 1,
            info: info_of_env(&env),
        };
        assert_eq!(app_of(&c, 0).env, env);
        assert_eq!(prestart_count(&c), Some(2));
    }

    #[test]
    fn a_working_directory_and_variables_with_spaces_come_through_their_info_keys() {
        let c = SpawnCommand {
            program: "p".into(),
            args: vec![],
            nprocs: 1,
            info: vec![
                ibdyn_pmi::wire::wdir_info("/tmp/with space"),
                ibdyn_pmi::wire::env_info("GREETING", "hello world"),
                ibdyn_pmi::wire::env_info("PLAIN", "x"),
            ],
        };
        let app = app_of(&c, 0);
        assert_eq!(app.wdir.as_deref(), Some("/tmp/with space"));
        assert_eq!(
            app.env,
            [
                ("GREETING".to_string(), "hello world".to_string()),
                ("PLAIN".to_string(), "x".to_string())
            ]
        );
    }
}
