//! The eager queue: a bounded multi-producer single-consumer ring of fixed-size cells (one
//! sequence number per cell, as in Vyukov's bounded queue) in the receiver's segment, plus a
//! doorbell the receiver blocks on when idle.
//!
//! Cell `i` of lap `l` (position `p = l * cells + i`) has sequence `p` when free for the
//! producer of `p`, `p + 1` once that producer has published, and `p + cells` after the
//! consumer released it for the next lap. The consumer releases cells in batches and then
//! publishes how far it got (the released position); a producer claims `p` with a CAS on the
//! shared enqueue position once the released position says the cell is free (it only reads
//! that word when its cached copy says the ring is full, so a send is stores only). The
//! consumer's position is private to it.
//!
//! A receiver that sleeps in a poll of its own (the fabric's) instead of the futex arms a
//! bell socket the poll includes (`arm_bell`), and the first sender to find it so rings it.

use std::cell::{Cell, OnceCell};
use std::os::fd::BorrowedFd;
use std::sync::atomic::{fence, Ordering};
use std::time::Duration;

use crate::bell::Bell;
use crate::doorbell::{futex_wait, futex_wait_either, futex_wake_some};
use crate::layout::{AWAKE, LEN_ABANDONED, SLEEP_FUTEX, SLEEP_POLL};
use crate::pid::process_alive;
use crate::segment::Segment;
use crate::{segment_prefix, SendQueue, ShmConfig, ShmError};

/// This process's own receive segment. Not `Sync`: there is exactly one consumer.
pub struct RecvQueue {
    seg: Segment,
    name: String,
    head: Cell<u64>,
    /// Cells before this position are handed back to producers; `released <= head`.
    released: Cell<u64>,
    release_batch: u64,
    /// Set while a `try_recv` callback runs: a nested call must not release its cell.
    in_recv: Cell<bool>,
    /// Whether the owner releases consumed cells itself when idle (see `set_deferred_release`).
    deferred: Cell<bool>,
    creator: u32,
    /// The bell socket, bound at the first `arm_bell`; `None` if binding failed.
    bell: OnceCell<Option<Bell>>,
}

/// What `arm_bell` found.
pub enum BellArm<'a> {
    /// Senders will ring this fd: include it in the poll, then call `disarm_bell`.
    Armed(BorrowedFd<'a>),
    /// A packet is pending or being written: do not sleep.
    Pending,
    /// This process has no bell: sleep briefly, senders cannot wake the poll.
    Unavailable,
}

impl RecvQueue {
    /// Creates `/dev/shm/ibdyn-<pid>`.
    pub fn create(cfg: &ShmConfig) -> Result<RecvQueue, ShmError> {
        Self::create_named(segment_prefix(std::process::id() as i32), cfg)
    }

    /// Creates `/dev/shm/ibdyn-<pid>-<suffix>`: for a process that needs more than one queue.
    pub fn create_with_suffix(suffix: &str, cfg: &ShmConfig) -> Result<RecvQueue, ShmError> {
        if suffix.is_empty() || suffix.contains('/') {
            return Err(ShmError::Config(format!(
                "{suffix:?} is not a segment suffix"
            )));
        }
        let name = format!("{}-{suffix}", segment_prefix(std::process::id() as i32));
        Self::create_named(name, cfg)
    }

    fn create_named(name: String, cfg: &ShmConfig) -> Result<RecvQueue, ShmError> {
        let seg = Segment::create(&name, cfg)?;
        tracing::debug!(
            name,
            cells = cfg.cells,
            payload = cfg.cell_payload,
            "receive queue created"
        );
        Ok(RecvQueue {
            seg,
            name,
            head: Cell::new(0),
            released: Cell::new(0),
            release_batch: (cfg.cells as u64 / 8).clamp(1, 16),
            in_recv: Cell::new(false),
            deferred: Cell::new(false),
            creator: std::process::id(),
            bell: OnceCell::new(),
        })
    }

