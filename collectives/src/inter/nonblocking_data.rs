//! The non-blocking forms of the intercommunicator gathers, scatters and reductions beyond
//! `nonblocking.rs`'s: ireduce, igather, iscatter (rooted), iallgather, ialltoall,
//! ireduce_scatter_block, ireduce_scatter, and iexchange (blocks straight between the
//! processes, for the v-forms). Each is one schedule of the blocking form's general shape (a
//! binomial step in the local group, one exchange between the group leaders or with the
//! root, a binomial step back); alltoall goes straight from every process to every remote
//! one. They match non-blocking calls only (MPI: blocking and non-blocking collectives do
//! not match each other).

use super::nonblocking::InterRequest;
use super::{InterCollectives, InterRole};
use crate::algo::binomial;
use crate::config::CollOp;
use crate::error::Result;
use crate::flat::bad;
use crate::op::Op;
use crate::p2p::PointToPoint;
use crate::schedule::{Region, Schedule};

impl<C: PointToPoint> InterCollectives<C> {
    /// Refuses `n` bytes that are not whole elements of `op`.
    fn whole_elements(what: CollOp, n: usize, op: &Op) -> Result<()> {
        if n.is_multiple_of(op.elem_size()) {
            return Ok(());
        }
        Err(bad(
            what,
            format!(
                "{n} bytes is not a whole number of {}-byte elements",
                op.elem_size()
            ),
        ))
    }

    /// Scratch of `n` bytes on the local leader (nothing elsewhere).
    fn leader_scratch(s: &mut Schedule, me: usize, n: usize) -> Region {
        if me == 0 {
            s.scratch(n)
        } else {
            Region::empty()
        }
    }

    /// The local group's reduction of its `n` send bytes, on the leader, swapped for the
    /// other group's: the leader's region that then holds the other group's reduction.
    fn reduce_then_swap(s: &mut Schedule, me: usize, p: usize, n: usize, op: &Op) -> Region {
        let part = Self::leader_scratch(s, me, n);
        let theirs = Self::leader_scratch(s, me, n);
        binomial::reduce(s, me, p, 0, op.is_commutative(), Region::send(0, n), part);
        if me == 0 {
            s.round().send(p, part).recv(p, theirs);
        }
        theirs
    }

    /// The schedule of a collective towards a root: the root receives its whole `recv_len`
    /// bytes from the other group's leader; in that group, `up` builds the local step that
    /// leaves the leader's result in the region it returns, which the leader sends on.
    fn towards_root(
        &self,
        what: CollOp,
        role: InterRole,
        recv_len: usize,
        up: impl FnOnce(&mut Schedule, usize, usize) -> Region,
    ) -> Result<Schedule> {
        let (me, p) = (self.rank(), self.size());
        let mut s = Schedule::new();
        match role {
            InterRole::Root => {
                s.round().recv(p, Region::recv(0, recv_len));
            }
            InterRole::ProcNull => {}
            InterRole::Remote(r) => {
                self.check_remote(what, r)?;
                let out = up(&mut s, me, p);
                if me == 0 {
                    s.round().send(p + r, out);
                }
            }
        }
        Ok(s)
    }

