//! Sessions over `ibdyn::Session`: Session_init, finalize, get_num_psets, get_nth_pset,
//! get_pset_info, Group_from_session_pset, Comm_create_from_group,
//! Intercomm_create_from_groups. (The dynamic process-set calls, MPIX_, are stubs.)

use super::info::text;
use super::{out, read};
use crate::consts::*;
use crate::error::{err, ErrHandler, MpiError, MpiResult};
use crate::state::{self, staged, with_state, Comm};
use crate::user_errhandler::{self, Kind};
use crate::{call_with, export};
use ibdyn::traits::*;
use std::os::raw::{c_char, c_int};

/// Runs the body of a session function; its errors go to the session's error handler.
pub(super) fn session_call(
    name: &'static str,
    session: Handle,
    f: impl FnOnce() -> MpiResult<()>,
) -> c_int {
    call_with(
        name,
        || {
            // No such session: the error belongs to no object, so MPI_COMM_SELF's handler
            // takes it (fatal when only sessions run: there is no MPI_COMM_SELF then).
            let no_session = || crate::state::errhandler_for(MPI_COMM_SELF);
            with_state(|s| {
                Ok(s.sessions
                    .get(s.session_index(session)?)
                    .map(|e| e.1.about(session)))
            })
            .ok()
            .flatten()
            .unwrap_or_else(no_session)
        },
        f,
    )
}

/// An error handler argument of a session-model call for an object of `kind`
/// (MPI_ERRHANDLER_NULL: fatal).
fn handler(h: Handle, kind: Kind) -> MpiResult<ErrHandler> {
    if h == MPI_ERRHANDLER_NULL {
        return Ok(ErrHandler::Fatal);
    }
    user_errhandler::resolve(h, kind)
}

/// The thread level a session's info asks for ("thread_level"); FUNNELED when it names none
/// (or the info can not be read: no table exists before the first init).
fn asked_level(info: Handle) -> c_int {
    super::info::entries(info)
        .ok()
        .and_then(|i| {
            i.iter()
                .find(|(k, _)| k == "thread_level")
                .and_then(|(_, v)| crate::threads::parse(v))
        })
        .unwrap_or(MPI_THREAD_FUNNELED)
}

unsafe fn session_init(info: Handle, errhandler: Handle, session: *mut Handle) -> c_int {
    let eh = handler(errhandler, Kind::Session).unwrap_or(ErrHandler::Fatal);
    call_with(
        "MPI_Session_init",
        || eh,
        || {
            handler(errhandler, Kind::Session)?;
            let level = asked_level(info);
            let h = state::session_init(eh)?;
            crate::threads::provide(level);
            // SAFETY: the caller's output argument.
            unsafe { out(session, h, "session") }
        },
    )
}

unsafe fn session_finalize(session: *mut Handle) -> c_int {
    // SAFETY: the caller's in/out argument (checked for NULL).
    let h = unsafe { read(session, "session") }.unwrap_or(MPI_SESSION_NULL);
    session_call("MPI_Session_finalize", h, || {
        state::session_finalize(h)?;
        // SAFETY: as above.
        unsafe { out(session, MPI_SESSION_NULL, "session") }
    })
}

/// Runs `f` on session `h`.
pub(super) fn with_session<R>(
    h: Handle,
    f: impl FnOnce(&ibdyn::Session) -> MpiResult<R>,
) -> MpiResult<R> {
    with_state(|s| {
        f(&s.sessions
            .get(s.session_index(h)?)
            .expect("session_index checked")
            .0)
    })
}

unsafe fn session_get_num_psets(session: Handle, _info: Handle, n: *mut c_int) -> c_int {
    session_call("MPI_Session_get_num_psets", session, || {
        let k = with_session(session, |x| Ok(x.num_psets()? as c_int))?;
        // SAFETY: the caller's output argument.
        unsafe { out(n, k, "npset_names") }
    })
}

unsafe fn session_get_nth_pset(
    session: Handle,
    _info: Handle,
    n: c_int,
    len: *mut c_int,
    name: *mut c_char,
) -> c_int {
    session_call("MPI_Session_get_nth_pset", session, || {
        let idx = usize::try_from(n)
            .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("n = {n} is negative")))?;
        let pset = with_session(session, |x| Ok(x.nth_pset(idx)?))?;
        // SAFETY: the caller's in/out length.
        let cap = unsafe { read(len, "pset_len") }?;
        // With *pset_len 0 the call reports the length only (with the NUL).
        if cap > 0 {
            // SAFETY: the caller's buffer of `cap` bytes.
            unsafe { super::out_string(name, cap as usize, std::ptr::null_mut(), &pset) }?;
        }
        // SAFETY: as above.
        unsafe { out(len, pset.len() as c_int + 1, "pset_len") }
    })
}

