//! Rooted collectives (rsmpi's `Root`), called through `world.process_at_rank(root)`: the
//! `_root` form on the root itself, the plain form on every other rank.

use super::{inter, start, with, CollectiveRequest, InterCollectives, Operation};
use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::partition::{invalid, Layout, Partition, PartitionMut};
use crate::point_to_point::Process;
use crate::Result;
use ibdyn_collectives::{Element, InterRole};
use std::rc::Rc;

/// Rooted collectives, called on the root process (rsmpi's `Root`).
pub trait Root {
    fn broadcast_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<()>;
    fn immediate_broadcast_into<'b, B: BufferMut + ?Sized>(
        &self,
        buf: &'b mut B,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a gather.
    fn gather_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()>;
    fn gather_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    fn immediate_gather_into<'b, S: Buffer + ?Sized>(
        &self,
        send: &'b S,
    ) -> Result<CollectiveRequest<'b>>;
    fn immediate_gather_into_root<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a gatherv: `send` may differ in size from rank to rank.
    fn gather_varcount_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()>;
    /// Rank i's `send` lands in block i of `recv`. A partition that does not fit (or whose
    /// blocks overlap) is an error at the root; the blocks sent are dropped, so the other
    /// ranks complete instead of waiting.
    fn gather_varcount_into_root<S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &S,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<()>;
    fn immediate_gather_varcount_into<'b, S: Buffer + ?Sized>(
        &self,
        send: &'b S,
    ) -> Result<CollectiveRequest<'b>>;
    fn immediate_gather_varcount_into_root<'b, S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &'b S,
        recv: &'b mut PartitionMut<'_, T>,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a scatter.
    fn scatter_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()>;
    fn scatter_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    fn immediate_scatter_into<'b, R: BufferMut + ?Sized>(
        &self,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    fn immediate_scatter_into_root<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a scatterv: `recv` is the size of this rank's block at the root.
    fn scatter_varcount_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()>;
    /// Block i of `send` goes to rank i. A partition that does not fit is an error at the
    /// root, and every rank expecting a non-empty block gets a size mismatch (none waits).
    fn scatter_varcount_into_root<T: Equivalence, R: BufferMut + ?Sized>(
        &self,
        send: &Partition<'_, T>,
        recv: &mut R,
    ) -> Result<()>;
    fn immediate_scatter_varcount_into<'b, R: BufferMut + ?Sized>(
        &self,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    fn immediate_scatter_varcount_into_root<'b, T: Equivalence, R: BufferMut + ?Sized>(
        &self,
        send: &'b Partition<'_, T>,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a reduce.
    fn reduce_into<T: Element>(&self, send: &[T], op: Operation) -> Result<()>;
    fn reduce_into_root<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation)
        -> Result<()>;
    fn immediate_reduce_into<'b, T: Element>(
        &self,
        send: &'b [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    fn immediate_reduce_into_root<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
}

/// On an intercommunicator, `process_at_rank(r)` names the root in the REMOTE group, so the
/// `Root` methods are the other group's side (`InterRoot::Remote(r)`); the root's own group
/// uses `InterCommunicatorCollectives` with `InterRoot::Root` / `InterRoot::ProcNull`.
fn remote_root(p: &Process<'_>) -> Result<Option<(Rc<InterCollectives>, InterRole)>> {
    let comm = p.communicator();
    match inter(comm)? {
        None => Ok(None),
        Some(ic) => {
            let r = p.rank();
            if r < 0 || r >= comm.remote_size() {
                return Err(crate::CommError::InvalidRank {
                    rank: r as i64,
                    size: comm.remote_size() as usize,
                });
            }
            Ok(Some((ic, InterRole::Remote(r as usize))))
        }
    }
}

fn root_side_on_inter() -> crate::CommError {
    crate::CommError::InvalidArgument(
        "on an intercommunicator the root calls InterCommunicatorCollectives with InterRoot::Root"
            .into(),
    )
}

