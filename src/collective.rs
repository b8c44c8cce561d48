//! rsmpi-style collectives: `world.all_reduce_into(&x, &mut y, SystemOperation::sum())`,
//! `world.process_at_rank(0).broadcast_into(&mut buf)`, plus the non-blocking forms.
//! The algorithms live in `ibdyn-collectives`; each communicator caches its collective state.

use crate::datatype::{Buffer, BufferMut};
use crate::point_to_point::Process;
use crate::{Communicator, Result};
use ibdyn_collectives::{BuiltinOp, CollRequest, Collectives, Element, Op};
use std::rc::Rc;

pub use ibdyn_collectives::{Algorithm, CollOp, ElemType};

/// Algorithms can be forced per operation with `IBDYN_COLL_ALGO=op:algo[,op:algo...]`.
pub const COLL_ALGO_ENV: &str = ibdyn_collectives::ALGO_ENV;

/// A reduction operation: a built-in one (typed by the call) or a user-defined one.
#[derive(Clone)]
pub enum Operation {
    System(BuiltinOp),
    User(Op),
}

/// The built-in operations, spelt as rsmpi spells them.
pub struct SystemOperation;

impl SystemOperation {
    pub fn sum() -> Operation {
        Operation::System(BuiltinOp::Sum)
    }
    pub fn product() -> Operation {
        Operation::System(BuiltinOp::Prod)
    }
    pub fn min() -> Operation {
        Operation::System(BuiltinOp::Min)
    }
    pub fn max() -> Operation {
        Operation::System(BuiltinOp::Max)
    }
    pub fn logical_and() -> Operation {
        Operation::System(BuiltinOp::LogicalAnd)
    }
    pub fn logical_or() -> Operation {
        Operation::System(BuiltinOp::LogicalOr)
    }
    pub fn logical_xor() -> Operation {
        Operation::System(BuiltinOp::LogicalXor)
    }
    pub fn bitwise_and() -> Operation {
        Operation::System(BuiltinOp::BitAnd)
    }
    pub fn bitwise_or() -> Operation {
        Operation::System(BuiltinOp::BitOr)
    }
    pub fn bitwise_xor() -> Operation {
        Operation::System(BuiltinOp::BitXor)
    }
}

/// User-defined operations: `f(a, b)` combines `a` into `b` (b = a op b, MPI's order).
pub struct UserOperation;

impl UserOperation {
    pub fn commutative<T: Element, F: Fn(&[T], &mut [T]) + Send + Sync + 'static>(
        f: F,
    ) -> Operation {
        Operation::User(Op::user::<T, F>(true, f))
    }
    pub fn non_commutative<T: Element, F: Fn(&[T], &mut [T]) + Send + Sync + 'static>(
        f: F,
    ) -> Operation {
        Operation::User(Op::user::<T, F>(false, f))
    }
}

impl Operation {
    fn op_for<T: Element>(&self) -> Result<Op> {
        match self {
            Operation::System(b) => Ok(Op::builtin(*b, T::TYPE)?),
            Operation::User(o) => Ok(o.clone()),
        }
    }
}

fn coll(comm: &Communicator) -> Result<Rc<Collectives<Communicator>>> {
    if comm.is_freed() {
        return Err(crate::CommError::CommFreed);
    }
    if comm.is_inter() {
        return Err(crate::CommError::InvalidArgument(
            "intercommunicator collectives are not available yet".into(),
        ));
    }
    Ok(ibdyn_collectives::collectives_of(comm)?)
}

fn with<R>(
    comm: &Communicator,
    f: impl FnOnce(&Collectives<Communicator>) -> ibdyn_collectives::Result<R>,
) -> Result<R> {
    let c = coll(comm)?;
    Ok(f(&c)?)
}

/// A non-blocking collective in flight. It holds the communicator's collective state, so it
/// stays valid however the communicator handle is used meanwhile.
#[must_use = "a collective request must be waited for"]
pub struct CollectiveRequest<'b> {
    // Field order matters: the request borrows the state behind `_state` and drops first.
    req: CollRequest<'b, Communicator>,
    _state: Rc<Collectives<Communicator>>,
}

impl CollectiveRequest<'_> {
    pub fn test(&mut self) -> Result<bool> {
        Ok(self.req.test()?)
    }
    pub fn wait(self) -> Result<()> {
        Ok(self.req.wait()?)
    }
}

