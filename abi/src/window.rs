//! Windows of one-sided communication. Within a node an origin reads and writes a target's
//! memory itself: a put, get or accumulate is complete at the target when its call returns,
//! and the target takes no part (passive-target progress without a progress thread). A
//! shared-memory segment per window and node holds one lock line per process (a
//! reader-writer word for MPI_Win_lock and a mutex that makes each accumulate atomic) and,
//! for MPI_Win_allocate and MPI_Win_allocate_shared, the memory of the node's processes,
//! which the others then reach by load and store. The memory a program gives MPI_Win_create
//! is reached with cross-memory attach (`process_vm_readv`/`writev`). Targets on another
//! node are reached by messages (`api::rma_remote`).

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::table::Table;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::rc::Rc;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Window handles are this plus the table index.
const WIN_BASE: Handle = 0x7800_0000;
/// One lock line per process.
const LINE: usize = 64;
/// How long a lock is waited for before the wait fails: a process holding it that has died
/// or never unlocks would otherwise hang its peers.
const LOCK_BOUND: Duration = Duration::from_secs(120);

/// What each process of a window knows of every other.
#[derive(Clone, Copy, Default)]
#[repr(C)]
pub struct Peer {
    pub pid: i64,
    pub base: i64,
    pub size: i64,
    pub disp_unit: i64,
}

/// The shared segment of a window, mapped in this process.
pub struct Segment {
    addr: usize,
    len: usize,
}

impl Segment {
    /// Maps `len` bytes of the file at `path` (created by the window's first process).
    pub fn map(path: &str, len: usize, create: bool) -> MpiResult<Segment> {
        if create {
            // A window is meant to be used whole: past the room left in /dev/shm, the first
            // store to a page without one would kill the process with SIGBUS.
            if let Err(e) = ibdyn_shm::check_room(len, &format!("a window of {len} bytes")) {
                return err(MPI_ERR_NO_MEM, e.to_string());
            }
        }
        let c = std::ffi::CString::new(path).expect("no NUL in a path we made");
        let flags = libc::O_RDWR
            | if create {
                libc::O_CREAT | libc::O_EXCL
            } else {
                0
            };
        // SAFETY: plain open of a path we own.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
        if fd < 0 {
            return err(
                MPI_ERR_NO_MEM,
                format!(
                    "window: cannot open {path}: {}",
                    std::io::Error::last_os_error()
                ),
            );
        }
        // SAFETY: `fd` is ours; ftruncate only on the creating side.
        let sized = !create || unsafe { libc::ftruncate(fd, len as libc::off_t) } == 0;
        let addr = if sized {
            // SAFETY: a fresh shared mapping of the file, `len` > 0 bytes.
            unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            }
        } else {
            libc::MAP_FAILED
        };
        let why = std::io::Error::last_os_error();
        // SAFETY: our descriptor; the mapping keeps the file.
        unsafe { libc::close(fd) };
        if addr == libc::MAP_FAILED {
            if create {
                // SAFETY: removing the file we created.
                unsafe { libc::unlink(c.as_ptr()) };
            }
            return err(
                MPI_ERR_NO_MEM,
                format!("window: cannot map {len} bytes of {path} (/dev/shm full?): {why}"),
            );
        }
        Ok(Segment {
            addr: addr as usize,
            len,
        })
    }

    pub fn addr(&self) -> usize {
        self.addr
    }

    fn rw(&self, rank: usize) -> &AtomicI64 {
        // SAFETY: the line lies in the mapping (len covers every rank's line), 8-aligned,
        // and is only ever accessed atomically.
        unsafe { &*((self.addr + rank * LINE) as *const AtomicI64) }
    }

    fn acc(&self, rank: usize) -> &AtomicU32 {
        // SAFETY: as above, 8 bytes further into the line.
        unsafe { &*((self.addr + rank * LINE + 8) as *const AtomicU32) }
    }

    /// The word and bit that say whether `holder` holds target `t`'s lock shared, in a
    /// window of `n` processes (see `lock_bytes`).
    fn mark(&self, n: usize, holder: usize, t: usize) -> (&AtomicU64, u64) {
        let at = n * LINE + holder * mark_row(n) + t / 64 * 8;
        assert!(at + 8 <= self.len, "a mark of a rank of the window");
        // SAFETY: inside the mapping (checked), 8-aligned (LINE is), only accessed
        // atomically.
        let word = unsafe { &*((self.addr + at) as *const AtomicU64) };
        (word, 1 << (t % 64))
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: our own mapping, unmapped once.
        unsafe { libc::munmap(self.addr as *mut libc::c_void, self.len) };
    }
}

