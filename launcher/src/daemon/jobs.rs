//! Jobs across the daemon set. The root (daemon 0) owns job ids, placement (fewest live
//! processes first), the assembly of spawn replies and the record of every rank's end; the
//! other daemons start their share of a job and report back up the tree.
//!
//! Messages: `d_spawn` (a client's request, up to the root), `d_start` (the new job, down to
//! every daemon), `d_started` (exec results, up), `d_spawn_result` (to the requester),
//! `d_kill_job` (a spawn failed in part: down), `d_exited` (a rank's end, up), `d_job_done`
//! (every rank ended: down, state dropped), `d_status` / `d_status_result` (job status).
//! To the launcher, every daemon sends `d_job` when `d_start` comes, before anything else
//! about the job (see `report`).

use super::ranks::{App, Job, JobSpec};
use super::{ConnId, Daemon};
use crate::protocol::{JobAnnounce, JobEnv, RankEnd, Report, Submission};
use ibdyn_pmi::jobs::{encode_children, encode_exits, kvsname_of, ChildStart, RankExit};
use ibdyn_pmi::mapping::PROCESS_MAPPING_KEY;
use ibdyn_pmi::wire::{self, hex_decode, hex_encode, msg_text, msg_token, Command, Frame, Framer};
use ibdyn_pmi::{SpawnCommand, SpawnRequest};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// How many finished jobs the root remembers for `job_status`.
const FINISHED_KEPT: usize = 1024;

/// Who gets the answer of a spawn.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Requester {
    Local(ConnId),
    Remote { origin: u32, id: u64 },
    Launcher { id: u64 },
}

pub(crate) struct JobRecord {
    size: u32,
    /// The launcher request this job descends from (`report::JobAnnounce::owner`).
    owner: u64,
    node_of: Vec<u32>,
    exited: BTreeMap<u32, RankExit>,
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
    pub(crate) records: BTreeMap<u32, JobRecord>,
    pub(crate) finished: VecDeque<u32>,
    pub(crate) pending: BTreeMap<u32, PendingSpawn>,
    /// Live processes per daemon, every job counted.
    pub(crate) load: Vec<u32>,
}

pub(crate) fn encode_request(req: &SpawnRequest) -> Result<String, String> {
    wire::format_spawn(req)
        .map(|t| hex_encode(t.as_bytes()))
        .map_err(|e| e.to_string())
}

pub(crate) fn decode_request(hex: &str) -> Result<SpawnRequest, String> {
    let text = hex_decode(hex).map_err(|e| e.to_string())?;
    let mut req = SpawnRequest::default();
    for f in Framer::default().push(&text) {
        match f {
            Frame::Spawn(block) => {
                let b = wire::parse_spawn_block(&block).map_err(|e| e.to_string())?;
                req.commands.push(b.command);
                req.preput = b.preput;
            }
            other => return Err(format!("bad spawn request frame {other:?}")),
        }
    }
    Ok(req)
}

