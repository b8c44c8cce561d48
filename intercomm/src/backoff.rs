//! Idle waiting: spin briefly, then yield, then block with a growing timeout, so that
//! oversubscribed ranks (8 on 2 cores) leave the cores to the ranks that have work.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub(crate) enum Step {
    Spin,
    Yield,
    Block(Duration),
}

pub(crate) struct Backoff {
    idle: u32,
    blocks: u64,
    spins: u32,
    /// Block at once, for `PATIENT_BLOCK` at a time (see `Backoff::patient`).
    patient: bool,
    /// When the peers the wait depends on were last checked (or the wait first blocked).
    checked: Option<Instant>,
    /// When the wait began blocking without progress since.
    blocking_since: Option<Instant>,
}

/// Blocks between two liveness checks of the peers a wait depends on ...
const LIVENESS_EVERY: u64 = 64;
/// ... or this much time, whichever comes first (blocks may be long: `IBDYN_IDLE_BLOCK_MS`).
pub(crate) const LIVENESS_PERIOD: Duration = Duration::from_secs(1);

/// Progress passes to spin before yielding when every process has a core of its own: about
/// 20 us, far longer than a reply over shared memory takes, and short enough that two ranks
/// squeezed onto one core by other load hand it over quickly.
pub(crate) const SPINS_DEDICATED: u32 = 256;
/// ... and when processes share cores: the peer we wait for needs our core to make progress.
pub(crate) const SPINS_SHARED: u32 = 16;
const YIELDS: u32 = 64;
/// Longest single block while a wait has blocked for less than `DEEPEN_AFTER`: an idle
/// process wakes at most ~50 times a second at first; senders wake it sooner through the
/// doorbell (or the bell of a process that sleeps in the fabric's poll).
pub(crate) const SHALLOW_BLOCK: Duration = Duration::from_millis(20);
/// After this long blocked without progress a wait's blocks grow up to `max_block()`: a
/// thousand idle workers waking 50 times a second each took the cores from their master.
/// Deep blocks are only taken where every event the wait needs ends them (`Engine::block`);
/// what nothing signals (liveness of peers, room in a full queue) keeps its own period. A
/// quarter of a second, not a second: a master spawning workers one by one had the last
/// second's new workers (hundreds) each waking 50 times a second, which took a fifth of its
/// spawning time. A message to a process asleep that long costs its sender a bell rather
/// than a futex wake.
const DEEPEN_AFTER: Duration = Duration::from_millis(250);
/// Longest single block by default, once deep.
const MAX_BLOCK: Duration = Duration::from_millis(200);
/// What changes it, in milliseconds: larger means fewer wake-ups of idle processes, and later
/// deadlines of a long wait. Values below `SHALLOW_BLOCK` bound every block.
const MAX_BLOCK_ENV: &str = "IBDYN_IDLE_BLOCK_MS";
const MAX_BLOCK_RANGE: std::ops::RangeInclusive<u64> = 1..=60_000;

/// The longest block of this process (`MAX_BLOCK`, or `IBDYN_IDLE_BLOCK_MS`).
fn max_block() -> Duration {
    static MAX: OnceLock<Duration> = OnceLock::new();
    *MAX.get_or_init(|| parse_max_block(std::env::var(MAX_BLOCK_ENV).ok().as_deref()))
}

/// The longest block of a wait that has blocked for `blocked` without progress.
fn bound(blocked: Duration, max: Duration) -> Duration {
    if blocked >= DEEPEN_AFTER {
        max
    } else {
        max.min(SHALLOW_BLOCK)
    }
}

fn parse_max_block(v: Option<&str>) -> Duration {
    match v.map(|v| v.trim().parse::<u64>()) {
        None => MAX_BLOCK,
        Some(Ok(ms)) if MAX_BLOCK_RANGE.contains(&ms) => Duration::from_millis(ms),
        Some(_) => {
            tracing::warn!(
                "{MAX_BLOCK_ENV}={:?} is not a count of milliseconds in {}..={}: using {} ms",
                v.unwrap_or_default(),
                MAX_BLOCK_RANGE.start(),
                MAX_BLOCK_RANGE.end(),
                MAX_BLOCK.as_millis()
            );
            MAX_BLOCK
        }
    }
}
/// A patient wait's first block, doubled at each further block up to the deep bound at once:
/// senders ring the doorbell, so this bounds only how late the fabric and liveness checks
/// run. Growing matters when hundreds of processes wait at once (a master disconnecting from
/// 500 spawned children one after the other): at a fixed 1 ms their wake-ups took both cores.
const PATIENT_BLOCK: Duration = Duration::from_millis(1);

