//! The ownership lock. `HOLDER` is the token of the thread that owns the state (0: none).
//! A thread becomes the holder by `claim` (kept until `release_claim` or the thread's end) or
//! through `enter` (kept until the `Entry` drops). Handing over goes through `HOLDER`'s
//! release store and acquire exchange, so the next owner sees every write of the last.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

static HOLDER: AtomicU64 = AtomicU64::new(0);
/// A claim has been given up: from then on only entries own the state (a thread that finds
/// it unowned outside an entry must not keep it from the others).
static ENTRIES_ONLY: AtomicBool = AtomicBool::new(false);
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);
/// Threads blocked in `enter`, so that a release wakes one only when someone waits.
static WAITERS: AtomicUsize = AtomicUsize::new(0);
static PARK: Mutex<()> = Mutex::new(());
static WAKE: Condvar = Condvar::new();

thread_local! {
    static TOKEN: Cell<u64> = const { Cell::new(0) };
    /// Entries this thread holds (nested calls from callbacks).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// This thread claimed the state and keeps it past its entries, until it gives the claim
    /// up or ends.
    static CLAIMED: Claim = const { Claim(Cell::new(false)) };
    /// Entries 1 to this depth borrow nothing of the state now (`unborrowed`).
    static FREE: Cell<u32> = const { Cell::new(0) };
}

/// The state's holder borrows it now (`borrowed`). Only the holder sets it, and the state is
/// handed over only while it is clear (`pause`), so one flag serves every thread; a static,
/// not a thread-local, because a thread-local of a shared library (the MPI library) costs a
/// call on every access, and every MPI call borrows the state.
static BORROWING: AtomicBool = AtomicBool::new(false);

struct Claim(Cell<bool>);

impl Claim {
    fn set(&self, v: bool) {
        self.0.set(v);
    }
    fn get(&self) -> bool {
        self.0.get()
    }
    fn replace(&self, v: bool) -> bool {
        self.0.replace(v)
    }
}

impl Drop for Claim {
    /// A thread that ends with its claim gives the state up: it can not touch it again.
    fn drop(&mut self) {
        let me = TOKEN.try_with(Cell::get).unwrap_or(0);
        if self.0.get() && me != 0 && HOLDER.load(Ordering::Relaxed) == me {
            release();
        }
    }
}

/// This thread's token: never reused in the process; 0 only if the thread's locals are
/// gone (such a thread owns nothing).
pub fn thread_token() -> u64 {
    TOKEN
        .try_with(|t| {
            if t.get() == 0 {
                t.set(NEXT_TOKEN.fetch_add(1, Ordering::Relaxed));
            }
            t.get()
        })
        .unwrap_or(0)
}

/// Whether this thread holds the state now (by a claim or an entry), without claiming it.
pub fn holds() -> bool {
    let me = thread_token();
    me != 0 && HOLDER.load(Ordering::Acquire) == me
}

/// Whether this thread owns the state, claiming it if nobody does (and keeping it until
/// `release_claim` or the thread's end). Once a claim has been given up, only entries own it.
pub fn claim() -> bool {
    let me = thread_token();
    if me == 0 {
        return false;
    }
    let holder = HOLDER.load(Ordering::Acquire);
    if holder == me {
        return true;
    }
    if holder == 0
        && !ENTRIES_ONLY.load(Ordering::Acquire)
        && HOLDER
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    {
        if CLAIMED.try_with(|c| c.set(true)).is_ok() {
            return true;
        }
        // This thread is ending: it can not keep a claim.
        release();
    }
    false
}

/// Gives up this thread's claim: from now on the state is owned only inside entries, by any
/// thread. Nothing else if this thread holds no claim.
pub fn release_claim() {
    ENTRIES_ONLY.store(true, Ordering::Release);
    if !CLAIMED.try_with(|c| c.replace(false)).unwrap_or(false) {
        return;
    }
    if DEPTH.with(Cell::get) == 0 {
        release();
    }
}

/// Ownership for as long as the entry lives. Dropping it hands the state back (to a waiting
/// thread if any), unless this thread also holds a claim.
#[must_use = "ownership ends when the entry drops"]
pub struct Entry {
    /// Not Send: the entry belongs to the thread that entered.
    _here: std::marker::PhantomData<*const ()>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        let depth = DEPTH.with(|d| {
            d.set(d.get() - 1);
            d.get()
        });
        if depth == 0 && !CLAIMED.try_with(Claim::get).unwrap_or(false) {
            release();
        }
    }
}

/// Takes ownership of the state, waiting while another thread's entry or claim holds it.
pub fn enter() -> Entry {
    acquire(None).expect("an unbounded wait always ends with the state")
}

/// `enter`, giving up after `bound`: `None` if another thread still holds the state.
pub fn enter_within(bound: Duration) -> Option<Entry> {
    acquire(Some(Instant::now() + bound))
}

fn acquire(deadline: Option<Instant>) -> Option<Entry> {
    let me = thread_token();
    assert!(
        me != 0,
        "ibdyn: the runtime was entered while a thread was ending"
    );
    if HOLDER.load(Ordering::Relaxed) != me && !try_take(me) {
        WAITERS.fetch_add(1, Ordering::SeqCst);
        let taken = wait_for(me, deadline);
        WAITERS.fetch_sub(1, Ordering::SeqCst);
        if !taken {
            return None;
        }
    }
    DEPTH.with(|d| d.set(d.get() + 1));
    Some(Entry {
        _here: std::marker::PhantomData,
    })
}

