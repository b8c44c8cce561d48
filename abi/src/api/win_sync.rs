//! Synchronization of windows: MPI_Win_fence; passive target MPI_Win_lock/unlock,
//! lock_all/unlock_all, flush (all four forms), sync; general active target
//! MPI_Win_post/start/complete/wait/test. Operations on a target of this node are complete
//! at the target when they return, so among such targets a fence is a barrier, a flush has
//! nothing left to wait for, and the post/start/complete/wait handshake is one empty
//! message each way on the window's private communicator. Operations on a target of
//! another node complete at the fence, MPI_Win_complete, MPI_Win_unlock(_all) or flush that
//! ends or flushes their epoch, which wait for their answers (`super::rma_remote`).

use super::out;
use super::rma_remote as remote;
use super::selfcall::*;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::window::{self, Window};
use std::os::raw::c_int;
use std::rc::Rc;
use std::sync::atomic::{fence, Ordering};

const TAG_POST: c_int = 1;
const TAG_DONE: c_int = 2;
const MPI_MODE_NOCHECK: c_int = 1024;
const MPI_MODE_NOSTORE: c_int = 2048;
const MPI_MODE_NOPUT: c_int = 4096;
const MPI_MODE_NOPRECEDE: c_int = 8192;

/// Refuses assert bits that synchronization call `name` does not take (`allowed`).
fn asserts(name: &str, assert: c_int, allowed: c_int) -> MpiResult<()> {
    if assert & !allowed != 0 {
        return err(
            MPI_ERR_ARG,
            format!(
                "{name}: assert {assert:#x} holds bits {:#x} that are not among its MPI_MODE_* \
                 values",
                assert & !allowed
            ),
        );
    }
    Ok(())
}

/// Runs synchronization `f` of window `win` with the window's error handler.
fn sync(name: &str, win: Handle, f: impl FnOnce(Handle) -> MpiResult<()>) -> c_int {
    let wc = window::comm_of(win);
    super::win::win_call(name, win, || f(wc))
}

/// With a window that spans nodes, a progress pass, so that this process serves the other
/// node's origins: a loop of passive-target epochs on this node's ranks (say, taking tasks
/// from a counter in its own window), or of MPI_Win_sync looking for a flag, otherwise makes
/// no call that waits and starves them. Calls that wait for answers from another node (an
/// unlock or flush there) progress anyway; a pass costs a poll of the fabric's sockets.
fn serve_far() {
    if window::any_spanning() {
        ibdyn_intercomm::process::poll();
    }
}

fn rank_of(w: &Window, rank: c_int) -> MpiResult<usize> {
    let n = w.peers.len();
    usize::try_from(rank).ok().filter(|&r| r < n).map_or_else(
        || {
            err(
                MPI_ERR_RANK,
                format!("rank {rank} is not one of the window's {n}"),
            )
        },
        Ok,
    )
}

unsafe fn win_fence(assert: c_int, win: Handle) -> c_int {
    sync("MPI_Win_fence", win, |_| {
        asserts(
            "MPI_Win_fence",
            assert,
            MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
        )?;
        window::with(win, |w| {
            let e = &w.epochs;
            if e.lock_all || !e.locked.is_empty() || e.started.is_some() || e.posted.is_some() {
                return err(
                    MPI_ERR_RMA_SYNC,
                    "MPI_Win_fence inside a lock or a post/start epoch of the same window",
                );
            }
            Ok(())
        })?;
        fence(Ordering::SeqCst);
        crate::threads::yielding(|| remote::quiesce(win))?;
        window::with(win, |w| {
            w.epochs.fence = assert & MPI_MODE_NOSUCCEED == 0;
            Ok(())
        })
    })
}

