//! Intercommunicator collectives (MPI semantics: results cross between the two groups;
//! rooted operations take MPI_ROOT / MPI_PROC_NULL / the root's remote rank). Each is a
//! two-level operation: a (node-aware) collective inside the local group, on the local
//! intracommunicator, plus one exchange between the two group leaders (local rank 0 of each
//! group) over the intercommunicator's collective view. Rooted ones exchange one message
//! between the root and the other group's leader; a bcast or reduce whose root and other
//! group share one node goes through one buffer spanning them instead (`inter/rooted_shm.rs`).

use crate::coll::Collectives;
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::exec::CollRequest;
use crate::flat::bad;
use crate::op::Op;
use crate::p2p::{P2pRequest, PointToPoint};
use crate::patience::{self, Patience};
use crate::scratch::Scratch;
use std::cell::Cell;
use std::rc::Rc;

mod nonblocking;
mod rooted_shm;

pub use nonblocking::InterRequest;

/// A process's part in a rooted intercommunicator collective.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InterRole {
    /// The root (MPI_ROOT), in the root's group.
    Root,
    /// Another process of the root's group (MPI_PROC_NULL): takes no part.
    ProcNull,
    /// A process of the other group; the root is this rank of the remote group.
    Remote(usize),
}

/// Alltoall goes through the leaders while the whole matrix (either way) is at most this many
/// bytes and there are at least `ALLTOALL_VIA_LEADERS_PAIRS` pairs of processes; otherwise
/// each process exchanges directly with every remote one (one round, no forwarding).
const ALLTOALL_VIA_LEADERS: usize = 64 * 1024;
const ALLTOALL_VIA_LEADERS_PAIRS: usize = 64;

/// Collectives over an intercommunicator; one per intercommunicator (the tags of its calls
/// are numbered).
pub struct InterCollectives<C: PointToPoint> {
    local: Rc<Collectives<C>>,
    bridge: C,
    seq: Cell<u32>,
    rank: usize,
    size: usize,
    remote_size: usize,
    joined: nonblocking::Joined<C>,
    rooted: rooted_shm::RootedShm,
    /// Names this process's node: processes on one node (and only they) give the same name.
    node: String,
}

/// Polls until `done` says so, backing off: spin, then yield, then short sleeps.
fn poll(mut done: impl FnMut() -> Result<bool>) -> Result<()> {
    let mut patience = Patience::new();
    let mut sleeps = 0u32;
    while !done()? {
        if !patience.idle() {
            sleeps = sleeps.saturating_add(1);
            let us = 1u64 << sleeps.min(10);
            std::thread::sleep(std::time::Duration::from_micros(us));
        }
    }
    Ok(())
}

/// How a group's part reaches its leader.
enum Up<'a> {
    Reduce(&'a [u8], &'a Op),
    Gather(&'a [u8]),
}

/// How the other group's part spreads from the leader: a bcast of `theirs`, or a scatter
/// of it into `recv`.
enum Down<'a> {
    Bcast,
    Scatter(&'a mut [u8]),
}

