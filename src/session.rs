//! MPI Sessions: a session is this process's handle on the runtime that needs no
//! `ibdyn::initialize()`, with the process sets the runtime knows; communicators are made
//! from the groups of those sets (see [`GroupCommunicators`]).

use crate::pset::{self, SELF, WORLD};
use crate::{CommError, Gpid, Group, Result};
use ibdyn_intercomm::process;
use std::cell::RefCell;
use std::time::Duration;

/// How a session is started (MPI_Session_init's info).
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// How long the members of a communicator made from a group wait for each other before
    /// the creation fails naming the missing or disagreeing members.
    pub group_timeout: Duration,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            group_timeout: process::DEFAULT_GROUP_TIMEOUT,
        }
    }
}

/// What a session knows about one process set (MPI_Session_get_pset_info).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsetInfo {
    /// The set's name.
    pub name: String,
    /// How many processes it holds (`mpi_size`).
    pub mpi_size: usize,
    /// Whether this process is one of them.
    pub is_member: bool,
}

/// A session (MPI_Session). Several may live at once, with or without a universe; after
/// all have finalised a new one can start in the same process.
pub struct Session {
    me: Gpid,
    epoch: u64,
    /// Set names and members; indices never move (sets the daemons made are appended as
    /// this session learns them).
    psets: RefCell<Vec<(String, Group)>>,
    finalized: bool,
}

impl Session {
    /// Starts a session (MPI_Session_init): joins the runtime of this process, opening it
    /// if no universe or session holds it, and reads the process sets: `mpi://WORLD`,
    /// `mpi://SELF`, then the launcher's (the job-level PMI key `ibdyn-psets`).
    pub fn init(opts: SessionOptions) -> Result<Session> {
        if opts.group_timeout.is_zero() {
            return Err(CommError::InvalidArgument(
                "SessionOptions::group_timeout must be above zero".into(),
            ));
        }
        let start = process::session_acquire()?;
        let built = Self::build(&start);
        match built {
            Ok(psets) => {
                process::set_group_timeout(opts.group_timeout);
                crate::session_live::started(start.epoch);
                Ok(Session {
                    me: start.me,
                    epoch: start.epoch,
                    psets: RefCell::new(psets),
                    finalized: false,
                })
            }
            Err(e) => {
                let _ = process::session_release();
                Err(e)
            }
        }
    }

    fn build(start: &process::SessionStart) -> Result<Vec<(String, Group)>> {
        let job = start.me.job;
        let of = |ranks: &mut dyn Iterator<Item = u32>| {
            Group::new(ranks.map(|rank| Gpid { job, rank }).collect())
        };
        let mut psets = vec![
            (WORLD.to_string(), of(&mut (0..start.world_size))),
            (SELF.to_string(), Group::new(vec![start.me])),
        ];
        if let Some(defs) = &start.pset_defs {
            for (name, ranks) in pset::parse_defs(defs, start.world_size)? {
                psets.push((name, of(&mut ranks.into_iter())));
            }
        }
        Ok(psets)
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.finalized {
            Err(CommError::SessionFinalized)
        } else {
            Ok(())
        }
    }

    /// This session's init epoch: the number of inits (sessions and universes) this process
    /// has made so far, this one included. No MPI counterpart.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// How many process sets the session knows (MPI_Session_get_num_psets).
    pub fn num_psets(&self) -> Result<usize> {
        self.check()?;
        Ok(self.psets.borrow().len())
    }

    /// The name of the `index`-th process set (MPI_Session_get_nth_pset).
    pub fn nth_pset(&self, index: usize) -> Result<String> {
        self.check()?;
        let psets = self.psets.borrow();
        psets
            .get(index)
            .map(|(n, _)| n.clone())
            .ok_or(CommError::PsetIndex {
                index,
                count: psets.len(),
            })
    }

    /// This process.
    pub(crate) fn me(&self) -> Gpid {
        self.me
    }

    /// The members of a set this session knows already, if it does.
    pub(crate) fn known(&self, name: &str) -> Option<Group> {
        let psets = self.psets.borrow();
        psets
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, g)| g.clone())
    }

    /// Adds a set the daemons made (kept where it is if already known).
    pub(crate) fn learn(&self, name: &str, group: Group) {
        if self.known(name).is_none() {
            self.psets.borrow_mut().push((name.to_string(), group));
        }
    }

    /// A set by name: one this session knows, else one the daemons made (learnt now).
    /// The group carries this session's epoch.
    fn find(&self, name: &str) -> Result<Group> {
        self.check()?;
        pset::check_name(name)?;
        if let Some(g) = self.known(name) {
            return Ok(g.of_session(self.epoch));
        }
        if crate::pset_ops::lookup(self, name)? {
            if let Some(g) = self.known(name) {
                return Ok(g.of_session(self.epoch));
            }
        }
        Err(CommError::UnknownPset {
            name: name.to_string(),
            known: self
                .psets
                .borrow()
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// What the session knows about the set `name` (MPI_Session_get_pset_info).
    pub fn pset_info(&self, name: &str) -> Result<PsetInfo> {
        let g = self.find(name)?;
        Ok(PsetInfo {
            name: name.to_string(),
            mpi_size: g.size(),
            is_member: g.rank_of(self.me).is_some(),
        })
    }

    /// The group of the set `name` (MPI_Group_from_session_pset).
    pub fn group_from_pset(&self, name: &str) -> Result<Group> {
        self.find(name)
    }

    /// Ends the session (MPI_Session_finalize): waits (bounded) for its queued messages to
    /// leave and gives up its claim on the runtime. Its communicators should be freed
    /// first. Later calls on the session fail with `SessionFinalized`, and its groups are
    /// refused with `StaleSession`; dropping the session finalises it too (logging an error
    /// instead of returning it).
    pub fn finalize(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.finalized, true) {
            return Err(CommError::SessionFinalized);
        }
        crate::session_live::ended(self.epoch);
        process::session_release()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.finalized {
            if let Err(e) = self.finalize() {
                tracing::warn!("session finalize: {e}");
            }
        }
    }
}