impl Root for Process<'_> {
    fn broadcast_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<()> {
        if let Some((ic, role)) = remote_root(self)? {
            return Ok(ic.bcast(buf.as_bytes_mut(), role)?);
        }
        let root = self.root()?;
        with(self.communicator(), |c| c.bcast(buf.as_bytes_mut(), root))
    }
    fn immediate_broadcast_into<'b, B: BufferMut + ?Sized>(
        &self,
        buf: &'b mut B,
    ) -> Result<CollectiveRequest<'b>> {
        if self.communicator().is_inter() {
            return Err(root_side_on_inter());
        }
        let root = self.root()?;
        start(self.communicator(), |c| c.ibcast(buf.as_bytes_mut(), root))
    }
    fn gather_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()> {
        if let Some((ic, role)) = remote_root(self)? {
            return Ok(ic.gather(send.as_bytes(), &mut [], role)?);
        }
        let root = self.root()?;
        with(self.communicator(), |c| {
            c.gather(send.as_bytes(), &mut [], root)
        })
    }
    fn gather_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        if self.communicator().is_inter() {
            return Err(root_side_on_inter());
        }
        let root = self.root()?;
        with(self.communicator(), |c| {
            c.gather(send.as_bytes(), recv.as_bytes_mut(), root)
        })
    }
    fn immediate_gather_into<'b, S: Buffer + ?Sized>(
        &self,
        send: &'b S,
    ) -> Result<CollectiveRequest<'b>> {
        let root = self.non_root("immediate_gather_into")?;
        start(self.communicator(), |c| {
            c.igather(send.as_bytes(), &mut [], root)
        })
    }
    fn immediate_gather_into_root<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        let root = self.at_root()?;
        start(self.communicator(), |c| {
            c.igather(send.as_bytes(), recv.as_bytes_mut(), root)
        })
    }
    fn gather_varcount_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()> {
        self.immediate_gather_varcount_into(send)?.wait()
    }
    fn gather_varcount_into_root<S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &S,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<()> {
        self.immediate_gather_varcount_into_root(send, recv)?.wait()
    }
    fn immediate_gather_varcount_into<'b, S: Buffer + ?Sized>(
        &self,
        send: &'b S,
    ) -> Result<CollectiveRequest<'b>> {
        let root = self.non_root("gather_varcount_into")?;
        start(self.communicator(), |c| {
            c.igatherv(send.as_bytes(), &mut [], &[], &[], root)
        })
    }
    fn immediate_gather_varcount_into_root<'b, S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &'b S,
        recv: &'b mut PartitionMut<'_, T>,
    ) -> Result<CollectiveRequest<'b>> {
        const WHAT: &str = "gather_varcount_into_root";
        let root = self.at_root()?;
        let comm = self.communicator();
        let send = send.as_bytes();
        let checked = recv
            .layout(WHAT, comm.size() as usize)
            .and_then(|l| own_block(WHAT, l, root, send.len()));
        match checked {
            Ok(l) => start(comm, |c| {
                c.igatherv(send, recv.bytes_mut(), &l.counts, &l.displs, root)
            }),
            Err(e) => {
                // Receives nothing: each non-empty block sent is refused as truncated,
                // which releases its sender.
                let z = Layout::empty(comm.size() as usize);
                let stand_in = start(comm, |c| {
                    c.igatherv(&[], &mut [], &z.counts, &z.displs, root)
                });
                CollectiveRequest::refused(stand_in, e)
            }
        }
    }
    fn scatter_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()> {
        if let Some((ic, role)) = remote_root(self)? {
            return Ok(ic.scatter(&[], recv.as_bytes_mut(), role)?);
        }
        let root = self.root()?;
        with(self.communicator(), |c| {
            c.scatter(&[], recv.as_bytes_mut(), root)
        })
    }
    fn scatter_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        if self.communicator().is_inter() {
            return Err(root_side_on_inter());
        }
        let root = self.root()?;
        with(self.communicator(), |c| {
            c.scatter(send.as_bytes(), recv.as_bytes_mut(), root)
        })
    }
    fn immediate_scatter_into<'b, R: BufferMut + ?Sized>(
        &self,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        let root = self.non_root("immediate_scatter_into")?;
        start(self.communicator(), |c| {
            c.iscatter(&[], recv.as_bytes_mut(), root)
        })
    }
    fn immediate_scatter_into_root<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        let root = self.at_root()?;
        start(self.communicator(), |c| {
            c.iscatter(send.as_bytes(), recv.as_bytes_mut(), root)
        })
    }
    fn scatter_varcount_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()> {
        self.immediate_scatter_varcount_into(recv)?.wait()
    }
    fn scatter_varcount_into_root<T: Equivalence, R: BufferMut + ?Sized>(
        &self,
        send: &Partition<'_, T>,
        recv: &mut R,
    ) -> Result<()> {
        self.immediate_scatter_varcount_into_root(send, recv)?
            .wait()
    }
    fn immediate_scatter_varcount_into<'b, R: BufferMut + ?Sized>(
        &self,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        let root = self.non_root("scatter_varcount_into")?;
        start(self.communicator(), |c| {
            c.iscatterv(&[], &[], &[], recv.as_bytes_mut(), root)
        })
    }
    fn immediate_scatter_varcount_into_root<'b, T: Equivalence, R: BufferMut + ?Sized>(
        &self,
        send: &'b Partition<'_, T>,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        const WHAT: &str = "scatter_varcount_into_root";
        let root = self.at_root()?;
        let comm = self.communicator();
        let recv = recv.as_bytes_mut();
        let checked = send
            .layout(WHAT, comm.size() as usize)
            .and_then(|l| own_block(WHAT, l, root, recv.len()));
        match checked {
            Ok(l) => start(comm, |c| {
                c.iscatterv(send.bytes(), &l.counts, &l.displs, recv, root)
            }),
            Err(e) => {
                // Sends every rank an empty block: a rank expecting data sees the mismatch.
                let z = Layout::empty(comm.size() as usize);
                let stand_in = start(comm, |c| {
                    c.iscatterv(&[], &z.counts, &z.displs, &mut [], root)
                });
                CollectiveRequest::refused(stand_in, e)
            }
        }
    }
    fn reduce_into<T: Element>(&self, send: &[T], op: Operation) -> Result<()> {
        let op = op.op_for::<T>()?;
        if let Some((ic, role)) = remote_root(self)? {
            return Ok(ic.reduce(ibdyn_collectives::as_bytes(send), &mut [], &op, role)?);
        }
        let root = self.root()?;
        with(self.communicator(), |c| {
            c.reduce(ibdyn_collectives::as_bytes(send), &mut [], &op, root)
        })
    }
    fn reduce_into_root<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()> {
        if self.communicator().is_inter() {
            return Err(root_side_on_inter());
        }
        let root = self.root()?;
        let op = op.op_for::<T>()?;
        with(self.communicator(), |c| {
            c.reduce(
                ibdyn_collectives::as_bytes(send),
                ibdyn_collectives::as_bytes_mut(recv),
                &op,
                root,
            )
        })
    }
    fn immediate_reduce_into<'b, T: Element>(
        &self,
        send: &'b [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let root = self.non_root("immediate_reduce_into")?;
        start(self.communicator(), |c| {
            c.ireduce(ibdyn_collectives::as_bytes(send), &mut [], &op, root)
        })
    }
    fn immediate_reduce_into_root<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let root = self.at_root()?;
        start(self.communicator(), |c| {
            c.ireduce(
                ibdyn_collectives::as_bytes(send),
                ibdyn_collectives::as_bytes_mut(recv),
                &op,
                root,
            )
        })
    }
}

