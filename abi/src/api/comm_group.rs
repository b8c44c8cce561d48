//! MPI_Comm_create_group: a communicator over `group` (a subset of `comm`'s group), collective
//! over the group's members only. It is the group construction of the Sessions model with a
//! string tag made of the parent communicator's context and the caller's tag, so calls on
//! different communicators or with different tags never meet.

use super::out;
use crate::consts::*;
use crate::error::err;
use crate::state::{staged, Comm};
use crate::{call, export};
use ibdyn::traits::*;
use std::os::raw::c_int;

unsafe fn comm_create_group(
    comm: Handle,
    group: Handle,
    tag: c_int,
    newcomm: *mut Handle,
) -> c_int {
    call("MPI_Comm_create_group", comm, || {
        if tag < 0 {
            return err(MPI_ERR_TAG, format!("tag {tag} is negative"));
        }
        let h = staged(
            |s| {
                let e = s.comm(comm)?;
                let intra = e.comm.intra("MPI_Comm_create_group")?;
                let g = s.objects.group(group)?;
                let parent = intra.as_raw().group();
                if let Some(p) = g.members().iter().find(|p| parent.rank_of(**p).is_none()) {
                    return err(
                        MPI_ERR_GROUP,
                        format!("{p} is in the group but not in the communicator: the group must be a subset of the communicator's"),
                    );
                }
                let member = g.rank_of(parent.get(intra.rank() as i64)?).is_some();
                let stringtag = format!(
                    "mpi-comm-create-group:{:x}:{tag}",
                    intra.as_raw().context_id()
                );
                Ok((member.then_some((g, stringtag)), e.errhandler))
            },
            |(made, eh)| match made {
                Some((g, stringtag)) => Ok((Some(g.create_comm(&stringtag)?), eh)),
                None => Ok((None, eh)),
            },
            |s, (c, eh)| Ok(c.map_or(MPI_COMM_NULL, |c| s.add_comm(Comm::Intra(c), eh))),
        )?;
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

export!(MPI_Comm_create_group, PMPI_Comm_create_group, comm_create_group,
    (comm: Handle, group: Handle, tag: c_int, newcomm: *mut Handle) -> c_int);
