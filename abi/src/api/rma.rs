//! One-sided data movement: MPI_Put, MPI_Get, MPI_Accumulate, MPI_Get_accumulate,
//! MPI_Fetch_and_op, MPI_Compare_and_swap, their request forms (MPI_Rput, ...) and `_c`
//! forms. On a target of this node each moves the data to or from the target's memory
//! before it returns (`crate::window`; the request is complete at once), the accumulating
//! ones under the target's mutex; the common cases on memory this process maps go straight
//! to it (`super::rma_direct`). On a target of another node each becomes a message that the
//! end of the epoch completes (`super::rma_remote`; a request form waits for it).

use super::buffers::{recv_buf, send_buf, RecvBuf};
use super::out;
use super::rma_direct::{accumulate_in_place, compare_and_swap_in_place, direct};
use super::rma_remote as remote;
use super::win::win_call;
use crate::consts::*;
use crate::derived::{self, Ty};
use crate::error::{err, MpiError, MpiResult};
use crate::export;
use crate::request::{empty, Active, ReqEntry};
use crate::rma_wire::Kind;
use crate::state::with_state;
use crate::window::{self, Window};
use std::ffi::c_void;
use std::os::raw::c_int;

/// Where an operation lands: the target's window rank, process, and the address of its
/// displacement there and, when this process can load and store it, here.
struct Spot {
    rank: usize,
    pid: i32,
    addr: isize,
    local: Option<isize>,
    /// On another node: reached by messages (`super::rma_remote`).
    far: bool,
}

/// Checks an operation on `target` at `disp` of `count` elements of `ty` (`bytes` from the
/// origin, when it sends any) against the window.
fn spot(
    w: &Window,
    target: c_int,
    disp: isize,
    count: i64,
    ty: &Ty,
    bytes: Option<usize>,
) -> MpiResult<Spot> {
    let n = w.peers.len();
    let Some(t) = usize::try_from(target).ok().filter(|&t| t < n) else {
        return err(
            MPI_ERR_RANK,
            format!("target rank {target} is not one of the window's {n}"),
        );
    };
    if !w.may_access(t) {
        return err(
            MPI_ERR_RMA_SYNC,
            format!(
                "no access epoch to window rank {t}: call MPI_Win_fence, MPI_Win_lock(_all) or \
                 MPI_Win_start first"
            ),
        );
    }
    let len = super::buffers::byte_len(count, ty)?;
    if let Some(b) = bytes.filter(|&b| b != len) {
        return err(
            MPI_ERR_TYPE,
            format!("the origin has {b} bytes and the target's {count} elements {len}: the type signatures differ"),
        );
    }
    let p = &w.peers[t];
    let off = (disp as i64).checked_mul(p.disp_unit).unwrap_or(i64::MAX);
    if w.flavor == MPI_WIN_FLAVOR_DYNAMIC {
        // Displacements are addresses in the target; this process knows only its own
        // regions (another process's unattached memory fails in the kernel's copy).
        let (tlb, text) = ty.true_bounds();
        let lo = off.saturating_add(tlb as i64);
        let hi = lo
            .saturating_add((count.max(1) - 1).saturating_mul(ty.extent as i64))
            .saturating_add(text as i64);
        let inside = |&(b, l): &(usize, usize)| lo >= b as i64 && hi <= (b + l) as i64;
        if count > 0 && w.local[t].is_some() && !w.exposed.attached().iter().any(inside) {
            return err(
                MPI_ERR_RMA_RANGE,
                format!("address {lo:#x}..{hi:#x} is not in a region attached to the window"),
            );
        }
    } else if count > 0 {
        let (tlb, text) = ty.true_bounds();
        let lo = off.saturating_add(tlb as i64);
        let hi = lo
            .saturating_add((count - 1).saturating_mul(ty.extent as i64))
            .saturating_add(text as i64);
        if lo < 0 || hi > p.size {
            return err(
                MPI_ERR_RMA_RANGE,
                format!(
                    "bytes {lo}..{hi} from displacement {disp} are outside window rank {t}'s \
                     {} bytes",
                    p.size
                ),
            );
        }
    }
    Ok(Spot {
        rank: t,
        pid: p.pid as i32,
        addr: p.base as isize + off as isize,
        local: w.local[t].map(|b| b as isize + off as isize),
        far: w.remote.is_far(t),
    })
}

fn cma_error(e: ibdyn_shm::ShmError) -> MpiError {
    MpiError::new(MPI_ERR_OTHER, format!("one-sided transfer: {e}"))
}

