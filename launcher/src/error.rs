//! The one error type of the process manager (an OS error is kept as the source).

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot execute {program:?}: {source}")]
    Program { program: String, source: io::Error },
    #[error("invalid option: {0}")]
    Usage(String),
    #[error("{what}: {source}")]
    Io { what: String, source: io::Error },
    #[error("timed out after {secs} s waiting for {what}")]
    Timeout { what: String, secs: u64 },
    #[error("peer {peer} refused: {why}")]
    Auth { peer: String, why: String },
    #[error("protocol error from {peer}: {why}")]
    Protocol { peer: String, why: String },
    #[error("host {host}: {why}")]
    Host { host: String, why: String },
    #[error("node daemon {index} exited during start-up ({status})")]
    DaemonDied { index: u32, status: String },
    /// A rank's PMI request this daemon cannot serve (the reason goes back to the rank).
    #[error("{0}")]
    Request(String),
    #[error(transparent)]
    Pmi(#[from] ibdyn_pmi::PmiError),
}

impl LaunchError {
    /// The exit status of `ibdyn run` failing with this error: as a shell's, 127 for a program
    /// not found, 126 for one found that cannot be executed.
    pub fn exit_status(&self) -> i32 {
        match self {
            LaunchError::Program { source, .. } if source.kind() == io::ErrorKind::NotFound => 127,
            LaunchError::Program { .. } => 126,
            _ => 1,
        }
    }

    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> LaunchError {
        LaunchError::Io {
            what: what.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, LaunchError>;
