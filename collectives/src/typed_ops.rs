//! Typed forms of the collectives, for slices of numeric elements and built-in reductions.
//! User-defined operations go through the byte forms with `as_bytes` / `as_bytes_mut`.

use crate::coll::Collectives;
use crate::error::Result;
use crate::exec::CollRequest;
use crate::op::{BuiltinOp, Op};
use crate::p2p::PointToPoint;
use crate::typed::{as_bytes, as_bytes_mut, Element};

fn op_for<T: Element>(op: BuiltinOp) -> Result<Op> {
    Op::builtin(op, T::TYPE)
}

impl<C: PointToPoint> Collectives<C> {
    pub fn bcast_typed<T: Element>(&self, buf: &mut [T], root: usize) -> Result<()> {
        self.bcast(as_bytes_mut(buf), root)
    }

    pub fn ibcast_typed<'b, T: Element>(
        &'b self,
        buf: &'b mut [T],
        root: usize,
    ) -> Result<CollRequest<'b, C>> {
        self.ibcast(as_bytes_mut(buf), root)
    }

    /// `recv` matters at the root only (pass `&mut []` elsewhere).
    pub fn reduce_typed<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: BuiltinOp,
        root: usize,
    ) -> Result<()> {
        self.reduce(as_bytes(send), as_bytes_mut(recv), &op_for::<T>(op)?, root)
    }

    pub fn allreduce_typed<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: BuiltinOp,
    ) -> Result<()> {
        self.allreduce(as_bytes(send), as_bytes_mut(recv), &op_for::<T>(op)?)
    }

    pub fn iallreduce_typed<'b, T: Element>(
        &'b self,
        send: &'b [T],
        recv: &'b mut [T],
        op: BuiltinOp,
    ) -> Result<CollRequest<'b, C>> {
        self.iallreduce(as_bytes(send), as_bytes_mut(recv), &op_for::<T>(op)?)
    }

    pub fn reduce_scatter_block_typed<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: BuiltinOp,
    ) -> Result<()> {
        self.reduce_scatter_block(as_bytes(send), as_bytes_mut(recv), &op_for::<T>(op)?)
    }

    pub fn reduce_scatter_typed<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: BuiltinOp,
    ) -> Result<()> {
        self.reduce_scatter(
            as_bytes(send),
            as_bytes_mut(recv),
            counts,
            &op_for::<T>(op)?,
        )
    }

    pub fn scan_typed<T: Element>(&self, send: &[T], recv: &mut [T], op: BuiltinOp) -> Result<()> {
        self.scan(as_bytes(send), as_bytes_mut(recv), &op_for::<T>(op)?)
    }

    pub fn exscan_typed<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: BuiltinOp,
    ) -> Result<()> {
        self.exscan(as_bytes(send), as_bytes_mut(recv), &op_for::<T>(op)?)
    }

    pub fn gather_typed<T: Element>(&self, send: &[T], recv: &mut [T], root: usize) -> Result<()> {
        self.gather(as_bytes(send), as_bytes_mut(recv), root)
    }

    pub fn scatter_typed<T: Element>(&self, send: &[T], recv: &mut [T], root: usize) -> Result<()> {
        self.scatter(as_bytes(send), as_bytes_mut(recv), root)
    }

    pub fn allgather_typed<T: Element>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.allgather(as_bytes(send), as_bytes_mut(recv))
    }

    pub fn alltoall_typed<T: Element>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.alltoall(as_bytes(send), as_bytes_mut(recv))
    }
}