    /// The non-blocking form of `reduce`: the root's `recv` gets the reduction of the other
    /// group's `send` buffers.
    pub fn ireduce<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
        role: InterRole,
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let n = send.len();
        Self::whole_elements(CollOp::Reduce, n, op)?;
        let s = self.towards_root(CollOp::Reduce, role, recv.len(), |s, me, p| {
            let part = Self::leader_scratch(s, me, n);
            binomial::reduce(s, me, p, 0, op.is_commutative(), Region::send(0, n), part);
            part
        })?;
        self.start_joined(t, s, Some(op), send, recv)
    }

    /// The non-blocking form of `gather`: the root's `recv` gets every remote process's
    /// `send` block, in remote rank order.
    pub fn igather<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        role: InterRole,
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let b = send.len();
        let s = self.towards_root(CollOp::Gather, role, recv.len(), |s, me, p| {
            let all = Self::leader_scratch(s, me, b * p);
            binomial::gather(s, me, p, 0, b, Region::send(0, b), all);
            all
        })?;
        self.start_joined(t, s, None, send, recv)
    }

    /// The non-blocking form of `scatter`: block i of the root's `send` goes to remote rank
    /// i's `recv`.
    pub fn iscatter<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        role: InterRole,
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let (me, p) = (self.rank(), self.size());
        let mut s = Schedule::new();
        match role {
            InterRole::Root => {
                if !send.len().is_multiple_of(self.remote_size()) {
                    return Err(bad(
                        CollOp::Scatter,
                        format!(
                            "root's {} bytes are not {} equal blocks",
                            send.len(),
                            self.remote_size()
                        ),
                    ));
                }
                s.round().send(p, Region::send(0, send.len()));
            }
            InterRole::ProcNull => {}
            InterRole::Remote(r) => {
                self.check_remote(CollOp::Scatter, r)?;
                let b = recv.len();
                let all = Self::leader_scratch(&mut s, me, b * p);
                if me == 0 {
                    s.round().recv(p + r, all);
                }
                binomial::scatter(&mut s, me, p, 0, b, all, Region::recv(0, b));
            }
        }
        self.start_joined(t, s, None, send, recv)
    }

    /// The non-blocking form of `allgather`: every process gets the other group's `send`
    /// blocks in rank order.
    pub fn iallgather<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let (me, p, q) = (self.rank(), self.size(), self.remote_size());
        if !recv.len().is_multiple_of(q) {
            return Err(bad(
                CollOp::Allgather,
                format!(
                    "receive buffer of {} bytes is not {q} equal blocks",
                    recv.len()
                ),
            ));
        }
        let b = send.len();
        let mut s = Schedule::new();
        let mine = Self::leader_scratch(&mut s, me, b * p);
        binomial::gather(&mut s, me, p, 0, b, Region::send(0, b), mine);
        let out = Region::recv(0, recv.len());
        if me == 0 {
            s.round().send(p, mine).recv(p, out);
        }
        binomial::bcast(&mut s, me, p, 0, out);
        self.start_joined(t, s, None, send, recv)
    }

    /// The non-blocking form of `alltoall`: block j of `send` goes to remote rank j, block i
    /// of `recv` comes from remote rank i; straight between the processes, in one round.
    pub fn ialltoall<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let (p, q) = (self.size(), self.remote_size());
        if !send.len().is_multiple_of(q) || !recv.len().is_multiple_of(q) {
            return Err(bad(
                CollOp::Alltoall,
                format!(
                    "send {} / receive {} bytes are not {q} equal blocks",
                    send.len(),
                    recv.len()
                ),
            ));
        }
        let (sb, rb) = (send.len() / q, recv.len() / q);
        let mut s = Schedule::new();
        let round = s.round();
        for j in 0..q {
            round
                .send(p + j, Region::send(j * sb, sb))
                .recv(p + j, Region::recv(j * rb, rb));
        }
        self.start_joined(t, s, None, send, recv)
    }

    /// The non-blocking form of `reduce_scatter_block`: each process gets its block of the
    /// reduction of the other group's `send` buffers (local-size blocks of `recv.len()`).
    pub fn ireduce_scatter_block<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let (me, p, n, b) = (self.rank(), self.size(), send.len(), recv.len());
        if n != b * p {
            return Err(bad(
                CollOp::ReduceScatterBlock,
                format!("send is {n} bytes, not {p} blocks of {b}"),
            ));
        }
        Self::whole_elements(CollOp::ReduceScatterBlock, n, op)?;
        let mut s = Schedule::new();
        let theirs = Self::reduce_then_swap(&mut s, me, p, n, op);
        binomial::scatter(&mut s, me, p, 0, b, theirs, Region::recv(0, b));
        self.start_joined(t, s, Some(op), send, recv)
    }

    /// The non-blocking form of `reduce_scatter`: local rank i gets `counts[i]` elements of
    /// the reduction of the other group's `send` (both groups reduce the same total); the
    /// leader hands each rank its piece.
    pub fn ireduce_scatter<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        op: &Op,
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let (me, p, esz) = (self.rank(), self.size(), op.elem_size());
        let total: usize = counts.iter().sum();
        if counts.len() != p || send.len() != total * esz || recv.len() != counts[me] * esz {
            return Err(bad(
                CollOp::ReduceScatter,
                format!(
                    "{} counts for {p} ranks; send {} / receive {} bytes for a total of {total} \
                     elements",
                    counts.len(),
                    send.len(),
                    recv.len()
                ),
            ));
        }
        let mut s = Schedule::new();
        let theirs = Self::reduce_then_swap(&mut s, me, p, send.len(), op);
        if me == 0 {
            let round = s.round();
            let mut at = counts[0] * esz;
            for (i, &c) in counts.iter().enumerate().skip(1) {
                round.send(i, theirs.sub(at, c * esz));
                at += c * esz;
            }
            s.local()
                .copy(theirs.sub(0, counts[0] * esz), Region::recv(0, recv.len()));
        } else {
            s.round().recv(0, Region::recv(0, recv.len()));
        }
        self.start_joined(t, s, Some(op), send, recv)
    }

    /// A non-blocking exchange of byte blocks straight between this process and remote
    /// ones, in one round: `sends` and `recvs` are (remote rank, offset, length) in `send`
    /// and `recv`; empty blocks are skipped (the v-forms and their irregular blocks).
    pub fn iexchange<'b>(
        &'b self,
        send: &'b [u8],
        sends: &[(usize, usize, usize)],
        recv: &'b mut [u8],
        recvs: &[(usize, usize, usize)],
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let (p, q) = (self.size(), self.remote_size());
        let fits = |&(r, off, len): &(usize, usize, usize), total: usize| {
            r < q && off.checked_add(len).is_some_and(|end| end <= total)
        };
        if let Some(b) = sends.iter().find(|b| !fits(b, send.len())) {
            return Err(bad(
                CollOp::Alltoall,
                format!("send block {b:?} (remote rank, offset, length) is outside the {} bytes or {q} remote ranks", send.len()),
            ));
        }
        if let Some(b) = recvs.iter().find(|b| !fits(b, recv.len())) {
            return Err(bad(
                CollOp::Alltoall,
                format!("receive block {b:?} (remote rank, offset, length) is outside the {} bytes or {q} remote ranks", recv.len()),
            ));
        }
        let mut s = Schedule::new();
        let round = s.round();
        for &(r, off, len) in sends.iter().filter(|b| b.2 > 0) {
            round.send(p + r, Region::send(off, len));
        }
        for &(r, off, len) in recvs.iter().filter(|b| b.2 > 0) {
            round.recv(p + r, Region::recv(off, len));
        }
        self.start_joined(t, s, None, send, recv)
    }
}
