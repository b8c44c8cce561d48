//! The progress engine: one per process. It owns the two routes (shared memory, fabric) and
//! the point-to-point protocol above them, moves packets, and waits: spinning, yielding, then
//! blocking, with peers' liveness checked now and then.

use crate::backoff::{
    Backoff, Step, LIVENESS_PERIOD, SHALLOW_BLOCK, SPINS_DEDICATED, SPINS_SHARED,
};
use crate::error::{CommError, Result};
use crate::gpid::{Gpid, ProcCard};
use crate::net_route::NetRoute;
use crate::packet::{Header, HEADER_LEN};
use crate::protocol::{copy_eager, OnShm, Protocol, SendStart};
use crate::reqs::{PostedRecv, Status};
use crate::route::{Route, Routes};
use crate::service::Served;
use crate::shm_route::{ShmRoute, RECV_BATCH};
use ibdyn_pmi::PmiClient;
use ibdyn_shm::{BellArm, RecvQueue};
use ibdyn_verbs::{AddressCard, Fabric};
use std::time::{Duration, Instant};

/// Longest block in the fabric's poll of a process without a shared-memory bell (see
/// `RecvQueue::arm_bell`): its shared-memory packets wait at most this long then.
const FABRIC_BLOCK: Duration = Duration::from_millis(2);

/// How a blocking receive's direct wait ended (small, so the hot path moves little).
enum Direct {
    Received(Status),
    Failed(Box<CommError>),
    /// Not (yet) received: post the receive and wait the general way.
    Post,
}

pub(crate) struct Engine {
    shm: ShmRoute,
    net: NetRoute,
    proto: Protocol,
    /// How long an idle wait spins before yielding (fewer when processes share cores).
    spins: u32,
    /// Processes of other jobs on this node this process talks to (a spawn's children, its
    /// parents, a connected job): they share the cores, too.
    guests_here: std::collections::HashSet<Gpid>,
    /// Waits block at once instead of spinning (`Engine::set_patient`).
    patient: bool,
    /// Handlers of messages run as they arrive (`crate::service`).
    services: Vec<Served>,
    /// When `block_outside` last checked the peers' liveness.
    outside_checked: Option<Instant>,
}

impl Engine {
    pub fn new(
        pmi: PmiClient,
        me: Gpid,
        rx: RecvQueue,
        fabric: Option<Fabric>,
        eager_limit: usize,
        cma: bool,
    ) -> Engine {
        let card = ProcCard {
            gpid: me,
            node_uid: pmi.node_uid().to_string(),
            pid: std::process::id() as i32,
            start: ibdyn_shm::my_start_time(),
            shm_name: rx.name().to_string(),
            fabric: fabric
                .as_ref()
                .map(|f| f.card().to_bytes())
                .unwrap_or_default(),
        };
        let shm_limit = rx.max_payload().saturating_sub(HEADER_LEN);
        let spins = spins_for(&pmi, 0);
        set_pmi_slice(&pmi);
        Engine {
            spins,
            guests_here: Default::default(),
            patient: false,
            services: Vec::new(),
            outside_checked: None,
            shm: ShmRoute::new(rx, cma),
            net: NetRoute::new(fabric),
            proto: Protocol::new(pmi, me, card, eager_limit.min(shm_limit)),
        }
    }

    /// The protocol and the routes it sends over, borrowed together.
    #[inline]
    fn split(&mut self) -> (&mut Protocol, Routes<'_>) {
        let Engine {
            shm, net, proto, ..
        } = self;
        (proto, Routes { shm, net })
    }

    /// Makes every wait block as soon as there is nothing to do (`on`), or spin first again;
    /// returns the previous setting. For protocol steps that wait milliseconds for another
    /// process, where spinning would take the core from the processes being waited for.
    pub fn set_patient(&mut self, on: bool) -> bool {
        std::mem::replace(&mut self.patient, on)
    }

    fn backoff(&self) -> Backoff {
        if self.patient {
            Backoff::patient()
        } else {
            Backoff::new(self.spins)
        }
    }

    /// Chooses the idle spin count again (the process mapping may have come in since `new`).
    pub fn retune_spins(&mut self) {
        self.spins = spins_for(self.proto.pmi_ref(), self.guests_here.len());
        set_pmi_slice(self.proto.pmi_ref());
    }

    // ---- this process ----

    pub fn me(&self) -> Gpid {
        self.proto.me()
    }

