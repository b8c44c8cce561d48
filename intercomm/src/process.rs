//! The runtime of this process shared by everything that initialised it: `Universe::init`
//! (MPI_Init) and any number of sessions (MPI_Session_init). The engine is made by the first
//! holder and kept while any holder is left; the process's teardown with the process manager
//! runs when the universe finalises with no session left, or when the last session
//! finalises after the universe has. Every init is numbered (its epoch); context ids in use
//! are counted here so that a communicator made from a group can refuse an id that is taken.

use crate::engine::Engine;
use crate::error::{CommError, Result};
use crate::gpid::Gpid;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

/// How long the members of a communicator made from a group wait for each other by default.
pub const DEFAULT_GROUP_TIMEOUT: Duration = Duration::from_secs(30);

struct Shared {
    eng: Rc<RefCell<Engine>>,
    sessions: usize,
    universe: bool,
    /// The universe of this process has finalised: PMI can not be joined again.
    universe_finalized: bool,
}

#[derive(Default)]
struct State {
    shared: Option<Shared>,
    /// Inits of this process so far (universe and sessions); the current one's number is
    /// its epoch.
    inits: u64,
    /// Live communicators per on-wire context id.
    contexts: HashMap<u64, usize>,
    /// Communicators made from each (sorted members, tag) so far, for ever in this process
    /// (so a re-initialised session never reuses an id).
    group_seqs: HashMap<(Vec<Gpid>, String), u64>,
    group_timeout: Option<Duration>,
}

ibdyn_owner::process_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

/// Who holds the runtime.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Holder {
    Universe,
    Session,
}

/// The engine of this process for a new holder, made by `make` if none is live, and the
/// holder's init epoch (1 for the first init of the process).
pub(crate) fn acquire(
    who: Holder,
    make: impl FnOnce() -> Result<Rc<RefCell<Engine>>>,
) -> Result<(Rc<RefCell<Engine>>, u64)> {
    if !ibdyn_owner::claim() {
        return Err(CommError::InvalidArgument(
            "another thread of this process runs the ibdyn runtime: start and use it from \
             that thread"
                .into(),
        ));
    }
    let existing = with(|s| {
        s.shared
            .as_ref()
            .map(|sh| (sh.eng.clone(), sh.universe_finalized))
    });
    let eng = match existing {
        Some((_, true)) => {
            return Err(CommError::InvalidArgument(
                "this process has finalised its universe (MPI_Finalize) while a session was \
                 still open: finalise every session before initialising again"
                    .into(),
            ))
        }
        Some((eng, false)) => eng,
        None => {
            let eng = make()?;
            with(|s| {
                s.shared = Some(Shared {
                    eng: eng.clone(),
                    sessions: 0,
                    universe: false,
                    universe_finalized: false,
                })
            });
            eng
        }
    };
    Ok(with(|s| {
        let sh = s.shared.as_mut().expect("set above");
        match who {
            Holder::Universe => sh.universe = true,
            Holder::Session => sh.sessions += 1,
        }
        s.inits += 1;
        (eng, s.inits)
    }))
}

/// Whether an engine is live in this process (a universe or a session holds it).
pub fn is_live() -> bool {
    with(|s| s.shared.is_some())
}

/// The live engine of this process, if any.
pub(crate) fn engine() -> Option<Rc<RefCell<Engine>>> {
    with(|s| s.shared.as_ref().map(|sh| sh.eng.clone()))
}

/// Blocks in this process's engine until something arrives (a packet, a connection request)
/// or `t` passes: for a wait that tests its requests from outside the engine. Nothing
/// without a live engine.
pub fn idle_for(t: Duration) {
    if let Some(eng) = engine() {
        if let Ok(mut e) = eng.try_borrow_mut() {
            e.block_outside(t);
        }
    }
}

/// One progress pass of this process's engine, unless a call further up the stack is using
/// it (and progresses it itself): for waits outside the engine that must not stall the
/// services (`crate::service`) of this process.
pub fn poll() {
    if let Some(eng) = engine() {
        if let Ok(mut e) = eng.try_borrow_mut() {
            if let Err(e) = e.progress() {
                tracing::debug!("progress: {e}");
            }
        }
    }
}

/// Runs `f` with the process-management client of this process's live runtime (for the
/// Sessions layer, which holds no communicator).
pub fn with_pmi<R>(f: impl FnOnce(&mut ibdyn_pmi::PmiClient) -> R) -> Result<R> {
    let eng = engine().ok_or(CommError::NotInitialized)?;
    let mut e = eng.borrow_mut();
    Ok(f(e.pmi()))
}

/// What the releasing holder must do with the process manager.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Release {
    /// Others still hold the runtime: nothing.
    Keep,
    /// Only sessions held it and none is left: the engine stays connected (parked) so that a
    /// new session can start; the process manager is left at exit.
    Park,
    /// The last holder of a process that ran MPI_Init: leave the process manager now.
    Teardown,
}

