//! The daemons' side of dynamic process sets: a rank's request goes up the tree to the root,
//! whose registry answers it; the root starts the processes of a grow through the spawn
//! machinery and kills a retired process that overstays.

use super::held::{Held, ReplyTo};
use super::registry::{Action, Caller, Reply};
use crate::daemon::kvs::Forwarded;
use crate::daemon::{ConnId, Daemon};
use crate::protocol::{Answer, Down, Up};
use ibdyn_pmi::jobs::ChildStart;
use ibdyn_pmi::pset_ops::{encode_reply, Member, PsetRequest};
use ibdyn_pmi::wire::Command;
use ibdyn_pmi::{SpawnCommand, SpawnRequest};

impl Daemon {
    /// `cmd=ibdyn_pset` from a local rank.
    pub(crate) fn pset_request(&mut self, conn: ConnId, cmd: &Command) -> crate::Result<()> {
        let mut req = PsetRequest::decode(cmd)?;
        let who = match &mut req {
            // `ibdyn resize` speaks for the job, not as one of its ranks.
            PsetRequest::Resize { job, .. } => {
                if *job == 0 {
                    *job = self.only_job()?;
                }
                (*job, 0)
            }
            PsetRequest::Jobs => (0, 0),
            _ => self.rank_of(conn)?,
        };
        if self.is_root() {
            let (r, actions) = self.serve_pset(&req, who);
            self.answer_or_hold(ReplyTo::Local(conn), who, req, r);
            self.pset_actions(actions);
            return Ok(());
        }
        let id = self.next_forward;
        self.next_forward += 1;
        self.forwarded.insert(id, Forwarded::Pset { conn });
        self.send_up(&Up::Pset {
            origin: self.me,
            id,
            who,
            req,
        });
        Ok(())
    }

