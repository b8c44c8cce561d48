//! Rooted collectives of an intracommunicator (rsmpi's `Root`), called through
//! `world.process_at_rank(root)`: the `_root` form on the root itself, the plain form on
//! every other rank. (On an intercommunicator, see `RemoteRoot` and `InterRoot`.)

use super::intra::{start, with};
use super::request::CollectiveRequest;
use super::Operation;
use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::partition::{invalid, Layout, Partition, PartitionMut};
use crate::point_to_point::Process;
use crate::{Communicator, IntraCommunicator, Result};
use ibdyn_collectives::Element;

/// Rooted collectives of an intracommunicator, called on `comm.process_at_rank(root)`
/// (rsmpi's `Root`): the `_root` forms on the root, the plain forms on the other ranks;
/// `broadcast_into` and `immediate_broadcast_into` on every rank, the root included.
pub trait Root {
    /// The root's `buf` is copied into every rank's `buf` (MPI_Bcast).
    fn broadcast_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<()>;
    /// Starts a broadcast (MPI_Ibcast).
    fn immediate_broadcast_into<'b, B: BufferMut + ?Sized>(
        &self,
        buf: &'b mut B,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a gather: sends `send` to the root (MPI_Gather).
    fn gather_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()>;
    /// Root side of a gather: rank i's `send` lands in block i of `recv` (MPI_Gather).
    fn gather_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    /// Starts the non-root side of a gather (MPI_Igather).
    fn immediate_gather_into<'b, S: Buffer + ?Sized>(
        &self,
        send: &'b S,
    ) -> Result<CollectiveRequest<'b>>;
    /// Starts the root side of a gather (MPI_Igather).
    fn immediate_gather_into_root<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a gatherv: `send` may differ in size from rank to rank
    /// (MPI_Gatherv).
    fn gather_varcount_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()>;
    /// Root side of a gatherv: rank i's `send` lands in block i of `recv`. A partition that
    /// does not fit (or whose blocks overlap) is an error at the root; the blocks sent are
    /// dropped, so the other ranks complete instead of waiting (MPI_Gatherv).
    fn gather_varcount_into_root<S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &S,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<()>;
    /// Starts the non-root side of a gatherv (MPI_Igatherv).
    fn immediate_gather_varcount_into<'b, S: Buffer + ?Sized>(
        &self,
        send: &'b S,
    ) -> Result<CollectiveRequest<'b>>;
    /// Starts the root side of a gatherv (MPI_Igatherv).
    fn immediate_gather_varcount_into_root<'b, S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &'b S,
        recv: &'b mut PartitionMut<'_, T>,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a scatter: receives this rank's block (MPI_Scatter).
    fn scatter_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()>;
    /// Root side of a scatter: block i of `send` goes to rank i (MPI_Scatter).
    fn scatter_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    /// Starts the non-root side of a scatter (MPI_Iscatter).
    fn immediate_scatter_into<'b, R: BufferMut + ?Sized>(
        &self,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Starts the root side of a scatter (MPI_Iscatter).
    fn immediate_scatter_into_root<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a scatterv: `recv` is the size of this rank's block at the root
    /// (MPI_Scatterv).
    fn scatter_varcount_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()>;
    /// Root side of a scatterv: block i of `send` goes to rank i. A partition that does not
    /// fit is an error at the root, and every rank expecting a non-empty block gets a size
    /// mismatch (none waits) (MPI_Scatterv).
    fn scatter_varcount_into_root<T: Equivalence, R: BufferMut + ?Sized>(
        &self,
        send: &Partition<'_, T>,
        recv: &mut R,
    ) -> Result<()>;
    /// Starts the non-root side of a scatterv (MPI_Iscatterv).
    fn immediate_scatter_varcount_into<'b, R: BufferMut + ?Sized>(
        &self,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Starts the root side of a scatterv (MPI_Iscatterv).
    fn immediate_scatter_varcount_into_root<'b, T: Equivalence, R: BufferMut + ?Sized>(
        &self,
        send: &'b Partition<'_, T>,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Non-root side of a reduce: contributes `send` (MPI_Reduce).
    fn reduce_into<T: Element>(&self, send: &[T], op: Operation) -> Result<()>;
    /// Root side of a reduce: `recv` gets the reduction of every rank's `send`
    /// (MPI_Reduce).
    fn reduce_into_root<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation)
        -> Result<()>;
    /// Starts the non-root side of a reduce (MPI_Ireduce).
    fn immediate_reduce_into<'b, T: Element>(
        &self,
        send: &'b [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    /// Starts the root side of a reduce (MPI_Ireduce).
    fn immediate_reduce_into_root<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
}

impl Root for Process<'_, IntraCommunicator> {
    fn broadcast_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<()> {
        let root = self.root()?;
        with(self.communicator(), |c| c.bcast(buf.as_bytes_mut(), root))
    }
    fn immediate_broadcast_into<'b, B: BufferMut + ?Sized>(
        &self,
        buf: &'b mut B,
    ) -> Result<CollectiveRequest<'b>> {
        let root = self.root()?;
        start(self.communicator(), |c| c.ibcast(buf.as_bytes_mut(), root))
    }
    fn gather_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()> {
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

impl Process<'_, IntraCommunicator> {
    /// The root's rank, checked against the communicator.
    fn root(&self) -> Result<usize> {
        let size = self.communicator().size();
        if self.rank() < 0 || self.rank() >= size {
            return Err(crate::CommError::InvalidRank {
                rank: self.rank() as i64,
                size: size as usize,
            });
        }
        Ok(self.rank() as usize)
    }

    /// The root's rank, for a rooted immediate collective called on the root itself.
    fn at_root(&self) -> Result<usize> {
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
