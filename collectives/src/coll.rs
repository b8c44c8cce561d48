//! The collective operations on one team of a communicator: argument checks, the algorithm
//! choice, the schedule, and its run.

use crate::algo::{binomial, dissemination, ring};
use crate::config::{AlgoConfig, Algorithm, CollOp};
use crate::error::{CollError, Result};
use crate::exec::CollRequest;
use crate::nodeshm::NodeShm;
use crate::op::Op;
use crate::p2p::{PointToPoint, Team};
use crate::schedule::{offsets, split_even, Region, Schedule};
use crate::twolevel::Levels;
use std::cell::Cell;

/// Collectives over a team of a communicator's ranks (usually all of them).
///
/// Every member must call the same operations in the same order (MPI's rule); each call
/// uses its own tag, so non-blocking collectives may overlap each other.
pub struct Collectives<C: PointToPoint> {
    comm: C,
    team: Team,
    seq: Cell<u32>,
    config: AlgoConfig,
    /// The tag the next call takes instead of drawing one (a phase of a composed operation).
    tag_override: Cell<Option<i32>>,
    /// Node-aware teams, when the communicator spans several nodes (two-level forms).
    levels: Option<Box<Levels<C>>>,
    /// The node's shared-memory collective buffer, when every member shares one node.
    shm: Option<NodeShm>,
}

pub(crate) fn bad(op: CollOp, detail: impl Into<String>) -> CollError {
    CollError::arg(op.name(), detail)
}

/// Operations whose receive buffer must be as long as the send buffer.
pub(crate) fn same_len(op: CollOp, send: &[u8], recv: &[u8]) -> Result<()> {
    if recv.len() != send.len() {
        return Err(bad(
            op,
            format!(
                "receive buffer is {} bytes, send is {}",
                recv.len(),
                send.len()
            ),
        ));
    }
    Ok(())
}

impl<C: PointToPoint> Collectives<C> {
    /// Collectives over all of `comm`, with algorithm settings from `IBDYN_COLL_ALGO`.
    /// `comm` should be a communicator's collective view.
    pub fn new(comm: C) -> Result<Self> {
        let config = AlgoConfig::from_env()?;
        Self::with_config(comm, config)
    }

    pub fn with_config(comm: C, config: AlgoConfig) -> Result<Self> {
        let team = Team::whole(comm.rank(), comm.size())?;
        Ok(Self::on_team(comm, team, config))
    }

    /// Collectives over `team` only (e.g. the processes of one node, or the node leaders).
    pub fn on_team(comm: C, team: Team, config: AlgoConfig) -> Self {
        Collectives {
            comm,
            team,
            seq: Cell::new(0),
            config,
            tag_override: Cell::new(None),
            levels: None,
            shm: None,
        }
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
    /// The programmatic override: `config_mut().force(op, algo)`.
    pub fn config_mut(&mut self) -> &mut AlgoConfig {
        &mut self.config
    }

    /// Tags: one per collective call, multiples of 8 so a composed (two-level) operation can
    /// give its phases distinct tags.
    pub(crate) fn next_tag(&self) -> i32 {
        if let Some(t) = self.tag_override.take() {
            return t;
        }
        let s = self.seq.get();
        self.seq.set(s.wrapping_add(1));
        ((s & 0x0fff_ffff) << 3) as i32
    }

    pub(crate) fn set_tag_override(&self, tag: Option<i32>) {
        self.tag_override.set(tag);
    }

    pub(crate) fn set_levels(&mut self, levels: Levels<C>) {
        self.levels = Some(Box::new(levels));
    }

    /// Marks every member as sharing one node: blocking collectives may then go through the
    /// node's shared-memory collective buffer.
    pub(crate) fn set_node_local(&mut self) {
        if self.size() > 1 {
            self.shm = Some(NodeShm::new());
        }
    }

    pub(crate) fn node_shm(&self) -> Option<&NodeShm> {
        self.shm.as_ref()
    }

    /// Whether blocking collectives of this team may use a node shared-memory buffer.
    pub fn is_node_local(&self) -> bool {
        self.shm.is_some()
    }

    /// Whether this collective spans several nodes and so has two-level forms.
    pub fn is_two_level(&self) -> bool {
        self.levels.is_some()
    }

    /// The two-level form of `op`, unless flat is wanted or there is none.
    pub(crate) fn two_level(&self, op: CollOp) -> Option<&Levels<C>> {
        if self.config.is_flat(op) {
            return None;
        }
        self.levels.as_deref()
    }

    /// As `two_level`, for a non-blocking form: those compose their phases from the
    /// default algorithms, so a forced algorithm keeps the operation flat (and forced).
    pub(crate) fn two_level_nb(&self, op: CollOp) -> Option<&Levels<C>> {
        self.two_level(op)
            .filter(|_| self.config.forced(op).is_none())
    }

    /// As `two_level`, for a reduction: only if it keeps the order `o` needs.
    /// A non-commutative one with a reordering algorithm forced stays flat (which refuses it).
    pub(crate) fn two_level_for(&self, op: CollOp, o: &Op) -> Option<&Levels<C>> {
        let reorders = |c: CollOp| self.config.forced(c).is_some_and(|a| a.reorders(c));
        if !o.is_commutative() && (reorders(CollOp::Reduce) || reorders(op)) {
            return None;
        }
        self.two_level(op).filter(|l| l.keeps_order(o))
    }

    pub(crate) fn check_root(&self, op: CollOp, root: usize) -> Result<()> {
        if root >= self.size() {
            return Err(bad(
                op,
                format!("root {root} is not below the team size {}", self.size()),
            ));
        }
        Ok(())
    }

    pub(crate) fn check_op(&self, op: CollOp, o: &Op, len: usize) -> Result<usize> {
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

    pub(crate) fn start<'b>(
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

    // ---- barrier ----

    pub fn barrier(&self) -> Result<()> {
        if let Some(l) = self.two_level(CollOp::Barrier) {
            return l.barrier(self);
        }
        if let Some(b) = self.node_buf(CollOp::Barrier, 0, 0)? {
            return self.shm_barrier(&b);
        }
        self.ibarrier()?.wait()
    }

    pub fn ibarrier(&self) -> Result<CollRequest<'_, C>> {
        self.start_barrier(false)
    }

    /// The node leaders' barrier inside a two-level one: the leader that arrived last
    /// leaves last (see `dissemination::barrier_last_out`).
    pub(crate) fn leaders_barrier(&self) -> Result<()> {
        self.start_barrier(true)?.wait()
    }

    fn start_barrier(&self, last_out: bool) -> Result<CollRequest<'_, C>> {
        let tag = self.next_tag();
        let (me, p) = (self.rank(), self.size());
        if let Some(l) = self.two_level_nb(CollOp::Barrier) {
            return self.start(tag, l.barrier_schedule(me), None, &[], &mut []);
        }
        let mut s = Schedule::new();
        match self.config.choose(CollOp::Barrier, 0, p, true)? {
            Algorithm::Binomial => {
                binomial::gather_tree(&mut s, me, p, 0, &|_, _| Region::empty());
                binomial::bcast(&mut s, me, p, 0, Region::empty());
            }
            _ if last_out => dissemination::barrier_last_out(&mut s, me, p),
            _ => dissemination::barrier(&mut s, me, p),
        }
        self.start(tag, s, None, &[], &mut [])
    }