unsafe fn win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: Handle) -> c_int {
    sync("MPI_Win_lock", win, |_| {
        asserts("MPI_Win_lock", assert, MPI_MODE_NOCHECK)?;
        let exclusive = match lock_type {
            MPI_LOCK_EXCLUSIVE => true,
            MPI_LOCK_SHARED => false,
            t => {
                return err(
                    MPI_ERR_LOCKTYPE,
                    format!("lock type {t}: use MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED"),
                )
            }
        };
        let step = window::with(win, |w| {
            let t = rank_of(w, rank)?;
            not_locked(w, Some(t))?;
            if w.remote.is_far(t) {
                // MPI_MODE_NOCHECK: the program vouches that nobody competes for this lock,
                // so no lock travels.
                if assert & MPI_MODE_NOCHECK == 0 {
                    remote::lock(w, t, exclusive);
                }
                w.epochs.locked.insert(t, lock_type);
                return Ok(LockStep::Far);
            }
            if crate::threads::multiple() {
                return Ok(LockStep::Wait(t, w.exposed.clone()));
            }
            w.lock(t, exclusive)?;
            w.epochs.locked.insert(t, lock_type);
            Ok(LockStep::Held)
        })?;
        match step {
            LockStep::Far => return Ok(()),
            LockStep::Held => {}
            LockStep::Wait(t, exposed) => {
                exposed.lock(t, exclusive, true)?;
                opened(win, &exposed, Some(t), &[t], exclusive, |w| {
                    w.epochs.locked.insert(t, lock_type);
                })?;
            }
        }
        serve_far();
        Ok(())
    })
}

/// Where MPI_Win_lock's target is: of another node (its lock travels with the operations), of
/// this node and taken, or of this node to wait for outside the window table (at
/// MPI_THREAD_MULTIPLE, where its holder may wait for another thread of this process).
enum LockStep {
    Far,
    Held,
    Wait(usize, Rc<window::Exposed>),
}

/// Refuses a lock when this process holds the window's lock of `t` already (of every rank
/// for `None`: MPI_Win_lock_all).
fn not_locked(w: &Window, t: Option<usize>) -> MpiResult<()> {
    let e = &w.epochs;
    match t {
        Some(t) if e.lock_all || e.locked.contains_key(&t) => err(
            MPI_ERR_RMA_SYNC,
            format!("window rank {t} is locked already by this process"),
        ),
        None if e.lock_all || !e.locked.is_empty() => err(
            MPI_ERR_RMA_SYNC,
            "this process holds a lock of the window already",
        ),
        _ => Ok(()),
    }
}

/// At MPI_THREAD_MULTIPLE the locks were taken outside the window table, where other threads
/// had their turns: records the epoch (of target `t`; of every rank for `None`) with `open`,
/// unless one of them opened one meanwhile (then the locks of `ts` go back and the call fails
/// as it would have).
fn opened(
    win: Handle,
    exposed: &window::Exposed,
    t: Option<usize>,
    ts: &[usize],
    exclusive: bool,
    open: impl FnOnce(&mut Window),
) -> MpiResult<()> {
    let recorded = window::with(win, |w| {
        not_locked(w, t)?;
        open(w);
        Ok(())
    });
    if recorded.is_err() {
        ts.iter().for_each(|&u| exposed.release(u, exclusive));
    }
    recorded
}

unsafe fn win_unlock(rank: c_int, win: Handle) -> c_int {
    sync("MPI_Win_unlock", win, |_| {
        let far = window::with(win, |w| {
            let t = rank_of(w, rank)?;
            let Some(kind) = w.epochs.locked.remove(&t) else {
                return err(
                    MPI_ERR_RMA_SYNC,
                    format!("window rank {t} is not locked by this process"),
                );
            };
            if w.remote.is_far(t) {
                return Ok(Some(t));
            }
            fence(Ordering::SeqCst);
            w.unlock(t, kind == MPI_LOCK_EXCLUSIVE);
            Ok(None)
        })?;
        match far {
            Some(t) => remote::unlock(win, Some(t)),
            None => {
                serve_far();
                Ok(())
            }
        }
    })
}

