//! The point-to-point protocol above the routes: eager messages; the rendezvous (request to
//! send, pull, FIN; or, where CMA is refused, clear to send and fragments); matching; the
//! request table; peers, their address cards and their failures. Every route-specific step
//! goes through `Routes`.

mod cancel;
mod failure;
mod held;
mod recv;
mod rndv;

pub(crate) use recv::copy_eager;
use recv::Unexpected;

use crate::error::{CommError, Result};
use crate::gpid::{Gpid, ProcCard};
use crate::matching::{Envelope, Matcher};
use crate::net_route::NetRoute;
use crate::packet::{Header, Kind};
use crate::peers::{Peer, PeerTable};
use crate::reqs::{ReqState, ReqTable, Status};
use crate::route::{Link, Routes, Sink};
use crate::shm_route::{ShmLink, ShmRoute};
use ibdyn_pmi::PmiClient;
use ibdyn_verbs::VerbsError;
use std::collections::HashMap;
use std::time::Duration;

/// How long a process waits for a peer's address card to appear.
const CARD_TIMEOUT: Duration = Duration::from_secs(60);

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

pub(crate) struct Protocol {
    pmi: PmiClient,
    me: Gpid,
    card: ProcCard,
    peers: PeerTable,
    reqs: ReqTable,
    /// Posted receives are named by their request ids.
    matcher: Matcher<u64, Unexpected>,
    /// Messages a matched probe took out of matching (MPI_Mprobe), by message id.
    claimed: HashMap<u64, (Envelope, Unexpected)>,
    next_claim: u64,
    eager_limit: usize,
    /// Sends pushing fragments (CMA refused).
    streaming: usize,
    /// Eager sends whose packets wait in this process for the fabric (see `held`).
    held: usize,
    /// Set by a push that took the fabric route (see `held_back`).
    pushed_to_fabric: bool,
    /// Malformed packets dropped so far.
    malformed: u64,
    /// Liveness checks so far (see `check_liveness`).
    liveness_rounds: u64,
    /// Peers found dead so far (see `fail_peer`).
    deaths: u64,
}

impl Protocol {
    pub fn new(pmi: PmiClient, me: Gpid, card: ProcCard, eager_limit: usize) -> Protocol {
        Protocol {
            pmi,
            me,
            card,
            peers: PeerTable::default(),
            reqs: ReqTable::default(),
            matcher: Matcher::default(),
            claimed: HashMap::new(),
            next_claim: 0,
            eager_limit,
            streaming: 0,
            held: 0,
            pushed_to_fabric: false,
            malformed: 0,
            liveness_rounds: 0,
            deaths: 0,
        }
    }

    pub fn pmi(&mut self) -> &mut PmiClient {
        &mut self.pmi
    }

    pub fn pmi_ref(&self) -> &PmiClient {
        &self.pmi
    }

    pub fn me(&self) -> Gpid {
        self.me
    }

    pub fn card(&self) -> &ProcCard {
        &self.card
    }

    #[inline]
    pub fn eager_limit(&self) -> usize {
        self.eager_limit
    }

    /// Whether receives are posted or messages wait unmatched.
    #[inline]
    pub fn matching_idle(&self) -> bool {
        !self.matcher.has_posted() && !self.matcher.has_unexpected()
    }

    #[inline]
    pub fn has_unexpected(&self) -> bool {
        self.matcher.has_unexpected()
    }

    /// Unexpected messages kept so far (see `Matcher::held`).
    pub fn unexpected_held(&self) -> u64 {
        self.matcher.held()
    }

    /// Peers found dead so far: a service looks for its dead peers only when this changed.
    pub fn deaths(&self) -> u64 {
        self.deaths
    }

    /// Whether `g` is known dead.
    pub fn is_dead(&mut self, g: Gpid) -> bool {
        self.peers.get_mut(g).is_some_and(|p| p.dead.is_some())
    }

    // ---- requests ----

    /// The result of `id` if it has completed (the request is then gone).
    #[inline]
    pub fn take_done(&mut self, id: u64) -> Option<Result<Status>> {
        self.reqs.take_done(id)
    }