/// Copies between the bytes of `count` elements of `ty` at the spot and the packed `buf`:
/// by load and store where this process maps the target's memory, else by cross-memory
/// attach.
fn transfer(
    at: &Spot,
    ty: &Ty,
    count: i64,
    buf: *mut u8,
    len: usize,
    to_target: bool,
) -> MpiResult<()> {
    let mut pos = 0;
    let mut r = Ok(());
    let mut one = |o: isize, l: usize| {
        if r.is_err() {
            return;
        }
        // SAFETY: `pos + l <= len`: the blocks of `count` elements add up to `len` bytes.
        let mine = unsafe { buf.add(pos) };
        pos += l;
        r = match at.local {
            // SAFETY: the target's memory is mapped here and `spot` checked the range; the
            // caller's buffer is not window memory of this block (MPI's rule).
            Some(here) => unsafe {
                let there = (here + o) as *mut u8;
                if to_target {
                    std::ptr::copy(mine, there, l);
                } else {
                    std::ptr::copy(there, mine, l);
                }
                Ok(())
            },
            None => {
                let remote = (at.addr + o) as usize;
                // SAFETY: `mine` holds `l` bytes of the caller's buffer.
                let piece = unsafe { std::slice::from_raw_parts_mut(mine, l) };
                if to_target {
                    ibdyn_shm::cma::write(at.pid, remote, piece)
                } else {
                    ibdyn_shm::cma::read(at.pid, remote, piece)
                }
                .map_err(cma_error)
            }
        };
    };
    if ty.contiguous() {
        one(0, len);
    } else {
        ty.for_each_block_of(count as usize, &mut one);
    }
    r
}

/// Writes `data` to the type map of `count` elements of `ty` at the spot.
fn write(at: &Spot, ty: &Ty, count: i64, data: &[u8]) -> MpiResult<()> {
    transfer(at, ty, count, data.as_ptr().cast_mut(), data.len(), true)
}

/// Reads the type map of `count` elements of `ty` at the spot into `buf`.
fn read(at: &Spot, ty: &Ty, count: i64, buf: &mut [u8]) -> MpiResult<()> {
    transfer(at, ty, count, buf.as_mut_ptr(), buf.len(), false)
}

/// `inout = input op inout` for an accumulate of predefined operation `op` on elements of
/// datatype `h`.
fn combine(op: Handle, h: Handle, ty: &Ty, input: &[u8], inout: &mut [u8]) -> MpiResult<()> {
    match op {
        MPI_REPLACE => inout.copy_from_slice(input),
        MPI_NO_OP => {}
        op if op >= 0x100 => {
            return err(
                MPI_ERR_OP,
                "one-sided accumulates take predefined operations only (MPI's rule), not MPI_Op_create's",
            )
        }
        op => crate::ops::reduction(op, h, ty)?.apply(input, inout),
    }
    Ok(())
}

pub(super) type Args = (*const c_void, i64, Handle);

unsafe fn put_impl(
    name: &str,
    (obuf, ocount, otype): Args,
    target: c_int,
    disp: isize,
    (tcount, ttype): (i64, Handle),
    win: Handle,
) -> c_int {
    win_call(name, win, || {
        let fast = (obuf, ocount, otype);
        if let Some(r) = direct(fast, target, disp, (tcount, ttype), win, true) {
            return r;
        }
        let tty = derived::resolve(ttype, true)?;
        // SAFETY: the origin buffer as MPI_Put specifies it.
        let data = unsafe { send_buf(obuf, ocount, otype) }?;
        let far = window::with(win, |w| {
            if target == MPI_PROC_NULL {
                return Ok(None);
            }
            let at = spot(w, target, disp, tcount, &tty, Some(data.len()))?;
            if at.far {
                return Ok(Some(at));
            }
            write(&at, &tty, tcount, &data).map(|_| None)
        })?;
        let Some(at) = far else { return Ok(()) };
        let blocks = remote::blocks(at.addr, &tty, tcount);
        remote::issue(win, at.rank, Kind::Put, blocks, data.to_vec(), None)
    })
}

