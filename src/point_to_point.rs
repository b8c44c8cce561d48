//! rsmpi-style point-to-point: `world.process_at_rank(r).send(&x)`,
//! `world.any_process().receive_vec::<T>()`, immediate (non-blocking) forms returning requests.

use crate::datatype::{vec_from_bytes, Buffer, BufferMut, Equivalence};
use crate::{Communicator, Request, Result, Status, ANY_SOURCE, ANY_TAG};

/// A rank of a communicator, as a destination or a source.
pub struct Process<'c> {
    comm: &'c Communicator,
    rank: i32,
}

/// Any rank of a communicator, as a source.
pub struct AnyProcess<'c> {
    comm: &'c Communicator,
}

/// Communicator methods in rsmpi's spelling.
pub trait CommunicatorExt {
    fn process_at_rank(&self, r: i32) -> Process<'_>;
    fn any_process(&self) -> AnyProcess<'_>;
    fn this_process(&self) -> Process<'_>;
    fn duplicate(&self) -> Result<Communicator>;
    fn split_by_color(&self, color: Option<u32>) -> Result<Option<Communicator>>;
    fn split_by_color_with_key(&self, color: Option<u32>, key: i32)
        -> Result<Option<Communicator>>;
}

impl CommunicatorExt for Communicator {
    fn process_at_rank(&self, r: i32) -> Process<'_> {
        Process {
            comm: self,
            rank: r,
        }
    }
    fn any_process(&self) -> AnyProcess<'_> {
        AnyProcess { comm: self }
    }
    fn this_process(&self) -> Process<'_> {
        Process {
            comm: self,
            rank: self.rank(),
        }
    }
    fn duplicate(&self) -> Result<Communicator> {
        self.dup()
    }
    fn split_by_color(&self, color: Option<u32>) -> Result<Option<Communicator>> {
        self.split(color, self.rank())
    }
    fn split_by_color_with_key(
        &self,
        color: Option<u32>,
        key: i32,
    ) -> Result<Option<Communicator>> {
        self.split(color, key)
    }
}

/// Receiving operations shared by a specific and any source.
pub trait Source {
    fn comm(&self) -> &Communicator;
    fn source_rank(&self) -> i32;

    fn receive_with_tag<T: Equivalence>(&self, tag: i32) -> Result<(T, Status)> {
        // SAFETY: T is Equivalence: every bit pattern, all-zero included, is a valid value.
        let mut v: T = unsafe { std::mem::zeroed() };
        let st = self
            .comm()
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
    fn receive<T: Equivalence>(&self) -> Result<(T, Status)> {
        self.receive_with_tag(ANY_TAG)
    }
    fn receive_vec_with_tag<T: Equivalence>(&self, tag: i32) -> Result<(Vec<T>, Status)> {
        let (bytes, st) = self.comm().recv_vec(self.source_rank(), tag)?;
        Ok((vec_from_bytes(&bytes)?, st))
    }
    fn receive_vec<T: Equivalence>(&self) -> Result<(Vec<T>, Status)> {
        self.receive_vec_with_tag(ANY_TAG)
    }
    fn receive_into_with_tag<B: BufferMut + ?Sized>(
        &self,
        buf: &mut B,
        tag: i32,
    ) -> Result<Status> {
        self.comm()
            .recv(buf.as_bytes_mut(), self.source_rank(), tag)
    }
    fn receive_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<Status> {
        self.receive_into_with_tag(buf, ANY_TAG)
    }
    fn immediate_receive_into_with_tag<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
        tag: i32,
    ) -> Result<Request<'a>> {
        self.comm()
            .irecv(buf.as_bytes_mut(), self.source_rank(), tag)
    }
    fn immediate_receive_into<'a, B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
    ) -> Result<Request<'a>> {
        self.immediate_receive_into_with_tag(buf, ANY_TAG)
    }
    fn probe_with_tag(&self, tag: i32) -> Result<Status> {
        self.comm().probe(self.source_rank(), tag)
    }
    fn probe(&self) -> Result<Status> {
        self.probe_with_tag(ANY_TAG)
    }
    fn immediate_probe(&self) -> Result<Option<Status>> {
        self.comm().iprobe(self.source_rank(), ANY_TAG)
    }
}

impl Source for Process<'_> {
    fn comm(&self) -> &Communicator {
        self.comm
    }
    fn source_rank(&self) -> i32 {
        self.rank
    }
}

impl Source for AnyProcess<'_> {
    fn comm(&self) -> &Communicator {
        self.comm
    }
    fn source_rank(&self) -> i32 {
        ANY_SOURCE
    }
}

impl<'c> Process<'c> {
    pub fn rank(&self) -> i32 {
        self.rank
    }
    pub fn communicator(&self) -> &'c Communicator {
        self.comm
    }
    /// This process's rank as the root of a collective, checked against the communicator.
    pub(crate) fn root(&self) -> Result<usize> {
        if self.rank < 0 || self.rank >= self.comm.size() {
            return Err(crate::CommError::InvalidRank {
                rank: self.rank as i64,
                size: self.comm.size() as usize,
            });
        }
        Ok(self.rank as usize)
    }
    pub fn send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<()> {
        self.send_with_tag(buf, 0)
    }
    pub fn send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: i32) -> Result<()> {
        self.comm.send(buf.as_bytes(), self.rank, tag)
    }
    pub fn immediate_send<'a, B: Buffer + ?Sized>(&self, buf: &'a B) -> Result<Request<'a>> {
        self.immediate_send_with_tag(buf, 0)
    }
    pub fn immediate_send_with_tag<'a, B: Buffer + ?Sized>(
        &self,
        buf: &'a B,
        tag: i32,
    ) -> Result<Request<'a>> {
        self.comm.isend(buf.as_bytes(), self.rank, tag)
    }
}
