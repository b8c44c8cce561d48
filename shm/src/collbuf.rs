//! A node-local collective buffer: one /dev/shm segment shared by the processes of one
//! node-local team (rank 0 is the leader). Data moves by one copy in and one copy out,
//! ordered by sequence flags: bcast = the leader copies into the root area and members copy
//! out; reduce / gather = members copy into their slots and the leader combines them;
//! barrier = flags only.
//!
//! Every operation is cut into steps of at most `chunk` bytes (per rank), numbered the same
//! on every member (each member makes the same calls in the same order). Areas are double
//! buffered: step `s` uses half `s % 2`, so the next step's copy in overlaps this one's copy
//! out. Flags (one cache line each):
//! - `down`: the leader has finished its part of step `s` (root area filled, or slots read);
//! - `up[r]`: member `r` has finished its part of step `s` (copied out, or slot filled).
//!
//! A process wakes waiters with a futex only if one announced it sleeps. Waits spin, yield,
//! then sleep, and end with an error naming the rank waited for when it is gone or too slow.
//!
//! Life cycle: the leader creates the segment (`ibdyn-<pid>-coll-<context>-<n>`, 0600), tells
//! the members its name out of band, every member maps it, and the leader unlinks it as soon
//! as all have: nothing is left behind, even if a process dies later.

use std::cell::Cell;
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memmap2::{MmapOptions, MmapRaw};

use crate::cores::usable_cores;
use crate::doorbell::{futex_wait, futex_wake};
use crate::pid::{my_start_time, process_alive_since};
use crate::ShmError;

const MAGIC: u64 = 0x6962_6479_6e43_4f4c; // "ibdynCOL"
const LINE: usize = 64;
const OFF_MAGIC: usize = 0;
const OFF_N: usize = 8;
const OFF_CHUNK: usize = 12;
/// Leader's line: `down` flag, then the total length of the bcast in each half.
const OFF_DOWN: usize = LINE;
const OFF_SLEEPERS: usize = 2 * LINE;
/// Set (to the failing rank + 1) when a member gave up, so the others stop waiting too.
const OFF_FAILED: usize = 2 * LINE + 4;
/// Member r's line: `up` flag, pid, the total length it sends in each half, then its start
/// time (a pid alone may name a later process once the member has died).
const OFF_UP: usize = 3 * LINE;
const MAX_MEMBERS: usize = 1024;

/// Default bound on one wait for another member that is alive (a dead one is noticed
/// sooner). Generous: a member may legitimately wait while its leader waits for a remote
/// root that is busy computing.
pub const COLL_TIMEOUT: Duration = Duration::from_secs(600);
/// How often a blocked wait checks that the process it waits for is alive.
const LIVENESS_EVERY: Duration = Duration::from_millis(200);
const LONGEST_NAP: Duration = Duration::from_millis(20);

fn data_offset(n: usize) -> usize {
    (OFF_UP + n * LINE).next_multiple_of(4096)
}

fn segment_len(n: usize, chunk: usize) -> usize {
    data_offset(n) + 2 * chunk * (n + 1)
}

/// One process's mapping of a node-local collective buffer.
pub struct CollBuf {
    map: MmapRaw,
    path: String,
    name: String,
    rank: usize,
    n: usize,
    chunk: usize,
    /// The next step number.
    step: Cell<u32>,
    linked: Cell<bool>,
    spins: u32,
    timeout: Duration,
}

/// `v` has reached step `target` (wrapping sequence numbers).
fn reached(v: u32, target: u32) -> bool {
    (v.wrapping_sub(target) as i32) >= 0
}

