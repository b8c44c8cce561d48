//! The DVM controller's state: its clients (one `ibdyn run --dvm` or `ibdyn dvm stop` per
//! connection) and the jobs of the daemon set, each owned by the client whose submission it
//! descends from.
//!
//! What it keeps true, whatever order submissions, spawns, ends and disconnects come in:
//! - a job's output goes to its owner as it comes; a daemon announces a job on its link
//!   before any output or end of it, so no line arrives for a job not known yet;
//! - a client gets `Done` once the root has answered its submission and every job it owns
//!   is over (so after all of their output), with the first abnormal end, abort or start
//!   failure of its job as the status;
//! - the jobs of a client that has gone are killed, also those announced after it went.

use crate::jobtable::JobTable;
use crate::link::Outbox;
use crate::placement::{MapBy, Placement};
use crate::protocol::EncodedRequest;
use crate::protocol::{
    start_failure, FromDvm, JobAnnounce, RankEnd, Report, SpawnOutcome, Submission, ToDaemon,
    ToDvm, NOT_FOUND,
};
use crate::run::describe;
use std::collections::HashMap;
use std::time::Instant;

/// The daemon of every rank of a submission placed by `map_by` over `nnodes` daemons.
fn placement(req: &EncodedRequest, nnodes: u32, map_by: MapBy) -> Result<Vec<u32>, String> {
    let nprocs: u32 = req
        .request()
        .map_err(|e| e.to_string())?
        .commands
        .iter()
        .map(|c| c.nprocs)
        .sum();
    Placement::new(nprocs, nnodes, map_by)
        .map(|p| p.node_of)
        .map_err(|e| e.to_string())
}

struct Client {
    out: Outbox,
    /// Its job was submitted to the root.
    submitted: bool,
    /// The root's answer to the submission has come.
    answered: bool,
    status: Option<i32>,
    done: bool,
    /// Its job and the daemon of its rank 0, once the root has started it.
    started: Option<(u32, Option<u32>)>,
    /// The daemon of rank 0 as placed here (None: the root places the job).
    rank0_node: Option<u32>,
    /// Stdin that came before the job started.
    early_stdin: Vec<Option<Vec<u8>>>,
    /// Its job failed, and every job it owns is being killed.
    tearing_down: bool,
    /// Ranks of its spawned jobs that ended abnormally during its teardown or the DVM's stop
    /// (summed up in one line before `Done`).
    torn_down: u32,
}

impl Client {
    /// `Done` with the status, after the teardown's sum.
    fn finish(&mut self, status: i32) {
        self.done = true;
        if self.torn_down > 0 {
            let msg = FromDvm::TornDown {
                ranks: self.torn_down,
            };
            let _ = self.out.send(msg.encode().to_line());
        }
        let _ = self.out.send(FromDvm::Done { status }.encode().to_line());
    }
}

pub(super) struct Controller {
    root: Outbox,
    all: Vec<Outbox>,
    clients: HashMap<u64, Client>,
    jobs: JobTable,
    /// When the stop began, and why (None while serving).
    stopping: Option<(Instant, String)>,
}

impl Controller {
    pub(super) fn new(outboxes: Vec<Outbox>) -> Controller {
        Controller {
            root: outboxes[0].clone(),
            jobs: JobTable::new(outboxes.len() as u32),
            all: outboxes,
            clients: HashMap::new(),
            stopping: None,
        }
    }

    /// When the stop began (None while serving).
    pub(super) fn stopping_since(&self) -> Option<Instant> {
        self.stopping.as_ref().map(|(t, _)| *t)
    }

    pub(super) fn any_live_job(&self) -> bool {
        self.jobs.any_live()
    }

    pub(super) fn daemons(&self) -> &[Outbox] {
        &self.all
    }

    fn to_client(&self, id: u64, msg: FromDvm) {
        if let Some(c) = self.clients.get(&id) {
            let _ = c.out.send(msg.encode().to_line());
        }
    }

