//! The library's state in this process: the runtime, the communicator and request tables, and
//! the translation between C handles and table indices.
//!
//! The state is the process's, reachable only from the thread that owns the runtime
//! (`ibdyn_owner`; see `threads` for the levels): the thread that called MPI_Init, or at
//! MPI_THREAD_SERIALIZED whichever thread is inside an MPI call. Up to FUNNELED the hot
//! path takes no lock. It is never dropped implicitly: a program that exits without
//! MPI_Finalize does not run a finalisation that would wait for the other processes.

use crate::consts::*;
use crate::error::{err, ErrHandler, MpiError, MpiResult};
use crate::request::ReqEntry;
use crate::table::Table;
use ibdyn::traits::*;
use ibdyn::{InterCommunicator, IntraCommunicator};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU8, Ordering};

/// User communicator handles are this plus the table index (never in 1..4095, never 0).
const COMM_BASE: Handle = 0x1000_0000;
/// User request handles are this plus the table index.
const REQ_BASE: Handle = 0x2000_0000;
/// Matched-message handles (MPI_Mprobe) are this plus the table index.
const MESSAGE_BASE: Handle = 0x6000_0000;

/// Where this process is in its MPI life; readable from any thread (MPI_Initialized and
/// MPI_Finalized may be called at any time).
static PHASE: AtomicU8 = AtomicU8::new(Phase::Before as u8);

#[derive(Copy, Clone, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Before = 0,
    Running = 1,
    Finalized = 2,
}

pub fn phase() -> Phase {
    match PHASE.load(Ordering::Acquire) {
        0 => Phase::Before,
        1 => Phase::Running,
        _ => Phase::Finalized,
    }
}

fn set_phase(p: Phase) {
    PHASE.store(p as u8, Ordering::Release);
}

/// A communicator of either kind.
#[derive(Clone)]
pub enum Comm {
    Intra(IntraCommunicator),
    Inter(InterCommunicator),
}

impl Comm {
    pub fn raw(&self) -> &ibdyn_intercomm::Communicator {
        match self {
            Comm::Intra(c) => c.as_raw(),
            Comm::Inter(c) => c.as_raw(),
        }
    }

    pub fn intra(&self, what: &str) -> MpiResult<&IntraCommunicator> {
        match self {
            Comm::Intra(c) => Ok(c),
            Comm::Inter(_) => err(
                MPI_ERR_COMM,
                format!("{what} needs an intracommunicator; this one is an intercommunicator"),
            ),
        }
    }

    pub fn inter(&self, what: &str) -> MpiResult<&InterCommunicator> {
        match self {
            Comm::Inter(c) => Ok(c),
            Comm::Intra(_) => err(
                MPI_ERR_COMM,
                format!("{what} needs an intercommunicator; this one is an intracommunicator"),
            ),
        }
    }
}

pub struct CommEntry {
    pub comm: Comm,
    pub errhandler: ErrHandler,
    /// MPI_Comm_set_name's name.
    pub name: String,
    /// User attributes: (keyval, attribute value).
    pub attrs: Vec<(std::os::raw::c_int, usize)>,
    /// The process topology attached (MPI_Cart_create, MPI_Graph_create, ...), if any.
    pub topo: Option<crate::topology::Topology>,
}

impl CommEntry {
    pub fn new(comm: Comm, errhandler: ErrHandler, name: &str) -> CommEntry {
        CommEntry {
            comm,
            errhandler,
            name: name.to_string(),
            attrs: Vec::new(),
            topo: None,
        }
    }
}

/// The parent communicator's handle (MPI_Comm_get_parent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parent {
    /// Not asked for yet: made at the first MPI_Comm_get_parent.
    Unmade,
    Made(Handle),
    /// Freed or disconnected: MPI_COMM_NULL from then on (MPI 4.1 section 11.8.2).
    Gone,
}

pub struct State {
    pub comms: Table<CommEntry>,
    pub reqs: Table<ReqEntry>,
    /// The non-blocking collectives in flight among `reqs`.
    pub colls: crate::in_flight::InFlight,
    /// The handle MPI_Comm_get_parent returns.
    pub parent: Parent,
    pub thread_level: std::os::raw::c_int,
    /// The buffers of buffered sends and the sends in flight.
    pub bsend: crate::bsend::Buffers,
    /// Messages MPI_Mprobe took out of matching: (communicator index, message).
    messages: Table<(usize, ibdyn_intercomm::Message)>,
    /// Groups, info objects, attribute keys and open ports of this process.
    pub objects: crate::objects::Objects,
    /// Open sessions (MPI_Session_init) and their error handlers.
    pub sessions: Table<(ibdyn::Session, ErrHandler)>,
    universe: Option<ibdyn::Universe>,
}