impl CollBuf {
    /// Creates the buffer of a team of `n` processes (the caller is rank 0, the leader)
    /// with `chunk` bytes per rank and half. `context` and `serial` make the name unique.
    pub fn create(n: usize, chunk: usize, context: u64, serial: u64) -> Result<CollBuf, ShmError> {
        if !(1..=MAX_MEMBERS).contains(&n)
            || chunk == 0
            || !chunk.is_multiple_of(LINE)
            || chunk > 1 << 26
        {
            return Err(ShmError::Config(format!(
                "collective buffer of {n} members with {chunk}-byte chunks"
            )));
        }
        let name = format!(
            "{}-coll-{context:x}-{serial}",
            crate::segment_prefix(std::process::id() as i32)
        );
        let path = format!("/dev/shm/{name}");
        let io_err = |source: io::Error| ShmError::Io {
            path: path.clone(),
            source,
        };
        // Mapped populated: past the room left, the pages would fault with SIGBUS later.
        crate::room::check_room(segment_len(n, chunk), "a node collective buffer")?;
        crate::owned::claim(&name)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        let made = file.and_then(|file| {
            let map = file
                .set_len(segment_len(n, chunk) as u64)
                .and_then(|_| MmapOptions::new().populate().map_raw(&file));
            if map.is_err() {
                let _ = std::fs::remove_file(&path);
            }
            map
        });
        let map = match made {
            Ok(m) => m,
            Err(e) => {
                crate::owned::release(&name);
                return Err(io_err(e));
            }
        };
        let buf = CollBuf::new(map, path, name, 0, n, chunk);
        buf.u32_at(OFF_N).store(n as u32, Ordering::Relaxed);
        buf.u32_at(OFF_CHUNK).store(chunk as u32, Ordering::Relaxed);
        buf.up(0).store(0, Ordering::Relaxed);
        buf.start_of(0).store(my_start_time(), Ordering::Relaxed);
        buf.pid_of(0).store(std::process::id(), Ordering::Relaxed);
        buf.u64_at(OFF_MAGIC).store(MAGIC, Ordering::Release);
        tracing::debug!(name = buf.name, n, chunk, "node collective buffer created");
        Ok(buf)
    }

