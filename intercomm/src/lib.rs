//! Processes, groups and communicators, intra and inter; context ids; the matching engine and
//! the progress loop that drives the shared-memory and fabric routes; point-to-point.

mod backoff;
mod comm;
pub mod context;
mod engine;
mod error;
mod gpid;
mod group;
mod inter;
mod packet;
mod peers;
mod reqs;
mod request;
mod runtime;
mod topology;
mod universe;

pub use comm::Communicator;
pub use engine::{ANY_SOURCE, ANY_TAG, PROC_NULL};
pub use error::{ChildFailure, CommError, Result};
pub use gpid::{decode_cards, encode_cards, Gpid, ProcCard};
pub use group::{Group, GroupRelation};
pub use ibdyn_verbs::AddressCard;
pub use reqs::Status;
pub use request::{wait_all, wait_any, Request};
pub use runtime::Runtime;
pub use universe::{init_logging, Universe, DEFAULT_EAGER_LIMIT};

/// Whether a CMA failure means the kernel refuses it (so the copy fallback applies) rather
/// than the peer being gone.
pub(crate) fn cma_refused(e: &ibdyn_shm::ShmError) -> bool {
    matches!(e, ibdyn_shm::ShmError::CmaRefused { .. })
}
