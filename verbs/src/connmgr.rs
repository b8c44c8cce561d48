//! On-demand RC connections, made over the UD control channel in three steps:
//!
//! 1. The first operation towards a peer creates a local RC endpoint and sends `Request` (this
//!    side is then the active one). Operations issued meanwhile wait in the peer's queue.
//! 2. The peer (the passive side) connects an endpoint of its own to it and sends `Reply`. Its
//!    endpoint is connected but the active side's is not yet: on `ib` a send now could reach a
//!    queue pair that is not ready to receive, so the passive side keeps queueing.
//! 3. The active side connects its endpoint, sends `Ready` and then its queue. The passive side
//!    sends from the first of `Ready` or a message arriving on the connection.
//!
//! Simultaneous connects: when both sides sent `Request` before either saw the other's, the
//! request of the smaller key wins. The larger key connects the endpoint it had already created
//! to the winner's request and answers it, becoming the passive side: its half-open endpoint is
//! the one that gets connected and its queue goes out on it, in order. The smaller key ignores the
//! losing request. One connection results whatever the order of arrival; an endpoint that is not
//! a peer's current one can break without the peer being declared failed.

use crate::card::AddressCard;
use crate::config::FabricConfig;
use crate::conn_wire::Handshake;
use crate::error::{Result, VerbsError};
use crate::fabric::Event;
use crate::provider::{Provider, RcEndpoint};
use crate::ud_channel::{answer_budget, UdChannel};
use crate::RemoteBuf;
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

/// An operation waiting for its connection.
pub(crate) enum Op {
    Send(Vec<u8>),
    Read {
        remote: RemoteBuf,
        local: usize,
        len: usize,
        token: u64,
    },
    Write {
        remote: RemoteBuf,
        local: usize,
        len: usize,
        token: u64,
    },
}

enum Link {
    /// We sent `Request` for endpoint `qp` and wait for `Reply`.
    Requested {
        qp: u32,
        req_seq: u64,
        since: Instant,
    },
    /// We connected `qp` to the peer's request and answered; we wait for `Ready` (or its first
    /// message) before sending.
    Answered {
        qp: u32,
        rep_seq: Option<u64>,
        since: Instant,
    },
    Connected {
        qp: u32,
    },
    Failed {
        reason: String,
    },
}

impl Link {
    fn qp(&self) -> Option<u32> {
        match *self {
            Link::Requested { qp, .. } | Link::Answered { qp, .. } | Link::Connected { qp } => {
                Some(qp)
            }
            Link::Failed { .. } => None,
        }
    }
}

struct Peer {
    card: AddressCard,
    link: Link,
    queue: VecDeque<Op>,
    /// When the handshake began (for `Event::ConnectSlow`).
    began: Instant,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnStats {
    pub connect_requests_sent: u64,
    pub connect_requests_received: u64,
    pub connect_replies_sent: u64,
    pub simultaneous_connects: u64,
    /// Breaks reported on endpoints that were no peer's current one (ignored).
    pub stale_endpoint_breaks: u64,
}

/// What handling a handshake message works with: the provider, the control channel, the time
/// and where events go.
pub(crate) struct Io<'a> {
    pub(crate) prov: &'a mut dyn Provider,
    pub(crate) ch: &'a mut UdChannel,
    pub(crate) now: Instant,
    pub(crate) out: &'a mut Vec<Event>,
}

pub(crate) struct ConnManager {
    local_key: u64,
    cfg: FabricConfig,
    peers: HashMap<u64, Peer>,
    by_qp: HashMap<u32, u64>,
    /// Peers in `Answered`: while none is, a received message needs no link check.
    answered: usize,
    pub(crate) stats: ConnStats,
}

impl ConnManager {
    pub(crate) fn new(cfg: &FabricConfig) -> Self {
        ConnManager {
            local_key: cfg.local_key,
            cfg: cfg.clone(),
            peers: HashMap::new(),
            by_qp: HashMap::new(),
            answered: 0,
            stats: ConnStats::default(),
        }
    }

