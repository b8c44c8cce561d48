//! Address handles: the route to a remote port, for UD sends.

use super::attrs::{ah_attr, Path};
use super::dl::verbs;
use super::fail::{verb_err, verb_rc};
use super::pd::ProtectionDomain;
use crate::error::Result;
use rdma_sys::*;
use std::ptr::NonNull;
use std::sync::Arc;

/// `ibv_create_ah`, destroyed on drop.
pub(crate) struct AddressHandle {
    ah: NonNull<ibv_ah>,
    _pd: Arc<ProtectionDomain>,
}

// SAFETY: an address handle may be used and destroyed from any thread; the pointer is owned by
// this value alone.
unsafe impl Send for AddressHandle {}

impl AddressHandle {
    pub(crate) fn new(pd: Arc<ProtectionDomain>, path: &Path) -> Result<AddressHandle> {
        let mut attr = ah_attr(path);
        // SAFETY: the domain is live; attr is valid for the call.
        let ah = unsafe { (verbs().ibv_create_ah)(pd.as_ptr(), &mut attr) };
        NonNull::new(ah)
            .map(|ah| AddressHandle { ah, _pd: pd })
            .ok_or_else(|| verb_err("ibv_create_ah"))
    }

    /// For a UD work request; valid while self lives.
    pub(crate) fn as_ptr(&self) -> *mut ibv_ah {
        self.ah.as_ptr()
    }
}

impl Drop for AddressHandle {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed once; the owner drops its UD queue pair first.
        let rc = unsafe { (verbs().ibv_destroy_ah)(self.as_ptr()) };
        if let Err(e) = verb_rc("ibv_destroy_ah", rc) {
            tracing::warn!("{e}");
        }
    }
}