impl<C: PointToPoint> InterCollectives<C> {
    fn start_up<'b>(&'b self, up: &Up<'b>, part: &'b mut [u8]) -> Result<CollRequest<'b, C>> {
        match *up {
            Up::Reduce(send, op) => self.local.ireduce(send, part, op, 0),
            Up::Gather(send) => self.local.igather(send, part, 0),
        }
    }

    fn start_down<'b>(
        &'b self,
        down: Down<'b>,
        theirs: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
        match down {
            Down::Bcast => self.local.ibcast(theirs, 0),
            Down::Scatter(recv) => self.local.iscatter(theirs, recv, 0),
        }
    }

    /// The overlapped form of "collect this group's part at the leader, swap parts between
    /// the leaders, spread the other group's part from the leader": the leader starts the
    /// spreading as soon as the other part arrives, while its own may still be collecting,
    /// so the two directions do not wait for each other. Non-blocking local collectives are
    /// flat, so only local groups on one node take this form (`overlap`).
    fn cross(
        &self,
        t: i32,
        up: Up<'_>,
        part: &mut [u8],
        down: Down<'_>,
        theirs: &mut [u8],
    ) -> Result<()> {
        if !self.leader() {
            let mut u = self.start_up(&up, part)?;
            let mut d = self.start_down(down, theirs)?;
            return poll(|| Ok(u.test()? & d.test()?));
        }
        let want = theirs.len();
        let size_ok = |got: usize| {
            if got == want {
                Ok(())
            } else {
                Err(CollError::SizeMismatch {
                    peer: 0,
                    expected: want,
                    got,
                })
            }
        };
        let mut r = PointToPoint::irecv(&self.bridge, &mut *theirs, 0, t)?;
        let mut u = self.start_up(&up, &mut *part)?;
        let (mut got, mut up_done) = (None, false);
        poll(|| {
            up_done = u.test()?;
            if got.is_none() {
                got = P2pRequest::test(&mut r)?;
            }
            Ok(up_done || got.is_some())
        })?;
        if up_done {
            drop(u);
            let s = PointToPoint::isend(&self.bridge, &*part, 0, t)?;
            size_ok(match got {
                Some(n) => {
                    drop(r);
                    n
                }
                None => patience::wait(r)?,
            })?;
            self.start_down(down, theirs)?.wait()?;
            patience::wait(s)?;
        } else {
            drop(r);
            size_ok(got.unwrap_or(0))?;
            let mut d = self.start_down(down, theirs)?;
            poll(|| {
                let up_done = u.test()?;
                d.test()?;
                Ok(up_done)
            })?;
            drop(u);
            let s = PointToPoint::isend(&self.bridge, &*part, 0, t)?;
            d.wait()?;
            patience::wait(s)?;
        }
        Ok(())
    }

    /// Whether the overlapped form applies to local steps `up` and `down` (operation and the
    /// size its node-buffer threshold names): a group on one node whose steps go through its
    /// node buffer runs them blocking instead, which costs less than the overlap saves; one
    /// whose steps are both too large for the buffer overlaps them with the leaders' exchange.
    fn overlap(&self, up: (CollOp, usize), down: (CollOp, usize)) -> bool {
        if self.local.is_two_level() {
            return false;
        }
        let cfg = self.local.config();
        let on_buffer = |(op, bytes): (CollOp, usize)| {
            cfg.forced(op).is_none() && cfg.shm_max(op).is_some_and(|m| bytes <= m)
        };
        !self.local.is_node_local() || !(on_buffer(up) || on_buffer(down))
    }
}

impl<C: PointToPoint + Clone> InterCollectives<C> {
    /// The collectives of an intercommunicator whose local group has the collectives `local`
    /// and whose collective view is `bridge` (its ranks name the remote group, of
    /// `remote_size` processes); `node` names this process's node.
    pub fn new(
        local: Rc<Collectives<C>>,
        bridge: C,
        remote_size: usize,
        node: String,
    ) -> Result<Self> {
        let (rank, size) = (bridge.rank(), bridge.size());
        if local.rank() != rank
            || local.size() != size
            || local.team().comm_rank(size - 1) != size - 1
        {
            return Err(CollError::arg(
                "intercommunicator collective",
                format!(
                    "the local collectives (rank {} of {}) are not over the whole local group \
                     of the intercommunicator (rank {rank} of {size})",
                    local.rank(),
                    local.size()
                ),
            ));
        }
        if remote_size == 0 {
            return Err(CollError::arg(
                "intercommunicator collective",
                "the remote group is empty",
            ));
        }
        Ok(InterCollectives {
            joined: nonblocking::Joined::new(local.comm().clone(), bridge.clone(), remote_size),
            local,
            bridge,
            seq: Cell::new(0),
            rank,
            size,
            remote_size,
            rooted: rooted_shm::RootedShm::default(),
            node,
        })
    }
}

