//! Queue pairs: a UD one for datagrams, RC ones (on the shared receive queue) per connection.

use super::cq::CompletionQueue;
use super::dl::verbs;
use super::fail::{verb_err, verb_rc};
use super::pd::ProtectionDomain;
use super::srq::SharedReceiveQueue;
use crate::error::Result;
use rdma_sys::*;
use std::ptr::{null_mut, NonNull};
use std::sync::Arc;

/// What a queue pair is created as.
pub(crate) enum QpKind {
    /// Unreliable datagram with its own receive queue of `recv_depth` entries.
    Ud { recv_depth: u32 },
    /// Reliable connection receiving from a shared receive queue.
    Rc(Arc<SharedReceiveQueue>),
}

/// `ibv_create_qp` (send and receive completions on one queue), destroyed on drop.
pub(crate) struct QueuePair {
    qp: NonNull<ibv_qp>,
    // The objects the queue pair uses; held so that they outlive it.
    _pd: Arc<ProtectionDomain>,
    _cq: Arc<CompletionQueue>,
    _srq: Option<Arc<SharedReceiveQueue>>,
}

// SAFETY: a queue pair may be used from any thread; the pointer is owned by this value and the
// verbs that post to or change it take `&mut self`.
unsafe impl Send for QueuePair {}

impl QueuePair {
    /// A queue pair whose send queue holds `send_depth` work requests, each signalled.
    pub(crate) fn new(
        pd: Arc<ProtectionDomain>,
        cq: Arc<CompletionQueue>,
        kind: QpKind,
        send_depth: u32,
    ) -> Result<QueuePair> {
        let (qp_type, max_recv_wr, srq, verb) = match kind {
            QpKind::Ud { recv_depth } => (
                ibv_qp_type::IBV_QPT_UD,
                recv_depth,
                None,
                "ibv_create_qp(UD)",
            ),
            QpKind::Rc(srq) => (ibv_qp_type::IBV_QPT_RC, 0, Some(srq), "ibv_create_qp(RC)"),
        };
        let mut init = ibv_qp_init_attr {
            qp_context: null_mut(),
            send_cq: cq.as_ptr(),
            recv_cq: cq.as_ptr(),
            srq: srq.as_ref().map_or(null_mut(), |s| s.as_ptr()),
            cap: ibv_qp_cap {
                max_send_wr: send_depth,
                max_recv_wr,
                max_send_sge: 1,
                max_recv_sge: 1,
                max_inline_data: 0,
            },
            qp_type,
            sq_sig_all: 1,
        };
        // SAFETY: the domain, queue and shared receive queue are live; init is valid for the call.
        let qp = unsafe { (verbs().ibv_create_qp)(pd.as_ptr(), &mut init) };
        NonNull::new(qp)
            .map(|qp| QueuePair {
                qp,
                _pd: pd,
                _cq: cq,
                _srq: srq,
            })
            .ok_or_else(|| verb_err(verb))
    }

    pub(crate) fn qp_num(&self) -> u32 {
        // SAFETY: the queue pair is live; its number never changes.
        unsafe { self.qp.as_ref().qp_num }
    }

    /// One state transition, `(attributes, mask)` as built in `attrs`; `verb` names it in an
    /// error, e.g. `ibv_modify_qp(RTR)`.
    pub(crate) fn modify(
        &mut self,
        verb: &'static str,
        (mut attr, mask): (ibv_qp_attr, i32),
    ) -> Result<()> {
        // SAFETY: the queue pair is live; attr is valid for the call.
        verb_rc(verb, unsafe {
            (verbs().ibv_modify_qp)(self.qp.as_ptr(), &mut attr, mask)
        })
    }

    /// # Safety
    /// The local buffers of `wr` are registered and stay valid until its completion is polled
    /// (or the queue pair is destroyed); an address handle in it stays alive as long.
    pub(crate) unsafe fn post_send(&mut self, wr: &mut ibv_send_wr) -> Result<()> {
        let mut bad = null_mut();
        // SAFETY: the queue pair is live; wr is valid for the call; buffers per the caller.
        verb_rc("ibv_post_send", unsafe {
            ibv_post_send(self.qp.as_ptr(), wr, &mut bad)
        })
    }

    /// # Safety
    /// As for `post_send`, for the receive buffers of `wr`.
    pub(crate) unsafe fn post_recv(&mut self, wr: &mut ibv_recv_wr) -> Result<()> {
        let mut bad = null_mut();
        // SAFETY: the queue pair is live; wr is valid for the call; buffers per the caller.
        verb_rc("ibv_post_recv(UD)", unsafe {
            ibv_post_recv(self.qp.as_ptr(), wr, &mut bad)
        })
    }
}

impl Drop for QueuePair {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed once; nothing else holds the pointer.
        let rc = unsafe { (verbs().ibv_destroy_qp)(self.qp.as_ptr()) };
        if let Err(e) = verb_rc("ibv_destroy_qp", rc) {
            tracing::warn!("{e}");
        }
    }
}
