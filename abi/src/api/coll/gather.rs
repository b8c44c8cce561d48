//! The data movers: Gather(v), Scatter(v), Allgather(v), Alltoall(v/w), blocking and
//! non-blocking, with MPI_IN_PLACE and, on intercommunicators, MPI_ROOT/MPI_PROC_NULL.
//! Displacements count elements of the datatype; the byte layouts below count in the packed
//! stream, where element k starts at k * size.

use super::framework::{colls, done, fix, fix_mut, run, store_blocks, Call, Colls, Started};
use super::{in_place, inter_role, inter_v, intra_root};
use crate::api::buffers::{recv_buf_of, send_buf_of, RecvBuf, SendBuf};
use crate::consts::*;
use crate::derived::{self, Ty};
use crate::error::{err, MpiError, MpiResult};
use crate::export;
use crate::state::with_state;
use ibdyn_collectives::InterRole;
use std::ffi::c_void;
use std::os::raw::c_int;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Gather,
    Allgather,
    Scatter,
    Alltoall,
}

/// `n` blocks of a buffer: the elements it spans, and each block's byte count and offset.
struct Blocks {
    elems: i64,
    counts: Vec<usize>,
    displs: Vec<usize>,
}

/// `n` consecutive blocks of `c` elements of `size` bytes.
fn regular(n: usize, c: i64, size: usize) -> MpiResult<Blocks> {
    let c = usize::try_from(c)
        .map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("count {c} is negative")))?;
    Ok(Blocks {
        elems: (n * c) as i64,
        counts: vec![c * size; n],
        displs: (0..n).map(|i| i * c * size).collect(),
    })
}

/// `n` blocks of `counts[i]` elements at `displs[i]` elements; the arrays hold `int`s, or
/// `MPI_Count`s and `MPI_Aint`s when `wide` (the `_c` forms).
///
/// # Safety
/// Both arrays hold `n` entries of their type.
unsafe fn varying(
    n: usize,
    counts: *const c_void,
    displs: *const c_void,
    wide: bool,
    size: usize,
) -> MpiResult<Blocks> {
    if n > 0 && (counts.is_null() || displs.is_null()) {
        return err(MPI_ERR_ARG, "the counts or displacements array is NULL");
    }
    let at = |p: *const c_void, i: usize| -> i64 {
        // SAFETY: the caller's arrays of `n` entries.
        unsafe {
            if wide {
                *p.cast::<i64>().add(i)
            } else {
                i64::from(*p.cast::<c_int>().add(i))
            }
        }
    };
    let mut b = Blocks {
        elems: 0,
        counts: Vec::with_capacity(n),
        displs: Vec::with_capacity(n),
    };
    for i in 0..n {
        let (c, d) = (at(counts, i), at(displs, i));
        let c = usize::try_from(c)
            .map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("count {c} is negative")))?;
        let d = usize::try_from(d)
            .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("displacement {d} is negative")))?;
        b.elems = b.elems.max((c + d) as i64);
        b.counts.push(c * size);
        b.displs.push(d * size);
    }
    Ok(b)
}

/// One side of a data mover: a buffer's address, its counts (`count`, or the per-process
/// arrays of a v-form) and datatype.
#[derive(Clone, Copy)]
struct Side {
    buf: *const c_void,
    count: i64,
    counts: *const c_void,
    displs: *const c_void,
    ty: Handle,
    /// The arrays hold MPI_Count/MPI_Aint (the `_c` forms), not `int`s.
    wide: bool,
    /// Whether this side of the call is a v-form (its arrays may be NULL where the
    /// standard says they are not significant).
    v: bool,
}

impl Side {
    fn plain(buf: *const c_void, count: impl Into<i64>, ty: Handle) -> Side {
        Side {
            buf,
            count: count.into(),
            wide: false,
            counts: std::ptr::null(),
            displs: std::ptr::null(),
            ty,
            v: false,
        }
    }

    fn v<T>(buf: *const c_void, counts: *const T, displs: *const T, ty: Handle) -> Side {
        Side {
            buf,
            count: 0,
            counts: counts.cast(),
            displs: displs.cast(),
            wide: std::mem::size_of::<T>() == 8,
            ty,
            v: true,
        }
    }

    fn is_v(&self) -> bool {
        self.v
    }

    /// The blocks of this side over `n` processes.
    fn blocks(&self, n: usize, ty: &Ty) -> MpiResult<Blocks> {
        if self.is_v() {
            // SAFETY: MPI's rule: the arrays have one entry per process of the group.
            unsafe { varying(n, self.counts, self.displs, self.wide, ty.size) }
        } else {
            regular(n, self.count, ty.size)
        }
    }
}

