//! Processes, groups and communicators, intra and inter; context ids; the matching engine and
//! the progress loop that drives the shared-memory and fabric routes; point-to-point.

mod backoff;
mod comm;
pub mod context;
mod engine;
mod error;
mod fabric_share;
mod from_group;
mod gpid;
mod group;
mod inter;
mod local_ids;
mod matching;
mod net_route;
mod packet;
mod peers;
mod prestarted;
pub mod process;
mod protocol;
mod reqs;
mod request;
mod route;
mod runtime;
mod service;
mod shm_route;
mod topology;
pub mod turns;
mod universe;

pub use comm::{Communicator, Message};
pub use error::{ChildFailure, CommError, Result};
pub use from_group::{comm_from_group, intercomm_from_groups};
pub use gpid::{decode_cards, encode_cards, Gpid, ProcCard};
pub use group::{Group, GroupRelation};
pub use ibdyn_verbs::AddressCard;
pub use matching::{ANY_SOURCE, ANY_TAG, PROC_NULL};
pub use net_route::ControlResponder;
pub use reqs::Status;
pub use request::{wait_all, wait_any, Request};
pub use runtime::Runtime;
pub use service::{Answer, Service};
pub use universe::{init_logging, Universe, DEFAULT_EAGER_LIMIT};

/// Whether a CMA failure means the kernel refuses it (so the copy fallback applies) rather
/// than the peer being gone.
pub(crate) fn cma_refused(e: &ibdyn_shm::ShmError) -> bool {
    matches!(e, ibdyn_shm::ShmError::CmaRefused { .. })
}
