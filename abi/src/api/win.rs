//! Windows: MPI_Win_create, MPI_Win_allocate, MPI_Win_allocate_shared (and `_c` forms),
//! MPI_Win_create_dynamic (with attach and detach), MPI_Win_shared_query, MPI_Win_free,
//! group, name, info, and the predefined error handlers (attributes: `win_attr`). How data
//! moves is in `crate::window`.

use super::out;
use super::selfcall::*;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::rma_wire::TAG_REQUEST;
use crate::state::with_state;
use crate::user_errhandler::{self as user, ErrFn, Kind};
use crate::window::{self, Epochs, Exposed, Peer, Segment, Window};
use crate::{call, export};
use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs the body of window function `name` on window `win`: its errors go to the window's
/// error handler (kept on its private communicator), which a user function receives with
/// the window's handle.
pub(super) fn win_call(name: &str, win: Handle, f: impl FnOnce() -> MpiResult<()>) -> c_int {
    let handler = || crate::state::errhandler_for(window::comm_of(win)).about(win);
    crate::call_with(name, handler, f)
}

/// The checks before a window is made on `comm` (an intracommunicator; for shared memory,
/// on one node): the node of each of its ranks.
fn nodes_of(comm: Handle, mem: &Memory) -> MpiResult<Vec<u32>> {
    with_state(|s| {
        let e = s.comm(comm)?;
        if matches!(e.comm, crate::state::Comm::Inter(_)) {
            return err(MPI_ERR_COMM, "a window needs an intracommunicator");
        }
        let ids = e.comm.raw().node_ids()?.to_vec();
        let mut nodes = ids.clone();
        nodes.sort_unstable();
        nodes.dedup();
        if nodes.len() > 1 && matches!(mem, Memory::Shared) {
            return err(
                MPI_ERR_RMA_SHARED,
                format!(
                    "MPI_Win_allocate_shared needs every process of the communicator on one \
                     node; this one spans {} nodes: use MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)'s \
                     communicator",
                    nodes.len()
                ),
            );
        }
        Ok(ids)
    })
}

/// How the window's memory comes about.
enum Memory {
    Given(usize),
    /// MPI_Win_create_dynamic: none until MPI_Win_attach; displacements are addresses.
    Dynamic,
    Allocate,
    Shared,
}

/// The shared segment of a new window among the processes of one node, `wc` (`n`
/// processes, this one `rank`): the window's `lines` lock lines and `shared` bytes after
/// them. The first process creates the file; every process maps it; then it is unlinked, so
/// nothing stays in /dev/shm.
fn segment(wc: Handle, rank: usize, n: usize, lines: usize, shared: usize) -> MpiResult<Segment> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let len = window::lock_bytes(lines) + shared.max(1);
    let id = [
        i64::from(std::process::id() as i32),
        SEQ.fetch_add(1, Ordering::Relaxed) as i64,
    ];
    let first = allgather(id, n, wc)?[0];
    let path = format!("/dev/shm/ibdyn-win-{}-{}", first[0], first[1]);
    shared_file(
        wc,
        rank,
        &path,
        ("the window's shared segment", MPI_ERR_NO_MEM),
        |create| Segment::map(&path, len, create),
    )
}

