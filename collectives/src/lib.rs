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
//! implements it for `ibdyn_intercomm::Communicator`.

mod algo;
mod coll;
// mod comm_adapter; // wired by the lead once ibdyn-intercomm compiles
mod config;
mod error;
mod exec;
mod op;
mod p2p;
mod schedule;
mod typed;
mod typed_ops;

pub use coll::Collectives;
pub use config::{AlgoConfig, Algorithm, CollOp, Thresholds, ALGO_ENV};
pub use error::{CollError, Result};
pub use exec::CollRequest;
pub use op::{BuiltinOp, ElemType, Op};
pub use p2p::{P2pRequest, PointToPoint, Team};
pub use typed::{as_bytes, as_bytes_mut, Element};