unsafe fn win_lock_all(assert: c_int, win: Handle) -> c_int {
    sync("MPI_Win_lock_all", win, |_| {
        asserts("MPI_Win_lock_all", assert, MPI_MODE_NOCHECK)?;
        let nocheck = assert & MPI_MODE_NOCHECK != 0;
        let waits = window::with(win, |w| {
            not_locked(w, None)?;
            // The lock of a rank of another node travels with the first operation on it.
            let here: Vec<usize> = (0..w.peers.len())
                .filter(|&t| !w.remote.is_far(t))
                .collect();
            if crate::threads::multiple() {
                return Ok(Some((here, w.exposed.clone())));
            }
            lock_shared(&w.exposed, &here, false)?;
            w.remote.lock_all(nocheck);
            w.epochs.lock_all = true;
            Ok(None)
        })?;
        if let Some((here, exposed)) = waits {
            lock_shared(&exposed, &here, true)?;
            opened(win, &exposed, None, &here, false, |w| {
                w.remote.lock_all(nocheck);
                w.epochs.lock_all = true;
            })?;
        }
        Ok(())
    })
}

/// Takes the shared locks of `ts` in order; on a failure gives back those taken.
fn lock_shared(exposed: &window::Exposed, ts: &[usize], turns: bool) -> MpiResult<()> {
    for (i, &t) in ts.iter().enumerate() {
        if let Err(e) = exposed.lock(t, false, turns) {
            ts[..i].iter().for_each(|&u| exposed.release(u, false));
            return Err(e);
        }
    }
    Ok(())
}

unsafe fn win_unlock_all(win: Handle) -> c_int {
    sync("MPI_Win_unlock_all", win, |_| {
        let far = window::with(win, |w| {
            if !w.epochs.lock_all {
                return err(
                    MPI_ERR_RMA_SYNC,
                    "MPI_Win_unlock_all without MPI_Win_lock_all",
                );
            }
            fence(Ordering::SeqCst);
            (0..w.peers.len())
                .filter(|&t| !w.remote.is_far(t))
                .for_each(|t| w.unlock(t, false));
            w.epochs.lock_all = false;
            Ok(w.remote.spans_nodes())
        })?;
        if far {
            remote::unlock(win, None)?;
        }
        Ok(())
    })
}

/// The flushes: inside a passive-target epoch; they wait for the answers of targets of
/// other nodes (on this node there is nothing to wait for).
fn flush(name: &str, win: Handle, rank: Option<c_int>) -> c_int {
    super::win::win_call(name, win, || {
        let far = window::with(win, |w| {
            let t = rank.map(|r| rank_of(w, r)).transpose()?;
            let locked = w.epochs.lock_all
                || t.map_or(!w.epochs.locked.is_empty(), |t| {
                    w.epochs.locked.contains_key(&t)
                });
            if !locked {
                return err(
                    MPI_ERR_RMA_SYNC,
                    format!("{name} outside a passive-target epoch (MPI_Win_lock or lock_all)"),
                );
            }
            fence(Ordering::SeqCst);
            Ok(w.remote.spans_nodes())
        })?;
        if far {
            remote::settle(win)?;
        }
        Ok(())
    })
}

unsafe fn win_flush(rank: c_int, win: Handle) -> c_int {
    flush("MPI_Win_flush", win, Some(rank))
}

unsafe fn win_flush_local(rank: c_int, win: Handle) -> c_int {
    flush("MPI_Win_flush_local", win, Some(rank))
}

unsafe fn win_flush_all(win: Handle) -> c_int {
    flush("MPI_Win_flush_all", win, None)
}

unsafe fn win_flush_local_all(win: Handle) -> c_int {
    flush("MPI_Win_flush_local_all", win, None)
}

unsafe fn win_sync(win: Handle) -> c_int {
    sync("MPI_Win_sync", win, |_| {
        window::with(win, |_| Ok(()))?;
        serve_far();
        fence(Ordering::SeqCst);
        Ok(())
    })
}

/// The window ranks of the processes of `group`.
fn ranks_in(group: Handle, wc: Handle) -> MpiResult<Vec<usize>> {
    let mut n = 0;
    // SAFETY: our output slot.
    check(unsafe { PMPI_Group_size(group, &mut n) }, "MPI_Group_size")?;
    let mine: Vec<c_int> = (0..n).collect();
    let mut theirs = vec![MPI_UNDEFINED; n as usize];
    let mut wg = MPI_GROUP_NULL;
    // SAFETY: our slots; `n` ranks each way.
    unsafe {
        check(PMPI_Comm_group(wc, &mut wg), "MPI_Comm_group")?;
        let rc = PMPI_Group_translate_ranks(group, n, mine.as_ptr(), wg, theirs.as_mut_ptr());
        PMPI_Group_free(&mut wg);
        check(rc, "MPI_Group_translate_ranks")?;
    }
    theirs
        .into_iter()
        .map(|r| {
            usize::try_from(r).or_else(|_| {
                err(
                    MPI_ERR_GROUP,
                    "a process of the group is not a process of the window",
                )
            })
        })
        .collect()
}