/// Whether another thread waits in `enter` for the state.
pub fn others_waiting() -> bool {
    WAITERS.load(Ordering::Relaxed) > 0
}

/// How many threads wait for the state (in `enter`, or to take it back in `pause`).
pub fn waiters() -> usize {
    WAITERS.load(Ordering::SeqCst)
}

/// Sets `FREE` for the length of a region, then puts it back (also on unwinding).
/// Also counts the regions open in the process, so that `turns_allowed` answers without a
/// thread-local where none is (every point-to-point call of the MPI library asks).
struct FreeUpTo(u32);

/// `unborrowed` regions open now, in every thread.
static REGIONS: AtomicUsize = AtomicUsize::new(0);

impl FreeUpTo {
    fn set(depth: u32) -> FreeUpTo {
        REGIONS.fetch_add(1, Ordering::Relaxed);
        FreeUpTo(FREE.with(|f| f.replace(depth)))
    }
}

impl Drop for FreeUpTo {
    fn drop(&mut self) {
        FREE.with(|f| f.set(self.0));
        REGIONS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs `job`, during which this thread's entry borrows nothing of the state (a library
/// call that exchanges with other processes, calling the library again for it): its waits
/// may take turns with other threads (`turns_allowed`), and a call nested in `job` may
/// `pause` as if it were the outermost, provided every entry below is such a region too.
pub fn unborrowed<R>(job: impl FnOnce() -> R) -> R {
    let depth = DEPTH.with(Cell::get);
    let free = FREE.with(Cell::get);
    let _back = FreeUpTo::set(if depth >= 1 && free + 1 >= depth {
        depth
    } else {
        free
    });
    job()
}

/// Runs `job`, during which this thread's entry borrows the state: no wait inside it takes
/// turns, even within an `unborrowed` region, nor does a call nested in it.
#[inline]
pub fn borrowed<R>(job: impl FnOnce() -> R) -> R {
    struct Back(bool);
    impl Drop for Back {
        #[inline]
        fn drop(&mut self) {
            BORROWING.store(self.0, Ordering::Relaxed);
        }
    }
    // Only the holder writes the flag: a load and a store, not a locked exchange.
    let _back = Back(BORROWING.load(Ordering::Relaxed));
    BORROWING.store(true, Ordering::Relaxed);
    job()
}

/// Whether this thread's waits may take turns with other threads now: it holds an entry,
/// it and every entry below it are in `unborrowed` regions, and none borrows the state.
#[inline]
pub fn turns_allowed() -> bool {
    if REGIONS.load(Ordering::Relaxed) == 0 {
        return false;
    }
    let depth = DEPTH.with(Cell::get);
    depth >= 1 && FREE.with(Cell::get) >= depth && !BORROWING.load(Ordering::Relaxed)
}

/// Lets a waiting thread have the state for a while, then takes it back: for a blocking
/// call that waits on other threads' calls (MPI_THREAD_MULTIPLE). Only from the outermost
/// entry of a thread without a claim (or one whose entries below are `unborrowed`), and only
/// while nothing of the state is borrowed;
/// otherwise (or with nobody waiting) it does nothing and returns false.
pub fn pause() -> bool {
    let me = thread_token();
    let depth = DEPTH.with(Cell::get);
    let outermost = depth >= 1
        && depth <= FREE.with(Cell::get) + 1
        && !BORROWING.load(Ordering::Relaxed)
        && !CLAIMED.try_with(Claim::get).unwrap_or(true);
    if !outermost || HOLDER.load(Ordering::Relaxed) != me || !others_waiting() {
        return false;
    }
    release();
    // Hand over fairly: let a waiter take it before this thread competes again (bounded,
    // in case the waiter gave up meanwhile).
    for _ in 0..1000 {
        let h = HOLDER.load(Ordering::Relaxed);
        if h != 0 && h != me {
            break;
        }
        std::thread::yield_now();
    }
    if !try_take(me) {
        WAITERS.fetch_add(1, Ordering::SeqCst);
        wait_for(me, None);
        WAITERS.fetch_sub(1, Ordering::SeqCst);
    }
    true
}

fn try_take(me: u64) -> bool {
    HOLDER
        .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
        .is_ok()
}

fn wait_for(me: u64, deadline: Option<Instant>) -> bool {
    let mut park = PARK.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        // Checked under PARK: a release between this check and the wait below notifies
        // under PARK too, so the wake-up is not lost.
        if try_take(me) {
            return true;
        }
        // A bounded slice as well: a release that saw no waiter yet still gets noticed.
        let mut slice = Duration::from_millis(10);
        if let Some(d) = deadline {
            let now = Instant::now();
            if now >= d {
                return false;
            }
            slice = slice.min(d - now);
        }
        park = WAKE
            .wait_timeout(park, slice)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

fn release() {
    HOLDER.store(0, Ordering::Release);
    if WAITERS.load(Ordering::SeqCst) > 0 {
        let _park = PARK.lock().unwrap_or_else(|p| p.into_inner());
        WAKE.notify_one();
    }
}
