//! The producer side of the eager queue (see `recv.rs` for the ring's rules): check the
//! receiver has released the cell, claim its position with a CAS, fill the cell, publish its
//! sequence, ring only if the receiver sleeps.

use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::bell;
use crate::copy::copy_bytes;
use crate::doorbell::futex_wake;
use crate::layout::{AWAKE, SLEEP_POLL, SLEEP_POLL_RUNG};
use crate::pid::my_pid;
use crate::segment::Segment;
use crate::ShmError;

/// A producer gives up (reports "full") after this many lost races or odd sequence values, so
/// a corrupted segment cannot make it spin forever.
const CLAIM_ATTEMPTS: usize = 1 << 16;

/// After this many packets to one receiver the pair counts as busy and the sender maps the
/// head page of every cell of the receiver's ring at once (`Segment::prefault_cell_heads`):
/// a loop of small messages then takes no page fault per message on its first lap, while
/// the one or two packets most pairs exchange (an all-to-all wire-up) map only their cells.
pub(crate) const BUSY_AFTER: u32 = 4;

/// A mapping of a peer's receive segment.
pub struct SendQueue {
    seg: Segment,
    name: String,
    /// The receiver's released position as last read (it only grows).
    released: AtomicU64,
    /// Packets sent, counted up to `BUSY_AFTER`.
    sent: AtomicU32,
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
            sent: AtomicU32::new(0),
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
                    self.count_sent();
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

    /// Counts this producer among those waiting for room and returns the value of the room
    /// futex to sleep on; `None` (and not counted) if the ring has room after all.
    pub(crate) fn begin_room_wait(&self) -> Option<u32> {
        self.seg.room_waiters().fetch_add(1, Ordering::SeqCst);
        let room = self.seg.room().load(Ordering::SeqCst);
        // Pairs with the fence a receiver takes before it sleeps (`wake_missed_room_waiters`):
        // either it sees us counted and bumps the futex, or we see the cells it freed. (Had it
        // bumped already, `room` holds the new value and so do we here.) While it receives,
        // its releases usually see the count too, without a fence.
        let pos = self.seg.enqueue_pos().load(Ordering::SeqCst);
        let released = self.seg.released_pos().load(Ordering::SeqCst);
        self.released.store(released, Ordering::Relaxed);
        if pos.wrapping_sub(released) < self.seg.geo.cells as u64 {
            self.end_room_wait();
            return None;
        }
        Some(room)
    }

    pub(crate) fn end_room_wait(&self) {
        self.seg.room_waiters().fetch_sub(1, Ordering::SeqCst);
    }

    pub(crate) fn room(&self) -> &AtomicU32 {
        self.seg.room()
    }

    #[inline]
    fn count_sent(&self) {
        let n = self.sent.load(Ordering::Relaxed);
        if n < BUSY_AFTER {
            self.sent.store(n + 1, Ordering::Relaxed);
            if n + 1 == BUSY_AFTER {
                self.seg.prefault_cell_heads(false);
            }
        }
    }