/// Makes a window of `size` bytes on `comm`; returns its handle and base address.
fn create(comm: Handle, size: i64, disp_unit: i64, mem: Memory) -> MpiResult<(Handle, usize)> {
    if size < 0 {
        return err(MPI_ERR_SIZE, format!("size {size} is negative"));
    }
    let Ok(disp) = c_int::try_from(disp_unit) else {
        return err(
            MPI_ERR_DISP,
            format!("disp_unit {disp_unit} does not fit an int"),
        );
    };
    if disp <= 0 {
        return err(MPI_ERR_DISP, format!("disp_unit {disp} must be positive"));
    }
    let nodes = nodes_of(comm, &mem)?;
    if let Err(e) = ibdyn_shm::cma::allow_peers() {
        return err(
            MPI_ERR_WIN,
            format!("window: peers may not read this process: {e}"),
        );
    }
    let mut wc = MPI_COMM_NULL;
    // SAFETY: our output slot.
    check(unsafe { PMPI_Comm_dup(comm, &mut wc) }, "MPI_Comm_dup")?;
    // A window's errors are fatal until the program says otherwise (MPI's default).
    // SAFETY: a live communicator and a predefined handler.
    check(
        unsafe { PMPI_Comm_set_errhandler(wc, MPI_ERRORS_ARE_FATAL) },
        "MPI_Comm_set_errhandler",
    )?;
    let made = (|| {
        let (rank, n) = with_state(|s| {
            let r = s.comm(wc)?.comm.raw();
            Ok((r.rank() as usize, r.size() as usize))
        })?;
        let sizes = allgather(size, n, wc)?;
        // Allocated memory lives in the window's shared segment, where every process of the
        // window reaches it by load and store: MPI_Win_allocate's parts start on cache lines,
        // MPI_Win_allocate_shared's follow each other (MPI's contiguous default).
        let align = |v: usize| match mem {
            Memory::Allocate => v.div_ceil(64) * 64,
            _ => v,
        };
        // The segment is the node's: it holds the memory of this node's processes only.
        let here = |t: usize| nodes[t] == nodes[rank];
        let mut offsets = Vec::with_capacity(n);
        let mut shared = 0;
        for (t, &sz) in sizes.iter().enumerate() {
            offsets.push(here(t).then_some(shared));
            if here(t) {
                shared += align(sz as usize);
            }
        }
        if matches!(mem, Memory::Given(_) | Memory::Dynamic) {
            shared = 0;
        }
        let seg = if (0..n).all(here) {
            segment(wc, rank, n, n, shared)?
        } else {
            node_segment(wc, nodes[rank], rank, n, shared)?
        };
        let data = seg.addr() + window::lock_bytes(n);
        let (base, local, flavor) = match mem {
            Memory::Given(b) => {
                let local = (0..n).map(|t| (t == rank).then_some(b)).collect();
                (b, local, MPI_WIN_FLAVOR_CREATE)
            }
            Memory::Dynamic => {
                let local = (0..n).map(|t| (t == rank).then_some(0)).collect();
                (0, local, MPI_WIN_FLAVOR_DYNAMIC)
            }
            Memory::Allocate | Memory::Shared => {
                let local: Vec<_> = offsets.iter().map(|o| o.map(|o| data + o)).collect();
                let flavor = match mem {
                    Memory::Shared => MPI_WIN_FLAVOR_SHARED,
                    _ => MPI_WIN_FLAVOR_ALLOCATE,
                };
                (local[rank].unwrap_or(data), local, flavor)
            }
        };
        let me = Peer {
            pid: i64::from(std::process::id() as i32),
            base: base as i64,
            size,
            disp_unit,
        };
        let peers = allgather(me, n, wc)?;
        let far: Vec<bool> = (0..n).map(|t| !here(t)).collect();
        let pids = (peers.iter().enumerate())
            .map(|(t, p)| here(t).then(|| u32::try_from(p.pid).ok()).flatten())
            .collect();
        let exposed = Rc::new(Exposed::new(seg, rank, flavor, base, size as usize, pids));
        let remote = super::Remote::new(far);
        if remote.spans_nodes() {
            let target = crate::rma_target::Target::new(exposed.clone(), remote.received());
            with_state(|s| {
                let raw = s.comm(wc)?.comm.raw();
                Ok(raw.serve(TAG_REQUEST, Box::new(target))?)
            })?;
        }
        let h = window::add(Window {
            comm: wc,
            peers,
            exposed,
            local,
            attrs: Vec::new(),
            name: String::new(),
            epochs: Epochs::default(),
            base,
            size: size as isize,
            disp_unit: disp,
            flavor,
            model: MPI_WIN_UNIFIED,
            remote,
        });
        Ok((h, base))
    })();
    if made.is_err() {
        // SAFETY: the duplicate made above.
        unsafe { PMPI_Comm_free(&mut wc) };
    }
    made
}