    pub fn card(&self) -> &ProcCard {
        self.proto.card()
    }

    pub fn pmi(&mut self) -> &mut PmiClient {
        self.proto.pmi()
    }

    /// The address card of `g` (looked up in the process manager on first use).
    pub fn card_of(&mut self, g: Gpid) -> Result<ProcCard> {
        self.proto.card_of(g)
    }

    /// Makes cards known without asking the process manager for them (learnt from a peer,
    /// or from one allgather).
    pub fn learn_cards(&mut self, cards: impl IntoIterator<Item = ProcCard>) {
        let me = self.me();
        let before = self.guests_here.len();
        for c in cards {
            if c.gpid.job != me.job && c.node_uid == self.proto.pmi_ref().node_uid() {
                self.guests_here.insert(c.gpid);
            }
            self.proto.learn_card(c);
        }
        if self.guests_here.len() != before {
            self.retune_spins();
        }
    }

    /// Runs `f` with this process's fabric, if it has one.
    pub fn with_fabric<R>(&self, f: impl FnOnce(&Fabric) -> R) -> Option<R> {
        self.net.with_fabric(f)
    }

    pub fn has_fabric(&self) -> bool {
        self.net.has_fabric()
    }

    // ---- control datagrams (the dynamic-process layer's wire-up) ----

    pub fn control_send(&mut self, to: &AddressCard, data: &[u8]) -> Result<()> {
        self.net.control_send(to, data)
    }

    /// Sets what answers control datagrams as they arrive (`NetRoute::set_control_responder`).
    pub fn set_control_responder(&mut self, r: crate::net_route::ControlResponder) {
        self.net.set_control_responder(r)
    }

    /// Marks whether a control datagram is awaited (idle waits then block on the fabric).
    pub fn expect_control(&mut self, on: bool) {
        self.net.expect_control(on)
    }

    /// Removes and returns the oldest control datagram received for which `want` holds.
    pub fn take_control(
        &mut self,
        want: impl FnMut(&[u8]) -> bool,
    ) -> Option<(AddressCard, Vec<u8>)> {
        self.net.take_control(want)
    }

    /// The oldest control datagram that was never acknowledged: its destination and why.
    pub fn take_control_failure(&mut self) -> Option<(AddressCard, String)> {
        self.net.take_control_failure()
    }

    // ---- point-to-point ----

    /// Queues one packet to `to`, in order behind anything queued before.
    pub fn push(&mut self, to: Gpid, parts: &[&[u8]]) -> Result<()> {
        let (proto, mut r) = self.split();
        proto.push(&mut r, to, parts)
    }

