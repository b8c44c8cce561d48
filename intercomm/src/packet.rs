//! The packets the point-to-point protocol puts on a route (shared-memory queue or fabric).
//! Every packet starts with a fixed header; the rest depends on its kind.

use crate::error::{CommError, Result};

/// Packet kinds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Header + the whole message.
    Eager = 1,
    /// Ready to send: the receiver pulls the data (CMA or RDMA read), then answers with `Fin`.
    Rts = 2,
    /// The receiver has pulled the data of a rendezvous; the sender's request completes.
    Fin = 3,
    /// Clear to send (copy fallback when CMA is refused): the sender pushes `Frag`s.
    Cts = 4,
    /// A fragment of a rendezvous message pushed through the queue.
    Frag = 5,
    /// Carries nothing; makes a connection at start-up (eager wire-up).
    Hello = 6,
    /// The sender of a rendezvous asks to withdraw it (MPI_Cancel); `word` is its request.
    CancelSend = 7,
    /// The receiver's answer to `CancelSend`: the body's one byte is 1 if the request to send
    /// was withdrawn unmatched, 0 if a receive had matched it (the send then completes).
    CancelReply = 8,
}

impl Kind {
    fn from_u8(v: u8) -> Result<Kind> {
        Ok(match v {
            1 => Kind::Eager,
            2 => Kind::Rts,
            3 => Kind::Fin,
            4 => Kind::Cts,
            5 => Kind::Frag,
            6 => Kind::Hello,
            7 => Kind::CancelSend,
            8 => Kind::CancelReply,
            _ => return Err(CommError::Malformed(format!("unknown packet kind {v}"))),
        })
    }
}

/// Header: kind, tag, context id, source rank (24 bytes, all an eager packet needs, so an
/// 8-byte message and its header share the queue cell's first cache line), then for the other
/// kinds the sender and a kind-specific 64-bit word (message id for rendezvous packets).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub tag: i32,
    pub ctx: u64,
    /// Sender's rank in its local group of the communicator.
    pub src: u32,
    /// Sender's universe-wide id (packed `Gpid`).
    pub from: u64,
    pub word: u64,
}

/// Largest header.
pub const HEADER_LEN: usize = 40;
/// Header of an eager packet.
pub const EAGER_HEADER_LEN: usize = 24;

impl Kind {
    fn header_len(self) -> usize {
        if self == Kind::Eager {
            EAGER_HEADER_LEN
        } else {
            HEADER_LEN
        }
    }
}

impl Header {
    /// The header's bytes (its length depends on the kind).
    pub fn encode(&self) -> HeaderBytes {
        let mut b = [0u8; HEADER_LEN];
        b[0] = self.kind as u8;
        b[4..8].copy_from_slice(&self.tag.to_le_bytes());
        b[8..16].copy_from_slice(&self.ctx.to_le_bytes());
        b[16..20].copy_from_slice(&self.src.to_le_bytes());
        b[24..32].copy_from_slice(&self.from.to_le_bytes());
        b[32..40].copy_from_slice(&self.word.to_le_bytes());
        HeaderBytes {
            b,
            len: self.kind.header_len(),
        }
    }

    /// The header of an eager packet (what `encode` gives for `Kind::Eager`, without building
    /// the longer header first).
    #[inline(always)]
    pub fn encode_eager(tag: i32, ctx: u64, src: u32) -> [u8; EAGER_HEADER_LEN] {
        let mut b = [0u8; EAGER_HEADER_LEN];
        b[0] = Kind::Eager as u8;
        b[4..8].copy_from_slice(&tag.to_le_bytes());
        b[8..16].copy_from_slice(&ctx.to_le_bytes());
        b[16..20].copy_from_slice(&src.to_le_bytes());
        b
    }