impl<C: PointToPoint> InterCollectives<C> {
    /// The collectives of the local group.
    pub fn local(&self) -> &Collectives<C> {
        &self.local
    }
    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.size
    }
    pub fn remote_size(&self) -> usize {
        self.remote_size
    }

    pub(crate) fn joined(&self) -> &nonblocking::Joined<C> {
        &self.joined
    }

    pub(crate) fn next_tag(&self) -> i32 {
        let s = self.seq.get();
        self.seq.set(s.wrapping_add(1));
        ((s & 0x0fff_ffff) << 3) as i32
    }

    fn leader(&self) -> bool {
        self.rank == 0
    }

    pub(crate) fn check_remote(&self, op: CollOp, r: usize) -> Result<()> {
        if r >= self.remote_size {
            return Err(bad(
                op,
                format!(
                    "root {r} is not below the remote group size {}",
                    self.remote_size
                ),
            ));
        }
        Ok(())
    }

    fn put(&self, tag: i32, data: &[u8], to: usize) -> Result<()> {
        patience::wait(PointToPoint::isend(&self.bridge, data, to, tag)?).map(|_| ())
    }

    fn take(&self, tag: i32, buf: &mut [u8], from: usize) -> Result<()> {
        let want = buf.len();
        let got = patience::wait(PointToPoint::irecv(&self.bridge, buf, from, tag)?)?;
        if got != want {
            return Err(CollError::SizeMismatch {
                peer: from,
                expected: want,
                got,
            });
        }
        Ok(())
    }

    /// The leaders' exchange: `send` to the remote leader, `recv` from it.
    fn swap(&self, tag: i32, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let want = recv.len();
        let r = PointToPoint::irecv(&self.bridge, recv, 0, tag)?;
        let s = PointToPoint::isend(&self.bridge, send, 0, tag)?;
        let got = patience::wait(r)?;
        patience::wait(s)?;
        if got != want {
            return Err(CollError::SizeMismatch {
                peer: 0,
                expected: want,
                got,
            });
        }
        Ok(())
    }

    fn on_leader(&self, n: usize) -> Scratch {
        Scratch::zeroed(if self.leader() { n } else { 0 })
    }

    /// Returns once every process of both groups has entered it.
    pub fn barrier(&self) -> Result<()> {
        let t = self.next_tag();
        if self.overlap((CollOp::Gather, 0), (CollOp::Bcast, 0)) {
            return self.cross(t, Up::Gather(&[]), &mut [], Down::Bcast, &mut []);
        }
        self.local.gather(&[], &mut [], 0)?;
        if self.leader() {
            self.swap(t, &[], &mut [])?;
        }
        self.local.bcast(&mut [], 0)
    }

    /// The root's `buf` reaches every process of the other group.
    pub fn bcast(&self, buf: &mut [u8], role: InterRole) -> Result<()> {
        let t = self.next_tag();
        if let InterRole::Remote(r) = role {
            self.check_remote(CollOp::Bcast, r)?;
        }
        if let Some(done) = self.rooted_bcast(t, buf, role)? {
            return Ok(done);
        }
        match role {
            InterRole::Root => self.put(t, buf, 0),
            InterRole::ProcNull => Ok(()),
            InterRole::Remote(r) => {
                if self.leader() {
                    self.take(t, buf, r)?;
                }
                self.local.bcast(buf, 0)
            }
        }
    }

    /// The root's `recv` gets the reduction of the other group's `send` buffers (rank order).
    pub fn reduce(&self, send: &[u8], recv: &mut [u8], op: &Op, role: InterRole) -> Result<()> {
        let t = self.next_tag();
        if let InterRole::Remote(r) = role {
            self.check_remote(CollOp::Reduce, r)?;
        }
        if let Some(done) = self.rooted_reduce(t, send, recv, op, role)? {
            return Ok(done);
        }
        match role {
            InterRole::Root => self.take(t, recv, 0),
            InterRole::ProcNull => Ok(()),
            InterRole::Remote(r) => {
                let mut part = self.on_leader(send.len());
                self.local.reduce(send, &mut part, op, 0)?;
                if self.leader() {
                    self.put(t, &part, r)?;
                }
                Ok(())
            }
        }
    }

    /// Every process gets the reduction of the other group's `send` buffers.
    pub fn allreduce(&self, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        let t = self.next_tag();
        same_len(CollOp::Allreduce, send, recv)?;
        let mut part = self.on_leader(send.len());
        if self.overlap((CollOp::Reduce, send.len()), (CollOp::Bcast, recv.len())) {
            return self.cross(t, Up::Reduce(send, op), &mut part, Down::Bcast, recv);
        }
        self.local.reduce(send, &mut part, op, 0)?;
        if self.leader() {
            self.swap(t, &part, recv)?;
        }
        self.local.bcast(recv, 0)
    }

    /// Every process gets the other group's `send` blocks in rank order (`recv` holds
    /// remote-size blocks, each the size the other group sends).
    pub fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let t = self.next_tag();
        if !recv.len().is_multiple_of(self.remote_size) {
            return Err(bad(
                CollOp::Allgather,
                format!(
                    "receive buffer of {} bytes is not {} equal blocks",
                    recv.len(),
                    self.remote_size
                ),
            ));
        }
        let mut mine = self.on_leader(send.len() * self.size);
        if self.overlap((CollOp::Gather, send.len()), (CollOp::Bcast, recv.len())) {
            return self.cross(t, Up::Gather(send), &mut mine, Down::Bcast, recv);
        }
        self.local.gather(send, &mut mine, 0)?;
        if self.leader() {
            self.swap(t, &mine, recv)?;
        }
        self.local.bcast(recv, 0)
    }

    /// Block j of `send` goes to remote rank j; block i of `recv` comes from remote rank i.
    pub fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        let t = self.next_tag();
        let (p, q) = (self.size, self.remote_size);
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
        if p * q * sb.max(rb) > ALLTOALL_VIA_LEADERS || p * q < ALLTOALL_VIA_LEADERS_PAIRS {
            return self.alltoall_direct(t, send, recv, sb, rb);
        }
        // Gather the p x q matrix of blocks at the leader, swap matrices, and scatter the
        // transpose of the other group's: rank j gets block [i][j] of every remote rank i.
        let mut mat = self.on_leader(p * q * sb);
        self.local.gather(send, &mut mat, 0)?;
        let mut out = self.on_leader(p * q * rb);
        if self.leader() {
            let mut theirs = Scratch::zeroed(q * p * rb);
            self.swap(t, &mat, &mut theirs)?;
            for j in 0..p {
                for i in 0..q {
                    let from = (i * p + j) * rb;
                    let to = (j * q + i) * rb;
                    out[to..to + rb].copy_from_slice(&theirs[from..from + rb]);
                }
            }
        }
        self.local.scatter(&out, recv, 0)
    }

    fn alltoall_direct(
        &self,
        t: i32,
        send: &[u8],
        recv: &mut [u8],
        sb: usize,
        rb: usize,
    ) -> Result<()> {
        let q = self.remote_size;
        let mut recvs = Vec::with_capacity(q);
        if rb == 0 {
            for i in 0..q {
                recvs.push((i, PointToPoint::irecv(&self.bridge, &mut [], i, t)?));
            }
        } else {
            for (i, chunk) in recv.chunks_mut(rb).enumerate() {
                recvs.push((i, PointToPoint::irecv(&self.bridge, chunk, i, t)?));
            }
        }
        let mut sends = Vec::with_capacity(q);
        for j in 0..q {
            // Stagger the destinations so every process does not start at remote rank 0.
            let to = (j + self.rank) % q;
            sends.push(PointToPoint::isend(
                &self.bridge,
                &send[to * sb..(to + 1) * sb],
                to,
                t,
            )?);
        }
        let mut first_err = None;
        for (i, r) in recvs {
            match patience::wait(r) {
                Ok(got) if got == rb => {}
                Ok(got) => {
                    first_err.get_or_insert(CollError::SizeMismatch {
                        peer: i,
                        expected: rb,
                        got,
                    });
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        for s in sends {
            if let Err(e) = patience::wait(s) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Each process gets its block (`recv`, equal sizes) of the reduction of the other
    /// group's `send` buffers; `send` holds local-size blocks of `recv.len()` bytes.
    pub fn reduce_scatter_block(&self, send: &[u8], recv: &mut [u8], op: &Op) -> Result<()> {
        let t = self.next_tag();
        if send.len() != recv.len() * self.size {
            return Err(bad(
                CollOp::ReduceScatterBlock,
                format!(
                    "send is {} bytes, not {} blocks of {}",
                    send.len(),
                    self.size,
                    recv.len()
                ),
            ));
        }
        let mut part = self.on_leader(send.len());
        let mut theirs = self.on_leader(send.len());
        if self.overlap((CollOp::Reduce, send.len()), (CollOp::Scatter, recv.len())) {
            return self.cross(
                t,
                Up::Reduce(send, op),
                &mut part,
                Down::Scatter(recv),
                &mut theirs,
            );
        }
        self.local.reduce(send, &mut part, op, 0)?;
        if self.leader() {
            self.swap(t, &part, &mut theirs)?;
        }
        self.local.scatter(&theirs, recv, 0)
    }

    /// Local rank i gets `counts[i]` elements of the reduction of the other group's `send`
    /// (which holds the sum of `counts` elements; both groups reduce the same total).
    pub fn reduce_scatter(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &Op,
    ) -> Result<()> {
        let t = self.next_tag();
        let esz = op.elem_size();
        if counts.len() != self.size {
            return Err(bad(
                CollOp::ReduceScatter,
                format!("{} counts for {} ranks", counts.len(), self.size),
            ));
        }
        let total: usize = counts.iter().sum();
        if send.len() != total * esz || recv.len() != counts[self.rank] * esz {
            return Err(bad(
                CollOp::ReduceScatter,
                format!(
                    "send {} / receive {} bytes do not match counts (total {total}, mine {})",
                    send.len(),
                    recv.len(),
                    counts[self.rank]
                ),
            ));
        }
        let mut part = self.on_leader(send.len());
        self.local.reduce(send, &mut part, op, 0)?;
        let mut theirs = self.on_leader(send.len());
        if self.leader() {
            self.swap(t, &part, &mut theirs)?;
        }
        let bytes: Vec<usize> = counts.iter().map(|c| c * esz).collect();
        let displs: Vec<usize> = bytes
            .iter()
            .scan(0, |acc, c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect();
        self.local.scatterv(&theirs, &bytes, &displs, recv, 0)
    }

    /// The root's `recv` gets every remote process's `send` block, in remote rank order.
    pub fn gather(&self, send: &[u8], recv: &mut [u8], role: InterRole) -> Result<()> {
        let t = self.next_tag();
        match role {
            InterRole::Root => self.take(t, recv, 0),
            InterRole::ProcNull => Ok(()),
            InterRole::Remote(r) => {
                self.check_remote(CollOp::Gather, r)?;
                let mut mine = self.on_leader(send.len() * self.size);
                self.local.gather(send, &mut mine, 0)?;
                if self.leader() {
                    self.put(t, &mine, r)?;
                }
                Ok(())
            }
        }
    }

    /// Block i of the root's `send` goes to remote rank i's `recv`.
    pub fn scatter(&self, send: &[u8], recv: &mut [u8], role: InterRole) -> Result<()> {
        let t = self.next_tag();
        match role {
            InterRole::Root => {
                if !send.len().is_multiple_of(self.remote_size) {
                    return Err(bad(
                        CollOp::Scatter,
                        format!(
                            "root's {} bytes are not {} equal blocks",
                            send.len(),
                            self.remote_size
                        ),
                    ));
                }
                self.put(t, send, 0)
            }
            InterRole::ProcNull => Ok(()),
            InterRole::Remote(r) => {
                self.check_remote(CollOp::Scatter, r)?;
                let mut all = self.on_leader(recv.len() * self.size);
                if self.leader() {
                    self.take(t, &mut all, r)?;
                }
                self.local.scatter(&all, recv, 0)
            }
        }
    }
}

/// Operations whose receive buffer must be as long as the send buffer.
fn same_len(op: CollOp, send: &[u8], recv: &[u8]) -> Result<()> {
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
