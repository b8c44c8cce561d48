//! One-sided operations on targets of another node. Their memory cannot be reached by load
//! and store or cross-memory attach, so the origin sends the operations as messages
//! (`crate::rma_wire`) on the window's private communicator: those on one target are queued
//! and travel together at the end of the epoch, at a flush (or once 64 KiB are queued). The
//! target applies them to its own memory in whatever MPI call it is in when they arrive
//! (`crate::rma_target`) and answers them together. Nothing waits at the call: an operation
//! completes at the origin's next synchronisation, which waits for every answer. A
//! passive-target epoch takes the target's lock with its first request on that target (an
//! epoch without operations on it sends nothing) and gives it back with its last.

use super::buffers::RecvBuf;
use super::p2p::send_on;
use super::selfcall::*;
use crate::consts::*;
use crate::derived::{self, Ty};
use crate::error::{err, MpiError, MpiResult};
use crate::request::{Active, Mode};
use crate::rma_wire::{Batch, Kind, Reduce, Reply, Request, BATCH_BYTES, TAG_REPLY, TAG_REQUEST};
use crate::state::with_state;
use crate::window::{self, Window};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::rc::Rc;

/// What a window knows of its ranks on other nodes and of its operations on them.
#[derive(Default)]
pub(crate) struct Remote {
    /// Per window rank: on another node than this process.
    far: Vec<bool>,
    seq: u64,
    /// Requests not answered yet, by number.
    waiting: BTreeMap<u64, Waiting>,
    /// Requests not sent yet, by target: an epoch's operations on one target travel together.
    queued: BTreeMap<usize, Batch>,
    /// Batches of requests sent to each window rank since the window was made.
    sent: Vec<i64>,
    /// Batches of requests received since the window was made (counted by the target
    /// service).
    received: Rc<Cell<i64>>,
    /// Targets of another node locked in a passive-target epoch, with the lock type and
    /// whether the lock request has been queued.
    locks: BTreeMap<usize, FarLock>,
    /// The MPI_Win_lock_all epoch was opened with MPI_MODE_NOCHECK: its targets of other
    /// nodes are accessed without locks.
    unchecked_all: bool,
    /// Sends of requests and replies not known complete yet (their buffers live here).
    sending: Vec<Active>,
    /// The first error an answer reported, for the next synchronisation to return.
    failed: Option<MpiError>,
}

#[derive(Clone, Copy)]
struct FarLock {
    exclusive: bool,
    asked: bool,
}

/// A request waiting for its answer: where the answer's data goes.
struct Waiting {
    target: usize,
    into: Option<RecvBuf<'static>>,
}

impl Remote {
    pub fn new(far: Vec<bool>) -> Remote {
        Remote {
            sent: vec![0; far.len()],
            far,
            ..Remote::default()
        }
    }

    /// The count of request batches received, which the target service keeps.
    pub fn received(&self) -> Rc<Cell<i64>> {
        self.received.clone()
    }

    /// Queues `req` for window rank `t`; whether its queue is full enough to send.
    fn enqueue(
        &mut self,
        t: usize,
        kind: Kind,
        blocks: Vec<(u64, u64)>,
        data: Vec<u8>,
        into: Option<RecvBuf<'static>>,
    ) -> bool {
        self.seq += 1;
        let req = Request {
            seq: self.seq,
            kind,
            blocks,
            data,
        };
        let q = self.queued.entry(t).or_default();
        q.push(&req.encode());
        self.waiting.insert(req.seq, Waiting { target: t, into });
        q.size() >= BATCH_BYTES
    }

    /// Queues the lock request of a passive-target epoch on `t` before its first operation
    /// (of MPI_Win_lock_all's epoch: a shared lock).
    fn lock_before_access(&mut self, t: usize, lock_all: bool) {
        if lock_all && !self.unchecked_all {
            self.locks.entry(t).or_insert(FarLock {
                exclusive: false,
                asked: false,
            });
        }
        if let Some(l) = self.locks.get_mut(&t).filter(|l| !l.asked) {
            l.asked = true;
            let exclusive = l.exclusive;
            self.enqueue(t, Kind::Lock { exclusive }, Vec::new(), Vec::new(), None);
        }
    }

    /// Opens an MPI_Win_lock_all epoch; `nocheck`: with MPI_MODE_NOCHECK.
    pub fn lock_all(&mut self, nocheck: bool) {
        self.unchecked_all = nocheck;
    }

    /// Queues the unlock of `t` if its lock was asked for.
    fn release(&mut self, t: usize, l: FarLock) {
        if l.asked {
            let exclusive = l.exclusive;
            self.enqueue(t, Kind::Unlock { exclusive }, Vec::new(), Vec::new(), None);
        }
    }

