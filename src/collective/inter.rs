//! The rooted intercommunicator collectives, with MPI's roles ([`InterRoot`]): the root's
//! group through [`InterCommunicatorCollectives`], the other group either there with
//! `InterRoot::Remote(r)` or as `ic.process_at_rank(r)` through [`RemoteRoot`].

use super::request::{start_inter, CollectiveRequest};
use super::Operation;
use crate::communicator::sealed::Kind;
use crate::datatype::{Buffer, BufferMut};
use crate::point_to_point::Process;
use crate::{InterCommunicator, Result};
use ibdyn_collectives::{as_bytes, as_bytes_mut, Element, InterRole};

/// A process's part in a rooted intercommunicator collective (MPI_ROOT, MPI_PROC_NULL, or
/// the root's rank in the remote group).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InterRoot {
    /// This process is the root (MPI_ROOT).
    Root,
    /// This process is in the root's group but is not the root: it takes no part
    /// (MPI_PROC_NULL).
    ProcNull,
    /// The root is this rank of the other (remote) group.
    Remote(i32),
}

impl InterRoot {
    fn role(self, comm: &InterCommunicator) -> Result<InterRole> {
        Ok(match self {
            InterRoot::Root => InterRole::Root,
            InterRoot::ProcNull => InterRole::ProcNull,
            InterRoot::Remote(r) if r >= 0 && r < comm.remote_size() => {
                InterRole::Remote(r as usize)
            }
            InterRoot::Remote(r) => {
                return Err(crate::CommError::InvalidRank {
                    rank: r as i64,
                    size: comm.remote_size() as usize,
                })
            }
        })
    }
}

/// The rooted intercommunicator collectives, with MPI's roles. Results cross between the
/// groups: the root receives from, or sends to, the OTHER group. (The unrooted ones are the
/// [`CommunicatorCollectives`](super::CommunicatorCollectives) methods.)
pub trait InterCommunicatorCollectives {
    /// `buf` is read at the root, written in the other group, unused with `ProcNull`
    /// (MPI_Bcast on an intercommunicator).
    fn inter_broadcast_into<B: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        buf: &mut B,
    ) -> Result<()>;
    /// The non-blocking form of `inter_broadcast_into` (MPI_Ibcast).
    fn immediate_inter_broadcast_into<'b, B: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        buf: &'b mut B,
    ) -> Result<CollectiveRequest<'b>>;
    /// The root's `recv` gets the reduction of the other group's `send`; `recv` is used at
    /// the root only, `send` in the other group only (MPI_Reduce on an intercommunicator).
    fn inter_reduce_into<T: Element>(
        &self,
        role: InterRoot,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()>;
    /// The root's `recv` (remote-size blocks) gets the other group's `send` blocks
    /// (MPI_Gather on an intercommunicator).
    fn inter_gather_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    /// Block i of the root's `send` goes to `recv` of remote rank i (MPI_Scatter on an
    /// intercommunicator).
    fn inter_scatter_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    /// Local rank i gets `counts[i]` elements of the reduction of the other group's `send`
    /// (MPI_Reduce_scatter on an intercommunicator; the same as
    /// `CommunicatorCollectives::reduce_scatter_into` there).
    fn inter_reduce_scatter_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<()>;
    /// The non-blocking form of `inter_reduce_into` (MPI_Ireduce). The blocking and
    /// non-blocking forms do not match each other (MPI's rule): every process of both
    /// groups calls the same one.
    fn immediate_inter_reduce_into<'b, T: Element>(
        &self,
        role: InterRoot,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    /// The non-blocking form of `inter_gather_into` (MPI_Igather).
    fn immediate_inter_gather_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// The non-blocking form of `inter_scatter_into` (MPI_Iscatter).
    fn immediate_inter_scatter_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Every process gets the other group's `send` blocks in rank order (MPI_Iallgather on
    /// an intercommunicator).
    fn immediate_inter_all_gather_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Block j of `send` goes to remote rank j, block i of `recv` comes from remote rank i
    /// (MPI_Ialltoall on an intercommunicator).
    fn immediate_inter_all_to_all_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Each process gets its block (`recv`) of the reduction of the other group's `send`
    /// (local-size blocks; MPI_Ireduce_scatter_block on an intercommunicator).
    fn immediate_inter_reduce_scatter_block_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    /// The non-blocking form of `inter_reduce_scatter_into` (MPI_Ireduce_scatter).
    fn immediate_inter_reduce_scatter_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
}