/// The buffer of `elems` elements at `side.buf` (loaded when its gaps must survive).
fn recv_of(side: &Side, ty: &Ty, elems: i64, load: bool) -> MpiResult<RecvBuf<'static>> {
    // SAFETY: MPI's rule: the caller's buffer holds these elements until completion.
    unsafe { recv_buf_of(side.buf.cast_mut(), elems, ty.clone(), load) }
}

fn send_of(side: &Side, ty: &Ty, elems: i64) -> MpiResult<SendBuf<'static>> {
    // SAFETY: as above.
    unsafe { send_buf_of(side.buf, elems, ty) }
}

/// Whether this process sends and whether it receives in a data mover of `kind`: a rooted
/// one gathers to (scatters from) the root only; on an intercommunicator the root's group
/// sends or receives at its root alone (MPI_ROOT), and the others of that group not at all.
fn sides_used(
    kind: Kind,
    c: &Colls,
    rank: usize,
    size: usize,
    rsize: usize,
    root: c_int,
) -> MpiResult<(bool, bool)> {
    let rooted = matches!(kind, Kind::Gather | Kind::Scatter);
    if !rooted {
        return Ok((true, true));
    }
    let (at_root, other_group) = match c {
        Colls::Intra(_) => (rank == intra_root(root, size as c_int)?, false),
        Colls::Inter(_) => match inter_role(root, rsize as c_int)? {
            InterRole::ProcNull => return Ok((false, false)),
            InterRole::Root => (true, false),
            InterRole::Remote(_) => (false, true),
        },
    };
    // Every process of a gather sends (on an intercommunicator: the other group); the root
    // receives. A scatter the other way round.
    let contributes = other_group || matches!(c, Colls::Intra(_));
    Ok(match kind {
        Kind::Gather => (contributes, at_root),
        _ => (at_root, contributes),
    })
}

