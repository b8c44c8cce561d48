//! An open device: the root of every other verbs object, closed when the last one is gone.

use super::dl::verbs;
use super::fail::{verb_err, verb_rc};
use crate::error::Result;
use rdma_sys::*;
use std::ptr::NonNull;

/// An open device context (`ibv_open_device`), closed on drop.
pub(crate) struct Context {
    ctx: NonNull<ibv_context>,
}

// SAFETY: libibverbs contexts may be used from any thread (the library is thread safe); the
// pointer is owned by this value alone.
unsafe impl Send for Context {}
// SAFETY: shared through Arcs by its children; `&self` is used only for verbs that libibverbs
// documents as thread safe (queries, and creating children of the context).
unsafe impl Sync for Context {}

impl Context {
    /// # Safety
    /// `device` comes from a device list that is still alive.
    pub(crate) unsafe fn open(device: *mut ibv_device) -> Result<Context> {
        // SAFETY: the caller guarantees `device` is live.
        let ctx = unsafe { (verbs().ibv_open_device)(device) };
        NonNull::new(ctx)
            .map(|ctx| Context { ctx })
            .ok_or_else(|| verb_err("ibv_open_device"))
    }

    /// For creating children (PD, completion channel, CQ); the pointer is not to be kept.
    pub(crate) fn as_ptr(&self) -> *mut ibv_context {
        self.ctx.as_ptr()
    }

    pub(crate) fn query_device(&self) -> Result<ibv_device_attr> {
        // SAFETY: plain C data; zero is valid.
        let mut attr: ibv_device_attr = unsafe { std::mem::zeroed() };
        // SAFETY: the context is open and attr a valid out-pointer.
        verb_rc("ibv_query_device", unsafe {
            (verbs().ibv_query_device)(self.as_ptr(), &mut attr)
        })?;
        Ok(attr)
    }

    /// Port attributes through the context's extended query when the provider has it (as
    /// verbs.h's inline `ibv_query_port` does); the exported compat symbol reads an older,
    /// smaller struct.
    pub(crate) fn query_port(&self, port: u8) -> Result<ibv_port_attr> {
        // SAFETY: ibv_port_attr is plain C data; zero is a valid initial value.
        let mut attr: ibv_port_attr = unsafe { std::mem::zeroed() };
        // SAFETY: the context is open and attr a valid out-pointer.
        verb_rc("ibv_query_port", unsafe {
            query_port_ext(self.as_ptr(), port, &mut attr)
        })?;
        Ok(attr)
    }

    pub(crate) fn query_gid(&self, port: u8, index: i32) -> Result<[u8; 16]> {
        let mut gid = ibv_gid { raw: [0; 16] };
        // SAFETY: the context is open; gid is a valid out-pointer.
        verb_rc("ibv_query_gid", unsafe {
            (verbs().ibv_query_gid)(self.as_ptr(), port, index, &mut gid)
        })?;
        // SAFETY: every bit pattern of the union is a valid byte array.
        Ok(unsafe { gid.raw })
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: every child holds an Arc of this context, so none is left; closed once.
        let rc = unsafe { (verbs().ibv_close_device)(self.as_ptr()) };
        if let Err(e) = verb_rc("ibv_close_device", rc) {
            tracing::warn!("{e}");
        }
    }
}

/// verbs.h's `___ibv_query_port`: the extended operation of a verbs context whose size says
/// it has one, else the compat entry point.
///
/// # Safety
/// `ctx` is an open device context and `attr` a valid out-pointer.
unsafe fn query_port_ext(ctx: *mut ibv_context, port: u8, attr: *mut ibv_port_attr) -> i32 {
    // SAFETY (block): ctx is open (caller); a context whose `abi_compat` is all ones is the last
    // member of a `verbs_context`, whose `sz` says which operations it has.
    unsafe {
        if (*ctx).abi_compat as usize == u32::MAX as usize {
            let vc = ctx
                .cast::<u8>()
                .sub(std::mem::offset_of!(verbs_context, context))
                .cast::<verbs_context>();
            let needed = std::mem::size_of::<verbs_context>()
                - std::mem::offset_of!(verbs_context, query_port);
            if (*vc).sz >= needed {
                if let Some(op) = (*vc).query_port {
                    return op(ctx, port, attr, std::mem::size_of::<ibv_port_attr>());
                }
            }
        }
        (verbs().ibv_query_port)(ctx, port, attr.cast())
    }
}
