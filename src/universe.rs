//! The runtime of this process, as a program sees it: its communicators, typed by kind.

use crate::communicator::sealed::Kind;
use crate::{InterCommunicator, IntraCommunicator, Result};
use ibdyn_pmi::PmiClient;

/// The runtime of this process, from `ibdyn::initialize()` (MPI_Init) until it drops or
/// `finalize` is called (MPI_Finalize).
pub struct Universe {
    world: IntraCommunicator,
    self_comm: IntraCommunicator,
    parent: Option<InterCommunicator>,
    // Dropped last: finalisation runs after the handles above are gone.
    inner: ibdyn_intercomm::Universe,
}

impl Universe {
    /// Types the communicators of an initialised engine universe (after any parent is
    /// attached).
    pub(crate) fn new(inner: ibdyn_intercomm::Universe) -> Result<Universe> {
        Ok(Universe {
            world: Kind::wrap(inner.world())?,
            self_comm: Kind::wrap(inner.self_comm())?,
            parent: inner.parent().map(Kind::wrap).transpose()?,
            inner,
        })
    }

    /// Every process of this job (MPI_COMM_WORLD).
    pub fn world(&self) -> IntraCommunicator {
        self.world.clone()
    }

    /// This process alone (MPI_COMM_SELF).
    pub fn self_comm(&self) -> IntraCommunicator {
        self.self_comm.clone()
    }

    /// The intercommunicator to the job that spawned this one, or `None` when this job was
    /// not spawned (MPI_Comm_get_parent).
    pub fn parent(&self) -> Option<InterCommunicator> {
        self.parent.clone()
    }

    /// Which fabric provider this process uses for inter-node traffic, if any.
    /// No MPI counterpart.
    pub fn provider(&self) -> Option<String> {
        self.inner.provider()
    }

    /// Fabric connections this process holds (made on demand). No MPI counterpart.
    pub fn connection_count(&self) -> usize {
        self.inner.connection_count()
    }

    /// Runs `f` with the process-management client (PMI; no MPI counterpart).
    pub fn with_pmi<R>(&self, f: impl FnOnce(&mut PmiClient) -> R) -> R {
        self.inner.with_pmi(f)
    }

    /// Shuts down: waits (bounded) for queued messages to leave, meets the other processes
    /// of the job, and leaves the process manager (MPI_Finalize). Dropping the universe
    /// does the same and logs an error instead of returning it.
    pub fn finalize(self) -> Result<()> {
        let Universe { inner, .. } = self;
        inner.finalize()
    }
}
