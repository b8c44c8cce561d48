//! The front end: the collective operations on one team of a communicator. Each call draws
//! its tag, asks `tier::select` (through `route`) where it runs, and hands it to that tier:
//! the node's shared-memory buffer (`nodeshm.rs`), the two-level forms (`twolevel.rs`), or
//! one flat schedule (`flat/`). Operations the tier table gives the flat tier only are in
//! `coll/flat_only.rs`.

use crate::config::{AlgoConfig, CollOp};
use crate::error::{CollError, Result};
use crate::exec::CollRequest;
use crate::flat::Flat;
use crate::nodeshm::NodeShm;
use crate::op::Op;
use crate::p2p::{PointToPoint, Team};
use crate::tier::{select, Call, Shape, Tier};
use crate::twolevel::{group_by_node, Levels};
use std::cell::Cell;

mod flat_only;

/// Collectives over a team of a communicator's ranks (usually all of them).
///
/// Every member must call the same operations in the same order (MPI's rule); each call
/// uses its own tag, so non-blocking collectives may overlap each other.
pub struct Collectives<C: PointToPoint> {
    flat: Flat<C>,
    seq: Cell<u32>,
    tiers: Tiers<C>,
}

/// The tiers a team has besides the flat one.
enum Tiers<C: PointToPoint> {
    None,
    /// Every member (several) on one node: the node's collective buffer.
    Node(NodeShm),
    /// Several nodes, several processes on some node: the two-level forms.
    Nodes(Box<Levels<C>>),
}