/// The segment of a window that spans nodes (`segment`), made by the processes of node
/// `node` among themselves.
fn node_segment(wc: Handle, node: u32, rank: usize, n: usize, shared: usize) -> MpiResult<Segment> {
    let mut nc = MPI_COMM_NULL;
    let color = (node & 0x7fff_ffff) as c_int;
    // SAFETY: the window's live communicator; our output slot.
    check(
        unsafe { PMPI_Comm_split(wc, color, rank as c_int, &mut nc) },
        "MPI_Comm_split",
    )?;
    let here = with_state(|s| {
        let r = s.comm(nc)?.comm.raw();
        Ok((r.rank() as usize, r.size() as usize))
    });
    let seg = here.and_then(|(r, m)| segment(nc, r, m, n, shared));
    // SAFETY: the communicator split above, freed once.
    unsafe { PMPI_Comm_free(&mut nc) };
    seg
}

/// The exported creation calls: a window handle in `win`, the base in `baseptr` (a
/// `void **` passed as `void *`) unless it is NULL.
unsafe fn make(
    name: &str,
    comm: Handle,
    size: i64,
    disp_unit: i64,
    mem: Memory,
    baseptr: *mut c_void,
    win: *mut Handle,
) -> c_int {
    call(name, comm, || {
        if win.is_null() {
            return err(MPI_ERR_ARG, "the output argument win is NULL");
        }
        // Its exchanges let other threads in (MPI_THREAD_MULTIPLE): `create` borrows nothing
        // of the state across its calls.
        let (h, base) = crate::threads::yielding(|| create(comm, size, disp_unit, mem))?;
        // SAFETY: the caller's output arguments.
        unsafe {
            if !baseptr.is_null() {
                baseptr.cast::<usize>().write(base);
            }
            out(win, h, "win")
        }
    })
}

macro_rules! creating {
    ($($f:ident $name:literal $unit:ty;)*) => {$(
        unsafe fn $f(
            base: *mut c_void,
            size: isize,
            disp_unit: $unit,
            _info: Handle,
            comm: Handle,
            win: *mut Handle,
        ) -> c_int {
            let mem = Memory::Given(base as usize);
            let none = std::ptr::null_mut();
            // SAFETY: passed through.
            unsafe { make($name, comm, size as i64, disp_unit as i64, mem, none, win) }
        }
    )*};
}

creating! {
    win_create "MPI_Win_create" c_int;
    win_create_c "MPI_Win_create_c" isize;
}

macro_rules! allocating {
    ($($f:ident $name:literal $unit:ty, $mem:expr;)*) => {$(
        unsafe fn $f(
            size: isize,
            disp_unit: $unit,
            _info: Handle,
            comm: Handle,
            baseptr: *mut c_void,
            win: *mut Handle,
        ) -> c_int {
            // SAFETY: passed through.
            unsafe { make($name, comm, size as i64, disp_unit as i64, $mem, baseptr, win) }
        }
    )*};
}

allocating! {
    win_allocate "MPI_Win_allocate" c_int, Memory::Allocate;
    win_allocate_c "MPI_Win_allocate_c" isize, Memory::Allocate;
    win_allocate_shared "MPI_Win_allocate_shared" c_int, Memory::Shared;
    win_allocate_shared_c "MPI_Win_allocate_shared_c" isize, Memory::Shared;
}

/// MPI_Win_shared_query: rank's size, unit and base in this process (MPI_PROC_NULL: the
/// first rank with memory); size 0 at NULL for a window of MPI_Win_create(_dynamic).
unsafe fn shared_query(
    name: &str,
    win: Handle,
    rank: c_int,
    size: *mut isize,
    unit: &mut dyn FnMut(i64) -> MpiResult<()>,
    baseptr: *mut c_void,
) -> c_int {
    win_call(name, win, || {
        let (sz, du, base) = window::with(win, |w| {
            let n = w.peers.len();
            let r = if rank == MPI_PROC_NULL {
                (0..n).find(|&r| w.peers[r].size > 0).unwrap_or(0)
            } else {
                match usize::try_from(rank).ok().filter(|&r| r < n) {
                    Some(r) => r,
                    None => {
                        return err(
                            MPI_ERR_RANK,
                            format!("rank {rank} is not in the window's {n}"),
                        )
                    }
                }
            };
            let loads = w.flavor == MPI_WIN_FLAVOR_SHARED || w.flavor == MPI_WIN_FLAVOR_ALLOCATE;
            let Some(base) = w.local[r].filter(|_| loads) else {
                // MPI 4.1: memory this process cannot load from is size 0 at NULL.
                return Ok((0, w.peers[r].disp_unit, 0));
            };
            Ok((w.peers[r].size, w.peers[r].disp_unit, base))
        })?;
        unit(du)?;
        // SAFETY: the caller's output arguments (baseptr is a `void **`).
        unsafe {
            out(size, sz as isize, "size")?;
            if baseptr.is_null() {
                return err(MPI_ERR_ARG, "baseptr is NULL");
            }
            baseptr.cast::<usize>().write(base);
        }
        Ok(())
    })
}

