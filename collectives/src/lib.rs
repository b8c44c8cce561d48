//! Collective operations for ibdyn communicators.
//!
//! Every algorithm is a schedule builder (`algo/`): rounds of sends and receives over
//! regions of the caller's buffers and a scratch area, each followed by local copies and
//! reductions. One executor (`exec`) runs any schedule, blocking or by polling, and checks
//! the size of every block received, so mismatched arguments across ranks come back as
//! errors. The algorithms run over a `Team` (an ordered subset of a communicator's ranks).
//!
//! The communicator is reached through the small `PointToPoint` trait. Keep one
//! `Collectives` per communicator: it numbers the calls, and the number is the tag
//! (multiples of 8).
//!
//! Layers, each importing only those below it:
//! - the front end (`coll.rs`, `Collectives`): the tags, and for each call the tier that
//!   `tier::select` names (the table in `config.rs`);
//! - the tiers: `flat/` (one schedule over the team), `nodeshm.rs` (the node's shared-memory
//!   collective buffer, `ibdyn_shm::CollBuf`: one copy in, flags, one copy out), and
//!   `twolevel.rs` (node step, node leaders, node fan-out; its node steps on the node
//!   buffer or flat);
//! - the intercommunicator collectives (`inter/`, `InterCollectives`): the local group's
//!   front end plus one exchange between the group leaders over the intercommunicator;
//!   bcast and reduce whose root and other group share one node go through one buffer
//!   spanning them (`inter/rooted_shm.rs`); the non-blocking ones are one schedule whose
//!   transfers name either endpoint (`inter/nonblocking.rs`).
//!
//! All of it is generic over `PointToPoint`; `adapter.rs` (feature `comm`, on by default)
//! implements it for `ibdyn_intercomm::Communicator` and caches the collective state on
//! each communicator. Waits inside a collective poll for a while before they block
//! (`patience.rs`).

mod algo;
mod coll;
mod config;
mod error;
mod exec;
mod flat;
mod inter;
mod nodeshm;
mod op;
mod p2p;
mod patience;
mod schedule;
mod scratch;
mod tier;
mod twolevel;
mod typed;
mod typed_ops;

#[cfg(feature = "comm")]
mod adapter;
#[cfg(feature = "comm")]
pub use adapter::{collectives_of, collectives_with, inter_collectives_of};

pub use coll::Collectives;
pub use config::{AlgoConfig, Algorithm, CollOp, Thresholds, ALGO_ENV, FLAT, P2P};
pub use error::{CollError, Result};
pub use exec::CollRequest;
pub use inter::{InterCollectives, InterRequest, InterRole};
pub use op::{BuiltinOp, ElemType, Op};
pub use p2p::{P2pRequest, PointToPoint, Team};
pub use typed::{as_bytes, as_bytes_mut, Element};
