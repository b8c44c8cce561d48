//! The collectives only an intracommunicator offers ([`IntraCommunicatorCollectives`]): the
//! prefix reductions, the varcount forms and the non-blocking forms the intercommunicator
//! collectives do not offer.

use super::request::{start_intra, CollectiveRequest};
use super::Operation;
use crate::communicator::sealed::Kind;
use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::partition::{invalid, Layout, Partition, PartitionMut};
use crate::{Communicator, IntraCommunicator, Result};
use ibdyn_collectives::{as_bytes, as_bytes_mut, CollRequest, Collectives, Element};

type IntraColls = Collectives<crate::communicator::EngineComm>;

/// Starts the non-blocking collective `f` on the collective state of `comm`.
pub(crate) fn start<'b>(
    comm: &IntraCommunicator,
    f: impl FnOnce(
        &'b IntraColls,
    ) -> ibdyn_collectives::Result<CollRequest<'b, crate::communicator::EngineComm>>,
) -> Result<CollectiveRequest<'b>> {
    start_intra(comm.colls()?, f)
}

/// Runs the blocking collective `f` on the collective state of `comm`.
pub(crate) fn with<R>(
    comm: &IntraCommunicator,
    f: impl FnOnce(&IntraColls) -> ibdyn_collectives::Result<R>,
) -> Result<R> {
    let state = comm.colls()?;
    Ok(f(&state)?)
}

/// Collectives of an intracommunicator only, besides the shared
/// [`CommunicatorCollectives`](super::CommunicatorCollectives): prefix reductions, varcount
/// gathers and all-to-alls, and non-blocking forms with no intercommunicator implementation.
pub trait IntraCommunicatorCollectives {
    /// Starts an allgather (MPI_Iallgather).
    fn immediate_all_gather_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Rank i's `send` lands in block i of `recv` (every rank passes the same counts)
    /// (MPI_Allgatherv).
    fn all_gather_varcount_into<S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &S,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<()>;
    /// Starts an allgatherv (MPI_Iallgatherv).
    fn immediate_all_gather_varcount_into<'b, S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &'b S,
        recv: &'b mut PartitionMut<'_, T>,
    ) -> Result<CollectiveRequest<'b>>;
    /// Starts an all-to-all (MPI_Ialltoall).
    fn immediate_all_to_all_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Block j of `send` goes to rank j, block i of `recv` comes from rank i. The block this
    /// rank sends to rank j must have the size rank j expects from it (MPI_Alltoallv).
    fn all_to_all_varcount_into<S: Equivalence, R: Equivalence>(
        &self,
        send: &Partition<'_, S>,
        recv: &mut PartitionMut<'_, R>,
    ) -> Result<()>;
    /// Starts an alltoallv (MPI_Ialltoallv).
    fn immediate_all_to_all_varcount_into<'b, S: Equivalence, R: Equivalence>(
        &self,
        send: &'b Partition<'_, S>,
        recv: &'b mut PartitionMut<'_, R>,
    ) -> Result<CollectiveRequest<'b>>;
    /// Starts a reduce-scatter with equal blocks (MPI_Ireduce_scatter_block).
    fn immediate_reduce_scatter_block_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    /// Starts a reduce-scatter with `counts[i]` elements to rank i (MPI_Ireduce_scatter).
    fn immediate_reduce_scatter_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    /// Rank i's `recv` gets the reduction of the `send` of ranks 0..=i (MPI_Scan).
    fn scan_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()>;
    /// Starts a scan (MPI_Iscan).
    fn immediate_scan_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    /// Rank i's `recv` gets the reduction of the `send` of ranks 0..i; rank 0's `recv` is
    /// left untouched (MPI_Exscan).
    fn exclusive_scan_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()>;
    /// Starts an exclusive scan (MPI_Iexscan).
    fn immediate_exclusive_scan_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
}

