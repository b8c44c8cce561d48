//! Reliable control datagrams over an unreliable datagram transport (UD queue pair or UDP).
//!
//! Every datagram carries the sender's card and incarnation (epoch), the card it is meant for and
//! that card's incarnation when the sender has heard from it (else 0), and ends with an
//! authenticator keyed from the job secret (`auth`: the secret never goes on the wire). A process
//! drops datagrams meant for another card or another incarnation of its own: after a process
//! exits, a new one may be given its port (or queue pair number), and the retransmissions still
//! addressed to the old one must not be taken (their sequence numbers would shadow the new
//! process's own messages from the same sender). Messages are
//! split into MTU-sized fragments; each fragment has a sequence number (per destination) and an
//! index, is acknowledged by the receiver, and is retransmitted with a doubling timeout until
//! acknowledged or `max_retries` is exhausted (then the message is reported as failed). The
//! receiver suppresses duplicates (fragments it already holds, messages it already delivered) and
//! re-acknowledges them so the sender stops. Delivery is exactly once, in no particular order.
//! Anything that does not parse (wrong authenticator, truncated, garbage) is dropped and counted.

use crate::auth::{self, Authenticator, TAG_LEN};
use crate::card::AddressCard;
use crate::config::FabricConfig;
use crate::error::{Result, VerbsError};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

const MAGIC: [u8; 4] = *b"IBDC";
const VERSION: u8 = 3;
const KIND_DATA: u8 = 1;
const KIND_ACK: u8 = 2;
/// Largest message in fragments (bounds reassembly memory).
const MAX_FRAGS: usize = 4096;
/// Fragments in flight per destination before new ones wait.
const WINDOW: usize = 64;
/// Partially reassembled messages kept per source.
const MAX_PARTIAL: usize = 256;
/// Delivered sequence numbers remembered above the contiguous mark, per source.
const MAX_DONE: usize = 65536;

/// Counters of the control channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelStats {
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    pub retransmits: u64,
    pub acks_sent: u64,
    pub duplicates: u64,
    /// Wrong magic or authenticator (another job's, or altered on the way).
    pub dropped_foreign: u64,
    /// Truncated, inconsistent or otherwise unparsable.
    pub dropped_malformed: u64,
    pub messages_delivered: u64,
    pub messages_failed: u64,
    /// Meant for another card, or for an earlier process that had this one's address.
    pub dropped_misaddressed: u64,
}

/// What the channel hands to the layer above.
#[derive(Debug)]
pub(crate) enum ChannelEvent {
    Delivered {
        from: AddressCard,
        data: Vec<u8>,
    },
    Failed {
        to: AddressCard,
        seq: u64,
        error: VerbsError,
    },
}

struct Frag {
    seq: u64,
    idx: u16,
    bytes: Vec<u8>,
    attempts: u32,
    deadline: Instant,
}

#[derive(Default)]
struct SendState {
    next_seq: u64,
    inflight: BTreeMap<(u64, u16), Frag>,
    backlog: VecDeque<Frag>,
}

struct Partial {
    frags: Vec<Option<Vec<u8>>>,
    have: usize,
}

struct RecvState {
    epoch: u64,
    /// Every sequence number below this was delivered.
    low: u64,
    done: BTreeSet<u64>,
    partial: HashMap<u64, Partial>,
}

impl RecvState {
    fn new(epoch: u64) -> Self {
        RecvState {
            epoch,
            low: 1,
            done: BTreeSet::new(),
            partial: HashMap::new(),
        }
    }
    fn delivered(&self, seq: u64) -> bool {
        seq < self.low || self.done.contains(&seq)
    }
    fn mark(&mut self, seq: u64) {
        self.done.insert(seq);
        while self.done.remove(&self.low) {
            self.low += 1;
        }
        // A sender that gave up on a message leaves a hole; don't let it grow memory forever.
        while self.done.len() > MAX_DONE {
            if let Some(first) = self.done.pop_first() {
                self.low = first + 1;
            }
        }
    }
}

pub(crate) struct UdChannel {
    auth: Authenticator,
    epoch: u64,
    local: Vec<u8>,
    local_card: AddressCard,
    mtu: usize,
    max_retries: u32,
    cfg: FabricConfig,
    send: HashMap<AddressCard, SendState>,
    recv: HashMap<AddressCard, RecvState>,
    /// The incarnation last heard from each card, named in what is sent to it. Forgotten when
    /// a message to the card fails: a later process may hold that address.
    heard: HashMap<AddressCard, u64>,
    pub(crate) stats: ChannelStats,
}

