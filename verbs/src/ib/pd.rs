//! The protection domain: memory regions, address handles and queues live in one.

use super::context::Context;
use super::dl::verbs;
use super::fail::{verb_err, verb_rc};
use crate::error::Result;
use rdma_sys::*;
use std::ptr::NonNull;
use std::sync::Arc;

/// `ibv_alloc_pd`, deallocated on drop after every object made in it (each holds an Arc of it).
pub(crate) struct ProtectionDomain {
    pd: NonNull<ibv_pd>,
    _ctx: Arc<Context>,
}

// SAFETY: a protection domain may be used from any thread (libibverbs is thread safe); the
// pointer is owned by this value alone.
unsafe impl Send for ProtectionDomain {}
// SAFETY: shared through Arcs by the objects made in it; `&self` only creates objects in the
// domain, which libibverbs allows concurrently.
unsafe impl Sync for ProtectionDomain {}

impl ProtectionDomain {
    pub(crate) fn new(ctx: Arc<Context>) -> Result<ProtectionDomain> {
        // SAFETY: the context is open for as long as `ctx` lives.
        let pd = unsafe { (verbs().ibv_alloc_pd)(ctx.as_ptr()) };
        NonNull::new(pd)
            .map(|pd| ProtectionDomain { pd, _ctx: ctx })
            .ok_or_else(|| verb_err("ibv_alloc_pd"))
    }

    /// For creating objects in the domain; the pointer is not to be kept.
    pub(crate) fn as_ptr(&self) -> *mut ibv_pd {
        self.pd.as_ptr()
    }
}

impl Drop for ProtectionDomain {
    fn drop(&mut self) {
        // SAFETY: every object made in the domain holds an Arc of it, so none is left.
        let rc = unsafe { (verbs().ibv_dealloc_pd)(self.as_ptr()) };
        if let Err(e) = verb_rc("ibv_dealloc_pd", rc) {
            tracing::warn!("{e}");
        }
    }
}
