//! The progress engine: one per process. It owns the endpoints (shared-memory receive queue,
//! fabric), the peer table, the request table and the matching queues, and moves packets.

use crate::backoff::{Backoff, Step, SPINS_DEDICATED, SPINS_SHARED};
use crate::error::{CommError, Result};
use crate::gpid::{Gpid, ProcCard};
use crate::packet::{Header, Kind, RtsBody, HEADER_LEN};
use crate::peers::{Peer, PeerTable, Route};
use crate::reqs::{PostedRecv, ReqState, ReqTable, RndvSend, Status};
use ibdyn_pmi::PmiClient;
use ibdyn_shm::RecvQueue;
use ibdyn_verbs::{Event, Fabric, RemoteBuf};
use std::collections::VecDeque;
use std::time::Duration;

/// Wildcards and the null process, with MPI's meaning.
pub const ANY_SOURCE: i32 = -2;
pub const ANY_TAG: i32 = -1;
pub const PROC_NULL: i32 = -3;

/// How long a process waits for a peer's address card to appear.
const CARD_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest block while packets wait for room in a peer's queue.
const BACKLOG_RETRY: Duration = Duration::from_micros(50);
/// Blocked waits between two liveness checks of the peers a wait depends on.
const LIVENESS_EVERY: u64 = 64;

pub(crate) fn card_key(rank: u32) -> String {
    format!("ibdyn-card-{rank}")
}

/// How a send started.
pub(crate) enum SendStart {
    /// Eager: the data is on its way and the buffer is free again.
    Done(Status),
    /// Rendezvous: request `id` completes when the receiver has pulled the data.
    Pending(u64),
}

enum UnexpectedBody {
    Eager(Vec<u8>),
    Rts {
        from: Gpid,
        sender_req: u64,
        rts: RtsBody,
    },
}

struct Unexpected {
    ctx: u64,
    src: u32,
    tag: i32,
    body: UnexpectedBody,
}

impl Unexpected {
    fn len(&self) -> usize {
        match &self.body {
            UnexpectedBody::Eager(d) => d.len(),
            UnexpectedBody::Rts { rts, .. } => rts.len as usize,
        }
    }
}

/// How a blocking receive's direct wait ended (small, so the hot path moves little).
enum Direct {
    Received(Status),
    Failed(Box<CommError>),
    /// Not (yet) received: post the receive and wait the general way.
    Post,
}

/// Copies an eager message into the receive's buffer.
#[inline]
fn copy_eager(r: &PostedRecv, src: u32, tag: i32, data: &[u8]) -> Result<Status> {
    if data.len() > r.cap {
        return Err(CommError::Truncated {
            message_len: data.len(),
            buffer_len: r.cap,
        });
    }
    // SAFETY: `r.buf` points to a live buffer of `r.cap` bytes, lent to the receive until it
    // completes (the request's borrow, or the blocking call's); data.len() <= r.cap.
    unsafe { ibdyn_shm::copy_bytes(data.as_ptr(), r.buf, data.len()) };
    Ok(Status {
        source: src as i32,
        tag,
        count: data.len(),
    })
}

#[inline]
fn matches(ctx: u64, src: i32, tag: i32, m_ctx: u64, m_src: u32, m_tag: i32) -> bool {
    ctx == m_ctx && (src == ANY_SOURCE || src as u32 == m_src) && (tag == ANY_TAG || tag == m_tag)
}

pub(crate) struct Engine {
    rx: RecvQueue,
    pub st: State,
    /// How long an idle wait spins before yielding (fewer when processes share cores).
    spins: u32,
}