    /// The fields of an eager packet and its data, or `None` for any other packet (which
    /// then goes through [`Header::decode`]). The hot path of small messages.
    #[inline(always)]
    pub fn decode_eager(p: &[u8]) -> Option<(u64, u32, i32, &[u8])> {
        let (h, body) = p.split_first_chunk::<EAGER_HEADER_LEN>()?;
        if h[0] != Kind::Eager as u8 {
            return None;
        }
        let tag = i32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        let ctx = u64::from_le_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]]);
        let src = u32::from_le_bytes([h[16], h[17], h[18], h[19]]);
        Some((ctx, src, tag, body))
    }

    /// Splits a packet into its header and the rest.
    pub fn decode(p: &[u8]) -> Result<(Header, &[u8])> {
        let kind = Kind::from_u8(
            *p.first()
                .ok_or_else(|| CommError::Malformed("empty packet".into()))?,
        )?;
        let len = kind.header_len();
        if p.len() < len {
            return Err(CommError::Malformed(format!(
                "packet of {} bytes is shorter than its header",
                p.len()
            )));
        }
        let le32 = |i: usize| u32::from_le_bytes(p[i..i + 4].try_into().unwrap());
        let le64 = |i: usize| {
            if i + 8 <= len {
                u64::from_le_bytes(p[i..i + 8].try_into().unwrap())
            } else {
                0
            }
        };
        let h = Header {
            kind,
            tag: le32(4) as i32,
            ctx: le64(8),
            src: le32(16),
            from: le64(24),
            word: le64(32),
        };
        Ok((h, &p[len..]))
    }
}

/// Encoded header bytes.
pub struct HeaderBytes {
    b: [u8; HEADER_LEN],
    len: usize,
}

impl std::ops::Deref for HeaderBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.b[..self.len]
    }
}

/// Body of an `Rts`: where and how the receiver pulls the data from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RtsBody {
    pub len: u64,
    /// Sender's pid and buffer address, for CMA.
    pub pid: i32,
    pub addr: u64,
    /// Fabric key for an RDMA read (0 on the shared-memory route).
    pub rkey: u32,
}

pub const RTS_BODY_LEN: usize = 28;

impl RtsBody {
    pub fn encode(&self) -> [u8; RTS_BODY_LEN] {
        let mut b = [0u8; RTS_BODY_LEN];
        b[0..8].copy_from_slice(&self.len.to_le_bytes());
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..20].copy_from_slice(&self.addr.to_le_bytes());
        b[20..24].copy_from_slice(&self.rkey.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<RtsBody> {
        let mut r = Reader::new(b);
        let len = r.u64()?;
        let pid = r.u32()? as i32;
        let addr = r.u64()?;
        let rkey = r.u32()?;
        Ok(RtsBody {
            len,
            pid,
            addr,
            rkey,
        })
    }
}

/// A bounds-checked little-endian reader for wire data.
pub struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.b.len() < n {
            return Err(CommError::Malformed(format!(
                "needed {n} more bytes, {} left",
                self.b.len()
            )));
        }
        let (head, tail) = self.b.split_at(n);
        self.b = tail;
        Ok(head)
    }

    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    pub fn string(&mut self) -> Result<String> {
        String::from_utf8(self.bytes()?.to_vec())
            .map_err(|_| CommError::Malformed("string is not UTF-8".into()))
    }

    pub fn rest(self) -> &'a [u8] {
        self.b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_garbage() {
        let e = Header {
            kind: Kind::Eager,
            tag: 3,
            ctx: 8,
            src: 1,
            from: 0,
            word: 0,
        };
        let mut p = e.encode().to_vec();
        assert_eq!(p.len(), EAGER_HEADER_LEN);
        p.push(7);
        assert_eq!(Header::decode(&p).unwrap(), (e, &[7u8][..]));
        assert_eq!(Header::decode_eager(&p), Some((8, 1, 3, &[7u8][..])));
        assert_eq!(&Header::encode_eager(3, 8, 1)[..], &e.encode()[..]);
        assert_eq!(Header::decode_eager(&p[..EAGER_HEADER_LEN - 1]), None);
        let h = Header {
            kind: Kind::Rts,
            tag: 77,
            ctx: 0xdead_beef_0000_0010,
            src: 5,
            from: 42,
            word: 9,
        };
        let mut p = h.encode().to_vec();
        p.extend_from_slice(&[1, 2, 3]);
        assert_eq!(Header::decode_eager(&p), None);
        let (back, rest) = Header::decode(&p).unwrap();
        assert_eq!(back, h);
        assert_eq!(rest, &[1, 2, 3]);
        assert!(Header::decode(&p[..10]).is_err());
        for kind in [Kind::CancelSend, Kind::CancelReply] {
            let c = Header { kind, ..h };
            assert_eq!(Header::decode(&c.encode()).unwrap().0, c);
        }
        p[0] = 99;
        assert!(Header::decode(&p).is_err());
        let body = RtsBody {
            len: 1 << 30,
            pid: 12,
            addr: 0x7fff_0000,
            rkey: 3,
        };
        assert_eq!(RtsBody::decode(&body.encode()).unwrap(), body);
        assert!(RtsBody::decode(&body.encode()[..20]).is_err());
    }
}
