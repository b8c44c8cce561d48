//! Futex on a word of a shared mapping (not FUTEX_PRIVATE: waiter and waker are different processes).

use std::sync::atomic::AtomicU32;
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
    // SAFETY: as above; FUTEX_WAKE does not dereference anything but the futex key.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}
