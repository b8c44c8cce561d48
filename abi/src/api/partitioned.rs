//! Partitioned point-to-point communication (MPI 4): MPI_Psend_init, MPI_Precv_init,
//! MPI_Pready, MPI_Pready_range, MPI_Pready_list, MPI_Parrived. Both are persistent requests
//! whose MPI_Start makes the operation active again: a receive of the whole buffer, and a
//! send that leaves when its last partition is marked ready (`crate::partitioned`).
//! Partitioned calls match each other by their init calls, in order, on a private channel
//! of the communicator (`crate::partitioned::channel`), never other messages.

use super::buffers::{recv_buf, send_buf};
use super::out;
use super::p2p::{recv_on, send_on};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::partitioned::{self as part, PartSend, Target};
use crate::request::{Active, Mode, ReqEntry};
use crate::state::{with_state, State};
use crate::status;
use crate::{call, derived, export};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::rc::Rc;

/// Partitions and elements per partition as a whole-message element count.
fn whole(partitions: c_int, count: i64) -> MpiResult<(usize, i64)> {
    let Ok(parts) = usize::try_from(partitions) else {
        return err(MPI_ERR_ARG, format!("partitions {partitions} is negative"));
    };
    if parts == 0 {
        return err(MPI_ERR_ARG, "partitions must be at least 1");
    }
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    }
    match count.checked_mul(parts as i64) {
        Some(n) => Ok((parts, n)),
        None => err(
            MPI_ERR_COUNT,
            format!("{partitions} partitions of {count} elements overflow a count"),
        ),
    }
}

/// Checks that `r` names a process of `raw`'s peer group (or is MPI_PROC_NULL): partitioned
/// calls find their peer at init.
fn peer(raw: &ibdyn_intercomm::Communicator, r: c_int) -> MpiResult<()> {
    let n = raw.remote_size();
    if r == MPI_PROC_NULL || (0..n).contains(&r) {
        return Ok(());
    }
    err(
        MPI_ERR_RANK,
        format!("rank {r} is not one of the communicator's {n} (nor MPI_PROC_NULL)"),
    )
}

/// Stores an inactive partitioned request whose MPI_Start runs `restart`.
fn store(
    comm: Handle,
    parts: usize,
    restart: Rc<crate::request::Restart>,
    request: *mut Handle,
) -> MpiResult<()> {
    let h = with_state(|s| {
        let ci = s.comm_index(comm)?;
        let mut e = ReqEntry::restartable(ci, restart);
        e.partitions = parts;
        Ok(s.add_req(e))
    })?;
    // SAFETY: the caller's output argument.
    unsafe { out(request, h, "request") }
}

