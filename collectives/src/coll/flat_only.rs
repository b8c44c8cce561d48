//! The operations whose only tier is the flat one: each draws its tag and runs one schedule.

use super::Collectives;
use crate::error::Result;
use crate::exec::CollRequest;
use crate::op::Op;
use crate::p2p::PointToPoint;

impl<C: PointToPoint> Collectives<C> {
    /// Gathers `send` from every rank into the root's `recv` at byte `displs[i]`, `counts[i]`
    /// bytes from rank i. `counts`/`displs` matter at the root only.
    pub fn gatherv(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<()> {
        self.igatherv(send, recv, counts, displs, root)?.wait()
    }

    /// The non-blocking form of `gatherv`.
    pub fn igatherv<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        self.flat
            .igatherv(self.next_tag(), send, recv, counts, displs, root)
    }

    /// Scatters the root's `send` (p blocks of `recv.len()` bytes) into every `recv`.
    pub fn scatter(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()> {
        self.iscatter(send, recv, root)?.wait()
    }

    /// The non-blocking form of `scatter`.
    pub fn iscatter<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        self.flat.iscatter(self.next_tag(), send, recv, root)
    }

    /// Scatters `counts[i]` bytes at `displs[i]` of the root's `send` to rank i's `recv`.
    pub fn scatterv(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        root: usize,
    ) -> Result<()> {
        self.iscatterv(send, counts, displs, recv, root)?.wait()
    }

    /// The non-blocking form of `scatterv`.
    pub fn iscatterv<'b>(
        &'b self,
        send: &'b [u8],
        counts: &[usize],
        displs: &[usize],
        recv: &'b mut [u8],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        self.flat
            .iscatterv(self.next_tag(), send, counts, displs, recv, root)
    }

    /// Like allgather with `counts[i]` bytes from rank i placed at `displs[i]` (all ranks
    /// pass the same counts and displacements).
    pub fn allgatherv(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        self.iallgatherv(send, recv, counts, displs)?.wait()
    }

    /// The non-blocking form of `allgatherv`.
    pub fn iallgatherv<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<CollRequest<'b, C>> {
        self.flat
            .iallgatherv(self.next_tag(), send, recv, counts, displs)
    }

    /// Block i of `send` to rank i, block j of `recv` from rank j (equal block sizes).
    pub fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        self.ialltoall(send, recv)?.wait()
    }

    /// The non-blocking form of `alltoall`.
    pub fn ialltoall<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
        self.flat.ialltoall(self.next_tag(), send, recv)
    }

    /// Alltoall with per-peer byte counts and displacements on both sides.
    #[allow(clippy::too_many_arguments)]
    pub fn alltoallv(
        &self,
        send: &[u8],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &mut [u8],
        rcounts: &[usize],
        rdispls: &[usize],
    ) -> Result<()> {
        self.ialltoallv(send, scounts, sdispls, recv, rcounts, rdispls)?
            .wait()
    }

    /// The non-blocking form of `alltoallv`.
    #[allow(clippy::too_many_arguments)]
    pub fn ialltoallv<'b>(
        &'b self,
        send: &'b [u8],
        scounts: &[usize],
        sdispls: &[usize],
        recv: &'b mut [u8],
        rcounts: &[usize],
        rdispls: &[usize],
    ) -> Result<CollRequest<'b, C>> {
        let tag = self.next_tag();
        self.flat
            .ialltoallv(tag, send, scounts, sdispls, recv, rcounts, rdispls)
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
        self.flat
            .ireduce_scatter_block(self.next_tag(), send, recv, op)
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
        self.flat
            .ireduce_scatter(self.next_tag(), send, recv, counts, op)
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
        self.flat.iscan(self.next_tag(), send, recv, op)
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
        self.flat.iexscan(self.next_tag(), send, recv, op)
    }
}