/// A parsed datagram.
enum Datagram<'a> {
    Data {
        from: AddressCard,
        epoch: u64,
        to: Dest,
        seq: u64,
        idx: u16,
        cnt: u16,
        payload: &'a [u8],
    },
    Ack {
        from: AddressCard,
        epoch: u64,
        to: Dest,
        seq: u64,
        idx: u16,
    },
}

/// Whom a datagram is meant for: a card, and its incarnation (0: not known to the sender).
struct Dest {
    card: AddressCard,
    epoch: u64,
}

enum ParseError {
    Foreign,
    Malformed,
}

fn header_len(card_len: usize, dest_len: usize) -> usize {
    4 + 1 + 1 + 8 + 1 + card_len + 8 + 1 + dest_len
}

impl UdChannel {
    pub(crate) fn new(
        cfg: &FabricConfig,
        local: &AddressCard,
        mtu: usize,
        epoch: u64,
    ) -> Result<Self> {
        let local_card = *local;
        let local = local.to_bytes();
        // Peers of one fabric have cards of one provider, of about this card's length.
        let overhead = header_len(local.len(), local.len()) + 14 + TAG_LEN;
        if mtu < overhead + 16 {
            return Err(VerbsError::InvalidArgument(format!(
                "UD MTU {mtu} too small (need at least {})",
                overhead + 16
            )));
        }
        Ok(UdChannel {
            auth: Authenticator::new(cfg.job_secret, auth::UD_CONTROL),
            epoch,
            local,
            local_card,
            mtu,
            max_retries: cfg.max_retries,
            cfg: cfg.clone(),
            send: HashMap::new(),
            recv: HashMap::new(),
            heard: HashMap::new(),
            stats: ChannelStats::default(),
        })
    }

    /// Payload bytes a fragment to a card of `dest_len` bytes carries.
    fn payload_per_frag(&self, dest_len: usize) -> usize {
        self.mtu
            .saturating_sub(header_len(self.local.len(), dest_len) + 14 + TAG_LEN)
    }

    /// Largest message the channel accepts (to a card as long as this one's).
    pub(crate) fn max_message(&self) -> usize {
        self.payload_per_frag(self.local.len()) * MAX_FRAGS
    }

    /// The header of a datagram to `to` (its card's bytes) of incarnation `to_epoch`.
    fn header(&self, kind: u8, to: &[u8], to_epoch: u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        out.push(VERSION);
        out.push(kind);
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.push(self.local.len() as u8);
        out.extend_from_slice(&self.local);
        out.extend_from_slice(&to_epoch.to_le_bytes());
        out.push(to.len() as u8);
        out.extend_from_slice(to);
    }

    /// Queue a message to `to`; returns its sequence number. Fragments go out on the next `tick`.
    pub(crate) fn send(&mut self, to: &AddressCard, data: &[u8], now: Instant) -> Result<u64> {
        let dest = to.to_bytes();
        let per = self.payload_per_frag(dest.len());
        if per == 0 || data.len() > per * MAX_FRAGS {
            return Err(VerbsError::TooLarge {
                len: data.len(),
                max: per * MAX_FRAGS,
            });
        }
        let to_epoch = self.heard.get(to).copied().unwrap_or(0);
        let cnt = data.len().div_ceil(per).max(1);
        let mut frags = Vec::with_capacity(cnt);
        let st = self.send.entry(*to).or_default();
        st.next_seq += 1;
        let seq = st.next_seq;
        for idx in 0..cnt {
            let chunk = &data[(idx * per).min(data.len())..((idx + 1) * per).min(data.len())];
            frags.push((idx as u16, chunk));
        }
        let mut built = Vec::with_capacity(cnt);
        for (idx, chunk) in frags {
            let mut b = Vec::with_capacity(self.mtu);
            self.header(KIND_DATA, &dest, to_epoch, &mut b);
            b.extend_from_slice(&seq.to_le_bytes());
            b.extend_from_slice(&idx.to_le_bytes());
            b.extend_from_slice(&(cnt as u16).to_le_bytes());
            b.extend_from_slice(&(chunk.len() as u16).to_le_bytes());
            b.extend_from_slice(chunk);
            self.auth.seal(&mut b);
            built.push(Frag {
                seq,
                idx,
                bytes: b,
                attempts: 0,
                deadline: now,
            });
        }
        let st = self.send.get_mut(to).expect("inserted above");
        st.backlog.extend(built);
        Ok(seq)
    }

