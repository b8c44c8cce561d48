//! The flat tier: an operation as one schedule over one team, by the algorithm
//! `AlgoConfig::choose` names, started on the team's communicator under the tag the caller
//! drew. The other tiers run their steps as flat operations on smaller teams (one node's
//! processes, the node leaders, a lane), under tags derived from the one the call drew.

mod movement;
mod reductions;
mod sync;

use crate::config::{AlgoConfig, CollOp};
use crate::error::{CollError, Result};
use crate::exec::CollRequest;
use crate::op::Op;
use crate::p2p::{PointToPoint, Team};
use crate::schedule::Schedule;

/// A team of a communicator's ranks and its algorithm settings.
pub(crate) struct Flat<C: PointToPoint> {
    comm: C,
    team: Team,
    config: AlgoConfig,
}

/// An argument error of `op`.
pub(crate) fn bad(op: CollOp, detail: impl Into<String>) -> CollError {
    CollError::arg(op.name(), detail)
}

impl<C: PointToPoint> Flat<C> {
    pub fn new(comm: C, team: Team, config: AlgoConfig) -> Self {
        Flat { comm, team, config }
    }

    pub fn comm(&self) -> &C {
        &self.comm
    }
    pub fn team(&self) -> &Team {
        &self.team
    }
    /// This process's rank in the team.
    pub fn rank(&self) -> usize {
        self.team.rank()
    }
    pub fn size(&self) -> usize {
        self.team.size()
    }
    pub fn config(&self) -> &AlgoConfig {
        &self.config
    }
    pub fn config_mut(&mut self) -> &mut AlgoConfig {
        &mut self.config
    }

    pub fn check_root(&self, op: CollOp, root: usize) -> Result<()> {
        if root >= self.size() {
            return Err(bad(
                op,
                format!("root {root} is not below the team size {}", self.size()),
            ));
        }
        Ok(())
    }

    /// The number of `o`'s elements in `len` bytes (which must be a whole number of them).
    pub fn check_op(&self, op: CollOp, o: &Op, len: usize) -> Result<usize> {
        if !len.is_multiple_of(o.elem_size()) {
            return Err(bad(
                op,
                format!(
                    "{len} bytes is not a whole number of {}-byte elements",
                    o.elem_size()
                ),
            ));
        }
        Ok(len / o.elem_size())
    }

    /// Starts `sched` (peers are team ranks) under `tag`.
    pub fn start<'b>(
        &'b self,
        tag: i32,
        mut sched: Schedule,
        op: Option<&Op>,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
        sched.map_peers(|r| self.team.comm_rank(r));
        CollRequest::start(&self.comm, sched, tag, op.cloned(), send, recv)
    }
}
