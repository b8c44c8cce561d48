//! Small local context ids for communicators made from groups (seed 001). The members agree
//! on a 128-bit extended id (see `context::extended`), which names the communicator and
//! seeds the ids of communicators derived from it; what the packets carry is the
//! receiver's own local id, which each process hands out from a counter that never goes
//! back (so no two communicators of a process, in any init epoch, share one) and tells
//! every other member on first contact (the members' agreement exchange, which reaches
//! every pair of members anyway). A sender puts the destination's id in the packet; a
//! receiver matches on its own.

use crate::error::{CommError, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the local ids live in the 64-bit context space (even ids; `id | 1` is the
/// collective twin). Ids derived by hashing fall here with negligible odds, and a taken id
/// is skipped when handing out.
const BASE: u64 = 0x5e55_0000_0000_0000;
/// How many local ids a process can hand out (the low 40 bits, even only).
const SPAN: u64 = 1 << 40;

/// Local ids handed out by this process so far (for ever: ids are never reused).
static HANDED_OUT: AtomicU64 = AtomicU64::new(0);

/// Whether `id` is a local id (of any process).
pub(crate) fn is_local(id: u64) -> bool {
    id & 1 == 0 && (BASE..BASE + SPAN).contains(&id)
}

/// A new local id of this process, not `taken` (by a live communicator) and never handed
/// out before.
pub(crate) fn allocate(taken: impl Fn(u64) -> bool) -> Result<u64> {
    loop {
        let k = HANDED_OUT.fetch_add(1, Ordering::Relaxed);
        if 2 * k >= SPAN {
            return Err(CommError::InvalidArgument(
                "this process has made 2^39 communicators from groups: no local context id \
                 is left"
                    .into(),
            ));
        }
        let id = BASE + 2 * k;
        if !taken(id) && !taken(id | 1) {
            return Ok(id);
        }
    }
}

/// The context ids of one communicator made from groups: this process's local id and that
/// of each process of the peer group (by rank), learnt on first contact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WireIds {
    mine: u64,
    peers: Vec<u64>,
}

impl WireIds {
    /// `peers[r]` is the local id of rank `r` of the peer group (this process's own for
    /// its rank in an intracommunicator). Every id must be a local id.
    pub(crate) fn new(mine: u64, peers: Vec<u64>) -> Result<WireIds> {
        if let Some((r, id)) = std::iter::once((usize::MAX, &mine))
            .chain(peers.iter().enumerate())
            .find(|(_, id)| !is_local(**id))
        {
            return Err(CommError::Malformed(format!(
                "context id {id:#x} of peer rank {r} is not a local id: the member runs a \
                 different ibdyn version"
            )));
        }
        Ok(WireIds { mine, peers })
    }

    /// The id packets to this process carry (`collective`: the collective twin).
    pub(crate) fn receive(&self, collective: bool) -> u64 {
        self.mine | collective as u64
    }

    /// The id a packet to rank `dest` of the peer group carries.
    pub(crate) fn send(&self, dest: usize, collective: bool) -> Result<u64> {
        self.peers
            .get(dest)
            .map(|id| id | collective as u64)
            .ok_or_else(|| CommError::InvalidRank {
                rank: dest as i64,
                size: self.peers.len(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn local_ids_are_distinct_even_and_skip_taken_ones() {
        let mut seen = HashSet::new();
        for _ in 0..1000 {
            let id = allocate(|_| false).unwrap();
            assert!(is_local(id) && id & 1 == 0, "{id:#x}");
            assert!(seen.insert(id), "{id:#x} handed out twice");
        }
        // A taken id (or its collective twin) is skipped, never handed out later either.
        let next = allocate(|_| false).unwrap() + 2;
        let got = allocate(|id| id == next || id == (next + 2) | 1).unwrap();
        assert_eq!(got, next + 4);
        assert!(allocate(|_| false).unwrap() > got);
    }

    #[test]
    fn the_table_sends_with_the_receivers_id_and_receives_with_its_own() {
        let (a, b, c) = (BASE + 2, BASE + 40, BASE + 6);
        let w = WireIds::new(b, vec![a, b, c]).unwrap();
        assert_eq!(w.receive(false), b);
        assert_eq!(w.receive(true), b | 1);
        assert_eq!(w.send(0, false).unwrap(), a);
        assert_eq!(w.send(2, true).unwrap(), c | 1);
        assert!(matches!(
            w.send(3, false),
            Err(CommError::InvalidRank { rank: 3, size: 3 })
        ));
        // A peer that presents something else than a local id is refused.
        for bad in [a | 1, 0x1234, BASE + SPAN] {
            let e = WireIds::new(b, vec![a, bad]).unwrap_err().to_string();
            assert!(e.contains("not a local id") && e.contains("rank 1"), "{e}");
        }
    }
}