    fn error_to(&self, id: u64, msg: &str) {
        self.to_client(id, FromDvm::Error(msg.to_string()));
    }

    fn kill_job(&self, job: u32) {
        let _ = self.root.send(ToDaemon::KillJob(job).encode().to_line());
    }

    fn kill_jobs_of(&self, owner: u64) {
        for job in self.jobs.live_of(owner) {
            self.kill_job(job);
        }
    }

    /// The client's job failed: every job it owns goes, as under `ibdyn run` (its spawned
    /// jobs need not notice their parents' end).
    fn tear_down(&mut self, owner: u64) {
        if let Some(c) = self.clients.get_mut(&owner) {
            c.tearing_down = true;
        }
        // A stop kills every job already: a `KillJob` now would have the ranks the stop has
        // signalled, but not yet seen end, reported as cancelled, and left out of the sum.
        if self.stopping.is_none() {
            self.kill_jobs_of(owner);
        }
    }

    /// Sends `Done` to a client whose submission is answered and whose jobs are all over.
    fn check_done(&mut self, owner: u64) {
        let busy = !self.jobs.live_of(owner).is_empty();
        let Some(c) = self.clients.get_mut(&owner) else {
            return;
        };
        if c.answered && !busy && !c.done {
            let st = c.status.unwrap_or(0);
            c.finish(st);
        }
    }

    pub(super) fn client_open(&mut self, id: u64, out: Outbox) {
        self.clients.insert(
            id,
            Client {
                out,
                submitted: false,
                answered: false,
                status: None,
                done: false,
                started: None,
                rank0_node: None,
                early_stdin: Vec::new(),
                tearing_down: false,
                torn_down: 0,
            },
        );
    }

    pub(super) fn client_closed(&mut self, id: u64) {
        self.kill_jobs_of(id);
        self.clients.remove(&id);
    }

    pub(super) fn on_client(&mut self, id: u64, msg: ToDvm) {
        match msg {
            ToDvm::Run { .. } if self.stopping.is_some() => {
                let why = self.stopping.as_ref().map_or("", |(_, w)| w.as_str());
                let msg = format!(
                    "the DVM is stopping ({why}) and takes no more jobs; start another with \
                     `ibdyn dvm start`"
                );
                self.refuse(id, &msg);
            }
            ToDvm::Run { req, env, map_by } => {
                let nnodes = self.all.len() as u32;
                let Some(c) = self.clients.get_mut(&id) else {
                    return;
                };
                if c.submitted {
                    self.error_to(id, "one job per connection: this one has been submitted");
                    return;
                }
                c.submitted = true;
                let nodes = match map_by.map(|m| placement(&req, nnodes, m)).transpose() {
                    Ok(n) => n,
                    Err(e) => {
                        self.refuse(id, &e);
                        return;
                    }
                };
                c.rank0_node = nodes.as_ref().and_then(|n| n.first().copied());
                let submit = ToDaemon::Spawn(Submission {
                    id,
                    req,
                    jobid: None,
                    nodes,
                    stdin: true,
                    env,
                });
                let _ = self.root.send(submit.encode().to_line());
            }
            ToDvm::Stdin(data) => {
                let Some(c) = self.clients.get_mut(&id) else {
                    return;
                };
                match c.started {
                    Some((job, node)) => self.stdin_to(job, node, data),
                    None => c.early_stdin.push(data),
                }
            }
            ToDvm::Signal(signum) if crate::signals::may_pass_on(signum) => {
                self.pass_on(signum, Some(id))
            }
            ToDvm::Signal(signum) => self.error_to(
                id,
                &format!("signal {signum} is not one the DVM passes on to a job's ranks"),
            ),
            ToDvm::Stop => {
                // `dvm stop` waits for the controller to go, not for an answer.
                if let Some(c) = self.clients.get_mut(&id) {
                    c.done = true;
                }
                self.stop("`ibdyn dvm stop`")
            }
        }
    }