    /// Maps the buffer `name` made by a leader, as member `rank`.
    pub fn open(name: &str, rank: usize) -> Result<CollBuf, ShmError> {
        let (file, path, meta) = crate::segment::open_existing(name)?;
        let malformed = |what: String| ShmError::Malformed {
            name: name.to_string(),
            what,
        };
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(malformed(format!("owned by uid {}, not {me}", meta.uid())));
        }
        let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        if len < data_offset(1) {
            return Err(malformed(format!("size {len} bytes")));
        }
        let map = MmapOptions::new()
            .populate()
            .map_raw(&file)
            .map_err(|e| ShmError::Io {
                path: path.clone(),
                source: e,
            })?;
        let mut buf = CollBuf::new(map, path, name.to_string(), rank, 1, LINE);
        buf.linked.set(false);
        let magic = buf.u64_at(OFF_MAGIC).load(Ordering::Acquire);
        if magic != MAGIC {
            return Err(ShmError::BadMagic {
                name: name.to_string(),
                found: magic,
            });
        }
        let n = buf.u32_at(OFF_N).load(Ordering::Relaxed) as usize;
        let chunk = buf.u32_at(OFF_CHUNK).load(Ordering::Relaxed) as usize;
        if !(1..=MAX_MEMBERS).contains(&n) || chunk == 0 || segment_len(n, chunk) != len {
            return Err(malformed(format!(
                "{n} members, {chunk}-byte chunks in {len} bytes"
            )));
        }
        if rank == 0 || rank >= n {
            return Err(malformed(format!("rank {rank} is not a member of {n}")));
        }
        (buf.n, buf.chunk) = (n, chunk);
        buf.start_of(rank).store(my_start_time(), Ordering::Relaxed);
        buf.pid_of(rank)
            .store(std::process::id(), Ordering::Release);
        Ok(buf)
    }

    fn new(map: MmapRaw, path: String, name: String, rank: usize, n: usize, chunk: usize) -> Self {
        CollBuf {
            map,
            path,
            name,
            rank,
            n,
            chunk,
            step: Cell::new(1),
            linked: Cell::new(true),
            spins: SPINS,
            timeout: COLL_TIMEOUT,
        }
    }

    /// Removes the name (leader, once every member has mapped the buffer).
    pub fn unlink(&self) {
        if self.linked.replace(false) && crate::owned::release(&self.name) {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::debug!(path = self.path, "removing collective buffer: {e}");
            }
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn rank(&self) -> usize {
        self.rank
    }
    pub fn size(&self) -> usize {
        self.n
    }
    /// Bytes per rank and step.
    pub fn chunk(&self) -> usize {
        self.chunk
    }
    /// Bounds every wait for another member (default [`COLL_TIMEOUT`]).
    pub fn set_timeout(&mut self, t: Duration) {
        self.timeout = t;
    }

    // ---- layout ----

    fn u64_at(&self, off: usize) -> &AtomicU64 {
        debug_assert!(off.is_multiple_of(8) && off + 8 <= self.map.len());
        // SAFETY: `off` is a multiple of 8 inside the page-aligned mapping (layout constants
        // below `data_offset`), which lives as long as self; other processes use it atomically.
        unsafe { &*(self.map.as_mut_ptr().add(off) as *const AtomicU64) }
    }
    fn u32_at(&self, off: usize) -> &AtomicU32 {
        debug_assert!(off.is_multiple_of(4) && off + 4 <= self.map.len());
        // SAFETY: as in `u64_at`, 4-byte aligned.
        unsafe { &*(self.map.as_mut_ptr().add(off) as *const AtomicU32) }
    }
    fn down(&self) -> &AtomicU32 {
        self.u32_at(OFF_DOWN)
    }
    fn root_len(&self, half: usize) -> &AtomicU64 {
        self.u64_at(OFF_DOWN + 8 + 8 * half)
    }
    fn sleepers(&self) -> &AtomicU32 {
        self.u32_at(OFF_SLEEPERS)
    }
    fn failed(&self) -> &AtomicU32 {
        self.u32_at(OFF_FAILED)
    }
    fn up(&self, r: usize) -> &AtomicU32 {
        self.u32_at(OFF_UP + r * LINE)
    }
    fn pid_of(&self, r: usize) -> &AtomicU32 {
        self.u32_at(OFF_UP + r * LINE + 4)
    }
    fn slot_len(&self, r: usize, half: usize) -> &AtomicU64 {
        self.u64_at(OFF_UP + r * LINE + 8 + 8 * half)
    }
    fn start_of(&self, r: usize) -> &AtomicU64 {
        self.u64_at(OFF_UP + r * LINE + 24)
    }
    /// The root area's half `h` (`chunk` bytes).
    fn root_area(&self, half: usize) -> *mut u8 {
        // SAFETY: data_offset + 2 chunk (n + 1) is the mapping's length.
        unsafe {
            self.map
                .as_mut_ptr()
                .add(data_offset(self.n) + half * self.chunk)
        }
    }
    /// Member `r`'s slot, half `h` (`chunk` bytes).
    fn slot(&self, r: usize, half: usize) -> *mut u8 {
        let off = data_offset(self.n) + 2 * self.chunk * (1 + r) + half * self.chunk;
        // SAFETY: r < n, so off + chunk <= the mapping's length.
        unsafe { self.map.as_mut_ptr().add(off) }
    }

    // ---- flags ----

    /// Fails once any member has given up (the members no longer agree on the steps).
    fn check_usable(&self) -> Result<(), ShmError> {
        match self.failed().load(Ordering::Acquire) {
            0 => Ok(()),
            f => Err(ShmError::CollAbandoned {
                name: self.name.clone(),
                rank: f as usize - 1,
            }),
        }
    }

    fn next_step(&self) -> (u32, usize) {
        let s = self.step.get();
        self.step.set(s.wrapping_add(1));
        (s, (s % 2) as usize)
    }

    fn post(&self, flag: &AtomicU32, step: u32) {
        flag.store(step, Ordering::SeqCst);
        if self.sleepers().load(Ordering::SeqCst) != 0 {
            futex_wake(flag);
        }
    }

    /// Waits until `flag` (written by member `who`) reaches `target`.
    fn wait(
        &self,
        flag: &AtomicU32,
        target: u32,
        who: usize,
        progress: &dyn Fn(),
    ) -> Result<(), ShmError> {
        if reached(flag.load(Ordering::Acquire), target) {
            return Ok(());
        }
        for i in 0..self.spins {
            std::hint::spin_loop();
            if i % 64 == 63 {
                progress();
            }
            if reached(flag.load(Ordering::Acquire), target) {
                return Ok(());
            }
        }
        // Yield for a while: the member we wait for is usually about to post, and a sleeper
        // pays a wake-up per step.
        let yielding = Instant::now();
        let mut i = 0u32;
        loop {
            std::thread::yield_now();
            progress();
            if reached(flag.load(Ordering::Acquire), target) {
                return Ok(());
            }
            i += 1;
            if i.is_multiple_of(16) && yielding.elapsed() >= YIELD_FOR {
                break;
            }
        }
        let start = Instant::now();
        let mut checked = start;
        let mut nap = Duration::from_micros(50);
        loop {
            self.sleepers().fetch_add(1, Ordering::SeqCst);
            let v = flag.load(Ordering::SeqCst);
            if !reached(v, target) {
                futex_wait(flag, v, nap);
            }
            self.sleepers().fetch_sub(1, Ordering::SeqCst);
            progress();
            if reached(flag.load(Ordering::Acquire), target) {
                return Ok(());
            }
            let failed = self.failed().load(Ordering::Acquire);
            if failed != 0 {
                return Err(ShmError::CollAbandoned {
                    name: self.name.clone(),
                    rank: failed as usize - 1,
                });
            }
            nap = (nap * 2).min(LONGEST_NAP);
            let now = Instant::now();
            if now.duration_since(checked) >= LIVENESS_EVERY {
                checked = now;
                let pid = self.pid_of(who).load(Ordering::Acquire);
                let start = self.start_of(who).load(Ordering::Relaxed);
                if pid != 0 && !process_alive_since(pid, start) {
                    self.give_up();
                    return Err(ShmError::CollPeerGone {
                        name: self.name.clone(),
                        rank: who,
                        pid,
                    });
                }
            }
            if now.duration_since(start) >= self.timeout {
                self.give_up();
                return Err(ShmError::CollTimeout {
                    name: self.name.clone(),
                    rank: who,
                    secs: self.timeout.as_secs_f64(),
                });
            }
        }
    }

    /// Tells every member that this one gave up (they end their waits with an error).
    fn give_up(&self) {
        let _ = self.failed().compare_exchange(
            0,
            self.rank as u32 + 1,
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
    }

    fn wait_members(&self, target: u32, progress: &dyn Fn()) -> Result<(), ShmError> {
        for r in 1..self.n {
            self.wait(self.up(r), target, r, progress)?;
        }
        Ok(())
    }

    /// A size mismatch: the members no longer agree on the steps, so every one is told.
    fn mismatch(&self, rank: usize, expected: usize, got: u64) -> ShmError {
        self.give_up();
        ShmError::CollMismatch {
            name: self.name.clone(),
            rank,
            expected,
            got,
        }
    }

    // ---- operations ----

    /// Returns once every member has entered it.
    ///
    /// Every operation calls `progress` now and then while it waits (e.g. to drive the
    /// point-to-point layer, whose peers may need this process to answer).
    pub fn barrier(&self, progress: &dyn Fn()) -> Result<(), ShmError> {
        self.check_usable()?;
        let (s, _) = self.next_step();
        if self.rank == 0 {
            let last = (1..self.n).all(|r| reached(self.up(r).load(Ordering::Acquire), s));
            self.wait_members(s, progress)?;
            self.post(self.down(), s);
            if last && self.n > usable_cores() {
                std::thread::yield_now();
            }
            Ok(())
        } else {
            self.post(self.up(self.rank), s);
            self.wait(self.down(), s, 0, progress)
        }
    }

    /// The leader's `buf` reaches every member's `buf` (all of the same length).
    pub fn bcast(&self, buf: &mut [u8], progress: &dyn Fn()) -> Result<(), ShmError> {
        self.check_usable()?;
        let total = buf.len();
        let mut off = 0;
        loop {
            let len = self.chunk.min(total - off);
            let (s, h) = self.next_step();
            if self.rank == 0 {
                // Members have copied out of this half two steps ago.
                self.wait_members(s.wrapping_sub(2), progress)?;
                // SAFETY: `len <= chunk` bytes into the leader-owned half; no member reads it
                // until `down` says so.
                unsafe {
                    std::ptr::copy_nonoverlapping(buf[off..].as_ptr(), self.root_area(h), len)
                };
                self.root_len(h).store(total as u64, Ordering::Relaxed);
                self.post(self.down(), s);
            } else {
                self.wait(self.down(), s, 0, progress)?;
                let got = self.root_len(h).load(Ordering::Relaxed);
                if got != total as u64 {
                    // Still release the half, so the leader's next step is not held up.
                    self.post(self.up(self.rank), s);
                    return Err(self.mismatch(0, total, got));
                }
                // SAFETY: the leader filled `len` bytes of this half and will not write it
                // again before our `up` reaches this step.
                unsafe {
                    std::ptr::copy_nonoverlapping(self.root_area(h), buf[off..].as_mut_ptr(), len)
                };
                self.post(self.up(self.rank), s);
            }
            off += len;
            if off >= total {
                return Ok(());
            }
        }
    }

    /// Member contributions reach the leader: `take(r, offset, data)` is called on the leader
    /// for each member `r >= 1` and each piece of its `send` (rank order within a step).
    /// `total` is the length every member sends (the leader's `send` may be empty).
    fn collect(
        &self,
        send: &[u8],
        total: usize,
        step_len: usize,
        take: &mut dyn FnMut(usize, usize, &[u8]),
        progress: &dyn Fn(),
    ) -> Result<(), ShmError> {
        self.check_usable()?;
        let mut off = 0;
        loop {
            let len = step_len.min(total - off);
            let (s, h) = self.next_step();
            if self.rank == 0 {
                self.wait_members(s, progress)?;
                for r in 1..self.n {
                    let got = self.slot_len(r, h).load(Ordering::Relaxed);
                    if got != total as u64 {
                        self.post(self.down(), s);
                        return Err(self.mismatch(r, total, got));
                    }
                }
                for r in 1..self.n {
                    // SAFETY: member r filled `len` bytes of its half and will not write it
                    // again before `down` reaches this step.
                    let part = unsafe { std::slice::from_raw_parts(self.slot(r, h), len) };
                    take(r, off, part);
                }
                self.post(self.down(), s);
            } else {
                // The leader has read this half two steps ago.
                self.wait(self.down(), s.wrapping_sub(2), 0, progress)?;
                // SAFETY: our own half, not read by the leader until `up` says so.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        send[off..].as_ptr(),
                        self.slot(self.rank, h),
                        len,
                    )
                };
                self.slot_len(self.rank, h)
                    .store(total as u64, Ordering::Relaxed);
                self.post(self.up(self.rank), s);
            }
            off += len;
            if off >= total {
                return Ok(());
            }
        }
    }

    /// Blocks of equal size from every member reach the leader's `recv` in rank order
    /// (`recv` holds `n` blocks on the leader and is ignored elsewhere).
    pub fn gather(
        &self,
        send: &[u8],
        recv: &mut [u8],
        progress: &dyn Fn(),
    ) -> Result<(), ShmError> {
        let b = send.len();
        if self.rank == 0 {
            if recv.len() != b * self.n {
                return Err(self.mismatch(0, b * self.n, recv.len() as u64));
            }
            recv[..b].copy_from_slice(send);
        }
        self.collect(
            send,
            b,
            self.chunk,
            &mut |r, off, part| recv[r * b + off..r * b + off + part.len()].copy_from_slice(part),
            progress,
        )
    }

    /// The leader's `recv` gets the reduction, in rank order, of every member's `send`:
    /// `op(a, b)` sets `b = a ∘ b`; pieces are whole multiples of `elem` bytes.
    pub fn reduce(
        &self,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut dyn FnMut(&[u8], &mut [u8]),
        progress: &dyn Fn(),
    ) -> Result<(), ShmError> {
        self.fold(Some(send), send, recv, elem, op, progress)
    }

    /// As `reduce`, without a part from the leader: its `recv` gets the reduction of the
    /// other members' `send` buffers in rank order (an intercommunicator reduce whose root
    /// leads a buffer shared with the other group). The leader's `send` is ignored.
    pub fn reduce_members(
        &self,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut dyn FnMut(&[u8], &mut [u8]),
        progress: &dyn Fn(),
    ) -> Result<(), ShmError> {
        if self.n < 2 {
            return Err(ShmError::Config("a reduce of no members".into()));
        }
        self.fold(None, send, recv, elem, op, progress)
    }

    /// The members' side, or the leader's with its own part `own` folded in last.
    fn fold(
        &self,
        own: Option<&[u8]>,
        send: &[u8],
        recv: &mut [u8],
        elem: usize,
        op: &mut dyn FnMut(&[u8], &mut [u8]),
        progress: &dyn Fn(),
    ) -> Result<(), ShmError> {
        if self.rank == 0 {
            if let Some(own) = own {
                if recv.len() != own.len() {
                    return Err(self.mismatch(0, own.len(), recv.len() as u64));
                }
                if self.n == 1 {
                    recv.copy_from_slice(own);
                    return Ok(());
                }
            }
            return self.fold_at_leader(own, recv.len(), recv, elem, op, progress);
        }
        let step_len = self.step_len(elem)?;
        self.collect(send, send.len(), step_len, &mut |_, _, _| {}, progress)
    }

    fn step_len(&self, elem: usize) -> Result<usize, ShmError> {
        let elem = elem.max(1);
        let step_len = (self.chunk / elem) * elem;
        if step_len == 0 {
            return Err(ShmError::Config(format!(
                "elements of {elem} bytes exceed the {}-byte chunk",
                self.chunk
            )));
        }
        Ok(step_len)
    }

    fn fold_at_leader(
        &self,
        own: Option<&[u8]>,
        total: usize,
        recv: &mut [u8],
        elem: usize,
        op: &mut dyn FnMut(&[u8], &mut [u8]),
        progress: &dyn Fn(),
    ) -> Result<(), ShmError> {
        let step_len = self.step_len(elem)?;
        let n = self.n;
        // Pieces arrive in rank order 1..n: keep the highest rank first, then fold lower
        // ranks in from the left, and the leader's own last: x0 ∘ (x1 ∘ (... ∘ x_{n-1})).
        let mut pieces: Vec<(usize, usize, *const u8, usize)> = Vec::with_capacity(n);
        self.collect(
            &[],
            total,
            step_len,
            &mut |r, off, part| {
                pieces.push((r, off, part.as_ptr(), part.len()));
                if r == n - 1 {
                    let len = part.len();
                    let out = &mut recv[off..off + len];
                    for (k, &(_, _, p, l)) in pieces.iter().rev().enumerate() {
                        // SAFETY: every piece of this step is a slot half the leader owns until
                        // it posts `down` for the step, which happens after this closure returns.
                        let piece = unsafe { std::slice::from_raw_parts(p, l) };
                        if k == 0 {
                            out.copy_from_slice(piece);
                        } else {
                            op(piece, out);
                        }
                    }
                    if let Some(own) = own {
                        op(&own[off..off + len], out);
                    }
                    pieces.clear();
                }
            },
            progress,
        )
    }
}

