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

mod collective;
mod datatype;
mod dynamic;
mod partition;
mod point_to_point;

pub use collective::{
    Algorithm, CollOp, CollectiveRequest, CommunicatorCollectives, ElemType,
    InterCommunicatorCollectives, InterRoot, Operation, Root, SystemOperation, UserOperation,
    COLL_ALGO_ENV,
};
pub use datatype::{vec_from_bytes, Buffer, BufferMut, Equivalence};
pub use dynamic::{
    close_port, lookup_name, open_port, publish_name, unpublish_name, ConnectAccept, Port, Spawn,
    SpawnOptions, Wireup,
};
pub use ibdyn_intercomm::{
    wait_all, wait_any, CommError, Communicator, Gpid, Group, GroupRelation, Request, Result,
    Status, Universe, ANY_SOURCE, ANY_TAG, DEFAULT_EAGER_LIMIT, PROC_NULL,
};
pub use ibdyn_pmi as pmi;
pub use partition::{Partition, PartitionMut};
pub use point_to_point::{AnyProcess, CommunicatorExt, Process, Source};

/// Initialises the runtime of this process (MPI_Init). Finalised when the universe drops.
/// In a spawned job this also connects to the parent job (`universe.parent()`).
pub fn initialize() -> Result<Universe> {
    // The start-up answers of the process manager are read while a spawned job's root
    // greets its parent (attach_parent finishes the start-up in every case).
    let universe = Universe::init_deferred()?;
    ibdyn_spawn::dynamic::attach_parent(&universe)?;
    Ok(universe)
}

/// The traits a program imports: `use ibdyn::traits::*;`.
pub mod traits {
    pub use crate::collective::{CommunicatorCollectives, InterCommunicatorCollectives, Root};
    pub use crate::datatype::{Buffer, BufferMut, Equivalence};
    pub use crate::dynamic::{ConnectAccept, Spawn};
    pub use crate::point_to_point::{CommunicatorExt, Source};
}