/// Everything but the receive queue, so a packet can be handled in place while the queue is borrowed.
pub(crate) struct State {
    pub pmi: PmiClient,
    pub me: Gpid,
    pub card: ProcCard,
    pub fabric: Option<Fabric>,
    pub peers: PeerTable,
    reqs: ReqTable,
    posted: VecDeque<u64>,
    unexpected: VecDeque<Unexpected>,
    pub eager_limit: usize,
    cma: bool,
    streaming: usize,
    events: Vec<Event>,
    polls: u64,
    /// Set once the fabric carries traffic: from then on every progress pass polls it.
    fabric_active: bool,
    /// Set while a control datagram is awaited (idle waits then block on the fabric).
    pub expect_control: bool,
    /// Malformed packets dropped so far.
    pub malformed: u64,
    /// Control datagrams received over the fabric, for the dynamic-process layer.
    pub control_inbox: VecDeque<(ibdyn_verbs::AddressCard, Vec<u8>)>,
    /// Control datagrams that were never acknowledged.
    pub control_failures: VecDeque<(ibdyn_verbs::AddressCard, String)>,
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
            shm_name: rx.name().to_string(),
            fabric: fabric
                .as_ref()
                .map(|f| f.card().to_bytes())
                .unwrap_or_default(),
        };
        let shm_limit = rx.max_payload().saturating_sub(HEADER_LEN);
        let spins = spins_for(&pmi);
        // Consumed cells go back to the senders when this process is idle (see wait_until),
        // not between a packet's arrival and the reply it triggers.
        rx.set_deferred_release(true);
        Engine {
            spins,
            rx,
            st: State {
                pmi,
                me,
                card,
                fabric,
                peers: PeerTable::default(),
                reqs: ReqTable::default(),
                posted: VecDeque::new(),
                unexpected: VecDeque::new(),
                eager_limit: eager_limit.min(shm_limit),
                cma,
                streaming: 0,
                events: Vec::new(),
                polls: 0,
                fabric_active: false,
                expect_control: false,
                malformed: 0,
                control_inbox: VecDeque::new(),
                control_failures: VecDeque::new(),
            },
        }
    }

    /// Chooses the idle spin count again (the process mapping may have come in since `new`).
    pub fn retune_spins(&mut self) {
        self.spins = spins_for(&self.st.pmi);
    }

    /// One pass over every endpoint. Returns whether anything happened.
    #[inline]
    pub fn progress(&mut self) -> Result<bool> {
        let Engine { rx, st, .. } = self;
        let mut did = false;
        for _ in 0..64 {
            if rx.try_recv(|p| st.handle_logged(p)).is_none() {
                break;
            }
            did = true;
        }
        Ok(st.progress_others(true)? || did)
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
        if buf.len() <= self.st.eager_limit {
            return self
                .st
                .push(to, &[&Header::encode_eager(tag, ctx, src_rank), buf]);
        }
        match self.st.isend(ctx, src_rank, to, dest_rank, tag, buf)? {
            SendStart::Done(_) => Ok(()),
            SendStart::Pending(id) => self.wait(id).map(|_| ()),
        }
    }

    /// A blocking receive. When no other receive is posted and nothing waits unmatched, an
    /// eager message for it is copied straight from the queue cell into `r.buf` while the wait
    /// spins, with no entry in the request table. Anything else (a rendezvous, a message that
    /// came unexpected, a wait that outlasts the spinning) takes the general path, which also
    /// checks the peer's liveness.
    pub fn recv(&mut self, r: PostedRecv) -> Result<Status> {
        if self.st.posted.is_empty() && self.st.unexpected.is_empty() {
            match self.recv_direct(&r) {
                Direct::Received(status) => return Ok(status),
                Direct::Failed(e) => return Err(*e),
                Direct::Post => {}
            }
        }
        let id = self.st.irecv(r)?;
        self.wait(id)
    }

    fn recv_direct(&mut self, r: &PostedRecv) -> Direct {
        let mut backoff = Backoff::new(self.spins);
        loop {
            let Engine { rx, st, .. } = self;
            let mut did = false;
            for _ in 0..64 {
                let step = rx.try_recv(|p| {
                    if let Some((ctx, src, tag, body)) = Header::decode_eager(p) {
                        if matches(r.ctx, r.src, r.tag, ctx, src, tag) {
                            return Some(match copy_eager(r, src, tag, body) {
                                Ok(status) => Direct::Received(status),
                                Err(e) => Direct::Failed(Box::new(e)),
                            });
                        }
                    }
                    st.handle_logged(p);
                    None
                });
                match step {
                    None => break,
                    Some(Some(got)) => return got,
                    Some(None) => did = true,
                }
            }
            match st.progress_others(false) {
                Ok(more) => did |= more,
                Err(e) => return Direct::Failed(Box::new(e)),
            }
            if !st.unexpected.is_empty() {
                return Direct::Post; // maybe ours (a rendezvous, or from the fabric)
            }
            if did {
                backoff.reset();
                continue;
            }
            rx.release_consumed();
            match backoff.step() {
                Step::Spin => std::hint::spin_loop(),
                _ => return Direct::Post,
            }
        }
    }

    /// Progresses until `done` holds. Idle time backs off; peers the wait depends on are checked
    /// for liveness now and then, so a dead peer ends the wait with an error.
    pub fn wait_until(&mut self, mut done: impl FnMut(&mut State) -> bool) -> Result<()> {
        let mut backoff = Backoff::new(self.spins);
        loop {
            if done(&mut self.st) {
                return Ok(());
            }
            if self.progress()? {
                backoff.reset();
                continue;
            }
            self.idle(&mut backoff);
        }
    }

    fn block(&mut self, t: Duration) {
        // With fabric traffic (or a control datagram awaited) block in the fabric's poll, which
        // wakes on its sockets; shared-memory packets then wait at most 2 ms. Otherwise block on
        // the shared-memory doorbell, which senders ring.
        let fabric_first = self.st.fabric_active || self.st.expect_control;
        // Packets waiting for room in a peer's full queue: nothing rings us when the peer frees
        // cells, so look again soon.
        let t = if self.st.peers.has_backlog() {
            t.min(BACKLOG_RETRY)
        } else {
            t
        };
        match self.st.fabric.as_mut() {
            Some(f) if fabric_first => f.wait(t.min(Duration::from_millis(2))),
            _ => self.rx.wait(t),
        }
        // An idle process must still answer connect requests promptly.
        if let Err(e) = self.st.progress_fabric() {
            tracing::debug!("fabric progress: {e}");
        }
    }

    /// Waits for request `id` and returns its result.
    #[inline]
    pub fn wait(&mut self, id: u64) -> Result<Status> {
        if let Some(r) = self.st.reqs.take_done(id) {
            return r;
        }
        self.wait_slow(id)
    }

    /// `wait_until` for one request, without the closure's bookkeeping on the hot path.
    #[inline(never)]
    fn wait_slow(&mut self, id: u64) -> Result<Status> {
        let mut backoff = Backoff::new(self.spins);
        loop {
            if self.progress()? {
                if let Some(r) = self.st.reqs.take_done(id) {
                    return r;
                }
                backoff.reset();
                continue;
            }
            if self.idle(&mut backoff) {
                // Blocking progressed the fabric, or a liveness check failed the request.
                if let Some(r) = self.st.reqs.take_done(id) {
                    return r;
                }
            }
        }
    }

    /// One idle step of a wait: hands consumed cells back, then spins, yields or blocks.
    /// Returns whether it blocked (requests may then have completed or failed).
    #[inline]
    fn idle(&mut self, backoff: &mut Backoff) -> bool {
        self.rx.release_consumed();
        match backoff.step() {
            Step::Spin => std::hint::spin_loop(),
            Step::Yield => std::thread::yield_now(),
            Step::Block(t) => {
                self.block(t);
                if backoff.blocks().is_multiple_of(LIVENESS_EVERY) {
                    self.st.check_liveness();
                }
                return true;
            }
        }
        false
    }

    /// Like `wait_until`, but blocks as soon as there is nothing to do: for waits of
    /// milliseconds (a spawn's wire-up), where spinning would only take the core from the
    /// processes being waited for.
    pub fn wait_blocking_until(&mut self, mut done: impl FnMut(&mut State) -> bool) -> Result<()> {
        loop {
            if done(&mut self.st) {
                return Ok(());
            }
            if !self.progress()? {
                self.block(Duration::from_millis(1));
            }
        }
    }
}