unsafe fn get_impl(
    name: &str,
    (obuf, ocount, otype): (*mut c_void, i64, Handle),
    target: c_int,
    disp: isize,
    (tcount, ttype): (i64, Handle),
    win: Handle,
) -> c_int {
    win_call(name, win, || {
        let fast = (obuf.cast_const(), ocount, otype);
        if let Some(r) = direct(fast, target, disp, (tcount, ttype), win, false) {
            return r;
        }
        let tty = derived::resolve(ttype, true)?;
        // SAFETY: the origin buffer as MPI_Get specifies it.
        let mut rb: RecvBuf<'static> = unsafe { recv_buf(obuf, ocount, otype) }?;
        let n = rb.bytes().len();
        let far = window::with(win, |w| {
            if target == MPI_PROC_NULL {
                return Ok(None);
            }
            let at = spot(w, target, disp, tcount, &tty, Some(n))?;
            if at.far {
                return Ok(Some(at));
            }
            read(&at, &tty, tcount, rb.bytes()).map(|_| None)
        })?;
        match far {
            // MPI's rule: the buffer is the operation's until the epoch ends.
            Some(at) => {
                let blocks = remote::blocks(at.addr, &tty, tcount);
                remote::issue(win, at.rank, Kind::Get, blocks, Vec::new(), Some(rb))
            }
            None => {
                rb.finish(n);
                Ok(())
            }
        }
    })
}

/// MPI_Get_accumulate and what it generalizes: under the target's mutex, the target's data
/// goes to `result` (if given), then `origin op target` replaces it (unless MPI_NO_OP).
#[allow(clippy::too_many_arguments)]
unsafe fn get_acc_impl(
    name: &str,
    (obuf, ocount, otype): Args,
    result: Option<(*mut c_void, i64, Handle)>,
    target: c_int,
    disp: isize,
    (tcount, ttype): (i64, Handle),
    op: Handle,
    win: Handle,
) -> c_int {
    win_call(name, win, || {
        // An operation on MPI_PROC_NULL does nothing, whatever its datatypes.
        if target != MPI_PROC_NULL {
            let origin = (op != MPI_NO_OP).then_some(otype);
            same_basic(origin.into_iter().chain(result.map(|r| r.2)), ttype)?;
        }
        let origin = (obuf, ocount, otype);
        if let Some(r) = accumulate_in_place(origin, result, target, disp, (tcount, ttype), op, win)
        {
            return r;
        }
        let tty = derived::resolve(ttype, true)?;
        let data = match op {
            MPI_NO_OP => None,
            // SAFETY: the origin buffer as the call specifies it.
            _ => Some(unsafe { send_buf(obuf, ocount, otype) }?),
        };
        let mut rb: Option<RecvBuf<'static>> = match result {
            // SAFETY: the result buffer as the call specifies it.
            Some((b, c, t)) => Some(unsafe { recv_buf(b, c, t) }?),
            None => None,
        };
        let far = window::with(win, |w| {
            if target == MPI_PROC_NULL {
                return Ok(None);
            }
            let at = spot(
                w,
                target,
                disp,
                tcount,
                &tty,
                data.as_ref().map(|d| d.len()),
            )?;
            let len = super::buffers::byte_len(tcount, &tty)?;
            if let Some(got) = rb.as_mut().map(|r| r.bytes().len()).filter(|&g| g != len) {
                return err(
                    MPI_ERR_TYPE,
                    format!("the result buffer has {got} bytes and the target's data {len}"),
                );
            }
            if at.far {
                return Ok(Some(at));
            }
            // Small targets (a fetch-and-op, a counter) need no heap block.
            let mut small = [0u8; 64];
            let mut big = Vec::new();
            let cur: &mut [u8] = if len <= small.len() {
                &mut small[..len]
            } else {
                big.resize(len, 0);
                &mut big
            };
            w.atomically(at.rank, || {
                read(&at, &tty, tcount, cur)?;
                race_window();
                if let Some(r) = rb.as_mut() {
                    r.bytes().copy_from_slice(cur);
                }
                if let Some(d) = &data {
                    combine(op, ttype, &tty, d, cur)?;
                    write(&at, &tty, tcount, cur)?;
                }
                Ok(())
            })
            .map(|_| None)
        })?;
        if let Some(at) = far {
            let kind = Kind::Accumulate {
                reduce: remote::reduce(op, ttype, &tty)?,
                fetch: rb.is_some(),
            };
            let blocks = remote::blocks(at.addr, &tty, tcount);
            let data = data.map(|d| d.to_vec()).unwrap_or_default();
            return remote::issue(win, at.rank, kind, blocks, data, rb);
        }
        if let Some(r) = rb {
            r.finish(len_of(tcount, &tty));
        }
        Ok(())
    })
}

