//! Intracommunicators: one group of processes talking among themselves.

use crate::communicator::{sealed, EngineComm};
use crate::point_to_point::Process;
use crate::{CommError, Communicator, Group, InterCommunicator, Result};
use ibdyn_collectives::Collectives;
use std::rc::Rc;

/// A communicator over one group (MPI's intracommunicator, rsmpi's `SimpleCommunicator`):
/// `universe.world()`, `universe.self_comm()`, `split`, `create` and
/// [`InterCommunicator::merge`] give one. Cloning gives another handle to the same
/// communicator.
#[derive(Clone)]
pub struct IntraCommunicator {
    comm: EngineComm,
}

impl sealed::Kind for IntraCommunicator {
    type Colls = Collectives<EngineComm>;

    fn wrap(comm: EngineComm) -> Result<Self> {
        if comm.is_inter() {
            return Err(CommError::InvalidArgument(
                "an intercommunicator where an intracommunicator was expected".into(),
            ));
        }
        Ok(IntraCommunicator { comm })
    }

    fn engine(&self) -> &EngineComm {
        &self.comm
    }

    fn colls(&self) -> Result<Rc<Self::Colls>> {
        if self.comm.is_freed() {
            return Err(CommError::CommFreed);
        }
        Ok(ibdyn_collectives::collectives_of(&self.comm)?)
    }
}

impl Communicator for IntraCommunicator {}

impl IntraCommunicator {
    /// This process as a point-to-point peer or collective root (rsmpi's `this_process`;
    /// MPI passes the own rank from MPI_Comm_rank).
    pub fn this_process(&self) -> Process<'_, Self> {
        self.process_at_rank(self.rank())
    }

    /// Partitions the communicator by colour, ordering each part by (key, old rank); a
    /// `None` colour (MPI_UNDEFINED) gives `None` (MPI_Comm_split). Collective.
    pub fn split(&self, color: Option<u32>, key: i32) -> Result<Option<IntraCommunicator>> {
        self.comm
            .split(color, key)?
            .map(sealed::Kind::wrap)
            .transpose()
    }

    /// `split` keeping the old rank order (MPI_Comm_split with the rank as key).
    pub fn split_by_color(&self, color: Option<u32>) -> Result<Option<IntraCommunicator>> {
        self.split(color, self.rank())
    }

    /// `split` with an explicit ordering key (MPI_Comm_split).
    pub fn split_by_color_with_key(
        &self,
        color: Option<u32>,
        key: i32,
    ) -> Result<Option<IntraCommunicator>> {
        self.split(color, key)
    }

    /// A communicator over `group`, a subset of this one's group; processes outside it get
    /// `None` (MPI_Comm_create). Collective, and every member passes the same group.
    pub fn create(&self, group: &Group) -> Result<Option<IntraCommunicator>> {
        self.comm.create(group)?.map(sealed::Kind::wrap).transpose()
    }

    /// Joins this group and another one into an intercommunicator (MPI_Intercomm_create).
    /// The two leaders (`local_leader` here, `remote_leader`, its rank in `peer`) talk over
    /// `peer` with `tag`. Collective over both groups.
    pub fn intercomm_create<C: Communicator>(
        &self,
        local_leader: i32,
        peer: &C,
        remote_leader: i32,
        tag: i32,
    ) -> Result<InterCommunicator> {
        sealed::Kind::wrap(self.comm.intercomm_create(
            local_leader,
            peer.as_raw(),
            remote_leader,
            tag,
        )?)
    }
}
