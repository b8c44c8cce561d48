//! The collectives both kinds of communicator have ([`CommunicatorCollectives`]). On an
//! intercommunicator the results cross between the groups.

use super::request::{start_inter, start_intra, CollectiveRequest};
use super::Operation;
use crate::communicator::EngineComm;
use crate::datatype::{Buffer, BufferMut};
use crate::{Communicator, Result};
use ibdyn_collectives::{as_bytes, as_bytes_mut, Collectives, Element, InterCollectives, Op};
use std::rc::Rc;

type CollResult<T> = ibdyn_collectives::Result<T>;

/// The collective state of one communicator kind, seen through the operations both kinds
/// share (sealed: reachable only inside this crate).
pub trait Backend {
    /// MPI_Barrier.
    fn barrier(&self) -> CollResult<()>;
    /// MPI_Allgather.
    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> CollResult<()>;
    /// MPI_Alltoall.
    fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> CollResult<()>;
    /// MPI_Allreduce.
    fn allreduce(&self, send: &[u8], recv: &mut [u8], op: &Op) -> CollResult<()>;
    /// MPI_Reduce_scatter_block.
    fn reduce_scatter_block(&self, send: &[u8], recv: &mut [u8], op: &Op) -> CollResult<()>;
    /// MPI_Reduce_scatter.
    fn reduce_scatter(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        op: &Op,
    ) -> CollResult<()>;
    /// MPI_Ibarrier on `state`.
    fn ibarrier(state: Rc<Self>) -> Result<CollectiveRequest<'static>>;
    /// MPI_Iallreduce on `state`.
    fn iallreduce<'b>(
        state: Rc<Self>,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<CollectiveRequest<'b>>;
}

/// The one operation set both kinds of collective state offer, forwarded to the type's own
/// methods; `$start` wraps its non-blocking requests.
macro_rules! backend {
    ($state:ident, $start:ident) => {
        impl Backend for $state<EngineComm> {
            fn barrier(&self) -> CollResult<()> {
                $state::barrier(self)
            }
            fn allgather(&self, send: &[u8], recv: &mut [u8]) -> CollResult<()> {
                $state::allgather(self, send, recv)
            }
            fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> CollResult<()> {
                $state::alltoall(self, send, recv)
            }
            fn allreduce(&self, send: &[u8], recv: &mut [u8], op: &Op) -> CollResult<()> {
                $state::allreduce(self, send, recv, op)
            }
            fn reduce_scatter_block(
                &self,
                send: &[u8],
                recv: &mut [u8],
                op: &Op,
            ) -> CollResult<()> {
                $state::reduce_scatter_block(self, send, recv, op)
            }
            fn reduce_scatter(
                &self,
                send: &[u8],
                recv: &mut [u8],
                counts: &[usize],
                op: &Op,
            ) -> CollResult<()> {
                $state::reduce_scatter(self, send, recv, counts, op)
            }
            fn ibarrier(state: Rc<Self>) -> Result<CollectiveRequest<'static>> {
                $start(state, |c| c.ibarrier())
            }
            fn iallreduce<'b>(
                state: Rc<Self>,
                send: &'b [u8],
                recv: &'b mut [u8],
                op: &Op,
            ) -> Result<CollectiveRequest<'b>> {
                $start(state, |c| c.iallreduce(send, recv, op))
            }
        }
    };
}

backend!(Collectives, start_intra);
backend!(InterCollectives, start_inter);

/// Collectives over every process of a communicator of either kind (rsmpi's
/// `CommunicatorCollectives`). On an intercommunicator each group receives what the OTHER
/// group contributed: the gathered blocks, or the reduction, of the remote group.
pub trait CommunicatorCollectives: Communicator {
    /// Waits until every process has called it (MPI_Barrier).
    fn barrier(&self) -> Result<()> {
        Ok(self.colls()?.barrier()?)
    }
    /// Starts a barrier (MPI_Ibarrier).
    fn immediate_barrier(&self) -> Result<CollectiveRequest<'static>> {
        Self::Colls::ibarrier(self.colls()?)
    }
    /// Rank i's `send` lands in block i of every `recv` (MPI_Allgather).
    fn all_gather_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        Ok(self
            .colls()?
            .allgather(send.as_bytes(), recv.as_bytes_mut())?)
    }
    /// Block j of `send` goes to rank j, block i of `recv` comes from rank i (MPI_Alltoall).
    fn all_to_all_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        Ok(self
            .colls()?
            .alltoall(send.as_bytes(), recv.as_bytes_mut())?)
    }
    /// Every `recv` gets the reduction of every rank's `send` (MPI_Allreduce).
    fn all_reduce_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()> {
        let op = op.op_for::<T>()?;
        Ok(self
            .colls()?
            .allreduce(as_bytes(send), as_bytes_mut(recv), &op)?)
    }
    /// Starts an allreduce (MPI_Iallreduce).
    fn immediate_all_reduce_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        Self::Colls::iallreduce(self.colls()?, as_bytes(send), as_bytes_mut(recv), &op)
    }
    /// Rank i's `recv` gets block i of the reduction of every rank's `send`; every block
    /// has `recv.len()` elements (MPI_Reduce_scatter_block).
    fn reduce_scatter_block_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()> {
        let op = op.op_for::<T>()?;
        Ok(self
            .colls()?
            .reduce_scatter_block(as_bytes(send), as_bytes_mut(recv), &op)?)
    }
    /// Rank i's `recv` gets `counts[i]` elements of the reduction of every rank's `send`
    /// (`counts` sums to `send.len()` and is the same on every rank) (MPI_Reduce_scatter).
    fn reduce_scatter_into<T: Element>(
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
}

impl<C: Communicator> CommunicatorCollectives for C {}