ibdyn_owner::process_local! {
    static STATE: RefCell<Option<State>> = RefCell::new(None);
}

/// Runs `f` on the cell of the state; an error on a thread that does not own it.
fn cell<R>(f: impl FnOnce(&RefCell<Option<State>>) -> MpiResult<R>) -> MpiResult<R> {
    owned(&STATE, f)
}

/// Runs `f` on the state of this process; an error if MPI is not running or this thread may
/// not call it now. A job `f` leaves with `after_state` runs once the state is released.
pub fn with_state<R>(f: impl FnOnce(&mut State) -> MpiResult<R>) -> MpiResult<R> {
    let r = cell(|cell| {
        let Ok(mut guard) = cell.try_borrow_mut() else {
            return err(MPI_ERR_INTERN, "MPI re-entered from inside an MPI call");
        };
        match guard.as_mut() {
            // No wait inside takes turns with other threads, which would find it borrowed
            // (below MPI_THREAD_SERIALIZED no other thread calls MPI).
            Some(s) if crate::threads::entries() => ibdyn_owner::borrowed(|| f(s)),
            Some(s) => f(s),
            None => Err(not_running()),
        }
    });
    let later = LATER.with(Cell::take);
    let r = r?;
    if let Some(job) = later {
        crate::threads::yielding(job)?;
    }
    Ok(r)
}

/// A call that communicates to make an object (a communicator, a window, a file): `pick`
/// takes what it needs from the state, `work` exchanges with the state released, and `store`
/// records the outcome. At MPI_THREAD_MULTIPLE the waits of `work` let other threads' calls
/// in (`threads::yielding`): two threads making objects on different communicators must not
/// hold each other up across processes that run the two calls in different orders.
pub fn staged<A, B, R>(
    pick: impl FnOnce(&mut State) -> MpiResult<A>,
    work: impl FnOnce(A) -> MpiResult<B>,
    store: impl FnOnce(&mut State, B) -> MpiResult<R>,
) -> MpiResult<R> {
    let a = with_state(pick)?;
    let b = crate::threads::yielding(|| work(a))?;
    with_state(|s| store(s, b))
}

type Job = Box<dyn FnOnce() -> MpiResult<()>>;

thread_local! {
    static LATER: Cell<Option<Job>> = const { Cell::new(None) };
}

/// Leaves `job` (a blocking collective at MPI_THREAD_MULTIPLE) to the `with_state` call
/// this runs inside, which runs it once it has released the state and before it returns:
/// so the job's waits may let other threads' calls in (`threads::yielding`).
///
/// # Safety
/// Called inside the closure of `with_state`; `job` borrows nothing that ends before that
/// `with_state` call returns.
pub unsafe fn after_state<'a>(job: Box<dyn FnOnce() -> MpiResult<()> + 'a>) {
    // SAFETY: the caller's contract: the job runs before anything it borrows ends.
    let job: Job = unsafe { std::mem::transmute(job) };
    LATER.with(|l| l.set(Some(job)));
}

fn not_running() -> MpiError {
    match phase() {
        Phase::Before => MpiError::new(MPI_ERR_OTHER, "called before MPI_Init"),
        Phase::Finalized => MpiError::new(MPI_ERR_OTHER, "called after MPI_Finalize"),
        Phase::Running => MpiError::new(MPI_ERR_OTHER, "MPI is not running in this process"),
    }
}

/// Runs `f` on a process-wide table of the library; an error on a thread that does not own
/// the runtime's state.
pub fn owned<T, R>(
    local: &'static ibdyn_owner::ProcessLocal<T>,
    f: impl FnOnce(&T) -> MpiResult<R>,
) -> MpiResult<R> {
    local.try_with(f).unwrap_or_else(|_| Err(foreign_thread()))
}

