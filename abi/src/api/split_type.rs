//! MPI_Comm_split_type. The one hardware level ibdyn knows below a job is the node (its
//! shared-memory domain), so:
//! - MPI_COMM_TYPE_SHARED splits by node;
//! - MPI_COMM_TYPE_HW_GUIDED and MPI_COMM_TYPE_RESOURCE_GUIDED split by node when the info key
//!   `mpi_hw_resource_type` is `mpi_shared_memory`, and give MPI_COMM_NULL for any other or no
//!   value (the standard's answer for a resource type the implementation does not know);
//! - MPI_COMM_TYPE_HW_UNGUIDED splits by node when the communicator spans several nodes (each
//!   part is then strictly smaller, as the standard asks) and records the level in the info
//!   object; within one node there is no smaller level, so MPI_COMM_NULL.
//!
//! Every process calls the underlying split, whatever it asked for: the split is collective,
//! and processes may pass different types (MPI_UNDEFINED among them).

use super::out;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::state::{with_state, Comm};
use crate::{call, export};
use std::os::raw::c_int;

const RESOURCE_TYPE: &str = "mpi_hw_resource_type";
const SHARED_MEMORY: &str = "mpi_shared_memory";

/// Whether `info` asks for the shared-memory level.
fn asks_for_shared_memory(info: Handle) -> MpiResult<bool> {
    let entries = super::info::entries(info)?;
    Ok(entries
        .iter()
        .any(|(k, v)| k == RESOURCE_TYPE && v == SHARED_MEMORY))
}

unsafe fn comm_split_type(
    comm: Handle,
    split_type: c_int,
    key: c_int,
    info: Handle,
    newcomm: *mut Handle,
) -> c_int {
    call("MPI_Comm_split_type", comm, || {
        let guided_to_node = match split_type {
            MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED => {
                asks_for_shared_memory(info)?
            }
            _ => false,
        };
        let h = super::comm::split_staged(comm, |c| {
            let nodes = c.raw().node_ids()?;
            let mine = nodes[c.raw().rank() as usize];
            if let Comm::Inter(_) = c {
                // Each group by node: one intercommunicator per node that has both sides.
                let colour = match split_type {
                    MPI_COMM_TYPE_SHARED => Some(mine),
                    MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED => {
                        guided_to_node.then_some(mine)
                    }
                    _ => None,
                };
                return Ok((colour, key));
            }
            let several_nodes = nodes.iter().any(|&n| n != mine);
            let colour = match split_type {
                MPI_UNDEFINED => None,
                MPI_COMM_TYPE_SHARED => Some(mine),
                MPI_COMM_TYPE_HW_GUIDED | MPI_COMM_TYPE_RESOURCE_GUIDED => {
                    guided_to_node.then_some(mine)
                }
                MPI_COMM_TYPE_HW_UNGUIDED => several_nodes.then_some(mine),
                t => {
                    return err(
                        MPI_ERR_ARG,
                        format!(
                            "split_type {t} is not a split type (MPI_COMM_TYPE_SHARED, \
                             _HW_GUIDED, _HW_UNGUIDED, _RESOURCE_GUIDED or MPI_UNDEFINED)"
                        ),
                    )
                }
            };
            Ok((colour, key))
        })?;
        let unguided_by_node = split_type == MPI_COMM_TYPE_HW_UNGUIDED
            && h != MPI_COMM_NULL
            && with_state(|s| Ok(matches!(s.comm(h)?.comm, Comm::Intra(_))))?;
        if unguided_by_node {
            record_level(info);
        }
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

/// Tells the caller which level an unguided split used, through its info object (left alone
/// when it is MPI_INFO_NULL or read-only).
fn record_level(info: Handle) {
    if info == MPI_INFO_NULL || info == MPI_INFO_ENV {
        return;
    }
    let _ = crate::infos::with_mut(info, |i| {
        i.retain(|(k, _)| k != RESOURCE_TYPE);
        i.push((RESOURCE_TYPE.into(), SHARED_MEMORY.into()));
        Ok(())
    });
}

export!(MPI_Comm_split_type, PMPI_Comm_split_type, comm_split_type,
    (comm: Handle, split_type: c_int, key: c_int, info: Handle, newcomm: *mut Handle) -> c_int);
