//! The shared-memory route: packets go through the receiver's queue in `/dev/shm`; a
//! rendezvous's data is read from the sender's memory with CMA, or, where the kernel refuses
//! CMA, pushed by the sender in fragments through the queue (the pipelined copy).
//!
//! Like the queues it wraps, the route is a single-threaded handle whose methods take `&self`:
//! a packet is handled in place, in its queue cell, and the handler may send over this same
//! route meanwhile. So `Route` is implemented for `&ShmRoute` (as `Write` is for `&File`).

use crate::error::{CommError, Result};
use crate::gpid::Gpid;
use crate::packet::HEADER_LEN;
use crate::route::{Pull, Pulled, Route, Sink};
use ibdyn_shm::{BellArm, RecvQueue, SendQueue};
use ibdyn_verbs::RemoteBuf;
use std::cell::Cell;
use std::collections::VecDeque;
use std::time::Duration;

/// Packets taken from the receive queue in one progress pass, at most.
pub(crate) const RECV_BATCH: usize = 64;

pub(crate) struct ShmRoute {
    rx: RecvQueue,
    /// Whether rendezvous data is read with CMA (until the kernel refuses it).
    cma: Cell<bool>,
    /// Packets waiting in all peers' backlogs (so progress skips the scan when there are none).
    queued: Cell<usize>,
    /// Blocks since a backlog packet last got out (`room_retry`).
    room_waits: Cell<u32>,
}

/// A same-node peer: its receive queue, and the packets that did not fit it yet, in order.
pub(crate) struct ShmLink {
    queue: SendQueue,
    backlog: VecDeque<Vec<u8>>,
}

impl ShmLink {
    pub fn open(shm_name: &str) -> Result<ShmLink> {
        Ok(ShmLink {
            queue: SendQueue::open(shm_name)?,
            backlog: VecDeque::new(),
        })
    }

    /// Whether packets wait for room in this peer's queue.
    pub fn has_backlog(&self) -> bool {
        !self.backlog.is_empty()
    }

    /// Sends at once if nothing is queued before and the peer's queue has room: the common
    /// case, without touching the route.
    #[inline]
    pub fn try_send_now(&self, parts: &[&[u8]]) -> Result<bool> {
        Ok(self.backlog.is_empty() && self.queue.try_send(parts)?)
    }
}

impl ShmRoute {
    pub fn new(rx: RecvQueue, cma: bool) -> ShmRoute {
        // Consumed cells go back to the senders when this process is idle (see
        // `release_consumed`), not between a packet's arrival and the reply it triggers.
        rx.set_deferred_release(true);
        ShmRoute {
            rx,
            cma: Cell::new(cma),
            queued: Cell::new(0),
            room_waits: Cell::new(0),
        }
    }