fn start<'b>(
    comm: &Communicator,
    f: impl FnOnce(
        &'b Collectives<Communicator>,
    ) -> ibdyn_collectives::Result<CollRequest<'b, Communicator>>,
) -> Result<CollectiveRequest<'b>> {
    let state = coll(comm)?;
    // SAFETY: `c` lives inside the Rc allocation `state`, which the returned request keeps
    // alive (and drops after the borrowing request); Rc contents never move.
    let c: &'b Collectives<Communicator> = unsafe { &*Rc::as_ptr(&state) };
    let req = f(c)?;
    Ok(CollectiveRequest { req, _state: state })
}

/// Collectives over every process of a communicator (rsmpi's `CommunicatorCollectives`).
pub trait CommunicatorCollectives {
    fn barrier(&self) -> Result<()>;
    fn immediate_barrier(&self) -> Result<CollectiveRequest<'static>>;
    fn all_gather_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    /// `counts`/`displs` in bytes of the receive buffer, one per rank.
    fn all_gather_varcount_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()>;
    fn all_to_all_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    fn all_reduce_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()>;
    fn immediate_all_reduce_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    fn reduce_scatter_block_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()>;
    fn scan_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()>;
    fn exclusive_scan_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()>;
}

impl CommunicatorCollectives for Communicator {
    fn barrier(&self) -> Result<()> {
        with(self, |c| c.barrier())
    }
    fn immediate_barrier(&self) -> Result<CollectiveRequest<'static>> {
        start(self, |c| c.ibarrier())
    }
    fn all_gather_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        with(self, |c| c.allgather(send.as_bytes(), recv.as_bytes_mut()))
    }
    fn all_gather_varcount_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        with(self, |c| {
            c.allgatherv(send.as_bytes(), recv.as_bytes_mut(), counts, displs)
        })
    }
    fn all_to_all_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        with(self, |c| c.alltoall(send.as_bytes(), recv.as_bytes_mut()))
    }
    fn all_reduce_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()> {
        let op = op.op_for::<T>()?;
        with(self, |c| {
            c.allreduce(
                ibdyn_collectives::as_bytes(send),
                ibdyn_collectives::as_bytes_mut(recv),
                &op,
            )
        })
    }
    fn immediate_all_reduce_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        start(self, |c| {
            c.iallreduce(
                ibdyn_collectives::as_bytes(send),
                ibdyn_collectives::as_bytes_mut(recv),
                &op,
            )
        })
    }
    fn reduce_scatter_block_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()> {
        let op = op.op_for::<T>()?;
        with(self, |c| {
            c.reduce_scatter_block(
                ibdyn_collectives::as_bytes(send),
                ibdyn_collectives::as_bytes_mut(recv),
                &op,
            )
        })
    }
    fn scan_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()> {
        let op = op.op_for::<T>()?;
        with(self, |c| {
            c.scan(
                ibdyn_collectives::as_bytes(send),
                ibdyn_collectives::as_bytes_mut(recv),
                &op,
            )
        })
    }
    fn exclusive_scan_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()> {
        let op = op.op_for::<T>()?;
        with(self, |c| {
            c.exscan(
                ibdyn_collectives::as_bytes(send),
                ibdyn_collectives::as_bytes_mut(recv),
                &op,
            )
        })
    }
}

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
    /// `counts`/`displs` in bytes, significant at the root.
    fn gather_varcount_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()>;
    /// Non-root side of a scatter.
    fn scatter_into<R: BufferMut + ?Sized>(&self, recv: &mut R) -> Result<()>;
    fn scatter_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    /// Non-root side of a reduce.
    fn reduce_into<T: Element>(&self, send: &[T], op: Operation) -> Result<()>;
    fn reduce_into_root<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation)
        -> Result<()>;
}

impl Root for Process<'_> {
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
    fn gather_varcount_into_root<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()> {
        let root = self.root()?;
        with(self.communicator(), |c| {
            c.gatherv(send.as_bytes(), recv.as_bytes_mut(), counts, displs, root)
        })
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
    fn reduce_into<T: Element>(&self, send: &[T], op: Operation) -> Result<()> {
        let root = self.root()?;
        let op = op.op_for::<T>()?;
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
}
