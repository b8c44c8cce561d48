//! MPI_Comm_split and MPI_Comm_split_type on intercommunicators: each group splits by colour,
//! and the processes of one colour on both sides get an intercommunicator between them
//! (MPI_COMM_NULL where a colour has processes on one side only). Made from the merged
//! communicator (one allgather of colour and key) and the group construction of the Sessions
//! model, with a tag naming the parent's context and the colour.

use crate::error::MpiResult;
use ibdyn::traits::*;
use ibdyn::{Group, InterCommunicator};
use std::os::raw::c_int;

/// The members of `side` (0: the group holding the smallest process id) with `colour`, in
/// (key, rank in their group) order, from everyone's (colour, key, side, rank) rows.
fn members(rows: &[[i32; 4]], colour: i32, side: i32, group: &Group) -> MpiResult<Group> {
    let mut mine: Vec<&[i32; 4]> = rows
        .iter()
        .filter(|r| r[0] == colour && r[2] == side)
        .collect();
    mine.sort_by_key(|r| (r[1], r[3]));
    let ranks: Vec<i64> = mine.iter().map(|r| i64::from(r[3])).collect();
    Ok(group.incl(&ranks)?)
}

/// Splits intercommunicator `ic` by `colour` (None: MPI_UNDEFINED); None where the colour
/// has processes on this side only.
pub fn split(
    ic: &InterCommunicator,
    colour: Option<u32>,
    key: c_int,
) -> MpiResult<Option<InterCommunicator>> {
    let (local, remote) = (ic.group().clone(), ic.remote_group().clone());
    let low = local.members().iter().min() < remote.members().iter().min();
    let side = i32::from(!low);
    let merged = ic.merge(!low)?;
    let c = colour.map_or(-1, |c| c as i32);
    let me = [c, key, side, ic.rank()];
    let mut rows = vec![[0i32; 4]; merged.size() as usize];
    merged.all_gather_into(&me[..], rows.as_flattened_mut())?;
    let Some(colour) = colour else {
        return Ok(None);
    };
    let c = colour as i32;
    let mine = members(&rows, c, side, &local)?;
    let theirs = members(&rows, c, 1 - side, &remote)?;
    if theirs.size() == 0 {
        return Ok(None);
    }
    let tag = format!("mpi-intercomm-split:{:x}:{c}", ic.as_raw().context_id());
    Ok(Some(ibdyn::intercomm_from_groups(
        &mine, 0, &theirs, 0, &tag,
    )?))
}
