//! The peer table: for each process we have talked to, its address card and the route to it,
//! chosen once: shared memory on the same node, the fabric otherwise.

use crate::error::{CommError, Result};
use crate::gpid::{Gpid, ProcCard};
use crate::route::Link;
use crate::shm_route::{ShmLink, ShmRoute};
use ibdyn_verbs::AddressCard;
use std::collections::HashMap;

pub(crate) struct Peer {
    pub card: ProcCard,
    pub link: Link,
    /// Why the peer is known dead, once it is.
    pub dead: Option<String>,
}

impl Peer {
    pub fn open(card: ProcCard, my_node: &str) -> Result<Peer> {
        let link = if card.node_uid == my_node && !card.shm_name.is_empty() {
            // A first message to a process that has ended fails as a dead peer's, whether or
            // not its node daemon has removed its queue yet.
            let ended = || CommError::PeerDead {
                peer: format!("{} (pid {})", card.gpid, card.pid),
                detail: "the process has exited".into(),
            };
            if !ibdyn_shm::pid_exists(card.pid as u32) {
                return Err(ended());
            }
            match ShmLink::open(&card.shm_name) {
                Ok(l) => Link::Shm(l),
                Err(CommError::Shm(ibdyn_shm::ShmError::Missing { .. }))
                    if !ibdyn_shm::process_alive_since(card.pid as u32, card.start) =>
                {
                    return Err(ended());
                }
                Err(e) => return Err(e),
            }
        } else {
            if card.fabric.is_empty() {
                return Err(CommError::PeerDead {
                    peer: card.gpid.to_string(),
                    detail: "it runs on another node and has no fabric address".into(),
                });
            }
            Link::Net(AddressCard::from_bytes(&card.fabric)?)
        };
        Ok(Peer {
            card,
            link,
            dead: None,
        })
    }

    pub fn describe(&self) -> String {
        format!("{} (pid {})", self.card.gpid, self.card.pid)
    }

    /// Whether requests that depend on the peer must fail: it is dead and nothing it sent
    /// waits in `shm`'s queue. A same-node peer may send its last packets and exit while
    /// this process sleeps, or while an earlier cell of the queue is still being written;
    /// those packets are read (and complete requests) before its death fails any.
    pub fn gone(&mut self, shm: &ShmRoute) -> bool {
        if self.check_alive() {
            return false;
        }
        let unread = matches!(self.link, Link::Shm(_)) && shm.holds_packet_of(self.card.pid);
        !unread
    }

    /// For a same-node peer, whether its process still exists.
    fn check_alive(&mut self) -> bool {
        if self.dead.is_some() {
            return false;
        }
        if let Link::Shm(_) = self.link {
            let (pid, start) = (self.card.pid as u32, self.card.start);
            if !ibdyn_shm::process_alive_since(pid, start) {
                self.dead = Some("the process has exited".into());
                return false;
            }
        }
        true
    }
}

/// Process ids are already well spread: one multiply mixes them enough for the table.
#[derive(Default)]
pub(crate) struct GpidHasher(u64);

impl std::hash::Hasher for GpidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0.rotate_left(32) ^ v as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type GpidMap<V> = HashMap<Gpid, V, std::hash::BuildHasherDefault<GpidHasher>>;

/// Peers in a vector, found through a hash index; the peer used last is found without hashing
/// (a rank usually talks to the same peer several times in a row). Peers are never removed.
#[derive(Default)]
pub(crate) struct PeerTable {
    peers: Vec<Peer>,
    index: GpidMap<usize>,
    last: Option<(Gpid, usize)>,
    /// Cards learnt from outside the job's key-value space (spawn, connect/accept).
    known_cards: GpidMap<ProcCard>,
}

impl PeerTable {
    #[inline]
    pub fn get_mut(&mut self, g: Gpid) -> Option<&mut Peer> {
        let i = match self.last {
            Some((last, i)) if last == g => i,
            _ => {
                let i = *self.index.get(&g)?;
                self.last = Some((g, i));
                i
            }
        };
        self.peers.get_mut(i)
    }

    pub fn insert(&mut self, g: Gpid, p: Peer) -> &mut Peer {
        let i = match self.index.get(&g) {
            Some(&i) => i,
            None => {
                self.peers.push(p);
                self.index.insert(g, self.peers.len() - 1);
                self.peers.len() - 1
            }
        };
        &mut self.peers[i]
    }

    pub fn iter(&self) -> impl Iterator<Item = &Peer> {
        self.peers.iter()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Peer> {
        self.peers.iter_mut()
    }

    /// Makes a card learnt from a peer known (a process of another job).
    pub fn learn_card(&mut self, card: ProcCard) {
        self.known_cards.insert(card.gpid, card);
    }

    /// A card learnt with `learn_card`.
    pub fn known_card(&self, g: Gpid) -> Option<&ProcCard> {
        self.known_cards.get(&g)
    }
}