    #[inline]
    fn ring(&self) {
        let sleeping = self.seg.sleeping();
        match sleeping.load(Ordering::SeqCst) {
            AWAKE | SLEEP_POLL_RUNG => {}
            SLEEP_POLL => {
                // Only the sender that moves it to "rung" writes to the socket.
                if sleeping
                    .compare_exchange(
                        SLEEP_POLL,
                        SLEEP_POLL_RUNG,
                        Ordering::SeqCst,
                        Ordering::Relaxed,
                    )
                    .is_ok()
                {
                    bell::ring(&self.name);
                }
            }
            // SLEEP_FUTEX, or a value a newer peer wrote: waking costs nothing if unneeded.
            _ => {
                self.seg.doorbell().fetch_add(1, Ordering::SeqCst);
                futex_wake(self.seg.doorbell());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::page_size;
    use crate::{RecvQueue, ShmConfig};

    /// How many of the ring's cell-head pages hold memory (mincore: a page of a shared
    /// memory file exists once some process has faulted it in).
    fn heads_in_memory(q: &SendQueue) -> usize {
        q.seg
            .cell_head_pages()
            .into_iter()
            .filter(|&p| {
                let mut v = 0u8;
                // SAFETY: `p` is a page of the live mapping and `v` holds the one result byte.
                let r = unsafe { libc::mincore(p as *mut libc::c_void, page_size(), &mut v) };
                assert_eq!(r, 0, "mincore: {}", std::io::Error::last_os_error());
                v & 1 == 1
            })
            .count()
    }

    /// Whether the kernel has MADV_POPULATE_WRITE; says SKIPPED when not.
    fn kernel_populates() -> bool {
        let m = memmap2::MmapMut::map_anon(page_size()).expect("an anonymous page");
        // SAFETY: the page is ours and live; the advice changes no byte.
        let ok = unsafe {
            libc::madvise(
                m.as_ptr() as *mut libc::c_void,
                page_size(),
                libc::MADV_POPULATE_WRITE,
            ) == 0
        };
        if !ok {
            eprintln!("SKIPPED: this kernel has no MADV_POPULATE_WRITE (Linux 5.14+)");
        }
        ok
    }

    #[test]
    fn a_busy_sender_maps_every_cell_head_and_a_quiet_one_only_its_cells() {
        if !kernel_populates() {
            return;
        }
        let rx = RecvQueue::create_with_suffix("busy", &ShmConfig::DEFAULT).unwrap();
        let tx = SendQueue::open(rx.name()).unwrap();
        let cells = tx.seg.cell_head_pages().len();
        assert!(cells > BUSY_AFTER as usize);
        // The first cell may share its page with the segment's header.
        let header = heads_in_memory(&tx);
        assert!(header <= 1);
        for _ in 1..BUSY_AFTER {
            assert!(tx.try_send(&[b"ping"]).unwrap());
        }
        let quiet = heads_in_memory(&tx);
        assert!(quiet < header + BUSY_AFTER as usize, "{quiet} heads mapped");
        assert!(tx.try_send(&[b"ping"]).unwrap());
        assert_eq!(heads_in_memory(&tx), cells);
        for _ in 0..BUSY_AFTER {
            assert_eq!(rx.try_recv(|b| b.to_vec()).as_deref(), Some(&b"ping"[..]));
        }
        assert!(rx.try_recv(|b| b.to_vec()).is_none());
    }

    #[test]
    fn a_receiver_maps_only_cells_its_senders_populated() {
        if !kernel_populates() {
            return;
        }
        let rx = RecvQueue::create_with_suffix("busyrx", &ShmConfig::DEFAULT).unwrap();
        // Three quiet senders (none reaches BUSY_AFTER) fill BUSY_AFTER + 1 cells: the
        // receiver passes BUSY_AFTER and allocates no other cell.
        let txs: Vec<SendQueue> = (0..3)
            .map(|_| SendQueue::open(rx.name()).unwrap())
            .collect();
        let packets = BUSY_AFTER as usize + 1;
        for i in 0..packets {
            assert!(txs[i % 3].try_send(&[b"ping"]).unwrap());
        }
        let before = heads_in_memory(&txs[0]);
        assert!(before <= packets + 1, "{before} heads in memory");
        for _ in 0..packets {
            assert!(rx.try_recv(|_| ()).is_some());
        }
        assert_eq!(heads_in_memory(&txs[0]), before);
        // A busy sender populates every head; the receiver then finds them all resident.
        let busy = SendQueue::open(rx.name()).unwrap();
        for _ in 0..BUSY_AFTER {
            assert!(busy.try_send(&[b"ping"]).unwrap());
        }
        assert_eq!(heads_in_memory(&busy), busy.seg.cell_head_pages().len());
    }
}