    pub fn is_done(&mut self, id: u64) -> bool {
        !matches!(self.reqs.get_mut(id), Some(st) if !matches!(st, ReqState::Done(_)))
    }

    /// Drops a request the user no longer waits for: a posted receive is cancelled, a held
    /// send's packet leaves without it (the fabric has its copy).
    /// Returns false if it must still complete (data is moving) before it can go.
    pub fn cancel(&mut self, id: u64) -> bool {
        match self.reqs.get_mut(id) {
            Some(ReqState::RecvPosted(_)) => {
                self.matcher.unpost(id);
                self.reqs.remove(id);
                true
            }
            Some(ReqState::SendHeld { .. }) => {
                self.held -= 1;
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

    fn set(&mut self, id: u64, st: ReqState) {
        if let Some(s) = self.reqs.get_mut(id) {
            *s = st;
        }
    }

    // ---- peers ----

    pub fn peer(&mut self, g: Gpid) -> Result<&mut Peer> {
        if self.peers.get_mut(g).is_none() {
            let card = self.card_of(g)?;
            let p = Peer::open(card, &self.card.node_uid)?;
            tracing::debug!(
                "route to {g}: {}",
                if matches!(p.link, Link::Shm(_)) {
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
        if let Some(c) = self.peers.known_card(g) {
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

    /// Makes a card known without asking the process manager for it.
    pub fn learn_card(&mut self, c: ProcCard) {
        self.peers.learn_card(c);
    }

    /// A peer `g` known dead (checked now for a same-node peer) with nothing of it left in
    /// `shm`'s queue, as the error to report.
    pub fn peer_failure(&mut self, shm: &ShmRoute, g: Gpid, during: &str) -> Option<CommError> {
        let p = self.peers.get_mut(g)?;
        p.gone(shm).then(|| CommError::PeerDead {
            peer: p.describe(),
            detail: during.into(),
        })
    }

    // ---- sending ----

    /// Queues one packet to `to`, in order behind anything queued before.
    #[inline]
    pub fn push(&mut self, r: &mut Routes<'_>, to: Gpid, parts: &[&[u8]]) -> Result<()> {
        // The common case in one table lookup: a live same-node peer with room in its queue.
        if let Some(peer) = self.peers.get_mut(to) {
            if let (Link::Shm(l), None) = (&peer.link, &peer.dead) {
                if l.try_send_now(parts)? {
                    return Ok(());
                }
            }
        }
        self.push_slow(r, to, parts)
    }

    #[inline(never)]
    fn push_slow(&mut self, r: &mut Routes<'_>, to: Gpid, parts: &[&[u8]]) -> Result<()> {
        let peer = self.peer(to)?;
        if let Some(why) = &peer.dead {
            return Err(CommError::PeerDead {
                peer: peer.describe(),
                detail: why.clone(),
            });
        }
        let net = matches!(peer.link, Link::Net(_));
        r.send(&mut peer.link, to, parts)?;
        self.pushed_to_fabric |= net;
        Ok(())
    }

    /// A same-node peer whose full queue holds packets of ours back, if any.
    pub(crate) fn link_waiting_for_room(&self) -> Option<&ShmLink> {
        self.peers.iter().find_map(|p| match &p.link {
            Link::Shm(l) if l.has_backlog() => Some(l),
            _ => None,
        })
    }

    /// Sends what waits in same-node peers' backlogs while their queues take it.
    fn flush_backlogs(&mut self, shm: &ShmRoute) -> Result<bool> {
        let mut did = false;
        for peer in self.peers.iter_mut() {
            if let Link::Shm(l) = &mut peer.link {
                did |= shm.flush(l)?;
            }
        }
        Ok(did)
    }

    fn send_ctl(
        &mut self,
        r: &mut Routes<'_>,
        to: Gpid,
        kind: Kind,
        word: u64,
        body: &[u8],
    ) -> Result<()> {
        let h = Header {
            kind,
            tag: 0,
            ctx: 0,
            src: 0,
            from: self.me.to_u64(),
            word,
        };
        self.push(r, to, &[&h.encode()[..], body])
    }

    /// Starts a send of `buf` to `to`: `SendStart::Done` when the data has left (eager, below
    /// the limit), `SendStart::Pending(id)` for a rendezvous, during which the caller keeps
    /// `buf` alive and unchanged.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn isend(
        &mut self,
        r: &mut Routes<'_>,
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
            self.push(r, to, &[&Header::encode_eager(tag, ctx, src_rank), buf])?;
            if self.held_back(r, to) {
                return Ok(SendStart::Pending(self.hold(to, status)));
            }
            return Ok(SendStart::Done(status));
        }
        self.isend_rndv(r, ctx, src_rank, to, tag, buf, status)
    }

    /// Starts a synchronous send (MPI_Issend): always a rendezvous, so it completes only
    /// once the receiver has matched it.
    #[allow(clippy::too_many_arguments)]
    pub fn issend(
        &mut self,
        r: &mut Routes<'_>,
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
        self.isend_rndv(r, ctx, src_rank, to, tag, buf, status)
    }

    /// Everything but the shared-memory receive queue: backlogs, fragment streams, the
    /// fabric (see `NetRoute::due` for `look_for_connects`).
    #[inline]
    pub fn progress_others(&mut self, r: &mut Routes<'_>, look_for_connects: bool) -> Result<bool> {
        let mut did = false;
        if r.shm.has_backlog() {
            did |= self.flush_backlogs(r.shm)?;
        }
        if self.streaming > 0 {
            did |= self.stream_fragments(r)?;
        }
        if self.held > 0 {
            did |= self.release_held(r);
        }
        if r.net.due(look_for_connects) {
            did |= self.progress_fabric(r.shm, r.net)?;
        }
        Ok(did)
    }

    /// Polls the fabric and handles what it delivers.
    pub fn progress_fabric(&mut self, shm: &ShmRoute, net: &mut NetRoute) -> Result<bool> {
        crate::route::Route::progress(net, &mut OnNet { proto: self, shm })
    }
}

/// Where the shared-memory route delivers: the protocol, with the fabric route to reply over.
pub(crate) struct OnShm<'a> {
    pub proto: &'a mut Protocol,
    pub net: &'a mut NetRoute,
}

impl<'s> Sink<&'s ShmRoute> for OnShm<'_> {
    #[inline]
    fn packet(&mut self, shm: &mut &'s ShmRoute, p: &[u8]) {
        let mut r = Routes {
            shm,
            net: &mut *self.net,
        };
        self.proto.handle_logged(&mut r, p);
    }

    // Shared memory reads in place and reports no failures of its own.
    fn read_done(&mut self, _: &mut &'s ShmRoute, _: u64) {}
    fn read_failed(&mut self, _: &mut &'s ShmRoute, _: u64, _: VerbsError) {}
    fn peer_failed(&mut self, _: &mut &'s ShmRoute, _: Gpid, _: &str) {}
}

/// Where the fabric route delivers: the protocol, with the shared-memory route to reply over.
struct OnNet<'a> {
    proto: &'a mut Protocol,
    shm: &'a ShmRoute,
}

impl Sink<NetRoute> for OnNet<'_> {
    fn packet(&mut self, net: &mut NetRoute, p: &[u8]) {
        let mut r = Routes { shm: self.shm, net };
        if let Err(e) = self.proto.handle_packet(&mut r, p) {
            self.proto.malformed += 1;
            let n = self.proto.malformed;
            tracing::warn!("dropped a packet from the fabric ({n} so far): {e}");
        }
    }

    fn read_done(&mut self, net: &mut NetRoute, token: u64) {
        let mut r = Routes { shm: self.shm, net };
        self.proto.read_done(&mut r, token);
    }

    fn read_failed(&mut self, _: &mut NetRoute, token: u64, error: VerbsError) {
        self.proto
            .set(token, ReqState::Done(Err(CommError::Verbs(error))));
    }

    fn peer_failed(&mut self, net: &mut NetRoute, peer: Gpid, why: &str) {
        let mut r = Routes { shm: self.shm, net };
        self.proto.fail_peer(&mut r, peer, why);
    }

    fn connect_slow(&mut self, net: &mut NetRoute, peer: Gpid, waited: Duration) {
        self.proto.connect_slow(net, peer, waited);
    }
}