unsafe fn win_shared_query(
    win: Handle,
    rank: c_int,
    size: *mut isize,
    disp_unit: *mut c_int,
    baseptr: *mut c_void,
) -> c_int {
    // SAFETY: the caller's output argument.
    let mut unit = |u: i64| unsafe { out(disp_unit, u as c_int, "disp_unit") };
    // SAFETY: passed through.
    unsafe { shared_query("MPI_Win_shared_query", win, rank, size, &mut unit, baseptr) }
}

unsafe fn win_shared_query_c(
    win: Handle,
    rank: c_int,
    size: *mut isize,
    disp_unit: *mut isize,
    baseptr: *mut c_void,
) -> c_int {
    // SAFETY: the caller's output argument.
    let mut unit = |u: i64| unsafe { out(disp_unit, u as isize, "disp_unit") };
    // SAFETY: passed through.
    unsafe {
        shared_query(
            "MPI_Win_shared_query_c",
            win,
            rank,
            size,
            &mut unit,
            baseptr,
        )
    }
}

unsafe fn win_free(win: *mut Handle) -> c_int {
    // SAFETY: the caller's in/out argument, read for the error handler.
    let h = unsafe { win.as_ref() }.copied().unwrap_or(MPI_WIN_NULL);
    // The handler is the window's, looked up before the call removes the window.
    let wc = window::comm_of(h);
    let handler = || crate::state::errhandler_for(wc).about(h);
    crate::call_with("MPI_Win_free", handler, || {
        window::with(h, |w| {
            let e = &w.epochs;
            if e.lock_all || !e.locked.is_empty() || e.started.is_some() || e.posted.is_some() {
                return err(
                    MPI_ERR_RMA_SYNC,
                    "MPI_Win_free with a lock, an access epoch (MPI_Win_start) or an exposure \
                     epoch (MPI_Win_post) still open: unlock, complete or wait first",
                );
            }
            Ok(())
        })?;
        super::win_attr::delete_all(h)?;
        // Nobody may still be reading or writing this process's memory.
        crate::threads::yielding(|| super::rma_remote::quiesce(h))?;
        let w = window::remove(h)?;
        let mut c = w.comm;
        if w.remote.spans_nodes() {
            with_state(|s| Ok(s.comm(c)?.comm.raw().stop_serving(TAG_REQUEST)?))?;
        }
        drop(w);
        // SAFETY: the window's own duplicate, freed once.
        check(unsafe { PMPI_Comm_free(&mut c) }, "MPI_Comm_free")?;
        // SAFETY: the caller's in/out argument.
        unsafe { out(win, MPI_WIN_NULL, "win") }
    })
}

unsafe fn win_get_group(win: Handle, group: *mut Handle) -> c_int {
    let wc = window::comm_of(win);
    win_call("MPI_Win_get_group", win, || {
        window::with(win, |_| Ok(()))?;
        // SAFETY: the caller's output argument, passed on.
        check(unsafe { PMPI_Comm_group(wc, group) }, "MPI_Comm_group")
    })
}

unsafe fn win_set_name(win: Handle, name: *const c_char) -> c_int {
    win_call("MPI_Win_set_name", win, || {
        if name.is_null() {
            return err(MPI_ERR_ARG, "win_name is NULL");
        }
        // SAFETY: the caller's C string.
        let n = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        window::with(win, |w| {
            w.name = n;
            Ok(())
        })
    })
}

