//! The shared receive queue: one pool of receive buffers for every RC queue pair.

use super::dl::verbs;
use super::fail::{verb_err, verb_rc};
use super::pd::ProtectionDomain;
use crate::error::Result;
use rdma_sys::*;
use std::ptr::{null_mut, NonNull};
use std::sync::Arc;

/// `ibv_create_srq`, destroyed on drop after the queue pairs attached to it.
pub(crate) struct SharedReceiveQueue {
    srq: NonNull<ibv_srq>,
    _pd: Arc<ProtectionDomain>,
}

// SAFETY: a shared receive queue may be used from any thread; the pointer is owned by this value.
unsafe impl Send for SharedReceiveQueue {}
// SAFETY: shared through Arcs by the queue pairs attached; posting receives through `&self` is
// thread safe in libibverbs (the vendor driver locks the queue).
unsafe impl Sync for SharedReceiveQueue {}

impl SharedReceiveQueue {
    /// A queue of `max_wr` single-entry receives.
    pub(crate) fn new(pd: Arc<ProtectionDomain>, max_wr: u32) -> Result<SharedReceiveQueue> {
        let mut attr = ibv_srq_init_attr {
            srq_context: null_mut(),
            attr: ibv_srq_attr {
                max_wr,
                max_sge: 1,
                srq_limit: 0,
            },
        };
        // SAFETY: the domain is live; attr is valid for the call.
        let srq = unsafe { (verbs().ibv_create_srq)(pd.as_ptr(), &mut attr) };
        NonNull::new(srq)
            .map(|srq| SharedReceiveQueue { srq, _pd: pd })
            .ok_or_else(|| verb_err("ibv_create_srq"))
    }

    /// For attaching queue pairs; the pointer is not to be kept.
    pub(crate) fn as_ptr(&self) -> *mut ibv_srq {
        self.srq.as_ptr()
    }

    /// # Safety
    /// The buffers of `wr` are registered and stay valid until their completion is polled (or
    /// the queue is destroyed).
    pub(crate) unsafe fn post_recv(&self, wr: &mut ibv_recv_wr) -> Result<()> {
        let mut bad = null_mut();
        // SAFETY: the queue is live; wr is valid for the call; buffers per the caller.
        verb_rc("ibv_post_srq_recv", unsafe {
            ibv_post_srq_recv(self.as_ptr(), wr, &mut bad)
        })
    }
}

impl Drop for SharedReceiveQueue {
    fn drop(&mut self) {
        // SAFETY: every queue pair attached holds an Arc of it, so none is left.
        let rc = unsafe { (verbs().ibv_destroy_srq)(self.as_ptr()) };
        if let Err(e) = verb_rc("ibv_destroy_srq", rc) {
            tracing::warn!("{e}");
        }
    }
}