impl InterCommunicatorCollectives for InterCommunicator {
    fn inter_broadcast_into<B: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        buf: &mut B,
    ) -> Result<()> {
        let role = role.role(self)?;
        Ok(self.colls()?.bcast(buf.as_bytes_mut(), role)?)
    }
    fn immediate_inter_broadcast_into<'b, B: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        buf: &'b mut B,
    ) -> Result<CollectiveRequest<'b>> {
        let role = role.role(self)?;
        start_inter(self.colls()?, |c| c.ibcast(buf.as_bytes_mut(), role))
    }
    fn inter_reduce_into<T: Element>(
        &self,
        role: InterRoot,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()> {
        let op = op.op_for::<T>()?;
        let role = role.role(self)?;
        Ok(self
            .colls()?
            .reduce(as_bytes(send), as_bytes_mut(recv), &op, role)?)
    }
    fn inter_gather_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        let role = role.role(self)?;
        Ok(self
            .colls()?
            .gather(send.as_bytes(), recv.as_bytes_mut(), role)?)
    }
    fn inter_scatter_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        let role = role.role(self)?;
        Ok(self
            .colls()?
            .scatter(send.as_bytes(), recv.as_bytes_mut(), role)?)
    }
    fn inter_reduce_scatter_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<()> {
        let op = op.op_for::<T>()?;
        Ok(self
            .colls()?
            .reduce_scatter(as_bytes(send), as_bytes_mut(recv), counts, &op)?)
    }
    fn immediate_inter_reduce_into<'b, T: Element>(
        &self,
        role: InterRoot,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let role = role.role(self)?;
        start_inter(self.colls()?, |c| {
            c.ireduce(as_bytes(send), as_bytes_mut(recv), &op, role)
        })
    }
    fn immediate_inter_gather_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        let role = role.role(self)?;
        start_inter(self.colls()?, |c| {
            c.igather(send.as_bytes(), recv.as_bytes_mut(), role)
        })
    }
    fn immediate_inter_scatter_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        let role = role.role(self)?;
        start_inter(self.colls()?, |c| {
            c.iscatter(send.as_bytes(), recv.as_bytes_mut(), role)
        })
    }
    fn immediate_inter_all_gather_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        start_inter(self.colls()?, |c| {
            c.iallgather(send.as_bytes(), recv.as_bytes_mut())
        })
    }
    fn immediate_inter_all_to_all_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        start_inter(self.colls()?, |c| {
            c.ialltoall(send.as_bytes(), recv.as_bytes_mut())
        })
    }
    fn immediate_inter_reduce_scatter_block_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        start_inter(self.colls()?, |c| {
            c.ireduce_scatter_block(as_bytes(send), as_bytes_mut(recv), &op)
        })
    }
    fn immediate_inter_reduce_scatter_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        start_inter(self.colls()?, |c| {
            c.ireduce_scatter(as_bytes(send), as_bytes_mut(recv), counts, &op)
        })
    }
}

/// The other group's side of a rooted intercommunicator collective, called on
/// `ic.process_at_rank(r)` where `r` is the root's rank in the remote group (MPI's root
/// argument): the same as the [`InterCommunicatorCollectives`] method with
/// `InterRoot::Remote(r)`. The root's own group uses `InterRoot::Root` / `ProcNull` there.
pub trait RemoteRoot {
    /// Receives the remote root's `buf` (MPI_Bcast with the root's remote rank).
    fn broadcast_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<()>;
    /// Sends `send` to the remote root (MPI_Gather with the root's remote rank).
    fn gather_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()>;
    /// Receives this rank's block of the remote root's `send` (MPI_Scatter with the root's
    /// remote rank).
    fn scatter_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()>;
    /// Contributes `send` to the remote root's reduction (MPI_Reduce with the root's
    /// remote rank).
    fn reduce_into<T: Element>(&self, send: &[T], op: Operation) -> Result<()>;
}

impl RemoteRoot for Process<'_, InterCommunicator> {
    fn broadcast_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<()> {
        let ic = self.communicator();
        ic.inter_broadcast_into(InterRoot::Remote(self.rank()), buf)
    }
    fn gather_into<S: Buffer + ?Sized>(&self, send: &S) -> Result<()> {
        let ic = self.communicator();
        ic.inter_gather_into(InterRoot::Remote(self.rank()), send, &mut [0u8; 0][..])
    }
    fn scatter_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()> {
        let ic = self.communicator();
        ic.inter_scatter_into(InterRoot::Remote(self.rank()), &[0u8; 0][..], recv)
    }
    fn reduce_into<T: Element>(&self, send: &[T], op: Operation) -> Result<()> {
        let ic = self.communicator();
        ic.inter_reduce_into(InterRoot::Remote(self.rank()), send, &mut [], op)
    }
}