fn empty_msg(to: usize, tag: c_int, wc: Handle) -> MpiResult<()> {
    // SAFETY: an empty message on the window's communicator.
    check(
        unsafe { PMPI_Send(std::ptr::null(), 0, MPI_BYTE, to as c_int, tag, wc) },
        "MPI_Send",
    )
}

fn recv_empty(from: usize, tag: c_int, wc: Handle) -> MpiResult<()> {
    // SAFETY: an empty message; the status is ignored (NULL).
    check(
        unsafe {
            PMPI_Recv(
                std::ptr::null_mut(),
                0,
                MPI_BYTE,
                from as c_int,
                tag,
                wc,
                std::ptr::null_mut(),
            )
        },
        "MPI_Recv",
    )
}

unsafe fn win_post(group: Handle, assert: c_int, win: Handle) -> c_int {
    sync("MPI_Win_post", win, |wc| {
        asserts(
            "MPI_Win_post",
            assert,
            MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT,
        )?;
        if window::with(win, |w| Ok(w.epochs.posted.is_some()))? {
            return err(
                MPI_ERR_RMA_SYNC,
                "MPI_Win_post while an exposure epoch is open",
            );
        }
        let origins = ranks_in(group, wc)?;
        fence(Ordering::SeqCst);
        if assert & MPI_MODE_NOCHECK == 0 {
            for &o in &origins {
                empty_msg(o, TAG_POST, wc)?;
            }
        }
        window::with(win, |w| {
            w.epochs.posted = Some(origins);
            Ok(())
        })
    })
}

unsafe fn win_start(group: Handle, assert: c_int, win: Handle) -> c_int {
    sync("MPI_Win_start", win, |wc| {
        asserts("MPI_Win_start", assert, MPI_MODE_NOCHECK)?;
        if window::with(win, |w| Ok(w.epochs.started.is_some()))? {
            return err(
                MPI_ERR_RMA_SYNC,
                "MPI_Win_start while an access epoch is open",
            );
        }
        let targets = ranks_in(group, wc)?;
        if assert & MPI_MODE_NOCHECK == 0 {
            if remote::spans_nodes(win)? {
                arrivals(win, wc, TAG_POST, targets.clone())?;
            } else {
                for &t in &targets {
                    recv_empty(t, TAG_POST, wc)?;
                }
            }
        }
        window::with(win, |w| {
            w.epochs.started = Some(targets);
            Ok(())
        })
    })
}