    /// Passes a signal on to the ranks of `owner`'s jobs, or of every job (None: the DVM
    /// itself got it).
    pub(super) fn pass_on(&self, signum: i32, owner: Option<u64>) {
        let lines: Vec<String> = match owner {
            None => vec![ToDaemon::Signal(signum).encode().to_line()],
            Some(id) => self
                .jobs
                .live_of(id)
                .into_iter()
                .map(|job| ToDaemon::SignalJob { job, signum }.encode().to_line())
                .collect(),
        };
        for o in &self.all {
            for l in &lines {
                let _ = o.send(l.clone());
            }
        }
    }

    /// A line from a client that is not a request: it is told why, and its connection
    /// counts as answered (no job will come of it).
    pub(super) fn refuse(&mut self, id: u64, why: &str) {
        tracing::warn!("dvm: client {id}: {why}");
        self.error_to(id, why);
        if let Some(c) = self.clients.get_mut(&id) {
            if !c.submitted {
                c.answered = true;
                c.status.get_or_insert(1);
            }
        }
        self.check_done(id);
    }

    /// Begins the stop (once): every job is killed, its client told why, and submissions
    /// are refused from now on.
    pub(super) fn stop(&mut self, why: &str) {
        let news = format!("the DVM is stopping ({why}): ending the job");
        self.stop_telling(why, &news, None);
    }

    /// Node daemon `d` died: every job with a live rank may have lost ranks there (and the
    /// daemons' tree is broken), so each owner is told now and fails, and the DVM stops.
    pub(super) fn daemon_died(&mut self, d: u32) {
        let why = format!("node daemon {d} died");
        let news = format!("{why}: its ranks are lost, and the job is ended");
        self.stop_telling(&why, &news, Some(1));
    }

    /// The stop, whose `news` goes to every client with a job still running (with `status`,
    /// if given, as its exit status unless its job has one).
    fn stop_telling(&mut self, why: &str, news: &str, status: Option<i32>) {
        if self.stopping.is_some() {
            return;
        }
        let busy: Vec<u64> = self
            .clients
            .iter()
            .filter(|(&id, c)| c.submitted && !c.done && !self.jobs.live_of(id).is_empty())
            .map(|(&id, _)| id)
            .collect();
        for id in busy {
            self.error_to(id, news);
            if let (Some(c), Some(st)) = (self.clients.get_mut(&id), status) {
                c.status.get_or_insert(st);
            }
        }
        self.stopping = Some((Instant::now(), why.to_string()));
        for o in &self.all {
            let _ = o.send(ToDaemon::Kill.encode().to_line());
        }
    }

    /// At the end of the stop: every client not done yet gets its status (1 if its job did
    /// not end in time), instead of a connection that closes under it.
    pub(super) fn finish_clients(&mut self) {
        let why = self
            .stopping
            .as_ref()
            .map_or("its controller ended".to_string(), |(_, w)| w.clone());
        let ids: Vec<u64> = self.clients.keys().copied().collect();
        for id in ids {
            let busy = !self.jobs.live_of(id).is_empty();
            let Some(c) = self.clients.get_mut(&id) else {
                continue;
            };
            if c.done {
                continue;
            }
            let status = *c.status.get_or_insert(1);
            if busy || !c.answered {
                let msg = FromDvm::Error(format!("the DVM stopped ({why}) before the job ended"));
                let _ = c.out.send(msg.encode().to_line());
            }
            c.finish(status);
        }
    }