/// Bytes of the lock lines of `n` processes and, after them, a bit per holder and target
/// that says who holds which lock shared (a line only counts them), rounded to a page so
/// shared memory after them is page-aligned. A holder's bits are its own cache lines; pages
/// of holders on other nodes are never touched.
pub fn lock_bytes(n: usize) -> usize {
    (n * LINE + n * mark_row(n)).div_ceil(4096) * 4096
}

/// Bytes of one holder's marks: a bit per target, in whole cache lines.
fn mark_row(n: usize) -> usize {
    n.div_ceil(512) * 64
}

/// The synchronization a process has opened on a window.
#[derive(Default)]
pub struct Epochs {
    /// Between two MPI_Win_fence calls (not after one with MPI_MODE_NOSUCCEED).
    pub fence: bool,
    /// MPI_Win_lock_all is held.
    pub lock_all: bool,
    /// Targets locked with MPI_Win_lock, and the lock type.
    pub locked: BTreeMap<usize, c_int>,
    /// The targets of MPI_Win_start, in the window's ranks (None: no access epoch).
    pub started: Option<Vec<usize>>,
    /// The origins of MPI_Win_post not yet done (None: no exposure epoch).
    pub posted: Option<Vec<usize>>,
}

pub struct Window {
    /// A private duplicate of the window's communicator.
    pub comm: Handle,
    pub peers: Vec<Peer>,
    /// The lock lines and this process's memory, shared with the service that applies
    /// other nodes' operations (`crate::rma_target`).
    pub exposed: Rc<Exposed>,
    /// Where each process's window memory is in this process, when it can be reached by
    /// load and store (allocated windows; this process's own memory).
    pub local: Vec<Option<usize>>,
    /// The program's attributes: (keyval, value).
    pub attrs: Vec<(c_int, usize)>,
    pub name: String,
    pub epochs: Epochs,
    // Attribute values: MPI_Win_get_attr hands out pointers to these (the window is boxed).
    pub base: usize,
    pub size: isize,
    pub disp_unit: c_int,
    pub flavor: c_int,
    pub model: c_int,
    /// Its ranks on other nodes and the operations on them (`api::rma_remote`).
    pub remote: crate::api::Remote,
}

impl Window {
    /// Whether an operation on `target` is inside an access epoch.
    pub fn may_access(&self, target: usize) -> bool {
        let e = &self.epochs;
        e.fence
            || e.lock_all
            || e.locked.contains_key(&target)
            || e.started.as_ref().is_some_and(|s| s.contains(&target))
    }

    /// Takes target `t`'s lock: shared (many holders) or exclusive. A process of another
    /// node may hold it, which only the target's own progress gives back, so the wait keeps
    /// this process's engine going.
    pub fn lock(&self, t: usize, exclusive: bool) -> MpiResult<()> {
        self.exposed.lock(t, exclusive, false)
    }

    pub fn unlock(&self, t: usize, exclusive: bool) {
        self.exposed.release(t, exclusive)
    }

    /// Runs `f` holding target `t`'s accumulate mutex (one read-modify-write at a time).
    pub fn atomically<R>(&self, t: usize, f: impl FnOnce() -> MpiResult<R>) -> MpiResult<R> {
        self.exposed.atomically(t, f)
    }
}

