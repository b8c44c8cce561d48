//! Start-up and shut-down of the runtime in one process.

use crate::comm::Communicator;
use crate::context;
use crate::engine::Engine;
use crate::error::{CommError, Result};
use crate::gpid::{Gpid, ProcCard};
use crate::group::Group;
use crate::packet::{Header, Kind};
use crate::process::{Holder, Release};
use crate::protocol::card_key;
use ibdyn_pmi::PmiClient;
use ibdyn_verbs::{Fabric, FabricConfig, Preopened};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// Default largest message sent eagerly (copied through the receiver's queue); larger ones go
/// rendezvous (the receiver pulls them). `IBDYN_EAGER_LIMIT` overrides.
pub const DEFAULT_EAGER_LIMIT: usize = 16 * 1024;

/// How long finalisation waits for queued packets to leave.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(30);

/// The runtime of this process: its endpoints and its world. Finalised on drop.
pub struct Universe {
    eng: Rc<RefCell<Engine>>,
    world: Communicator,
    self_comm: Communicator,
    parent: RefCell<Option<Communicator>>,
    finalized: bool,
    /// Finalising meets the job's other processes (not after a failed start-up: `abandon`).
    meet: bool,
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

fn job_secret() -> u64 {
    std::env::var("IBDYN_JOB_SECRET")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim(), 16).ok())
        .unwrap_or(0)
}

/// Installs the `IBDYN_LOG` log filter (silent by default). Safe to call more than once.
pub fn init_logging() {
    // Silent unless asked: no subscriber at all then (it costs start-up time).
    if let Ok(filter) = std::env::var("IBDYN_LOG") {
        install_subscriber(filter);
    }
}

/// Apart from `init_logging`, so that its large stack frame (the subscriber's builder) is not
/// probed, three page faults, by every process that does not log.
#[cold]
#[inline(never)]
fn install_subscriber(filter: String) {
    let builder =
        tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::new(filter));
    // One file per process when asked: a log that does not depend on output forwarding.
    if let Some(dir) = std::env::var_os("IBDYN_LOG_DIR") {
        let path = std::path::Path::new(&dir).join(format!("ibdyn-{}.log", std::process::id()));
        if let Ok(file) = std::fs::File::create(&path) {
            let _ = builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .try_init();
            return;
        }
    }
    let _ = builder.with_writer(std::io::stderr).try_init();
}

impl Universe {
    /// Initialises the runtime: connects to the process manager, opens the endpoints and
    /// publishes this process's address card. Peers are connected on first contact.
    pub fn init() -> Result<Universe> {
        let u = Self::init_deferred()?;
        u.finish_startup()?;
        Ok(u)
    }

    /// Like `init`, but the process manager's answers to the start-up exchange may still be
    /// owed (`PmiClient::init_deferred`): everything this process needs to be reached (its
    /// endpoints and address card) is ready, so a spawned process can greet its parent
    /// before waiting for them. `finish_startup` completes the start-up.
    pub fn init_deferred() -> Result<Universe> {
        if INITIALIZED.swap(true, Ordering::SeqCst) {
            return Err(CommError::AlreadyInitialized);
        }
        Self::init_inner().inspect_err(|_| INITIALIZED.store(false, Ordering::SeqCst))
    }

    fn init_inner() -> Result<Universe> {
        let (eng, _epoch) = crate::process::acquire(Holder::Universe, new_engine)?;
        let me = eng.borrow().me();
        let size = eng.borrow_mut().pmi().size();
        let world_group = Group::new((0..size).map(|rank| Gpid { job: me.job, rank }).collect());
        let world = Communicator::new(eng.clone(), context::world(me.job), world_group, None, me)?;
        let self_ctx = context::derive(context::world(me.job), u64::MAX - me.rank as u64);
        let self_comm = Communicator::new(eng.clone(), self_ctx, Group::new(vec![me]), None, me)?;
        let u = Universe {
            eng,
            world,
            self_comm,
            parent: RefCell::new(None),
            finalized: false,
            meet: true,
        };
        if std::env::var("IBDYN_WIREUP").is_ok_and(|v| v == "all") {
            u.wire_up_all()?;
        }
        Ok(u)
    }

