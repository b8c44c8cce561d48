//! What the provider keeps per RC queue pair, and per RDMA operation in flight.

use super::chunks::Reassembly;
use super::qp::QueuePair;
use crate::RemoteBuf;
use std::collections::VecDeque;

/// Work waiting for room in the send queue (or for the connection).
pub(super) enum Pending {
    /// One piece of a message (flag byte first), see `chunks`.
    Chunk(Vec<u8>),
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

pub(super) struct RcQp {
    pub(super) qp: QueuePair,
    pub(super) psn: u32,
    pub(super) connected: bool,
    /// Work requests posted and not completed.
    pub(super) outstanding: u32,
    pub(super) pending: VecDeque<Pending>,
    pub(super) reasm: Reassembly,
}

impl RcQp {
    pub(super) fn new(qp: QueuePair, psn: u32) -> RcQp {
        RcQp {
            qp,
            psn,
            connected: false,
            outstanding: 0,
            pending: VecDeque::new(),
            reasm: Reassembly::default(),
        }
    }

    /// Nothing queued and nothing posted without a completion.
    pub(super) fn flushed(&self) -> bool {
        self.pending.is_empty() && self.outstanding == 0
    }

    /// Everything sent is posted to the device (which delivers it without this process).
    pub(super) fn posted(&self) -> bool {
        self.pending.is_empty()
    }
}

/// An RDMA read or write posted on queue pair `qpn`.
pub(super) struct Op {
    pub(super) qpn: u32,
    pub(super) token: u64,
    /// The rkey of the local buffer's registration, released at completion.
    pub(super) rkey_local: u32,
    pub(super) write: bool,
}
