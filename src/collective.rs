//! rsmpi-style collectives: `world.all_reduce_into(&x, &mut y, SystemOperation::sum())`,
//! `world.process_at_rank(0).broadcast_into(&mut buf)`, plus the non-blocking forms.
//! The algorithms live in `ibdyn-collectives`; each communicator caches its collective state.
//! Varcount forms take a `Partition`/`PartitionMut` (counts and displacements in elements),
//! checked on the calling rank; a rank whose layout is refused still runs the operation with
//! empty blocks (a stand-in), so the others see a size mismatch rather than wait for ever.

use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::partition::{invalid, Layout, Partition, PartitionMut};
use crate::{Communicator, Result};
use ibdyn_collectives::{BuiltinOp, CollRequest, Collectives, Element, InterRole, Op};
use std::rc::Rc;

/// The collective state of an intercommunicator, and a non-blocking call on it.
type InterCollectives = ibdyn_collectives::InterCollectives<Communicator>;
type InterRequest<'b> = ibdyn_collectives::InterRequest<'b, Communicator>;

mod root;
pub use root::Root;

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
            "this collective is not defined (or not offered) on an intercommunicator".into(),
        ));
    }
    Ok(ibdyn_collectives::collectives_of(comm)?)
}

fn inter(comm: &Communicator) -> Result<Option<Rc<InterCollectives>>> {
    if comm.is_freed() {
        return Err(crate::CommError::CommFreed);
    }
    if !comm.is_inter() {
        return Ok(None);
    }
    Ok(Some(ibdyn_collectives::inter_collectives_of(comm)?))
}

/// Runs `f` on the intercommunicator collectives of `comm`, or `g` on its intracommunicator ones.
fn either<R>(
    comm: &Communicator,
    f: impl FnOnce(&InterCollectives) -> ibdyn_collectives::Result<R>,
    g: impl FnOnce(&Collectives<Communicator>) -> ibdyn_collectives::Result<R>,
) -> Result<R> {
    match inter(comm)? {
        Some(ic) => Ok(f(&ic)?),
        None => with(comm, g),
    }
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
    inner: Inflight<'b>,
    /// This rank's arguments were refused: the request runs an empty stand-in (so the other
    /// ranks are not left waiting) and then reports this error.
    refused: Option<crate::CommError>,
}

// Field order matters: each request borrows the state behind its Rc and drops first.
enum Inflight<'b> {
    Intra {
        req: CollRequest<'b, Communicator>,
        _state: Rc<Collectives<Communicator>>,
    },
    Inter {
        req: InterRequest<'b>,
        _state: Rc<InterCollectives>,
    },
}

impl CollectiveRequest<'_> {
    /// True once complete; an error once complete if it failed.
    pub fn test(&mut self) -> Result<bool> {
        let done = match &mut self.inner {
            Inflight::Intra { req, .. } => req.test(),
            Inflight::Inter { req, .. } => req.test(),
        };
        match (self.refused.take(), done) {
            (Some(e), Ok(true) | Err(_)) => Err(e),
            (refused, done) => {
                self.refused = refused;
                Ok(done?)
            }
        }
    }
    pub fn wait(self) -> Result<()> {
        let done = match self.inner {
            Inflight::Intra { req, .. } => req.wait(),
            Inflight::Inter { req, .. } => req.wait(),
        };
        match self.refused {
            Some(e) => Err(e),
            None => Ok(done?),
        }
    }

    /// The request of an empty stand-in run for arguments refused with `e`.
    /// If even the stand-in cannot start, the refusal is the error to report.
    fn refused(started: Result<Self>, e: crate::CommError) -> Result<Self> {
        match started {
            Ok(mut req) => {
                req.refused = Some(e);
                Ok(req)
            }
            Err(_) => Err(e),
        }
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
    Ok(CollectiveRequest {
        inner: Inflight::Intra { req, _state: state },
        refused: None,
    })
}