    /// The one job the launcher started on these daemons (for `ibdyn resize` without JOB).
    fn only_job(&self) -> crate::Result<u32> {
        let jobs: Vec<u32> = self
            .jobs
            .values()
            .filter(|j| j.spec.parent.is_none())
            .map(|j| j.spec.jobid)
            .collect();
        match jobs[..] {
            [j] => Ok(j),
            [] => Err(crate::LaunchError::Request(
                "these daemons run no job to resize".into(),
            )),
            _ => Err(crate::LaunchError::Request(format!(
                "these daemons run several jobs ({}): name one (ibdyn resize JOB ...)",
                jobs.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Root: a request from below.
    pub(crate) fn on_pset_up(&mut self, origin: u32, id: u64, who: Member, req: &PsetRequest) {
        let (r, actions) = self.serve_pset(req, who);
        self.answer_or_hold(ReplyTo::Below { origin, id }, who, req.clone(), r);
        self.pset_actions(actions);
    }

    /// Root: answers a request, or holds it while its answer is not final (bounded).
    fn answer_or_hold(&mut self, to: ReplyTo, who: Member, req: PsetRequest, r: Reply) {
        match self.registry.psets.hold_bound(&req, &r) {
            Some(bound) => self.registry.psets.hold(Held {
                to,
                who,
                req,
                until: std::time::Instant::now() + bound,
            }),
            None => self.answer(to, r),
        }
    }

    fn answer(&mut self, to: ReplyTo, r: Reply) {
        match to {
            ReplyTo::Local(conn) => self.reply(conn, encode_reply(&r)),
            ReplyTo::Below { origin, id } => {
                let answer = Answer::Pset(r);
                self.send_toward(origin, Down::Answer { origin, id, answer });
            }
        }
    }

    /// Root: serves the held requests again; answers those whose answer is final or whose
    /// bound has passed (with what there is).
    fn serve_held(&mut self, now: std::time::Instant) {
        for h in self.registry.psets.take_held() {
            let (r, actions) = self.serve_pset(&h.req, h.who);
            if now < h.until && self.registry.psets.hold_bound(&h.req, &r).is_some() {
                self.registry.psets.hold(h);
            } else {
                self.answer(h.to, r);
            }
            self.pset_actions(actions);
        }
    }

    /// The answer to a request this daemon forwarded.
    pub(crate) fn on_pset_answer(&mut self, conn: ConnId, r: &Reply) {
        self.reply(conn, encode_reply(r));
    }

    /// Root: serves one request; returns the answer and what the daemons must do for it,
    /// to be carried out once the answer is on its way (a grow's start takes milliseconds).
    pub(crate) fn serve_pset(&mut self, req: &PsetRequest, who: Member) -> (Reply, Vec<Action>) {
        let records = &self.registry.records;
        let job_size = |j: u32| records.get(&j).map(|r| r.size());
        let live = self.registry.load.iter().sum();
        let new_job = || loop {
            let id = crate::secret::random_u64().map_or(1, |r| r as u32 & 0x7fff_ffff);
            if id != 0 && !records.contains_key(&id) {
                return id;
            }
        };
        let c = Caller {
            who,
            job_size: &job_size,
            live,
            new_job: &new_job,
        };
        let mut actions = Vec::new();
        let r = match req {
            PsetRequest::Jobs => {
                let roots: Vec<u32> = self
                    .jobs
                    .values()
                    .filter(|j| j.spec.parent.is_none())
                    .map(|j| j.spec.jobid)
                    .collect();
                self.registry.psets.main_sets(&roots, &c)
            }
            _ => self.registry.psets.request(req, &c, &mut actions),
        };
        (r, actions)
    }

    pub(crate) fn pset_actions(&mut self, actions: Vec<Action>) {
        for a in actions {
            match a {
                Action::Start {
                    change,
                    job,
                    n,
                    like_job,
                } => self.start_for_change(change, job, n, like_job),
                Action::Kill((job, rank)) => {
                    self.send_children(&Down::KillRank { job, rank });
                    self.kill_rank(job, rank);
                }
            }
        }
    }

    fn start_for_change(&mut self, change: u64, job: u32, n: u32, like_job: u32) {
        let Some(app) = self
            .jobs
            .get(&like_job)
            .and_then(|j| j.spec.apps.last().cloned())
        else {
            self.registry
                .psets
                .started(change, Err(format!("job {like_job} is not known here")));
            return;
        };
        let mut info = Vec::new();
        if let Some(w) = &app.wdir {
            info.push(("wdir".to_string(), w.clone()));
        }
        // The new processes start like the job's: the same `env` and `ibdyn_*` info keys
        // (so they also find the copies `ibdyn_prestart` keeps of the command).
        info.extend(crate::daemon::jobs::info_of_env(&app.env));
        // Bound like the job's, to units its running ranks do not hold.
        if app.bind.unit != crate::placement::Bind::None {
            info.push(("ibdyn_bind".to_string(), app.bind.to_info()));
        }
        let req = SpawnRequest {
            commands: vec![SpawnCommand {
                program: app.program.clone(),
                args: app.args.clone(),
                nprocs: n,
                info,
            }],
            preput: vec![],
        };
        let new = crate::daemon::jobs::NewJob {
            jobid: Some(job),
            ..Default::default()
        };
        self.root_spawn(
            req,
            Some(like_job),
            crate::daemon::jobs::Requester::Pset { change },
            new,
        );
    }

    /// Root: how the processes of a change started.
    pub(crate) fn pset_started(&mut self, change: u64, outcome: Result<Vec<ChildStart>, String>) {
        let r = outcome.and_then(|children| {
            let failed: Vec<String> = children
                .iter()
                .filter(|c| !c.started())
                .map(|c| format!("rank {} on node {}: {}", c.rank, c.node, c.message))
                .collect();
            if failed.is_empty() {
                Ok(())
            } else {
                Err(failed.join("; "))
            }
        });
        self.registry.psets.started(change, r);
    }

    /// Any daemon: a retired rank that overstayed goes, if it runs here.
    pub(crate) fn kill_rank(&mut self, job: u32, rank: u32) {
        if let Some(rs) = self.rank_mut(job, rank) {
            rs.cancelled = true;
            if let (Some(pid), None) = (rs.pid, rs.reaped_at) {
                // SAFETY: kill(2) on the process group of a child we have not reaped yet.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
        }
    }

    /// Root: the registry's timers.
    pub(crate) fn pset_timers(&mut self, now: std::time::Instant) {
        if self.is_root() {
            let actions = self.registry.psets.on_timer(now);
            self.pset_actions(actions);
            self.serve_held(now);
        }
    }
}
