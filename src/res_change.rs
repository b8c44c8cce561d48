//! Seed 000's three calls (Listing 1) as a thin layer over the process-set operations:
//! `recv_res_change` (is there a change, and am I in it), `pset_create_op` (set algebra on
//! two sets) and `integrate_res_change` (the new main set passed from the provider to every
//! process of the delta and the old set, out of band).

use crate::pset_ops::{PsetOp, PsetOpOptions};
use crate::{CommError, Result, Session};

/// The pset-data key under which `integrate_res_change` passes the new main set.
pub const NEW_MAIN_KEY: &str = "ibdyn.new_main";

/// A resource change as seed 000's `MPI_Session_dyn_recv_res_change` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResChange {
    /// `Add`/`Grow` (processes added) or `Sub`/`Shrink` (removed), or `Replace`.
    pub kind: PsetOp,
    /// The delta set.
    pub delta: String,
    /// The set the change applies to (the registry's name of the set asked about).
    pub input: String,
    /// Whether this process is in the delta.
    pub included: bool,
}

impl Session {
    /// The pending resource change of `pset` (MPI_Session_dyn_recv_res_change), if any.
    /// Processes a grow started call it with `mpi://WORLD` (their world is the delta).
    pub fn recv_res_change(&self, pset: &str) -> Result<Option<ResChange>> {
        Ok(self
            .query_pset_op(crate::pset::SELF, pset)?
            .map(|c| ResChange {
                kind: c.op,
                delta: c.delta,
                input: c.input,
                included: c.included,
            }))
    }

    /// A set made by `op` from `a` and `b` (MPI_Session_pset_create_op): `Union`,
    /// `Difference` or `Intersection`.
    pub fn pset_create_op(&self, op: PsetOp, a: &str, b: &str) -> Result<String> {
        if op.is_resource_change() {
            return Err(CommError::InvalidArgument(format!(
                "pset_create_op takes a set operation (union, difference, intersection), not \
                 {}: use pset_op for resource changes",
                op.name()
            )));
        }
        let mut out = self.pset_op(op, &[a, b], &PsetOpOptions::default())?;
        Ok(out.remove(0))
    }

    /// Passes the new main set from the provider (`Some(name)`, one process) to every
    /// process of `delta` and of the set it changed (MPI_Session_dyn_integrate_res_change).
    /// Returns the new main set and whether this process is not in it (it should finalise
    /// its session and exit). Waits at most 60 s; fails naming the set and the rank when a
    /// member dies first.
    pub fn integrate_res_change(
        &self,
        delta: &str,
        provided: Option<&str>,
    ) -> Result<(String, bool)> {
        if let Some(main) = provided {
            crate::pset::check_name(main)?;
            self.group_from_pset(main)?;
            self.set_pset_data(delta, &[(NEW_MAIN_KEY, main)])?;
        }
        let kv = self.get_pset_data(delta, delta, &[NEW_MAIN_KEY], true)?;
        let main = kv
            .into_iter()
            .find(|(k, _)| k == NEW_MAIN_KEY)
            .map(|(_, v)| v)
            .ok_or_else(|| CommError::Malformed(format!("{delta} has no {NEW_MAIN_KEY}")))?;
        let me = self.me();
        let terminate = self.group_from_pset(&main)?.rank_of(me).is_none();
        Ok((main, terminate))
    }
}
