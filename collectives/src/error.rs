use thiserror::Error;

/// Every error a collective operation can return.
#[derive(Debug, Error)]
pub enum CollError {
    /// The point-to-point layer failed (dead peer, truncated receive, freed communicator, ...).
    #[error("point-to-point: {0}")]
    Comm(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    /// A block arrived with a size other than the one this rank's arguments call for:
    /// the ranks passed mismatched counts.
    #[error("size mismatch: expected {expected} bytes from rank {peer}, got {got} (mismatched counts across ranks?)")]
    SizeMismatch {
        peer: usize,
        expected: usize,
        got: usize,
    },
    /// A local argument is inconsistent (buffer length, root, counts, element size).
    #[error("invalid argument to {op}: {detail}")]
    InvalidArgument { op: &'static str, detail: String },
    /// A forced algorithm cannot run this operation (e.g. a reordering algorithm with a
    /// non-commutative reduction).
    #[error("algorithm {algo} cannot run {op}: {why}")]
    AlgorithmNotApplicable {
        op: &'static str,
        algo: &'static str,
        why: &'static str,
    },
    /// `IBDYN_COLL_ALGO` or a programmatic setting could not be understood.
    #[error("bad algorithm setting {setting:?}: {why}")]
    BadSetting { setting: String, why: String },
    /// A reduction operation was built for element types it does not support.
    #[error("reduction {op} is not defined on {ty}")]
    OpNotDefined { op: &'static str, ty: &'static str },
    /// The collective request failed earlier and cannot continue.
    #[error("the collective request already failed: {0}")]
    Failed(String),
    /// An internal schedule was inconsistent (a bug in this crate, reported instead of acted on).
    #[error("internal schedule error: {0}")]
    Schedule(String),
}

impl CollError {
    /// Wraps an error of the point-to-point layer.
    pub fn comm<E: std::error::Error + Send + Sync + 'static>(e: E) -> CollError {
        CollError::Comm(Box::new(e))
    }

    /// Wraps a point-to-point error that is not `Send + Sync` by its message.
    pub fn comm_message(e: impl std::fmt::Display) -> CollError {
        CollError::Comm(e.to_string().into())
    }

    pub(crate) fn arg(op: &'static str, detail: impl Into<String>) -> CollError {
        CollError::InvalidArgument {
            op,
            detail: detail.into(),
        }
    }
}

pub type Result<T, E = CollError> = std::result::Result<T, E>;
