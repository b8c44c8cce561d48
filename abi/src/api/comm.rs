//! Communicators: size, rank, remote size, test_inter, dup, split, free.

use super::{out, read};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::state::{staged, with_state, Comm};
use crate::{call, export};
use ibdyn::traits::*;
use std::os::raw::c_int;

unsafe fn comm_size(comm: Handle, size: *mut c_int) -> c_int {
    call("MPI_Comm_size", comm, || {
        let n = with_state(|s| Ok(s.comm(comm)?.comm.raw().size()))?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

unsafe fn comm_rank(comm: Handle, rank: *mut c_int) -> c_int {
    call("MPI_Comm_rank", comm, || {
        let r = with_state(|s| Ok(s.comm(comm)?.comm.raw().rank()))?;
        // SAFETY: the caller's output argument.
        unsafe { out(rank, r, "rank") }
    })
}

unsafe fn comm_remote_size(comm: Handle, size: *mut c_int) -> c_int {
    call("MPI_Comm_remote_size", comm, || {
        let n = with_state(|s| {
            Ok(s.comm(comm)?
                .comm
                .inter("MPI_Comm_remote_size")?
                .remote_size())
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

unsafe fn comm_test_inter(comm: Handle, flag: *mut c_int) -> c_int {
    call("MPI_Comm_test_inter", comm, || {
        let inter = with_state(|s| Ok(matches!(s.comm(comm)?.comm, Comm::Inter(_))))?;
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(inter), "flag") }
    })
}

pub(super) unsafe fn comm_dup(comm: Handle, newcomm: *mut Handle) -> c_int {
    call("MPI_Comm_dup", comm, || {
        let h = with_state(|s| {
            let e = s.comm(comm)?;
            let dup = match &e.comm {
                Comm::Intra(c) => Comm::Intra(c.duplicate()?),
                Comm::Inter(c) => Comm::Inter(c.duplicate()?),
            };
            let (eh, topo) = (e.errhandler, e.topo.clone());
            let h = s.add_comm(dup, eh);
            s.comm_mut(h)?.topo = topo;
            Ok(h)
        })?;
        if let Err(e) = super::attr::copy_all(comm, h) {
            // A copy function failed: no new communicator (as MPICH, MPI_COMM_NULL).
            with_state(|s| {
                match s.remove_comm(h)?.comm {
                    Comm::Intra(c) => c.free(),
                    Comm::Inter(c) => c.free(),
                }
                Ok(())
            })?;
            // SAFETY: the caller's output argument.
            unsafe { out(newcomm, MPI_COMM_NULL, "newcomm") }?;
            return Err(e);
        }
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

unsafe fn comm_split(comm: Handle, color: c_int, key: c_int, newcomm: *mut Handle) -> c_int {
    call("MPI_Comm_split", comm, || {
        let colour = match color {
            MPI_UNDEFINED => None,
            c if c >= 0 => Some(c as u32),
            c => {
                return err(
                    MPI_ERR_ARG,
                    format!("colour {c} is invalid (>= 0, or MPI_UNDEFINED)"),
                )
            }
        };
        let h = split_staged(comm, |_| Ok((colour, key)))?;
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

/// Splits `comm`, of either kind, by the colour and key `pick` chooses from it (colour None:
/// MPI_UNDEFINED), with the state released while the members exchange (`state::staged`):
/// the new communicator's handle, or MPI_COMM_NULL.
pub(super) fn split_staged(
    comm: Handle,
    pick: impl FnOnce(&Comm) -> MpiResult<(Option<u32>, c_int)>,
) -> MpiResult<Handle> {
    staged(
        |s| {
            let e = s.comm(comm)?;
            Ok((e.comm.clone(), e.errhandler, pick(&e.comm)?))
        },
        |(c, eh, (colour, key))| {
            let new = match &c {
                Comm::Intra(c) => c.split(colour, key)?.map(Comm::Intra),
                Comm::Inter(c) => super::inter_split::split(c, colour, key)?.map(Comm::Inter),
            };
            Ok((new, eh))
        },
        |s, (new, eh)| Ok(new.map_or(MPI_COMM_NULL, |c| s.add_comm(c, eh))),
    )
}

unsafe fn comm_free(comm: *mut Handle) -> c_int {
    // SAFETY: the caller's in/out argument (checked for NULL).
    let h = unsafe { read(comm, "comm") }.unwrap_or(MPI_COMM_NULL);
    call("MPI_Comm_free", h, || {
        // SAFETY: as above.
        let h = unsafe { read(comm, "comm") }?;
        super::attr::delete_all(h)?;
        with_state(|s| {
            let e = s.remove_comm(h)?;
            match &e.comm {
                Comm::Intra(c) => c.free(),
                Comm::Inter(c) => c.free(),
            }
            Ok(())
        })?;
        // SAFETY: checked above.
        unsafe { out(comm, MPI_COMM_NULL, "comm") }
    })
}

pub(super) unsafe fn comm_idup(comm: Handle, newcomm: *mut Handle, request: *mut Handle) -> c_int {
    // Duplication completes at the call; the request is complete.
    // SAFETY: passed through.
    let rc = unsafe { comm_dup(comm, newcomm) };
    if rc == MPI_SUCCESS {
        return call("MPI_Comm_idup", comm, || {
            let h = with_state(|s| {
                let ci = s.comm_index(comm)?;
                Ok(s.add_req(crate::request::ReqEntry::new(
                    crate::request::Active::Done(crate::request::empty()),
                    ci,
                )))
            })?;
            // SAFETY: the caller's output argument.
            unsafe { out(request, h, "request") }
        });
    }
    rc
}

unsafe fn comm_create(comm: Handle, group: Handle, newcomm: *mut Handle) -> c_int {
    call("MPI_Comm_create", comm, || {
        let (inter, g) =
            with_state(|s| Ok((s.comm(comm)?.comm.raw().is_inter(), s.objects.group(group)?)))?;
        let h = if inter {
            // Each side's group, a subgroup of its own: a split by membership, ordered as
            // the group orders its members.
            split_staged(comm, |c| {
                let raw = c.raw();
                let local = raw.group();
                if g.members().iter().any(|&p| local.rank_of(p).is_none()) {
                    return err(
                        MPI_ERR_GROUP,
                        "the group of MPI_Comm_create on an intercommunicator must be a \
                         subgroup of the local group",
                    );
                }
                let me = local.get(i64::from(raw.rank()))?;
                Ok(match g.rank_of(me) {
                    Some(r) => (Some(0), r as c_int),
                    None => (None, 0),
                })
            })?
        } else {
            with_state(|s| {
                let e = s.comm(comm)?;
                let eh = e.errhandler;
                Ok(match e.comm.intra("MPI_Comm_create")?.create(&g)? {
                    Some(c) => s.add_comm(Comm::Intra(c), eh),
                    None => MPI_COMM_NULL,
                })
            })?
        };
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

unsafe fn comm_compare(a: Handle, b: Handle, result: *mut c_int) -> c_int {
    call("MPI_Comm_compare", a, || {
        let r = with_state(|s| {
            let (ea, eb) = (s.comm(a)?.comm.raw(), s.comm(b)?.comm.raw());
            if s.comm_index(a)? == s.comm_index(b)? {
                return Ok(MPI_IDENT);
            }
            if ea.is_inter() != eb.is_inter() {
                return Ok(MPI_UNEQUAL);
            }
            let local = super::group::relation(ea.group().compare(eb.group()));
            let remote = match (ea.remote_group(), eb.remote_group()) {
                (Some(x), Some(y)) => super::group::relation(x.compare(y)),
                _ => MPI_IDENT,
            };
            Ok(match local.max(remote) {
                MPI_IDENT => MPI_CONGRUENT,
                r => r,
            })
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(result, r, "result") }
    })
}

unsafe fn intercomm_create(
    local: Handle,
    local_leader: c_int,
    peer: Handle,
    remote_leader: c_int,
    tag: c_int,
    newcomm: *mut Handle,
) -> c_int {
    call("MPI_Intercomm_create", local, || {
        let h = staged(
            |s| {
                let e = s.comm(local)?;
                let intra = e
                    .comm
                    .intra("MPI_Intercomm_create (its local communicator)")?
                    .clone();
                // Only the local leader uses the peer communicator.
                let p = (intra.rank() == local_leader)
                    .then(|| s.comm(peer).map(|p| p.comm.clone()))
                    .transpose()?;
                Ok((intra, p, e.errhandler))
            },
            |(intra, p, eh)| {
                let ic = match &p {
                    Some(Comm::Intra(c)) => {
                        intra.intercomm_create(local_leader, c, remote_leader, tag)?
                    }
                    Some(Comm::Inter(c)) => {
                        intra.intercomm_create(local_leader, c, remote_leader, tag)?
                    }
                    None => intra.intercomm_create(local_leader, &intra, remote_leader, tag)?,
                };
                Ok((ic, eh))
            },
            |s, (ic, eh)| Ok(s.add_comm(Comm::Inter(ic), eh)),
        )?;
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newintercomm") }
    })
}

export!(MPI_Comm_idup, PMPI_Comm_idup, comm_idup,
    (comm: Handle, newcomm: *mut Handle, request: *mut Handle) -> c_int);
export!(MPI_Comm_create, PMPI_Comm_create, comm_create,
    (comm: Handle, group: Handle, newcomm: *mut Handle) -> c_int);
export!(MPI_Comm_compare, PMPI_Comm_compare, comm_compare,
    (comm1: Handle, comm2: Handle, result: *mut c_int) -> c_int);
export!(MPI_Intercomm_create, PMPI_Intercomm_create, intercomm_create,
    (local_comm: Handle, local_leader: c_int, peer_comm: Handle, remote_leader: c_int, tag: c_int,
     newintercomm: *mut Handle) -> c_int);
export!(MPI_Comm_size, PMPI_Comm_size, comm_size, (comm: Handle, size: *mut c_int) -> c_int);
export!(MPI_Comm_rank, PMPI_Comm_rank, comm_rank, (comm: Handle, rank: *mut c_int) -> c_int);
export!(MPI_Comm_remote_size, PMPI_Comm_remote_size, comm_remote_size,
    (comm: Handle, size: *mut c_int) -> c_int);
export!(MPI_Comm_test_inter, PMPI_Comm_test_inter, comm_test_inter,
    (comm: Handle, flag: *mut c_int) -> c_int);
export!(MPI_Comm_dup, PMPI_Comm_dup, comm_dup, (comm: Handle, newcomm: *mut Handle) -> c_int);
export!(MPI_Comm_split, PMPI_Comm_split, comm_split,
    (comm: Handle, color: c_int, key: c_int, newcomm: *mut Handle) -> c_int);
export!(MPI_Comm_free, PMPI_Comm_free, comm_free, (comm: *mut Handle) -> c_int);
