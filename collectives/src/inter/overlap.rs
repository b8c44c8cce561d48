//! The overlapped form of the collectives that collect a part at each group's leader, swap
//! parts between the leaders and spread the other group's part (barrier, allreduce,
//! allgather, reduce_scatter_block): each leader spreads the other part as soon as it
//! arrives, while its own may still be collecting.

use super::InterCollectives;
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::exec::CollRequest;
use crate::op::Op;
use crate::p2p::{P2pRequest, PointToPoint};
use crate::patience::{self, Patience};

/// Polls until `done` says so, backing off: spin, then yield, then short sleeps.
fn poll(mut done: impl FnMut() -> Result<bool>) -> Result<()> {
    let mut patience = Patience::new();
    let mut sleeps = 0u32;
    while !done()? {
        if !patience.idle() {
            sleeps = sleeps.saturating_add(1);
            let us = 1u64 << sleeps.min(10);
            std::thread::sleep(std::time::Duration::from_micros(us));
        }
    }
    Ok(())
}

/// How a group's part reaches its leader.
pub(super) enum Up<'a> {
    Reduce(&'a [u8], &'a Op),
    Gather(&'a [u8]),
}

/// How the other group's part spreads from the leader: a bcast of `theirs`, or a scatter
/// of it into `recv`.
pub(super) enum Down<'a> {
    Bcast,
    Scatter(&'a mut [u8]),
}

impl<C: PointToPoint> InterCollectives<C> {
    fn start_up<'b>(&'b self, up: &Up<'b>, part: &'b mut [u8]) -> Result<CollRequest<'b, C>> {
        match *up {
            Up::Reduce(send, op) => self.local.ireduce(send, part, op, 0),
            Up::Gather(send) => self.local.igather(send, part, 0),
        }
    }

    fn start_down<'b>(
        &'b self,
        down: Down<'b>,
        theirs: &'b mut [u8],
    ) -> Result<CollRequest<'b, C>> {
        match down {
            Down::Bcast => self.local.ibcast(theirs, 0),
            Down::Scatter(recv) => self.local.iscatter(theirs, recv, 0),
        }
    }

    /// The overlapped form of "collect this group's part at the leader, swap parts between
    /// the leaders, spread the other group's part from the leader": the leader starts the
    /// spreading as soon as the other part arrives, while its own may still be collecting,
    /// so the two directions do not wait for each other. Non-blocking local collectives are
    /// flat, so only local groups on one node take this form (`overlap`).
    pub(super) fn cross(
        &self,
        t: i32,
        up: Up<'_>,
        part: &mut [u8],
        down: Down<'_>,
        theirs: &mut [u8],
    ) -> Result<()> {
        if !self.leader() {
            let mut u = self.start_up(&up, part)?;
            let mut d = self.start_down(down, theirs)?;
            return poll(|| Ok(u.test()? & d.test()?));
        }
        let want = theirs.len();
        let size_ok = |got: usize| {
            if got == want {
                Ok(())
            } else {
                Err(CollError::SizeMismatch {
                    peer: 0,
                    expected: want,
                    got,
                })
            }
        };
        let mut r = PointToPoint::irecv(&self.bridge, &mut *theirs, 0, t)?;
        let mut u = self.start_up(&up, &mut *part)?;
        let (mut got, mut up_done) = (None, false);
        poll(|| {
            up_done = u.test()?;
            if got.is_none() {
                got = P2pRequest::test(&mut r)?;
            }
            Ok(up_done || got.is_some())
        })?;
        if up_done {
            drop(u);
            let s = PointToPoint::isend(&self.bridge, &*part, 0, t)?;
            size_ok(match got {
                Some(n) => {
                    drop(r);
                    n
                }
                None => patience::wait(r)?,
            })?;
            self.start_down(down, theirs)?.wait()?;
            patience::wait(s)?;
        } else {
            drop(r);
            size_ok(got.unwrap_or(0))?;
            let mut d = self.start_down(down, theirs)?;
            poll(|| {
                let up_done = u.test()?;
                d.test()?;
                Ok(up_done)
            })?;
            drop(u);
            let s = PointToPoint::isend(&self.bridge, &*part, 0, t)?;
            d.wait()?;
            patience::wait(s)?;
        }
        Ok(())
    }

    /// Whether the overlapped form applies to local steps `up` and `down` (operation and the
    /// size its node-buffer threshold names): a group on one node whose steps go through its
    /// node buffer runs them blocking instead, which costs less than the overlap saves; one
    /// whose steps are both too large for the buffer overlaps them with the leaders' exchange.
    pub(super) fn overlap(&self, up: (CollOp, usize), down: (CollOp, usize)) -> bool {
        if self.local.is_two_level() {
            return false;
        }
        let cfg = self.local.config();
        let on_buffer = |(op, bytes): (CollOp, usize)| {
            cfg.forced(op).is_none() && cfg.shm_max(op).is_some_and(|m| bytes <= m)
        };
        !self.local.is_node_local() || !(on_buffer(up) || on_buffer(down))
    }
}