/// The predefined type datatype `h` is made of (MPI's rule for the datatypes of an
/// accumulate: each made of one).
fn basic_of(h: Handle) -> MpiResult<Handle> {
    if derived::is_predefined(h) {
        return Ok(h);
    }
    derived::resolve(h, true)?.single_basic().ok_or_else(|| {
        MpiError::new(
            MPI_ERR_TYPE,
            format!(
                "datatype {h:#x} mixes predefined types: an accumulate's datatypes are each made \
                 of one"
            ),
        )
    })
}

/// MPI's rule for an accumulate: its datatypes (`others`: the origin's and the result's, where
/// they count) are made of the same predefined type as the target's.
fn same_basic(others: impl Iterator<Item = Handle>, target: Handle) -> MpiResult<()> {
    let t = basic_of(target)?;
    for h in others {
        let b = basic_of(h)?;
        if b != t {
            let name = |h| match crate::datatype::name(h) {
                "" => format!("{h:#x}"),
                n => n.to_string(),
            };
            return err(
                MPI_ERR_TYPE,
                format!(
                    "the target's datatype is made of {} and another of {}: an accumulate \
                     combines elements of one predefined type",
                    name(t),
                    name(b)
                ),
            );
        }
    }
    Ok(())
}

/// Tests widen the read-modify-write of an accumulate (`IBDYN_RMA_TEST_DELAY_US`), so that
/// two unserialized accumulates would surely lose an update.
pub(super) fn race_window() {
    static DELAY: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    let d = DELAY.get_or_init(|| {
        std::env::var("IBDYN_RMA_TEST_DELAY_US")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(std::time::Duration::from_micros)
    });
    if let Some(d) = d {
        std::thread::sleep(*d);
    }
}

fn len_of(count: i64, ty: &Ty) -> usize {
    super::buffers::byte_len(count, ty).unwrap_or(0)
}

unsafe fn compare_and_swap(
    origin: *const c_void,
    compare: *const c_void,
    result: *mut c_void,
    datatype: Handle,
    target: c_int,
    disp: isize,
    win: Handle,
) -> c_int {
    win_call("MPI_Compare_and_swap", win, || {
        use ibdyn_collectives::ElemType::*;
        let elem = derived::is_predefined(datatype)
            .then(|| crate::datatype::lookup(datatype).ok()?.elem)
            .flatten();
        let integer = matches!(elem, Some(I8 | I16 | I32 | I64 | U8 | U16 | U32 | U64));
        if !integer && target != MPI_PROC_NULL {
            return err(
                MPI_ERR_TYPE,
                "MPI_Compare_and_swap takes a predefined integer, logical or byte datatype",
            );
        }
        let fast = (origin, compare, result);
        if let Some(r) = compare_and_swap_in_place(fast, datatype, target, disp, win) {
            return r;
        }
        let ty = derived::resolve(datatype, true)?;
        if !ty.contiguous() {
            return err(
                MPI_ERR_TYPE,
                "MPI_Compare_and_swap takes a predefined datatype",
            );
        }
        // SAFETY: one element each, as MPI_Compare_and_swap specifies.
        let (new, old) = unsafe {
            (
                send_buf(origin, 1, datatype)?,
                send_buf(compare, 1, datatype)?,
            )
        };
        // SAFETY: as above.
        let mut rb: RecvBuf<'static> = unsafe { recv_buf(result, 1, datatype) }?;
        let far = window::with(win, |w| {
            if target == MPI_PROC_NULL {
                return Ok(None);
            }
            let at = spot(w, target, disp, 1, &ty, Some(new.len()))?;
            if at.far {
                return Ok(Some(at));
            }
            w.atomically(at.rank, || {
                read(&at, &ty, 1, rb.bytes())?;
                if rb.bytes()[..] == old[..] {
                    write(&at, &ty, 1, &new)?;
                }
                Ok(())
            })
            .map(|_| None)
        })?;
        if let Some(at) = far {
            let blocks = remote::blocks(at.addr, &ty, 1);
            let data = [&new[..], &old[..]].concat();
            return remote::issue(win, at.rank, Kind::CompareAndSwap, blocks, data, Some(rb));
        }
        rb.finish(ty.size);
        Ok(())
    })
}