/// The root's own block of a rooted varcount operation must match its other buffer.
fn own_block(what: &'static str, l: Layout, root: usize, len: usize) -> Result<Layout> {
    if l.counts[root] != len {
        return Err(invalid(
            what,
            format!(
                "the root's own block is {} bytes but its other buffer is {len}",
                l.counts[root]
            ),
        ));
    }
    Ok(l)
}

impl Process<'_> {
    /// The root's rank, for a rooted immediate collective called on the root itself
    /// (intracommunicators only: on an intercommunicator the root's group uses `InterRoot`).
    fn at_root(&self) -> Result<usize> {
        if self.communicator().is_inter() {
            return Err(root_side_on_inter());
        }
        let root = self.root()?;
        if root != self.communicator().rank() as usize {
            return Err(crate::CommError::InvalidArgument(format!(
                "a *_root collective is called on the root; this is rank {}, the root is {root}",
                self.communicator().rank()
            )));
        }
        Ok(root)
    }

    /// The root's rank, for the non-root side of a rooted immediate collective.
    fn non_root(&self, what: &str) -> Result<usize> {
        if self.communicator().is_inter() {
            return Err(crate::CommError::InvalidArgument(format!(
                "{what} is not offered on an intercommunicator"
            )));
        }
        let root = self.root()?;
        if root == self.communicator().rank() as usize {
            return Err(invalid(
                what,
                "called on the root, which calls the *_root form",
            ));
        }
        Ok(root)
    }
}
