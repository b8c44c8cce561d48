//! `--elastic`: the worker set follows the job's resource changes (`ibdyn resize`) through
//! MPI Sessions. The job's rank 0 is the master; every other process (the job's own, and
//! those a grow starts) is a worker with a two-process communicator to the master, made from
//! the group {master, worker}. A grow's new workers join as soon as the master sees the
//! change pending; a shrink's retired workers are released (they finish their tiles first),
//! and the change is finalised once they all have been let go.

use std::time::{Duration, Instant};

use ibdyn::traits::*;
use ibdyn::{ChangeState, Gpid, Group, IntraCommunicator, PsetChange, Session, SessionOptions};

use crate::error::{Error, Result};

/// How often the master asks the process manager for a pending change.
const POLL_EVERY: Duration = Duration::from_millis(50);
/// How long a test hook waits for a change.
const AWAIT_LIMIT: Duration = Duration::from_secs(60);

fn pair(master: Gpid, worker: Gpid) -> Result<IntraCommunicator> {
    let tag = format!("raytrace:{}.{}", worker.job, worker.rank);
    Ok(Group::new(vec![master, worker]).create_comm(&tag)?)
}

/// What this process is in an elastic render.
pub enum Role {
    Master(Box<Elastic>, Vec<(Gpid, IntraCommunicator)>),
    /// A worker's communicator with the master (rank 0 in it).
    Worker(Session, IntraCommunicator),
}

/// A change of the worker set, for the master's loop.
pub enum Event {
    Join(Gpid, IntraCommunicator),
    Retire(Gpid),
}

/// The master's side: the job's main set and the change being applied.
pub struct Elastic {
    session: Session,
    me: Gpid,
    main: String,
    /// A shrink whose retired workers are still being released.
    retiring: Option<(PsetChange, Vec<Gpid>)>,
    last_poll: Instant,
    /// Test hooks: shares of done tiles at which to wait for a change.
    await_at: Vec<f64>,
}

fn session() -> Result<Session> {
    Ok(Session::init(SessionOptions {
        group_timeout: Duration::from_secs(60),
    })?)
}

/// Starts this process's part: the master (the job's first rank) with its first workers, or
/// a worker.
pub fn start(await_at: Vec<f64>) -> Result<Role> {
    let s = session()?;
    let me = s.group_from_pset(ibdyn::PSET_SELF)?.members()[0];
    // Started by a grow: learn the main set (its first member is the master).
    let added = s
        .recv_res_change(ibdyn::PSET_WORLD)?
        .filter(|c| c.included && c.kind.starts());
    if let Some(c) = added {
        let (main, _) = s.integrate_res_change(&c.delta, None)?;
        let master = s.group_from_pset(&main)?.members()[0];
        let comm = pair(master, me)?;
        return Ok(Role::Worker(s, comm));
    }
    let world = s.group_from_pset(ibdyn::PSET_WORLD)?;
    let master = world.members()[0];
    if me != master {
        let comm = pair(master, me)?;
        return Ok(Role::Worker(s, comm));
    }
    let mut first = Vec::new();
    for &w in &world.members()[1..] {
        first.push((w, pair(me, w)?));
    }
    Ok(Role::Master(
        Box::new(Elastic {
            session: s,
            me,
            main: ibdyn::PSET_WORLD.to_string(),
            retiring: None,
            last_poll: Instant::now(),
            await_at,
        }),
        first,
    ))
}

impl Elastic {
    fn pending(&self) -> Result<Option<PsetChange>> {
        Ok(self
            .session
            .query_pset_op(ibdyn::PSET_SELF, &self.main)?
            .filter(|c| c.state == ChangeState::Pending))
    }

    /// The changes to apply now; `done` is the share of tiles done.
    pub fn poll(&mut self, done: f64, quiet: bool) -> Result<Vec<Event>> {
        if self.retiring.is_some() {
            return Ok(Vec::new());
        }
        let hook = self.await_at.first().is_some_and(|&a| done >= a);
        if !hook && self.last_poll.elapsed() < POLL_EVERY {
            return Ok(Vec::new());
        }
        self.last_poll = Instant::now();
        let mut change = self.pending()?;
        if hook {
            self.await_at.remove(0);
            println!("raytrace: waiting for a resize");
            let end = Instant::now() + AWAIT_LIMIT;
            while change.is_none() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(5));
                change = self.pending()?;
            }
        }
        let Some(c) = change else {
            return Ok(Vec::new());
        };
        self.session
            .integrate_res_change(&c.delta, Some(&c.new_main))?;
        let delta = self.session.group_from_pset(&c.delta)?;
        if !quiet {
            eprintln!("raytrace: {} of {} worker(s)", c.op.name(), delta.size());
        }
        if c.op.starts() {
            let mut events = Vec::new();
            for &w in delta.members() {
                events.push(Event::Join(w, pair(self.me, w)?));
            }
            self.session.finalize_pset_op(&self.main)?;
            self.main = c.new_main;
            return Ok(events);
        }
        if delta.rank_of(self.me).is_some() {
            return Err(Error::Usage(
                "a resize retired the master (rank 0 of the main set)".into(),
            ));
        }
        let retired: Vec<Gpid> = delta.members().to_vec();
        self.retiring = Some((c, retired.clone()));
        Ok(retired.into_iter().map(Event::Retire).collect())
    }

    /// Once every retired worker has been let go, the shrink is finalised.
    pub fn settle(&mut self, released: impl Fn(Gpid) -> bool) -> Result<()> {
        let done = match &self.retiring {
            Some((_, ws)) => ws.iter().all(|&w| released(w)),
            None => false,
        };
        if done {
            let (c, _) = self.retiring.take().expect("checked");
            self.session.finalize_pset_op(&self.main)?;
            self.main = c.new_main;
        }
        Ok(())
    }
}
