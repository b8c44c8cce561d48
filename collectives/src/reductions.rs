//! Reductions: reduce, allreduce, reduce_scatter(_block), scan, exscan.

use crate::algo::{binomial, linear, rabenseifner, recursive_doubling, ring, scan};
use crate::coll::{bad, block_offsets, Collectives};
use crate::config::{Algorithm, CollOp};
use crate::error::Result;
use crate::exec::CollRequest;
use crate::op::Op;
use crate::p2p::PointToPoint;
use crate::schedule::{offsets, Region, Schedule};

impl<C: PointToPoint> Collectives<C> {
    /// Reduces every rank's `send` into `recv` at `root` (`recv` is ignored elsewhere).
    pub fn reduce(&self, send: &[u8], recv: &mut [u8], op: &Op, root: usize) -> Result<()> {
        if let Some(l) = self.two_level_for(CollOp::Reduce, op) {
            self.check_root(CollOp::Reduce, root)?;
            return l.reduce(self, send, recv, op, root);
        }
        if let Some(b) = self.node_buf(CollOp::Reduce, send.len(), root)? {
            self.check_op(CollOp::Reduce, op, send.len())?;
            return self.shm_reduce(&b, send, recv, op);
        }
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

    pub fn allreduce(&self, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        if let Some(l) = self.two_level_for(CollOp::Allreduce, op) {
            return l.allreduce(self, send, recv, op);
        }
        if let Some(b) = self.node_buf(CollOp::Allreduce, send.len(), 0)? {
            self.check_op(CollOp::Allreduce, op, send.len())?;
            crate::coll::same_len(CollOp::Allreduce, send, recv)?;
            let out: &mut [u8] = if self.rank() == 0 {
                &mut *recv
            } else {
                &mut []
            };
            self.shm_reduce(&b, send, out, op)?;
            return self.shm_bcast(&b, recv);
        }
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
        if let Some(l) = self
            .two_level_nb(CollOp::Allreduce)
            .filter(|l| l.keeps_order(op))
        {
            let s = l.allreduce_schedule(me, n, op.is_commutative());
            return self.start(tag, s, Some(op), send, recv);
        }
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
        match self.config().choose(which, n, p, op.is_commutative())? {
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
            .config()
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
            .config()
            .choose(CollOp::Exscan, n, p, op.is_commutative())?
        {
            Algorithm::Linear => scan::exscan_linear(&mut s, me, p, input, out),
            _ => scan::exscan_doubling(&mut s, me, p, input, out),
        }
        self.start(tag, s, Some(op), send, recv)
    }
}
