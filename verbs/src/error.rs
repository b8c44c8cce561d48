//! The one error type of the verbs layer.

use std::time::Duration;

/// Everything that can go wrong in the fabric. Peers and users cause the `Peer*`, `Remote*` and
/// `Invalid*` variants; the others name the verb or system call that failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum VerbsError {
    #[error("no InfiniBand device found (IBDYN_PROVIDER=ib forces the ib provider; use sock or unset it)")]
    NoDevice,
    #[error("provider `ib` is not compiled in (build ibdyn-verbs with feature `ib`)")]
    IbNotCompiled,
    #[error("unknown provider {0:?} in IBDYN_PROVIDER (expected `ib` or `sock`)")]
    UnknownProvider(String),
    #[error("{verb} failed: {detail}")]
    Verb { verb: &'static str, detail: String },
    #[error("socket {op} on {addr}: {detail}")]
    Socket {
        op: &'static str,
        addr: String,
        detail: String,
    },
    #[error("invalid address card: {0}")]
    InvalidCard(String),
    #[error("address card is for provider {card} but this fabric runs {local}")]
    ProviderMismatch { card: String, local: String },
    #[error(
        "peer {peer:#x} did not answer the connect request after {retries} retries ({elapsed:?})"
    )]
    ConnectTimeout {
        peer: u64,
        retries: u32,
        elapsed: Duration,
    },
    #[error("control datagram to {to} not acknowledged after {retries} retries")]
    ControlUndelivered { to: String, retries: u32 },
    #[error("peer {peer:#x} failed earlier: {reason}")]
    PeerFailed { peer: u64, reason: String },
    #[error("connection to peer {peer:#x} broke: {detail}")]
    ConnectionLost { peer: u64, detail: String },
    #[error("remote access refused: {0}")]
    RemoteAccess(String),
    #[error("message of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge { len: usize, max: usize },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("operation {0} is not supported by this provider")]
    Unsupported(&'static str),
}

pub type Result<T, E = VerbsError> = std::result::Result<T, E>;

impl VerbsError {
    pub(crate) fn sock(op: &'static str, addr: impl std::fmt::Display, e: std::io::Error) -> Self {
        VerbsError::Socket {
            op,
            addr: addr.to_string(),
            detail: e.to_string(),
        }
    }
}