    /// Earliest retransmission deadline, if anything is in flight.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.send
            .values()
            .flat_map(|s| {
                s.inflight.values().map(|f| f.deadline).chain(
                    s.backlog
                        .front()
                        .filter(|_| s.inflight.len() < WINDOW)
                        .map(|f| f.deadline),
                )
            })
            .min()
    }

    /// Send new fragments, retransmit overdue ones, give up on exhausted ones.
    pub(crate) fn tick(
        &mut self,
        now: Instant,
        wire: &mut dyn FnMut(&AddressCard, &[u8]) -> Result<()>,
        events: &mut Vec<ChannelEvent>,
    ) {
        let max_retries = self.max_retries;
        for (to, st) in self.send.iter_mut() {
            let mut failed: Vec<u64> = Vec::new();
            for f in st.inflight.values_mut() {
                if f.deadline > now || failed.contains(&f.seq) {
                    continue;
                }
                if f.attempts > max_retries {
                    failed.push(f.seq);
                    continue;
                }
                f.attempts += 1;
                f.deadline = now + self.cfg.backoff(f.attempts);
                self.stats.retransmits += 1;
                self.stats.datagrams_sent += 1;
                if let Err(e) = wire(to, &f.bytes) {
                    tracing::debug!("UD resend to {to}: {e}");
                }
            }
            if !failed.is_empty() {
                self.heard.remove(to);
            }
            for seq in failed {
                st.inflight.retain(|k, _| k.0 != seq);
                st.backlog.retain(|f| f.seq != seq);
                self.stats.messages_failed += 1;
                events.push(ChannelEvent::Failed {
                    to: *to,
                    seq,
                    error: VerbsError::ControlUndelivered {
                        to: to.to_string(),
                        retries: max_retries,
                    },
                });
            }
            while st.inflight.len() < WINDOW {
                let Some(mut f) = st.backlog.pop_front() else {
                    break;
                };
                f.attempts = 1;
                f.deadline = now + self.cfg.backoff(1);
                self.stats.datagrams_sent += 1;
                if let Err(e) = wire(to, &f.bytes) {
                    tracing::debug!("UD send to {to}: {e}");
                }
                st.inflight.insert((f.seq, f.idx), f);
            }
        }
    }

    fn parse<'a>(&self, b: &'a [u8]) -> std::result::Result<Datagram<'a>, ParseError> {
        if b.len() < 4 || b[..4] != MAGIC {
            return Err(ParseError::Foreign);
        }
        if b.len() < header_len(0, 0) + TAG_LEN {
            return Err(ParseError::Malformed);
        }
        if b[4] != VERSION {
            return Err(ParseError::Malformed);
        }
        // Nothing else is looked at before the authenticator holds.
        let b = self.auth.open(b).ok_or(ParseError::Foreign)?;
        let kind = b[5];
        let epoch = u64::from_le_bytes(b[6..14].try_into().map_err(|_| ParseError::Malformed)?);
        let card_len = b[14] as usize;
        let from_end = 15 + card_len;
        // The destination's incarnation (8 bytes) and card length (1) follow the sender's card.
        let dest_len = *b.get(from_end + 8).ok_or(ParseError::Malformed)? as usize;
        let at = header_len(card_len, dest_len);
        if b.len() < at {
            return Err(ParseError::Malformed);
        }
        let from = AddressCard::from_bytes(&b[15..from_end]).map_err(|_| ParseError::Malformed)?;
        let to = Dest {
            epoch: u64::from_le_bytes(
                b[from_end..from_end + 8]
                    .try_into()
                    .map_err(|_| ParseError::Malformed)?,
            ),
            card: AddressCard::from_bytes(&b[from_end + 9..at])
                .map_err(|_| ParseError::Malformed)?,
        };
        let rest = &b[at..];
        match kind {
            KIND_DATA => {
                if rest.len() < 14 {
                    return Err(ParseError::Malformed);
                }
                // The explicit length catches truncation that would otherwise look like a short payload.
                let plen = u16::from_le_bytes([rest[12], rest[13]]) as usize;
                if rest.len() != 14 + plen {
                    return Err(ParseError::Malformed);
                }
                let seq =
                    u64::from_le_bytes(rest[0..8].try_into().map_err(|_| ParseError::Malformed)?);
                let idx = u16::from_le_bytes([rest[8], rest[9]]);
                let cnt = u16::from_le_bytes([rest[10], rest[11]]);
                if seq == 0 || cnt == 0 || idx >= cnt || cnt as usize > MAX_FRAGS {
                    return Err(ParseError::Malformed);
                }
                Ok(Datagram::Data {
                    from,
                    epoch,
                    to,
                    seq,
                    idx,
                    cnt,
                    payload: &rest[14..],
                })
            }
            KIND_ACK => {
                if rest.len() != 10 {
                    return Err(ParseError::Malformed);
                }
                let seq =
                    u64::from_le_bytes(rest[0..8].try_into().map_err(|_| ParseError::Malformed)?);
                let idx = u16::from_le_bytes([rest[8], rest[9]]);
                Ok(Datagram::Ack {
                    from,
                    epoch,
                    to,
                    seq,
                    idx,
                })
            }
            _ => Err(ParseError::Malformed),
        }
    }

    /// Handle one received datagram: acknowledge, reassemble, deliver, or drop and count.
    pub(crate) fn on_datagram(
        &mut self,
        b: &[u8],
        wire: &mut dyn FnMut(&AddressCard, &[u8]) -> Result<()>,
        events: &mut Vec<ChannelEvent>,
    ) {
        self.stats.datagrams_received += 1;
        let d = match self.parse(b) {
            Ok(d) => d,
            Err(ParseError::Foreign) => {
                self.stats.dropped_foreign += 1;
                tracing::debug!("dropped foreign datagram of {} bytes", b.len());
                return;
            }
            Err(ParseError::Malformed) => {
                self.stats.dropped_malformed += 1;
                tracing::debug!("dropped malformed datagram of {} bytes", b.len());
                return;
            }
        };
        let (from, epoch, to) = match &d {
            Datagram::Ack {
                from, epoch, to, ..
            }
            | Datagram::Data {
                from, epoch, to, ..
            } => (*from, *epoch, to),
        };
        if to.card != self.local_card || (to.epoch != 0 && to.epoch != self.epoch) {
            // Not acknowledged: the sender's retries end in a failure, as they would have
            // with the process it meant gone.
            self.stats.dropped_misaddressed += 1;
            tracing::debug!(
                "dropped a datagram from {from} meant for {} (incarnation {:x})",
                to.card,
                to.epoch
            );
            return;
        }
        self.heard.insert(from, epoch);
        match d {
            Datagram::Ack { seq, idx, .. } => {
                if let Some(st) = self.send.get_mut(&from) {
                    st.inflight.remove(&(seq, idx));
                }
            }
            Datagram::Data {
                seq,
                idx,
                cnt,
                payload,
                ..
            } => {
                let mut ack = Vec::with_capacity(64);
                self.header(KIND_ACK, &from.to_bytes(), epoch, &mut ack);
                ack.extend_from_slice(&seq.to_le_bytes());
                ack.extend_from_slice(&idx.to_le_bytes());
                self.auth.seal(&mut ack);
                let st = self
                    .recv
                    .entry(from)
                    .or_insert_with(|| RecvState::new(epoch));
                if st.epoch != epoch {
                    // The sender restarted (same address, new incarnation): forget the old state.
                    *st = RecvState::new(epoch);
                }
                if st.delivered(seq) {
                    self.stats.duplicates += 1;
                } else {
                    if !st.partial.contains_key(&seq) && st.partial.len() >= MAX_PARTIAL {
                        self.stats.dropped_malformed += 1;
                        return; // no ack: the sender retries once we have room
                    }
                    let p = st.partial.entry(seq).or_insert_with(|| Partial {
                        frags: vec![None; cnt as usize],
                        have: 0,
                    });
                    if p.frags.len() != cnt as usize {
                        self.stats.dropped_malformed += 1;
                        return;
                    }
                    let slot = &mut p.frags[idx as usize];
                    if slot.is_some() {
                        self.stats.duplicates += 1;
                    } else {
                        *slot = Some(payload.to_vec());
                        p.have += 1;
                        if p.have == p.frags.len() {
                            let p = st.partial.remove(&seq).expect("present");
                            let data: Vec<u8> = p.frags.into_iter().flatten().flatten().collect();
                            st.mark(seq);
                            self.stats.messages_delivered += 1;
                            events.push(ChannelEvent::Delivered { from, data });
                        }
                    }
                }
                self.stats.acks_sent += 1;
                self.stats.datagrams_sent += 1;
                if let Err(e) = wire(&from, &ack) {
                    tracing::debug!("UD ack to {from}: {e}");
                }
            }
        }
    }

    /// True when every queued fragment has been put on the wire at least once.
    pub(crate) fn all_sent(&self) -> bool {
        self.send.values().all(|s| s.backlog.is_empty())
    }

    /// True when nothing is waiting for an acknowledgement.
    #[allow(dead_code)]
    pub(crate) fn idle(&self) -> bool {
        self.send
            .values()
            .all(|s| s.inflight.is_empty() && s.backlog.is_empty())
    }
}

/// Time budget after which an unanswered request is given up (twice the channel's retry budget).
pub(crate) fn answer_budget(cfg: &FabricConfig) -> Duration {
    cfg.retry_budget() * 2 + cfg.retry_timeout
}

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod reuse;
#[cfg(test)]
mod testing;