/// Runs Gather(v), Allgather(v), Scatter(v) or Alltoall(v) of `kind`.
fn mover(call: Call, name: &'static str, kind: Kind, send: Side, recv: Side, root: c_int) -> c_int {
    crate::call(name, call.comm, || {
        with_state(|s| {
            let (c, rank, size, rsize) = colls(s, &call)?;
            // MPI_IN_PLACE is the receive buffer of a scatter, the send buffer otherwise.
            let ip = in_place(if kind == Kind::Scatter {
                recv.buf
            } else {
                send.buf
            });
            let (sends, gets) = sides_used(kind, &c, rank, size, rsize, root)?;
            // A side this process does not use is not significant: its datatype may be
            // anything (MPI_DATATYPE_NULL, say), as its buffer and count may.
            let ty = |h: Handle, used: bool| match used {
                true => derived::resolve(h, true),
                false => derived::resolve(MPI_BYTE, false),
            };
            let (st, rt) = match (ip, kind) {
                // The receive side describes the data in place; the send type is ignored.
                (true, Kind::Scatter) => (ty(send.ty, sends)?, ty(send.ty, sends)?),
                (true, _) => (ty(recv.ty, gets)?, ty(recv.ty, gets)?),
                _ => (ty(send.ty, sends)?, ty(recv.ty, gets)?),
            };
            match c {
                Colls::Intra(rc) => {
                    let root = match kind {
                        Kind::Gather | Kind::Scatter => intra_root(root, size as c_int)?,
                        _ => 0,
                    };
                    let at_root = rank == root;
                    // The side with one block per process, and this process's own block.
                    let (sb, mut rb, rblocks, sblocks) = match kind {
                        Kind::Gather | Kind::Allgather => {
                            let gets = kind == Kind::Allgather || at_root;
                            let rbl = if gets {
                                recv.blocks(size, &rt)?
                            } else {
                                regular(0, 0, 0)?
                            };
                            let mut rb = recv_of(&recv, &rt, rbl.elems, recv.is_v() || ip)?;
                            let sb = if ip && gets {
                                let (d, n) = (rbl.displs[rank], rbl.counts[rank]);
                                SendBuf::Packed(rb.bytes()[d..d + n].to_vec())
                            } else {
                                send_of(&send, &st, send.count)?
                            };
                            (sb, rb, rbl, None)
                        }
                        Kind::Scatter => {
                            let sbl = if at_root {
                                send.blocks(size, &st)?
                            } else {
                                regular(0, 0, 0)?
                            };
                            let sb = if at_root {
                                send_of(&send, &st, sbl.elems)?
                            } else {
                                SendBuf::Direct(&[])
                            };
                            let rb = if ip && at_root {
                                RecvBuf::Scratch(vec![0u8; sbl.counts[rank]])
                            } else {
                                recv_of(&recv, &rt, recv.count, false)?
                            };
                            (sb, rb, regular(0, 0, 0)?, Some(sbl))
                        }
                        Kind::Alltoall => {
                            let rbl = recv.blocks(size, &rt)?;
                            let mut rb = recv_of(&recv, &rt, rbl.elems, recv.is_v() || ip)?;
                            let (sb, sbl) = if ip {
                                (
                                    SendBuf::Packed(rb.bytes().to_vec()),
                                    recv.blocks(size, &rt)?,
                                )
                            } else {
                                let sbl = send.blocks(size, &st)?;
                                (send_of(&send, &st, sbl.elems)?, sbl)
                            };
                            (sb, rb, rbl, Some(sbl))
                        }
                    };
                    // SAFETY: `rc` and the buffers are kept with the request.
                    let (cl, sv, rv) = unsafe { (fix(&*rc), fix(&*sb), fix_mut(rb.bytes())) };
                    let keep = (rc, sb);
                    let v = send.is_v() || recv.is_v();
                    let sbl = sblocks.unwrap_or_else(|| Blocks {
                        elems: 0,
                        counts: Vec::new(),
                        displs: Vec::new(),
                    });
                    // Every form completes through the same store, with the same buffers.
                    macro_rules! intra {
                        ($($op:tt)*) => { run!(s, call, cl, store_intra, keep, rb, $($op)*) };
                    }
                    match (kind, v) {
                        (Kind::Gather, false) => intra!(gather / igather(sv, rv, root)),
                        (Kind::Gather, true) => intra!(
                            gatherv / igatherv(sv, rv, &rblocks.counts, &rblocks.displs, root)
                        ),
                        (Kind::Allgather, false) => intra!(allgather / iallgather(sv, rv)),
                        (Kind::Allgather, true) => intra!(
                            allgatherv / iallgatherv(sv, rv, &rblocks.counts, &rblocks.displs)
                        ),
                        (Kind::Scatter, false) => intra!(scatter / iscatter(sv, rv, root)),
                        (Kind::Scatter, true) => {
                            intra!(scatterv / iscatterv(sv, &sbl.counts, &sbl.displs, rv, root))
                        }
                        (Kind::Alltoall, false) => intra!(alltoall / ialltoall(sv, rv)),
                        (Kind::Alltoall, true) => intra!(
                            alltoallv
                                / ialltoallv(
                                    sv,
                                    &sbl.counts,
                                    &sbl.displs,
                                    rv,
                                    &rblocks.counts,
                                    &rblocks.displs
                                )
                        ),
                    }
                }
                Colls::Inter(ic) => {
                    if ip {
                        return err(
                            MPI_ERR_ARG,
                            "MPI_IN_PLACE is not allowed on an intercommunicator",
                        );
                    }
                    if send.is_v() || recv.is_v() {
                        let c = s.comm(call.comm)?.comm.raw().clone();
                        let role = match kind {
                            Kind::Gather | Kind::Scatter => Some(inter_role(root, rsize as c_int)?),
                            _ => None,
                        };
                        let gets = matches!(role, None | Some(InterRole::Root))
                            && kind != Kind::Scatter
                            || matches!(role, Some(InterRole::Remote(_))) && kind == Kind::Scatter;
                        let sends = matches!(role, None | Some(InterRole::Remote(_)))
                            && kind != Kind::Scatter
                            || matches!(role, Some(InterRole::Root)) && kind == Kind::Scatter;
                        // What this process sends: one block to each remote rank (all-to-all,
                        // root's scatter), or its buffer to the root or to everyone.
                        let sbl = if send.is_v() && sends {
                            Some(send.blocks(rsize, &st)?)
                        } else {
                            None
                        };
                        let sb = match (&sbl, sends) {
                            (_, false) => SendBuf::Direct(&[]),
                            (Some(b), true) => send_of(&send, &st, b.elems)?,
                            (None, true) => send_of(&send, &st, send.count)?,
                        };
                        let mut rb = if !gets {
                            RecvBuf::Direct(&mut [])
                        } else if recv.is_v() {
                            let rbl = recv.blocks(rsize, &rt)?;
                            recv_of(&recv, &rt, rbl.elems, true)?
                        } else {
                            recv_of(&recv, &rt, recv.count, false)?
                        };
                        if !call.blocking() {
                            // One schedule of blocks straight between the processes.
                            let sends: Vec<(usize, usize, usize)> = match (&sbl, role) {
                                (_, _) if !sends => Vec::new(),
                                (Some(b), _) => {
                                    (0..rsize).map(|i| (i, b.displs[i], b.counts[i])).collect()
                                }
                                (None, Some(InterRole::Remote(r))) => vec![(r, 0, sb.len())],
                                (None, _) => (0..rsize).map(|i| (i, 0, sb.len())).collect(),
                            };
                            let len = rb.bytes().len();
                            let recvs = match role {
                                _ if !gets => Vec::new(),
                                Some(InterRole::Remote(r)) => vec![(r, 0, len)],
                                _ => {
                                    let rbl = recv.blocks(rsize, &rt)?;
                                    inter_v::spans(&rbl.counts, &rbl.displs, len)?
                                }
                            };
                            // SAFETY: `ic` and the buffers are kept with the request.
                            let (cl, sv, rv) =
                                unsafe { (fix(&*ic), fix(&*sb), fix_mut(rb.bytes())) };
                            let req = cl.iexchange(sv, &sends, rv, &recvs)?;
                            return super::framework::store_inter(s, &call, req, (ic, sb), rb);
                        }
                        let blocks: Vec<(i32, &[u8])> = match (&sbl, role) {
                            (_, _) if !sends => Vec::new(),
                            (Some(b), _) => (0..rsize)
                                .map(|i| (i as i32, &sb[b.displs[i]..b.displs[i] + b.counts[i]]))
                                .collect(),
                            (None, Some(InterRole::Remote(r))) => vec![(r as i32, &sb[..])],
                            (None, _) => (0..rsize).map(|i| (i as i32, &sb[..])).collect(),
                        };
                        let into = match role {
                            _ if !gets => Vec::new(),
                            Some(InterRole::Remote(r)) => vec![(r as i32, rb.bytes())],
                            _ => {
                                let rbl = recv.blocks(rsize, &rt)?;
                                inter_v::carve(rb.bytes(), &rbl.counts, &rbl.displs)?
                            }
                        };
                        inter_v::exchange(&c, &blocks, into)?;
                        rb.finish(usize::MAX);
                        return done(s, &call);
                    }
                    let rcount: i64 = recv.count * rsize as i64;
                    let scount: i64 = send.count * rsize as i64;
                    let role = match kind {
                        Kind::Gather | Kind::Scatter => inter_role(root, rsize as c_int)?,
                        _ => InterRole::ProcNull,
                    };
                    let none = || (SendBuf::Direct(&[]), RecvBuf::Direct(&mut []));
                    let (sb, mut rb) = match (kind, role) {
                        (Kind::Gather | Kind::Scatter, InterRole::ProcNull) => none(),
                        (Kind::Gather, InterRole::Root) => {
                            (SendBuf::Direct(&[]), recv_of(&recv, &rt, rcount, false)?)
                        }
                        (Kind::Gather, _) => {
                            (send_of(&send, &st, send.count)?, RecvBuf::Direct(&mut []))
                        }
                        (Kind::Scatter, InterRole::Root) => {
                            (send_of(&send, &st, scount)?, RecvBuf::Direct(&mut []))
                        }
                        (Kind::Scatter, _) => (
                            SendBuf::Direct(&[]),
                            recv_of(&recv, &rt, recv.count, false)?,
                        ),
                        (Kind::Allgather, _) => (
                            send_of(&send, &st, send.count)?,
                            recv_of(&recv, &rt, rcount, false)?,
                        ),
                        (Kind::Alltoall, _) => (
                            send_of(&send, &st, scount)?,
                            recv_of(&recv, &rt, rcount, false)?,
                        ),
                    };
                    // SAFETY: `ic` and the buffers are kept with the request.
                    let (cl, sv, rv) = unsafe { (fix(&*ic), fix(&*sb), fix_mut(rb.bytes())) };
                    let keep = (ic, sb);
                    macro_rules! inter {
                        ($($op:tt)*) => { run!(s, call, cl, store_inter, keep, rb, $($op)*) };
                    }
                    match kind {
                        Kind::Gather => inter!(gather / igather(sv, rv, role)),
                        Kind::Scatter => inter!(scatter / iscatter(sv, rv, role)),
                        Kind::Allgather => inter!(allgather / iallgather(sv, rv)),
                        Kind::Alltoall => inter!(alltoall / ialltoall(sv, rv)),
                    }
                }
            }
        })
    })
}