unsafe fn fetch_and_op(
    origin: *const c_void,
    result: *mut c_void,
    datatype: Handle,
    target: c_int,
    disp: isize,
    op: Handle,
    win: Handle,
) -> c_int {
    if !derived::is_predefined(datatype) && target != MPI_PROC_NULL {
        return win_call("MPI_Fetch_and_op", win, || {
            err(MPI_ERR_TYPE, "MPI_Fetch_and_op takes a predefined datatype")
        });
    }
    // SAFETY: passed through.
    unsafe {
        get_acc_impl(
            "MPI_Fetch_and_op",
            (origin, 1, datatype),
            Some((result, 1, datatype)),
            target,
            disp,
            (1, datatype),
            op,
            win,
        )
    }
}

/// A request that is complete already, for the `R` forms (on a window that spans nodes,
/// once the operations started on other nodes have their answers).
fn completed(name: &str, win: Handle, rc: c_int, request: *mut Handle) -> c_int {
    if rc != MPI_SUCCESS {
        return rc;
    }
    let wc = window::comm_of(win);
    win_call(name, win, || {
        // An operation on another node completes when it is answered.
        if remote::spans_nodes(win)? {
            remote::settle(win)?;
        }
        let h = with_state(|s| {
            let ci = s.comm_index(wc)?;
            Ok(s.add_req(ReqEntry::new(Active::Done(empty()), ci)))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(request, h, "request") }
    })
}

/// The exported forms of put and get, in `int` and `MPI_Count` widths, with and without a
/// request.
macro_rules! moves {
    ($($f:ident $name:literal $imp:ident $buf:ty, $n:ty $(, $req:ident)?;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f(
            obuf: $buf,
            ocount: $n,
            otype: Handle,
            target: c_int,
            disp: isize,
            tcount: $n,
            ttype: Handle,
            win: Handle,
            $($req: *mut Handle,)?
        ) -> c_int {
            // SAFETY: passed through.
            let rc = unsafe {
                $imp($name, (obuf, ocount.into(), otype), target, disp, (tcount.into(), ttype), win)
            };
            $(return completed($name, win, rc, $req);)?
            #[allow(unreachable_code)]
            rc
        }
    )*};
}

moves! {
    put "MPI_Put" put_impl *const c_void, c_int;
    put_c "MPI_Put_c" put_impl *const c_void, i64;
    rput "MPI_Rput" put_impl *const c_void, c_int, request;
    rput_c "MPI_Rput_c" put_impl *const c_void, i64, request;
    get "MPI_Get" get_impl *mut c_void, c_int;
    get_c "MPI_Get_c" get_impl *mut c_void, i64;
    rget "MPI_Rget" get_impl *mut c_void, c_int, request;
    rget_c "MPI_Rget_c" get_impl *mut c_void, i64, request;
}

/// The exported accumulates.
macro_rules! accumulates {
    ($($f:ident $name:literal $n:ty $(, $req:ident)?;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f(
            obuf: *const c_void,
            ocount: $n,
            otype: Handle,
            target: c_int,
            disp: isize,
            tcount: $n,
            ttype: Handle,
            op: Handle,
            win: Handle,
            $($req: *mut Handle,)?
        ) -> c_int {
            // SAFETY: passed through.
            let rc = unsafe {
                get_acc_impl($name, (obuf, ocount.into(), otype), None, target, disp,
                    (tcount.into(), ttype), op, win)
            };
            $(return completed($name, win, rc, $req);)?
            #[allow(unreachable_code)]
            rc
        }
    )*};
}

accumulates! {
    accumulate "MPI_Accumulate" c_int;
    accumulate_c "MPI_Accumulate_c" i64;
    raccumulate "MPI_Raccumulate" c_int, request;
    raccumulate_c "MPI_Raccumulate_c" i64, request;
}

/// The exported get-accumulates.
macro_rules! get_accumulates {
    ($($f:ident $name:literal $n:ty $(, $req:ident)?;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f(
            obuf: *const c_void,
            ocount: $n,
            otype: Handle,
            rbuf: *mut c_void,
            rcount: $n,
            rtype: Handle,
            target: c_int,
            disp: isize,
            tcount: $n,
            ttype: Handle,
            op: Handle,
            win: Handle,
            $($req: *mut Handle,)?
        ) -> c_int {
            // SAFETY: passed through.
            let rc = unsafe {
                get_acc_impl($name, (obuf, ocount.into(), otype),
                    Some((rbuf, rcount.into(), rtype)), target, disp,
                    (tcount.into(), ttype), op, win)
            };
            $(return completed($name, win, rc, $req);)?
            #[allow(unreachable_code)]
            rc
        }
    )*};
}

get_accumulates! {
    get_accumulate "MPI_Get_accumulate" c_int;
    get_accumulate_c "MPI_Get_accumulate_c" i64;
    rget_accumulate "MPI_Rget_accumulate" c_int, request;
    rget_accumulate_c "MPI_Rget_accumulate_c" i64, request;
}

export!(MPI_Put, PMPI_Put, put,
    (origin_addr: *const c_void, origin_count: c_int, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: c_int, target_datatype: Handle, win: Handle) -> c_int);
export!(MPI_Put_c, PMPI_Put_c, put_c,
    (origin_addr: *const c_void, origin_count: i64, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: i64, target_datatype: Handle, win: Handle) -> c_int);
export!(MPI_Rput, PMPI_Rput, rput,
    (origin_addr: *const c_void, origin_count: c_int, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: c_int, target_datatype: Handle, win: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Rput_c, PMPI_Rput_c, rput_c,
    (origin_addr: *const c_void, origin_count: i64, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: i64, target_datatype: Handle, win: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Get, PMPI_Get, get,
    (origin_addr: *mut c_void, origin_count: c_int, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: c_int, target_datatype: Handle, win: Handle) -> c_int);
export!(MPI_Get_c, PMPI_Get_c, get_c,
    (origin_addr: *mut c_void, origin_count: i64, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: i64, target_datatype: Handle, win: Handle) -> c_int);
export!(MPI_Rget, PMPI_Rget, rget,
    (origin_addr: *mut c_void, origin_count: c_int, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: c_int, target_datatype: Handle, win: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Rget_c, PMPI_Rget_c, rget_c,
    (origin_addr: *mut c_void, origin_count: i64, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: i64, target_datatype: Handle, win: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Accumulate, PMPI_Accumulate, accumulate,
    (origin_addr: *const c_void, origin_count: c_int, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: c_int, target_datatype: Handle, op: Handle, win: Handle) -> c_int);
export!(MPI_Accumulate_c, PMPI_Accumulate_c, accumulate_c,
    (origin_addr: *const c_void, origin_count: i64, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: i64, target_datatype: Handle, op: Handle, win: Handle) -> c_int);
export!(MPI_Raccumulate, PMPI_Raccumulate, raccumulate,
    (origin_addr: *const c_void, origin_count: c_int, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: c_int, target_datatype: Handle, op: Handle, win: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Raccumulate_c, PMPI_Raccumulate_c, raccumulate_c,
    (origin_addr: *const c_void, origin_count: i64, origin_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: i64, target_datatype: Handle, op: Handle, win: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Get_accumulate, PMPI_Get_accumulate, get_accumulate,
    (origin_addr: *const c_void, origin_count: c_int, origin_datatype: Handle,
     result_addr: *mut c_void, result_count: c_int, result_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: c_int, target_datatype: Handle, op: Handle, win: Handle) -> c_int);
export!(MPI_Get_accumulate_c, PMPI_Get_accumulate_c, get_accumulate_c,
    (origin_addr: *const c_void, origin_count: i64, origin_datatype: Handle,
     result_addr: *mut c_void, result_count: i64, result_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: i64, target_datatype: Handle, op: Handle, win: Handle) -> c_int);
export!(MPI_Rget_accumulate, PMPI_Rget_accumulate, rget_accumulate,
    (origin_addr: *const c_void, origin_count: c_int, origin_datatype: Handle,
     result_addr: *mut c_void, result_count: c_int, result_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: c_int, target_datatype: Handle, op: Handle, win: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Rget_accumulate_c, PMPI_Rget_accumulate_c, rget_accumulate_c,
    (origin_addr: *const c_void, origin_count: i64, origin_datatype: Handle,
     result_addr: *mut c_void, result_count: i64, result_datatype: Handle, target_rank: c_int,
     target_disp: isize, target_count: i64, target_datatype: Handle, op: Handle, win: Handle,
     request: *mut Handle) -> c_int);
export!(MPI_Fetch_and_op, PMPI_Fetch_and_op, fetch_and_op,
    (origin_addr: *const c_void, result_addr: *mut c_void, datatype: Handle, target_rank: c_int,
     target_disp: isize, op: Handle, win: Handle) -> c_int);
export!(MPI_Compare_and_swap, PMPI_Compare_and_swap, compare_and_swap,
    (origin_addr: *const c_void, compare_addr: *const c_void, result_addr: *mut c_void,
     datatype: Handle, target_rank: c_int, target_disp: isize, win: Handle) -> c_int);