    /// Reads the process manager's start-up answers if still owed (see `init_deferred`).
    pub fn finish_startup(&self) -> Result<()> {
        let mut eng = self.eng.borrow_mut();
        eng.pmi().finish_startup()?;
        eng.retune_spins();
        Ok(())
    }

    /// Eager wire-up (`IBDYN_WIREUP=all`): fetch every card with one allgather and connect to
    /// every peer now.
    fn wire_up_all(&self) -> Result<()> {
        let mut eng = self.eng.borrow_mut();
        let me = eng.me();
        let mine = eng.card().to_bytes();
        let cards = eng.pmi().allgather(&mine)?;
        let cards = cards
            .iter()
            .map(|c| ProcCard::from_bytes(c))
            .collect::<Result<Vec<_>>>()?;
        eng.learn_cards(cards.into_iter().filter(|c| c.gpid != me));
        let hello = Header {
            kind: Kind::Hello,
            tag: 0,
            ctx: 0,
            src: 0,
            from: me.to_u64(),
            word: 0,
        }
        .encode();
        let size = eng.pmi().size();
        for rank in (0..size).filter(|&r| r != me.rank) {
            eng.push(Gpid { job: me.job, rank }, &[&hello[..]])?;
        }
        Ok(())
    }

    pub fn world(&self) -> Communicator {
        self.world.clone()
    }

    pub fn self_comm(&self) -> Communicator {
        self.self_comm.clone()
    }

    /// The intercommunicator to the job that spawned this one (MPI_Comm_get_parent), or
    /// None when this job was not spawned.
    pub fn parent(&self) -> Option<Communicator> {
        self.parent.borrow().clone()
    }

    /// Records the parent intercommunicator (the dynamic-process layer does this at start-up).
    pub fn set_parent(&self, parent: Communicator) {
        *self.parent.borrow_mut() = Some(parent);
    }

    /// Which fabric provider this process uses for inter-node traffic, if any.
    pub fn provider(&self) -> Option<String> {
        self.eng.borrow().with_fabric(|f| f.provider().to_string())
    }

    /// Fabric connections this process holds (made on demand).
    pub fn connection_count(&self) -> usize {
        self.eng
            .borrow()
            .with_fabric(|f| f.connection_count())
            .unwrap_or(0)
    }

    /// Runs `f` with the process-management client (for the dynamic-process layer).
    pub fn with_pmi<R>(&self, f: impl FnOnce(&mut PmiClient) -> R) -> R {
        f(self.eng.borrow_mut().pmi())
    }

    /// Shuts down: waits (bounded) for queued packets to leave, meets the other processes of
    /// the job, and leaves the process manager.
    pub fn finalize(mut self) -> Result<()> {
        self.finalize_inner()
    }

    /// Leaves after a start-up that failed (e.g. connecting to the parent job): like
    /// `finalize`, but without meeting the job's other processes, which may be waiting for
    /// this one in a start-up step of their own and would never reach the meeting. They see
    /// this process end instead and fail their step with that.
    pub fn abandon(mut self) {
        self.meet = false;
        if let Err(e) = self.finalize_inner() {
            tracing::debug!("leaving after a failed start-up: {e}");
        }
    }

    fn finalize_inner(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.finalized, true) {
            return Ok(());
        }
        // Cached collective state holds handles of its communicator (a cycle): let it go.
        for c in [
            Some(&self.world),
            Some(&self.self_comm),
            self.parent.get_mut().as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            c.clear_attributes();
        }
        let r = match crate::process::release(Holder::Universe) {
            // Sessions still use the runtime: the last of them leaves the process manager.
            Release::Keep | Release::Park => flush(&self.eng),
            Release::Teardown => leave(&self.eng, self.meet),
        };
        INITIALIZED.store(false, Ordering::SeqCst);
        r
    }
}

impl Drop for Universe {
    fn drop(&mut self) {
        if let Err(e) = self.finalize_inner() {
            tracing::warn!("finalize: {e}");
        }
    }
}