    pub(super) fn on_daemon(&mut self, report: Report) {
        match report {
            Report::Job(a) => self.on_job(a),
            Report::Output {
                job,
                rank,
                fd,
                data,
            } => match self.jobs.info(job) {
                Some(a) => self.to_client(
                    a.owner,
                    FromDvm::Output {
                        job,
                        rank,
                        fd,
                        data,
                    },
                ),
                // Only output of a process a rank left behind can come after the job.
                None => tracing::debug!("dvm: output of job {job} after its end dropped"),
            },
            Report::Exit { job, rank, end } => self.on_exit(job, rank, end),
            Report::SpawnResult { id, outcome } => self.on_spawn_result(id, outcome),
            Report::Abort {
                job,
                rank,
                code,
                msg,
            } => {
                let Some(info) = self.jobs.info(job) else {
                    return;
                };
                let owner = info.owner;
                if !info.submitted {
                    // A spawned job's abort ends that job only (see `ibdyn run`).
                    let msg =
                        format!("job {job} rank {rank} aborted its job with code {code}: {msg}");
                    self.error_to(owner, &msg);
                    self.kill_job(job);
                    return;
                }
                let msg = format!("rank {rank} of job {job} aborted with code {code}: {msg}");
                self.error_to(owner, &msg);
                if let Some(c) = self.clients.get_mut(&owner) {
                    c.status.get_or_insert(code);
                }
                self.tear_down(owner);
            }
        }
    }

    fn on_job(&mut self, a: JobAnnounce) {
        if !self.jobs.announce(a).new {
            return;
        }
        if !self.clients.contains_key(&a.owner) {
            // Its client left while the job was on its way (or it descends from no client).
            tracing::debug!(
                "dvm: job {} has no client (owner {}): killing it",
                a.job,
                a.owner
            );
            self.kill_job(a.job);
        } else if a.submitted {
            self.to_client(a.owner, FromDvm::Started { job: a.job });
        }
    }

    fn on_exit(&mut self, job: u32, rank: u32, end: RankEnd) {
        let info = self.jobs.info(job);
        let change = self.jobs.end(job, rank);
        let Some(a) = info else {
            tracing::warn!("dvm: end of rank {rank} of job {job} before its announcement");
            return;
        };
        if let Some((code, signal)) = end.abnormal() {
            let stopping = self.stopping.is_some();
            let Some(c) = self.clients.get_mut(&a.owner) else {
                return;
            };
            if !a.submitted && (c.tearing_down || stopping) {
                // Summed up (a master's thousands of workers), as `ibdyn run` does.
                c.torn_down += 1;
            } else if !(a.submitted && c.tearing_down) {
                let msg = FromDvm::Exit {
                    job,
                    rank,
                    code,
                    signal,
                };
                let _ = c.out.send(msg.encode().to_line());
                if a.submitted {
                    c.status.get_or_insert(describe(code, signal).1);
                    self.tear_down(a.owner);
                }
            }
        }
        if change.over {
            self.check_done(a.owner);
        }
    }

    /// The root's answer to a client's submission (its request id is the client's).
    /// Stdin of a client to rank 0 of its job (on daemon `node`, or on whichever runs it).
    fn stdin_to(&self, job: u32, node: Option<u32>, data: Option<Vec<u8>>) {
        let line = ToDaemon::JobStdin { job, data }.encode().to_line();
        match node.and_then(|n| self.all.get(n as usize)) {
            Some(o) => {
                let _ = o.send(line);
            }
            None => {
                for o in &self.all {
                    let _ = o.send(line.clone());
                }
            }
        }
    }

    fn on_spawn_result(&mut self, id: u64, outcome: SpawnOutcome) {
        // Started: stdin that came early goes to rank 0 now (its pipe exists).
        if let (Ok((job, _)), Some(c)) = (&outcome, self.clients.get_mut(&id)) {
            let node = c.rank0_node;
            c.started = Some((*job, node));
            let early = std::mem::take(&mut c.early_stdin);
            for data in early {
                self.stdin_to(*job, node, data);
            }
        }
        let failure = match outcome {
            Err(msg) => Some((msg, NOT_FOUND)),
            Ok((_, children)) => start_failure(&children),
        };
        if let Some((msg, status)) = failure {
            // The root has killed the ranks that did start.
            self.error_to(id, &msg);
            if let Some(c) = self.clients.get_mut(&id) {
                c.status.get_or_insert(status);
            }
        }
        if let Some(c) = self.clients.get_mut(&id) {
            c.answered = true;
        }
        self.check_done(id);
    }
}
