//! rsmpi-style point-to-point: `world.process_at_rank(r).send(&x)`,
//! `world.any_process().receive_vec::<T>()`, immediate (non-blocking) forms returning requests.
//! On an intercommunicator the rank names a process of the remote group.

use crate::communicator::EngineComm;
use crate::datatype::{vec_from_bytes, Buffer, BufferMut, Equivalence};
use crate::{Communicator, Request, Result, Status, ANY_SOURCE, ANY_TAG};

/// A rank of a communicator of kind `C`, as a destination, a source or a collective root.
pub struct Process<'c, C> {
    comm: &'c C,
    rank: i32,
}

/// Any rank of a communicator of kind `C`, as a source (MPI_ANY_SOURCE).
pub struct AnyProcess<'c, C> {
    comm: &'c C,
}

pub(crate) mod sealed {
    use crate::communicator::EngineComm;

    /// Where a receive comes from: the engine communicator and the source rank.
    pub trait Endpoint {
        /// The communicator received on.
        fn engine(&self) -> &EngineComm;
        /// The source rank, or `ANY_SOURCE`.
        fn source_rank(&self) -> i32;
    }
}

/// Receiving operations shared by a specific source and any source (rsmpi's `Source`).
pub trait Source: sealed::Endpoint {
    /// Receives one value with `tag` (MPI_Recv); an error unless exactly one value arrives.
    fn receive_with_tag<T: Equivalence>(&self, tag: i32) -> Result<(T, Status)> {
        // SAFETY: T is Equivalence: every bit pattern, all-zero included, is a valid value.
        let mut v: T = unsafe { std::mem::zeroed() };
        let st = self
            .engine()
            .recv(v.as_bytes_mut(), self.source_rank(), tag)?;
        if st.count != std::mem::size_of::<T>() {
            return Err(crate::CommError::InvalidArgument(format!(
                "expected one {}-byte value, received {} bytes",
                std::mem::size_of::<T>(),
                st.count
            )));
        }
        Ok((v, st))
    }
    /// Receives one value with any tag (MPI_Recv with MPI_ANY_TAG).
    fn receive<T: Equivalence>(&self) -> Result<(T, Status)> {
        self.receive_with_tag(ANY_TAG)
    }
    /// Receives a message of any length with `tag` into a new vector (MPI_Probe, MPI_Recv).
    fn receive_vec_with_tag<T: Equivalence>(&self, tag: i32) -> Result<(Vec<T>, Status)> {
        let (bytes, st) = self.engine().recv_vec(self.source_rank(), tag)?;
        Ok((vec_from_bytes(&bytes)?, st))
    }
    /// Receives a message of any length and tag into a new vector (MPI_Probe, MPI_Recv).
    fn receive_vec<T: Equivalence>(&self) -> Result<(Vec<T>, Status)> {
        self.receive_vec_with_tag(ANY_TAG)
    }
    /// Receives into `buf` with `tag` (MPI_Recv).
    fn receive_into_with_tag<B: BufferMut + ?Sized>(
        &self,
        buf: &mut B,
        tag: i32,
    ) -> Result<Status> {
        self.engine()
            .recv(buf.as_bytes_mut(), self.source_rank(), tag)
    }
    /// Receives into `buf` with any tag (MPI_Recv).
    fn receive_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<Status> {
        self.receive_into_with_tag(buf, ANY_TAG)
    }
    /// Starts a receive into `buf` with `tag` (MPI_Irecv).
    fn immediate_receive_into_with_tag<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
        tag: i32,
    ) -> Result<Request<'a>> {
        self.engine()
            .irecv(buf.as_bytes_mut(), self.source_rank(), tag)
    }
    /// Starts a receive into `buf` with any tag (MPI_Irecv).
    fn immediate_receive_into<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
    ) -> Result<Request<'a>> {
        self.immediate_receive_into_with_tag(buf, ANY_TAG)
    }
    /// Waits for a message with `tag` and reports it without receiving it (MPI_Probe).
    fn probe_with_tag(&self, tag: i32) -> Result<Status> {
        self.engine().probe(self.source_rank(), tag)
    }
    /// Waits for a message with any tag and reports it (MPI_Probe).
    fn probe(&self) -> Result<Status> {
        self.probe_with_tag(ANY_TAG)
    }
    /// Reports a message with any tag if one has arrived (MPI_Iprobe).
    fn immediate_probe(&self) -> Result<Option<Status>> {
        self.engine().iprobe(self.source_rank(), ANY_TAG)
    }
}

impl<C: Communicator> sealed::Endpoint for Process<'_, C> {
    fn engine(&self) -> &EngineComm {
        self.comm.as_raw()
    }
    fn source_rank(&self) -> i32 {
        self.rank
    }
}

impl<C: Communicator> Source for Process<'_, C> {}

impl<C: Communicator> sealed::Endpoint for AnyProcess<'_, C> {
    fn engine(&self) -> &EngineComm {
        self.comm.as_raw()
    }
    fn source_rank(&self) -> i32 {
        ANY_SOURCE
    }
}

impl<C: Communicator> Source for AnyProcess<'_, C> {}

impl<'c, C: Communicator> AnyProcess<'c, C> {
    pub(crate) fn new(comm: &'c C) -> Self {
        AnyProcess { comm }
    }
}

impl<'c, C: Communicator> Process<'c, C> {
    pub(crate) fn new(comm: &'c C, rank: i32) -> Self {
        Process { comm, rank }
    }
    /// The rank this process has in its communicator (the remote group's, on an
    /// intercommunicator).
    pub fn rank(&self) -> i32 {
        self.rank
    }
    /// The communicator the rank belongs to.
    pub fn communicator(&self) -> &'c C {
        self.comm
    }
    /// Sends `buf` with tag 0 (MPI_Send).
    pub fn send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<()> {
        self.send_with_tag(buf, 0)
    }
    /// Sends `buf` with `tag` (MPI_Send).
    pub fn send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: i32) -> Result<()> {
        self.comm.send(buf.as_bytes(), self.rank, tag)
    }
    /// Starts a send of `buf` with tag 0 (MPI_Isend).
    pub fn immediate_send<'a, B: Buffer + ?Sized>(&self, buf: &'a B) -> Result<Request<'a>> {
        self.immediate_send_with_tag(buf, 0)
    }
    /// Starts a send of `buf` with `tag` (MPI_Isend).
    pub fn immediate_send_with_tag<'a, B: Buffer + ?Sized>(
        &self,
        buf: &'a B,
        tag: i32,
    ) -> Result<Request<'a>> {
        self.comm.isend(buf.as_bytes(), self.rank, tag)
    }
}
