//! The completion queue and the channel that wakes a waiting process when it gets an entry.

use super::context::Context;
use super::dl::verbs;
use super::fail::{verb_err, verb_rc};
use crate::error::Result;
use rdma_sys::*;
use std::os::fd::RawFd;
use std::ptr::{null_mut, NonNull};
use std::sync::Arc;

/// `ibv_create_comp_channel`, destroyed on drop after its completion queues.
pub(crate) struct CompletionChannel {
    channel: NonNull<ibv_comp_channel>,
    ctx: Arc<Context>,
}

// SAFETY: a completion channel may be used from any thread; the pointer is owned by this value.
unsafe impl Send for CompletionChannel {}
// SAFETY: shared through Arcs by its queues; `&self` reads the fd and takes events, which
// libibverbs allows from any thread.
unsafe impl Sync for CompletionChannel {}

impl CompletionChannel {
    pub(crate) fn new(ctx: Arc<Context>) -> Result<CompletionChannel> {
        // SAFETY: the context is open while `ctx` lives.
        let channel = unsafe { (verbs().ibv_create_comp_channel)(ctx.as_ptr()) };
        NonNull::new(channel)
            .map(|channel| CompletionChannel { channel, ctx })
            .ok_or_else(|| verb_err("ibv_create_comp_channel"))
    }

    /// Readable when a completion event is waiting.
    pub(crate) fn fd(&self) -> RawFd {
        // SAFETY: the channel is live; `fd` is set at creation and never changes.
        unsafe { self.channel.as_ref().fd }
    }

    /// Takes one event and acknowledges it; false if there was none to take. Call only when
    /// `fd()` is readable, or it blocks.
    pub(crate) fn take_event(&self) -> bool {
        let mut cq = null_mut();
        let mut cq_ctx = null_mut();
        // SAFETY: the channel is live; the out-pointers are valid for the call.
        let rc = unsafe { (verbs().ibv_get_cq_event)(self.channel.as_ptr(), &mut cq, &mut cq_ctx) };
        if rc != 0 {
            return false;
        }
        // SAFETY: `cq` is the queue on this channel the event is for, still alive (destroying
        // a queue discards its unread events); every event is acked once, here.
        unsafe { (verbs().ibv_ack_cq_events)(cq, 1) };
        true
    }
}

impl Drop for CompletionChannel {
    fn drop(&mut self) {
        // SAFETY: every queue on the channel holds an Arc of it, so none is left.
        let rc = unsafe { (verbs().ibv_destroy_comp_channel)(self.channel.as_ptr()) };
        if let Err(e) = verb_rc("ibv_destroy_comp_channel", rc) {
            tracing::warn!("{e}");
        }
    }
}

/// `ibv_create_cq` on a completion channel, destroyed on drop after the queue pairs using it.
pub(crate) struct CompletionQueue {
    cq: NonNull<ibv_cq>,
    channel: Arc<CompletionChannel>,
}

// SAFETY: a completion queue may be used from any thread; the pointer is owned by this value.
unsafe impl Send for CompletionQueue {}
// SAFETY: shared through Arcs by the queue pairs on it; polling and arming through `&self` are
// thread safe in libibverbs (the vendor driver locks the queue).
unsafe impl Sync for CompletionQueue {}

impl CompletionQueue {
    /// A queue of `depth` entries on the channel's device.
    pub(crate) fn new(channel: Arc<CompletionChannel>, depth: i32) -> Result<CompletionQueue> {
        // SAFETY: the channel and its context are live; no user context pointer.
        let cq = unsafe {
            (verbs().ibv_create_cq)(
                channel.ctx.as_ptr(),
                depth,
                null_mut(),
                channel.channel.as_ptr(),
                0,
            )
        };
        NonNull::new(cq)
            .map(|cq| CompletionQueue { cq, channel })
            .ok_or_else(|| verb_err("ibv_create_cq"))
    }

    /// For creating queue pairs on it; the pointer is not to be kept.
    pub(crate) fn as_ptr(&self) -> *mut ibv_cq {
        self.cq.as_ptr()
    }

    pub(crate) fn channel(&self) -> &CompletionChannel {
        &self.channel
    }

    /// Fills the front of `wcs`; returns how many, or a negative value on error.
    pub(crate) fn poll(&self, wcs: &mut [ibv_wc]) -> i32 {
        let n = wcs.len().min(i32::MAX as usize) as i32;
        // SAFETY: the queue is live; `wcs` has room for `n` entries.
        unsafe { ibv_poll_cq(self.as_ptr(), n, wcs.as_mut_ptr()) }
    }

    /// Asks for an event on the channel at the next completion.
    pub(crate) fn arm(&self) -> Result<()> {
        // SAFETY: the queue is live.
        verb_rc("ibv_req_notify_cq", unsafe {
            ibv_req_notify_cq(self.as_ptr(), 0)
        })
    }
}

impl Drop for CompletionQueue {
    fn drop(&mut self) {
        // SAFETY: every queue pair on this queue holds an Arc of it, so none is left; events
        // were acknowledged as they were taken.
        let rc = unsafe { (verbs().ibv_destroy_cq)(self.as_ptr()) };
        if let Err(e) = verb_rc("ibv_destroy_cq", rc) {
            tracing::warn!("{e}");
        }
    }
}