impl State {
    /// The result of `id` if it has completed (the request is then gone).
    #[inline]
    pub fn take_done(&mut self, id: u64) -> Option<Result<Status>> {
        self.reqs.take_done(id)
    }

    pub fn is_done(&mut self, id: u64) -> bool {
        !matches!(self.reqs.get_mut(id), Some(st) if !matches!(st, ReqState::Done(_)))
    }

    /// Drops a request the user no longer waits for: a posted receive is cancelled.
    /// Returns false if it must still complete (data is moving) before it can go.
    pub fn cancel(&mut self, id: u64) -> bool {
        match self.reqs.get_mut(id) {
            Some(ReqState::RecvPosted(_)) => {
                self.posted.retain(|&p| p != id);
                self.reqs.remove(id);
                true
            }
            Some(ReqState::Done(_)) | None => {
                self.reqs.remove(id);
                true
            }
            Some(_) => false,
        }
    }

    // ---- peers and routes ----

    pub fn peer(&mut self, g: Gpid) -> Result<&mut Peer> {
        if self.peers.get_mut(g).is_none() {
            let card = self.card_of(g)?;
            let p = Peer::open(card, &self.card.node_uid)?;
            tracing::debug!(
                "route to {g}: {}",
                if matches!(p.route, Route::Shm(_)) {
                    "shm"
                } else {
                    "fabric"
                }
            );
            self.peers.insert(g, p);
        }
        Ok(self.peers.get_mut(g).expect("just inserted"))
    }

    pub fn card_of(&mut self, g: Gpid) -> Result<ProcCard> {
        if g == self.me {
            return Ok(self.card.clone());
        }
        if let Some(c) = self.peers.known_cards.get(&g) {
            return Ok(c.clone());
        }
        let bytes = if g.job == self.me.job {
            self.pmi.get_wait_bytes(&card_key(g.rank), CARD_TIMEOUT)?
        } else {
            // A process of another job (spawned, or connected): its job's key-value space.
            self.pmi.get_wait_bytes_from(
                &ibdyn_pmi::kvsname_of(g.job),
                &card_key(g.rank),
                CARD_TIMEOUT,
            )?
        };
        let card = ProcCard::from_bytes(&bytes)?;
        if card.gpid != g {
            return Err(CommError::Malformed(format!(
                "the card published for {g} names {}",
                card.gpid
            )));
        }
        Ok(card)
    }

