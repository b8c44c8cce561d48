//! Intercommunicator collectives (MPI semantics: results cross between the two groups;
//! rooted operations take MPI_ROOT / MPI_PROC_NULL / the root's remote rank). Each is a
//! two-level operation: a (node-aware) collective inside the local group, on the local
//! intracommunicator, plus one exchange between the two group leaders (local rank 0 of each
//! group) over the intercommunicator's collective view. Rooted ones exchange one message
//! between the root and the other group's leader; a bcast or reduce whose root and other
//! group share one node goes through one buffer spanning them instead (`inter/rooted_shm.rs`),
//! and a small one (up to 1 KiB, up to 8 others) goes flat with bounded run-ahead
//! (`inter/fanout.rs`). Alltoall, and an allgather or reduce_scatter_block of large blocks
//! between small groups, go straight from each process to every remote one (`inter/direct.rs`).

use crate::coll::Collectives;
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::flat::bad;
use crate::op::Op;
use crate::p2p::PointToPoint;
use crate::patience;
use crate::scratch::Scratch;
use overlap::{Down, Up};
use std::cell::Cell;
use std::rc::Rc;

mod alltoall;
mod direct;
mod fanout;
mod nonblocking;
mod nonblocking_data;
mod overlap;
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
    flows: fanout::Flows,
    /// Names this process's node: processes on one node (and only they) give the same name.
    node: String,
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
                     of the intercommunicator (rank {rank} of {size}); make them with \
                     `Collectives::with_config` on the local group's communicator",
                    local.rank(),
                    local.size()
                ),
            ));
        }
        if remote_size == 0 {
            return Err(CollError::arg(
                "intercommunicator collective",
                "the remote group is empty; an intercommunicator joins two non-empty groups",
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
            flows: fanout::Flows::default(),
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

    /// The leader's buffer for a gathered, reduced or received result (every byte is
    /// written before it is read, or the operation fails).
    fn on_leader(&self, n: usize) -> Scratch {
        Scratch::for_output(if self.leader() { n } else { 0 })
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
        if let Some(done) = self.flat_bcast(t, buf, role)? {
            return Ok(done);
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
        if let Some(done) = self.flat_reduce(t, send, recv, op, role)? {
            return Ok(done);
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
        if let Some(done) = self.allgather_direct(t, send, recv) {
            return done;
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
        if let Some(done) = self.reduce_scatter_direct(t, send, recv, op) {
            return done;
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