/// Opens this process's runtime: connects to the process manager, opens the endpoints and
/// publishes the address card (the first universe or session of a process does this).
pub(crate) fn new_engine() -> Result<Rc<RefCell<Engine>>> {
    init_logging();
    // Idle waits block for microseconds at a time; the default 50 us timer slack would
    // make every such wake-up late.
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64) };
    let opened = crate::prestarted::open_then_wait()?;
    let mut pmi = PmiClient::init_deferred()?;
    if pmi.server_kind() == ibdyn_pmi::ServerKind::Singleton {
        // A program started on its own gets a private daemon at once, so that it can spawn
        // and its children share its node (and its shared memory).
        if let Err(e) = pmi.serve_singleton() {
            tracing::debug!("running as a plain singleton (no daemon): {e}");
        }
    }
    let me = Gpid {
        job: pmi.job_id(),
        rank: pmi.rank(),
    };
    let opened = match opened {
        Some(o) => o,
        None => crate::prestarted::open_local()?,
    };
    // CMA is assumed until the kernel refuses a read (then the pipelined copy takes over);
    // IBDYN_CMA=off forces the copy path (for tests and comparisons).
    let cma = std::env::var("IBDYN_CMA").map_or(true, |v| v != "off");
    let fabric = open_fabric(me, opened.fabric)?;
    let eager = env_usize("IBDYN_EAGER_LIMIT").unwrap_or(DEFAULT_EAGER_LIMIT);
    let eng = Engine::new(pmi, me, opened.rx, fabric, eager, cma);
    let card = eng.card().to_bytes();
    let eng = Rc::new(RefCell::new(eng));
    {
        let mut e = eng.borrow_mut();
        // Under a PMI-1 server without ibdyn's extensions, puts are seen only after a fence;
        // ours sees them at once, and the put's acknowledgement can wait for the next call.
        let pmi = e.pmi();
        if pmi.puts_visible_without_fence() {
            pmi.put_nowait(&card_key(me.rank), &ibdyn_pmi::wire::hex_encode(&card))?;
        } else {
            pmi.put_bytes(&card_key(me.rank), &card)?;
            pmi.fence()?;
        }
    }
    Ok(eng)
}

/// Leaves the process manager: waits (bounded) for queued packets to leave, meets the
/// other processes of the job if `meet`, finalises PMI and removes this process's
/// shared-memory segment name.
pub(crate) fn leave(eng: &Rc<RefCell<Engine>>, meet: bool) -> Result<()> {
    let flushed = flush(eng);
    let mut eng = eng.borrow_mut();
    // A process alone in its job has no one to meet: no round trip to the process manager.
    let pmi = eng.pmi();
    let r = if meet && pmi.size() > 1 {
        pmi.barrier().map_err(CommError::from)
    } else {
        Ok(())
    };
    // Everything this process sent has left and its job has met: no peer needs an answer
    // from it any more, so the last request waits without waking every slice to progress the
    // fabric (hundreds of ending processes doing so took the cores from the daemon answering).
    ibdyn_pmi::set_idle_hook(None);
    let f = pmi.finalize().map_err(CommError::from);
    drop(eng);
    ibdyn_shm::remove_own_segments();
    flushed.and(r).and(f)
}

/// Waits (bounded) for queued packets to leave.
pub(crate) fn flush(eng: &Rc<RefCell<Engine>>) -> Result<()> {
    let deadline = Instant::now() + FLUSH_TIMEOUT;
    let mut timed_out = false;
    eng.borrow_mut().wait_until(|e| {
        timed_out = Instant::now() > deadline;
        e.flushed() || timed_out
    })?;
    if timed_out {
        return Err(CommError::Timeout {
            what: "queued messages to leave at finalize".into(),
            secs: FLUSH_TIMEOUT.as_secs(),
        });
    }
    Ok(())
}

fn open_fabric(me: Gpid, early: Option<Preopened>) -> Result<Option<Fabric>> {
    let forced = std::env::var("IBDYN_PROVIDER").is_ok();
    let cfg = FabricConfig {
        job_secret: job_secret(),
        local_key: me.to_u64(),
        // A peer that computes outside MPI answers when it next calls MPI; whether it still
        // runs is for the process manager to say (`Protocol::connect_slow`).
        patient_connects: true,
        ..FabricConfig::default()
    };
    match Fabric::open_with(cfg, early) {
        Ok(f) => Ok(Some(f)),
        Err(e) if forced => Err(e.into()),
        Err(e) => {
            tracing::warn!("no fabric (inter-node messaging disabled): {e}");
            Ok(None)
        }
    }
}