/// Alltoallw: per-peer datatypes and byte displacements. Packed per block around a byte
/// alltoallv (on an intercommunicator, the blocks of the remote group go by point-to-point,
/// as the v-forms do). The non-blocking form starts the same exchange into one receive area
/// that its request delivers block by block, each to its type, at completion.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw_impl(
    call: Call,
    name: &'static str,
    sendbuf: *const c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    stypes: *const Handle,
    recvbuf: *mut c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rtypes: *const Handle,
) -> c_int {
    crate::call(name, call.comm, || {
        with_state(|s| {
            // On an intercommunicator the arrays have one entry per remote process.
            let (c, _, _, size) = colls(s, &call)?;
            let ip = in_place(sendbuf);
            if ip && matches!(c, Colls::Inter(_)) {
                return err(
                    MPI_ERR_BUFFER,
                    format!("{name}: MPI_IN_PLACE is not allowed on an intercommunicator"),
                );
            }
            let arr = |p: *const c_int| -> MpiResult<&[c_int]> {
                if p.is_null() {
                    return err(MPI_ERR_ARG, "a counts or displacements array is NULL");
                }
                // SAFETY: MPI's rule: one entry per process.
                Ok(unsafe { std::slice::from_raw_parts(p, size) })
            };
            // An empty block's datatype may be MPI_DATATYPE_NULL (as MPICH takes it).
            let types = |p: *const Handle, counts: &[c_int]| -> MpiResult<Vec<Ty>> {
                if p.is_null() {
                    return err(MPI_ERR_ARG, "a datatypes array is NULL");
                }
                // SAFETY: as above.
                unsafe { std::slice::from_raw_parts(p, size) }
                    .iter()
                    .zip(counts)
                    .map(|(&t, &n)| match (t, n) {
                        (MPI_DATATYPE_NULL, 0) => derived::resolve(MPI_BYTE, false),
                        _ => derived::resolve(t, true),
                    })
                    .collect()
            };
            let (rc, rd) = (arr(rcounts)?, arr(rdispls)?);
            let rt = types(rtypes, rc)?;
            let (sc, sd, stt, sbase) = if ip {
                (rc, rd, rt.clone(), recvbuf.cast_const())
            } else {
                let sc = arr(scounts)?;
                (sc, arr(sdispls)?, types(stypes, sc)?, sendbuf)
            };
            let mut sbytes = Vec::new();
            let (mut scnt, mut sdsp) = (Vec::with_capacity(size), Vec::with_capacity(size));
            for i in 0..size {
                // SAFETY: the caller's block i at its byte displacement.
                let b = unsafe {
                    send_buf_of(
                        sbase.cast::<u8>().wrapping_offset(sd[i] as isize).cast(),
                        sc[i].into(),
                        &stt[i],
                    )
                }?;
                sdsp.push(sbytes.len());
                scnt.push(b.len());
                sbytes.extend_from_slice(&b);
            }
            let mut rcnt = Vec::with_capacity(size);
            let mut rdsp = Vec::with_capacity(size);
            let mut total = 0;
            for i in 0..size {
                let n = usize::try_from(rc[i])
                    .map_err(|_| MpiError::new(MPI_ERR_COUNT, "a receive count is negative"))?
                    * rt[i].size;
                rdsp.push(total);
                rcnt.push(n);
                total += n;
            }
            if !call.blocking() {
                let mut parts = Vec::with_capacity(size);
                for i in 0..size {
                    let base = recvbuf.cast::<u8>().wrapping_offset(rd[i] as isize);
                    // SAFETY: the caller's block i, writable for its type map until the
                    // request completes (MPI's rule).
                    let rb =
                        unsafe { recv_buf_of(base.cast(), rc[i].into(), rt[i].clone(), true) }?;
                    parts.push((rb, rdsp[i], rcnt[i]));
                }
                let mut area = vec![0u8; total];
                // SAFETY: `sbytes` is kept with the request, and `area` moves into it (its
                // heap block stays where it is).
                let (sv, rv) = unsafe { (fix(&sbytes[..]), fix_mut(&mut area[..])) };
                return match c {
                    Colls::Intra(cl) => {
                        // SAFETY: `cl` is kept with the request.
                        let q =
                            unsafe { fix(&*cl) }.ialltoallv(sv, &scnt, &sdsp, rv, &rcnt, &rdsp)?;
                        store_blocks(s, &call, Started::Intra(q), (cl, sbytes), area, parts)
                    }
                    Colls::Inter(ic) => {
                        let sends: Vec<_> = (0..size).map(|i| (i, sdsp[i], scnt[i])).collect();
                        let recvs: Vec<_> = (0..size).map(|i| (i, rdsp[i], rcnt[i])).collect();
                        // SAFETY: `ic` is kept with the request.
                        let q = unsafe { fix(&*ic) }.iexchange(sv, &sends, rv, &recvs)?;
                        store_blocks(s, &call, Started::Inter(q), (ic, sbytes), area, parts)
                    }
                };
            }
            let mut rbytes = vec![0u8; total];
            match c {
                Colls::Intra(cl) => {
                    cl.alltoallv(&sbytes, &scnt, &sdsp, &mut rbytes, &rcnt, &rdsp)?
                }
                Colls::Inter(_) => {
                    let raw = s.comm(call.comm)?.comm.raw().clone();
                    let blocks: Vec<(i32, &[u8])> = (0..size)
                        .map(|i| (i as i32, &sbytes[sdsp[i]..sdsp[i] + scnt[i]]))
                        .collect();
                    let into = inter_v::carve(&mut rbytes, &rcnt, &rdsp)?;
                    inter_v::exchange(&raw, &blocks, into)?;
                }
            }
            for i in 0..size {
                let base = recvbuf.cast::<u8>().wrapping_offset(rd[i] as isize);
                // SAFETY: the caller's block i, writable for its type map.
                let mut rb =
                    unsafe { recv_buf_of(base.cast(), rc[i].into(), rt[i].clone(), true) }?;
                rb.bytes()
                    .copy_from_slice(&rbytes[rdsp[i]..rdsp[i] + rcnt[i]]);
                rb.finish(usize::MAX);
            }
            Ok(())
        })
    })
}