fn foreign_thread() -> MpiError {
    match phase() {
        Phase::Before => MpiError::new(MPI_ERR_OTHER, "called before MPI_Init"),
        Phase::Finalized => MpiError::new(MPI_ERR_OTHER, "called after MPI_Finalize"),
        _ => MpiError::new(
            MPI_ERR_OTHER,
            "called from a thread other than the one that called MPI_Init, which asked for \
             MPI_THREAD_FUNNELED or less: to call MPI from any thread, one call at a time, \
             ask MPI_Init_thread for MPI_THREAD_SERIALIZED",
        ),
    }
}

/// The tables with no communicator yet; slots 0 and 1 stay for MPI_COMM_WORLD/SELF.
fn empty_state(thread_level: std::os::raw::c_int) -> State {
    let mut comms = Table::new();
    comms.reserve(2);
    State {
        comms,
        reqs: Table::new(),
        colls: Default::default(),
        parent: Parent::Unmade,
        thread_level,
        bsend: Default::default(),
        messages: Table::new(),
        objects: crate::objects::Objects::default(),
        sessions: Table::new(),
        universe: None,
    }
}

/// Initialises the runtime and the tables (MPI_Init); a process with sessions keeps its
/// tables and gains the world model.
pub fn init(thread_level: std::os::raw::c_int) -> MpiResult<()> {
    if phase() != Phase::Before {
        return err(
            MPI_ERR_OTHER,
            "MPI is already initialised (or finalised) in this process; MPI_Init may be called once",
        );
    }
    if !ibdyn_owner::claim() {
        return Err(foreign_thread());
    }
    let universe = ibdyn::initialize()?;
    crate::threads::set_main();
    cell(|cell| {
        let Ok(mut guard) = cell.try_borrow_mut() else {
            return err(MPI_ERR_INTERN, "MPI re-entered from inside an MPI call");
        };
        let state = guard.get_or_insert_with(|| empty_state(thread_level));
        state.comms.put(
            0,
            CommEntry::new(
                Comm::Intra(universe.world()),
                ErrHandler::Fatal,
                "MPI_COMM_WORLD",
            ),
        );
        state.comms.put(
            1,
            CommEntry::new(
                Comm::Intra(universe.self_comm()),
                ErrHandler::Fatal,
                "MPI_COMM_SELF",
            ),
        );
        state.thread_level = thread_level;
        state.universe = Some(universe);
        Ok(())
    })?;
    set_phase(Phase::Running);
    Ok(())
}

/// Starts a session (MPI_Session_init), making the tables if this process has none.
pub fn session_init(errhandler: ErrHandler) -> MpiResult<Handle> {
    if phase() == Phase::Finalized {
        return err(
            MPI_ERR_OTHER,
            "this process has ended the world model (MPI_Finalize), and ibdyn starts no \
             session after that (MPI allows it; MPICH 5 does it): start the session before \
             MPI_Finalize, and it stays usable after MPI_Finalize",
        );
    }
    if !ibdyn_owner::claim() {
        return Err(foreign_thread());
    }
    let session = ibdyn::Session::init(ibdyn::SessionOptions::default())?;
    cell(|cell| {
        let Ok(mut guard) = cell.try_borrow_mut() else {
            return err(MPI_ERR_INTERN, "MPI re-entered from inside an MPI call");
        };
        let state = guard.get_or_insert_with(|| empty_state(MPI_THREAD_FUNNELED));
        Ok(SESSION_BASE + state.sessions.insert((session, errhandler)))
    })
}

/// Ends session `h` (MPI_Session_finalize); the last one of a process without the world
/// model takes the tables with it.
pub fn session_finalize(h: Handle) -> MpiResult<()> {
    let (mut session, last) = with_state(|s| {
        let i = s.session_index(h)?;
        let (session, _) = s
            .sessions
            .remove(i)
            .expect("session_index checked the slot");
        Ok((session, s.sessions.is_empty() && s.universe.is_none()))
    })?;
    let r = session.finalize();
    if last {
        let state = cell(|cell| Ok(cell.try_borrow_mut().ok().and_then(|mut g| g.take())));
        if let Some(state) = state? {
            teardown(state);
        }
    }
    Ok(r?)
}

/// Session handles are this plus the table index.
const SESSION_BASE: Handle = 0x6800_0000;

