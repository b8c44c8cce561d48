//! The producer side of the eager queue (see `recv.rs` for the ring's rules): check the
//! receiver has released the cell, claim its position with a CAS, fill the cell, publish its
//! sequence, ring only if the receiver sleeps.

use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::copy::copy_bytes;
use crate::doorbell::futex_wake;
use crate::pid::my_pid;
use crate::segment::Segment;
use crate::ShmError;

/// A producer gives up (reports "full") after this many lost races or odd sequence values, so
/// a corrupted segment cannot make it spin forever.
const CLAIM_ATTEMPTS: usize = 1 << 16;

/// A mapping of a peer's receive segment.
pub struct SendQueue {
    seg: Segment,
    name: String,
    /// The receiver's released position as last read (it only grows).
    released: AtomicU64,
}

impl SendQueue {
    /// Maps the segment named `name` (e.g. `ibdyn-1234`) and checks its header.
    pub fn open(name: &str) -> Result<SendQueue, ShmError> {
        let seg = Segment::open(name)?;
        tracing::debug!(
            name,
            payload = seg.geo.payload,
            cells = seg.geo.cells,
            "send queue opened"
        );
        Ok(SendQueue {
            seg,
            name: name.to_string(),
            released: AtomicU64::new(0),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn max_payload(&self) -> usize {
        self.seg.geo.payload
    }

    /// Process id of the receiver, as written in its header.
    pub fn receiver_pid(&self) -> i32 {
        self.seg.owner_pid()
    }

    /// False once the receiver's segment is gone (it dropped its queue, or its node daemon
    /// cleaned up after it) or replaced by a new one of the same name.
    pub fn receiver_alive(&self) -> bool {
        match std::fs::metadata(&self.seg.path) {
            Ok(m) => (m.dev(), m.ino()) == self.seg.ino,
            Err(_) => false,
        }
    }

    /// Gathers `parts` into one cell. `Ok(false)`: the ring is full (progress, then retry).
    #[inline]
    pub fn try_send(&self, parts: &[&[u8]]) -> Result<bool, ShmError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let geo = self.seg.geo;
        if len > geo.payload {
            return Err(ShmError::TooLarge {
                len,
                max: geo.payload,
            });
        }
        let cells = geo.cells as u64;
        let enq = self.seg.enqueue_pos();
        let mut pos = enq.load(Ordering::Relaxed);
        for _ in 0..CLAIM_ATTEMPTS {
            if !self.has_room(pos, cells) {
                return Ok(false);
            }
            match enq.compare_exchange_weak(
                pos,
                pos.wrapping_add(1),
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    // Only stores from here on: they leave through the store buffer while the
                    // cell's line comes over, and the sequence store publishes them all.
                    let cell = self.seg.cell(pos);
                    cell.producer().store(my_pid(), Ordering::Relaxed);
                    let mut at = 0;
                    for p in parts {
                        // SAFETY: we claimed the cell; `at + p.len() <= len <= payload` bytes
                        // fit in it, and a local slice cannot overlap the shared cell we own.
                        unsafe { copy_bytes(p.as_ptr(), cell.data().add(at), p.len()) };
                        at += p.len();
                    }
                    // SAFETY: the length word of our claimed cell, aligned and in bounds.
                    unsafe { cell.len().write(len as u32) };
                    cell.seq().store(pos.wrapping_add(1), Ordering::Release);
                    self.ring();
                    return Ok(true);
                }
                Err(now) => pos = now,
            }
        }
        Ok(false)
    }

    /// Whether the cell for `pos` was handed back by the receiver. Reads the receiver's
    /// released position only when the copy cached from the last look says the ring is full,
    /// so a send does not wait for the cell's line before writing it.
    #[inline]
    fn has_room(&self, pos: u64, cells: u64) -> bool {
        let free = |released: u64| {
            let ahead = pos.wrapping_sub(released);
            // A position behind `released` means a corrupt header: treat it as full.
            ahead < cells
        };
        if free(self.released.load(Ordering::Relaxed)) {
            return true;
        }
        // Acquire pairs with the receiver's Release store after it reset the cells' sequences.
        let now = self.seg.released_pos().load(Ordering::Acquire);
        self.released.store(now, Ordering::Relaxed);
        free(now)
    }

    #[inline]
    fn ring(&self) {
        if self.seg.sleeping().load(Ordering::SeqCst) != 0 {
            self.seg.doorbell().fetch_add(1, Ordering::SeqCst);
            futex_wake(self.seg.doorbell());
        }
    }
}
