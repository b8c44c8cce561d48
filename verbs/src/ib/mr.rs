//! Memory regions: memory the adapter may access, by local key and (if allowed) remote key.

use super::dl::verbs;
use super::fail::{verb_err, verb_rc};
use super::pd::ProtectionDomain;
use crate::error::Result;
use rdma_sys::*;
use std::ptr::NonNull;
use std::sync::Arc;

/// `ibv_reg_mr`, deregistered on drop.
pub(crate) struct MemoryRegion {
    mr: NonNull<ibv_mr>,
    _pd: Arc<ProtectionDomain>,
}

// SAFETY: a memory region may be deregistered from any thread; the pointer is owned by this
// value alone and only read (keys) through `&self`.
unsafe impl Send for MemoryRegion {}

impl MemoryRegion {
    /// Registers `[addr, addr+len)` with `access` (`ibv_access_flags`); `verb` names the call in
    /// an error.
    ///
    /// # Safety
    /// The memory stays mapped until the region is dropped.
    pub(crate) unsafe fn register(
        pd: Arc<ProtectionDomain>,
        addr: *mut u8,
        len: usize,
        access: i32,
        verb: &'static str,
    ) -> Result<MemoryRegion> {
        // SAFETY: the domain is live; the caller keeps the memory mapped while registered.
        let mr = unsafe { (verbs().ibv_reg_mr)(pd.as_ptr(), addr.cast(), len, access) };
        NonNull::new(mr)
            .map(|mr| MemoryRegion { mr, _pd: pd })
            .ok_or_else(|| verb_err(verb))
    }

    pub(crate) fn lkey(&self) -> u32 {
        // SAFETY: the registration is live while self is.
        unsafe { self.mr.as_ref().lkey }
    }

    pub(crate) fn rkey(&self) -> u32 {
        // SAFETY: as in lkey.
        unsafe { self.mr.as_ref().rkey }
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        // SAFETY: registered by `register`, deregistered once; queue pairs that could still use
        // the keys are destroyed first by their owner (see IbProvider's field order).
        let rc = unsafe { (verbs().ibv_dereg_mr)(self.mr.as_ptr()) };
        if let Err(e) = verb_rc("ibv_dereg_mr", rc) {
            tracing::warn!("{e}");
        }
    }
}
