use thiserror::Error;

/// Every error a communicator operation can return.
#[derive(Debug, Error)]
pub enum CommError {
    #[error("rank {rank} is out of range for a group of {size}")]
    InvalidRank { rank: i64, size: usize },
    #[error("tag {0} is invalid (tags are >= 0; ANY_TAG only on receives)")]
    InvalidTag(i32),
    #[error(
        "message truncated: {message_len} bytes from rank {sender} with tag {tag} arrived for \
         a {buffer_len}-byte receive buffer"
    )]
    Truncated {
        message_len: usize,
        buffer_len: usize,
        /// The message's envelope, for the status of the failed receive.
        sender: i32,
        tag: i32,
        /// Bytes of the message's start written into the buffer (none for a rendezvous).
        received: usize,
    },
    #[error("the communicator has been freed")]
    CommFreed,
    #[error("peer {peer} is dead: {detail}")]
    PeerDead { peer: String, detail: String },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("malformed packet from the wire: {0}")]
    Malformed(String),
    #[error("timed out after {secs} s waiting for {what}")]
    Timeout { what: String, secs: u64 },
    #[error("process manager: {0}")]
    Pmi(#[from] ibdyn_pmi::PmiError),
    #[error("shared memory: {0}")]
    Shm(#[from] ibdyn_shm::ShmError),
    #[error("fabric: {0}")]
    Verbs(#[from] ibdyn_verbs::VerbsError),
    #[error("spawn failed: {}", failures.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("; "))]
    SpawnFailed { failures: Vec<ChildFailure> },
    #[error("the root (rank {root}) failed: {error}")]
    RootFailed { root: i32, error: String },
    #[error("collective operation: {0}")]
    Collective(Box<dyn std::error::Error + Send + Sync + 'static>),
    #[error("the runtime is already initialised in this process")]
    AlreadyInitialized,
    #[error("unknown process set {name:?} (names are case-sensitive; known: {known})")]
    UnknownPset { name: String, known: String },
    #[error(
        "process set index {index} is out of range: this session knows {count} sets (0..{count})"
    )]
    PsetIndex { index: usize, count: usize },
    #[error("malformed process set definition {text:?}: {why}")]
    MalformedPset { text: String, why: String },
    #[error("the session has been finalized: initialise a new one with Session::init")]
    SessionFinalized,
    #[error(
        "the groups come from two sessions (init epochs {first} and {second}): take every \
         group of one call from the same session (group_from_pset of one Session)"
    )]
    MixedSessions { first: u64, second: u64 },
    #[error(
        "the group comes from the session of init epoch {epoch}, which has been finalized \
         (live sessions: {live}): take the group again from a live session with group_from_pset"
    )]
    StaleSession { epoch: u64, live: String },
    #[error(
        "member {peer} withdrew its part of communicator {tag:?} (#{seq}, from its session \
         of init epoch {epoch}): the call failed there (its own error says why: the members \
         disagree about the groups or the leaders, a member did not take part in time, or it \
         finalized and re-initialised since); create the communicator again on every member \
         with the same groups, leaders and tag"
    )]
    StalePeer {
        tag: String,
        peer: String,
        epoch: u64,
        seq: u64,
    },
    #[error("no session or universe is initialised in this process: call Session::init or ibdyn::initialize first")]
    NotInitialized,
    #[error("the members disagree about the group of communicator {tag:?}: {detail}")]
    GroupMismatch { tag: String, detail: String },
    #[error("context id {wire:#x} (from {what}) is already used by a communicator of this process; free it, or use another tag")]
    ContextCollision { wire: u64, what: String },
    #[error(
        "the operation was cancelled (MPI_Cancel) before it matched: nothing was sent or received"
    )]
    Cancelled,
}

pub type Result<T, E = CommError> = std::result::Result<T, E>;

/// Why one child of a spawn did not start (or did not connect back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildFailure {
    /// The child's rank in the spawned job.
    pub rank: u32,
    /// An errno-style code (0 when the cause is not an OS error).
    pub code: i32,
    pub message: String,
}

impl std::fmt::Display for ChildFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "child {}: {} (code {})",
            self.rank, self.message, self.code
        )
    }
}