/// As `start`, for the intercommunicator collectives of `comm`.
fn start_inter<'b>(
    state: Rc<InterCollectives>,
    f: impl FnOnce(&'b InterCollectives) -> ibdyn_collectives::Result<InterRequest<'b>>,
) -> Result<CollectiveRequest<'b>> {
    // SAFETY: as in `start`: the request keeps the Rc allocation alive and drops first.
    let c: &'b InterCollectives = unsafe { &*Rc::as_ptr(&state) };
    let req = f(c)?;
    Ok(CollectiveRequest {
        inner: Inflight::Inter { req, _state: state },
        refused: None,
    })
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
    fn immediate_all_gather_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Rank i's `send` lands in block i of `recv` (every rank passes the same counts).
    fn all_gather_varcount_into<S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &S,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<()>;
    fn immediate_all_gather_varcount_into<'b, S: Buffer + ?Sized, T: Equivalence>(
        &self,
        send: &'b S,
        recv: &'b mut PartitionMut<'_, T>,
    ) -> Result<CollectiveRequest<'b>>;
    fn all_to_all_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    fn immediate_all_to_all_into<'b, S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &'b S,
        recv: &'b mut R,
    ) -> Result<CollectiveRequest<'b>>;
    /// Block j of `send` goes to rank j, block i of `recv` comes from rank i. The block this
    /// rank sends to rank j must have the size rank j expects from it.
    fn all_to_all_varcount_into<S: Equivalence, R: Equivalence>(
        &self,
        send: &Partition<'_, S>,
        recv: &mut PartitionMut<'_, R>,
    ) -> Result<()>;
    fn immediate_all_to_all_varcount_into<'b, S: Equivalence, R: Equivalence>(
        &self,
        send: &'b Partition<'_, S>,
        recv: &'b mut PartitionMut<'_, R>,
    ) -> Result<CollectiveRequest<'b>>;
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
    fn immediate_reduce_scatter_block_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    /// Rank i's `recv` gets `counts[i]` elements of the reduction of every rank's `send`
    /// (`counts` sums to `send.len()` and is the same on every rank). On an
    /// intercommunicator the reduction is of the other group's `send`.
    fn reduce_scatter_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<()>;
    fn immediate_reduce_scatter_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    fn scan_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()>;
    fn immediate_scan_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
    /// Rank 0's `recv` is left untouched.
    fn exclusive_scan_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()>;
    fn immediate_exclusive_scan_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>>;
}

impl CommunicatorCollectives for Communicator {
    fn barrier(&self) -> Result<()> {
        either(self, |ic| ic.barrier(), |c| c.barrier())
    }
    fn immediate_barrier(&self) -> Result<CollectiveRequest<'static>> {
        match inter(self)? {
            Some(ic) => start_inter(ic, |c| c.ibarrier()),
            None => start(self, |c| c.ibarrier()),
        }
    }
    fn all_gather_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        let (s, r) = (send.as_bytes(), recv.as_bytes_mut());
        match inter(self)? {
            Some(ic) => Ok(ic.allgather(s, r)?),
            None => with(self, |c| c.allgather(s, r)),
        }
    }
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
    fn all_to_all_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        let (s, r) = (send.as_bytes(), recv.as_bytes_mut());
        match inter(self)? {
            Some(ic) => Ok(ic.alltoall(s, r)?),
            None => with(self, |c| c.alltoall(s, r)),
        }
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
        coll(self)?;
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
    fn all_reduce_into<T: Element>(&self, send: &[T], recv: &mut [T], op: Operation) -> Result<()> {
        let op = op.op_for::<T>()?;
        let (s, r) = (
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
        );
        match inter(self)? {
            Some(ic) => Ok(ic.allreduce(s, r, &op)?),
            None => with(self, |c| c.allreduce(s, r, &op)),
        }
    }
    fn immediate_all_reduce_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
        );
        match inter(self)? {
            Some(ic) => start_inter(ic, |c| c.iallreduce(s, r, &op)),
            None => start(self, |c| c.iallreduce(s, r, &op)),
        }
    }
    fn reduce_scatter_block_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()> {
        let op = op.op_for::<T>()?;
        let (s, r) = (
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
        );
        match inter(self)? {
            Some(ic) => Ok(ic.reduce_scatter_block(s, r, &op)?),
            None => with(self, |c| c.reduce_scatter_block(s, r, &op)),
        }
    }
    fn immediate_reduce_scatter_block_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
        );
        start(self, |c| c.ireduce_scatter_block(s, r, &op))
    }
    fn reduce_scatter_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<()> {
        let op = op.op_for::<T>()?;
        let (s, r) = (
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
        );
        match inter(self)? {
            Some(ic) => Ok(ic.reduce_scatter(s, r, counts, &op)?),
            None => with(self, |c| c.reduce_scatter(s, r, counts, &op)),
        }
    }
    fn immediate_reduce_scatter_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
        );
        start(self, |c| c.ireduce_scatter(s, r, counts, &op))
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
    fn immediate_scan_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
        );
        start(self, |c| c.iscan(s, r, &op))
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
    fn immediate_exclusive_scan_into<'b, T: Element>(
        &self,
        send: &'b [T],
        recv: &'b mut [T],
        op: Operation,
    ) -> Result<CollectiveRequest<'b>> {
        let op = op.op_for::<T>()?;
        let (s, r) = (
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
        );
        start(self, |c| c.iexscan(s, r, &op))
    }
}