unsafe fn win_complete(win: Handle) -> c_int {
    sync("MPI_Win_complete", win, |wc| {
        let targets = window::with(win, |w| {
            w.epochs.started.take().map_or_else(
                || err(MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start"),
                Ok,
            )
        })?;
        remote::answered(win)?;
        fence(Ordering::SeqCst);
        for t in targets {
            empty_msg(t, TAG_DONE, wc)?;
        }
        remote::failure(win)
    })
}

/// Receives the empty messages with `tag` from each of `from`, serving the window's
/// operations from other nodes while it waits (a target of another node may wait for this
/// process to answer before it can post).
fn arrivals(win: Handle, wc: Handle, tag: c_int, mut from: Vec<usize>) -> MpiResult<()> {
    let watch = from.clone();
    remote::wait_serving(win, wc, &|| watch.clone(), || {
        let mut still = Vec::with_capacity(from.len());
        for &o in &from {
            let mut here = 0;
            // SAFETY: our flag; the status is ignored (NULL).
            check(
                unsafe { PMPI_Iprobe(o as c_int, tag, wc, &mut here, std::ptr::null_mut()) },
                "MPI_Iprobe",
            )?;
            if here != 0 {
                recv_empty(o, tag, wc)?;
            } else {
                still.push(o);
            }
        }
        from = still;
        Ok(from.is_empty())
    })
}

/// Receives the done messages of the exposure epoch's origins: all of them (`block`), or
/// those that have arrived. Whether the epoch has ended.
fn collect_done(win: Handle, wc: Handle, block: bool) -> MpiResult<bool> {
    let mut left = window::with(win, |w| {
        w.epochs.posted.clone().map_or_else(
            || err(MPI_ERR_RMA_SYNC, "no MPI_Win_post epoch to wait for"),
            Ok,
        )
    })?;
    let mut still = Vec::new();
    for o in left.drain(..) {
        let mut here = 1;
        if !block {
            // SAFETY: our flag; the status is ignored (NULL).
            check(
                unsafe { PMPI_Iprobe(o as c_int, TAG_DONE, wc, &mut here, std::ptr::null_mut()) },
                "MPI_Iprobe",
            )?;
        }
        if here != 0 {
            recv_empty(o, TAG_DONE, wc)?;
        } else {
            still.push(o);
        }
    }
    let done = still.is_empty();
    window::with(win, |w| {
        w.epochs.posted = (!done).then_some(still);
        Ok(())
    })?;
    fence(Ordering::SeqCst);
    Ok(done)
}

unsafe fn win_wait(win: Handle) -> c_int {
    sync("MPI_Win_wait", win, |wc| {
        if !remote::spans_nodes(win)? {
            return collect_done(win, wc, true).map(|_| ());
        }
        let origins = window::with(win, |w| Ok(w.epochs.posted.clone().unwrap_or_default()))?;
        remote::wait_serving(win, wc, &|| origins.clone(), || {
            collect_done(win, wc, false)
        })
    })
}

unsafe fn win_test(win: Handle, flag: *mut c_int) -> c_int {
    sync("MPI_Win_test", win, |wc| {
        if remote::spans_nodes(win)? {
            remote::serve(win, wc)?;
        }
        let done = collect_done(win, wc, false)?;
        // SAFETY: the caller's output argument.
        unsafe { out(flag, c_int::from(done), "flag") }
    })
}

export!(MPI_Win_fence, PMPI_Win_fence, win_fence, (assert: c_int, win: Handle) -> c_int);
export!(MPI_Win_lock, PMPI_Win_lock, win_lock,
    (lock_type: c_int, rank: c_int, assert: c_int, win: Handle) -> c_int);
export!(MPI_Win_unlock, PMPI_Win_unlock, win_unlock, (rank: c_int, win: Handle) -> c_int);
export!(MPI_Win_lock_all, PMPI_Win_lock_all, win_lock_all, (assert: c_int, win: Handle) -> c_int);
export!(MPI_Win_unlock_all, PMPI_Win_unlock_all, win_unlock_all, (win: Handle) -> c_int);
export!(MPI_Win_flush, PMPI_Win_flush, win_flush, (rank: c_int, win: Handle) -> c_int);
export!(MPI_Win_flush_local, PMPI_Win_flush_local, win_flush_local, (rank: c_int, win: Handle) -> c_int);
export!(MPI_Win_flush_all, PMPI_Win_flush_all, win_flush_all, (win: Handle) -> c_int);
export!(MPI_Win_flush_local_all, PMPI_Win_flush_local_all, win_flush_local_all, (win: Handle) -> c_int);
export!(MPI_Win_sync, PMPI_Win_sync, win_sync, (win: Handle) -> c_int);
export!(MPI_Win_post, PMPI_Win_post, win_post, (group: Handle, assert: c_int, win: Handle) -> c_int);
export!(MPI_Win_start, PMPI_Win_start, win_start, (group: Handle, assert: c_int, win: Handle) -> c_int);
export!(MPI_Win_complete, PMPI_Win_complete, win_complete, (win: Handle) -> c_int);
export!(MPI_Win_wait, PMPI_Win_wait, win_wait, (win: Handle) -> c_int);
export!(MPI_Win_test, PMPI_Win_test, win_test, (win: Handle, flag: *mut c_int) -> c_int);
