//! Futexes on words of a shared mapping (not FUTEX_PRIVATE: waiter and waker are different
//! processes).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

/// Blocks while `*word == expected`, at most `timeout`. Spurious returns are fine for callers.
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a valid, aligned u32 in a mapping that outlives the call; the kernel
    // only reads it. The timeout pointer is to a live local.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

/// Wakes every waiter on `word`.
pub(crate) fn futex_wake(word: &AtomicU32) {
    futex_wake_some(word, i32::MAX);
}

/// Wakes at most `n` waiters on `word` (the kernel wakes them in the order they slept).
pub(crate) fn futex_wake_some(word: &AtomicU32, n: i32) {
    // SAFETY: as above; FUTEX_WAKE does not dereference anything but the futex key.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n);
    }
}

/// `struct futex_waitv` of the kernel's futex2 interface.
#[repr(C)]
struct WaitV {
    val: u64,
    uaddr: u64,
    flags: u32,
    reserved: u32,
}

/// `FUTEX2_SIZE_U32`: a 32-bit futex, shared between processes (no private flag).
const FUTEX2_SIZE_U32: u32 = 0x02;

/// Set once `futex_waitv` failed other than as a wait can: it is not asked again.
static NO_WAITV: AtomicBool = AtomicBool::new(false);

/// Blocks while `a.0 == a.1` and `b.0 == b.1`, until a wake on either word or `timeout`.
/// False if the kernel has no `futex_waitv`: the caller must wait another way.
pub(crate) fn futex_wait_either(
    a: (&AtomicU32, u32),
    b: (&AtomicU32, u32),
    timeout: Duration,
) -> bool {
    if NO_WAITV.load(Ordering::Relaxed) {
        return false;
    }
    let entry = |(w, v): (&AtomicU32, u32)| WaitV {
        val: u64::from(v),
        uaddr: w.as_ptr() as u64,
        flags: FUTEX2_SIZE_U32,
        reserved: 0,
    };
    let waiters = [entry(a), entry(b)];
    // The timeout is absolute, on the monotonic clock.
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let end = Duration::new(now.tv_sec as u64, now.tv_nsec as u32).saturating_add(timeout);
    let ts = libc::timespec {
        tv_sec: end.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: end.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `waiters` holds two initialised entries whose addresses are aligned u32s of
    // mappings that outlive the call; the kernel only reads them and the timespec, a live local.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            waiters.as_ptr(),
            waiters.len() as libc::c_uint,
            0 as libc::c_uint,
            &ts as *const libc::timespec,
            libc::CLOCK_MONOTONIC,
        )
    };
    if r >= 0 {
        return true;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        // A word had changed already, the timeout passed, or a signal came: a wait as asked.
        Some(libc::EAGAIN | libc::ETIMEDOUT | libc::EINTR) => true,
        // No futex_waitv (before Linux 5.16), or a filter refuses it: never ask again.
        _ => {
            NO_WAITV.store(true, Ordering::Relaxed);
            false
        }
    }
}