/// Completes outstanding requests, drops every communicator handle and finalises the
/// runtime (MPI_Finalize). Open sessions keep the tables (without the world model).
pub fn finalize() -> MpiResult<()> {
    let universe = cell(|cell| {
        let Ok(mut guard) = cell.try_borrow_mut() else {
            return err(MPI_ERR_INTERN, "MPI re-entered from inside an MPI call");
        };
        let Some(state) = guard.as_mut().filter(|s| s.universe.is_some()) else {
            return Err(not_running());
        };
        if state.sessions.is_empty() {
            let state = guard.take().expect("checked above");
            return Ok(teardown(state));
        }
        state.comms.clear_slot(0);
        state.comms.clear_slot(1);
        Ok(state.universe.take())
    })?;
    set_phase(Phase::Finalized);
    match universe {
        Some(u) => Ok(u.finalize()?),
        None => Ok(()),
    }
}

/// Empties the tables in the order MPI needs (data in flight first); returns the universe.
fn teardown(state: State) -> Option<ibdyn::Universe> {
    let State {
        mut comms,
        mut reqs,
        universe,
        mut bsend,
        mut sessions,
        ..
    } = state;
    // Dropping a request waits for data still moving into or out of its buffer; buffered
    // sends are delivered first (MPI_Finalize completes them).
    drop(bsend.drain());
    drop(reqs.drain());
    crate::derived::clear();
    crate::ops::clear();
    drop(comms.drain());
    drop(sessions.drain());
    crate::user_errhandler::run_destructors();
    universe
}

impl State {
    /// The world model's universe (after MPI_Init, before MPI_Finalize).
    pub fn universe(&self) -> MpiResult<&ibdyn::Universe> {
        self.universe.as_ref().ok_or_else(|| {
            MpiError::new(
                MPI_ERR_OTHER,
                "this needs MPI_Init (the process has sessions only)",
            )
        })
    }

    /// The table index of session handle `h`.
    pub fn session_index(&self, h: Handle) -> MpiResult<usize> {
        match h.checked_sub(SESSION_BASE) {
            Some(i) if self.sessions.get(i).is_some() => Ok(i),
            _ => err(MPI_ERR_SESSION, format!("{h:#x} is not an open session")),
        }
    }

    /// This process's identity (its member of MPI_COMM_WORLD's group).
    pub fn me(&self) -> MpiResult<ibdyn_intercomm::Gpid> {
        if let Ok(w) = self.comm(MPI_COMM_WORLD) {
            let w = w.comm.raw();
            return Ok(w.group().get(i64::from(w.rank()))?);
        }
        // Sessions only: the set mpi://SELF holds this process alone.
        let Some((session, _)) = (0..).map_while(|i| self.sessions.get(i)).next() else {
            return err(MPI_ERR_OTHER, "neither MPI_Init nor an open session");
        };
        Ok(session.group_from_pset(ibdyn::PSET_SELF)?.get(0)?)
    }

    /// The table index of communicator handle `h`, if it names a live communicator.
    pub fn comm_index(&self, h: Handle) -> MpiResult<usize> {
        let i = match h {
            MPI_COMM_WORLD => 0,
            MPI_COMM_SELF => 1,
            MPI_COMM_NULL => return err(MPI_ERR_COMM, "MPI_COMM_NULL is not a communicator"),
            h if (COMM_BASE..REQ_BASE).contains(&h) => h - COMM_BASE,
            h => return err(MPI_ERR_COMM, format!("{h:#x} is not a communicator handle")),
        };
        match self.comms.get(i) {
            Some(_) => Ok(i),
            None => err(
                MPI_ERR_COMM,
                format!("communicator {h:#x} has been freed (or never existed)"),
            ),
        }
    }

    pub fn comm(&self, h: Handle) -> MpiResult<&CommEntry> {
        let i = self.comm_index(h)?;
        Ok(self.comms.get(i).expect("comm_index checked the slot"))
    }

    pub fn comm_mut(&mut self, h: Handle) -> MpiResult<&mut CommEntry> {
        let i = self.comm_index(h)?;
        Ok(self.comms.get_mut(i).expect("comm_index checked the slot"))
    }

    /// Stores a new communicator; it inherits `errhandler` (MPI: a new communicator takes
    /// its parent's error handler). Returns its handle.
    pub fn add_comm(&mut self, comm: Comm, errhandler: ErrHandler) -> Handle {
        let i = self.comms.insert(CommEntry::new(comm, errhandler, ""));
        comm_handle(i)
    }