const B: *mut Handle = std::ptr::null_mut();

/// The blocking and non-blocking entry points of a regular mover.
macro_rules! movers {
    ($($blocking:ident $nb:ident $kind:ident $name:literal $iname:literal $rooted:tt;)*) => {$(
        movers!(@one $blocking, $nb, $kind, $name, $iname, $rooted);
    )*};
    (@one $blocking:ident, $nb:ident, $kind:ident, $name:literal, $iname:literal, rooted) => {
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $blocking(sb: *const c_void, sc: c_int, st: Handle, rb: *mut c_void, rc: c_int, rt: Handle, root: c_int, comm: Handle) -> c_int {
            mover(Call { comm, request: B }, $name, Kind::$kind, Side::plain(sb, sc, st), Side::plain(rb, rc, rt), root)
        }
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $nb(sb: *const c_void, sc: c_int, st: Handle, rb: *mut c_void, rc: c_int, rt: Handle, root: c_int, comm: Handle, request: *mut Handle) -> c_int {
            mover(Call { comm, request }, $iname, Kind::$kind, Side::plain(sb, sc, st), Side::plain(rb, rc, rt), root)
        }
    };
    (@one $blocking:ident, $nb:ident, $kind:ident, $name:literal, $iname:literal, all) => {
        pub(crate) unsafe fn $blocking(sb: *const c_void, sc: c_int, st: Handle, rb: *mut c_void, rc: c_int, rt: Handle, comm: Handle) -> c_int {
            mover(Call { comm, request: B }, $name, Kind::$kind, Side::plain(sb, sc, st), Side::plain(rb, rc, rt), 0)
        }
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $nb(sb: *const c_void, sc: c_int, st: Handle, rb: *mut c_void, rc: c_int, rt: Handle, comm: Handle, request: *mut Handle) -> c_int {
            mover(Call { comm, request }, $iname, Kind::$kind, Side::plain(sb, sc, st), Side::plain(rb, rc, rt), 0)
        }
    };
}