/// Where one call runs: `select`'s tier with the state it runs on.
enum Route<'a, C: PointToPoint> {
    Flat,
    NodeShm(&'a NodeShm),
    TwoLevel(&'a Levels<C>),
    Lanes(&'a Levels<C>),
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
            flat: Flat::new(comm, team, config),
            seq: Cell::new(0),
            tiers: Tiers::None,
        }
    }

    pub fn comm(&self) -> &C {
        self.flat.comm()
    }
    pub fn team(&self) -> &Team {
        self.flat.team()
    }
    /// This process's rank in the team.
    pub fn rank(&self) -> usize {
        self.flat.rank()
    }
    pub fn size(&self) -> usize {
        self.flat.size()
    }
    pub fn config(&self) -> &AlgoConfig {
        self.flat.config()
    }
    /// The programmatic override: `config_mut().force(op, algo)`.
    pub fn config_mut(&mut self) -> &mut AlgoConfig {
        self.flat.config_mut()
    }

    /// Whether blocking collectives of this team may use a node shared-memory buffer.
    pub fn is_node_local(&self) -> bool {
        matches!(self.tiers, Tiers::Node(_))
    }

    /// Whether this collective spans several nodes and so has two-level forms.
    pub fn is_two_level(&self) -> bool {
        matches!(self.tiers, Tiers::Nodes(_))
    }

    /// Tags: one per collective call, multiples of 8 so a composed (two-level) operation can
    /// give its phases distinct tags.
    pub(crate) fn next_tag(&self) -> i32 {
        let s = self.seq.get();
        self.seq.set(s.wrapping_add(1));
        ((s & 0x0fff_ffff) << 3) as i32
    }

    fn route(&self, call: Call<'_>) -> Route<'_, C> {
        let shape = match &self.tiers {
            Tiers::None => Shape::Flat,
            Tiers::Node(_) => Shape::Node,
            Tiers::Nodes(l) => l.shape(),
        };
        match (select(self.config(), shape, call), &self.tiers) {
            (Tier::NodeShm, Tiers::Node(shm)) => Route::NodeShm(shm),
            (Tier::TwoLevel, Tiers::Nodes(l)) => Route::TwoLevel(l),
            (Tier::Lanes, Tiers::Nodes(l)) => Route::Lanes(l),
            _ => Route::Flat,
        }
    }

    // ---- barrier ----

    pub fn barrier(&self) -> Result<()> {
        match self.route(Call::blocking(CollOp::Barrier, 0)) {
            Route::TwoLevel(l) => l.barrier(self.next_tag()),
            Route::NodeShm(shm) => shm.barrier(&self.flat, self.next_tag()),
            _ => self.ibarrier()?.wait(),
        }
    }

    pub fn ibarrier(&self) -> Result<CollRequest<'_, C>> {
        let tag = self.next_tag();
        match self.route(Call::nonblocking(CollOp::Barrier, 0)) {
            Route::TwoLevel(l) => {
                let s = l.barrier_schedule(self.rank());
                self.flat.start(tag, s, None, &[], &mut [])
            }
            _ => self.flat.ibarrier(tag, false),
        }
    }

    // ---- bcast ----

    pub fn bcast(&self, buf: &mut [u8], root: usize) -> Result<()> {
        match self.route(Call::blocking(CollOp::Bcast, buf.len()).root(root)) {
            Route::TwoLevel(l) => {
                self.flat.check_root(CollOp::Bcast, root)?;
                l.bcast(&self.flat, self.next_tag(), buf, root)
            }
            Route::NodeShm(shm) => shm.bcast(&self.flat, self.next_tag(), buf),
            _ => self.ibcast(buf, root)?.wait(),
        }
    }

    pub fn ibcast<'b>(&'b self, buf: &'b mut [u8], root: usize) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.flat.check_root(CollOp::Bcast, root)?;
        match self.route(Call::nonblocking(CollOp::Bcast, buf.len()).root(root)) {
            Route::TwoLevel(l) => {
                let s = l.bcast_schedule(self.rank(), root, buf.len());
                self.flat.start(tag, s, None, &[], buf)
            }
            _ => self.flat.ibcast(tag, buf, root),
        }
    }

    // ---- reductions ----

    /// Reduces every rank's `send` into `recv` at `root` (`recv` is ignored elsewhere).
    pub fn reduce(&self, send: &[u8], recv: &mut [u8], op: &Op, root: usize) -> Result<()> {
        let call = Call::blocking(CollOp::Reduce, send.len())
            .root(root)
            .reducing(op);
        match self.route(call) {
            Route::TwoLevel(l) => {
                self.flat.check_root(CollOp::Reduce, root)?;
                l.reduce(&self.flat, self.next_tag(), send, recv, op, root)
            }
            Route::NodeShm(shm) => shm.reduce(&self.flat, self.next_tag(), send, recv, op),
            _ => self.ireduce(send, recv, op, root)?.wait(),
        }
    }

    /// The non-blocking form of `reduce`.
    pub fn ireduce<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        self.flat.ireduce(self.next_tag(), send, recv, op, root)
    }

    pub fn allreduce(&self, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        match self.route(Call::blocking(CollOp::Allreduce, send.len()).reducing(op)) {
            Route::TwoLevel(l) => l.allreduce(&self.flat, self.next_tag(), send, recv, op),
            Route::NodeShm(shm) => shm.allreduce(&self.flat, self.next_tag(), send, recv, op),
            _ => self.iallreduce(send, recv, op)?.wait(),
        }
    }

    pub fn iallreduce<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        match self.route(Call::nonblocking(CollOp::Allreduce, send.len()).reducing(op)) {
            Route::TwoLevel(l) => {
                self.flat.allreduce_args(op, send, recv)?;
                let s = l.allreduce_schedule(self.rank(), send.len(), op.is_commutative());
                self.flat.start(tag, s, Some(op), send, recv)
            }
            _ => self.flat.iallreduce(tag, send, recv, op),
        }
    }

    // ---- data movement ----

    /// Gathers every rank's `send` (equal sizes) into `recv` at `root` (ignored elsewhere).
    pub fn gather(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()> {
        match self.route(Call::blocking(CollOp::Gather, send.len()).root(root)) {
            Route::NodeShm(shm) => shm.gather(&self.flat, self.next_tag(), send, recv),
            _ => self.igather(send, recv, root)?.wait(),
        }
    }

    /// The non-blocking form of `gather`.
    pub fn igather<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        self.flat.igather(self.next_tag(), send, recv, root)
    }

    /// Every rank's `send` (equal sizes) into every `recv`, in rank order.
    pub fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        match self.route(Call::blocking(CollOp::Allgather, send.len() * self.size())) {
            Route::TwoLevel(l) => l.allgather(&self.flat, self.next_tag(), send, recv, false),
            Route::Lanes(l) => l.allgather(&self.flat, self.next_tag(), send, recv, true),
            Route::NodeShm(shm) => shm.allgather(&self.flat, self.next_tag(), send, recv),
            Route::Flat => self.iallgather(send, recv)?.wait(),
        }
    }

    /// The non-blocking form of `allgather`.
    pub fn iallgather<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
        self.flat.iallgather(self.next_tag(), send, recv)
    }
}

impl<C: PointToPoint + Clone> Collectives<C> {
    /// Adds the node-aware tiers from `node_ids` (one per rank): the node's collective buffer
    /// when every rank is on one node, the two-level forms when there are several nodes with
    /// several processes on some node. Only for collectives over a whole communicator.
    pub fn with_nodes(mut self, node_ids: &[u32]) -> Result<Self> {
        let p = self.size();
        if node_ids.len() != p || self.team().comm_rank(p - 1) != p - 1 {
            return Err(CollError::arg(
                "two-level",
                format!("{} node ids for {p} ranks", node_ids.len()),
            ));
        }
        let (members, node_of) = group_by_node(node_ids);
        if members.len() == 1 && p > 1 {
            self.tiers = Tiers::Node(NodeShm::new());
        }
        if members.len() < 2 || members.len() == p {
            return Ok(self);
        }
        let levels = Levels::new(&self.flat, members, node_of)?;
        self.tiers = Tiers::Nodes(Box::new(levels));
        Ok(self)
    }
}
