//! Small rooted intercommunicator collectives, flat: a bcast is one eager message from the
//! root to each process of the other group, a reduce one from each of them to the root,
//! folded there in rank order. No leader hop and no wait for the slowest process per call,
//! so back-to-back calls pipeline: a root that has sent returns, and each receiver takes
//! the calls queued for it when it runs (with four processes on two cores, the others are
//! usually descheduled when a call starts).
//!
//! Flow control: the side that sends data (the root of a bcast, the other group in a
//! reduce) may run at most two windows of `WINDOW` calls ahead of the side that takes it.
//! The taker acknowledges calls 0, `WINDOW`, `2 * WINDOW`, ... with an empty message (tag:
//! that call's tag + `ACK_TAG`; the first one also makes the connection back while a
//! program warms up); before call `n` (a multiple of `WINDOW`, from `2 * WINDOW` on) the
//! sender takes the acknowledgement of call `n - 2 * WINDOW`, which has long arrived unless
//! the taker is that far behind. So at most `2 * WINDOW` unreceived messages per pair, one
//! empty message per `WINDOW` calls. `Flow` is that bookkeeping, without communication.

use super::{InterCollectives, InterRole};
use crate::config::CollOp;
use crate::error::{CollError, Result};
use crate::op::Op;
use crate::p2p::PointToPoint;
use crate::patience;
use crate::scratch::Scratch;
use std::cell::RefCell;
use std::collections::VecDeque;

/// Largest message of a flat rooted call (larger ones go through the leader or the buffer).
pub(super) const FANOUT_MAX: usize = 1024;
/// Largest other group of a flat rooted call (the root sends or folds one message each).
pub(super) const FANOUT_PROCS: usize = 8;
/// Calls per acknowledgement.
pub(crate) const WINDOW: u64 = 16;
/// Tag offset of an acknowledgement within its call's tag (tags are multiples of 8).
const ACK_TAG: i32 = 6;

/// One direction of one root's flat calls: what the sender and the taker count.
#[derive(Default, Debug)]
pub(crate) struct Flow {
    calls: u64,
    /// Tags of the calls whose acknowledgements the sender has yet to take, oldest first.
    pending: VecDeque<i32>,
}

impl Flow {
    /// The sender, before its next call: the tag whose acknowledgements to take first.
    pub fn before_send(&mut self) -> Option<i32> {
        let n = self.calls;
        if n >= 2 * WINDOW && n.is_multiple_of(WINDOW) {
            self.pending.pop_front()
        } else {
            None
        }
    }

    /// The sender, after call `tag`.
    pub fn after_send(&mut self, tag: i32) {
        if self.calls.is_multiple_of(WINDOW) {
            self.pending.push_back(tag);
        }
        self.calls += 1;
    }

    /// The taker, after call `tag`: the tag to acknowledge with, if this call is one.
    pub fn after_take(&mut self, tag: i32) -> Option<i32> {
        let ack = self.calls.is_multiple_of(WINDOW);
        self.calls += 1;
        ack.then_some(tag + ACK_TAG)
    }

    /// The acknowledgement tag the sender waits for, given a tag `before_send` returned.
    pub fn ack_tag(tag: i32) -> i32 {
        tag + ACK_TAG
    }
}

/// Whose flow: this process's as a root, or that of the remote group's rank r; bcast or
/// reduce (they run in opposite directions).
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) struct FlowKey {
    root: Option<usize>,
    reduce: bool,
}

impl FlowKey {
    /// A dense index: every call looks its flow up, so no hashing.
    fn index(self) -> usize {
        self.root.map_or(0, |r| r + 1) * 2 + usize::from(self.reduce)
    }
}

/// The flows of one intercommunicator, by `FlowKey::index` (grown as roots are used).
#[derive(Default)]
pub(super) struct Flows(RefCell<Vec<Flow>>);

impl Flows {
    fn with<T>(&self, key: FlowKey, f: impl FnOnce(&mut Flow) -> T) -> T {
        let mut flows = self.0.borrow_mut();
        let i = key.index();
        if flows.len() <= i {
            flows.resize_with(i + 1, Flow::default);
        }
        f(&mut flows[i])
    }
}

fn key(role: InterRole, reduce: bool) -> FlowKey {
    let root = match role {
        InterRole::Remote(r) => Some(r),
        _ => None,
    };
    FlowKey { root, reduce }
}

impl<C: PointToPoint> InterCollectives<C> {
    /// Whether a rooted call of `bytes` goes flat: both sides decide alike (the other
    /// group's size and the bytes are the same on both).
    fn flat_rooted(&self, op: CollOp, bytes: usize, role: InterRole) -> bool {
        let others = match role {
            InterRole::Root => self.remote_size,
            InterRole::Remote(_) => self.size,
            InterRole::ProcNull => return false,
        };
        bytes <= FANOUT_MAX && others <= FANOUT_PROCS && self.local.config().forced(op).is_none()
    }

    /// Takes the acknowledgements of call `tag` from `from` (every remote rank, or one).
    fn take_acks(&self, tag: i32, from: std::ops::Range<usize>) -> Result<()> {
        let ack = Flow::ack_tag(tag);
        let mut reqs = Vec::with_capacity(from.len());
        for r in from {
            reqs.push(PointToPoint::irecv(&self.bridge, &mut [], r, ack)?);
        }
        for q in reqs {
            patience::wait(q)?;
        }
        Ok(())
    }

    /// Sends an acknowledgement. A failure only means the sender is gone (it may exit once
    /// its last call is sent; an acknowledgement releases nothing then), so it is logged,
    /// not returned: the call itself succeeded.
    fn ack(&self, tag: i32, to: usize) {
        let sent = PointToPoint::isend(&self.bridge, &[], to, tag).and_then(patience::wait);
        if let Err(e) = sent {
            tracing::debug!("flat rooted call: acknowledgement to {to} not sent: {e}");
        }
    }