    /// Whether window rank `t` runs on another node.
    pub fn is_far(&self, t: usize) -> bool {
        self.far.get(t).copied().unwrap_or(false)
    }

    /// Whether any rank of the window runs on another node.
    pub fn spans_nodes(&self) -> bool {
        self.far.iter().any(|&f| f)
    }
}

/// The blocks of target memory that `count` elements of `ty` at `addr` cover.
pub(super) fn blocks(addr: isize, ty: &Ty, count: i64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut one = |o: isize, l: usize| {
        if l > 0 {
            out.push(((addr + o) as u64, l as u64));
        }
    };
    if ty.contiguous() {
        one(0, ty.size * count.max(0) as usize);
    } else {
        ty.for_each_block_of(count.max(0) as usize, &mut one);
    }
    out
}

/// The reduction an accumulate with `op` on target datatype `ty` (handle `h`) asks of the
/// target.
pub(super) fn reduce(op: Handle, h: Handle, ty: &Ty) -> MpiResult<Reduce> {
    if op >= 0x100 {
        return err(
            MPI_ERR_OP,
            "one-sided accumulates take predefined operations only (MPI's rule), not MPI_Op_create's",
        );
    }
    Ok(Reduce {
        op,
        ty: if derived::is_predefined(h) {
            h
        } else {
            ty.single_basic().unwrap_or(MPI_DATATYPE_NULL)
        },
        elem: ty.elem,
    })
}

/// Queues operation `kind` on `blocks` of window rank `t`'s memory with `data`; the
/// answer's data goes to `into`. Complete at the next synchronisation.
pub(super) fn issue(
    win: Handle,
    t: usize,
    kind: Kind,
    blocks: Vec<(u64, u64)>,
    data: Vec<u8>,
    into: Option<RecvBuf<'static>>,
) -> MpiResult<()> {
    let full = window::with(win, |w| {
        let lock_all = w.epochs.lock_all;
        let r = &mut w.remote;
        r.lock_before_access(t, lock_all);
        Ok(r.enqueue(t, kind, blocks, data, into))
    })?;
    if full {
        send_queued(win, window::comm_of(win), Some(t))?;
    }
    Ok(())
}

/// Sends the queued requests to `only`, or to every target.
fn send_queued(win: Handle, wc: Handle, only: Option<usize>) -> MpiResult<()> {
    let batches: Vec<(usize, Batch)> = window::with(win, |w| {
        let q = &mut w.remote.queued;
        Ok(match only {
            Some(t) => q.remove(&t).map(|b| (t, b)).into_iter().collect(),
            None => std::mem::take(q).into_iter().collect(),
        })
    })?;
    for (t, b) in batches {
        send(win, wc, t, TAG_REQUEST, b)?;
        window::with(win, |w| {
            w.remote.sent[t] += 1;
            Ok(())
        })?;
    }
    Ok(())
}

/// Starts sending `batch` to `to` with `tag`; the window keeps the send until it completes.
fn send(win: Handle, wc: Handle, to: usize, tag: c_int, batch: Batch) -> MpiResult<()> {
    let sent = with_state(|s| {
        let raw = s.comm(wc)?.comm.raw();
        let bytes = super::buffers::SendBuf::Packed(batch.into_bytes());
        send_on(raw, Mode::Send, bytes, to as c_int, tag)
    })?;
    window::with(win, |w| {
        w.remote.sending.push(sent);
        Ok(())
    })
}

/// Takes in the answers that have arrived and lets go of finished sends (the requests that
/// have arrived the target service applies meanwhile). Whether anything arrived.
pub(crate) fn serve(win: Handle, wc: Handle) -> MpiResult<bool> {
    let mut any = false;
    // One message a call: the caller's loop calls again unless that was the last answer it
    // waited for (a look for another would cost a progress pass).
    if let Some((body, from)) = take(wc, TAG_REPLY)? {
        any = true;
        for item in Batch::items(&body)? {
            take_reply(win, from, Reply::decode(item)?)?;
        }
    }
    window::with(win, |w| {
        let mut left = Vec::with_capacity(w.remote.sending.len());
        for mut a in w.remote.sending.drain(..) {
            if !poll(&mut a)? {
                left.push(a);
            }
        }
        w.remote.sending = left;
        Ok(())
    })?;
    Ok(any)
}

