//! Process identities and address cards.

use crate::error::{CommError, Result};
use std::fmt;

/// A universe-wide process id: the job it was started in and its rank there.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gpid {
    pub job: u32,
    pub rank: u32,
}

impl Gpid {
    pub fn to_u64(self) -> u64 {
        ((self.job as u64) << 32) | self.rank as u64
    }
    pub fn from_u64(v: u64) -> Gpid {
        Gpid {
            job: (v >> 32) as u32,
            rank: v as u32,
        }
    }
}

impl fmt::Display for Gpid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job {} rank {}", self.job, self.rank)
    }
}

/// What a peer needs to reach a process: where it runs and its endpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcCard {
    pub gpid: Gpid,
    /// Processes with equal node ids share a node and talk through shared memory.
    pub node_uid: String,
    pub pid: i32,
    /// When the process started (clock ticks after boot; 0: unknown): with `pid`, tells it
    /// from a later process given the same pid.
    pub start: u64,
    /// Name of the process's shared-memory receive segment.
    pub shm_name: String,
    /// The fabric address card (provider-specific bytes).
    pub fabric: Vec<u8>,
}

const CARD_MAGIC: u32 = 0x1bd7_ca7e;

impl ProcCard {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(64 + self.fabric.len());
        b.extend_from_slice(&CARD_MAGIC.to_le_bytes());
        b.extend_from_slice(&self.gpid.to_u64().to_le_bytes());
        b.extend_from_slice(&self.pid.to_le_bytes());
        b.extend_from_slice(&self.start.to_le_bytes());
        for field in [
            self.node_uid.as_bytes(),
            self.shm_name.as_bytes(),
            &self.fabric,
        ] {
            b.extend_from_slice(&(field.len() as u32).to_le_bytes());
            b.extend_from_slice(field);
        }
        b
    }

    pub fn from_bytes(b: &[u8]) -> Result<ProcCard> {
        let mut r = crate::packet::Reader::new(b);
        if r.u32()? != CARD_MAGIC {
            return Err(CommError::Malformed(
                "address card has a wrong magic".into(),
            ));
        }
        let gpid = Gpid::from_u64(r.u64()?);
        let pid = r.u32()? as i32;
        let start = r.u64()?;
        let node_uid = r.string()?;
        let shm_name = r.string()?;
        let fabric = r.bytes()?.to_vec();
        Ok(ProcCard {
            gpid,
            node_uid,
            pid,
            start,
            shm_name,
            fabric,
        })
    }
}

/// A list of address cards (a group, for a peer that may not know its members), in order.
pub fn encode_cards(cards: &[ProcCard]) -> Vec<u8> {
    let mut b = (cards.len() as u32).to_le_bytes().to_vec();
    for c in cards {
        let card = c.to_bytes();
        b.extend_from_slice(&(card.len() as u32).to_le_bytes());
        b.extend_from_slice(&card);
    }
    b
}

/// Decodes `encode_cards` at the start of `b`; returns the cards and the bytes that follow.
pub fn decode_cards(b: &[u8]) -> Result<(Vec<ProcCard>, &[u8])> {
    let mut r = crate::packet::Reader::new(b);
    let n = r.u32()? as usize;
    if n > b.len() {
        return Err(CommError::Malformed(format!(
            "list of {n} cards in {} bytes",
            b.len()
        )));
    }
    let mut cards = Vec::with_capacity(n);
    for _ in 0..n {
        cards.push(ProcCard::from_bytes(r.bytes()?)?);
    }
    Ok((cards, r.rest()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_round_trip_and_garbage() {
        let c = ProcCard {
            gpid: Gpid { job: 7, rank: 3 },
            node_uid: "n0".into(),
            pid: 1234,
            start: 56789,
            shm_name: "ibdyn-1234".into(),
            fabric: vec![1, 2, 3],
        };
        assert_eq!(ProcCard::from_bytes(&c.to_bytes()).unwrap(), c);
        let b = c.to_bytes();
        for cut in 0..b.len() {
            assert!(ProcCard::from_bytes(&b[..cut]).is_err());
        }
        assert!(ProcCard::from_bytes(&[0xff; 40]).is_err());
        let list = encode_cards(&[c.clone(), c.clone()]);
        assert_eq!(decode_cards(&list).unwrap(), (vec![c.clone(), c], &[][..]));
        assert!(decode_cards(&list[..list.len() - 1]).is_err());
    }
}
