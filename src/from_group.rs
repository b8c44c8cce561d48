//! Communicators made from groups, with no parent communicator (the Sessions way).

use crate::communicator::sealed::Kind;
use crate::{Group, InterCommunicator, IntraCommunicator, Result};

/// Making communicators from a group (MPI_Comm_create_from_group). Import it with
/// `use ibdyn::traits::*;`.
pub trait GroupCommunicators {
    /// A communicator over this group: every member calls it with the same group (same
    /// order) and `tag`; members that disagree get an error naming the mismatch within the
    /// session's group timeout. Needs a live session or universe in this process; a group
    /// of a finalized session is refused (`StaleSession`).
    fn create_comm(&self, tag: &str) -> Result<IntraCommunicator>;
}

impl GroupCommunicators for Group {
    fn create_comm(&self, tag: &str) -> Result<IntraCommunicator> {
        crate::session_live::check_group(self)?;
        Kind::wrap(ibdyn_intercomm::comm_from_group(self, tag)?)
    }
}

/// An intercommunicator between `local` (this process's group, led by its rank
/// `local_leader`) and the disjoint `remote` (led by its rank `remote_leader`)
/// (MPI_Intercomm_create_from_groups). Every process of both groups calls it with the
/// same `tag`. Both groups must come from the same live session (`MixedSessions`,
/// `StaleSession` otherwise).
pub fn intercomm_from_groups(
    local: &Group,
    local_leader: i32,
    remote: &Group,
    remote_leader: i32,
    tag: &str,
) -> Result<InterCommunicator> {
    crate::session_live::check_pair(local, remote)?;
    Kind::wrap(ibdyn_intercomm::intercomm_from_groups(
        local,
        local_leader,
        remote,
        remote_leader,
        tag,
    )?)
}