    // ---- bcast ----

    pub fn bcast(&self, buf: &mut [u8], root: usize) -> Result<()> {
        if let Some(l) = self.two_level(CollOp::Bcast) {
            self.check_root(CollOp::Bcast, root)?;
            return l.bcast(self, buf, root);
        }
        if let Some(b) = self.node_buf(CollOp::Bcast, buf.len(), root)? {
            return self.shm_bcast(&b, buf);
        }
        self.ibcast(buf, root)?.wait()
    }

    pub fn ibcast<'b>(&'b self, buf: &'b mut [u8], root: usize) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.check_root(CollOp::Bcast, root)?;
        let (me, p, n) = (self.rank(), self.size(), buf.len());
        if let Some(l) = self.two_level_nb(CollOp::Bcast) {
            return self.start(tag, l.bcast_schedule(me, root, n), None, &[], buf);
        }
        let mut s = Schedule::new();
        let all = Region::recv(0, n);
        match self.config.choose(CollOp::Bcast, n, p, true)? {
            Algorithm::ScatterAllgather => {
                // Chunk j (of relative rank j) is bytes [j c, (j + 1) c) clipped to n.
                let c = n.div_ceil(p);
                let range = |lo: usize, hi: usize| {
                    let (a, b) = ((lo * c).min(n), (hi * c).min(n));
                    Region::recv(a, b - a)
                };
                binomial::scatter_tree(&mut s, me, p, root, &range);
                let rel = (me + p - root) % p;
                ring::allgather(&mut s, rel, p, &|r| (r + root) % p, &|j| range(j, j + 1));
            }
            _ => binomial::bcast(&mut s, me, p, root, all),
        }
        self.start(tag, s, None, &[], buf)
    }
}

/// Byte offsets of `count` elements of `esz` bytes cut into `p` near-equal blocks.
pub(crate) fn block_offsets(count: usize, p: usize, esz: usize) -> Vec<usize> {
    offsets(&split_even(count, p))
        .into_iter()
        .map(|o| o * esz)
        .collect()
}

/// Receive-side (or send-side) blocks of a v-operation, checked against the buffer.
pub(crate) fn blocks_of(
    op: CollOp,
    counts: &[usize],
    displs: &[usize],
    p: usize,
    len: usize,
) -> Result<Vec<Region>> {
    if counts.len() != p || displs.len() != p {
        return Err(bad(
            op,
            format!(
                "{} counts and {} displacements for {p} ranks",
                counts.len(),
                displs.len()
            ),
        ));
    }
    counts
        .iter()
        .zip(displs)
        .enumerate()
        .map(|(i, (&c, &d))| match d.checked_add(c) {
            Some(e) if e <= len => Ok(Region::recv(d, c)),
            _ => Err(bad(
                op,
                format!("block {i} ({c} bytes at {d}) lies outside the {len}-byte buffer"),
            )),
        })
        .collect()
}