    pub(crate) fn connection_count(&self) -> usize {
        self.peers
            .values()
            .filter(|p| matches!(p.link, Link::Connected { .. }))
            .count()
    }

    pub(crate) fn is_connected(&self, peer: u64) -> bool {
        matches!(
            self.peers.get(&peer).map(|p| &p.link),
            Some(Link::Connected { .. })
        )
    }

    /// True when no operation waits for a connection.
    pub(crate) fn quiescent(&self) -> bool {
        self.peers.values().all(|p| p.queue.is_empty())
    }

    /// Submit an operation: run it now if connected, else queue it (connecting on demand).
    pub(crate) fn submit(
        &mut self,
        prov: &mut dyn Provider,
        ch: &mut UdChannel,
        peer: u64,
        card: &AddressCard,
        op: Option<Op>,
        now: Instant,
    ) -> Result<()> {
        if peer == self.local_key {
            return Err(VerbsError::InvalidArgument(format!(
                "peer {peer:#x} is this process"
            )));
        }
        if card.provider() != prov.kind() {
            return Err(VerbsError::ProviderMismatch {
                card: card.provider().to_string(),
                local: prov.kind().to_string(),
            });
        }
        match self.peers.get_mut(&peer) {
            Some(p) => match p.link {
                Link::Connected { qp } => op.map_or(Ok(()), |op| run(prov, qp, op)),
                Link::Requested { .. } | Link::Answered { .. } => {
                    p.queue.extend(op);
                    Ok(())
                }
                Link::Failed { ref reason } => Err(VerbsError::PeerFailed {
                    peer,
                    reason: reason.clone(),
                }),
            },
            None => {
                let ep = prov.rc_create()?;
                let request = Handshake::Request {
                    key: self.local_key,
                    ep,
                };
                let req_seq = match ch.send(card, &request.encode(), now) {
                    Ok(s) => s,
                    Err(e) => {
                        prov.rc_destroy(ep.qpn);
                        return Err(e);
                    }
                };
                tracing::debug!(
                    "connect request to peer {peer:#x} at {card} (local qp {})",
                    ep.qpn
                );
                self.stats.connect_requests_sent += 1;
                self.by_qp.insert(ep.qpn, peer);
                self.peers.insert(
                    peer,
                    Peer {
                        card: *card,
                        link: Link::Requested {
                            qp: ep.qpn,
                            req_seq,
                            since: now,
                        },
                        queue: op.into_iter().collect(),
                        began: now,
                    },
                );
                Ok(())
            }
        }
    }

    /// A handshake message arrived over the control channel.
    pub(crate) fn on_handshake(
        &mut self,
        io: &mut Io<'_>,
        msg: Handshake,
        from: AddressCard,
    ) -> bool {
        let key = msg.key();
        if key == self.local_key || from.provider() != io.prov.kind() {
            return false;
        }
        match msg {
            Handshake::Request { ep, .. } => self.on_request(io, key, ep, from),
            Handshake::Reply { ep, .. } => self.on_reply(io, key, ep, from),
            Handshake::Ready { ep, .. } => self.on_ready(io.prov, key, ep, io.out),
        }
        true
    }

