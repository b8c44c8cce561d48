//! The connection handshake's messages on the UD control channel, one type per step.
//!
//! A control message starts with one kind byte; user datagrams (`Fabric::control_send`) share the
//! channel under their own kind.

use crate::provider::RcEndpoint;

const KIND_REQUEST: u8 = 1;
const KIND_REPLY: u8 = 2;
const KIND_USER: u8 = 3;
const KIND_READY: u8 = 4;
const HANDSHAKE_LEN: usize = 1 + 8 + 4 + 4;

/// One step of the on-demand connection handshake. `key` is the sender's process key; `ep` the
/// sender's RC endpoint for this pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handshake {
    /// "Connect to this endpoint of mine": the active side's opening.
    Request { key: u64, ep: RcEndpoint },
    /// "I connected my endpoint to yours; here it is": the passive side's answer.
    Reply { key: u64, ep: RcEndpoint },
    /// "My endpoint is connected to yours too; you may send": the active side's last word.
    Ready { key: u64, ep: RcEndpoint },
}

/// Everything that travels on the control channel.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ControlMsg<'a> {
    Handshake(Handshake),
    User(&'a [u8]),
}

impl Handshake {
    pub(crate) fn key(&self) -> u64 {
        match *self {
            Handshake::Request { key, .. }
            | Handshake::Reply { key, .. }
            | Handshake::Ready { key, .. } => key,
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let (kind, key, ep) = match *self {
            Handshake::Request { key, ep } => (KIND_REQUEST, key, ep),
            Handshake::Reply { key, ep } => (KIND_REPLY, key, ep),
            Handshake::Ready { key, ep } => (KIND_READY, key, ep),
        };
        let mut b = Vec::with_capacity(HANDSHAKE_LEN);
        b.push(kind);
        b.extend_from_slice(&key.to_le_bytes());
        b.extend_from_slice(&ep.qpn.to_le_bytes());
        b.extend_from_slice(&ep.psn.to_le_bytes());
        b
    }
}

/// Prefix a user datagram with its kind.
pub(crate) fn encode_user(data: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(data.len() + 1);
    b.push(KIND_USER);
    b.extend_from_slice(data);
    b
}

/// Parse a delivered control message; `None` when it is malformed.
pub(crate) fn decode(b: &[u8]) -> Option<ControlMsg<'_>> {
    let (&kind, body) = b.split_first()?;
    if kind == KIND_USER {
        return Some(ControlMsg::User(body));
    }
    if b.len() != HANDSHAKE_LEN {
        return None;
    }
    let key = u64::from_le_bytes(body[0..8].try_into().ok()?);
    let qpn = u32::from_le_bytes(body[8..12].try_into().ok()?);
    let psn = u32::from_le_bytes(body[12..16].try_into().ok()?);
    let ep = RcEndpoint { qpn, psn };
    let h = match kind {
        KIND_REQUEST => Handshake::Request { key, ep },
        KIND_REPLY => Handshake::Reply { key, ep },
        KIND_READY => Handshake::Ready { key, ep },
        _ => return None,
    };
    Some(ControlMsg::Handshake(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_round_trips() {
        let ep = RcEndpoint {
            qpn: 0x0102_0304,
            psn: 0x00ab_cdef,
        };
        for h in [
            Handshake::Request { key: 7, ep },
            Handshake::Reply { key: u64::MAX, ep },
            Handshake::Ready { key: 0, ep },
        ] {
            assert_eq!(decode(&h.encode()), Some(ControlMsg::Handshake(h)));
        }
        assert_eq!(
            decode(&encode_user(b"hi")),
            Some(ControlMsg::User(&b"hi"[..]))
        );
        assert_eq!(decode(&encode_user(b"")), Some(ControlMsg::User(&b""[..])));
    }

    #[test]
    fn malformed_is_refused() {
        let good = Handshake::Request {
            key: 1,
            ep: RcEndpoint { qpn: 2, psn: 3 },
        }
        .encode();
        assert_eq!(decode(&[]), None);
        assert_eq!(decode(&good[..good.len() - 1]), None);
        let mut long = good.clone();
        long.push(0);
        assert_eq!(decode(&long), None);
        let mut unknown = good;
        unknown[0] = 99;
        assert_eq!(decode(&unknown), None);
    }
}
