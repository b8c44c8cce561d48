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
    /// A verb that failed with an errno; the errno is the `source()` (a `std::io::Error`).
    #[error(transparent)]
    VerbErrno(VerbFailure),
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

/// One failed verb: its name, the errno it returned (kept as the error's `source()`) and what to
/// do about it.
#[derive(Debug)]
pub struct VerbFailure {
    verb: &'static str,
    errno: std::io::Error,
    fix: &'static str,
}

impl VerbFailure {
    /// `errno` is a positive OS error number; `fix` tells the user what to check or change.
    pub fn new(verb: &'static str, errno: i32, fix: &'static str) -> Self {
        VerbFailure {
            verb,
            errno: std::io::Error::from_raw_os_error(errno),
            fix,
        }
    }

    /// The verb that failed, e.g. `ibv_modify_qp(RTR)`.
    pub fn verb(&self) -> &'static str {
        self.verb
    }

    /// The OS error number the verb returned.
    pub fn errno(&self) -> i32 {
        self.errno.raw_os_error().unwrap_or(0)
    }
}

impl std::fmt::Display for VerbFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed: {}; {}", self.verb, self.errno, self.fix)
    }
}

impl std::error::Error for VerbFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.errno)
    }
}

impl Clone for VerbFailure {
    fn clone(&self) -> Self {
        VerbFailure::new(self.verb, self.errno(), self.fix)
    }
}

impl PartialEq for VerbFailure {
    fn eq(&self, other: &Self) -> bool {
        (self.verb, self.errno(), self.fix) == (other.verb, other.errno(), other.fix)
    }
}

impl Eq for VerbFailure {}

impl VerbsError {
    pub(crate) fn sock(op: &'static str, addr: impl std::fmt::Display, e: std::io::Error) -> Self {
        VerbsError::Socket {
            op,
            addr: addr.to_string(),
            detail: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn a_verb_failure_keeps_its_errno_as_source() {
        let e = VerbsError::VerbErrno(VerbFailure::new(
            "ibv_modify_qp(RTR)",
            libc::EINVAL,
            "check the peer's card",
        ));
        let io = e
            .source()
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .expect("the errno is the source");
        assert_eq!(io.raw_os_error(), Some(libc::EINVAL));
        let msg = e.to_string();
        assert!(msg.starts_with("ibv_modify_qp(RTR) failed: "), "{msg}");
        assert!(msg.ends_with("; check the peer's card"), "{msg}");
        assert_eq!(e.clone(), e);
        let other = VerbsError::VerbErrno(VerbFailure::new(
            "ibv_modify_qp(RTR)",
            libc::ENOMEM,
            "check the peer's card",
        ));
        assert_ne!(e, other);
    }
}