    /// Queues one packet to `to`, in order behind anything queued before.
    #[inline]
    pub fn push(&mut self, to: Gpid, parts: &[&[u8]]) -> Result<()> {
        // The common case in one table lookup: a live same-node peer with room in its queue.
        if let Some(peer) = self.peers.get_mut(to) {
            if let (Route::Shm(q), None, true) = (&peer.route, &peer.dead, peer.backlog.is_empty())
            {
                if q.try_send(parts)? {
                    return Ok(());
                }
            }
        }
        self.push_slow(to, parts)
    }

    #[inline(never)]
    fn push_slow(&mut self, to: Gpid, parts: &[&[u8]]) -> Result<()> {
        if !self.peers.contains(to) {
            self.peer(to)?;
        }
        let State {
            peers,
            fabric,
            fabric_active,
            ..
        } = self;
        let peer = peers.get_mut(to).expect("peer opened above");
        if let Some(why) = &peer.dead {
            return Err(CommError::PeerDead {
                peer: peer.describe(),
                detail: why.clone(),
            });
        }
        match &peer.route {
            Route::Shm(q) => {
                if !(peer.backlog.is_empty() && q.try_send(parts)?) {
                    peer.backlog.push_back(parts.concat());
                    peers.queued += 1;
                }
            }
            Route::Net(card) => {
                let f = fabric.as_mut().expect("a fabric route implies a fabric");
                f.send(to.to_u64(), card, parts)?;
                *fabric_active = true;
            }
        }
        Ok(())
    }

    fn flush_backlogs(&mut self) -> Result<bool> {
        let mut sent = 0;
        for peer in self.peers.iter_mut() {
            if let Route::Shm(q) = &peer.route {
                while let Some(front) = peer.backlog.front() {
                    if !q.try_send(&[front])? {
                        break;
                    }
                    peer.backlog.pop_front();
                    sent += 1;
                }
            }
        }
        self.peers.queued -= sent;
        Ok(sent > 0)
    }

    fn send_ctl(&mut self, to: Gpid, kind: Kind, word: u64, body: &[u8]) -> Result<()> {
        let h = Header {
            kind,
            tag: 0,
            ctx: 0,
            src: 0,
            from: self.me.to_u64(),
            word,
        };
        self.push(to, &[&h.encode()[..], body])
    }

    // ---- sends and receives ----

