//! How a collective waits. The message a rank waits for inside a collective is usually on
//! its way (its parent in the tree is one step ahead), so the rank polls first, spinning and
//! then yielding the core, for a bounded time before it falls back to the point-to-point
//! layer's blocking wait (which backs off to sleeping on the doorbell). Sleeping early costs
//! a wake-up per hop, which dominates small collectives when processes share cores.

use std::time::{Duration, Instant};

/// The process's wait hook between two polls (`ibdyn_intercomm::turns`): it may let other
/// threads make their calls meanwhile (MPI_THREAD_MULTIPLE). From `hook(true)`, where the
/// wait would block, it returns whether it waited itself (then the collective polls again
/// instead of blocking in the point-to-point layer).
pub(crate) fn hook(block: bool) -> bool {
    ibdyn_intercomm::turns::wait_hook(block)
}

/// Polls spent spinning before the first yield.
const SPINS: u32 = 32;
/// How long a wait keeps polling (yielding between polls) before it blocks.
const POLL_FOR: Duration = Duration::from_micros(200);

/// The state of one wait.
pub(crate) struct Patience {
    polls: u32,
    since: Option<Instant>,
}

impl Patience {
    pub fn new() -> Patience {
        Patience {
            polls: 0,
            since: None,
        }
    }

    /// Called after a poll that found nothing: spins or yields, and returns false once the
    /// wait should block instead.
    pub fn idle(&mut self) -> bool {
        self.polls = self.polls.saturating_add(1);
        hook(false);
        if self.polls <= SPINS {
            std::hint::spin_loop();
            return true;
        }
        let since = *self.since.get_or_insert_with(Instant::now);
        if self.polls.is_multiple_of(16) && since.elapsed() > POLL_FOR {
            return hook(true);
        }
        std::thread::yield_now();
        true
    }
}

/// Waits for one point-to-point request, polling it first.
pub(crate) fn wait<R: crate::p2p::P2pRequest>(mut req: R) -> crate::error::Result<usize> {
    let mut patience = Patience::new();
    loop {
        if let Some(n) = req.test()? {
            return Ok(n);
        }
        if !patience.idle() {
            return req.wait();
        }
    }
}
