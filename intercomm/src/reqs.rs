//! The request table: every outstanding point-to-point operation of this process.

use crate::error::CommError;
use crate::gpid::Gpid;
use crate::matching::Pattern;

/// What a completed receive (or send) reports: MPI_Status.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// Rank of the sender in the communicator (for a send: the destination).
    pub source: i32,
    pub tag: i32,
    /// Number of bytes received.
    pub count: usize,
}

/// The state of one request.
pub(crate) enum ReqState {
    /// Finished; the result waits to be collected.
    Done(Result<Status, CommError>),
    /// A receive waiting for a matching message.
    RecvPosted(PostedRecv),
    /// A receive whose data is being pulled by an RDMA read.
    RecvPulling {
        status: Status,
        from: Gpid,
        sender_req: u64,
    },
    /// A receive filled by fragments pushed through the queue (CMA refused).
    RecvFrags {
        buf: *mut u8,
        got: usize,
        status: Status,
        from: Gpid,
    },
    /// A rendezvous send waiting for the receiver to pull.
    SendRndv(RndvSend),
    /// An eager send whose packet waits in this process for the fabric (`protocol::held`).
    SendHeld { to: Gpid, status: Status },
    /// A rendezvous send pushing fragments (CMA refused): `sent` bytes so far.
    SendStream {
        send: RndvSend,
        recv_req: u64,
        sent: usize,
    },
}

#[derive(Copy, Clone)]
pub(crate) struct PostedRecv {
    pub buf: *mut u8,
    pub cap: usize,
    pub ctx: u64,
    /// Source rank in the communicator, or `ANY_SOURCE`.
    pub src: i32,
    pub tag: i32,
    /// The process behind `src`, when it is a specific rank (for liveness checks).
    pub peer: Option<Gpid>,
}

impl PostedRecv {
    /// What the receive matches.
    #[inline]
    pub fn pattern(&self) -> Pattern {
        Pattern {
            ctx: self.ctx,
            src: self.src,
            tag: self.tag,
        }
    }
}

#[derive(Copy, Clone)]
pub(crate) struct RndvSend {
    pub ptr: *const u8,
    pub len: usize,
    pub to: Gpid,
    pub status: Status,
    /// Fabric registration to release when done.
    pub exposed: Option<(u64, u64, u32)>,
    /// A cancel was asked of the receiver (MPI_Cancel); its answer has not come yet.
    pub cancelling: bool,
}

/// A slab of request states; ids carry a generation so a stale id never aliases a new request.
#[derive(Default)]
pub(crate) struct ReqTable {
    slots: Vec<(u32, Option<ReqState>)>,
    free: Vec<u32>,
}

impl ReqTable {
    #[inline]
    pub fn insert(&mut self, st: ReqState) -> u64 {
        if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.0 = slot.0.wrapping_add(1);
            slot.1 = Some(st);
            ((slot.0 as u64) << 32) | i as u64
        } else {
            self.slots.push((0, Some(st)));
            (self.slots.len() - 1) as u64
        }
    }

    /// `Some(result)` and the request is gone if it is done; `None` if it is still running.
    /// `Some(Err(..))` for an id that names no request.
    #[inline]
    pub fn take_done(&mut self, id: u64) -> Option<Result<Status, CommError>> {
        let (gen, i) = ((id >> 32) as u32, id as u32 as usize);
        match self.slots.get_mut(i) {
            Some((g, st @ Some(ReqState::Done(_)))) if *g == gen => {
                self.free.push(i as u32);
                match st.take() {
                    Some(ReqState::Done(r)) => Some(r),
                    _ => None,
                }
            }
            Some((g, Some(_))) if *g == gen => None,
            _ => Some(Err(CommError::InvalidArgument(format!(
                "request {id:#x} is unknown or already completed"
            )))),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: u64) -> Option<&mut ReqState> {
        let (gen, i) = ((id >> 32) as u32, id as u32 as usize);
        match self.slots.get_mut(i) {
            Some((g, Some(st))) if *g == gen => Some(st),
            _ => None,
        }
    }

    pub fn remove(&mut self, id: u64) -> Option<ReqState> {
        let (gen, i) = ((id >> 32) as u32, id as u32 as usize);
        match self.slots.get_mut(i) {
            Some((g, st @ Some(_))) if *g == gen => {
                self.free.push(i as u32);
                st.take()
            }
            _ => None,
        }
    }

    /// Ids and states of every live request.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u64, &mut ReqState)> {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(i, (g, st))| st.as_mut().map(|st| (((*g as u64) << 32) | i as u64, st)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_ids_do_not_alias() {
        let mut t = ReqTable::default();
        let a = t.insert(ReqState::Done(Ok(Status {
            source: 0,
            tag: 0,
            count: 0,
        })));
        assert!(t.remove(a).is_some());
        let b = t.insert(ReqState::Done(Ok(Status {
            source: 1,
            tag: 0,
            count: 0,
        })));
        assert_ne!(a, b);
        assert!(t.get_mut(a).is_none());
        assert!(t.remove(a).is_none());
        assert!(t.get_mut(b).is_some());
    }
}