unsafe fn win_get_name(win: Handle, name: *mut c_char, len: *mut c_int) -> c_int {
    win_call("MPI_Win_get_name", win, || {
        // The null handle has a name too, as MPI_COMM_NULL has.
        let n = match win {
            MPI_WIN_NULL => "MPI_WIN_NULL".to_string(),
            _ => window::with(win, |w| Ok(w.name.clone()))?,
        };
        // SAFETY: MPI sizes the buffer MPI_MAX_OBJECT_NAME.
        unsafe { super::out_string(name, MPI_MAX_OBJECT_NAME, len, &n) }
    })
}

unsafe fn win_set_errhandler(win: Handle, handler: Handle) -> c_int {
    win_call("MPI_Win_set_errhandler", win, || {
        let h = user::resolve(handler, Kind::Win)?;
        let wc = window::with(win, |w| Ok(w.comm))?;
        with_state(|s| {
            s.comm_mut(wc)?.errhandler = h;
            Ok(())
        })
    })
}

unsafe fn win_get_errhandler(win: Handle, handler: *mut Handle) -> c_int {
    win_call("MPI_Win_get_errhandler", win, || {
        let wc = window::with(win, |w| Ok(w.comm))?;
        let h = with_state(|s| Ok(s.comm(wc)?.errhandler))?;
        // SAFETY: the caller's output argument.
        unsafe { out(handler, user::handle_for_get(h), "errhandler") }
    })
}

unsafe fn win_create_errhandler(func: Option<ErrFn>, handler: *mut Handle) -> c_int {
    crate::call("MPI_Win_create_errhandler", MPI_COMM_SELF, || {
        let Some(func) = func else {
            return err(MPI_ERR_ARG, "the error handler function is NULL");
        };
        // SAFETY: the caller's output argument.
        unsafe {
            out(
                handler,
                user::create(user::Func::Classic(func), Kind::Win, None),
                "errhandler",
            )
        }
    })
}

unsafe fn win_get_info(win: Handle, info: *mut Handle) -> c_int {
    win_call("MPI_Win_get_info", win, || {
        window::with(win, |_| Ok(()))?;
        // The hints ibdyn uses: none.
        // SAFETY: passed on.
        check(unsafe { PMPI_Info_create(info) }, "MPI_Info_create")
    })
}

unsafe fn win_set_info(win: Handle, _info: Handle) -> c_int {
    win_call("MPI_Win_set_info", win, || window::with(win, |_| Ok(())))
}

unsafe fn win_create_dynamic(_info: Handle, comm: Handle, win: *mut Handle) -> c_int {
    let none = std::ptr::null_mut();
    // SAFETY: passed through.
    unsafe {
        make(
            "MPI_Win_create_dynamic",
            comm,
            0,
            1,
            Memory::Dynamic,
            none,
            win,
        )
    }
}

unsafe fn win_attach(win: Handle, base: *mut c_void, size: isize) -> c_int {
    win_call("MPI_Win_attach", win, || {
        let Ok(len) = usize::try_from(size) else {
            return err(MPI_ERR_SIZE, format!("size {size} is negative"));
        };
        let start = base as usize;
        window::with(win, |w| {
            if w.flavor != MPI_WIN_FLAVOR_DYNAMIC {
                return err(
                    MPI_ERR_RMA_FLAVOR,
                    "MPI_Win_attach needs a window of MPI_Win_create_dynamic",
                );
            }
            let overlaps = |&(b, l): &(usize, usize)| start < b + l && b < start + len;
            let mut attached = w.exposed.attached();
            if attached.iter().any(overlaps) {
                return err(
                    MPI_ERR_RMA_ATTACH,
                    format!("{len} bytes at {start:#x} overlap a region attached already"),
                );
            }
            attached.push((start, len));
            Ok(())
        })
    })
}

unsafe fn win_detach(win: Handle, base: *const c_void) -> c_int {
    win_call("MPI_Win_detach", win, || {
        window::with(win, |w| {
            let mut attached = w.exposed.attached();
            match attached.iter().position(|&(b, _)| b == base as usize) {
                Some(i) => {
                    attached.remove(i);
                    Ok(())
                }
                None => err(
                    MPI_ERR_RMA_ATTACH,
                    format!("no region attached at {:#x}", base as usize),
                ),
            }
        })
    })
}