movers! {
    gather igather Gather "MPI_Gather" "MPI_Igather" rooted;
    scatter iscatter Scatter "MPI_Scatter" "MPI_Iscatter" rooted;
    allgather iallgather Allgather "MPI_Allgather" "MPI_Iallgather" all;
    alltoall ialltoall Alltoall "MPI_Alltoall" "MPI_Ialltoall" all;
}

// The v-forms below serve both widths: counts of `C` (int or MPI_Count) and displacements of
// `D` (int or MPI_Aint), which have the width of `C`.

#[allow(clippy::too_many_arguments)]
unsafe fn gatherv_impl<C, D>(
    call: Call,
    name: &'static str,
    sb: *const c_void,
    sc: impl Into<i64>,
    st: Handle,
    rb: *mut c_void,
    rcs: *const C,
    rds: *const D,
    rt: Handle,
    root: c_int,
) -> c_int {
    mover(
        call,
        name,
        Kind::Gather,
        Side::plain(sb, sc, st),
        Side::v(rb, rcs, rds.cast::<C>(), rt),
        root,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn scatterv_impl<C, D>(
    call: Call,
    name: &'static str,
    sb: *const c_void,
    scs: *const C,
    sds: *const D,
    st: Handle,
    rb: *mut c_void,
    rc: impl Into<i64>,
    rt: Handle,
    root: c_int,
) -> c_int {
    mover(
        call,
        name,
        Kind::Scatter,
        Side::v(sb, scs, sds.cast::<C>(), st),
        Side::plain(rb, rc, rt),
        root,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv_impl<C, D>(
    call: Call,
    name: &'static str,
    sb: *const c_void,
    sc: impl Into<i64>,
    st: Handle,
    rb: *mut c_void,
    rcs: *const C,
    rds: *const D,
    rt: Handle,
) -> c_int {
    mover(
        call,
        name,
        Kind::Allgather,
        Side::plain(sb, sc, st),
        Side::v(rb, rcs, rds.cast::<C>(), rt),
        0,
    )
}

#[allow(clippy::too_many_arguments)]
unsafe fn alltoallv_impl<C, D>(
    call: Call,
    name: &'static str,
    sb: *const c_void,
    scs: *const C,
    sds: *const D,
    st: Handle,
    rb: *mut c_void,
    rcs: *const C,
    rds: *const D,
    rt: Handle,
) -> c_int {
    let send = if in_place(sb) {
        Side::plain(sb, 0, st)
    } else {
        Side::v(sb, scs, sds.cast::<C>(), st)
    };
    mover(
        call,
        name,
        Kind::Alltoall,
        send,
        Side::v(rb, rcs, rds.cast::<C>(), rt),
        0,
    )
}

/// The blocking and non-blocking entry points of a v-form, passing the arguments through.
macro_rules! vforms {
    ($($blocking:ident $nb:ident $imp:ident $name:literal $iname:literal ($($arg:ident : $ty:ty),*);)*) => {$(
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $blocking($($arg: $ty,)* comm: Handle) -> c_int {
            // SAFETY: passed through.
            unsafe { $imp(Call { comm, request: B }, $name, $($arg),*) }
        }
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $nb($($arg: $ty,)* comm: Handle, request: *mut Handle) -> c_int {
            // SAFETY: passed through.
            unsafe { $imp(Call { comm, request }, $iname, $($arg),*) }
        }
    )*};
}

vforms! {
    gatherv igatherv gatherv_impl "MPI_Gatherv" "MPI_Igatherv"
        (sb: *const c_void, sc: c_int, st: Handle, rb: *mut c_void, rcs: *const c_int, rds: *const c_int, rt: Handle, root: c_int);
    scatterv iscatterv scatterv_impl "MPI_Scatterv" "MPI_Iscatterv"
        (sb: *const c_void, scs: *const c_int, sds: *const c_int, st: Handle, rb: *mut c_void, rc: c_int, rt: Handle, root: c_int);
    allgatherv iallgatherv allgatherv_impl "MPI_Allgatherv" "MPI_Iallgatherv"
        (sb: *const c_void, sc: c_int, st: Handle, rb: *mut c_void, rcs: *const c_int, rds: *const c_int, rt: Handle);
    alltoallv ialltoallv alltoallv_impl "MPI_Alltoallv" "MPI_Ialltoallv"
        (sb: *const c_void, scs: *const c_int, sds: *const c_int, st: Handle, rb: *mut c_void, rcs: *const c_int, rds: *const c_int, rt: Handle);
    alltoallw ialltoallw alltoallw_impl "MPI_Alltoallw" "MPI_Ialltoallw"
        (sb: *const c_void, scs: *const c_int, sds: *const c_int, sts: *const Handle, rb: *mut c_void, rcs: *const c_int, rds: *const c_int, rts: *const Handle);
}

/// Exports a rooted regular mover pair.
macro_rules! export_movers {
    ($($m:ident $pm:ident $f:ident ($($arg:ident : $ty:ty),*);)*) => {$(
        export!($m, $pm, $f, ($($arg: $ty),*) -> c_int);
    )*};
}

export_movers! {
    MPI_Gather PMPI_Gather gather (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int, comm: Handle);
    MPI_Igather PMPI_Igather igather (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int, comm: Handle, request: *mut Handle);
    MPI_Scatter PMPI_Scatter scatter (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int, comm: Handle);
    MPI_Iscatter PMPI_Iscatter iscatter (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int, comm: Handle, request: *mut Handle);
    MPI_Allgather PMPI_Allgather allgather (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, comm: Handle);
    MPI_Iallgather PMPI_Iallgather iallgather (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Alltoall PMPI_Alltoall alltoall (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, comm: Handle);
    MPI_Ialltoall PMPI_Ialltoall ialltoall (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Gatherv PMPI_Gatherv gatherv (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle, root: c_int, comm: Handle);
    MPI_Igatherv PMPI_Igatherv igatherv (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle, root: c_int, comm: Handle, request: *mut Handle);
    MPI_Scatterv PMPI_Scatterv scatterv (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int, comm: Handle);
    MPI_Iscatterv PMPI_Iscatterv iscatterv (sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcount: c_int, recvtype: Handle, root: c_int, comm: Handle, request: *mut Handle);
    MPI_Allgatherv PMPI_Allgatherv allgatherv (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle, comm: Handle);
    MPI_Iallgatherv PMPI_Iallgatherv iallgatherv (sendbuf: *const c_void, sendcount: c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Alltoallv PMPI_Alltoallv alltoallv (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Handle, comm: Handle);
    MPI_Ialltoallv PMPI_Ialltoallv ialltoallv (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Alltoallw PMPI_Alltoallw alltoallw (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const Handle, comm: Handle);
    MPI_Ialltoallw PMPI_Ialltoallw ialltoallw (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const Handle, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const Handle, comm: Handle, request: *mut Handle);
}

// The `_c` forms: MPI_Count counts and MPI_Aint displacements (both 64-bit here), through the
// same implementations.
vforms! {
    gatherv_c igatherv_c gatherv_impl "MPI_Gatherv_c" "MPI_Igatherv_c"
        (sb: *const c_void, sc: i64, st: Handle, rb: *mut c_void, rcs: *const i64, rds: *const isize, rt: Handle, root: c_int);
    scatterv_c iscatterv_c scatterv_impl "MPI_Scatterv_c" "MPI_Iscatterv_c"
        (sb: *const c_void, scs: *const i64, sds: *const isize, st: Handle, rb: *mut c_void, rc: i64, rt: Handle, root: c_int);
    allgatherv_c iallgatherv_c allgatherv_impl "MPI_Allgatherv_c" "MPI_Iallgatherv_c"
        (sb: *const c_void, sc: i64, st: Handle, rb: *mut c_void, rcs: *const i64, rds: *const isize, rt: Handle);
    alltoallv_c ialltoallv_c alltoallv_impl "MPI_Alltoallv_c" "MPI_Ialltoallv_c"
        (sb: *const c_void, scs: *const i64, sds: *const isize, st: Handle, rb: *mut c_void, rcs: *const i64, rds: *const isize, rt: Handle);
}

export_movers! {
    MPI_Gatherv_c PMPI_Gatherv_c gatherv_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle, root: c_int, comm: Handle);
    MPI_Igatherv_c PMPI_Igatherv_c igatherv_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle, root: c_int, comm: Handle, request: *mut Handle);
    MPI_Scatterv_c PMPI_Scatterv_c scatterv_c (sendbuf: *const c_void, sendcounts: *const i64, displs: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int, comm: Handle);
    MPI_Iscatterv_c PMPI_Iscatterv_c iscatterv_c (sendbuf: *const c_void, sendcounts: *const i64, displs: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcount: i64, recvtype: Handle, root: c_int, comm: Handle, request: *mut Handle);
    MPI_Allgatherv_c PMPI_Allgatherv_c allgatherv_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle, comm: Handle);
    MPI_Iallgatherv_c PMPI_Iallgatherv_c iallgatherv_c (sendbuf: *const c_void, sendcount: i64, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: Handle, comm: Handle, request: *mut Handle);
    MPI_Alltoallv_c PMPI_Alltoallv_c alltoallv_c (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: Handle, comm: Handle);
    MPI_Ialltoallv_c PMPI_Ialltoallv_c ialltoallv_c (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: Handle, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: Handle, comm: Handle, request: *mut Handle);
}