    fn on_request(&mut self, io: &mut Io<'_>, key: u64, remote: RcEndpoint, from: AddressCard) {
        let prov = &mut *io.prov;
        self.stats.connect_requests_received += 1;
        let (qp, simultaneous) = match self.peers.get(&key).map(|p| &p.link) {
            None => match prov.rc_create() {
                Ok(local) => {
                    self.by_qp.insert(local.qpn, key);
                    self.peers.insert(
                        key,
                        Peer {
                            card: from,
                            link: Link::Answered {
                                qp: local.qpn,
                                rep_seq: None,
                                since: io.now,
                            },
                            queue: VecDeque::new(),
                            began: io.now,
                        },
                    );
                    self.answered += 1;
                    (local.qpn, false)
                }
                Err(e) => {
                    tracing::debug!("cannot create RC endpoint for peer {key:#x}: {e}");
                    return;
                }
            },
            // Both requested: the smaller key's request wins, so we answer it with our endpoint.
            Some(Link::Requested { qp, .. }) if key < self.local_key => {
                self.stats.simultaneous_connects += 1;
                (*qp, true)
            }
            // We win the tie (they will answer ours), or the pair is already settled.
            Some(_) => return,
        };
        tracing::debug!(
            "connect request from peer {key:#x} at {from} (simultaneous: {simultaneous})"
        );
        let local = RcEndpoint {
            qpn: qp,
            psn: prov.rc_psn(qp),
        };
        if let Err(e) = prov.rc_connect(qp, &from, remote) {
            return self.fail(prov, key, e.to_string(), io.out);
        }
        let reply = Handshake::Reply {
            key: self.local_key,
            ep: local,
        };
        let rep_seq = io.ch.send(&from, &reply.encode(), io.now).ok();
        self.stats.connect_replies_sent += 1;
        if let Some(p) = self.peers.get_mut(&key) {
            p.card = from;
        }
        self.set_link(
            key,
            Link::Answered {
                qp,
                rep_seq,
                since: io.now,
            },
        );
    }

    fn on_reply(&mut self, io: &mut Io<'_>, key: u64, remote: RcEndpoint, from: AddressCard) {
        let prov = &mut *io.prov;
        let Some(p) = self.peers.get_mut(&key) else {
            return;
        };
        let qp = match p.link {
            Link::Requested { qp, .. } => qp,
            // The peer answered again (it started over while our `Ready` was lost): say it
            // again, in case the peer still waits for it.
            Link::Connected { qp } => return self.send_ready(io, key, qp, &from),
            _ => return,
        };
        tracing::debug!(
            "connect reply from peer {key:#x}: local qp {qp} -> remote {}",
            remote.qpn
        );
        if let Err(e) = prov.rc_connect(qp, &from, remote) {
            return self.fail(prov, key, e.to_string(), io.out);
        }
        p.card = from;
        self.send_ready(io, key, qp, &from);
        self.set_link(key, Link::Connected { qp });
        self.flush(io.prov, key, io.out);
    }

    /// Tells the peer that our endpoint `qp` is connected (step 3).
    fn send_ready(&self, io: &mut Io<'_>, key: u64, qp: u32, to: &AddressCard) {
        let ready = Handshake::Ready {
            key: self.local_key,
            ep: RcEndpoint {
                qpn: qp,
                psn: io.prov.rc_psn(qp),
            },
        };
        if let Err(e) = io.ch.send(to, &ready.encode(), io.now) {
            tracing::debug!("ready to peer {key:#x}: {e}");
        }
    }

    fn on_ready(
        &mut self,
        prov: &mut dyn Provider,
        key: u64,
        remote: RcEndpoint,
        out: &mut Vec<Event>,
    ) {
        let Some(p) = self.peers.get(&key) else {
            return;
        };
        if let Link::Answered { qp, .. } = p.link {
            tracing::debug!(
                "peer {key:#x} ready: local qp {qp} <-> remote {}",
                remote.qpn
            );
            self.set_link(key, Link::Connected { qp });
            self.flush(prov, key, out);
        }
    }

    /// A message arrived on `qp`: returns its peer. On the passive side, the first message also
    /// proves the peer's endpoint is connected, so our queue may go.
    #[inline]
    pub(crate) fn on_recv(
        &mut self,
        prov: &mut dyn Provider,
        qp: u32,
        out: &mut Vec<Event>,
    ) -> Option<u64> {
        let key = self.by_qp.get(&qp).copied()?;
        if self.answered > 0
            && matches!(self.peers.get(&key).map(|p| &p.link), Some(Link::Answered { qp: q, .. }) if *q == qp)
        {
            self.set_link(key, Link::Connected { qp });
            self.flush(prov, key, out);
        }
        Some(key)
    }