/// How long a wait for room that the receiver signals may sleep, where the wait would block
/// for `t`: the deep bound at once, as the receiver wakes as many waiters as it frees cells
/// (2000 senders timing out every 20 ms took the cores from the receiver they waited for).
pub(crate) fn room_sleep(t: Duration) -> Duration {
    t.max(max_block())
}

/// First block of a wait while packets wait for room in a full peer queue where room is not
/// signalled (no `futex_waitv`, or a process that sleeps in the fabric's poll): the wait
/// must look again.
const ROOM_RETRY: Duration = Duration::from_micros(50);
/// ... doubled at each block while no backlog packet got out, up to 50 us x 2^9 (beyond
/// `SHALLOW_BLOCK`). A fixed 50 us made hundreds of senders to one busy receiver (500 children
/// disconnecting from their master) wake 20,000 times a second each, which took the cores from
/// the receiver that would have made room.
const ROOM_DOUBLINGS: u32 = 9;

/// The longest block of a wait whose backlog has not moved for `waits` blocks.
pub(crate) fn room_retry(waits: u32) -> Duration {
    ROOM_RETRY * (1 << waits.min(ROOM_DOUBLINGS))
}

impl Backoff {
    pub fn new(spins: u32) -> Backoff {
        Backoff {
            idle: 0,
            blocks: 0,
            spins,
            patient: false,
            checked: None,
            blocking_since: None,
        }
    }

    /// For waits on another process that is expected to take milliseconds (a disconnect
    /// waiting for the other side): no spinning or yielding, which on a full machine would
    /// only take cores from the processes being waited for.
    pub fn patient() -> Backoff {
        Backoff {
            patient: true,
            ..Backoff::new(0)
        }
    }

    pub fn reset(&mut self) {
        self.idle = 0;
        self.blocking_since = None;
    }

    /// The longest block now (shallow until the wait has blocked `DEEPEN_AFTER`).
    fn block_bound(&mut self) -> Duration {
        let since = *self.blocking_since.get_or_insert_with(Instant::now);
        bound(since.elapsed(), max_block())
    }

    pub fn step(&mut self) -> Step {
        self.idle = self.idle.saturating_add(1);
        if self.patient {
            self.blocks += 1;
            let n = (self.idle - 1).min(16);
            // Not shallow at first: the other side's message rings, and deep blocks are
            // the better signalled. Thousands of workers disconnecting from their master one
            // after the other each woke 50 times a second and took the cores from it.
            return Step::Block((PATIENT_BLOCK * (1 << n)).min(max_block()));
        }
        if self.idle <= self.spins {
            Step::Spin
        } else if self.idle <= self.spins + YIELDS {
            Step::Yield
        } else {
            self.blocks += 1;
            let n = (self.idle - self.spins - YIELDS).min(26);
            Step::Block((Duration::from_micros(1) * (1 << n)).min(self.block_bound()))
        }
    }