/// Releases a holder's claim.
pub(crate) fn release(who: Holder) -> Release {
    with(|s| {
        let Some(sh) = s.shared.as_mut() else {
            return Release::Keep;
        };
        match who {
            Holder::Universe => {
                sh.universe = false;
                sh.universe_finalized = true;
            }
            Holder::Session => sh.sessions = sh.sessions.saturating_sub(1),
        }
        if sh.sessions > 0 || sh.universe {
            Release::Keep
        } else if sh.universe_finalized {
            s.shared = None;
            Release::Teardown
        } else {
            leave_at_exit();
            Release::Park
        }
    })
}

/// Has a parked runtime leave the process manager when the process exits (once per
/// process): without meeting the others, who may have left already.
fn leave_at_exit() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: registers a plain function with no arguments, run once by exit().
        if unsafe { libc::atexit(leave_if_parked) } != 0 {
            tracing::debug!(
                "could not register the exit hook: a parked runtime will not say goodbye"
            );
        }
    });
}

extern "C" fn leave_if_parked() {
    // The thread that exits may not own the state: wait a moment for it (a thread inside
    // another MPI call keeps it; then the process manager sees this process leave unannounced).
    let _entry = if ibdyn_owner::holds() {
        None
    } else {
        match ibdyn_owner::enter_within(Duration::from_secs(1)) {
            Some(e) => Some(e),
            None => return,
        }
    };
    let parked = |sh: &Shared| !sh.universe && sh.sessions == 0;
    let shared = STATE
        .try_with(|s| s.try_borrow_mut().ok().and_then(|mut s| s.shared.take()))
        .ok()
        .flatten();
    if let Some(sh) = shared.filter(parked) {
        if let Err(e) = crate::universe::leave(&sh.eng, false) {
            tracing::debug!("leaving the process manager at exit: {e}");
        }
    }
}

/// Counts a communicator using `ctx`.
pub(crate) fn context_in_use(ctx: u64) {
    with(|s| *s.contexts.entry(ctx).or_default() += 1);
}

/// A communicator using `ctx` is gone.
pub(crate) fn context_released(ctx: u64) {
    // try_with: a communicator dropped where the state is out of reach changes no count.
    let _ = STATE.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            if let Some(n) = s.contexts.get_mut(&ctx) {
                *n -= 1;
                if *n == 0 {
                    s.contexts.remove(&ctx);
                }
            }
        }
    });
}

/// Whether a live communicator of this process uses `ctx`.
pub(crate) fn context_taken(ctx: u64) -> bool {
    with(|s| s.contexts.contains_key(&ctx))
}

/// The next sequence number of a communicator made from `members` (sorted) with `tag`.
pub(crate) fn next_group_seq(members: Vec<Gpid>, tag: &str) -> u64 {
    with(|s| {
        let n = s.group_seqs.entry((members, tag.to_string())).or_default();
        *n += 1;
        *n - 1
    })
}

/// Sets how long communicator creation from groups waits for the other members.
pub fn set_group_timeout(t: Duration) {
    with(|s| s.group_timeout = Some(t));
}

pub(crate) fn group_timeout() -> Duration {
    with(|s| s.group_timeout.unwrap_or(DEFAULT_GROUP_TIMEOUT))
}

/// The epoch of the latest init of this process (0 before any).
pub fn current_epoch() -> u64 {
    with(|s| s.inits)
}

/// What a new session learns about its process.
pub struct SessionStart {
    /// This process.
    pub me: Gpid,
    /// The size of its job (`mpi://WORLD`).
    pub world_size: u32,
    /// This init's epoch.
    pub epoch: u64,
    /// The launcher's process-set definitions (the job-level PMI key `PSETS_KEY`), if any.
    pub pset_defs: Option<String>,
}

/// The job-level PMI key under which a launcher defines process sets:
/// `NAME=RANKS[;NAME=RANKS...]`, RANKS a comma-separated list of ranks and `a-b` ranges.
pub use ibdyn_pmi::psets::PSETS_KEY;

/// Starts a session: joins (or opens) the runtime of this process.
pub fn session_acquire() -> Result<SessionStart> {
    let (eng, epoch) = acquire(Holder::Session, crate::universe::new_engine)?;
    let start = (|| {
        let mut e = eng.borrow_mut();
        e.pmi().finish_startup()?;
        e.retune_spins();
        let me = e.me();
        let pmi = e.pmi();
        let world_size = pmi.size();
        let pset_defs = match pmi.get(PSETS_KEY) {
            Ok(v) => Some(v),
            Err(ibdyn_pmi::PmiError::KeyNotFound(_)) => None,
            Err(err) => return Err(CommError::from(err)),
        };
        Ok(SessionStart {
            me,
            world_size,
            epoch,
            pset_defs,
        })
    })();
    if start.is_err() {
        let _ = session_release();
    }
    start
}

/// Ends a session: waits (bounded) for its queued messages to leave and gives up its claim
/// on the runtime (the last holder of a finalised universe leaves the process manager).
pub fn session_release() -> Result<()> {
    let Some(eng) = engine() else {
        return Ok(());
    };
    let flushed = crate::universe::flush(&eng);
    let left = match release(Holder::Session) {
        Release::Keep | Release::Park => Ok(()),
        Release::Teardown => crate::universe::leave(&eng, true),
    };
    flushed.and(left)
}
