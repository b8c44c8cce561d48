//! ibdyn: an InfiniBand-native communication runtime for parallel jobs whose processes
//! come and go while they run. This crate is the one a user adds; it re-exports the layers.
//!
//! ```no_run
//! use ibdyn::traits::*;
//! let universe = ibdyn::initialize()?;
//! let world = universe.world();
//! if world.rank() == 0 {
//!     world.process_at_rank(1).send(&[1.0f64, 2.0, 3.0][..])?;
//! } else if world.rank() == 1 {
//!     let (v, _status) = world.process_at_rank(0).receive_vec::<f64>()?;
//!     assert_eq!(v, vec![1.0, 2.0, 3.0]);
//! }
//! # Ok::<(), ibdyn::CommError>(())
//! ```
//!
//! The two kinds of communicator are two types. [`IntraCommunicator`] (one group: the
//! world, `self_comm`, `split`, `create`, `merge`) and [`InterCommunicator`] (two groups:
//! `spawn`, `accept`, `connect`, `intercomm_create`, `universe.parent()`) share the
//! [`Communicator`] and [`CommunicatorCollectives`] traits; the rest belongs to one kind
//! only, so calling an intracommunicator operation on an intercommunicator does not
//! compile:
//!
//! ```compile_fail
//! use ibdyn::traits::*;
//! use ibdyn::SystemOperation;
//! let universe = ibdyn::initialize()?;
//! let children = universe.world().process_at_rank(0).spawn(&std::process::Command::new("./w"), 2)?;
//! let mut prefix = [0i64];
//! // MPI_Scan is defined on intracommunicators only.
//! children.scan_into(&[1i64], &mut prefix, SystemOperation::sum())?;
//! # Ok::<(), ibdyn::CommError>(())
//! ```
//!
//! The same call on an intracommunicator compiles, and `merge` turns the intercommunicator
//! into one:
//!
//! ```no_run
//! use ibdyn::traits::*;
//! use ibdyn::SystemOperation;
//! let universe = ibdyn::initialize()?;
//! let children = universe.world().process_at_rank(0).spawn(&std::process::Command::new("./w"), 2)?;
//! let everyone = children.merge(false)?;
//! let mut prefix = [0i64];
//! everyone.scan_into(&[1i64], &mut prefix, SystemOperation::sum())?;
//! # Ok::<(), ibdyn::CommError>(())
//! ```

#![deny(missing_docs)]

mod collective;
mod communicator;
mod datatype;
mod dynamic;
mod from_group;
mod inter;
mod intra;
mod partition;
mod point_to_point;
mod pset;
mod pset_ops;
mod res_change;
mod session;
mod session_live;
mod universe;

pub use collective::{
    Algorithm, CollOp, CollectiveRequest, CommunicatorCollectives, ElemType,
    InterCommunicatorCollectives, InterRoot, IntraCommunicatorCollectives, Operation, RemoteRoot,
    Root, SystemOperation, UserOperation, COLL_ALGO_ENV,
};
pub use communicator::Communicator;
pub use datatype::{vec_from_bytes, Buffer, BufferMut, Equivalence};
pub use dynamic::{
    close_port, lookup_name, open_port, publish_name, unpublish_name, ConnectAccept, Port, Spawn,
    SpawnOptions, Wireup,
};
pub use from_group::{intercomm_from_groups, GroupCommunicators};
pub use ibdyn_intercomm::{
    wait_all, wait_any, CommError, Gpid, Group, GroupRelation, Request, Result, Status, ANY_SOURCE,
    ANY_TAG, DEFAULT_EAGER_LIMIT, PROC_NULL,
};
pub use ibdyn_pmi as pmi;
pub use inter::InterCommunicator;
pub use intra::IntraCommunicator;
pub use partition::{Partition, PartitionMut};
pub use point_to_point::{AnyProcess, Process, Source};
pub use pset::{SELF as PSET_SELF, WORLD as PSET_WORLD};
pub use pset_ops::{ChangeState, PsetChange, PsetOp, PsetOpOptions, PsetRequest, DYNAMIC_SCHEME};
pub use res_change::{ResChange, NEW_MAIN_KEY};
pub use session::{PsetInfo, Session, SessionOptions};
pub use universe::Universe;

/// Initialises the runtime of this process (MPI_Init). Finalised when the universe drops.
/// In a spawned job this also connects to the parent job (`universe.parent()`).
pub fn initialize() -> Result<Universe> {
    // The start-up answers of the process manager are read while a spawned job's root
    // greets its parent (attach_parent finishes the start-up in every case).
    let universe = ibdyn_intercomm::Universe::init_deferred()?;
    if let Err(e) = ibdyn_spawn::dynamic::attach_parent(&universe) {
        universe.abandon();
        return Err(e);
    }
    Universe::new(universe)
}

/// The traits a program imports: `use ibdyn::traits::*;`.
pub mod traits {
    pub use crate::collective::{
        CommunicatorCollectives, InterCommunicatorCollectives, IntraCommunicatorCollectives,
        RemoteRoot, Root,
    };
    pub use crate::communicator::Communicator;
    pub use crate::datatype::{Buffer, BufferMut, Equivalence};
    pub use crate::dynamic::{ConnectAccept, Spawn};
    pub use crate::from_group::GroupCommunicators;
    pub use crate::point_to_point::Source;
}