#[allow(clippy::too_many_arguments)]
unsafe fn psend_init(
    buf: *const c_void,
    partitions: c_int,
    count: i64,
    ty: Handle,
    dest: c_int,
    tag: c_int,
    comm: Handle,
    _info: Handle,
    request: *mut Handle,
) -> c_int {
    call("MPI_Psend_init", comm, || {
        let (parts, total) = whole(partitions, count)?;
        derived::resolve(ty, true)?;
        let channel = with_state(|s| {
            let raw = s.comm(comm)?.comm.raw();
            peer(raw, dest)?;
            status::send_tag(tag)?;
            part::channel(raw, true, raw.rank(), dest, tag)
        })?;
        let to = Target {
            buf: buf as usize,
            count: total,
            ty,
            dest,
            tag,
            channel,
        };
        let restart = Rc::new(move |started: *mut Handle| {
            call("MPI_Start", comm, || {
                let h = with_state(|s| {
                    let ci = s.comm_index(comm)?;
                    let send = PartSend::new(to.clone(), parts);
                    let a = Active::Partitioned(Box::new(send));
                    Ok(s.add_req(ReqEntry::new(a, ci)))
                })?;
                // SAFETY: `started` is persistent::start's own slot.
                unsafe { out(started, h, "request") }
            })
        });
        store(comm, parts, restart, request)
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn precv_init(
    buf: *mut c_void,
    partitions: c_int,
    count: i64,
    ty: Handle,
    source: c_int,
    tag: c_int,
    comm: Handle,
    _info: Handle,
    request: *mut Handle,
) -> c_int {
    call("MPI_Precv_init", comm, || {
        let (parts, total) = whole(partitions, count)?;
        derived::resolve(ty, true)?;
        if source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG {
            return err(
                if source == MPI_ANY_SOURCE {
                    MPI_ERR_RANK
                } else {
                    MPI_ERR_TAG
                },
                "a partitioned receive names its source and tag: MPI matches partitioned \
                 calls at their init, so MPI_ANY_SOURCE and MPI_ANY_TAG are not allowed",
            );
        }
        let channel = with_state(|s| {
            let raw = s.comm(comm)?.comm.raw();
            peer(raw, source)?;
            status::recv_tag(tag)?;
            part::channel(raw, false, source, raw.rank(), tag)
        })?;
        let addr = buf as usize;
        let restart = Rc::new(move |started: *mut Handle| {
            call("MPI_Start", comm, || {
                // SAFETY: MPI's rule: the buffer is the request's while it is active.
                let rb = unsafe { recv_buf(addr as *mut c_void, total, ty) }?;
                let h = with_state(|s| {
                    let ci = s.comm_index(comm)?;
                    let a = recv_on(&channel, rb, source, tag)?;
                    Ok(s.add_req(ReqEntry::new(a, ci)))
                })?;
                // SAFETY: `started` is persistent::start's own slot.
                unsafe { out(started, h, "request") }
            })
        });
        store(comm, parts, restart, request)
    })
}

/// The entry of partitioned request `h` and its partitions.
fn partitioned(s: &mut State, h: Handle) -> MpiResult<(usize, usize)> {
    let i = s.req_index(h)?;
    let parts = s
        .reqs
        .get(i)
        .expect("req_index checked the slot")
        .partitions;
    if parts == 0 {
        return err(
            MPI_ERR_REQUEST,
            format!("request {h:#x} is not a partitioned request (MPI_Psend_init/Precv_init)"),
        );
    }
    Ok((i, parts))
}

/// Marks partitions ready; the send leaves when the last one is.
fn ready(h: Handle, which: impl IntoIterator<Item = c_int>) -> MpiResult<()> {
    with_state(|s| {
        let (i, _) = partitioned(s, h)?;
        let e = s.reqs.get_mut(i).expect("checked");
        let mut p = match e.active.take() {
            Some(Active::Partitioned(p)) => p,
            other => {
                let what = match &other {
                    None => "is not active: MPI_Start it first",
                    Some(Active::P2p { recv: true, .. }) => {
                        "is a receive (MPI_Pready is for sends)"
                    }
                    Some(_) => "has all its partitions ready already",
                };
                e.active = other;
                return err(
                    MPI_ERR_REQUEST,
                    format!("partitioned request {h:#x} {what}"),
                );
            }
        };
        let mut all = false;
        for q in which {
            if let Err(x) = p.mark(q).map(|done| all = done) {
                e.active = Some(Active::Partitioned(p));
                return Err(x);
            }
        }
        if !all {
            e.active = Some(Active::Partitioned(p));
            return Ok(());
        }
        let t = &p.to;
        // SAFETY: MPI's rule: the buffer of an active partitioned send stays valid.
        let data = unsafe { send_buf(t.buf as *const c_void, t.count, t.ty) }?;
        let a = send_on(&t.channel, Mode::Send, data, t.dest, t.tag)?;
        s.reqs.get_mut(i).expect("checked").active = Some(a);
        Ok(())
    })
}

/// The communicator whose error handler takes the errors of request `h`.
fn comm_of(h: Handle) -> Handle {
    with_state(|s| {
        let i = s.req_index(h)?;
        Ok(crate::state::comm_handle(
            s.reqs.get(i).expect("checked").comm,
        ))
    })
    .unwrap_or(MPI_COMM_SELF)
}

unsafe fn pready(partition: c_int, request: Handle) -> c_int {
    call("MPI_Pready", comm_of(request), || {
        ready(request, [partition])
    })
}

unsafe fn pready_range(low: c_int, high: c_int, request: Handle) -> c_int {
    call("MPI_Pready_range", comm_of(request), || {
        if low > high {
            return err(
                MPI_ERR_ARG,
                format!("partition_low {low} > partition_high {high}"),
            );
        }
        ready(request, low..=high)
    })
}

unsafe fn pready_list(length: c_int, partitions: *const c_int, request: Handle) -> c_int {
    call("MPI_Pready_list", comm_of(request), || {
        let n = usize::try_from(length)
            .or_else(|_| err(MPI_ERR_ARG, format!("length {length} is negative")))?;
        // SAFETY: the caller's array of `length` partitions.
        let list = unsafe { super::read_array(partitions, n, "array_of_partitions") }?;
        ready(request, list)
    })
}

unsafe fn parrived(request: Handle, partition: c_int, flag: *mut c_int) -> c_int {
    call("MPI_Parrived", comm_of(request), || {
        let arrived = with_state(|s| {
            let (i, parts) = partitioned(s, request)?;
            if usize::try_from(partition).map_or(true, |p| p >= parts) {
                return err(
                    MPI_ERR_ARG,
                    format!("partition {partition} is not one of the request's {parts}"),
                );
            }
            let e = s.reqs.get_mut(i).expect("checked");
            match &e.active {
                Some(Active::P2p { recv: true, .. }) | None => {}
                Some(_) => {
                    return err(
                        MPI_ERR_REQUEST,
                        "MPI_Parrived is for partitioned receives; this is a send",
                    )
                }
            }
            // The whole message arrives at once: every partition has when it has.
            Ok(e.peek()?.is_some())
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(arrived), "flag") }
    })
}

export!(MPI_Psend_init, PMPI_Psend_init, psend_init,
    (buf: *const c_void, partitions: c_int, count: i64, datatype: Handle, dest: c_int, tag: c_int,
     comm: Handle, info: Handle, request: *mut Handle) -> c_int);
export!(MPI_Precv_init, PMPI_Precv_init, precv_init,
    (buf: *mut c_void, partitions: c_int, count: i64, datatype: Handle, source: c_int, tag: c_int,
     comm: Handle, info: Handle, request: *mut Handle) -> c_int);
export!(MPI_Pready, PMPI_Pready, pready, (partition: c_int, request: Handle) -> c_int);
export!(MPI_Pready_range, PMPI_Pready_range, pready_range,
    (partition_low: c_int, partition_high: c_int, request: Handle) -> c_int);
export!(MPI_Pready_list, PMPI_Pready_list, pready_list,
    (length: c_int, array_of_partitions: *const c_int, request: Handle) -> c_int);
export!(MPI_Parrived, PMPI_Parrived, parrived,
    (request: Handle, partition: c_int, flag: *mut c_int) -> c_int);
