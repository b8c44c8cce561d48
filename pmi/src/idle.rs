//! A hook the runtime installs so that blocking waits for the process manager keep the rest
//! of the process alive: while a fence, a `get_wait` or a spawn waits for its reply, the hook
//! runs every `SLICE` (the fabric answers connection requests from it), so a peer that
//! connects to this process never waits for its next communication call.
//!
//! Process-wide, like the runtime that installs it: only the thread that owns the runtime's
//! state (`ibdyn_owner`) runs it; a wait in any other thread runs without it. The hook must
//! not call the PMI client.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long a wait for the server first blocks between two runs of the hook.
pub(crate) const SLICE: Duration = Duration::from_millis(1);
/// Longest slice `set_idle_slice` allows.
const MAX_SLICE: Duration = Duration::from_millis(20);

type Hook = Box<dyn FnMut()>;

ibdyn_owner::process_local! {
    static HOOK: RefCell<Option<Hook>> = RefCell::new(None);
}

/// The longest slice, in microseconds.
static LONGEST_US: AtomicU64 = AtomicU64::new(SLICE.as_micros() as u64);

/// Lets a long wait's slices grow (doubling from `SLICE` while the server says nothing) up to
/// `longest`, clamped to 1-20 ms. For processes that share cores: 256 ranks each waking every
/// millisecond in a fence keep 2 cores busy, and the fence (whose length grows with N) then
/// costs N^2. The runtime sets it from its ranks per core; default 1 ms (no growth).
pub fn set_idle_slice(longest: Duration) {
    let us = longest.clamp(SLICE, MAX_SLICE).as_micros() as u64;
    LONGEST_US.store(us, Ordering::Relaxed);
}

/// The next slice after `slice` passed without a reply.
pub(crate) fn next_slice(slice: Duration) -> Duration {
    let longest = Duration::from_micros(LONGEST_US.load(Ordering::Relaxed));
    (slice * 2).min(longest)
}

/// Installs (or with `None` removes) the process's hook for blocking waits; nothing from a
/// thread that does not own the runtime's state.
pub fn set_idle_hook(hook: Option<Hook>) {
    let _ = HOOK.try_with(|h| {
        if let Ok(mut h) = h.try_borrow_mut() {
            *h = hook;
        }
    });
}

/// Runs the hook if one is installed and this thread owns the runtime's state; returns
/// whether it ran (a nested call from inside the hook finds none).
pub(crate) fn run() -> bool {
    if !ibdyn_owner::holds() {
        return false;
    }
    let Some(mut hook) = HOOK
        .try_with(|h| h.try_borrow_mut().ok()?.take())
        .ok()
        .flatten()
    else {
        return false;
    };
    hook();
    set_back(hook);
    true
}

fn set_back(hook: Hook) {
    let _ = HOOK.try_with(|h| {
        if let Ok(mut h) = h.try_borrow_mut() {
            // The hook may have replaced itself (it must not, but then keep the newer one).
            if h.is_none() {
                *h = Some(hook);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn the_hook_runs_until_removed_and_not_inside_itself() {
        let _owner = ibdyn_owner::enter();
        let n = Rc::new(std::cell::Cell::new(0));
        let m = n.clone();
        set_idle_hook(Some(Box::new(move || {
            m.set(m.get() + 1);
            assert!(!run(), "a nested wait must not run the hook again");
        })));
        assert!(run());
        assert!(run());
        assert_eq!(n.get(), 2);
        set_idle_hook(None);
        assert!(!run());
        assert_eq!(n.get(), 2);
    }

    #[test]
    fn slices_grow_only_up_to_the_longest_set() {
        assert_eq!(next_slice(SLICE), SLICE, "no growth by default");
        set_idle_slice(Duration::from_millis(8));
        let mut s = SLICE;
        let seen: Vec<u128> = (0..5)
            .map(|_| {
                s = next_slice(s);
                s.as_millis()
            })
            .collect();
        assert_eq!(seen, [2, 4, 8, 8, 8]);
        set_idle_slice(Duration::from_secs(5));
        assert_eq!(next_slice(Duration::from_millis(16)), MAX_SLICE);
        set_idle_slice(Duration::ZERO);
        assert_eq!(next_slice(SLICE), SLICE);
    }
}
