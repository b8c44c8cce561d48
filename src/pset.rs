//! Process-set names and the launcher's definitions of them (parsed by `ibdyn_pmi::psets`).

use crate::{CommError, Result};

/// The set of every process of the job.
pub const WORLD: &str = "mpi://WORLD";
/// The set of this process alone.
pub const SELF: &str = "mpi://SELF";

fn malformed(e: ibdyn_pmi::psets::PsetError) -> CommError {
    CommError::MalformedPset {
        text: e.text,
        why: e.why,
    }
}

/// Checks that `name` is a process-set name: `SCHEME://REST`.
pub(crate) fn check_name(name: &str) -> Result<()> {
    ibdyn_pmi::psets::check_name(name).map_err(malformed)
}

/// The launcher's definitions for a job of `size` processes, in order.
pub(crate) fn parse_defs(text: &str, size: u32) -> Result<Vec<(String, Vec<u32>)>> {
    ibdyn_pmi::psets::parse_defs(text, size).map_err(malformed)
}
