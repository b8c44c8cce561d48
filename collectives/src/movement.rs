//! Data movement: gather(v), scatter(v), allgather(v), alltoall(v).

use crate::algo::{binomial, bruck, linear, pairwise, recursive_doubling, ring};
use crate::coll::{bad, blocks_of, Collectives};
use crate::config::{Algorithm, CollOp};
use crate::error::Result;
use crate::exec::CollRequest;
use crate::p2p::PointToPoint;
use crate::schedule::{Region, Schedule};

impl<C: PointToPoint> Collectives<C> {
    /// Gathers every rank's `send` (equal sizes) into `recv` at `root` (ignored elsewhere).
    pub fn gather(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()> {
        if let Some(b) = self.node_buf(CollOp::Gather, send.len(), root)? {
            return self.shm_gather(&b, send, recv);
        }
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
        match self.config().choose(CollOp::Gather, b, p, true)? {
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
        self.config().choose(CollOp::Gatherv, send.len(), p, true)?;
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
        match self.config().choose(CollOp::Scatter, b, p, true)? {
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
        self.config()
            .choose(CollOp::Scatterv, recv.len(), p, true)?;
        linear::scatter(&mut s, me, p, root, &blocks, Region::recv(0, recv.len()));
        self.start(tag, s, None, send, recv)
    }

    /// Every rank's `send` (equal sizes) into every `recv`, in rank order.
    pub fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        if let Some(done) = self
            .two_level(CollOp::Allgather)
            .and_then(|l| l.allgather(self, send, recv))
        {
            return done;
        }
        if let Some(b) = self.node_buf(CollOp::Allgather, send.len() * self.size(), 0)? {
            if recv.len() != send.len() * self.size() {
                return Err(bad(
                    CollOp::Allgather,
                    format!(
                        "receive buffer is {} bytes, not {} x {}",
                        recv.len(),
                        self.size(),
                        send.len()
                    ),
                ));
            }
            let out: &mut [u8] = if self.rank() == 0 {
                &mut *recv
            } else {
                &mut []
            };
            self.shm_gather(&b, send, out)?;
            return self.shm_bcast(&b, recv);
        }
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
        match self.config().choose(CollOp::Allgather, p * b, p, true)? {
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
        self.config().choose(CollOp::Allgatherv, total, p, true)?;
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
        match self.config().choose(CollOp::Alltoall, b, p, true)? {
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
        match self.config().choose(CollOp::Alltoallv, widest, p, true)? {
            Algorithm::Linear => linear::alltoall(&mut s, me, p, &sb, &rb),
            _ => pairwise::alltoall(&mut s, me, p, &sb, &rb),
        }
        self.start(tag, s, None, send, recv)
    }
}
