//! What both kinds of communicator offer: the [`Communicator`] trait. The kinds themselves are
//! [`IntraCommunicator`](crate::IntraCommunicator) and
//! [`InterCommunicator`](crate::InterCommunicator); the trait is sealed, so no other type
//! can claim to be a communicator.

use crate::point_to_point::{AnyProcess, Process};
use crate::{Gpid, Group, Request, Result, Status};

/// The untyped communicator of the engine layer that both kinds wrap.
pub(crate) type EngineComm = ibdyn_intercomm::Communicator;

pub(crate) mod sealed {
    use super::EngineComm;
    use crate::collective::Backend;
    use std::rc::Rc;

    /// A communicator kind: how to wrap an engine communicator, and its collective state.
    pub trait Kind: Sized {
        /// The collective state this kind runs its collectives on.
        type Colls: Backend;
        /// Wraps `comm`, or an error if it is of the other kind.
        fn wrap(comm: EngineComm) -> crate::Result<Self>;
        /// The engine communicator.
        fn engine(&self) -> &EngineComm;
        /// The collective state cached on this communicator, made on first use.
        fn colls(&self) -> crate::Result<Rc<Self::Colls>>;
    }
}

/// The operations an intracommunicator and an intercommunicator both offer (rsmpi's
/// `Communicator`). On an intercommunicator, ranks in point-to-point calls name processes
/// of the remote group; `rank` and `size` are always of the local group.
pub trait Communicator: sealed::Kind {
    /// The untyped engine communicator, for the lower layers' APIs (for example
    /// `ibdyn_collectives::collectives_with`). No MPI counterpart.
    fn as_raw(&self) -> &EngineComm {
        self.engine()
    }

    /// This process's rank in the local group (MPI_Comm_rank).
    fn rank(&self) -> i32 {
        self.engine().rank()
    }

    /// The size of the local group (MPI_Comm_size).
    fn size(&self) -> i32 {
        self.engine().size()
    }

    /// Whether this is an intercommunicator (MPI_Comm_test_inter); fixed by the type.
    fn is_inter(&self) -> bool {
        self.engine().is_inter()
    }

    /// The local group (MPI_Comm_group).
    fn group(&self) -> &Group {
        self.engine().group()
    }

    /// The process id of rank `r` of the group that point-to-point ranks name (the remote
    /// group of an intercommunicator). No MPI counterpart (MPI_Group_translate_ranks is
    /// the nearest).
    fn gpid_of(&self, r: i32) -> Result<Gpid> {
        self.engine().gpid_of(r)
    }

    /// Rank `r` as a destination or source of point-to-point calls (the rank argument of
    /// MPI_Send, MPI_Recv, ...).
    fn process_at_rank(&self, r: i32) -> Process<'_, Self> {
        Process::new(self, r)
    }

    /// Any rank as a source (MPI_ANY_SOURCE).
    fn any_process(&self) -> AnyProcess<'_, Self> {
        AnyProcess::new(self)
    }

    /// A new communicator of the same kind with the same groups and a new context
    /// (MPI_Comm_dup). Collective.
    fn duplicate(&self) -> Result<Self> {
        Self::wrap(self.engine().dup()?)
    }

    /// MPI_Comm_dup; the same as [`duplicate`](Communicator::duplicate).
    fn dup(&self) -> Result<Self> {
        self.duplicate()
    }

    /// Marks the communicator freed; further operations on any handle of it fail
    /// (MPI_Comm_free).
    fn free(&self) {
        self.engine().free()
    }

    /// Whether `free` or `disconnect` was called on any handle of this communicator.
    /// No MPI counterpart (MPI sets the handle to MPI_COMM_NULL).
    fn is_freed(&self) -> bool {
        self.engine().is_freed()
    }

    /// Waits until every member of both sides reaches it, so that no message is in flight,
    /// then frees the communicator (MPI_Comm_disconnect).
    fn disconnect(&self) -> Result<()> {
        self.engine().disconnect()
    }

    /// Sends the bytes of `buf` to rank `dest` with `tag` (MPI_Send).
    fn send(&self, buf: &[u8], dest: i32, tag: i32) -> Result<()> {
        self.engine().send(buf, dest, tag)
    }

    /// Receives into `buf` from `src` (or `ANY_SOURCE`) with `tag` (or `ANY_TAG`) (MPI_Recv).
    fn recv(&self, buf: &mut [u8], src: i32, tag: i32) -> Result<Status> {
        self.engine().recv(buf, src, tag)
    }

    /// Receives a message of any size into a new vector (MPI_Probe, then MPI_Recv).
    fn recv_vec(&self, src: i32, tag: i32) -> Result<(Vec<u8>, Status)> {
        self.engine().recv_vec(src, tag)
    }

    /// Starts a send; `buf` stays borrowed until the request completes (MPI_Isend).
    fn isend<'a>(&self, buf: &'a [u8], dest: i32, tag: i32) -> Result<Request<'a>> {
        self.engine().isend(buf, dest, tag)
    }

    /// Starts a receive into `buf`; it stays borrowed until the request completes
    /// (MPI_Irecv).
    fn irecv<'a>(&self, buf: &'a mut [u8], src: i32, tag: i32) -> Result<Request<'a>> {
        self.engine().irecv(buf, src, tag)
    }

    /// Sends `sbuf` to `dest` and receives into `rbuf` from `src` at once (MPI_Sendrecv).
    fn sendrecv(
        &self,
        sbuf: &[u8],
        dest: i32,
        stag: i32,
        rbuf: &mut [u8],
        src: i32,
        rtag: i32,
    ) -> Result<Status> {
        self.engine().sendrecv(sbuf, dest, stag, rbuf, src, rtag)
    }

    /// Blocks until a matching message has arrived and reports it (MPI_Probe).
    fn probe(&self, src: i32, tag: i32) -> Result<Status> {
        self.engine().probe(src, tag)
    }

    /// Reports a matching message without receiving it, if one has arrived (MPI_Iprobe).
    fn iprobe(&self, src: i32, tag: i32) -> Result<Option<Status>> {
        self.engine().iprobe(src, tag)
    }
}
