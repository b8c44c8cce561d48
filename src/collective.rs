//! rsmpi-style collectives: `world.all_reduce_into(&x, &mut y, SystemOperation::sum())`,
//! `world.process_at_rank(0).broadcast_into(&mut buf)`, plus the non-blocking forms.
//! The algorithms live in `ibdyn-collectives`; each communicator caches its collective state.
//! Varcount forms take a `Partition`/`PartitionMut` (counts and displacements in elements),
//! checked on the calling rank; a rank whose layout is refused still runs the operation with
//! empty blocks (a stand-in), so the others see a size mismatch rather than wait for ever.
//!
//! Which traits a communicator has follows its kind: [`CommunicatorCollectives`] on both,
//! [`IntraCommunicatorCollectives`] and [`Root`] on intracommunicators only,
//! [`InterCommunicatorCollectives`] and [`RemoteRoot`] on intercommunicators only.

mod inter;
mod intra;
mod op;
mod request;
mod root;
mod shared;

pub use inter::{InterCommunicatorCollectives, InterRoot, RemoteRoot};
pub use intra::IntraCommunicatorCollectives;
pub use op::{Operation, SystemOperation, UserOperation};
pub use request::CollectiveRequest;
pub use root::Root;
pub use shared::{Backend, CommunicatorCollectives};

pub use ibdyn_collectives::{Algorithm, CollOp, ElemType};

/// Algorithms can be forced per operation with `IBDYN_COLL_ALGO=op:algo[,op:algo...]`.
pub const COLL_ALGO_ENV: &str = ibdyn_collectives::ALGO_ENV;