    /// Removes communicator `h`; the predefined ones cannot be removed.
    pub fn remove_comm(&mut self, h: Handle) -> MpiResult<CommEntry> {
        if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
            return err(
                MPI_ERR_COMM,
                "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed or disconnected",
            );
        }
        let i = self.comm_index(h)?;
        if self.parent == Parent::Made(h) {
            self.parent = Parent::Gone;
        }
        Ok(self.comms.remove(i).expect("comm_index checked the slot"))
    }

    pub fn add_req(&mut self, req: ReqEntry) -> Handle {
        let coll = req.is_coll();
        let i = self.reqs.insert(req);
        if coll {
            self.colls.note(i);
        }
        REQ_BASE + i
    }

    pub fn add_message(&mut self, comm: usize, msg: ibdyn_intercomm::Message) -> Handle {
        MESSAGE_BASE + self.messages.insert((comm, msg))
    }

    /// The communicator of matched message `h` (whose error handler takes the errors of
    /// receiving it); MPI_COMM_SELF for a handle that is not a message.
    pub fn message_comm(&self, h: Handle) -> Handle {
        h.checked_sub(MESSAGE_BASE)
            .and_then(|i| self.messages.get(i))
            .map_or(MPI_COMM_SELF, |(c, _)| comm_handle(*c))
    }

    /// The communicator handle and the matched message `h`, which is then gone.
    pub fn take_message(&mut self, h: Handle) -> MpiResult<(Handle, ibdyn_intercomm::Message)> {
        match h
            .checked_sub(MESSAGE_BASE)
            .and_then(|i| self.messages.remove(i))
        {
            Some((c, msg)) => Ok((comm_handle(c), msg)),
            None => err(
                MPI_ERR_REQUEST,
                format!("{h:#x} is not a message of MPI_Mprobe (received already?)"),
            ),
        }
    }

    /// Whether request `h` has completed (without collecting it).
    pub fn req_done(&mut self, h: Handle) -> MpiResult<bool> {
        Ok(self.req_status(h)?.is_some())
    }

    /// The status of request `h` once it has completed, and whether it was cancelled,
    /// without collecting it.
    pub fn req_status(&mut self, h: Handle) -> MpiResult<Option<(ibdyn::Status, bool)>> {
        let i = self.req_index(h)?;
        let e = self.reqs.get_mut(i).expect("req_index checked the slot");
        Ok(e.peek()?.map(|st| (st, e.cancelled)))
    }

    /// The table index of request handle `h`.
    pub fn req_index(&self, h: Handle) -> MpiResult<usize> {
        if h >= REQ_BASE {
            let i = h - REQ_BASE;
            if self.reqs.get(i).is_some() {
                return Ok(i);
            }
        }
        err(
            MPI_ERR_REQUEST,
            format!("{h:#x} is not an active request (completed already, or never started)"),
        )
    }

    /// The error handler errors about communicator `h` go to: its own, or MPI_COMM_SELF's
    /// when `h` is not a valid communicator.
    pub fn errhandler_for(&self, h: Handle) -> ErrHandler {
        let i = self.comm_index(h).unwrap_or(1);
        self.errhandler_of_index(i)
    }

    pub fn errhandler_of_index(&self, i: usize) -> ErrHandler {
        self.comms
            .get(i)
            .map_or(ErrHandler::Fatal, |c| c.errhandler.about(comm_handle(i)))
    }
}

pub fn comm_handle(i: usize) -> Handle {
    match i {
        0 => MPI_COMM_WORLD,
        1 => MPI_COMM_SELF,
        i => COMM_BASE + i,
    }
}

/// The error handler for an error about communicator `h`, looked up after the failed call
/// (fatal when MPI is not running: there is no handler to ask).
pub fn errhandler_for(h: Handle) -> ErrHandler {
    handler_in_state(|s| s.errhandler_for(h))
}

/// The error handler of the communicator at index `i`.
pub fn errhandler_of_index(i: usize) -> ErrHandler {
    handler_in_state(|s| s.errhandler_of_index(i))
}

/// `look` on the state; fatal where there is no state this thread may read.
fn handler_in_state(look: impl FnOnce(&State) -> ErrHandler) -> ErrHandler {
    STATE
        .try_with(|cell| match cell.try_borrow() {
            Ok(g) => g.as_ref().map_or(ErrHandler::Fatal, look),
            Err(_) => ErrHandler::Fatal,
        })
        .unwrap_or(ErrHandler::Fatal)
}