unsafe fn win_call_errhandler(win: Handle, code: c_int) -> c_int {
    let found = win_call("MPI_Win_call_errhandler", win, || {
        window::with(win, |_| Ok(()))
    });
    if found != MPI_SUCCESS {
        return found;
    }
    let e = crate::error::MpiError::new(code, "raised by the program (MPI_Win_call_errhandler)");
    let wc = window::comm_of(win);
    crate::error::raise(
        "MPI_Win_call_errhandler",
        e,
        crate::state::errhandler_for(wc).about(win),
    );
    MPI_SUCCESS
}

export!(MPI_Win_create, PMPI_Win_create, win_create,
    (base: *mut c_void, size: isize, disp_unit: c_int, info: Handle, comm: Handle, win: *mut Handle) -> c_int);
export!(MPI_Win_create_c, PMPI_Win_create_c, win_create_c,
    (base: *mut c_void, size: isize, disp_unit: isize, info: Handle, comm: Handle, win: *mut Handle) -> c_int);
export!(MPI_Win_allocate, PMPI_Win_allocate, win_allocate,
    (size: isize, disp_unit: c_int, info: Handle, comm: Handle, baseptr: *mut c_void, win: *mut Handle) -> c_int);
export!(MPI_Win_allocate_c, PMPI_Win_allocate_c, win_allocate_c,
    (size: isize, disp_unit: isize, info: Handle, comm: Handle, baseptr: *mut c_void, win: *mut Handle) -> c_int);
export!(MPI_Win_allocate_shared, PMPI_Win_allocate_shared, win_allocate_shared,
    (size: isize, disp_unit: c_int, info: Handle, comm: Handle, baseptr: *mut c_void, win: *mut Handle) -> c_int);
export!(MPI_Win_allocate_shared_c, PMPI_Win_allocate_shared_c, win_allocate_shared_c,
    (size: isize, disp_unit: isize, info: Handle, comm: Handle, baseptr: *mut c_void, win: *mut Handle) -> c_int);
export!(MPI_Win_shared_query, PMPI_Win_shared_query, win_shared_query,
    (win: Handle, rank: c_int, size: *mut isize, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int);
export!(MPI_Win_shared_query_c, PMPI_Win_shared_query_c, win_shared_query_c,
    (win: Handle, rank: c_int, size: *mut isize, disp_unit: *mut isize, baseptr: *mut c_void) -> c_int);
export!(MPI_Win_free, PMPI_Win_free, win_free, (win: *mut Handle) -> c_int);
export!(MPI_Win_get_group, PMPI_Win_get_group, win_get_group, (win: Handle, group: *mut Handle) -> c_int);
export!(MPI_Win_set_name, PMPI_Win_set_name, win_set_name, (win: Handle, win_name: *const c_char) -> c_int);
export!(MPI_Win_get_name, PMPI_Win_get_name, win_get_name,
    (win: Handle, win_name: *mut c_char, resultlen: *mut c_int) -> c_int);
export!(MPI_Win_set_errhandler, PMPI_Win_set_errhandler, win_set_errhandler,
    (win: Handle, errhandler: Handle) -> c_int);
export!(MPI_Win_get_errhandler, PMPI_Win_get_errhandler, win_get_errhandler,
    (win: Handle, errhandler: *mut Handle) -> c_int);
export!(MPI_Win_create_dynamic, PMPI_Win_create_dynamic, win_create_dynamic,
    (info: Handle, comm: Handle, win: *mut Handle) -> c_int);
export!(MPI_Win_attach, PMPI_Win_attach, win_attach,
    (win: Handle, base: *mut c_void, size: isize) -> c_int);
export!(MPI_Win_detach, PMPI_Win_detach, win_detach, (win: Handle, base: *const c_void) -> c_int);
export!(MPI_Win_call_errhandler, PMPI_Win_call_errhandler, win_call_errhandler,
    (win: Handle, errorcode: c_int) -> c_int);
export!(MPI_Win_create_errhandler, PMPI_Win_create_errhandler, win_create_errhandler,
    (win_errhandler_fn: Option<ErrFn>, errhandler: *mut Handle) -> c_int);
export!(MPI_Win_get_info, PMPI_Win_get_info, win_get_info, (win: Handle, info_used: *mut Handle) -> c_int);
export!(MPI_Win_set_info, PMPI_Win_set_info, win_set_info, (win: Handle, info: Handle) -> c_int);
