//! Non-blocking intercommunicator collectives (ibarrier, ibcast, iallreduce here, the
//! gathers, scatters and other reductions in `nonblocking_data.rs`): the same
//! two-level shape as the blocking ones (a binomial step in the local group, one exchange
//! between the group leaders, a binomial step back), as ONE schedule that the common
//! executor runs. The schedule's peers `0..p` are local ranks and `p..` remote ranks; a
//! `Joined` endpoint sends each transfer on the right one.

use crate::algo::binomial;
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::exec::CollRequest;
use crate::flat::bad;
use crate::inter::{InterCollectives, InterRole};
use crate::op::Op;
use crate::p2p::PointToPoint;
use crate::schedule::{Region, Schedule};
use std::cell::RefCell;
use std::collections::HashMap;

/// The local group's collective view and the intercommunicator's, as one endpoint. Local
/// transfers carry the tag the request runs with (drawn from the local group's sequence);
/// bridge transfers carry the tag both groups drew from the intercommunicator's sequence,
/// found by the local one.
pub(crate) struct Joined<C> {
    local: C,
    bridge: C,
    p: usize,
    q: usize,
    bridge_tags: RefCell<HashMap<i32, i32>>,
}

impl<C: PointToPoint> Joined<C> {
    pub fn new(local: C, bridge: C, remote_size: usize) -> Joined<C> {
        let p = local.size();
        Joined {
            local,
            bridge,
            p,
            q: remote_size,
            bridge_tags: RefCell::new(HashMap::new()),
        }
    }

    fn bridge_tag(&self, tag: i32) -> Result<i32> {
        self.bridge_tags
            .borrow()
            .get(&tag)
            .copied()
            .ok_or_else(|| CollError::Schedule(format!("no bridge tag for local tag {tag}")))
    }
}

impl<C: PointToPoint> PointToPoint for Joined<C> {
    type Request<'a>
        = C::Request<'a>
    where
        Self: 'a;
    fn rank(&self) -> usize {
        self.local.rank()
    }
    fn size(&self) -> usize {
        self.p + self.q
    }
    fn isend<'a>(&'a self, buf: &'a [u8], dest: usize, tag: i32) -> Result<C::Request<'a>> {
        if dest < self.p {
            PointToPoint::isend(&self.local, buf, dest, tag)
        } else {
            PointToPoint::isend(&self.bridge, buf, dest - self.p, self.bridge_tag(tag)?)
        }
    }
    fn irecv<'a>(&'a self, buf: &'a mut [u8], src: usize, tag: i32) -> Result<C::Request<'a>> {
        if src < self.p {
            PointToPoint::irecv(&self.local, buf, src, tag)
        } else {
            PointToPoint::irecv(&self.bridge, buf, src - self.p, self.bridge_tag(tag)?)
        }
    }
    fn progress(&self) {
        PointToPoint::progress(&self.local);
    }
    fn is_truncation(&self, e: &CollError) -> bool {
        self.local.is_truncation(e)
    }
}

/// A non-blocking intercommunicator collective in flight.
#[must_use = "a collective request must be waited for or tested to completion"]
pub struct InterRequest<'b, C: PointToPoint> {
    req: Option<CollRequest<'b, Joined<C>>>,
    joined: &'b Joined<C>,
    tag: i32,
}

impl<C: PointToPoint> InterRequest<'_, C> {
    /// Makes what progress it can without blocking; true once the collective is complete.
    pub fn test(&mut self) -> Result<bool> {
        match self.req.as_mut() {
            Some(r) => r.test(),
            None => Ok(true),
        }
    }

    /// Blocks until the collective completes.
    pub fn wait(mut self) -> Result<()> {
        match self.req.take() {
            Some(r) => r.wait(),
            None => Ok(()),
        }
    }
}

impl<C: PointToPoint> Drop for InterRequest<'_, C> {
    fn drop(&mut self) {
        // Transfers in flight end first; then the tag pair is forgotten.
        self.req = None;
        self.joined.bridge_tags.borrow_mut().remove(&self.tag);
    }
}

impl<C: PointToPoint> InterCollectives<C> {
    /// Runs `sched` as one request; `bridge` is this call's tag on the intercommunicator.
    pub(super) fn start_joined<'b>(
        &'b self,
        bridge: i32,
        sched: Schedule,
        op: Option<&Op>,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<InterRequest<'b, C>> {
        let mut sched = sched;
        sched.map_peers(|r| r);
        let joined = self.joined();
        let tag = self.local().next_tag();
        joined.bridge_tags.borrow_mut().insert(tag, bridge);
        let mut out = InterRequest {
            req: None,
            joined,
            tag,
        };
        out.req = Some(CollRequest::start(
            joined,
            sched,
            tag,
            op.cloned(),
            send,
            recv,
        )?);
        Ok(out)
    }

    /// The non-blocking form of `barrier`.
    pub fn ibarrier(&self) -> Result<InterRequest<'_, C>> {
        let t = self.next_tag();
        let (me, p) = (self.rank(), self.size());
        let mut s = Schedule::new();
        binomial::gather_tree(&mut s, me, p, 0, &|_, _| Region::empty());
        if me == 0 {
            s.round().send(p, Region::empty()).recv(p, Region::empty());
        }
        binomial::bcast(&mut s, me, p, 0, Region::empty());
        self.start_joined(t, s, None, &[], &mut [])
    }

    /// The non-blocking form of `bcast`.
    pub fn ibcast<'b>(&'b self, buf: &'b mut [u8], role: InterRole) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let (me, p, n) = (self.rank(), self.size(), buf.len());
        let all = Region::recv(0, n);
        let mut s = Schedule::new();
        match role {
            InterRole::Root => {
                s.round().send(p, all);
            }
            InterRole::ProcNull => {}
            InterRole::Remote(r) => {
                self.check_remote(CollOp::Bcast, r)?;
                if me == 0 {
                    s.round().recv(p + r, all);
                }
                binomial::bcast(&mut s, me, p, 0, all);
            }
        }
        self.start_joined(t, s, None, &[], buf)
    }

    /// The non-blocking form of `allreduce`: every process gets the reduction of the other
    /// group's `send` buffers.
    pub fn iallreduce<'b>(
        &'b self,
        send: &'b [u8],
        recv: &'b mut [u8],
        op: &Op,
    ) -> Result<InterRequest<'b, C>> {
        let t = self.next_tag();
        let (me, p, n) = (self.rank(), self.size(), send.len());
        if recv.len() != n {
            return Err(bad(
                CollOp::Allreduce,
                format!("receive buffer is {} bytes, send is {n}", recv.len()),
            ));
        }
        if !n.is_multiple_of(op.elem_size()) {
            return Err(bad(
                CollOp::Allreduce,
                format!(
                    "{n} bytes is not a whole number of {}-byte elements",
                    op.elem_size()
                ),
            ));
        }
        let mut s = Schedule::new();
        let part = if me == 0 {
            s.scratch(n)
        } else {
            Region::empty()
        };
        binomial::reduce(
            &mut s,
            me,
            p,
            0,
            op.is_commutative(),
            Region::send(0, n),
            part,
        );
        let out = Region::recv(0, n);
        if me == 0 {
            s.round().send(p, part).recv(p, out);
        }
        binomial::bcast(&mut s, me, p, 0, out);
        self.start_joined(t, s, Some(op), send, recv)
    }
}