/// Delivers the answer `reply` from window rank `from`.
fn take_reply(win: Handle, from: c_int, reply: Reply) -> MpiResult<()> {
    window::with(win, |w| {
        if let (0, Err((class, why))) = (reply.seq, &reply.outcome) {
            // The target could not read a request: every operation on it has failed.
            w.remote.waiting.retain(|_, x| x.target != from as usize);
            let e = MpiError::new(*class, format!("at window rank {from}: {why}"));
            w.remote.failed.get_or_insert(e);
            return Ok(());
        }
        let Some(wait) = w.remote.waiting.remove(&reply.seq) else {
            return err(
                MPI_ERR_OTHER,
                format!(
                    "window rank {from} answered one-sided operation {} that this process did \
                     not ask for",
                    reply.seq
                ),
            );
        };
        match (reply.outcome, wait.into) {
            (Ok(data), Some(mut rb)) => {
                let n = data.len().min(rb.bytes().len());
                rb.bytes()[..n].copy_from_slice(&data[..n]);
                rb.finish(n);
            }
            (Ok(_), None) => {}
            (Err((class, why)), _) => {
                let e = MpiError::new(class, format!("at window rank {from}: {why}"));
                w.remote.failed.get_or_insert(e);
            }
        }
        Ok(())
    })
}

fn poll(a: &mut Active) -> MpiResult<bool> {
    match a {
        Active::P2p { req, .. } => Ok(req.test()?.is_some()),
        _ => Ok(true),
    }
}

/// A message with `tag` that has arrived on `wc`, and its sender.
fn take(wc: Handle, tag: c_int) -> MpiResult<Option<(Vec<u8>, c_int)>> {
    with_state(|s| {
        let raw = s.comm(wc)?.comm.raw();
        let Some((st, msg)) = raw.improbe(ibdyn_intercomm::ANY_SOURCE, tag)? else {
            return Ok(None);
        };
        let mut body = vec![0u8; st.count];
        raw.imrecv(&mut body, msg)?.wait()?;
        Ok(Some((body, st.source)))
    })
}

/// Serves and collects until `done`; a rank of `watch` found dead ends the wait with an
/// error.
pub(super) fn wait_serving(
    win: Handle,
    wc: Handle,
    watch: &dyn Fn() -> Vec<usize>,
    mut done: impl FnMut() -> MpiResult<bool>,
) -> MpiResult<()> {
    let mut turns = crate::threads::Turns::default();
    let mut idle = 0u32;
    loop {
        if serve(win, wc)? {
            (turns, idle) = (Default::default(), 0);
        }
        if done()? {
            return Ok(());
        }
        turns.next();
        idle = idle.wrapping_add(1);
        if idle % 512 == 511 {
            for t in watch() {
                let dead = with_state(|s| Ok(s.comm(wc)?.comm.raw().peer_failure(t as i32)))?;
                if let Some(e) = dead {
                    return Err(e.into());
                }
            }
        }
    }
}

/// Waits (serving) until every operation this process started on the window has its
/// answer; the first error an answer reported.
pub(super) fn settle(win: Handle) -> MpiResult<()> {
    answered(win)?;
    failure(win)
}

/// The first error an answer reported since the last call, which the synchronisation that
/// ends the epoch returns once its part with the other processes is done.
pub(super) fn failure(win: Handle) -> MpiResult<()> {
    window::with(win, |w| w.remote.failed.take().map_or(Ok(()), Err))
}

/// Waits (serving) until every operation this process started on the window has its
/// answer.
pub(super) fn answered(win: Handle) -> MpiResult<()> {
    let wc = window::comm_of(win);
    send_queued(win, wc, None)?;
    let watch = || {
        window::with(win, |w| {
            let mut ts: Vec<usize> = w.remote.waiting.values().map(|x| x.target).collect();
            ts.dedup();
            Ok(ts)
        })
        .unwrap_or_default()
    };
    wait_serving(win, wc, &watch, || {
        window::with(win, |w| Ok(w.remote.waiting.is_empty()))
    })
}

/// Whether the window has ranks on other nodes.
pub(super) fn spans_nodes(win: Handle) -> MpiResult<bool> {
    window::with(win, |w| Ok(w.remote.spans_nodes()))
}

