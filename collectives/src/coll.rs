//! The collective operations on one team of a communicator: argument checks, the algorithm
//! choice, the schedule, and its run.

use crate::algo::{
    binomial, bruck, dissemination, linear, pairwise, rabenseifner, recursive_doubling, ring, scan,
};
use crate::config::{AlgoConfig, Algorithm, CollOp};
use crate::error::{CollError, Result};
use crate::exec::CollRequest;
use crate::op::Op;
use crate::p2p::{PointToPoint, Team};
use crate::schedule::{offsets, split_even, Region, Schedule};
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
}

fn bad(op: CollOp, detail: impl Into<String>) -> CollError {
    CollError::arg(op.name(), detail)
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
    fn next_tag(&self) -> i32 {
        let s = self.seq.get();
        self.seq.set(s.wrapping_add(1));
        ((s & 0x0fff_ffff) << 3) as i32
    }

    fn check_root(&self, op: CollOp, root: usize) -> Result<()> {
        if root >= self.size() {
            return Err(bad(
                op,
                format!("root {root} is not below the team size {}", self.size()),
            ));
        }
        Ok(())
    }

    fn check_op(&self, op: CollOp, o: &Op, len: usize) -> Result<usize> {
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

    fn start<'b>(
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
        self.ibarrier()?.wait()
    }

    pub fn ibarrier(&self) -> Result<CollRequest<'_, C>> {
        let tag = self.next_tag();
        let (me, p) = (self.rank(), self.size());
        let mut s = Schedule::new();
        match self.config.choose(CollOp::Barrier, 0, p, true)? {
            Algorithm::Binomial => {
                binomial::gather_tree(&mut s, me, p, 0, &|_, _| Region::empty());
                binomial::bcast(&mut s, me, p, 0, Region::empty());
            }
            _ => dissemination::barrier(&mut s, me, p),
        }
        self.start(tag, s, None, &[], &mut [])
    }

    // ---- bcast ----

    pub fn bcast(&self, buf: &mut [u8], root: usize) -> Result<()> {
        self.ibcast(buf, root)?.wait()
    }

    pub fn ibcast<'b>(&'b self, buf: &'b mut [u8], root: usize) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.check_root(CollOp::Bcast, root)?;
        let (me, p, n) = (self.rank(), self.size(), buf.len());
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

    // ---- reductions ----

    /// Reduces every rank's `send` into `recv` at `root` (`recv` is ignored elsewhere).
    pub fn reduce(&self, send: &[u8], recv: &mut [u8], op: &Op, root: usize) -> Result<()> {
        self.ireduce(send, recv, op, root)?.wait()
    }

    /// The non-blocking form of `reduce`.
    pub fn ireduce<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.check_root(CollOp::Reduce, root)?;
        let (me, p, n) = (self.rank(), self.size(), send.len());
        let count = self.check_op(CollOp::Reduce, op, n)?;
        let out_len = if me == root {
            if recv.len() != n {
                return Err(bad(
                    CollOp::Reduce,
                    format!("root's receive buffer is {} bytes, send is {n}", recv.len()),
                ));
            }
            n
        } else {
            0
        };
        let mut s = Schedule::new();
        let input = Region::send(0, n);
        let out = Region::recv(0, out_len);
        match self
            .config
            .choose(CollOp::Reduce, n, p, op.is_commutative())?
        {
            Algorithm::Rabenseifner => {
                let acc = s.scratch(n);
                s.local().copy(input, acc);
                let off = block_offsets(count, p, op.elem_size());
                rabenseifner::reduce(&mut s, me, p, root, acc, &off, out);
            }
            _ => binomial::reduce(&mut s, me, p, root, op.is_commutative(), input, out),
        }
        self.start(tag, s, Some(op), send, recv)
    }

    pub fn allreduce(&self, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        self.iallreduce(send, recv, op)?.wait()
    }

    pub fn iallreduce<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let (me, p, n) = (self.rank(), self.size(), send.len());
        let count = self.check_op(CollOp::Allreduce, op, n)?;
        if recv.len() != n {
            return Err(bad(
                CollOp::Allreduce,
                format!("receive buffer is {} bytes, send is {n}", recv.len()),
            ));
        }
        let mut s = Schedule::new();
        let acc = Region::recv(0, n);
        match self
            .config
            .choose(CollOp::Allreduce, n, p, op.is_commutative())?
        {
            Algorithm::Binomial => {
                binomial::reduce(
                    &mut s,
                    me,
                    p,
                    0,
                    op.is_commutative(),
                    Region::send(0, n),
                    if me == 0 { acc } else { Region::recv(0, 0) },
                );
                binomial::bcast(&mut s, me, p, 0, acc);
            }
            algo => {
                s.local().copy(Region::send(0, n), acc);
                let off = block_offsets(count, p, op.elem_size());
                match algo {
                    Algorithm::Ring => ring::allreduce(&mut s, me, p, acc, &off),
                    Algorithm::Rabenseifner => rabenseifner::allreduce(&mut s, me, p, acc, &off),
                    _ => recursive_doubling::allreduce(&mut s, me, p, acc),
                }
            }
        }
        self.start(tag, s, Some(op), send, recv)
    }

    /// Reduce-scatter with equal blocks: `send` holds p blocks of `recv.len()` bytes.
    pub fn reduce_scatter_block(&self, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        self.ireduce_scatter_block(send, recv, op)?.wait()
    }

    /// The non-blocking form of `reduce_scatter_block`.
    pub fn ireduce_scatter_block<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let p = self.size();
        let b = self.check_op(CollOp::ReduceScatterBlock, op, recv.len())?;
        if send.len() != p * recv.len() {
            return Err(bad(
                CollOp::ReduceScatterBlock,
                format!("send is {} bytes, not {p} x {}", send.len(), recv.len()),
            ));
        }
        self.reduce_scatter_inner(CollOp::ReduceScatterBlock, tag, send, recv, &vec![b; p], op)
    }

    /// Reduce-scatter: rank i gets `counts[i]` elements of the reduction of everyone's `send`.
    pub fn reduce_scatter(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &Op,
    ) -> Result<()> {
        self.ireduce_scatter(send, recv, counts, op)?.wait()
    }

    /// The non-blocking form of `reduce_scatter`.
    pub fn ireduce_scatter<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let (me, p, esz) = (self.rank(), self.size(), op.elem_size());
        if counts.len() != p {
            return Err(bad(
                CollOp::ReduceScatter,
                format!("{} counts for {p} ranks", counts.len()),
            ));
        }
        let total: usize = counts.iter().sum();
        if send.len() != total * esz || recv.len() != counts[me] * esz {
            return Err(bad(
                CollOp::ReduceScatter,
                format!(
                    "send {} / receive {} bytes do not match counts (total {total}, mine {})",
                    send.len(),
                    recv.len(),
                    counts[me]
                ),
            ));
        }
        self.reduce_scatter_inner(CollOp::ReduceScatter, tag, send, recv, counts, op)
    }

    #[allow(clippy::too_many_arguments)]
    fn reduce_scatter_inner<'b>(
        &'b self,
        which: CollOp,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
        let (me, p, n) = (self.rank(), self.size(), send.len());
        let off: Vec<usize> = offsets(counts)
            .into_iter()
            .map(|o| o * op.elem_size())
            .collect();
        let mut s = Schedule::new();
        let out = Region::recv(0, recv.len());
        let acc = s.scratch(n);
        match self.config.choose(which, n, p, op.is_commutative())? {
            Algorithm::Binomial => {
                binomial::reduce(
                    &mut s,
                    me,
                    p,
                    0,
                    op.is_commutative(),
                    Region::send(0, n),
                    if me == 0 { acc } else { Region::empty() },
                );
                let blocks: Vec<Region> = (0..p)
                    .map(|i| acc.sub(off[i], off[i + 1] - off[i]))
                    .collect();
                linear::scatter(&mut s, me, p, 0, &blocks, out);
            }
            Algorithm::Ring => {
                s.local().copy(Region::send(0, n), acc);
                ring::reduce_scatter(&mut s, me, p, acc, &off);
                s.local().copy(acc.sub(off[me], off[me + 1] - off[me]), out);
            }
            _ => {
                s.local().copy(Region::send(0, n), acc);
                rabenseifner::reduce_scatter(&mut s, me, p, acc, &off, out);
            }
        }
        self.start(tag, s, Some(op), send, recv)
    }

    /// Inclusive prefix reduction over ranks 0..=me.
    pub fn scan(&self, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        self.iscan(send, recv, op)?.wait()
    }

    /// The non-blocking form of `scan`.
    pub fn iscan<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let (me, p, n) = (self.rank(), self.size(), send.len());
        self.check_op(CollOp::Scan, op, n)?;
        if recv.len() != n {
            return Err(bad(
                CollOp::Scan,
                format!("receive buffer is {} bytes, send is {n}", recv.len()),
            ));
        }
        let mut s = Schedule::new();
        let out = Region::recv(0, n);
        s.local().copy(Region::send(0, n), out);
        match self
            .config
            .choose(CollOp::Scan, n, p, op.is_commutative())?
        {
            Algorithm::Linear => scan::scan_linear(&mut s, me, p, out),
            _ => scan::scan_doubling(&mut s, me, p, out),
        }
        self.start(tag, s, Some(op), send, recv)
    }

    /// Exclusive prefix reduction over ranks 0..me; rank 0's `recv` is left untouched.
    pub fn exscan(&self, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        self.iexscan(send, recv, op)?.wait()
    }

    /// The non-blocking form of `exscan`.
    pub fn iexscan<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let (me, p, n) = (self.rank(), self.size(), send.len());
        self.check_op(CollOp::Exscan, op, n)?;
        if recv.len() != n {
            return Err(bad(
                CollOp::Exscan,
                format!("receive buffer is {} bytes, send is {n}", recv.len()),
            ));
        }
        let mut s = Schedule::new();
        let (input, out) = (Region::send(0, n), Region::recv(0, n));
        match self
            .config
            .choose(CollOp::Exscan, n, p, op.is_commutative())?
        {
            Algorithm::Linear => scan::exscan_linear(&mut s, me, p, input, out),
            _ => scan::exscan_doubling(&mut s, me, p, input, out),
        }
        self.start(tag, s, Some(op), send, recv)
    }

    // ---- data movement ----

    /// Gathers every rank's `send` (equal sizes) into `recv` at `root` (ignored elsewhere).
    pub fn gather(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()> {
        self.igather(send, recv, root)?.wait()
    }

    /// The non-blocking form of `gather`.
    pub fn igather<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.check_root(CollOp::Gather, root)?;
        let (me, p, b) = (self.rank(), self.size(), send.len());
        let rlen = if me == root { p * b } else { 0 };
        if me == root && recv.len() != rlen {
            return Err(bad(
                CollOp::Gather,
                format!(
                    "root's receive buffer is {} bytes, not {p} x {b}",
                    recv.len()
                ),
            ));
        }
        let mut s = Schedule::new();
        let (src, dst) = (Region::send(0, b), Region::recv(0, rlen));
        match self.config.choose(CollOp::Gather, b, p, true)? {
            Algorithm::Linear => {
                let blocks: Vec<Region> = (0..p)
                    .map(|i| {
                        if me == root {
                            dst.sub(i * b, b)
                        } else {
                            Region::empty()
                        }
                    })
                    .collect();
                linear::gather(&mut s, me, p, root, src, &blocks);
            }
            _ => binomial::gather(&mut s, me, p, root, b, src, dst),
        }
        self.start(tag, s, None, send, recv)
    }

    /// Gathers `send` from every rank into the root's `recv` at byte `displs[i]`, `counts[i]`
    /// bytes from rank i. `counts`/`displs` matter at the root only.
    pub fn gatherv(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<()> {
        self.igatherv(send, recv, counts, displs, root)?.wait()
    }

    /// The non-blocking form of `gatherv`.
    pub fn igatherv<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.check_root(CollOp::Gatherv, root)?;
        let (me, p) = (self.rank(), self.size());
        let blocks = if me == root {
            blocks_of(CollOp::Gatherv, counts, displs, p, recv.len())?
        } else {
            vec![]
        };
        if me == root && send.len() != counts[root] {
            return Err(bad(
                CollOp::Gatherv,
                format!(
                    "root sends {} bytes but counts[{root}] is {}",
                    send.len(),
                    counts[root]
                ),
            ));
        }
        let mut s = Schedule::new();
        self.config.choose(CollOp::Gatherv, send.len(), p, true)?;
        linear::gather(&mut s, me, p, root, Region::send(0, send.len()), &blocks);
        self.start(tag, s, None, send, recv)
    }

    /// Scatters the root's `send` (p blocks of `recv.len()` bytes) into every `recv`.
    pub fn scatter(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()> {
        self.iscatter(send, recv, root)?.wait()
    }

    /// The non-blocking form of `scatter`.
    pub fn iscatter<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.check_root(CollOp::Scatter, root)?;
        let (me, p, b) = (self.rank(), self.size(), recv.len());
        if me == root && send.len() != p * b {
            return Err(bad(
                CollOp::Scatter,
                format!("root's send buffer is {} bytes, not {p} x {b}", send.len()),
            ));
        }
        let slen = if me == root { p * b } else { 0 };
        let mut s = Schedule::new();
        let (src, dst) = (Region::send(0, slen), Region::recv(0, b));
        match self.config.choose(CollOp::Scatter, b, p, true)? {
            Algorithm::Linear => {
                let blocks: Vec<Region> = (0..p)
                    .map(|i| {
                        if me == root {
                            src.sub(i * b, b)
                        } else {
                            Region::empty()
                        }
                    })
                    .collect();
                linear::scatter(&mut s, me, p, root, &blocks, dst);
            }
            _ => binomial::scatter(&mut s, me, p, root, b, src, dst),
        }
        self.start(tag, s, None, send, recv)
    }

    /// Scatters `counts[i]` bytes at `displs[i]` of the root's `send` to rank i's `recv`.
    pub fn scatterv(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        root: usize,
    ) -> Result<()> {
        self.iscatterv(send, counts, displs, recv, root)?.wait()
    }

    /// The non-blocking form of `scatterv`.
    pub fn iscatterv<'b>(
        &'b self,
        send: &'b [u8],
        counts: &[usize],
        displs: &[usize],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.check_root(CollOp::Scatterv, root)?;
        let (me, p) = (self.rank(), self.size());
        let blocks = if me == root {
            blocks_of(CollOp::Scatterv, counts, displs, p, send.len())?
                .into_iter()
                .map(|r| Region::send(r.off, r.len))
                .collect()
        } else {
            vec![]
        };
        if me == root && recv.len() != counts[root] {
            return Err(bad(
                CollOp::Scatterv,
                format!(
                    "root receives {} bytes but counts[{root}] is {}",
                    recv.len(),
                    counts[root]
                ),
            ));
        }
        let mut s = Schedule::new();
        self.config.choose(CollOp::Scatterv, recv.len(), p, true)?;
        linear::scatter(&mut s, me, p, root, &blocks, Region::recv(0, recv.len()));
        self.start(tag, s, None, send, recv)
    }

    /// Every rank's `send` (equal sizes) into every `recv`, in rank order.
    pub fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        self.iallgather(send, recv)?.wait()
    }

    /// The non-blocking form of `allgather`.
    pub fn iallgather<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let (me, p, b) = (self.rank(), self.size(), send.len());
        if recv.len() != p * b {
            return Err(bad(
                CollOp::Allgather,
                format!("receive buffer is {} bytes, not {p} x {b}", recv.len()),
            ));
        }
        let mut s = Schedule::new();
        let (src, dst) = (Region::send(0, b), Region::recv(0, p * b));
        match self.config.choose(CollOp::Allgather, p * b, p, true)? {
            Algorithm::Bruck => bruck::allgather(&mut s, me, p, b, src, dst),
            algo => {
                s.local().copy(src, dst.sub(me * b, b));
                if algo == Algorithm::Ring {
                    ring::allgather(&mut s, me, p, &|i| i, &|i| dst.sub(i * b, b));
                } else {
                    recursive_doubling::allgather(&mut s, me, p, b, dst);
                }
            }
        }
        self.start(tag, s, None, send, recv)
    }

    /// Like allgather with `counts[i]` bytes from rank i placed at `displs[i]` (all ranks
    /// pass the same counts and displacements).
    pub fn allgatherv(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        self.iallgatherv(send, recv, counts, displs)?.wait()
    }

    /// The non-blocking form of `allgatherv`.
    pub fn iallgatherv<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let (me, p) = (self.rank(), self.size());
        let blocks = blocks_of(CollOp::Allgatherv, counts, displs, p, recv.len())?;
        if send.len() != counts[me] {
            return Err(bad(
                CollOp::Allgatherv,
                format!(
                    "sends {} bytes but counts[{me}] is {}",
                    send.len(),
                    counts[me]
                ),
            ));
        }
        let total: usize = counts.iter().sum();
        self.config.choose(CollOp::Allgatherv, total, p, true)?;
        let mut s = Schedule::new();
        s.local().copy(Region::send(0, send.len()), blocks[me]);
        ring::allgather(&mut s, me, p, &|i| i, &|i| blocks[i]);
        self.start(tag, s, None, send, recv)
    }

    /// Block i of `send` to rank i, block j of `recv` from rank j (equal block sizes).
    pub fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        self.ialltoall(send, recv)?.wait()
    }

    /// The non-blocking form of `alltoall`.
    pub fn ialltoall<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let (me, p) = (self.rank(), self.size());
        if !send.len().is_multiple_of(p) || recv.len() != send.len() {
            return Err(bad(
                CollOp::Alltoall,
                format!(
                    "send {} / receive {} bytes are not equal multiples of {p}",
                    send.len(),
                    recv.len()
                ),
            ));
        }
        let b = send.len() / p;
        let mut s = Schedule::new();
        let (src, dst) = (Region::send(0, p * b), Region::recv(0, p * b));
        let sb: Vec<Region> = (0..p).map(|i| src.sub(i * b, b)).collect();
        let rb: Vec<Region> = (0..p).map(|i| dst.sub(i * b, b)).collect();
        match self.config.choose(CollOp::Alltoall, b, p, true)? {
            Algorithm::Bruck => bruck::alltoall(&mut s, me, p, b, src, dst),
            Algorithm::Linear => linear::alltoall(&mut s, me, p, &sb, &rb),
            _ => pairwise::alltoall(&mut s, me, p, &sb, &rb),
        }
        self.start(tag, s, None, send, recv)
    }

    /// Alltoall with per-peer byte counts and displacements on both sides.
    #[allow(clippy::too_many_arguments)]
    pub fn alltoallv(
        &self,
        send: &[u8],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &mut [u8],
        rcounts: &[usize],
        rdispls: &[usize],
    ) -> Result<()> {
        self.ialltoallv(send, scounts, sdispls, recv, rcounts, rdispls)?
            .wait()
    }

    /// The non-blocking form of `alltoallv`.
    #[allow(clippy::too_many_arguments)]
    pub fn ialltoallv<'b>(
        &'b self,
        send: &'b [u8],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &'b mut [u8],
        rcounts: &[usize],
        rdispls: &[usize],
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        let (me, p) = (self.rank(), self.size());
        let sb: Vec<Region> = blocks_of(CollOp::Alltoallv, scounts, sdispls, p, send.len())?
            .into_iter()
            .map(|r| Region::send(r.off, r.len))
            .collect();
        let rb = blocks_of(CollOp::Alltoallv, rcounts, rdispls, p, recv.len())?;
        if scounts[me] != rcounts[me] {
            return Err(bad(
                CollOp::Alltoallv,
                format!(
                    "sends itself {} bytes but expects {}",
                    scounts[me], rcounts[me]
                ),
            ));
        }
        let widest = scounts.iter().max().copied().unwrap_or(0);
        let mut s = Schedule::new();
        match self.config.choose(CollOp::Alltoallv, widest, p, true)? {
            Algorithm::Linear => linear::alltoall(&mut s, me, p, &sb, &rb),
            _ => pairwise::alltoall(&mut s, me, p, &sb, &rb),
        }
        self.start(tag, s, None, send, recv)
    }
}

/// Byte offsets of `count` elements of `esz` bytes cut into `p` near-equal blocks.
fn block_offsets(count: usize, p: usize, esz: usize) -> Vec<usize> {
    offsets(&split_even(count, p))
        .into_iter()
        .map(|o| o * esz)
        .collect()
}

/// Receive-side (or send-side) blocks of a v-operation, checked against the buffer.
fn blocks_of(
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
