//! Data movement: gather(v), scatter(v), allgather(v), alltoall(v).

use super::{bad, Flat};
use crate::algo::{binomial, bruck, linear, pairwise, recursive_doubling, ring};
use crate::config::{Algorithm, CollOp};
use crate::error::Result;
use crate::exec::CollRequest;
use crate::p2p::PointToPoint;
use crate::schedule::{Region, Schedule};

impl<C: PointToPoint> Flat<C> {
    pub(crate) fn igather<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
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

    pub(crate) fn igatherv<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
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

    pub(crate) fn iscatter<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
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

    pub(crate) fn iscatterv<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        counts: &[usize],
        displs: &[usize],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
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

    /// Checks that `recv` holds a `send` for every member.
    pub(crate) fn allgather_args(&self, send: &[u8], recv: &[u8]) -> Result<()> {
        let (p, b) = (self.size(), send.len());
        if recv.len() != p * b {
            return Err(bad(
                CollOp::Allgather,
                format!("receive buffer is {} bytes, not {p} x {b}", recv.len()),
            ));
        }
        Ok(())
    }

    pub(crate) fn iallgather<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
        let (me, p, b) = (self.rank(), self.size(), send.len());
        self.allgather_args(send, recv)?;
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

    pub(crate) fn iallgatherv<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<CollRequest<'b, C>> {
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

    pub(crate) fn ialltoall<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
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

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ialltoallv<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &'b mut [u8],
        rcounts: &[usize],
        rdispls: &[usize],
    ) -> Result<CollRequest<'b, C>> {
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