    /// How many times this wait has blocked.
    #[cfg(test)]
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Called after each block: whether to check the peers the wait depends on now (every
    /// `LIVENESS_EVERY` blocks, and at least every `LIVENESS_PERIOD` of blocking).
    pub fn liveness_due(&mut self) -> bool {
        let now = Instant::now();
        let checked = *self.checked.get_or_insert(now);
        let due = self.blocks.is_multiple_of(LIVENESS_EVERY)
            || now.duration_since(checked) >= LIVENESS_PERIOD;
        if due {
            self.checked = Some(now);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eager_wait_spins_then_yields_then_blocks_longer_each_time() {
        let mut b = Backoff::new(2);
        assert!(matches!(b.step(), Step::Spin));
        assert!(matches!(b.step(), Step::Spin));
        for _ in 0..YIELDS {
            assert!(matches!(b.step(), Step::Yield));
        }
        let Step::Block(first) = b.step() else {
            panic!("a block after the yields")
        };
        let Step::Block(second) = b.step() else {
            panic!("still blocking")
        };
        assert!(second > first);
        assert_eq!(b.blocks(), 2);
        b.reset();
        assert!(matches!(b.step(), Step::Spin));
    }

    #[test]
    fn peers_are_checked_every_so_many_blocks_and_after_a_long_time_blocked() {
        let mut b = Backoff::patient();
        // Counting alone first: with the last check set ahead, no time has passed since.
        let ahead = Instant::now() + Duration::from_secs(3600);
        let due: Vec<u64> = (1..=3 * LIVENESS_EVERY)
            .filter(|_| {
                b.step();
                b.checked = Some(ahead);
                b.liveness_due()
            })
            .collect();
        assert_eq!(
            due,
            [LIVENESS_EVERY, 2 * LIVENESS_EVERY, 3 * LIVENESS_EVERY]
        );
        // Long blocks: the time since the last check decides.
        b.step();
        b.checked = Some(Instant::now() - LIVENESS_PERIOD);
        assert!(b.liveness_due());
        b.step();
        assert!(!b.liveness_due(), "checked just now");
    }

    #[test]
    fn the_longest_block_is_changed_by_a_count_of_milliseconds_in_range_only() {
        assert_eq!(parse_max_block(None), MAX_BLOCK);
        assert_eq!(parse_max_block(Some(" 500 ")), Duration::from_millis(500));
        assert_eq!(parse_max_block(Some("60000")), Duration::from_secs(60));
        for bad in ["", "0", "60001", "-5", "2ms", "1.5"] {
            assert_eq!(parse_max_block(Some(bad)), MAX_BLOCK, "{bad:?}");
        }
    }

    #[test]
    fn a_wait_for_room_looks_again_soon_then_less_often_unless_room_is_signalled() {
        // Signalled: the deep bound from the first sleep, or longer if the wait asks so.
        assert_eq!(room_sleep(Duration::ZERO), max_block());
        assert_eq!(room_sleep(Duration::from_secs(90)), Duration::from_secs(90));
        assert_eq!(room_retry(0), ROOM_RETRY);
        assert_eq!(room_retry(1), ROOM_RETRY * 2);
        assert!(room_retry(ROOM_DOUBLINGS) >= SHALLOW_BLOCK);
        assert_eq!(room_retry(u32::MAX), room_retry(ROOM_DOUBLINGS));
    }

    #[test]
    fn a_patient_wait_blocks_at_once_longer_each_time_up_to_the_bound() {
        let mut b = Backoff::patient();
        let mut last = Duration::ZERO;
        for n in 1..=10 {
            let Step::Block(t) = b.step() else {
                panic!("a patient wait only blocks")
            };
            assert_eq!(b.blocks(), n);
            if n == 1 {
                assert_eq!(t, PATIENT_BLOCK);
            }
            assert!(t >= last && t <= max_block());
            last = t;
        }
        assert_eq!(last, max_block(), "deep within the wait's first ten blocks");
        b.reset();
        assert!(matches!(b.step(), Step::Block(t) if t == PATIENT_BLOCK));
    }

    #[test]
    fn blocks_stay_shallow_for_a_quarter_second_blocked_then_may_grow_to_the_longest() {
        let max = Duration::from_millis(200);
        assert_eq!(bound(Duration::ZERO, max), SHALLOW_BLOCK);
        assert_eq!(
            bound(DEEPEN_AFTER - Duration::from_millis(1), max),
            SHALLOW_BLOCK
        );
        assert_eq!(bound(DEEPEN_AFTER, max), max);
        let small = Duration::from_millis(5);
        assert_eq!(
            bound(Duration::ZERO, small),
            small,
            "a smaller longest block bounds all"
        );
        assert_eq!(bound(DEEPEN_AFTER * 10, small), small);
    }

    #[test]
    fn a_wait_blocked_a_quarter_second_blocks_longer_until_it_progresses() {
        {
            let mut b = Backoff::new(0);
            let last = (0..100).map(|_| b.step()).last();
            assert!(matches!(last, Some(Step::Block(t)) if t == SHALLOW_BLOCK));
            b.blocking_since = Some(Instant::now() - DEEPEN_AFTER);
            let Step::Block(deep) = b.step() else {
                panic!("still blocking")
            };
            assert_eq!(deep, max_block());
            b.reset();
            for _ in 0..100 {
                assert!(!matches!(b.step(), Step::Block(t) if t > SHALLOW_BLOCK));
            }
        }
    }
}