    /// Takes one packet and hands it to `f` in place; `None` when the queue is empty.
    #[inline]
    pub fn recv_one<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.rx.try_recv(f)
    }

    /// Whether a packet of process `pid` waits in this process's queue, to be read.
    pub fn holds_packet_of(&self, pid: i32) -> bool {
        u32::try_from(pid).is_ok_and(|pid| self.rx.holds_packet_of(pid))
    }

    /// Prepares a sleep in the fabric's poll that same-node senders can end (see
    /// `RecvQueue::arm_bell`); `disarm_bell` after it.
    pub fn arm_bell(&self) -> BellArm<'_> {
        self.rx.arm_bell()
    }

    pub fn disarm_bell(&self) {
        self.rx.disarm_bell()
    }

    /// Hands consumed cells back to the senders (for when this process is idle).
    #[inline]
    pub fn release_consumed(&self) {
        self.rx.release_consumed()
    }

    /// Sleeps until `link`'s peer hands cells of its full queue back, a packet arrives here,
    /// or `t` passes. False, without sleeping, where the kernel cannot wait on both.
    pub fn wait_for_room(&self, link: &ShmLink, t: Duration) -> bool {
        self.rx.wait_for_room(&link.queue, t)
    }

    /// Whether packets wait for room in some peer's queue.
    #[inline]
    pub fn has_backlog(&self) -> bool {
        self.queued.get() > 0
    }

    /// How long an idle wait may block now, if packets wait for room in a peer's queue:
    /// briefly at first, longer while none gets out (`crate::backoff::room_retry`).
    pub fn room_retry(&self) -> Option<std::time::Duration> {
        if !self.has_backlog() {
            self.room_waits.set(0);
            return None;
        }
        let n = self.room_waits.get();
        self.room_waits.set(n.saturating_add(1));
        Some(crate::backoff::room_retry(n))
    }

    /// Sends what `link`'s backlog holds while the peer's queue takes it. Returns whether
    /// anything left.
    pub fn flush(&self, link: &mut ShmLink) -> Result<bool> {
        let mut sent = false;
        while let Some(front) = link.backlog.front() {
            if !link.queue.try_send(&[front])? {
                break;
            }
            link.backlog.pop_front();
            self.queued.set(self.queued.get() - 1);
            sent = true;
        }
        if sent {
            self.room_waits.set(0);
        }
        Ok(sent)
    }

    /// Drops `link`'s backlog (its peer is dead).
    pub fn drop_backlog(&self, link: &mut ShmLink) {
        self.queued.set(self.queued.get() - link.backlog.len());
        link.backlog.clear();
    }

    /// Pushes fragments of `data` from offset `off` on, each `head` + offset + bytes, straight
    /// into `link`'s queue while it has room (fragments bypass the backlog: they are sent
    /// again from where they stopped). Returns the offset reached.
    pub fn stream(
        &self,
        link: &ShmLink,
        head: &[u8],
        data: &[u8],
        mut off: usize,
    ) -> Result<usize> {
        let chunk_max = link
            .queue
            .max_payload()
            .saturating_sub(HEADER_LEN + 8)
            .max(1);
        while off < data.len() {
            let n = chunk_max.min(data.len() - off);
            let parts = [head, &(off as u64).to_le_bytes(), &data[off..off + n]];
            if !link.queue.try_send(&parts)? {
                break;
            }
            off += n;
        }
        Ok(off)
    }
}

impl Route for &ShmRoute {
    type Link = ShmLink;

    fn send(&mut self, link: &mut ShmLink, _to: Gpid, parts: &[&[u8]]) -> Result<()> {
        if !link.try_send_now(parts)? {
            link.backlog.push_back(parts.concat());
            self.queued.set(self.queued.get() + 1);
        }
        Ok(())
    }

    fn expose(&mut self, _buf: &[u8]) -> Result<Option<RemoteBuf>> {
        Ok(None)
    }

    unsafe fn pull(&mut self, _link: &ShmLink, pull: &Pull) -> Result<Pulled> {
        if self.cma.get() {
            // SAFETY: the caller lends `dst` for `len` bytes; the slice lives for this call only.
            let local = unsafe { std::slice::from_raw_parts_mut(pull.dst, pull.len) };
            match ibdyn_shm::cma::read(pull.rts.pid, pull.rts.addr as usize, local) {
                Ok(()) => return Ok(Pulled::Done),
                Err(e) if crate::cma_refused(&e) => {
                    tracing::info!("CMA refused ({e}); large messages now go through a pipelined copy in shared memory");
                    self.cma.set(false);
                }
                Err(e) => {
                    return Err(CommError::PeerDead {
                        peer: pull.from.to_string(),
                        detail: format!("reading its buffer failed: {e}"),
                    })
                }
            }
        }
        Ok(if pull.len == 0 {
            Pulled::Done
        } else {
            Pulled::Stream
        })
    }

    #[inline]
    fn progress(&mut self, sink: &mut impl Sink<Self>) -> Result<bool> {
        let mut route: &ShmRoute = self;
        let mut did = false;
        for _ in 0..RECV_BATCH {
            if self.rx.try_recv(|p| sink.packet(&mut route, p)).is_none() {
                break;
            }
            did = true;
        }
        Ok(did)
    }

    fn wait(&mut self, t: Duration) {
        self.rx.wait(t)
    }
}
