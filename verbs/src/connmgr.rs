//! On-demand RC connections. The first operation towards a peer sends a connect request over the
//! UD control channel carrying a fresh local RC endpoint; the reply carries the peer's endpoint and
//! completes both sides. Operations issued meanwhile are queued and go out in order once connected.
//! When two peers request each other at once, the request of the peer with the smaller key wins:
//! the other side connects its already-created endpoint to it and answers, and the losing request
//! is ignored, so exactly one connection results.

use crate::card::AddressCard;
use crate::config::FabricConfig;
use crate::error::{Result, VerbsError};
use crate::fabric::Event;
use crate::provider::{Provider, RcEndpoint};
use crate::ud_channel::{answer_budget, UdChannel};
use crate::RemoteBuf;
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

pub(crate) const MSG_CONN_REQ: u8 = 1;
pub(crate) const MSG_CONN_REP: u8 = 2;
pub(crate) const MSG_USER: u8 = 3;

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
    Connecting {
        qp: u32,
        req_seq: u64,
        since: Instant,
    },
    Connected {
        qp: u32,
    },
    Failed {
        reason: String,
    },
}

struct Peer {
    card: AddressCard,
    link: Link,
    queue: VecDeque<Op>,
    /// Sequence number of our connect reply, to notice when it cannot be delivered.
    rep_seq: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnStats {
    pub connect_requests_sent: u64,
    pub connect_requests_received: u64,
    pub connect_replies_sent: u64,
    pub simultaneous_connects: u64,
}

pub(crate) struct ConnManager {
    local_key: u64,
    cfg: FabricConfig,
    peers: HashMap<u64, Peer>,
    by_qp: HashMap<u32, u64>,
    pub(crate) stats: ConnStats,
}

fn encode(kind: u8, key: u64, ep: RcEndpoint) -> Vec<u8> {
    let mut b = Vec::with_capacity(17);
    b.push(kind);
    b.extend_from_slice(&key.to_le_bytes());
    b.extend_from_slice(&ep.qpn.to_le_bytes());
    b.extend_from_slice(&ep.psn.to_le_bytes());
    b
}

/// Parse the body of a connect request or reply: (peer key, endpoint).
pub(crate) fn decode(body: &[u8]) -> Option<(u64, RcEndpoint)> {
    if body.len() != 16 {
        return None;
    }
    let key = u64::from_le_bytes(body[0..8].try_into().ok()?);
    let qpn = u32::from_le_bytes(body[8..12].try_into().ok()?);
    let psn = u32::from_le_bytes(body[12..16].try_into().ok()?);
    Some((key, RcEndpoint { qpn, psn }))
}

impl ConnManager {
    pub(crate) fn new(cfg: &FabricConfig) -> Self {
        ConnManager {
            local_key: cfg.local_key,
            cfg: cfg.clone(),
            peers: HashMap::new(),
            by_qp: HashMap::new(),
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
                Link::Connecting { .. } => {
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
                let req_seq = match ch.send(card, &encode(MSG_CONN_REQ, self.local_key, ep), now) {
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
                        link: Link::Connecting {
                            qp: ep.qpn,
                            req_seq,
                            since: now,
                        },
                        queue: op.into_iter().collect(),
                        rep_seq: None,
                    },
                );
                Ok(())
            }
        }
    }

