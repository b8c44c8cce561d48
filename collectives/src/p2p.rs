//! The point-to-point interface the algorithms run on, and the team (ordered subset of the
//! communicator's ranks) an algorithm runs over.

use crate::error::{CollError, Result};
use std::sync::Arc;

/// An outstanding send or receive.
pub trait P2pRequest {
    /// Blocks until the operation completes; returns the number of bytes moved.
    fn wait(self) -> Result<usize>;
    /// Completes the operation if it can without blocking.
    fn test(&mut self) -> Result<Option<usize>>;
}

/// What collectives need from a communicator: non-blocking send and receive on a context
/// that user point-to-point traffic never matches (a communicator's collective view).
///
/// A receive of a message longer than its buffer must fail (truncation); a shorter one
/// reports its length, which the algorithms check.
pub trait PointToPoint {
    type Request<'a>: P2pRequest
    where
        Self: 'a;
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    fn isend<'a>(&'a self, buf: &'a [u8], dest: usize, tag: i32) -> Result<Self::Request<'a>>;
    fn irecv<'a>(&'a self, buf: &'a mut [u8], src: usize, tag: i32) -> Result<Self::Request<'a>>;
    /// A number that names the communicator on its node (names its shared-memory buffers).
    fn context_id(&self) -> u64 {
        0
    }
    /// Moves pending point-to-point traffic along (called while a collective waits on
    /// shared memory, so peers that need this process still get answers).
    fn progress(&self) {}
    /// Whether `e`, from one of this communicator's requests, reports a message longer than
    /// its receive buffer (truncation). The transfer itself ended, so a collective runs on
    /// to its end, leaving no peer waiting, and then reports it as a size error.
    fn is_truncation(&self, _e: &CollError) -> bool {
        false
    }
}

/// The ranks an algorithm runs over, in their order, and this process's place among them.
/// The whole communicator is one team; a node's processes or the node leaders are others
/// (the seam for two-level collectives).
#[derive(Clone, Debug)]
pub struct Team {
    /// Communicator rank of each member; `None` means the identity over `0..size`.
    members: Option<Arc<[usize]>>,
    me: usize,
    size: usize,
}

impl Team {
    /// Every rank of a communicator of `size`, in order.
    pub fn whole(rank: usize, size: usize) -> Result<Team> {
        if rank >= size {
            return Err(CollError::arg(
                "team",
                format!("rank {rank} is not below size {size}"),
            ));
        }
        Ok(Team {
            members: None,
            me: rank,
            size,
        })
    }

    /// The listed communicator ranks, in the given order; `my_rank` must be one of them.
    pub fn subset(my_rank: usize, members: Vec<usize>) -> Result<Team> {
        let me = members.iter().position(|&r| r == my_rank).ok_or_else(|| {
            CollError::arg(
                "team",
                format!("rank {my_rank} is not a member of {members:?}"),
            )
        })?;
        let mut sorted = members.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(CollError::arg(
                "team",
                format!("repeated rank in {members:?}"),
            ));
        }
        Ok(Team {
            size: members.len(),
            members: Some(members.into()),
            me,
        })
    }

    /// This process's index in the team.
    pub fn rank(&self) -> usize {
        self.me
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// The communicator rank of team member `r`.
    pub fn comm_rank(&self, r: usize) -> usize {
        match &self.members {
            Some(m) => m[r],
            None => r,
        }
    }
}

/// A borrowed communicator works as well as an owned one.
impl<T: PointToPoint> PointToPoint for &T {
    type Request<'a>
        = T::Request<'a>
    where
        Self: 'a;
    fn rank(&self) -> usize {
        (**self).rank()
    }
    fn size(&self) -> usize {
        (**self).size()
    }
    fn isend<'a>(&'a self, buf: &'a [u8], dest: usize, tag: i32) -> Result<Self::Request<'a>> {
        (**self).isend(buf, dest, tag)
    }
    fn irecv<'a>(&'a self, buf: &'a mut [u8], src: usize, tag: i32) -> Result<Self::Request<'a>> {
        (**self).irecv(buf, src, tag)
    }
    fn context_id(&self) -> u64 {
        (**self).context_id()
    }
    fn progress(&self) {
        (**self).progress()
    }
    fn is_truncation(&self, e: &CollError) -> bool {
        (**self).is_truncation(e)
    }
}