    /// Replace a peer's link, keeping the count of answered links.
    fn set_link(&mut self, key: u64, link: Link) {
        let Some(p) = self.peers.get_mut(&key) else {
            return;
        };
        if matches!(p.link, Link::Answered { .. }) {
            self.answered -= 1;
        }
        if matches!(link, Link::Answered { .. }) {
            self.answered += 1;
        }
        p.link = link;
    }

    /// Run the queued operations of a newly connected peer, in order.
    fn flush(&mut self, prov: &mut dyn Provider, key: u64, out: &mut Vec<Event>) {
        let Some(p) = self.peers.get_mut(&key) else {
            return;
        };
        let Link::Connected { qp } = p.link else {
            return;
        };
        while let Some(op) = p.queue.pop_front() {
            if let Err(e) = run(prov, qp, op) {
                let reason = e.to_string();
                self.fail(prov, key, reason, out);
                return;
            }
        }
    }

    /// Give up on a peer: its endpoint is destroyed, queued reads/writes fail, later sends error.
    pub(crate) fn fail(
        &mut self,
        prov: &mut dyn Provider,
        key: u64,
        reason: String,
        out: &mut Vec<Event>,
    ) {
        let Some(qp) = self.peers.get(&key).map(|p| p.link.qp()) else {
            return;
        };
        if let Some(qp) = qp {
            prov.rc_destroy(qp);
            self.by_qp.remove(&qp);
        }
        tracing::debug!("peer {key:#x} failed: {reason}");
        self.set_link(
            key,
            Link::Failed {
                reason: reason.clone(),
            },
        );
        let p = self.peers.get_mut(&key).expect("looked up above");
        for op in p.queue.drain(..) {
            let error = VerbsError::PeerFailed {
                peer: key,
                reason: reason.clone(),
            };
            match op {
                Op::Read { token, .. } => out.push(Event::ReadFailed { token, error }),
                Op::Write { token, .. } => out.push(Event::WriteFailed { token, error }),
                Op::Send(_) => {}
            }
        }
        out.push(Event::PeerFailed {
            peer: key,
            error: VerbsError::PeerFailed { peer: key, reason },
        });
    }

    /// A control datagram could not be delivered; returns true when it was one of ours.
    pub(crate) fn on_undelivered(&mut self, io: &mut Io<'_>, to: &AddressCard, seq: u64) -> bool {
        let hit = self.peers.iter().find_map(|(k, p)| {
            let ours = p.card == *to
                && match p.link {
                    Link::Requested { req_seq, .. } => req_seq == seq,
                    Link::Answered { rep_seq, .. } => rep_seq == Some(seq),
                    _ => false,
                };
            ours.then_some(*k)
        });
        match hit {
            Some(key) if self.cfg.patient_connects => {
                self.start_over(io, key);
                true
            }
            Some(key) => {
                let e = VerbsError::ConnectTimeout {
                    peer: key,
                    retries: self.cfg.max_retries,
                    elapsed: self.cfg.retry_budget(),
                };
                self.fail(io.prov, key, e.to_string(), io.out);
                true
            }
            None => false,
        }
    }

    /// Sends the request (or the answer) of an unfinished handshake again, as a new control
    /// datagram, and reports the peer slow (`patient_connects`).
    fn start_over(&mut self, io: &mut Io<'_>, key: u64) {
        let Some(p) = self.peers.get_mut(&key) else {
            return;
        };
        let ep = |qp: u32| RcEndpoint {
            qpn: qp,
            psn: io.prov.rc_psn(qp),
        };
        let me = self.local_key;
        let msg = match p.link {
            Link::Requested { qp, .. } => Handshake::Request {
                key: me,
                ep: ep(qp),
            },
            Link::Answered { qp, .. } => Handshake::Reply {
                key: me,
                ep: ep(qp),
            },
            Link::Connected { .. } | Link::Failed { .. } => return,
        };
        let seq = io.ch.send(&p.card, &msg.encode(), io.now);
        if let Err(e) = &seq {
            tracing::debug!("connect to peer {key:#x} again: {e}");
        }
        match &mut p.link {
            Link::Requested { req_seq, since, .. } => {
                *req_seq = seq.unwrap_or(*req_seq);
                *since = io.now;
            }
            Link::Answered { rep_seq, since, .. } => {
                *rep_seq = seq.ok();
                *since = io.now;
            }
            Link::Connected { .. } | Link::Failed { .. } => {}
        }
        io.out.push(Event::ConnectSlow {
            peer: key,
            waited: io.now.saturating_duration_since(p.began),
        });
    }