/// The daemon a command is forced onto by `host` / `ibdyn_node`, if any.
fn forced_node(c: &SpawnCommand, nnodes: u32) -> Result<Option<u32>, String> {
    for (k, v) in &c.info {
        if k == "host" || k == "ibdyn_node" {
            let n: u32 = v
                .trim_start_matches("node")
                .parse()
                .map_err(|_| format!("info key {k} ({v}): not a node daemon index"))?;
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

/// The environment and working directory a command's info keys ask for.
fn app_of(c: &SpawnCommand, appnum: i32) -> App {
    let mut env = Vec::new();
    let mut wdir = None;
    for (k, v) in &c.info {
        match k.as_str() {
            "wdir" => wdir = Some(v.clone()),
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
    }
}

fn spawn_reply(name: &str, outcome: &Result<(u32, u32, Vec<ChildStart>), String>) -> Command {
    match outcome {
        Ok((job, size, children)) => {
            let ok = children.iter().all(ChildStart::started);
            let mut c = Command::new(name)
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
        Err(m) => Command::new(name).arg("rc", -1).arg("msg", msg_token(m)),
    }
}

/// Reads a `spawn_reply` back (for forwarding toward a client).
fn outcome_of(cmd: &Command) -> Result<(u32, u32, Vec<ChildStart>), String> {
    match cmd.get("jobid") {
        None => Err(msg_text(cmd.get("msg").unwrap_or("spawn failed"))),
        Some(_) => Ok((
            cmd.num("jobid").map_err(|e| e.to_string())?,
            cmd.num("size").map_err(|e| e.to_string())?,
            ibdyn_pmi::jobs::decode_children(cmd.get("children").unwrap_or(""))
                .map_err(|e| e.to_string())?,
        )),
    }
}

impl Daemon {
    /// A complete spawn request from a local rank.
    pub(crate) fn request_spawn(&mut self, conn: ConnId, req: SpawnRequest) {
        let parent = self.clients.get(&conn).and_then(|c| c.who).map(|(j, _)| j);
        if self.is_root() {
            self.root_spawn(req, parent, Requester::Local(conn), None, None, &[], None);
            return;
        }
        let hex = match encode_request(&req) {
            Ok(h) => h,
            Err(m) => {
                self.reply(conn, spawn_reply("spawn_result", &Err(m)));
                return;
            }
        };
        let id = self.next_forward;
        self.next_forward += 1;
        self.forwarded
            .insert(id, super::kvs::Forwarded::Spawn { conn });
        let mut up = Command::new("d_spawn")
            .arg("origin", self.me)
            .arg("id", id)
            .arg("req", hex);
        if let Some(p) = parent {
            up = up.arg("parent", p);
        }
        self.send_up(&up);
    }

    fn new_job_id(&self) -> u32 {
        loop {
            let id = crate::secret::random_u64().map_or(1, |r| r as u32 & 0x7fff_ffff);
            if id != 0 && !self.registry.records.contains_key(&id) {
                return id;
            }
        }
    }

    /// Least-loaded placement, commands with `host` forced where they ask.
    fn place(&self, req: &SpawnRequest) -> Result<Vec<u32>, String> {
        let mut load = self.registry.load.clone();
        let mut nodes = Vec::new();
        for c in &req.commands {
            let forced = forced_node(c, self.nnodes)?;
            for _ in 0..c.nprocs {
                let n = forced.unwrap_or_else(|| {
                    (0..self.nnodes)
                        .min_by_key(|&d| (load[d as usize], d))
                        .unwrap_or(0)
                });
                load[n as usize] += 1;
                nodes.push(n);
            }
        }
        Ok(nodes)
    }

    /// Root: creates job `jobid` (or a fresh id) from `req` and has every daemon start its
    /// share. `adopt`: rank 0 is the singleton that asked for this daemon, not started here.
    /// `env`: the ranks' environment and directory (a spawned job inherits its parent's).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn root_spawn(
        &mut self,
        req: SpawnRequest,
        parent: Option<u32>,
        requester: Requester,
        nodes: Option<Vec<u32>>,
        jobid: Option<u32>,
        flags: &[(&str, &str)],
        env: Option<JobEnv>,
    ) {
        let env = env.or_else(|| {
            parent
                .and_then(|p| self.jobs.get(&p))
                .and_then(|j| j.spec.env.clone())
        });
        let size: u32 = req.commands.iter().map(|c| c.nprocs).sum();
        let prepared = (|| {
            if req.commands.is_empty() || size == 0 {
                return Err("a spawn needs at least one process".to_string());
            }
            let nodes = match nodes {
                Some(n) if n.len() == size as usize => n,
                Some(_) => return Err("placement does not match the job size".into()),
                None => self.place(&req)?,
            };
            let hex = encode_request(&req)?;
            Ok((nodes, hex))
        })();
        let (nodes, hex) = match prepared {
            Ok(p) => p,
            Err(m) => return self.answer_spawn(requester, Err(m)),
        };
        let job = jobid.unwrap_or_else(|| self.new_job_id());
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
        let list: Vec<String> = nodes.iter().map(u32::to_string).collect();
        let submitted = matches!(requester, Requester::Launcher { .. });
        let mut start = Command::new("d_start")
            .arg("job", job)
            .arg("nodes", list.join(","))
            .arg("owner", owner)
            .arg("submitted", u8::from(submitted))
            .arg("req", hex);
        if let Some(p) = parent {
            start = start.arg("parent", p);
        }
        for (k, v) in flags {
            start = start.arg(k, v);
        }
        if let Some(e) = &env {
            start = e.add_to(start);
        }
        self.send_children(&start);
        self.on_start(&start);
    }

    /// Any daemon: a new job; start the ranks placed here and report to the root.
    pub(crate) fn on_start(&mut self, cmd: &Command) {
        let parsed = (|| -> Result<JobSpec, String> {
            let job: u32 = cmd.num("job").map_err(|e| e.to_string())?;
            let nodes: Vec<u32> = cmd
                .require("nodes")
                .map_err(|e| e.to_string())?
                .split(',')
                .map(|n| n.parse().map_err(|_| format!("bad node {n:?}")))
                .collect::<Result<_, _>>()?;
            let req = decode_request(cmd.require("req").map_err(|e| e.to_string())?)?;
            let parent = cmd.get("parent").and_then(|p| p.parse().ok());
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
                jobid: job,
                kvsname: kvsname_of(job),
                size: nodes.len() as u32,
                apps,
                node_of: nodes,
                parent,
                stdin: cmd.get("stdin") == Some("1"),
                session_dir: self.session_dir.clone(),
                pmi_sock: self.pmi_sock.clone(),
                preput_keys: preput
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>()
                    .join(","),
                preput_values: (values.iter().map(String::len).sum::<usize>() <= PREPUT_ENV_LIMIT)
                    .then(|| values.join(",")),
                env: JobEnv::from_wire(cmd).map_err(|e| e.to_string())?,
            };
            let store = self.dir.kvs(&spec.kvsname);
            store.learn(PROCESS_MAPPING_KEY, &spec.mapping().format());
            store.learn("PMI_universe_size", &spec.size.to_string());
            store.learn("PMI_appnum", "0");
            for (k, v) in &req.preput {
                store.learn(k, v);
            }
            Ok(spec)
        })();
        let spec = match parsed {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("daemon {}: bad d_start: {e}", self.me);
                return;
            }
        };
        if self.is_root() {
            for (k, v) in decode_request(cmd.get("req").unwrap_or(""))
                .map(|r| r.preput)
                .unwrap_or_default()
            {
                self.wake_key_waiters(&spec.kvsname, &k, &v);
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
            owner: cmd.num("owner").unwrap_or(0),
            submitted: cmd.get("submitted") == Some("1"),
        }));
        if mine.is_empty() {
            return;
        }
        let results = if cmd.get("adopt") == Some("1") {
            if let Some(j) = self.jobs.get_mut(&job) {
                j.ranks.entry(0).or_default().adopted = true;
            }
            vec![(0, 0, String::new())]
        } else {
            if spec.stdin {
                self.initial_job = Some(job);
            }
            self.start_ranks(&spec)
        };
        let items: Vec<String> = results
            .iter()
            .map(|(r, e, m)| format!("{r}:{e}:{}", hex_encode(m.as_bytes())))
            .collect();
        let up = Command::new("d_started")
            .arg("job", job)
            .arg("node", self.me)
            .arg("results", items.join(","));
        if self.is_root() {
            self.on_started(&up);
        } else {
            self.send_up(&up);
        }
    }

    /// Root: one daemon's exec results.
    pub(crate) fn on_started(&mut self, cmd: &Command) {
        let (Ok(job), Ok(node)) = (cmd.num::<u32>("job"), cmd.num::<u32>("node")) else {
            return;
        };
        let Some(p) = self.registry.pending.get_mut(&job) else {
            return;
        };
        for item in cmd.get("results").unwrap_or("").split(',') {
            let mut it = item.splitn(3, ':');
            let (Some(r), Some(e), Some(m)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            let (Ok(r), Ok(e)) = (r.parse::<u32>(), e.parse::<i32>()) else {
                continue;
            };
            if let Some(c) = p.children.get_mut(r as usize) {
                c.errno = e;
                c.message = String::from_utf8_lossy(&hex_decode(m).unwrap_or_default()).into();
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
            let kill = Command::new("d_kill_job").arg("job", job);
            self.send_children(&kill);
            self.on_kill_job(&kill);
            for c in p.children.iter().filter(|c| !c.started()) {
                self.not_started(job, c.rank, c.message.clone());
            }
        }
        self.answer_spawn(p.requester, Ok((job, size, p.children)));
        // Fast children may all have ended before the last daemon's exec report came.
        self.maybe_job_done(job);
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
            let kill = Command::new("d_kill_job").arg("job", job);
            self.send_children(&kill);
            self.on_kill_job(&kill);
            let waiting: Vec<String> = p.waiting.iter().map(u32::to_string).collect();
            let msg = format!(
                "node daemon(s) {} did not report the start of job {job} within {} s",
                waiting.join(","),
                START_REPORT_LIMIT.as_secs()
            );
            // Their ranks count as never started, so that the job ends for the launcher and
            // here; a late start is killed by the d_kill_job behind its d_start.
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

    fn answer_spawn(
        &mut self,
        requester: Requester,
        outcome: Result<(u32, u32, Vec<ChildStart>), String>,
    ) {
        match requester {
            Requester::Local(conn) => self.reply(conn, spawn_reply("spawn_result", &outcome)),
            Requester::Launcher { id } => self.to_launcher(Report::SpawnResult {
                id,
                outcome: outcome.map(|(job, _, children)| (job, children)),
            }),
            Requester::Remote { origin, id } => {
                let c = spawn_reply("d_spawn_result", &outcome)
                    .arg("origin", origin)
                    .arg("id", id);
                self.send_toward(origin, c);
            }
        }
    }

    /// The answer to a spawn this daemon forwarded for `conn`.
    pub(crate) fn deliver_spawn_result(&mut self, conn: ConnId, cmd: &Command) {
        let outcome = outcome_of(cmd);
        self.reply(conn, spawn_reply("spawn_result", &outcome));
    }

    /// A spawn failed in part: its started ranks go.
    pub(crate) fn on_kill_job(&mut self, cmd: &Command) {
        let Ok(job) = cmd.num::<u32>("job") else {
            return;
        };
        if let Some(j) = self.jobs.get_mut(&job) {
            for rs in j.ranks.values_mut() {
                rs.cancelled = true;
            }
        }
        self.signal_ranks(libc::SIGKILL, Some(job));
    }

    /// A rank's end travels up to the root.
    pub(crate) fn exited_up(&mut self, cmd: Command) {
        if self.is_root() {
            self.on_exited_up(&cmd);
        } else {
            self.send_up(&cmd);
        }
    }

    /// Root: a rank ended (reported by its daemon).
    pub(crate) fn on_exited_up(&mut self, cmd: &Command) {
        let (Ok(job), Ok(rank)) = (cmd.num::<u32>("job"), cmd.num::<u32>("rank")) else {
            return;
        };
        let e = RankExit {
            rank,
            code: cmd.get("code").and_then(|c| c.parse().ok()),
            signal: cmd.get("signal").and_then(|c| c.parse().ok()),
            start_error: None,
        };
        self.record_exit(job, e);
    }

    fn record_exit(&mut self, job: u32, e: RankExit) {
        let Some(rec) = self.registry.records.get_mut(&job) else {
            return;
        };
        let rank = e.rank;
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
                }
            }
            let done = Command::new("d_job_done").arg("job", job);
            self.send_children(&done);
            self.on_job_done(&done);
        }
    }

    /// Every rank of a job has ended: its state goes, everywhere.
    pub(crate) fn on_job_done(&mut self, cmd: &Command) {
        let Ok(job) = cmd.num::<u32>("job") else {
            return;
        };
        if let Some(j) = self.jobs.remove(&job) {
            self.dir.kvs.remove(&j.spec.kvsname);
        }
        if self.initial_job == Some(job) {
            self.initial_job = None;
        }
    }

    /// A local rank asks for the status of a job.
    pub(crate) fn request_status(&mut self, conn: ConnId, job: u32) {
        if self.is_root() {
            let r = self.status_reply("job_status_result", job);
            self.reply(conn, r);
            return;
        }
        let id = self.next_forward;
        self.next_forward += 1;
        self.forwarded
            .insert(id, super::kvs::Forwarded::Status { conn });
        self.send_up(
            &Command::new("d_status")
                .arg("origin", self.me)
                .arg("id", id)
                .arg("job", job),
        );
    }

    pub(crate) fn status_reply(&self, name: &str, job: u32) -> Command {
        match self.registry.records.get(&job) {
            Some(rec) => {
                let exits: Vec<RankExit> = rec.exited.values().cloned().collect();
                Command::new(name)
                    .arg("rc", 0)
                    .arg("size", rec.size)
                    .arg("exited", encode_exits(&exits))
            }
            None => Command::new(name).arg("rc", -1).arg(
                "msg",
                msg_token(&format!("no job {job} in this daemon set")),
            ),
        }
    }

    /// Root: a status query from below.
    pub(crate) fn on_status_up(&mut self, cmd: &Command) {
        let (Ok(origin), Ok(id), Ok(job)) = (
            cmd.num::<u32>("origin"),
            cmd.num::<u64>("id"),
            cmd.num::<u32>("job"),
        ) else {
            return;
        };
        let c = self
            .status_reply("d_status_result", job)
            .arg("origin", origin)
            .arg("id", id);
        self.send_toward(origin, c);
    }

    /// Root: a spawn from below.
    pub(crate) fn on_spawn_up(&mut self, cmd: &Command) {
        let (Ok(origin), Ok(id)) = (cmd.num::<u32>("origin"), cmd.num::<u64>("id")) else {
            return;
        };
        let requester = Requester::Remote { origin, id };
        match decode_request(cmd.get("req").unwrap_or("")) {
            Ok(req) => {
                let parent = cmd.get("parent").and_then(|p| p.parse().ok());
                self.root_spawn(req, parent, requester, None, None, &[], None)
            }
            Err(m) => self.answer_spawn(requester, Err(m)),
        }
    }

    /// Root: the launcher starts a job.
    pub(crate) fn on_launcher_spawn(&mut self, s: Submission) {
        let requester = Requester::Launcher { id: s.id };
        match s.req.request() {
            Ok(req) => {
                let flags: &[(&str, &str)] = if s.stdin { &[("stdin", "1")] } else { &[] };
                self.root_spawn(req, None, requester, s.nodes, s.jobid, flags, s.env)
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
        let requester = Requester::Launcher { id };
        self.root_spawn(
            req,
            None,
            requester,
            Some(vec![0]),
            Some(jobid),
            &[("adopt", "1")],
            None,
        )
    }
}
