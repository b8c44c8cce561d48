//! The dynamic process-set calls of ibdyn's Sessions as `MPIX_` functions (declared in the
//! MPIX block of mpi.h), following the Rust API (`Session::pset_op` and friends) and seed
//! 000's three calls; plus MPI_Session_get_info. Set names are written into caller buffers of
//! MPI_MAX_PSET_NAME_LEN bytes.

use super::info::text;
use super::out;
use super::session::{session_call, with_session};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::export;
use crate::request::{Active, ReqEntry};
use crate::state::with_state;
use crate::status;
use ibdyn::{PsetOp, PsetOpOptions};
use std::os::raw::{c_char, c_int};

/// MPI_MAX_PSET_NAME_LEN of mpi.h.
const MPI_MAX_PSET_NAME_LEN: c_int = 1024;

/// The MPIX_PSETOP_* codes of mpi.h, in order from 1 (0 is MPIX_PSETOP_NULL).
const OPS: [PsetOp; 8] = [
    PsetOp::Add,
    PsetOp::Sub,
    PsetOp::Replace,
    PsetOp::Union,
    PsetOp::Difference,
    PsetOp::Intersection,
    PsetOp::Grow,
    PsetOp::Shrink,
];

fn op_of(code: c_int) -> MpiResult<PsetOp> {
    usize::try_from(code)
        .ok()
        .and_then(|c| c.checked_sub(1))
        .and_then(|i| OPS.get(i).copied())
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_ARG,
                format!("{code} is not an MPIX_PSETOP_ code (1 to {})", OPS.len()),
            )
        })
}

fn code_of(op: PsetOp) -> c_int {
    OPS.iter()
        .position(|o| *o == op)
        .map_or(0, |i| i as c_int + 1)
}

/// Writes set name `name` into the caller's buffer of MPI_MAX_PSET_NAME_LEN bytes.
unsafe fn out_name(buf: *mut c_char, name: &str, what: &str) -> MpiResult<()> {
    if name.len() >= MPI_MAX_PSET_NAME_LEN as usize {
        return err(
            MPI_ERR_ARG,
            format!(
                "{what}: the set name is {} bytes, more than MPI_MAX_PSET_NAME_LEN",
                name.len()
            ),
        );
    }
    // SAFETY: the caller's buffer of MPI_MAX_PSET_NAME_LEN bytes.
    unsafe {
        super::out_string(
            buf,
            MPI_MAX_PSET_NAME_LEN as usize,
            std::ptr::null_mut(),
            name,
        )
    }
}

/// The `n` C strings of `input`.
unsafe fn names(input: *const *const c_char, n: c_int) -> MpiResult<Vec<String>> {
    let n = usize::try_from(n).map_err(|_| MpiError::new(MPI_ERR_ARG, "ninput is negative"))?;
    if n > 0 && input.is_null() {
        return err(MPI_ERR_ARG, "the input set names are NULL");
    }
    // SAFETY: the caller's array of `n` C strings.
    (0..n)
        .map(|i| unsafe { text(*input.add(i), "input set name") })
        .collect()
}

/// Runs the operation and writes its output sets into `output` (`*noutput` buffers on entry,
/// the number of sets on return).
#[allow(clippy::too_many_arguments)]
unsafe fn run_pset_op(
    session: Handle,
    op: c_int,
    ninput: c_int,
    input: *const *const c_char,
    nprocs: c_int,
    noutput: *mut c_int,
    output: *mut *mut c_char,
) -> MpiResult<()> {
    let op = op_of(op)?;
    // SAFETY: the caller's arguments.
    let inputs = unsafe { names(input, ninput) }?;
    let n = u32::try_from(nprocs).map_err(|_| MpiError::new(MPI_ERR_ARG, "nprocs is negative"))?;
    // SAFETY: the caller's in/out count.
    let cap = unsafe { super::read(noutput, "noutput") }?;
    // Checked before the op runs: a grow whose names can not be returned must not start.
    let makes = if op.is_resource_change() { 2 } else { 1 };
    if cap < makes || output.is_null() {
        return err(
            MPI_ERR_ARG,
            format!(
                "the {} makes {makes} set(s): pass *noutput >= {makes} and as many buffers \
                 (*noutput is {cap})",
                op.name()
            ),
        );
    }
    let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let sets = with_session(session, |x| {
        Ok(x.pset_op(op, &refs, &PsetOpOptions::processes(n))?)
    })?;
    if sets.len() > usize::try_from(cap).unwrap_or(0) || (!sets.is_empty() && output.is_null()) {
        return err(
            MPI_ERR_ARG,
            format!(
                "the operation made {} sets; pass *noutput >= {} buffers",
                sets.len(),
                sets.len()
            ),
        );
    }
    for (i, name) in sets.iter().enumerate() {
        // SAFETY: the caller's array of *noutput buffers.
        unsafe { out_name(*output.add(i), name, "output") }?;
    }
    // SAFETY: as above.
    unsafe { out(noutput, sets.len() as c_int, "noutput") }
}