    /// The flat bcast, when this call goes flat: Some(result).
    pub(super) fn flat_bcast(&self, t: i32, buf: &mut [u8], role: InterRole) -> Result<Option<()>> {
        if !self.flat_rooted(CollOp::Bcast, buf.len(), role) {
            return Ok(None);
        }
        let k = key(role, false);
        match role {
            InterRole::Root => {
                let q = self.remote_size;
                if let Some(old) = self.flows.with(k, Flow::before_send) {
                    self.take_acks(old, 0..q)?;
                }
                let mut reqs = Vec::with_capacity(q);
                for r in 0..q {
                    reqs.push(PointToPoint::isend(&self.bridge, buf, r, t)?);
                }
                for s in reqs {
                    patience::wait(s)?;
                }
                self.flows.with(k, |f| f.after_send(t));
            }
            InterRole::Remote(r) => {
                self.take(t, buf, r)?;
                if let Some(ack) = self.flows.with(k, |f| f.after_take(t)) {
                    self.ack(ack, r);
                }
            }
            InterRole::ProcNull => {}
        }
        Ok(Some(()))
    }

    /// The flat reduce, when this call goes flat: Some(result).
    pub(super) fn flat_reduce(
        &self,
        t: i32,
        send: &[u8],
        recv: &mut [u8],
        op: &Op,
        role: InterRole,
    ) -> Result<Option<()>> {
        let bytes = reduce_bytes(send, recv, role);
        if !self.flat_rooted(CollOp::Reduce, bytes, role) {
            return Ok(None);
        }
        let k = key(role, true);
        match role {
            InterRole::Root => {
                let q = self.remote_size;
                let n = recv.len();
                // Rank q-1's part lands in `recv`, the others in `rest`; then
                // recv = x0 ∘ (x1 ∘ (... ∘ x_{q-1})), the order MPI fixes.
                let mut rest = Scratch::zeroed(n * (q - 1));
                {
                    let mut reqs = Vec::with_capacity(q);
                    // (Empty parts, for an empty reduce, are received too: none may linger.)
                    let parts: Vec<&mut [u8]> = if n == 0 {
                        (0..q - 1).map(|_| &mut [][..]).collect()
                    } else {
                        rest.chunks_mut(n).collect()
                    };
                    for (r, part) in parts.into_iter().enumerate() {
                        reqs.push((r, PointToPoint::irecv(&self.bridge, part, r, t)?));
                    }
                    reqs.push((q - 1, PointToPoint::irecv(&self.bridge, recv, q - 1, t)?));
                    for (r, req) in reqs {
                        let got = patience::wait(req)?;
                        if got != n {
                            return Err(CollError::SizeMismatch {
                                peer: r,
                                expected: n,
                                got,
                            });
                        }
                    }
                }
                for r in (0..q - 1).rev() {
                    op.apply(&rest[r * n..(r + 1) * n], recv);
                }
                if let Some(ack) = self.flows.with(k, |f| f.after_take(t)) {
                    for r in 0..q {
                        self.ack(ack, r);
                    }
                }
            }
            InterRole::Remote(r) => {
                if let Some(old) = self.flows.with(k, Flow::before_send) {
                    self.take_acks(old, r..r + 1)?;
                }
                self.put(t, send, r)?;
                self.flows.with(k, |f| f.after_send(t));
            }
            InterRole::ProcNull => {}
        }
        Ok(Some(()))
    }
}

/// The bytes a rooted reduce moves as seen by `role`: the root's result or a member's part.
pub(super) fn reduce_bytes(send: &[u8], recv: &[u8], role: InterRole) -> usize {
    if role == InterRole::Root {
        recv.len()
    } else {
        send.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sender and taker of one flow, the taker `lag` calls behind: the sender blocks (needs
    /// an acknowledgement not yet sent) exactly when it is two windows ahead.
    #[test]
    fn the_sender_runs_at_most_two_windows_ahead() {
        for lag in [0u64, 1, WINDOW, 2 * WINDOW - 1, 2 * WINDOW, 3 * WINDOW] {
            let (mut s, mut t) = (Flow::default(), Flow::default());
            let mut acked: VecDeque<i32> = VecDeque::new();
            let mut taken = 0u64;
            let mut blocked_at = None;
            for call in 0..10 * WINDOW {
                let tag = (call as i32) << 3;
                // The taker keeps `lag` calls behind the sender.
                while taken + lag < call {
                    if let Some(a) = t.after_take((taken as i32) << 3) {
                        acked.push_back(a);
                    }
                    taken += 1;
                }
                if let Some(old) = s.before_send() {
                    match acked.pop_front() {
                        Some(a) => assert_eq!(a, Flow::ack_tag(old), "acks match in order"),
                        None => {
                            blocked_at = Some(call);
                            break;
                        }
                    }
                }
                s.after_send(tag);
            }
            if lag < 2 * WINDOW {
                assert_eq!(blocked_at, None, "lag {lag} never blocks");
            } else {
                let call = blocked_at.expect("a taker this far behind blocks the sender");
                assert!(call - taken <= 2 * WINDOW, "lag {lag}: {call} vs {taken}");
            }
        }
    }

    #[test]
    fn every_window_th_call_is_acknowledged_with_its_own_tag() {
        let mut t = Flow::default();
        let acks: Vec<i32> = (0..3 * WINDOW as i32)
            .filter_map(|c| t.after_take(c << 3))
            .collect();
        let w = WINDOW as i32;
        assert_eq!(
            acks,
            vec![ACK_TAG, (w << 3) + ACK_TAG, ((2 * w) << 3) + ACK_TAG]
        );
    }
}
