//! Intercommunicators: a local and a remote group, as `spawn`, `accept`, `connect`,
//! `intercomm_create` and `universe.parent()` give them.

use crate::communicator::{sealed, EngineComm};
use crate::{CommError, Communicator, Group, IntraCommunicator, Result};
use ibdyn_collectives::InterCollectives;
use std::rc::Rc;

/// A communicator between two groups (MPI's intercommunicator). Point-to-point ranks name
/// processes of the remote group; `rank` and `size` are of the local group. Cloning gives
/// another handle to the same communicator.
#[derive(Clone)]
pub struct InterCommunicator {
    comm: EngineComm,
}

impl sealed::Kind for InterCommunicator {
    type Colls = InterCollectives<EngineComm>;

    fn wrap(comm: EngineComm) -> Result<Self> {
        if !comm.is_inter() {
            return Err(CommError::InvalidArgument(
                "an intracommunicator where an intercommunicator was expected".into(),
            ));
        }
        Ok(InterCommunicator { comm })
    }

    fn engine(&self) -> &EngineComm {
        &self.comm
    }

    fn colls(&self) -> Result<Rc<Self::Colls>> {
        if self.comm.is_freed() {
            return Err(CommError::CommFreed);
        }
        Ok(ibdyn_collectives::inter_collectives_of(&self.comm)?)
    }
}

impl Communicator for InterCommunicator {}

impl InterCommunicator {
    /// The size of the remote group (MPI_Comm_remote_size).
    pub fn remote_size(&self) -> i32 {
        self.comm.remote_size()
    }

    /// The remote group (MPI_Comm_remote_group).
    pub fn remote_group(&self) -> &Group {
        // `wrap` admits only engine communicators with a remote group.
        self.comm
            .remote_group()
            .expect("an InterCommunicator has a remote group")
    }

    /// An intracommunicator of both groups, the group passing `high = false` first; with
    /// equal `high`, the group holding the lowest process id first (MPI_Intercomm_merge).
    /// Collective over both groups.
    pub fn merge(&self, high: bool) -> Result<IntraCommunicator> {
        sealed::Kind::wrap(self.comm.merge(high)?)
    }
}