unsafe fn pset_op(
    session: Handle,
    op: c_int,
    ninput: c_int,
    input: *const *const c_char,
    nprocs: c_int,
    noutput: *mut c_int,
    output: *mut *mut c_char,
) -> c_int {
    session_call("MPIX_Pset_op", session, || {
        // SAFETY: the caller's arguments, passed on.
        unsafe { run_pset_op(session, op, ninput, input, nprocs, noutput, output) }
    })
}

/// The non-blocking form: the operation completes within the call (a grow once its
/// processes run) and the request is complete at once.
#[allow(clippy::too_many_arguments)]
unsafe fn ipset_op(
    session: Handle,
    op: c_int,
    ninput: c_int,
    input: *const *const c_char,
    nprocs: c_int,
    noutput: *mut c_int,
    output: *mut *mut c_char,
    request: *mut Handle,
) -> c_int {
    session_call("MPIX_Ipset_op", session, || {
        // SAFETY: the caller's arguments, passed on.
        unsafe { run_pset_op(session, op, ninput, input, nprocs, noutput, output) }?;
        let h = with_state(|s| Ok(s.add_req(ReqEntry::new(Active::Done(status::proc_null()), 1))))?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn query_pset_op(
    session: Handle,
    coll: *const c_char,
    input: *const c_char,
    op: *mut c_int,
    delta: *mut c_char,
    new_main: *mut c_char,
    included: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    session_call("MPIX_Query_pset_op", session, || {
        // SAFETY: the caller's C strings.
        let (coll, input) = unsafe { (text(coll, "coll_pset")?, text(input, "input_pset")?) };
        let change = with_session(session, |x| Ok(x.query_pset_op(&coll, &input)?))?;
        // SAFETY: the caller's output arguments.
        unsafe {
            if let Some(c) = &change {
                out(op, code_of(c.op), "op")?;
                out_name(delta, &c.delta, "delta")?;
                out_name(new_main, &c.new_main, "new_main")?;
                out(included, c_int::from(c.included), "included")?;
            }
            out(flag, c_int::from(change.is_some()), "flag")
        }
    })
}

unsafe fn finalize_pset_op(session: Handle, pset: *const c_char) -> c_int {
    session_call("MPIX_Finalize_pset_op", session, || {
        // SAFETY: the caller's C string.
        let pset = unsafe { text(pset, "pset") }?;
        with_session(session, |x| Ok(x.finalize_pset_op(&pset)?))
    })
}

unsafe fn set_pset_data(session: Handle, pset: *const c_char, info: Handle) -> c_int {
    session_call("MPIX_Set_pset_data", session, || {
        // SAFETY: the caller's C string.
        let pset = unsafe { text(pset, "pset") }?;
        let kv = crate::infos::get(info)?;
        let refs: Vec<(&str, &str)> = kv.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        with_session(session, |x| Ok(x.set_pset_data(&pset, &refs)?))
    })
}

/// Reads `keys` of `pset`'s dictionary (published by a member of `coll`) into a new info
/// object; `wait` non-zero waits (bounded) until every key is there.
#[allow(clippy::too_many_arguments)]
unsafe fn get_pset_data(
    session: Handle,
    coll: *const c_char,
    pset: *const c_char,
    keys: *const *const c_char,
    nkeys: c_int,
    wait: c_int,
    info: *mut Handle,
) -> c_int {
    session_call("MPIX_Get_pset_data", session, || {
        // SAFETY: the caller's C strings.
        let (coll, pset) = unsafe { (text(coll, "coll_pset")?, text(pset, "pset")?) };
        // SAFETY: the caller's array of `nkeys` C strings.
        let keys = unsafe { names(keys, nkeys) }?;
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let kv = with_session(session, |x| {
            Ok(x.get_pset_data(&coll, &pset, &refs, wait != 0)?)
        })?;
        let h = crate::infos::add(kv)?;
        // SAFETY: the caller's output argument.
        unsafe { out(info, h, "info") }
    })
}

/// Seed 000's MPI_Session_dyn_recv_res_change: the pending change of `pset`, its kind, delta
/// set and whether this process is in the delta; `*flag` 0 when there is none.
unsafe fn recv_res_change(
    session: Handle,
    pset: *const c_char,
    op: *mut c_int,
    delta: *mut c_char,
    included: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    session_call("MPIX_Session_dyn_recv_res_change", session, || {
        // SAFETY: the caller's C string.
        let pset = unsafe { text(pset, "pset") }?;
        let change = with_session(session, |x| Ok(x.recv_res_change(&pset)?))?;
        // SAFETY: the caller's output arguments.
        unsafe {
            if let Some(c) = &change {
                out(op, code_of(c.kind), "op")?;
                out_name(delta, &c.delta, "delta")?;
                out(included, c_int::from(c.included), "included")?;
            }
            out(flag, c_int::from(change.is_some()), "flag")
        }
    })
}

/// Seed 000's MPI_Session_pset_create_op: set algebra on two sets into `out_pset`.
unsafe fn pset_create_op(
    session: Handle,
    op: c_int,
    a: *const c_char,
    b: *const c_char,
    out_pset: *mut c_char,
) -> c_int {
    session_call("MPIX_Session_pset_create_op", session, || {
        let op = op_of(op)?;
        // SAFETY: the caller's C strings.
        let (a, b) = unsafe { (text(a, "pset1")?, text(b, "pset2")?) };
        let name = with_session(session, |x| Ok(x.pset_create_op(op, &a, &b)?))?;
        // SAFETY: the caller's buffer.
        unsafe { out_name(out_pset, &name, "pset_result") }
    })
}

/// Seed 000's MPI_Session_dyn_integrate_res_change: `provided` (NULL except on the one
/// process that knows it) is the new main set; every process of `delta` and of the changed
/// set gets it in `new_main`, and `*terminate` 1 when it is not a member.
unsafe fn integrate_res_change(
    session: Handle,
    delta: *const c_char,
    provided: *const c_char,
    new_main: *mut c_char,
    terminate: *mut c_int,
) -> c_int {
    session_call("MPIX_Session_dyn_integrate_res_change", session, || {
        // SAFETY: the caller's C strings (`provided` may be NULL).
        let delta = unsafe { text(delta, "delta_pset") }?;
        let provided = if provided.is_null() {
            None
        } else {
            // SAFETY: as above.
            Some(unsafe { text(provided, "provided_pset") }?)
        };
        let (main, leave) = with_session(session, |x| {
            Ok(x.integrate_res_change(&delta, provided.as_deref())?)
        })?;
        // SAFETY: the caller's output arguments.
        unsafe {
            out_name(new_main, &main, "new_main")?;
            out(terminate, c_int::from(leave), "terminate")
        }
    })
}

/// MPI_Session_get_info: the session's hints (its thread level, as MPI_Session_init's
/// "thread_level" key names them).
unsafe fn session_get_info(session: Handle, info: *mut Handle) -> c_int {
    session_call("MPI_Session_get_info", session, || {
        let h = with_state(|s| {
            s.session_index(session)?;
            let level = crate::threads::name(crate::threads::level());
            crate::infos::add(vec![("thread_level".into(), level.into())])
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(info, h, "info_used") }
    })
}

export!(MPI_Session_get_info, PMPI_Session_get_info, session_get_info,
    (session: Handle, info_used: *mut Handle) -> c_int);
export!(MPIX_Pset_op, PMPIX_Pset_op, pset_op,
    (session: Handle, op: c_int, ninput: c_int, input: *const *const c_char, nprocs: c_int,
     noutput: *mut c_int, output: *mut *mut c_char) -> c_int);
export!(MPIX_Ipset_op, PMPIX_Ipset_op, ipset_op,
    (session: Handle, op: c_int, ninput: c_int, input: *const *const c_char, nprocs: c_int,
     noutput: *mut c_int, output: *mut *mut c_char, request: *mut Handle) -> c_int);
export!(MPIX_Query_pset_op, PMPIX_Query_pset_op, query_pset_op,
    (session: Handle, coll_pset: *const c_char, input_pset: *const c_char, op: *mut c_int,
     delta: *mut c_char, new_main: *mut c_char, included: *mut c_int, flag: *mut c_int) -> c_int);
export!(MPIX_Finalize_pset_op, PMPIX_Finalize_pset_op, finalize_pset_op,
    (session: Handle, pset: *const c_char) -> c_int);
export!(MPIX_Set_pset_data, PMPIX_Set_pset_data, set_pset_data,
    (session: Handle, pset: *const c_char, info: Handle) -> c_int);
export!(MPIX_Get_pset_data, PMPIX_Get_pset_data, get_pset_data,
    (session: Handle, coll_pset: *const c_char, pset: *const c_char, keys: *const *const c_char,
     nkeys: c_int, wait: c_int, info: *mut Handle) -> c_int);
export!(MPIX_Session_dyn_recv_res_change, PMPIX_Session_dyn_recv_res_change, recv_res_change,
    (session: Handle, pset: *const c_char, op: *mut c_int, delta_pset: *mut c_char,
     included: *mut c_int, flag: *mut c_int) -> c_int);
export!(MPIX_Session_pset_create_op, PMPIX_Session_pset_create_op, pset_create_op,
    (session: Handle, op: c_int, pset1: *const c_char, pset2: *const c_char,
     pset_result: *mut c_char) -> c_int);
export!(MPIX_Session_dyn_integrate_res_change, PMPIX_Session_dyn_integrate_res_change,
    integrate_res_change,
    (session: Handle, delta_pset: *const c_char, provided_pset: *const c_char,
     new_main: *mut c_char, terminate: *mut c_int) -> c_int);