/// The end of an epoch of every process (MPI_Win_fence, MPI_Win_free). Each sends its
/// queued requests; a reduce-scatter of the batches each has sent to each (since the window
/// was made) tells every process how many it must have received; each then serves until it
/// has them all and every request of its own has its answer. The reduce-scatter cannot end
/// before every process has entered, so this node's direct operations are done too: one
/// round trip where answers and then a barrier would take two.
pub(super) fn quiesce(win: Handle) -> MpiResult<()> {
    let wc = window::comm_of(win);
    if !spans_nodes(win)? {
        // SAFETY: the window's live communicator.
        return check(unsafe { PMPI_Barrier(wc) }, "MPI_Barrier");
    }
    send_queued(win, wc, None)?;
    let sent = window::with(win, |w| Ok(w.remote.sent.clone()))?;
    let expect = Box::new(std::cell::Cell::new(0i64));
    let mut req = MPI_REQUEST_NULL;
    // SAFETY: `sent` has one count per process of the window's communicator; `expect` is
    // written once the request completes; both outlive it (they are leaked if the wait
    // fails before it completes).
    check(
        unsafe {
            PMPI_Ireduce_scatter_block(
                sent.as_ptr().cast(),
                expect.as_ptr().cast(),
                1,
                MPI_INT64_T,
                MPI_SUM,
                wc,
                &mut req,
            )
        },
        "MPI_Ireduce_scatter_block",
    )?;
    let everyone = || window::with(win, |w| Ok((0..w.peers.len()).collect())).unwrap_or_default();
    let mut counted = false;
    let waited = wait_serving(win, wc, &everyone, || {
        if !counted {
            let mut flag = 0;
            // SAFETY: our request and flag; the status is ignored.
            check(
                unsafe { PMPI_Test(&mut req, &mut flag, std::ptr::null_mut()) },
                "MPI_Test",
            )?;
            counted = flag != 0;
        }
        window::with(win, |w| {
            let r = &w.remote;
            Ok(counted && r.received.get() >= expect.get() && r.waiting.is_empty())
        })
    });
    if waited.is_err() && !counted {
        // The reduce-scatter may still write them.
        std::mem::forget((sent, expect));
    }
    waited?;
    failure(win)
}

/// Opens a passive-target epoch on window rank `t` of another node: the lock request
/// travels with the epoch's first operation on it.
pub(super) fn lock(w: &mut Window, t: usize, exclusive: bool) {
    w.remote.locks.insert(
        t,
        FarLock {
            exclusive,
            asked: false,
        },
    );
}

/// Ends the passive-target epoch on window rank `t` of another node (`None`: every one of
/// an MPI_Win_lock_all epoch): sends the unlock behind the epoch's operations and waits for
/// every answer.
pub(super) fn unlock(win: Handle, t: Option<usize>) -> MpiResult<()> {
    window::with(win, |w| {
        let r = &mut w.remote;
        let ended: Vec<(usize, FarLock)> = match t {
            Some(t) => r.locks.remove(&t).map(|l| (t, l)).into_iter().collect(),
            None => std::mem::take(&mut r.locks).into_iter().collect(),
        };
        for (t, l) in ended {
            r.release(t, l);
        }
        Ok(())
    })?;
    settle(win)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds of the requests queued for window rank `t`.
    fn queued_kinds(r: &Remote, t: usize) -> Vec<Kind> {
        let Some(b) = r.queued.get(&t) else {
            return Vec::new();
        };
        Batch::items(b.as_bytes())
            .expect("batch")
            .into_iter()
            .map(|i| Request::decode(i).expect("request").kind)
            .collect()
    }

    #[test]
    fn a_far_lock_travels_with_the_first_operation_and_not_at_all_without_one() {
        let mut r = Remote::new(vec![false, true]);
        let lock = FarLock {
            exclusive: true,
            asked: false,
        };
        r.locks.insert(1, lock);
        let ended = r.locks.remove(&1).expect("locked");
        r.release(1, ended);
        assert!(queued_kinds(&r, 1).is_empty(), "no operation, no message");
        r.locks.insert(1, lock);
        r.lock_before_access(1, false);
        r.enqueue(1, Kind::Put, vec![(64, 8)], vec![0; 8], None);
        r.lock_before_access(1, false);
        r.enqueue(1, Kind::Get, vec![(64, 8)], Vec::new(), None);
        let ended = r.locks.remove(&1).expect("locked");
        r.release(1, ended);
        let ex = true;
        assert_eq!(
            queued_kinds(&r, 1),
            [
                Kind::Lock { exclusive: ex },
                Kind::Put,
                Kind::Get,
                Kind::Unlock { exclusive: ex }
            ]
        );
    }

    #[test]
    fn lock_all_takes_shared_locks_lazily_unless_the_program_asserts_nocheck() {
        let mut r = Remote::new(vec![false, true, true]);
        r.lock_all(false);
        r.lock_before_access(2, true);
        r.enqueue(2, Kind::Put, vec![(64, 8)], vec![0; 8], None);
        assert_eq!(
            queued_kinds(&r, 2),
            [Kind::Lock { exclusive: false }, Kind::Put]
        );
        assert!(!r.locks.contains_key(&1), "rank 1 was not accessed");
        let mut n = Remote::new(vec![false, true]);
        n.lock_all(true);
        n.lock_before_access(1, true);
        n.enqueue(1, Kind::Put, vec![(64, 8)], vec![0; 8], None);
        assert_eq!(queued_kinds(&n, 1), [Kind::Put]);
        assert!(n.locks.is_empty());
    }
}