unsafe fn session_get_pset_info(session: Handle, pset: *const c_char, info: *mut Handle) -> c_int {
    session_call("MPI_Session_get_pset_info", session, || {
        // SAFETY: the caller's C string.
        let name = unsafe { text(pset, "pset_name") }?;
        let pi = with_session(session, |x| Ok(x.pset_info(&name)?))?;
        let h = crate::infos::add(vec![
            ("mpi_size".into(), pi.mpi_size.to_string()),
            (
                "mpi_is_member".into(),
                if pi.is_member { "true" } else { "false" }.into(),
            ),
        ])?;
        // SAFETY: the caller's output argument.
        unsafe { out(info, h, "info") }
    })
}

unsafe fn group_from_session_pset(
    session: Handle,
    pset: *const c_char,
    group: *mut Handle,
) -> c_int {
    session_call("MPI_Group_from_session_pset", session, || {
        // SAFETY: the caller's C string.
        let name = unsafe { text(pset, "pset_name") }?;
        let g = with_session(session, |x| Ok(x.group_from_pset(&name)?))?;
        let h = with_state(|s| Ok(s.objects.add_group(g)))?;
        // SAFETY: the caller's output argument.
        unsafe { out(group, h, "newgroup") }
    })
}

unsafe fn comm_create_from_group(
    group: Handle,
    tag: *const c_char,
    _info: Handle,
    errhandler: Handle,
    newcomm: *mut Handle,
) -> c_int {
    let eh = handler(errhandler, Kind::Comm).unwrap_or(ErrHandler::Fatal);
    call_with(
        "MPI_Comm_create_from_group",
        || eh,
        || {
            handler(errhandler, Kind::Comm)?;
            // SAFETY: the caller's C string.
            let tag = unsafe { text(tag, "stringtag") }?;
            // MPI: the empty group makes no communicator, locally.
            let h = staged(
                |s| s.objects.group(group),
                |g| match g.size() {
                    0 => Ok(None),
                    _ => Ok(Some(g.create_comm(&tag)?)),
                },
                |s, c| Ok(c.map_or(MPI_COMM_NULL, |c| s.add_comm(Comm::Intra(c), eh))),
            )?;
            // SAFETY: the caller's output argument.
            unsafe { out(newcomm, h, "newcomm") }
        },
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn intercomm_create_from_groups(
    local: Handle,
    local_leader: c_int,
    remote: Handle,
    remote_leader: c_int,
    tag: *const c_char,
    _info: Handle,
    errhandler: Handle,
    newcomm: *mut Handle,
) -> c_int {
    let eh = handler(errhandler, Kind::Comm).unwrap_or(ErrHandler::Fatal);
    call_with(
        "MPI_Intercomm_create_from_groups",
        || eh,
        || {
            handler(errhandler, Kind::Comm)?;
            // SAFETY: the caller's C string.
            let tag = unsafe { text(tag, "stringtag") }?;
            let h = staged(
                |s| {
                    let (l, r) = (s.objects.group(local)?, s.objects.group(remote)?);
                    if l.size() == 0 || r.size() == 0 {
                        return err(MPI_ERR_GROUP, "both groups must be non-empty");
                    }
                    Ok((l, r))
                },
                |(l, r)| {
                    Ok(ibdyn::intercomm_from_groups(
                        &l,
                        local_leader,
                        &r,
                        remote_leader,
                        &tag,
                    )?)
                },
                |s, c| Ok(s.add_comm(Comm::Inter(c), eh)),
            )?;
            // SAFETY: the caller's output argument.
            unsafe { out(newcomm, h, "newintercomm") }
        },
    )
}

export!(MPI_Session_init, PMPI_Session_init, session_init,
    (info: Handle, errhandler: Handle, session: *mut Handle) -> c_int);
export!(MPI_Session_finalize, PMPI_Session_finalize, session_finalize, (session: *mut Handle) -> c_int);
export!(MPI_Session_get_num_psets, PMPI_Session_get_num_psets, session_get_num_psets,
    (session: Handle, info: Handle, npset_names: *mut c_int) -> c_int);
export!(MPI_Session_get_nth_pset, PMPI_Session_get_nth_pset, session_get_nth_pset,
    (session: Handle, info: Handle, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) -> c_int);
export!(MPI_Session_get_pset_info, PMPI_Session_get_pset_info, session_get_pset_info,
    (session: Handle, pset_name: *const c_char, info: *mut Handle) -> c_int);
export!(MPI_Group_from_session_pset, PMPI_Group_from_session_pset, group_from_session_pset,
    (session: Handle, pset_name: *const c_char, newgroup: *mut Handle) -> c_int);
export!(MPI_Comm_create_from_group, PMPI_Comm_create_from_group, comm_create_from_group,
    (group: Handle, stringtag: *const c_char, info: Handle, errhandler: Handle, newcomm: *mut Handle) -> c_int);
export!(MPI_Intercomm_create_from_groups, PMPI_Intercomm_create_from_groups, intercomm_create_from_groups,
    (local_group: Handle, local_leader: c_int, remote_group: Handle, remote_leader: c_int,
     stringtag: *const c_char, info: Handle, errhandler: Handle, newintercomm: *mut Handle) -> c_int);