impl IntraCommunicatorCollectives for IntraCommunicator {
    fn immediate_all_gather_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        start(self, |c| c.iallgather(send.as_bytes(), recv.as_bytes_mut()))
    }
    fn all_gather_varcount_into<S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &S,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<()> {
        self.immediate_all_gather_varcount_into(send, recv)?.wait()
    }
    fn immediate_all_gather_varcount_into<'b, S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &'b S,
        recv: &'b mut PartitionMut<'_, T>,
    ) -> Result<CollectiveRequest<'b>> {
        let l = recv.layout("all_gather_varcount_into", self.size() as usize)?;
        let send = send.as_bytes();
        let me = self.rank() as usize;
        if send.len() != l.counts[me] {
            return Err(invalid(
                "all_gather_varcount_into",
                format!(
                    "sends {} bytes but block {me} is {}",
                    send.len(),
                    l.counts[me]
                ),
            ));
        }
        start(self, |c| {
            c.iallgatherv(send, recv.bytes_mut(), &l.counts, &l.displs)
        })
    }
    fn immediate_all_to_all_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>> {
        start(self, |c| c.ialltoall(send.as_bytes(), recv.as_bytes_mut()))
    }
    fn all_to_all_varcount_into<S: Equivalence, R: Equivalence>(
        &self,
        send: &Partition<'_, S>,
        recv: &mut PartitionMut<'_, R>,
    ) -> Result<()> {
        self.immediate_all_to_all_varcount_into(send, recv)?.wait()
    }
    fn immediate_all_to_all_varcount_into<'b, S: Equivalence, R: Equivalence>(
        &self,
        send: &'b Partition<'_, S>,
        recv: &'b mut PartitionMut<'_, R>,
    ) -> Result<CollectiveRequest<'b>> {
        const WHAT: &str = "all_to_all_varcount_into";
        self.colls()?;
        let (me, p) = (self.rank() as usize, self.size() as usize);
        let checked = send.layout(WHAT, p).and_then(|sl| {
            let rl = recv.layout(WHAT, p)?;
            if sl.counts[me] != rl.counts[me] {
                return Err(invalid(
                    WHAT,
                    format!(
                        "sends itself {} bytes but expects {}",
                        sl.counts[me], rl.counts[me]
                    ),
                ));
            }
            Ok((sl, rl))
        });
        match checked {
            Ok((sl, rl)) => start(self, |c| {
                c.ialltoallv(
                    send.bytes(),
                    &sl.counts,
                    &sl.displs,
                    recv.bytes_mut(),
                    &rl.counts,
                    &rl.displs,
                )
            }),
            Err(e) => {
                let z = Layout::empty(p);
                let stand_in = start(self, |c| {
                    c.ialltoallv(&[], &z.counts, &z.displs, &mut [], &z.counts, &z.displs)
                });
                CollectiveRequest::refused(stand_in, e)
            }
        }
    }
    fn immediate_reduce_scatter_block_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (as_bytes(send), as_bytes_mut(recv));
        start(self, |c| c.ireduce_scatter_block(s, r, &op))
    }
    fn immediate_reduce_scatter_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (as_bytes(send), as_bytes_mut(recv));
        start(self, |c| c.ireduce_scatter(s, r, counts, &op))
    }
    fn scan_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()> {
        let op = op.op_for::<T>()?;
        with(self, |c| c.scan(as_bytes(send), as_bytes_mut(recv), &op))
    }
    fn immediate_scan_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (as_bytes(send), as_bytes_mut(recv));
        start(self, |c| c.iscan(s, r, &op))
    }
    fn exclusive_scan_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()> {
        let op = op.op_for::<T>()?;
        with(self, |c| c.exscan(as_bytes(send), as_bytes_mut(recv), &op))
    }
    fn immediate_exclusive_scan_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (as_bytes(send), as_bytes_mut(recv));
        start(self, |c| c.iexscan(s, r, &op))
    }
}
