//! `PointToPoint` for ibdyn communicators. Collectives run on a communicator's collective
//! view: `Collectives::new(comm.collective_view())`.

use crate::error::{CollError, Result};
use crate::p2p::{P2pRequest, PointToPoint};
use ibdyn_intercomm::{Communicator, Request};

impl PointToPoint for Communicator {
    type Request<'a>
        = Request<'a>
    where
        Self: 'a;

    fn rank(&self) -> usize {
        Communicator::rank(self) as usize
    }
    fn size(&self) -> usize {
        Communicator::size(self) as usize
    }
    fn isend<'a>(&'a self, buf: &'a [u8], dest: usize, tag: i32) -> Result<Request<'a>> {
        Communicator::isend(self, buf, dest as i32, tag).map_err(CollError::comm)
    }
    fn irecv<'a>(&'a self, buf: &'a mut [u8], src: usize, tag: i32) -> Result<Request<'a>> {
        Communicator::irecv(self, buf, src as i32, tag).map_err(CollError::comm)
    }
}

impl P2pRequest for Request<'_> {
    fn wait(self) -> Result<usize> {
        Request::wait(self).map(|s| s.count).map_err(CollError::comm)
    }
    fn test(&mut self) -> Result<Option<usize>> {
        Request::test(self).map(|o| o.map(|s| s.count)).map_err(CollError::comm)
    }
}
