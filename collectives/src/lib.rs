//! Collective operations for ibdyn communicators.
//!
//! Every algorithm is a schedule builder (`algo/`): rounds of sends and receives over
//! regions of the caller's buffers and a scratch area, each followed by local copies and
//! reductions. One executor (`exec`) runs any schedule, blocking or by polling, and checks
//! the size of every block received, so mismatched arguments across ranks come back as
//! errors. The algorithms run over a `Team` (an ordered subset of a communicator's ranks):
//! the seam for node-aware two-level forms and for intercommunicator collectives.
//!
//! The communicator is reached through the small `PointToPoint` trait; `comm_adapter.rs`
//! implements it for `ibdyn_intercomm::Communicator`. Keep one `Collectives` per
//! communicator: it numbers the calls, and the number is the tag (multiples of 8).
//!
//! A team whose processes share one node runs its blocking barrier, bcast, reduce,
//! allreduce, gather and allgather through the node's shared-memory collective buffer
//! (`nodeshm.rs` over `ibdyn_shm::CollBuf`: one copy in, flags, one copy out) where that is
//! faster; the two-level forms' node steps and the intercommunicator forms' local steps use
//! it too. Intercommunicator bcast and reduce whose root and other group share one node use
//! one buffer spanning them (`inter/rooted_shm.rs`). Waits inside a collective poll for a while before they block (`patience.rs`).
//!
//! Non-blocking intercommunicator collectives (`inter_nb.rs`) are one schedule whose
//! transfers name either endpoint (the local group's or the intercommunicator's).
//!
//! Seam for what comes next: non-blocking two-level forms: build a schedule on the node
//! team, one on the leader team, and one more on the node team, map each part's peers with
//! its team, and `Schedule::append` them into one collective.

mod algo;
mod coll;
mod comm_adapter;
pub use comm_adapter::{collectives_of, collectives_with};
mod config;
mod error;
mod exec;
mod inter;
mod inter_nb;
pub use inter::{inter_collectives_of, InterCollectives, InterRole};
pub use inter_nb::InterRequest;
mod movement;
mod nodeshm;
mod op;
mod p2p;
mod patience;
mod reductions;
mod schedule;
mod scratch;
mod twolevel;
mod typed;
mod typed_ops;

pub use coll::Collectives;
pub use config::{AlgoConfig, Algorithm, CollOp, Thresholds, ALGO_ENV, FLAT, P2P};
pub use error::{CollError, Result};
pub use exec::CollRequest;
pub use op::{BuiltinOp, ElemType, Op};
pub use p2p::{P2pRequest, PointToPoint, Team};
pub use typed::{as_bytes, as_bytes_mut, Element};