    /// The segment name a sender passes to [`SendQueue::open`](crate::SendQueue::open).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn max_payload(&self) -> usize {
        self.seg.geo.payload
    }

    /// Whether a published packet is waiting.
    #[inline]
    pub fn pending(&self) -> bool {
        let pos = self.head.get();
        self.seg.cell_seq(pos).load(Ordering::Acquire) == pos.wrapping_add(1)
    }

    /// Pops one packet; `f` sees it in place. Cells go back to the producers in batches, and
    /// also as soon as the queue is found empty unless release is deferred.
    #[inline]
    pub fn try_recv<R>(&self, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        if self.in_recv.get() {
            return None; // called from inside a callback: the outer packet is still in use
        }
        let mut f = Some(f);
        loop {
            let pos = self.head.get();
            let cell = self.seg.cell(pos);
            if cell.seq().load(Ordering::Acquire) != pos.wrapping_add(1) {
                if !self.deferred.get() {
                    self.release();
                }
                return None;
            }
            self.head.set(pos.wrapping_add(1));
            if pos == u64::from(crate::send::BUSY_AFTER) {
                // This ring is busy: map here too the cells its busy senders populated (see
                // `SendQueue`), without allocating any.
                self.seg.prefault_cell_heads(true);
            }
            // SAFETY: the Acquire above pairs with the producer's Release, so the length and
            // payload it wrote are visible; the cell stays ours until `release` passes it.
            let len = unsafe { cell.len().read() } as usize;
            let out = if len == LEN_ABANDONED as usize {
                None
            } else if len <= self.seg.geo.payload {
                // SAFETY: `len <= payload` bytes of this cell lie inside the mapping; well-behaved
                // producers do not write the cell before we release it (a rogue process with
                // write access could, which changes bytes under `f` but stays in bounds).
                let bytes = unsafe { std::slice::from_raw_parts(cell.data(), len) };
                let _busy = Busy::enter(&self.in_recv);
                f.take().map(|f| f(bytes))
            } else {
                tracing::warn!(
                    name = self.name,
                    len,
                    "dropping a shared-memory packet with a corrupt length"
                );
                None
            };
            if self.head.get().wrapping_sub(self.released.get()) >= self.release_batch {
                self.release();
            }
            if out.is_some() {
                return out;
            }
        }
    }

    /// Whether a cell between this consumer's position and the last claim was claimed by
    /// process `pid`: a packet of it still to be read, published or held behind an earlier
    /// cell another producer is still writing. A peer found exited may have sent its last
    /// packets just before; they are here until read.
    pub fn holds_packet_of(&self, pid: u32) -> bool {
        if pid == 0 {
            return false;
        }
        let head = self.head.get();
        let claimed = self
            .seg
            .enqueue_pos()
            .load(Ordering::Acquire)
            .wrapping_sub(head);
        (0..claimed.min(self.seg.geo.cells as u64)).any(|i| {
            self.seg
                .cell_producer(head.wrapping_add(i))
                .load(Ordering::Acquire)
                == pid
        })
    }

    /// With `true`, `try_recv` no longer hands cells back when it finds the queue empty (only
    /// in batches while packets flow); the owner calls [`release_consumed`](Self::release_consumed)
    /// when it has nothing else to do. A progress loop uses this so that the stores releasing a
    /// cell (which take its cache line away from the producer) do not delay a reply sent right
    /// after a packet arrives.
    pub fn set_deferred_release(&self, on: bool) {
        self.deferred.set(on);
        if !on {
            self.release();
        }
    }

    /// Hands every consumed cell back to the producers (cheap when there is none).
    #[inline]
    pub fn release_consumed(&self) {
        if self.released.get() != self.head.get() {
            self.release();
        }
    }

    /// Hands every consumed cell back to the producers.
    #[inline]
    fn release(&self) {
        if self.in_recv.get() {
            return;
        }
        let cells = self.seg.geo.cells as u64;
        let head = self.head.get();
        let mut pos = self.released.get();
        if pos == head {
            return;
        }
        while pos != head {
            // Cleared so a pid seen in a claimed cell is always that of its current claimer.
            self.seg.cell_producer(pos).store(0, Ordering::Relaxed);
            self.seg
                .cell_seq(pos)
                .store(pos.wrapping_add(cells), Ordering::Release);
            pos = pos.wrapping_add(1);
        }
        let freed = head.wrapping_sub(self.released.get());
        self.released.set(head);
        // After the sequences: a producer that sees this position finds its cell reset.
        self.seg.released_pos().store(head, Ordering::Release);
        // Without a fence (this is the receive path): a producer counting itself just now can
        // be missed here, and is found by the ordered look before this receiver sleeps.
        if self.seg.room_waiters().load(Ordering::Relaxed) > 0 {
            self.wake_room_waiters(freed);
        }
    }

    /// Wakes up to `n` producers waiting for room (`SendQueue::begin_room_wait`); one that
    /// finds its cell taken by another sleeps again.
    fn wake_room_waiters(&self, n: u64) {
        self.seg.room().fetch_add(1, Ordering::SeqCst);
        futex_wake_some(self.seg.room(), n.min(i32::MAX as u64) as i32);
    }

    /// Before a sleep: wakes producers waiting for room that `release` missed. The fence pairs
    /// with a producer's SeqCst count and load of the released position: either it saw the
    /// cells free, or the count is seen here.
    fn wake_missed_room_waiters(&self) {
        fence(Ordering::SeqCst);
        if self.seg.room_waiters().load(Ordering::SeqCst) == 0 {
            return;
        }
        let cells = self.seg.geo.cells as u64;
        let taken = self
            .seg
            .enqueue_pos()
            .load(Ordering::SeqCst)
            .wrapping_sub(self.released.get());
        if taken < cells {
            self.wake_room_waiters(cells - taken);
        }
    }

    /// Blocks until a sender rings the doorbell or `timeout` passes (spurious returns possible).
    /// Returns at once when a packet is pending or being written. Callers spin and yield first;
    /// this is the last stage of their back-off.
    pub fn wait(&self, timeout: Duration) {
        let bell = self.seg.doorbell();
        let ring_at = bell.load(Ordering::SeqCst);
        if self.announce_sleep(SLEEP_FUTEX) {
            futex_wait(bell, ring_at, timeout);
            self.seg.sleeping().store(AWAKE, Ordering::Relaxed);
        }
    }

    /// Sleeps until the receiver of `full`, a queue this process found full, hands cells
    /// back, until a sender rings this queue's doorbell, or until `timeout` passes (spurious
    /// returns possible). Returns at once if `full` has room or a packet is pending here.
    /// False, without sleeping, if the kernel cannot wait on both (`futex_waitv`, Linux 5.16):
    /// then look at `full` again after a short `wait`.
    pub fn wait_for_room(&self, full: &SendQueue, timeout: Duration) -> bool {
        let bell = self.seg.doorbell();
        let ring_at = bell.load(Ordering::SeqCst);
        let Some(room_at) = full.begin_room_wait() else {
            return true;
        };
        let mut waited = true;
        if self.announce_sleep(SLEEP_FUTEX) {
            waited = futex_wait_either((bell, ring_at), (full.room(), room_at), timeout);
            self.seg.sleeping().store(AWAKE, Ordering::Relaxed);
        }
        full.end_room_wait();
        waited
    }

    /// Prepares a sleep in the caller's own poll: senders from now on ring the returned fd
    /// (once per sleep) instead of the futex. After the poll, call [`RecvQueue::disarm_bell`].
    pub fn arm_bell(&self) -> BellArm<'_> {
        let Some(bell) = self.bell() else {
            return BellArm::Unavailable;
        };
        if !self.announce_sleep(SLEEP_POLL) {
            return BellArm::Pending;
        }
        BellArm::Armed(bell.fd())
    }

    /// Hands consumed cells back and tells producers this receiver sleeps in `how` (they wake
    /// it from then on). False, and awake again, if a packet was claimed meanwhile: it is
    /// pending, or its producer is mid-copy (then this yields to it).
    fn announce_sleep(&self, how: u32) -> bool {
        self.release();
        self.wake_missed_room_waiters();
        let sleeping = self.seg.sleeping();
        sleeping.store(how, Ordering::SeqCst);
        // Pairs with the producers' SeqCst claim and their SeqCst load of `sleeping`: either
        // we see the claim here, or the producer sees us sleeping and wakes us.
        if self.seg.enqueue_pos().load(Ordering::SeqCst) == self.head.get() {
            return true;
        }
        sleeping.store(AWAKE, Ordering::Relaxed);
        if !self.pending() && !self.reclaim_abandoned() {
            std::thread::yield_now();
        }
        false
    }

    /// Ends a sleep begun by `arm_bell`: senders stop ringing, and rings are read.
    pub fn disarm_bell(&self) {
        self.seg.sleeping().store(AWAKE, Ordering::SeqCst);
        // A sender may ring after this (it saw the armed state just before): that ring is
        // read at the next disarm, after it ends one poll early at most.
        if let Some(Some(bell)) = self.bell.get() {
            bell.drain();
        }
    }

    fn bell(&self) -> Option<&Bell> {
        self.bell
            .get_or_init(|| {
                // A forked copy must not answer for the queue of the process it came from.
                if std::process::id() != self.creator {
                    return None;
                }
                Bell::bind(&self.name)
                    .inspect_err(|e| {
                        tracing::debug!(
                            name = self.name,
                            "no bell for waits in the fabric's poll ({e}): they stay short"
                        )
                    })
                    .ok()
            })
            .as_ref()
    }
}