    /// Starts a send of `buf` to `to`: `SendStart::Done` when the data has left (eager, below
    /// the limit), `SendStart::Pending(id)` for a rendezvous, during which the caller keeps
    /// `buf` alive and unchanged.
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
        let status = Status {
            source: dest_rank,
            tag,
            count: buf.len(),
        };
        if buf.len() <= self.eager_limit {
            self.push(to, &[&Header::encode_eager(tag, ctx, src_rank), buf])?;
            return Ok(SendStart::Done(status));
        }
        self.isend_rndv(ctx, src_rank, to, tag, buf, status)
    }

    #[inline(never)]
    fn isend_rndv(
        &mut self,
        ctx: u64,
        src_rank: u32,
        to: Gpid,
        tag: i32,
        buf: &[u8],
        status: Status,
    ) -> Result<SendStart> {
        let net = matches!(self.peer(to)?.route, Route::Net(_));
        let exposed = if net {
            let f = self
                .fabric
                .as_mut()
                .expect("a fabric route implies a fabric");
            let rb = f.expose(buf.as_ptr(), buf.len())?;
            Some((rb.addr, rb.len, rb.rkey))
        } else {
            None
        };
        let send = RndvSend {
            ptr: buf.as_ptr(),
            len: buf.len(),
            to,
            status,
            exposed,
        };
        let id = self.reqs.insert(ReqState::SendRndv(send));
        let rts = RtsBody {
            len: buf.len() as u64,
            pid: self.card.pid,
            addr: exposed.map_or(buf.as_ptr() as u64, |e| e.0),
            rkey: exposed.map_or(0, |e| e.2),
        };
        let h = Header {
            kind: Kind::Rts,
            tag,
            ctx,
            src: src_rank,
            from: self.me.to_u64(),
            word: id,
        };
        if let Err(e) = self.push(to, &[&h.encode()[..], &rts.encode()]) {
            if let (Some((addr, len, rkey)), Some(f)) = (exposed, self.fabric.as_mut()) {
                f.release(&RemoteBuf { addr, len, rkey });
            }
            self.reqs.remove(id);
            return Err(e);
        }
        Ok(SendStart::Pending(id))
    }

    /// Posts a receive into `buf[..cap]`; matches the unexpected queue first.
    pub fn irecv(&mut self, r: PostedRecv) -> Result<u64> {
        let id = self.reqs.insert(ReqState::RecvPosted(r));
        if let Some(i) = self
            .unexpected
            .iter()
            .position(|u| matches(r.ctx, r.src, r.tag, u.ctx, u.src, u.tag))
        {
            let u = self.unexpected.remove(i).expect("index from position");
            self.deliver(id, r, u.src, u.tag, u.body);
        } else {
            self.posted.push_back(id);
        }
        Ok(id)
    }

    /// Looks for a matching message without receiving it.
    pub fn iprobe(&self, ctx: u64, src: i32, tag: i32) -> Option<Status> {
        self.unexpected
            .iter()
            .find(|u| matches(ctx, src, tag, u.ctx, u.src, u.tag))
            .map(|u| Status {
                source: u.src as i32,
                tag: u.tag,
                count: u.len(),
            })
    }

    #[inline]
    fn match_posted(&mut self, ctx: u64, src: u32, tag: i32) -> Option<(u64, PostedRecv)> {
        // Usually the oldest posted receive is the one.
        let &front = self.posted.front()?;
        if let Some(ReqState::RecvPosted(r)) = self.reqs.get_mut(front) {
            if matches(r.ctx, r.src, r.tag, ctx, src, tag) {
                let r = *r;
                self.posted.pop_front();
                return Some((front, r));
            }
        }
        let reqs = &mut self.reqs;
        let i = self.posted.iter().position(|&id| match reqs.get_mut(id) {
            Some(ReqState::RecvPosted(r)) => matches(r.ctx, r.src, r.tag, ctx, src, tag),
            _ => false,
        })?;
        let id = self.posted.remove(i)?;
        match self.reqs.get_mut(id) {
            Some(ReqState::RecvPosted(r)) => Some((id, *r)),
            _ => None,
        }
    }

    fn set(&mut self, id: u64, st: ReqState) {
        if let Some(s) = self.reqs.get_mut(id) {
            *s = st;
        }
    }

    /// A matched message meets its receive.
    fn deliver(&mut self, id: u64, r: PostedRecv, src: u32, tag: i32, body: UnexpectedBody) {
        match body {
            UnexpectedBody::Eager(data) => self.deliver_eager(id, r, src, tag, &data),
            UnexpectedBody::Rts {
                from,
                sender_req,
                rts,
            } => self.start_pull(id, r, src, tag, from, sender_req, rts),
        }
    }

    #[inline]
    fn deliver_eager(&mut self, id: u64, r: PostedRecv, src: u32, tag: i32, data: &[u8]) {
        let result = copy_eager(&r, src, tag, data);
        self.set(id, ReqState::Done(result));
    }

    #[allow(clippy::too_many_arguments)]
    fn start_pull(
        &mut self,
        id: u64,
        r: PostedRecv,
        src: u32,
        tag: i32,
        from: Gpid,
        sender_req: u64,
        rts: RtsBody,
    ) {
        let len = rts.len as usize;
        let status = Status {
            source: src as i32,
            tag,
            count: len,
        };
        if len > r.cap {
            self.set(
                id,
                ReqState::Done(Err(CommError::Truncated {
                    message_len: len,
                    buffer_len: r.cap,
                })),
            );
            // The sender's part is done either way: release it.
            if let Err(e) = self.send_ctl(from, Kind::Fin, sender_req, &[]) {
                tracing::debug!("could not release the sender {from} after a truncation: {e}");
            }
            return;
        }
        let result = self.pull(id, r.buf, status, from, sender_req, rts);
        if let Err(e) = result {
            self.set(id, ReqState::Done(Err(e)));
        }
    }

    fn pull(
        &mut self,
        id: u64,
        buf: *mut u8,
        status: Status,
        from: Gpid,
        sender_req: u64,
        rts: RtsBody,
    ) -> Result<()> {
        let len = status.count;
        let route_net = match &self.peer(from)?.route {
            Route::Net(card) => Some(*card),
            Route::Shm(_) => None,
        };
        if let Some(card) = route_net {
            let remote = RemoteBuf {
                addr: rts.addr,
                len: rts.len,
                rkey: rts.rkey,
            };
            let f = self
                .fabric
                .as_mut()
                .expect("a fabric route implies a fabric");
            // SAFETY: `buf` holds at least `len` bytes and stays borrowed by the request until
            // the read completes (ReadDone/ReadFailed), which is when the request finishes.
            unsafe { f.read(from.to_u64(), &card, remote, buf, len, id)? };
            self.set(
                id,
                ReqState::RecvPulling {
                    status,
                    from,
                    sender_req,
                },
            );
            return Ok(());
        }
        if self.cma {
            // SAFETY: as above; the slice is only used for this call.
            let local = unsafe { std::slice::from_raw_parts_mut(buf, len) };
            match ibdyn_shm::cma::read(rts.pid, rts.addr as usize, local) {
                Ok(()) => {
                    self.set(id, ReqState::Done(Ok(status)));
                    return self.send_ctl(from, Kind::Fin, sender_req, &[]);
                }
                Err(e) if crate::cma_refused(&e) => {
                    tracing::info!("CMA refused ({e}); large messages now go through a pipelined copy in shared memory");
                    self.cma = false;
                }
                Err(e) => {
                    return Err(CommError::PeerDead {
                        peer: from.to_string(),
                        detail: format!("reading its buffer failed: {e}"),
                    })
                }
            }
        }
        if len == 0 {
            self.set(id, ReqState::Done(Ok(status)));
            return self.send_ctl(from, Kind::Fin, sender_req, &[]);
        }
        self.set(
            id,
            ReqState::RecvFrags {
                buf,
                got: 0,
                status,
                from,
            },
        );
        self.send_ctl(from, Kind::Cts, sender_req, &id.to_le_bytes())
    }

    fn finish_send(&mut self, id: u64, result: Result<Status>) {
        let exposed = match self.reqs.get_mut(id) {
            Some(ReqState::SendRndv(s)) | Some(ReqState::SendStream { send: s, .. }) => s.exposed,
            _ => return,
        };
        if let (Some((addr, len, rkey)), Some(f)) = (exposed, self.fabric.as_mut()) {
            f.release(&RemoteBuf { addr, len, rkey });
        }
        if matches!(self.reqs.get_mut(id), Some(ReqState::SendStream { .. })) {
            self.streaming -= 1;
        }
        self.set(id, ReqState::Done(result));
    }

    // ---- incoming packets ----

    /// Handles one packet; a malformed one is counted and logged. Returns whether it was good.
    #[inline]
    fn handle_logged(&mut self, p: &[u8]) -> bool {
        match self.handle_packet(p) {
            Ok(()) => true,
            Err(e) => {
                self.malformed += 1;
                tracing::warn!("dropped a packet: {e}");
                false
            }
        }
    }

    /// The endpoints other than the receive queue: backlogs, fragment streams, the fabric.
    /// Until the fabric carries traffic it only has connect requests to deliver, so it is
    /// looked at rarely, and not at all without `look_for_connects` (a short spin, after
    /// which the caller waits the general way).
    #[inline]
    fn progress_others(&mut self, look_for_connects: bool) -> Result<bool> {
        let mut did = false;
        if self.peers.has_backlog() {
            did |= self.flush_backlogs()?;
        }
        if self.streaming > 0 {
            did |= self.stream_fragments()?;
        }
        if self.fabric_active {
            did |= self.progress_fabric()?;
        } else if look_for_connects {
            self.polls += 1;
            if self.polls.is_multiple_of(1024) {
                did |= self.progress_fabric()?;
            }
        }
        Ok(did)
    }

    /// Handles one packet, in place. Only malformed packets are errors here; every other
    /// failure lands on the request it concerns.
    #[inline]
    pub fn handle_packet(&mut self, p: &[u8]) -> Result<()> {
        if let Some((ctx, src, tag, body)) = Header::decode_eager(p) {
            self.handle_eager(ctx, src, tag, body);
            return Ok(());
        }
        self.handle_control(p)
    }

    #[inline]
    fn handle_eager(&mut self, ctx: u64, src: u32, tag: i32, body: &[u8]) {
        if let Some((id, r)) = self.match_posted(ctx, src, tag) {
            self.deliver_eager(id, r, src, tag, body);
        } else {
            self.unexpected.push_back(Unexpected {
                ctx,
                src,
                tag,
                body: UnexpectedBody::Eager(body.to_vec()),
            });
        }
    }

    /// Every packet but eager ones.
    #[inline(never)]
    fn handle_control(&mut self, p: &[u8]) -> Result<()> {
        let (h, body) = Header::decode(p)?;
        match h.kind {
            Kind::Eager => self.handle_eager(h.ctx, h.src, h.tag, body),
            Kind::Rts => {
                let rts = RtsBody::decode(body)?;
                let from = Gpid::from_u64(h.from);
                if let Some((id, r)) = self.match_posted(h.ctx, h.src, h.tag) {
                    self.start_pull(id, r, h.src, h.tag, from, h.word, rts);
                } else {
                    self.unexpected.push_back(Unexpected {
                        ctx: h.ctx,
                        src: h.src,
                        tag: h.tag,
                        body: UnexpectedBody::Rts {
                            from,
                            sender_req: h.word,
                            rts,
                        },
                    });
                }
            }
            Kind::Fin => match self.reqs.get_mut(h.word) {
                Some(ReqState::SendRndv(s)) => {
                    let status = s.status;
                    self.finish_send(h.word, Ok(status));
                }
                _ => {
                    return Err(CommError::Malformed(format!(
                        "FIN for unknown send {:#x}",
                        h.word
                    )))
                }
            },
            Kind::Cts => {
                let recv_req = crate::packet::Reader::new(body).u64()?;
                match self.reqs.get_mut(h.word) {
                    Some(ReqState::SendRndv(s)) => {
                        let send = *s;
                        self.set(
                            h.word,
                            ReqState::SendStream {
                                send,
                                recv_req,
                                sent: 0,
                            },
                        );
                        self.streaming += 1;
                    }
                    _ => {
                        return Err(CommError::Malformed(format!(
                            "CTS for unknown send {:#x}",
                            h.word
                        )))
                    }
                }
            }
            Kind::Frag => {
                let mut rd = crate::packet::Reader::new(body);
                let offset = rd.u64()? as usize;
                let data = rd.rest();
                let done = match self.reqs.get_mut(h.word) {
                    Some(ReqState::RecvFrags {
                        buf, got, status, ..
                    }) => {
                        if offset
                            .checked_add(data.len())
                            .is_none_or(|end| end > status.count)
                        {
                            return Err(CommError::Malformed(format!(
                                "fragment [{offset}, +{}) outside a {}-byte message",
                                data.len(),
                                status.count
                            )));
                        }
                        // SAFETY: the receive buffer holds status.count bytes (checked against
                        // the posted capacity at match time); the range was checked above.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                data.as_ptr(),
                                buf.add(offset),
                                data.len(),
                            )
                        };
                        *got += data.len();
                        (*got == status.count).then_some(*status)
                    }
                    _ => {
                        return Err(CommError::Malformed(format!(
                            "fragment for unknown receive {:#x}",
                            h.word
                        )))
                    }
                };
                if let Some(status) = done {
                    self.set(h.word, ReqState::Done(Ok(status)));
                }
            }
            Kind::Hello => {}
        }
        Ok(())
    }

    /// Pushes fragments of streaming sends (CMA refused) while the receivers' queues take them.
    fn stream_fragments(&mut self) -> Result<bool> {
        let mut did = false;
        let ids: Vec<u64> = self
            .reqs
            .iter_mut()
            .filter(|(_, st)| matches!(st, ReqState::SendStream { .. }))
            .map(|(id, _)| id)
            .collect();
        for id in ids {
            let Some(ReqState::SendStream {
                send,
                recv_req,
                sent,
            }) = self.reqs.get_mut(id)
            else {
                continue;
            };
            let (send, recv_req, mut off) = (*send, *recv_req, *sent);
            let me = self.me.to_u64();
            let peer = self.peer(send.to)?;
            let Route::Shm(q) = &peer.route else { continue };
            let chunk_max = q.max_payload().saturating_sub(HEADER_LEN + 8).max(1);
            while off < send.len {
                let n = chunk_max.min(send.len - off);
                let h = Header {
                    kind: Kind::Frag,
                    tag: 0,
                    ctx: 0,
                    src: 0,
                    from: me,
                    word: recv_req,
                };
                // SAFETY: the send buffer stays borrowed by the request until it completes.
                let data = unsafe { std::slice::from_raw_parts(send.ptr.add(off), n) };
                if !q.try_send(&[&h.encode()[..], &(off as u64).to_le_bytes(), data])? {
                    break;
                }
                off += n;
                did = true;
            }
            if off == send.len {
                self.finish_send(id, Ok(send.status));
            } else if let Some(ReqState::SendStream { sent, .. }) = self.reqs.get_mut(id) {
                *sent = off;
            }
        }
        Ok(did)
    }

    fn progress_fabric(&mut self) -> Result<bool> {
        let Some(f) = self.fabric.as_mut() else {
            return Ok(false);
        };
        let mut events = std::mem::take(&mut self.events);
        f.progress(&mut events)?;
        let did = !events.is_empty();
        // Connection traffic makes every progress pass poll the fabric; control datagrams
        // (a spawn's wire-up) do not: they are awaited explicitly.
        self.fabric_active |= events
            .iter()
            .any(|e| !matches!(e, Event::Control { .. } | Event::ControlFailed { .. }));
        for ev in events.drain(..) {
            match ev {
                Event::Message { data, .. } => {
                    if let Err(e) = self.handle_packet(&data) {
                        self.malformed += 1;
                        tracing::warn!("dropped a packet from the fabric: {e}");
                    }
                }
                Event::ReadDone { token } => {
                    if let Some(ReqState::RecvPulling {
                        status,
                        from,
                        sender_req,
                        ..
                    }) = self.reqs.get_mut(token)
                    {
                        let (status, from, sender_req) = (*status, *from, *sender_req);
                        self.set(token, ReqState::Done(Ok(status)));
                        if let Err(e) = self.send_ctl(from, Kind::Fin, sender_req, &[]) {
                            tracing::debug!("could not send FIN to {from}: {e}");
                        }
                    }
                }
                Event::ReadFailed { token, error } => {
                    self.set(token, ReqState::Done(Err(CommError::Verbs(error))));
                }
                Event::Control { from, data } => self.control_inbox.push_back((from, data)),
                Event::ControlFailed { to, error } => {
                    tracing::debug!("control datagram to {to:?} failed: {error}");
                    self.control_failures.push_back((to, error.to_string()));
                }
                // This layer issues no RDMA writes.
                Event::WriteDone { .. } | Event::WriteFailed { .. } => {}
                Event::PeerFailed { peer, error } => {
                    self.fail_peer(Gpid::from_u64(peer), &error.to_string())
                }
            }
        }
        self.events = events;
        Ok(did)
    }

    // ---- dead peers ----

    /// Checks the processes that pending requests depend on; fails the requests of dead ones.
    pub fn check_liveness(&mut self) {
        let mut deps: Vec<Gpid> = Vec::new();
        for (_, st) in self.reqs.iter_mut() {
            let g = match st {
                ReqState::RecvPosted(r) => r.peer,
                ReqState::RecvPulling { from, .. } | ReqState::RecvFrags { from, .. } => {
                    Some(*from)
                }
                ReqState::SendRndv(s) | ReqState::SendStream { send: s, .. } => Some(s.to),
                ReqState::Done(_) => None,
            };
            if let Some(g) = g {
                if !deps.contains(&g) {
                    deps.push(g);
                }
            }
        }
        for g in deps {
            // A peer we only receive from has no route yet: open it to learn its process.
            if self.peers.get_mut(g).is_none() {
                if let Err(e) = self.peer(g) {
                    self.fail_peer(g, &format!("cannot reach it: {e}"));
                    continue;
                }
            }
            let dead = match self.peers.get_mut(g) {
                Some(p) => (!p.check_alive()).then(|| p.dead.clone().unwrap_or_default()),
                None => None,
            };
            if let Some(why) = dead {
                self.fail_peer(g, &why);
            }
        }
    }

    fn fail_peer(&mut self, g: Gpid, why: &str) {
        let desc = match self.peers.get_mut(g) {
            Some(p) => {
                p.dead.get_or_insert_with(|| why.to_string());
                let dropped = p.backlog.len();
                p.backlog.clear();
                let desc = p.describe();
                self.peers.queued -= dropped;
                desc
            }
            None => g.to_string(),
        };
        tracing::debug!("peer {desc} failed: {why}");
        let mut failed = Vec::new();
        for (id, st) in self.reqs.iter_mut() {
            let hit = match st {
                ReqState::RecvPosted(r) => r.peer == Some(g),
                ReqState::RecvPulling { from, .. } | ReqState::RecvFrags { from, .. } => *from == g,
                ReqState::SendRndv(s) | ReqState::SendStream { send: s, .. } => s.to == g,
                ReqState::Done(_) => false,
            };
            if hit {
                failed.push(id);
            }
        }
        for id in failed {
            let err = CommError::PeerDead {
                peer: desc.clone(),
                detail: why.to_string(),
            };
            if matches!(
                self.reqs.get_mut(id),
                Some(ReqState::SendRndv(_) | ReqState::SendStream { .. })
            ) {
                self.finish_send(id, Err(err));
            } else {
                self.posted.retain(|&p| p != id);
                self.set(id, ReqState::Done(Err(err)));
            }
        }
    }

    /// Whether every queued packet has left this process (also those the fabric holds while
    /// a connection is being made).
    pub fn flushed(&self) -> bool {
        !self.peers.has_backlog() && self.fabric.as_ref().is_none_or(|f| f.flushed())
    }
}

/// Spins of an idle wait: fewer when this node's ranks outnumber the usable cores.
fn spins_for(pmi: &PmiClient) -> u32 {
    let local = pmi.local_ranks().len().max(1);
    if local > ibdyn_shm::usable_cores() {
        SPINS_SHARED
    } else {
        SPINS_DEDICATED
    }
}
