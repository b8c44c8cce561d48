//! Reductions: reduce, allreduce, reduce_scatter(_block), scan, exscan.

use super::{bad, Flat};
use crate::algo::{binomial, linear, rabenseifner, recursive_doubling, ring, scan};
use crate::config::{Algorithm, CollOp};
use crate::error::Result;
use crate::exec::CollRequest;
use crate::op::Op;
use crate::p2p::PointToPoint;
use crate::schedule::{offsets, split_even, Region, Schedule};

impl<C: PointToPoint> Flat<C> {
    pub(crate) fn ireduce<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
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
            .config()
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

    /// Checks allreduce's buffers against each other and `op`; returns the element count.
    pub(crate) fn allreduce_args(&self, op: &Op, send: &[u8], recv: &[u8]) -> Result<usize> {
        let n = send.len();
        let count = self.check_op(CollOp::Allreduce, op, n)?;
        if recv.len() != n {
            return Err(bad(
                CollOp::Allreduce,
                format!("receive buffer is {} bytes, send is {n}", recv.len()),
            ));
        }
        Ok(count)
    }

    pub(crate) fn iallreduce<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
        let (me, p, n) = (self.rank(), self.size(), send.len());
        let count = self.allreduce_args(op, send, recv)?;
        let mut s = Schedule::new();
        let acc = Region::recv(0, n);
        match self
            .config()
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

    pub(crate) fn ireduce_scatter_block<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
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

    pub(crate) fn ireduce_scatter<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
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

    pub(crate) fn iscan<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
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
            .config()
            .choose(CollOp::Scan, n, p, op.is_commutative())?
        {
            Algorithm::Linear => scan::scan_linear(&mut s, me, p, out),
            _ => scan::scan_doubling(&mut s, me, p, out),
        }
        self.start(tag, s, Some(op), send, recv)
    }

    pub(crate) fn iexscan<'b>(
        &'b self,
        tag: i32,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollRequest<'b, C>> {
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
            .config()
            .choose(CollOp::Exscan, n, p, op.is_commutative())?
        {
            Algorithm::Linear => scan::exscan_linear(&mut s, me, p, input, out),
            _ => scan::exscan_doubling(&mut s, me, p, input, out),
        }
        self.start(tag, s, Some(op), send, recv)
    }
}

/// Byte offsets of `count` elements of `esz` bytes cut into `p` near-equal blocks.
fn block_offsets(count: usize, p: usize, esz: usize) -> Vec<usize> {
    offsets(&split_even(count, p))
        .into_iter()
        .map(|o| o * esz)
        .collect()
}