impl RecvQueue {
    /// If the head cell was claimed by a producer that died before publishing it, publishes it
    /// as abandoned so the packets behind it flow again. True if it did.
    fn reclaim_abandoned(&self) -> bool {
        let pos = self.head.get();
        let seq = self.seg.cell_seq(pos);
        // A claimed, unpublished cell holds its position, or zero on the ring's first lap
        // (cells start zeroed).
        let claimed = seq.load(Ordering::Acquire);
        let first_lap = claimed == 0 && pos < self.seg.geo.cells as u64;
        if claimed != pos && !first_lap {
            return false;
        }
        let pid = self.seg.cell_producer(pos).load(Ordering::Acquire);
        if pid == 0 || process_alive(pid) {
            return false;
        }
        // SAFETY: the cell is claimed by a dead process, so no one else writes it.
        unsafe { self.seg.cell_len(pos).write(LEN_ABANDONED) };
        if seq
            .compare_exchange(
                claimed,
                pos.wrapping_add(1),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return false;
        }
        tracing::warn!(
            name = self.name,
            pid,
            "a producer died in the middle of a send; skipping its cell"
        );
        true
    }
}

impl Drop for RecvQueue {
    fn drop(&mut self) {
        // A forked child that inherited the queue must not remove its parent's segment.
        if std::process::id() == self.creator {
            self.seg.unlink_owned(&self.name);
        }
    }
}

/// Marks a running `try_recv` callback; cleared even if the callback panics.
struct Busy<'a>(&'a Cell<bool>);

impl<'a> Busy<'a> {
    fn enter(flag: &'a Cell<bool>) -> Busy<'a> {
        flag.set(true);
        Busy(flag)
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}