    /// A connect request or reply arrived over the control channel.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_control(
        &mut self,
        prov: &mut dyn Provider,
        ch: &mut UdChannel,
        kind: u8,
        from: AddressCard,
        body: &[u8],
        now: Instant,
        out: &mut Vec<Event>,
    ) -> bool {
        let Some((key, ep)) = decode(body) else {
            return false;
        };
        if key == self.local_key || from.provider() != prov.kind() {
            return false;
        }
        if kind == MSG_CONN_REQ {
            self.stats.connect_requests_received += 1;
            let (qp, yield_to_them) = match self.peers.get(&key).map(|p| &p.link) {
                None => match prov.rc_create() {
                    Ok(local) => {
                        self.by_qp.insert(local.qpn, key);
                        self.peers.insert(
                            key,
                            Peer {
                                card: from,
                                link: Link::Connected { qp: local.qpn },
                                queue: VecDeque::new(),
                                rep_seq: None,
                            },
                        );
                        (local.qpn, false)
                    }
                    Err(e) => {
                        tracing::debug!("cannot create RC endpoint for peer {key:#x}: {e}");
                        return true;
                    }
                },
                Some(Link::Connecting { qp, .. }) if key < self.local_key => {
                    self.stats.simultaneous_connects += 1;
                    (*qp, true)
                }
                // We win the tie (they will yield), or already connected / failed: ignore.
                Some(_) => return true,
            };
            tracing::debug!(
                "connect request from peer {key:#x} at {from} (simultaneous: {yield_to_them})"
            );
            let local = RcEndpoint { qpn: qp, psn: 0 };
            let local = prov_endpoint(prov, local);
            match prov.rc_connect(qp, &from, ep) {
                Ok(()) => {
                    let rep = ch.send(&from, &encode(MSG_CONN_REP, self.local_key, local), now);
                    self.stats.connect_replies_sent += 1;
                    if let Some(p) = self.peers.get_mut(&key) {
                        p.card = from;
                        p.rep_seq = rep.ok();
                        p.link = Link::Connected { qp };
                    }
                    self.flush(prov, key, out);
                }
                Err(e) => self.fail(prov, key, e.to_string(), out),
            }
        } else if kind == MSG_CONN_REP {
            let Some(p) = self.peers.get_mut(&key) else {
                return true;
            };
            let Link::Connecting { qp, .. } = p.link else {
                return true;
            };
            tracing::debug!(
                "connect reply from peer {key:#x}: local qp {qp} -> remote {}",
                ep.qpn
            );
            match prov.rc_connect(qp, &from, ep) {
                Ok(()) => {
                    p.card = from;
                    p.link = Link::Connected { qp };
                    self.flush(prov, key, out);
                }
                Err(e) => self.fail(prov, key, e.to_string(), out),
            }
        }
        true
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
        let Some(p) = self.peers.get_mut(&key) else {
            return;
        };
        if let Link::Connecting { qp, .. } | Link::Connected { qp } = p.link {
            prov.rc_destroy(qp);
            self.by_qp.remove(&qp);
        }
        tracing::debug!("peer {key:#x} failed: {reason}");
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
        p.link = Link::Failed {
            reason: reason.clone(),
        };
        out.push(Event::PeerFailed {
            peer: key,
            error: VerbsError::PeerFailed { peer: key, reason },
        });
    }

    /// A control datagram could not be delivered; returns true when it was one of ours.
    pub(crate) fn on_undelivered(
        &mut self,
        prov: &mut dyn Provider,
        to: &AddressCard,
        seq: u64,
        out: &mut Vec<Event>,
    ) -> bool {
        let hit = self.peers.iter().find_map(|(k, p)| {
            let ours = p.card == *to
                && (matches!(p.link, Link::Connecting { req_seq, .. } if req_seq == seq)
                    || p.rep_seq == Some(seq));
            ours.then_some(*k)
        });
        match hit {
            Some(key) => {
                let e = VerbsError::ConnectTimeout {
                    peer: key,
                    retries: self.cfg.max_retries,
                    elapsed: self.cfg.retry_budget(),
                };
                self.fail(prov, key, e.to_string(), out);
                true
            }
            None => false,
        }
    }

    /// Fail connects whose reply never came (request delivered, answer lost for good).
    pub(crate) fn tick(&mut self, prov: &mut dyn Provider, now: Instant, out: &mut Vec<Event>) {
        let budget = answer_budget(&self.cfg);
        let late: Vec<(u64, Instant)> = self
            .peers
            .iter()
            .filter_map(|(k, p)| match p.link {
                Link::Connecting { since, .. } if now.duration_since(since) > budget => {
                    Some((*k, since))
                }
                _ => None,
            })
            .collect();
        for (key, since) in late {
            let e = VerbsError::ConnectTimeout {
                peer: key,
                retries: self.cfg.max_retries,
                elapsed: now - since,
            };
            self.fail(prov, key, e.to_string(), out);
        }
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let budget = answer_budget(&self.cfg);
        self.peers
            .values()
            .filter_map(|p| match p.link {
                Link::Connecting { since, .. } => Some(since + budget),
                _ => None,
            })
            .min()
    }

    /// The peer owning an RC endpoint.
    pub(crate) fn peer_of(&self, qp: u32) -> Option<u64> {
        self.by_qp.get(&qp).copied()
    }

    pub(crate) fn on_broken(
        &mut self,
        prov: &mut dyn Provider,
        qp: u32,
        error: VerbsError,
        out: &mut Vec<Event>,
    ) {
        if let Some(key) = self.peer_of(qp) {
            let e = VerbsError::ConnectionLost {
                peer: key,
                detail: error.to_string(),
            };
            self.fail(prov, key, e.to_string(), out);
        }
    }
}

/// The endpoint to advertise for an existing local qp (the provider knows its PSN).
fn prov_endpoint(prov: &mut dyn Provider, ep: RcEndpoint) -> RcEndpoint {
    RcEndpoint {
        qpn: ep.qpn,
        psn: prov.rc_psn(ep.qpn),
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