/// How long a wait yields between spinning and sleeping: a member posts within a few
/// microseconds when it has a core, and sleeping costs a wake-up per step.
const YIELD_FOR: Duration = Duration::from_micros(100);

/// Spins before yielding. Few: the team may share its cores with other processes (the
/// member we wait for may need ours), and a yield costs little when the core is free.
const SPINS: u32 = 32;

impl Drop for CollBuf {
    fn drop(&mut self) {
        if self.rank == 0 {
            self.unlink();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `body(rank)` in `n - 1` forked children (ranks 1..n) and in this process (rank 0,
    /// after `create`); children get the buffer's name. Returns the children's exit codes.
    fn team(n: usize, chunk: usize, body: fn(&CollBuf) -> bool) -> Vec<i32> {
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let buf = CollBuf::create(n, chunk, 0xc0ffee, serial).expect("create");
        let mut kids = Vec::new();
        for r in 1..n {
            // SAFETY: the child only maps the buffer, runs `body` and `_exit`s.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut b = CollBuf::open(buf.name(), r).expect("open");
                    b.set_timeout(Duration::from_secs(20));
                    body(&b)
                }))
                .unwrap_or(false);
                // SAFETY: ends the child without running the parent's destructors.
                unsafe { libc::_exit(if ok { 0 } else { 1 }) };
            }
            kids.push(pid);
        }
        // Every member maps the buffer before the leader may finish and unlink it.
        let start = Instant::now();
        while (1..n).any(|r| buf.pid_of(r).load(Ordering::Acquire) == 0)
            && start.elapsed() < Duration::from_secs(20)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        buf.unlink();
        let ok0 = body(&buf);
        drop(buf);
        let mut codes: Vec<i32> = kids
            .into_iter()
            .map(|pid| {
                let mut st = 0;
                // SAFETY: reaping our own child.
                unsafe { libc::waitpid(pid, &mut st, 0) };
                if libc::WIFEXITED(st) {
                    libc::WEXITSTATUS(st)
                } else {
                    -1
                }
            })
            .collect();
        codes.push(if ok0 { 0 } else { 1 });
        codes
    }

    fn sum_u32(a: &[u8], b: &mut [u8]) {
        for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
            let v = u32::from_ne_bytes(x.try_into().unwrap())
                .wrapping_add(u32::from_ne_bytes((&*y).try_into().unwrap()));
            y.copy_from_slice(&v.to_ne_bytes());
        }
    }

    /// `b = a ∘ b` for 2x2 integer matrices (not commutative): rank order shows.
    fn matmul(a: &[u8], b: &mut [u8]) {
        let m = |s: &[u8]| -> [i64; 4] {
            std::array::from_fn(|i| i64::from_ne_bytes(s[i * 8..i * 8 + 8].try_into().unwrap()))
        };
        for (x, y) in a.chunks_exact(32).zip(b.chunks_exact_mut(32)) {
            let (p, q) = (m(x), m(y));
            let r = [
                p[0] * q[0] + p[1] * q[2],
                p[0] * q[1] + p[1] * q[3],
                p[2] * q[0] + p[3] * q[2],
                p[2] * q[1] + p[3] * q[3],
            ];
            for (i, v) in r.iter().enumerate() {
                y[i * 8..i * 8 + 8].copy_from_slice(&v.to_ne_bytes());
            }
        }
    }

    fn ops(b: &CollBuf) -> bool {
        let (r, n) = (b.rank(), b.size());
        // Sizes around the chunk (64 B here), zero included.
        for len in [0usize, 4, 60, 64, 68, 200, 1000] {
            let mut buf: Vec<u8> = if r == 0 {
                (0..len).map(|i| (i * 7 + 3) as u8).collect()
            } else {
                vec![0; len]
            };
            b.bcast(&mut buf, &|| {}).unwrap();
            if buf.iter().enumerate().any(|(i, &x)| x != (i * 7 + 3) as u8) {
                return false;
            }
            let words = len / 4;
            let send: Vec<u8> = (0..words)
                .flat_map(|i| ((r * 1000 + i) as u32).to_ne_bytes())
                .collect();
            let mut out = vec![0u8; if r == 0 { send.len() } else { 0 }];
            b.reduce(&send, &mut out, 4, &mut sum_u32, &|| {}).unwrap();
            if r == 0 {
                for i in 0..words {
                    let want: u32 = (0..n).map(|k| (k * 1000 + i) as u32).sum();
                    if out[i * 4..i * 4 + 4] != want.to_ne_bytes() {
                        return false;
                    }
                }
            }
            let mut all = vec![0u8; if r == 0 { len * n } else { 0 }];
            let mine = vec![r as u8; len];
            b.gather(&mine, &mut all, &|| {}).unwrap();
            if r == 0
                && all
                    .iter()
                    .enumerate()
                    .any(|(i, &x)| x != (i / len.max(1)) as u8)
            {
                return false;
            }
            b.barrier(&|| {}).unwrap();
        }
        // Non-commutative: 2x2 matrices [[1, r], [0, 1]] x 3, in rank order.
        let m: Vec<u8> = [1i64, r as i64 + 1, 0, 1]
            .repeat(3)
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let mut out = vec![0u8; if r == 0 { m.len() } else { 0 }];
        b.reduce(&m, &mut out, 32, &mut matmul, &|| {}).unwrap();
        // The product of unit upper-triangular matrices adds the corners: sum of r + 1.
        let corner = |o: &[u8]| i64::from_ne_bytes(o[8..16].try_into().unwrap());
        if r == 0 && corner(&out) != (1..=n as i64).sum::<i64>() {
            return false;
        }
        if n > 1 {
            // Members only (the leader's part left out), in rank order, across several steps.
            let long: Vec<u8> = m.repeat(5);
            let mut out = vec![0u8; if r == 0 { long.len() } else { 0 }];
            b.reduce_members(&long, &mut out, 32, &mut matmul, &|| {})
                .unwrap();
            if r == 0
                && out
                    .chunks(32)
                    .any(|o| corner(o) != (2..=n as i64).sum::<i64>())
            {
                return false;
            }
        }
        true
    }

    #[test]
    fn operations_across_processes() {
        for n in [1, 2, 3, 5] {
            assert!(team(n, 64, ops).iter().all(|&c| c == 0), "team of {n}");
        }
    }

    #[test]
    fn name_is_gone_once_unlinked() {
        let b = CollBuf::create(2, 64, 7, 99).unwrap();
        let path = format!("/dev/shm/{}", b.name());
        assert!(std::path::Path::new(&path).exists());
        let m = CollBuf::open(b.name(), 1).unwrap();
        b.unlink();
        assert!(!std::path::Path::new(&path).exists());
        drop(m);
        assert!(CollBuf::open(b.name(), 1).is_err());
    }

    #[test]
    fn dead_member_is_named() {
        let mut b = CollBuf::create(2, 64, 8, 1).unwrap();
        b.set_timeout(Duration::from_secs(20));
        // SAFETY: the child maps the buffer and exits at once.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let ok = CollBuf::open(b.name(), 1).is_ok();
            // SAFETY: ends the child.
            unsafe { libc::_exit(i32::from(!ok)) };
        }
        let mut st = 0;
        // SAFETY: reaping our own child.
        unsafe { libc::waitpid(pid, &mut st, 0) };
        b.unlink();
        let e = b.barrier(&|| {}).unwrap_err().to_string();
        assert!(e.contains("rank 1") && e.contains("gone"), "{e}");
    }

    #[test]
    fn a_dead_member_whose_pid_names_a_later_process_is_gone() {
        let mut b = CollBuf::create(2, 64, 9, 1).unwrap();
        b.set_timeout(Duration::from_secs(20));
        let m = CollBuf::open(b.name(), 1).unwrap();
        // Member 1's pid now names a live process (this one) that started at another time:
        // what a member that died looks like once its pid has been reused.
        let me = std::process::id();
        m.start_of(1).store(my_start_time() + 1, Ordering::Relaxed);
        m.pid_of(1).store(me, Ordering::Release);
        b.unlink();
        let e = b.barrier(&|| {}).unwrap_err().to_string();
        assert!(e.contains("rank 1") && e.contains("gone"), "{e}");
    }

    #[test]
    fn mismatched_sizes_are_errors() {
        fn body(b: &CollBuf) -> bool {
            let mut buf = vec![1u8; if b.rank() == 0 { 100 } else { 50 }];
            let r = b.bcast(&mut buf, &|| {});
            let first = if b.rank() == 0 {
                r.is_ok()
            } else {
                matches!(r, Err(ShmError::CollMismatch { .. }))
            };
            // Then every member hears of it instead of waiting for steps that never come.
            let after = b.barrier(&|| {});
            first && matches!(after, Err(ShmError::CollAbandoned { rank: 1, .. }))
        }
        let codes = team(2, 64, body);
        assert!(codes.iter().all(|&c| c == 0), "{codes:?}");
    }
}