    /// Fail handshakes that never finished (request or reply delivered, the answer lost for
    /// good), or with `patient_connects` start them over.
    pub(crate) fn tick(&mut self, io: &mut Io<'_>) {
        let (now, budget) = (io.now, answer_budget(&self.cfg));
        let late: Vec<(u64, Instant)> = self
            .peers
            .iter()
            .filter_map(|(k, p)| match p.link {
                Link::Requested { since, .. } | Link::Answered { since, .. }
                    if now.duration_since(since) > budget =>
                {
                    Some((*k, since))
                }
                _ => None,
            })
            .collect();
        for (key, since) in late {
            if self.cfg.patient_connects {
                self.start_over(io, key);
                continue;
            }
            let e = VerbsError::ConnectTimeout {
                peer: key,
                retries: self.cfg.max_retries,
                elapsed: now - since,
            };
            self.fail(io.prov, key, e.to_string(), io.out);
        }
    }

    /// Whether an operation for `peer` waits in this process: for its connection, or as
    /// bytes on its connection the provider has not handed over yet (`qp_sent`).
    pub(crate) fn holds_back(&self, peer: u64, qp_sent: impl Fn(u32) -> bool) -> bool {
        match self.peers.get(&peer) {
            Some(Peer {
                link: Link::Connected { qp },
                ..
            }) => !qp_sent(*qp),
            Some(p) => !p.queue.is_empty() && !matches!(p.link, Link::Failed { .. }),
            None => false,
        }
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let budget = answer_budget(&self.cfg);
        self.peers
            .values()
            .filter_map(|p| match p.link {
                Link::Requested { since, .. } | Link::Answered { since, .. } => {
                    Some(since + budget)
                }
                _ => None,
            })
            .min()
    }

    /// An endpoint broke. Only a peer's current endpoint failing fails the peer; any other
    /// (already replaced or destroyed) is just let go.
    pub(crate) fn on_broken(
        &mut self,
        prov: &mut dyn Provider,
        qp: u32,
        error: VerbsError,
        out: &mut Vec<Event>,
    ) {
        let current = self
            .by_qp
            .get(&qp)
            .copied()
            .filter(|k| self.peers.get(k).and_then(|p| p.link.qp()) == Some(qp));
        match current {
            Some(key) => {
                let e = VerbsError::ConnectionLost {
                    peer: key,
                    detail: error.to_string(),
                };
                self.fail(prov, key, e.to_string(), out);
            }
            None => {
                self.stats.stale_endpoint_breaks += 1;
                tracing::debug!("endpoint {qp}, no peer's current one, broke: {error}");
                self.by_qp.remove(&qp);
                prov.rc_destroy(qp);
            }
        }
    }
}

fn run(prov: &mut dyn Provider, qp: u32, op: Op) -> Result<()> {
    match op {
        Op::Send(data) => prov.rc_send_owned(qp, data),
        // SAFETY: the caller of Fabric::read/write promised validity of the buffer until completion.
        Op::Read {
            remote,
            local,
            len,
            token,
        } => unsafe { prov.rc_read(qp, remote, local as *mut u8, len, token) },
        // SAFETY: as above.
        Op::Write {
            remote,
            local,
            len,
            token,
        } => unsafe { prov.rc_write(qp, remote, local as *const u8, len, token) },
    }
}