/// What the target side of a window needs: the node's lock lines and where this process's
/// window memory is.
pub struct Exposed {
    seg: Segment,
    /// This process's rank in the window.
    pub me: usize,
    dynamic: bool,
    base: usize,
    size: usize,
    /// The regions this process has attached to a dynamic window: (address, size).
    attached: RefCell<Vec<(usize, usize)>>,
    /// Per rank of the window, its process id if it runs on this node.
    pids: Vec<Option<u32>>,
    /// Looks of waiting lockers that found a lock held (see `try_lock_waiting`).
    looks: Cell<u32>,
}

/// A waiting locker checks whether the lock's exclusive holder has ended every this many
/// looks (past any spinning: a look costs a read of /proc).
pub(crate) const HOLDER_CHECK_EVERY: u32 = 1024;

impl Exposed {
    pub fn new(
        seg: Segment,
        me: usize,
        flavor: c_int,
        base: usize,
        size: usize,
        pids: Vec<Option<u32>>,
    ) -> Exposed {
        Exposed {
            seg,
            me,
            dynamic: flavor == MPI_WIN_FLAVOR_DYNAMIC,
            base,
            size,
            attached: RefCell::new(Vec::new()),
            pids,
            looks: Cell::new(0),
        }
    }

    /// The regions attached to a dynamic window.
    pub fn attached(&self) -> std::cell::RefMut<'_, Vec<(usize, usize)>> {
        self.attached.borrow_mut()
    }

    /// Whether `len` bytes at address `addr` of this process are its window memory (of a
    /// dynamic window: inside one attached region).
    pub fn holds(&self, addr: u64, len: u64) -> bool {
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        let inside = |b: usize, l: usize| addr >= b as u64 && end <= (b + l) as u64;
        if self.dynamic {
            self.attached.borrow().iter().any(|&(b, l)| inside(b, l))
        } else {
            inside(self.base, self.size)
        }
    }

    /// `Window::lock`; with `turns`, for a caller outside the window table at
    /// MPI_THREAD_MULTIPLE, the wait lets other threads make their calls between its looks
    /// (the holder may be waiting for one of them).
    pub fn lock(&self, t: usize, exclusive: bool, turns: bool) -> MpiResult<()> {
        wait_for(
            || format!("the lock of window rank {t}"),
            || self.try_lock_waiting(t, exclusive),
            turns,
        )?;
        if !exclusive {
            self.mark_shared(t, true);
        }
        Ok(())
    }

    /// Gives back a lock `lock` took.
    pub fn release(&self, t: usize, exclusive: bool) {
        if !exclusive {
            self.mark_shared(t, false);
        }
        self.unlock(t, exclusive)
    }

    /// Takes target `t`'s lock if it is free for this kind of holder. An exclusive holder
    /// writes its own rank into the line (as -1 - rank), so a waiter can tell when it ended.
    pub fn try_lock(&self, t: usize, exclusive: bool) -> bool {
        let w = self.seg.rw(t);
        let v = w.load(Ordering::Acquire);
        if exclusive {
            v == 0
                && w.compare_exchange(0, -1 - self.me as i64, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
        } else {
            v >= 0
                && w.compare_exchange(v, v + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
        }
    }

    /// Marks target `t`'s lock held exclusively by rank `holder`, as its `try_lock` would.
    #[cfg(test)]
    pub fn hold_for(&self, t: usize, holder: usize) {
        self.seg.rw(t).store(-1 - holder as i64, Ordering::Release);
    }

    /// Marks target `t`'s lock held shared by rank `holder` too, as its `Window::lock` would.
    #[cfg(test)]
    pub fn hold_shared_for(&self, t: usize, holder: usize) {
        self.seg.rw(t).fetch_add(1, Ordering::AcqRel);
        let (word, bit) = self.seg.mark(self.pids.len(), holder, t);
        word.fetch_or(bit, Ordering::Release);
    }

    /// Marks target `t`'s accumulate mutex held by rank `holder`.
    #[cfg(test)]
    pub fn hold_accumulate_for(&self, t: usize, holder: usize) {
        self.seg.acc(t).store(holder as u32 + 1, Ordering::Release);
    }

    /// `try_lock` for a locker that waits (this node's `MPI_Win_lock`, the target service
    /// for another node's origin): every `HOLDER_CHECK_EVERY`th look that finds the lock
    /// held, it also frees it if its exclusive holder, a process of this node, has ended,
    /// which would never unlock.
    pub fn try_lock_waiting(&self, t: usize, exclusive: bool) -> bool {
        if self.try_lock(t, exclusive) {
            return true;
        }
        let n = self.looks.get().wrapping_add(1);
        self.looks.set(n);
        n.is_multiple_of(HOLDER_CHECK_EVERY)
            && self.free_if_holder_ended(t)
            && self.try_lock(t, exclusive)
    }

    /// Records whether this process holds target `t`'s lock shared for itself (not for an
    /// origin of another node), so that a waiter can give it back should this process end.
    /// Set after taking the lock and cleared before giving it back: a process that ends
    /// between the two steps leaves a count no mark explains, which only the wait's bound
    /// ends, while a mark without its count cannot happen.
    pub fn mark_shared(&self, t: usize, held: bool) {
        let (word, bit) = self.seg.mark(self.pids.len(), self.me, t);
        // No read-modify-write: only this process writes its marks while it runs (a waiter
        // clears the marks of ended processes only).
        let v = word.load(Ordering::Relaxed);
        word.store(if held { v | bit } else { v & !bit }, Ordering::Release);
    }

    /// Whether rank `r` of the window is a process of this node other than this one that
    /// has ended (a zombie counts). This process never counts, also when it holds a lock
    /// for an origin of another node.
    fn ended(&self, r: usize) -> bool {
        r != self.me
            && self
                .pids
                .get(r)
                .copied()
                .flatten()
                .is_some_and(|pid| !ibdyn_shm::process_alive_since(pid, 0))
    }

    /// Gives back what holders of target `t`'s lock that have ended held: the exclusive
    /// holder the line names, or the shared holders whose marks are set. Whether it freed
    /// anything.
    fn free_if_holder_ended(&self, t: usize) -> bool {
        let w = self.seg.rw(t);
        let v = w.load(Ordering::Acquire);
        if v < 0 {
            return self.ended((-1 - v) as usize)
                && w.compare_exchange(v, 0, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok();
        }
        let n = self.pids.len();
        let mut freed = false;
        for h in (0..n).filter(|&h| self.pids[h].is_some()) {
            let (word, bit) = self.seg.mark(n, h, t);
            // Clearing the mark first makes one waiter, not every one, take its count back.
            if word.load(Ordering::Acquire) & bit != 0
                && self.ended(h)
                && word.fetch_and(!bit, Ordering::AcqRel) & bit != 0
            {
                w.fetch_sub(1, Ordering::AcqRel);
                freed = true;
            }
        }
        freed
    }

    pub fn unlock(&self, t: usize, exclusive: bool) {
        let w = self.seg.rw(t);
        if exclusive {
            w.store(0, Ordering::Release);
        } else {
            w.fetch_sub(1, Ordering::Release);
        }
    }

    /// Runs `f` holding target `t`'s accumulate mutex (one read-modify-write at a time).
    /// The mutex holds its holder's rank + 1, so that a waiter can free it when the holder
    /// ended inside an accumulate (the target's memory may then hold that one half done).
    pub fn atomically<R>(&self, t: usize, f: impl FnOnce() -> MpiResult<R>) -> MpiResult<R> {
        let m = self.seg.acc(t);
        let mine = self.me as u32 + 1;
        let mut looks = 0u32;
        wait_for(
            || format!("the accumulate lock of window rank {t}"),
            || {
                if m.compare_exchange(0, mine, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return true;
                }
                looks = looks.wrapping_add(1);
                if looks.is_multiple_of(HOLDER_CHECK_EVERY) {
                    self.free_accumulate_if_holder_ended(t);
                }
                false
            },
            false,
        )?;
        let r = f();
        m.store(0, Ordering::Release);
        r
    }

    /// Frees target `t`'s accumulate mutex when its holder has ended; whether it did.
    pub(crate) fn free_accumulate_if_holder_ended(&self, t: usize) -> bool {
        let m = self.seg.acc(t);
        let v = m.load(Ordering::Acquire);
        v != 0
            && self.ended(v as usize - 1)
            && m.compare_exchange(v, 0, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }
}

/// Spins, yields, then sleeps until `ready()`, for at most LOCK_BOUND, progressing the
/// engine between yields and sleeps (for the services, see `Window::lock`); `what` names the
/// lock in the error (made only then: an uncontended lock costs one atomic operation).
/// With `turns`, a thread waiting for the state gets it instead of a yield or a sleep.
fn wait_for(
    what: impl Fn() -> String,
    mut ready: impl FnMut() -> bool,
    turns: bool,
) -> MpiResult<()> {
    let mut since: Option<Instant> = None;
    let mut idle = 0u32;
    while !ready() {
        idle += 1;
        let paused = idle > 64 && turns && ibdyn_owner::pause();
        match idle {
            0..=64 => std::hint::spin_loop(),
            65..=256 if paused => {}
            65..=256 => {
                ibdyn_intercomm::process::poll();
                std::thread::yield_now()
            }
            _ => {
                if !paused {
                    ibdyn_intercomm::process::poll();
                }
                if since.get_or_insert_with(Instant::now).elapsed() > LOCK_BOUND {
                    return err(
                        MPI_ERR_RMA_SYNC,
                        format!(
                            "{} was not free within {} s: a process holds it and does not \
                             unlock (ended, or waiting for this one)",
                            what(),
                            LOCK_BOUND.as_secs()
                        ),
                    );
                }
                if !paused {
                    // A packet (a far holder's unlock) ends the block early.
                    ibdyn_intercomm::process::idle_for(Duration::from_micros(100));
                }
            }
        }
    }
    Ok(())
}

ibdyn_owner::process_local! {
    static WINS: RefCell<Table<Box<Window>>> = RefCell::new(Table::new());
}

/// Windows of this process that span nodes.
static SPANNING: AtomicU32 = AtomicU32::new(0);

/// Whether any window of this process spans nodes (its synchronisation calls then also
/// progress the engine, see `api::win_sync`).
pub fn any_spanning() -> bool {
    SPANNING.load(Ordering::Relaxed) > 0
}

pub fn add(w: Window) -> Handle {
    if w.remote.spans_nodes() {
        SPANNING.fetch_add(1, Ordering::Relaxed);
    }
    WINS.with(|t| WIN_BASE + t.borrow_mut().insert(Box::new(w)))
}

fn index(h: Handle) -> MpiResult<usize> {
    match h {
        MPI_WIN_NULL => err(MPI_ERR_WIN, "MPI_WIN_NULL is not a window"),
        h if h >= WIN_BASE => Ok(h - WIN_BASE),
        h => err(MPI_ERR_WIN, format!("{h:#x} is not a window handle")),
    }
}

/// Runs `f` on window `h`. `f` must not call MPI functions that touch windows.
pub fn with<R>(h: Handle, f: impl FnOnce(&mut Window) -> MpiResult<R>) -> MpiResult<R> {
    let i = index(h)?;
    let f = |w: &mut Window| ibdyn_owner::borrowed(|| f(w));
    crate::state::owned(&WINS, |t| match t.borrow_mut().get_mut(i) {
        Some(w) => f(w),
        None => err(
            MPI_ERR_WIN,
            format!("window {h:#x} has been freed (or never existed)"),
        ),
    })
}

pub fn remove(h: Handle) -> MpiResult<Box<Window>> {
    let i = index(h)?;
    let w = WINS.with(|t| t.borrow_mut().remove(i)).map_or_else(
        || {
            err(
                MPI_ERR_WIN,
                format!("window {h:#x} has been freed (or never existed)"),
            )
        },
        Ok,
    )?;
    if w.remote.spans_nodes() {
        SPANNING.fetch_sub(1, Ordering::Relaxed);
    }
    Ok(w)
}

/// The private communicator of window `h` (whose error handler takes the window's errors).
pub fn comm_of(h: Handle) -> Handle {
    with(h, |w| Ok(w.comm)).unwrap_or(MPI_COMM_SELF)
}