/// A process's part in a rooted intercommunicator collective (MPI_ROOT, MPI_PROC_NULL, or
/// the root's rank in the remote group).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InterRoot {
    /// This process is the root.
    Root,
    /// This process is in the root's group but is not the root: it takes no part.
    ProcNull,
    /// The root is this rank of the other (remote) group.
    Remote(i32),
}

impl InterRoot {
    fn role(self, comm: &Communicator) -> Result<InterRole> {
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

fn inter_only(comm: &Communicator) -> Result<Rc<InterCollectives>> {
    inter(comm)?.ok_or_else(|| {
        crate::CommError::InvalidArgument("this operation needs an intercommunicator".into())
    })
}

/// The rooted intercommunicator collectives, with MPI's roles. Results cross between the
/// groups: the root receives from, or sends to, the OTHER group. (The unrooted ones are the
/// `CommunicatorCollectives` methods, which work on intercommunicators too.)
pub trait InterCommunicatorCollectives {
    /// `buf` is read at the root, written in the other group, unused with `ProcNull`.
    fn inter_broadcast_into<B: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        buf: &mut B,
    ) -> Result<()>;
    /// The non-blocking form of `inter_broadcast_into`.
    fn immediate_inter_broadcast_into<'b, B: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        buf: &'b mut B,
    ) -> Result<CollectiveRequest<'b>>;
    /// The root's `recv` gets the reduction of the other group's `send`; `recv` is used at
    /// the root only, `send` in the other group only.
    fn inter_reduce_into<T: Element>(
        &self,
        role: InterRoot,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()>;
    /// The root's `recv` (remote-size blocks) gets the other group's `send` blocks.
    fn inter_gather_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    /// Block i of the root's `send` goes to `recv` of remote rank i.
    fn inter_scatter_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &S,
        recv: &mut R,
    ) -> Result<()>;
    /// Local rank i gets `counts[i]` elements of the reduction of the other group's `send`.
    fn inter_reduce_scatter_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<()>;
}

impl InterCommunicatorCollectives for Communicator {
    fn inter_broadcast_into<B: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        buf: &mut B,
    ) -> Result<()> {
        let ic = inter_only(self)?;
        Ok(ic.bcast(buf.as_bytes_mut(), role.role(self)?)?)
    }
    fn immediate_inter_broadcast_into<'b, B: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        buf: &'b mut B,
    ) -> Result<CollectiveRequest<'b>> {
        let ic = inter_only(self)?;
        let role = role.role(self)?;
        start_inter(ic, |c| c.ibcast(buf.as_bytes_mut(), role))
    }
    fn inter_reduce_into<T: Element>(
        &self,
        role: InterRoot,
        send: &[T],
        recv: &mut [T],
        op: Operation,
    ) -> Result<()> {
        let ic = inter_only(self)?;
        let op = op.op_for::<T>()?;
        Ok(ic.reduce(
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
            &op,
            role.role(self)?,
        )?)
    }
    fn inter_gather_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        let ic = inter_only(self)?;
        Ok(ic.gather(send.as_bytes(), recv.as_bytes_mut(), role.role(self)?)?)
    }
    fn inter_scatter_into<S: Buffer + ?Sized, R: BufferMut + ?Sized>(
        &self,
        role: InterRoot,
        send: &S,
        recv: &mut R,
    ) -> Result<()> {
        let ic = inter_only(self)?;
        Ok(ic.scatter(send.as_bytes(), recv.as_bytes_mut(), role.role(self)?)?)
    }
    fn inter_reduce_scatter_into<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: Operation,
    ) -> Result<()> {
        let ic = inter_only(self)?;
        let op = op.op_for::<T>()?;
        Ok(ic.reduce_scatter(
            ibdyn_collectives::as_bytes(send),
            ibdyn_collectives::as_bytes_mut(recv),
            counts,
            &op,
        )?)
    }
}