    /// A blocking send: no request object unless the send is a rendezvous.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn send(
        &mut self,
        ctx: u64,
        src_rank: u32,
        to: Gpid,
        dest_rank: i32,
        tag: i32,
        buf: &[u8],
    ) -> Result<()> {
        let (proto, mut r) = self.split();
        if buf.len() <= proto.eager_limit() {
            proto.push(
                &mut r,
                to,
                &[&Header::encode_eager(tag, ctx, src_rank), buf],
            )?;
            if proto.held_back(&r, to) {
                return self.wait_held(to, dest_rank, tag, buf.len());
            }
            return Ok(());
        }
        match proto.isend(&mut r, ctx, src_rank, to, dest_rank, tag, buf)? {
            SendStart::Done(_) => Ok(()),
            SendStart::Pending(id) => self.wait(id).map(|_| ()),
        }
    }

    /// The rest of a blocking send whose packet waits in this process (`protocol::held`).
    #[cold]
    #[inline(never)]
    fn wait_held(&mut self, to: Gpid, dest_rank: i32, tag: i32, count: usize) -> Result<()> {
        let status = Status {
            source: dest_rank,
            tag,
            count,
        };
        let id = self.proto.hold(to, status);
        self.wait(id).map(|_| ())
    }

    /// Starts a send (see `Protocol::isend`).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn isend(
        &mut self,
        ctx: u64,
        src_rank: u32,
        to: Gpid,
        dest_rank: i32,
        tag: i32,
        buf: &[u8],
    ) -> Result<SendStart> {
        let (proto, mut r) = self.split();
        proto.isend(&mut r, ctx, src_rank, to, dest_rank, tag, buf)
    }

    /// Starts a synchronous send (see `Protocol::issend`).
    #[allow(clippy::too_many_arguments)]
    pub fn issend(
        &mut self,
        ctx: u64,
        src_rank: u32,
        to: Gpid,
        dest_rank: i32,
        tag: i32,
        buf: &[u8],
    ) -> Result<SendStart> {
        let (proto, mut r) = self.split();
        proto.issend(&mut r, ctx, src_rank, to, dest_rank, tag, buf)
    }

    /// Posts a receive; matches the unexpected queue first.
    pub fn irecv(&mut self, recv: PostedRecv) -> Result<u64> {
        let (proto, mut r) = self.split();
        proto.irecv(&mut r, recv)
    }

    /// Looks for a matching message without receiving it.
    pub fn iprobe(&self, ctx: u64, src: i32, tag: i32) -> Option<Status> {
        self.proto.iprobe(ctx, src, tag)
    }

    /// Takes a matching message out of matching (see `Protocol::improbe`).
    pub fn improbe(&mut self, ctx: u64, src: i32, tag: i32) -> Option<(Status, u64)> {
        self.proto.improbe(ctx, src, tag)
    }

    /// Receives a message `improbe` claimed.
    pub fn imrecv(&mut self, msg: u64, recv: PostedRecv) -> Result<u64> {
        let (proto, mut r) = self.split();
        proto.imrecv(&mut r, msg, recv)
    }

    /// The peer `g` known dead (checked now for a same-node peer), as the error to report
    /// from `during`.
    pub fn peer_failure(&mut self, g: Gpid, during: &str) -> Option<CommError> {
        self.proto.peer_failure(&self.shm, g, during)
    }

    /// A blocking receive. When no other receive is posted and nothing waits unmatched, an
    /// eager message for it is copied straight from the queue cell into `r.buf` while the wait
    /// spins, with no entry in the request table. Anything else (a rendezvous, a message that
    /// came unexpected, a wait that outlasts the spinning) takes the general path, which also
    /// checks the peer's liveness.
    pub fn recv(&mut self, r: PostedRecv) -> Result<Status> {
        if self.proto.matching_idle() {
            match self.recv_direct(&r) {
                Direct::Received(status) => return Ok(status),
                Direct::Failed(e) => return Err(*e),
                Direct::Post => {}
            }
        }
        let id = self.irecv(r)?;
        self.wait(id)
    }

    fn recv_direct(&mut self, r: &PostedRecv) -> Direct {
        let pattern = r.pattern();
        let mut backoff = self.backoff();
        loop {
            let Engine {
                shm, net, proto, ..
            } = self;
            let shm = &*shm;
            let mut did = false;
            for _ in 0..RECV_BATCH {
                let step = shm.recv_one(|p| {
                    if let Some((ctx, src, tag, body)) = Header::decode_eager(p) {
                        if pattern.matches(&crate::matching::Envelope { ctx, src, tag }) {
                            return Some(match copy_eager(r, src, tag, body) {
                                Ok(status) => Direct::Received(status),
                                Err(e) => Direct::Failed(Box::new(e)),
                            });
                        }
                    }
                    proto.handle_logged(&mut Routes { shm, net }, p);
                    // A message kept unmatched (a request to send, or an eager one of another
                    // receive) comes before any later one of its sender: from here on the
                    // receive must match in order, posted.
                    proto.has_unexpected().then_some(Direct::Post)
                });
                match step {
                    None => break,
                    Some(Some(got)) => return got,
                    Some(None) => did = true,
                }
            }
            match proto.progress_others(&mut Routes { shm, net }, false) {
                Ok(more) => did |= more,
                Err(e) => return Direct::Failed(Box::new(e)),
            }
            if proto.has_unexpected() {
                return Direct::Post; // maybe ours (a rendezvous, or from the fabric)
            }
            if did {
                backoff.reset();
                continue;
            }
            shm.release_consumed();
            match backoff.step() {
                Step::Spin => std::hint::spin_loop(),
                _ => return Direct::Post,
            }
        }
    }

    // ---- requests ----

    /// The result of `id` if it has completed (the request is then gone).
    #[inline]
    pub fn take_done(&mut self, id: u64) -> Option<Result<Status>> {
        self.proto.take_done(id)
    }

    pub fn is_done(&mut self, id: u64) -> bool {
        self.proto.is_done(id)
    }

    /// Drops a request the user no longer waits for: a posted receive is cancelled.
    /// Returns false if it must still complete (data is moving) before it can go.
    pub fn cancel(&mut self, id: u64) -> bool {
        self.proto.cancel(id)
    }

    /// MPI_Cancel of request `id` (see `Protocol::cancel_op`).
    pub fn cancel_op(&mut self, id: u64) {
        let (proto, mut r) = self.split();
        proto.cancel_op(&mut r, id)
    }

    /// Whether every queued packet has left this process (also those the fabric holds while
    /// a connection is being made).
    pub fn flushed(&self) -> bool {
        !self.shm.has_backlog() && self.net.with_fabric(|f| f.flushed()).unwrap_or(true)
    }

    // ---- progress and waiting ----

    /// One pass over every endpoint. Returns whether anything happened.
    #[inline]
    pub fn progress(&mut self) -> Result<bool> {
        let Engine {
            shm, net, proto, ..
        } = self;
        let did = Route::progress(
            &mut &*shm,
            &mut OnShm {
                proto: &mut *proto,
                net: &mut *net,
            },
        )?;
        let mut routes = Routes { shm, net };
        let did = proto.progress_others(&mut routes, true)? || did;
        if self.services.is_empty() {
            return Ok(did);
        }
        self.run_services().map(|ran| ran || did)
    }

    #[inline(never)]
    fn run_services(&mut self) -> Result<bool> {
        let Engine {
            shm,
            net,
            proto,
            services,
            ..
        } = self;
        let mut routes = Routes { shm, net };
        let mut did = false;
        for s in services.iter_mut() {
            did |= s.run(proto, &mut routes)?;
        }
        Ok(did)
    }

    /// Registers service `s` (see `crate::service`).
    pub fn add_service(&mut self, s: Served) {
        self.services.push(s);
    }

    /// Ends the service of (`ctx`, `tag`) once the answers it sent have left (or the wait
    /// for them failed: the service goes either way, its handler may point at memory about
    /// to be freed).
    pub fn remove_service(&mut self, ctx: u64, tag: i32) -> Result<()> {
        let Some(i) = self.services.iter().position(|s| s.is(ctx, tag)) else {
            return Ok(());
        };
        let left = self.wait_until(|e| e.services[i].idle());
        self.services.remove(i);
        left
    }

    /// Progresses until `done` holds. Idle time backs off; peers the wait depends on are checked
    /// for liveness now and then, so a dead peer ends the wait with an error.
    pub fn wait_until(&mut self, mut done: impl FnMut(&mut Engine) -> bool) -> Result<()> {
        let mut backoff = self.backoff();
        loop {
            if done(self) {
                return Ok(());
            }
            if self.progress()? {
                backoff.reset();
                continue;
            }
            self.idle(&mut backoff);
        }
    }

    pub(crate) fn block(&mut self, t: Duration) {
        self.sleep(t);
        // An idle process must still answer connect requests promptly.
        let Engine {
            shm, net, proto, ..
        } = self;
        if let Err(e) = proto.progress_fabric(shm, net) {
            tracing::debug!("fabric progress: {e}");
        }
    }

    /// A block of a wait that runs outside the engine, testing its requests between blocks
    /// (`process::idle_for`): the peers pending requests depend on are checked at least every
    /// `LIVENESS_PERIOD`, as in the engine's own waits, so a dead peer fails them.
    pub(crate) fn block_outside(&mut self, t: Duration) {
        self.block(t);
        let now = Instant::now();
        if now.duration_since(*self.outside_checked.get_or_insert(now)) >= LIVENESS_PERIOD {
            self.outside_checked = Some(now);
            let (proto, mut r) = self.split();
            proto.check_liveness(&mut r);
        }
    }

    fn sleep(&mut self, t: Duration) {
        // With fabric traffic (or a control datagram awaited) block in the fabric's poll, which
        // wakes on its sockets and on the shared-memory queue's bell; without a bell, shared-
        // memory packets wait at most FABRIC_BLOCK. Otherwise block on the shared-memory
        // doorbell, which senders ring. A block deeper than SHALLOW_BLOCK (a wait idle for a
        // quarter second, or a disconnect) takes the fabric's poll whenever there is a fabric,
        // so that a first connect request ends it too; without a bell it stays shallow.
        let on_fabric = self.net.blocks_idle_waits();
        let t = match self.shm.room_retry() {
            Some(_) if !on_fabric && self.sleep_for_room(t) => return,
            // Where the wait for room cannot be signalled, look again soon.
            Some(r) => t.min(r),
            None => t,
        };
        if on_fabric || (t > SHALLOW_BLOCK && self.net.has_fabric()) {
            match self.shm.arm_bell() {
                BellArm::Armed(bell) => {
                    self.net.wait_or_bell(t, bell);
                    self.shm.disarm_bell();
                }
                BellArm::Pending => {}
                BellArm::Unavailable if on_fabric => self.net.wait(t.min(FABRIC_BLOCK)),
                BellArm::Unavailable => Route::wait(&mut &self.shm, SHALLOW_BLOCK),
            }
        } else {
            Route::wait(&mut &self.shm, t);
        }
    }

    /// Packets wait for room in a peer's full queue: sleeps until that peer hands cells back
    /// or a packet arrives, for up to the deep bound at once (`backoff::room_sleep`; a connect
    /// request over the fabric is answered when the sleep ends). False if it could not sleep
    /// so (no `futex_waitv`).
    fn sleep_for_room(&self, t: Duration) -> bool {
        let Some(link) = self.proto.link_waiting_for_room() else {
            return false;
        };
        self.shm.wait_for_room(link, crate::backoff::room_sleep(t))
    }

    /// Waits for request `id` and returns its result.
    #[inline]
    pub fn wait(&mut self, id: u64) -> Result<Status> {
        if let Some(r) = self.proto.take_done(id) {
            return r;
        }
        self.wait_slow(id)
    }

    /// `wait_until` for one request, without the closure's bookkeeping on the hot path.
    #[inline(never)]
    fn wait_slow(&mut self, id: u64) -> Result<Status> {
        let mut backoff = self.backoff();
        loop {
            if self.progress()? {
                if let Some(r) = self.proto.take_done(id) {
                    return r;
                }
                backoff.reset();
                continue;
            }
            if self.idle(&mut backoff) {
                // Blocking progressed the fabric, or a liveness check failed the request.
                if let Some(r) = self.proto.take_done(id) {
                    return r;
                }
            }
        }
    }

    /// One idle step of a wait: hands consumed cells back, then spins, yields or blocks.
    /// Returns whether it blocked (requests may then have completed or failed).
    #[inline]
    fn idle(&mut self, backoff: &mut Backoff) -> bool {
        self.shm.release_consumed();
        match backoff.step() {
            Step::Spin => std::hint::spin_loop(),
            Step::Yield => std::thread::yield_now(),
            Step::Block(t) => {
                self.block(t);
                if backoff.liveness_due() {
                    let (proto, mut r) = self.split();
                    proto.check_liveness(&mut r);
                }
                return true;
            }
        }
        false
    }

    /// Like `wait_until`, but blocks as soon as there is nothing to do: for waits of
    /// milliseconds (a spawn's wire-up), where spinning would only take the core from the
    /// processes being waited for.
    pub fn wait_blocking_until(&mut self, mut done: impl FnMut(&mut Engine) -> bool) -> Result<()> {
        loop {
            if done(self) {
                return Ok(());
            }
            if !self.progress()? {
                self.block(Duration::from_millis(1));
            }
        }
    }
}

/// Processes sharing this node's cores: this job's local ranks and `guests` of other jobs.
fn procs_here(pmi: &PmiClient, guests: usize) -> usize {
    pmi.local_ranks().len().max(1) + guests
}

/// How long a process-manager wait may block between fabric passes: 1 ms per local process
/// per usable core (1 ms when each has a core; 20 ms at most). A waiting process answers its
/// peers' connection requests from those passes; with 64 ranks a core, 1 ms made the waiters'
/// wake-ups take the cores from the ranks the fence waited for.
fn set_pmi_slice(pmi: &PmiClient) {
    let local = procs_here(pmi, 0) as u32;
    let per_core = local.div_ceil(ibdyn_shm::usable_cores().max(1) as u32);
    ibdyn_pmi::set_idle_slice(Duration::from_millis(1) * per_core);
}

/// Spins of an idle wait: fewer when this node's ranks (and the `guests` of other jobs
/// known to run here) outnumber the usable cores.
fn spins_for(pmi: &PmiClient, guests: usize) -> u32 {
    if procs_here(pmi, guests) > ibdyn_shm::usable_cores() {
        SPINS_SHARED
    } else {
        SPINS_DEDICATED
    }
}
