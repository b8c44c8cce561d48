//! The one error type of the PMI layer.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum PmiError {
    #[error("PMI environment: {0}")]
    Env(String),
    #[error("cannot connect to the PMI server at {path}: {source}")]
    Connect { path: String, source: io::Error },
    #[error("PMI I/O error during {what}: {source}")]
    Io { what: String, source: io::Error },
    #[error("PMI server closed the connection during {0}")]
    Closed(String),
    #[error("timed out after {secs:.1} s waiting for {what}")]
    Timeout { what: String, secs: f64 },
    #[error("malformed PMI line {line:?}: {why}")]
    Malformed { line: String, why: String },
    #[error("PMI command {cmd} failed: {msg}")]
    Server { cmd: String, msg: String },
    #[error("key {0:?} not found")]
    KeyNotFound(String),
    #[error("key {key:?} was not put by any process within {secs:.1} s")]
    KeyWaitTimeout { key: String, secs: f64 },
    #[error("service {0:?} not published")]
    ServiceNotFound(String),
    #[error("invalid {what} {value:?}: {why}")]
    Invalid {
        what: String,
        value: String,
        why: String,
    },
    #[error("{0} is not supported by this PMI server")]
    NotSupported(String),
    #[error("unknown PMI request id {0}")]
    UnknownRequest(u64),
    #[error("spawn failed: {0}")]
    SpawnFailed(Box<crate::jobs::SpawnReply>),
    #[error("cannot start a private ibdyn daemon for this singleton: {0}")]
    Singleton(String),
    #[error("PMI client already finalized")]
    Finalized,
}

impl PmiError {
    pub(crate) fn io(what: &str, source: io::Error) -> PmiError {
        PmiError::Io {
            what: what.to_string(),
            source,
        }
    }

    pub(crate) fn invalid(what: &str, value: &str, why: &str) -> PmiError {
        PmiError::Invalid {
            what: what.into(),
            value: value.into(),
            why: why.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, PmiError>;
