//! A hook the runtime installs so that blocking waits for the process manager keep the rest
//! of the process alive: while a fence, a `get_wait` or a spawn waits for its reply, the hook
//! runs every `SLICE` (the fabric answers connection requests from it), so a peer that
//! connects to this process never waits for its next communication call.
//!
//! Per thread, like the runtime that installs it. The hook must not call the PMI client.

use std::cell::{Cell, RefCell};
use std::time::Duration;

/// How long a wait for the server first blocks between two runs of the hook.
pub(crate) const SLICE: Duration = Duration::from_millis(1);
/// Longest slice `set_idle_slice` allows.
const MAX_SLICE: Duration = Duration::from_millis(20);

type Hook = Box<dyn FnMut()>;

thread_local! {
    static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
    static LONGEST: Cell<Duration> = const { Cell::new(SLICE) };
}

/// Lets a long wait's slices grow (doubling from `SLICE` while the server says nothing) up to
/// `longest`, clamped to 1-20 ms. For processes that share cores: 256 ranks each waking every
/// millisecond in a fence keep 2 cores busy, and the fence (whose length grows with N) then
/// costs N^2. The runtime sets it from its ranks per core; default 1 ms (no growth).
pub fn set_idle_slice(longest: Duration) {
    let _ = LONGEST.try_with(|l| l.set(longest.clamp(SLICE, MAX_SLICE)));
}

/// The next slice after `slice` passed without a reply.
pub(crate) fn next_slice(slice: Duration) -> Duration {
    let longest = LONGEST.try_with(Cell::get).unwrap_or(SLICE);
    (slice * 2).min(longest)
}

/// Installs (or with `None` removes) this thread's hook for blocking waits.
pub fn set_idle_hook(hook: Option<Hook>) {
    // try_with: the hook may be removed while the thread's locals are being destroyed.
    let _ = HOOK.try_with(|h| {
        if let Ok(mut h) = h.try_borrow_mut() {
            *h = hook;
        }
    });
}

/// Runs the hook if one is installed; returns whether one is (a nested call from inside the
/// hook finds none).
pub(crate) fn run() -> bool {
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
