//! One-sided operations on targets of another node. Their memory cannot be reached by load
//! and store or cross-memory attach, so the origin sends the operations as messages
//! (`crate::rma_wire`) on the window's private communicator: those on one target are queued
//! and travel together at the end of the epoch (or once 64 KiB are queued). The target
//! applies them to its own memory and answers them together. Nothing waits at the call: an
//! operation completes at the origin's next synchronisation, which waits for every answer.
//! Whenever a process is in a synchronisation of the window (a fence,
//! post/start/complete/wait/test, free) it also serves the requests that have reached it,
//! so an access epoch closed with MPI_Win_fence or MPI_Win_complete always ends: every
//! process of the epoch is then in such a call. Passive-target synchronisation needs the
//! target to act without any call and is refused for these targets (`far_lock`).

use super::buffers::RecvBuf;
use super::p2p::send_on;
use super::selfcall::*;
use crate::consts::*;
use crate::derived::{self, Ty};
use crate::error::{err, MpiError, MpiResult};
use crate::request::{Active, Mode};
use crate::rma_wire::{Batch, Kind, Reduce, Reply, Request, TAG_REPLY, TAG_REQUEST};
use crate::state::with_state;
use crate::window::{self, Window};
use std::collections::BTreeMap;
use std::os::raw::c_int;

/// What a window knows of its ranks on other nodes and of its operations on them.
#[derive(Default)]
pub(crate) struct Remote {
    /// Per window rank: on another node than this process.
    far: Vec<bool>,
    me: usize,
    seq: u64,
    /// Requests not answered yet, by number.
    waiting: BTreeMap<u64, Waiting>,
    /// Requests not sent yet, by target: an epoch's operations on one target travel together.
    queued: BTreeMap<usize, Batch>,
    /// Batches of requests sent to each window rank since the window was made.
    sent: Vec<i64>,
    /// Batches of requests received since the window was made.
    received: i64,
    /// Sends of requests and replies not known complete yet (their buffers live here).
    sending: Vec<Active>,
    /// The first error an answer reported, for the next synchronisation to return.
    failed: Option<MpiError>,
}

/// A request waiting for its answer: where the answer's data goes.
struct Waiting {
    target: usize,
    into: Option<RecvBuf<'static>>,
}

impl Remote {
    pub fn new(far: Vec<bool>, me: usize) -> Remote {
        Remote {
            sent: vec![0; far.len()],
            far,
            me,
            ..Remote::default()
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
            MPI_DATATYPE_NULL
        },
        elem: ty.elem,
    })
}

/// Bytes of requests to one target that are sent without waiting for the epoch's end.
const BATCH_BYTES: usize = 64 << 10;

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
        let r = &mut w.remote;
        r.seq += 1;
        let req = Request {
            seq: r.seq,
            kind,
            blocks,
            data,
        };
        let q = r.queued.entry(t).or_default();
        q.push(&req.encode());
        r.waiting.insert(req.seq, Waiting { target: t, into });
        Ok(q.size() >= BATCH_BYTES)
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

/// Serves the requests that have arrived, takes in the answers that have, and lets go of
/// finished sends. Whether anything arrived.
pub(crate) fn serve(win: Handle, wc: Handle) -> MpiResult<bool> {
    let mut any = false;
    while let Some((body, from)) = take(wc, TAG_REQUEST)? {
        any = true;
        window::with(win, |w| {
            w.remote.received += 1;
            Ok(())
        })?;
        let mut answers = Batch::default();
        for item in Batch::items(&body)? {
            // A request that does not parse has no number to answer to.
            let req = Request::decode(item)?;
            let outcome = window::with(win, |w| Ok(apply(w, &req)))?;
            let reply = Reply {
                seq: req.seq,
                outcome,
            };
            answers.push(&reply.encode());
            if answers.size() >= BATCH_BYTES {
                send(
                    win,
                    wc,
                    from as usize,
                    TAG_REPLY,
                    std::mem::take(&mut answers),
                )?;
            }
        }
        if answers.size() > 0 {
            send(win, wc, from as usize, TAG_REPLY, answers)?;
        }
    }
    while let Some((body, from)) = take(wc, TAG_REPLY)? {
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
        let Some(st) = raw.iprobe(ibdyn_intercomm::ANY_SOURCE, tag)? else {
            return Ok(None);
        };
        let (body, st) = raw.recv_vec(st.source, tag)?;
        Ok(Some((body, st.source)))
    })
}

/// Applies `req` to this process's window memory: its answer.
fn apply(w: &Window, req: &Request) -> Result<Vec<u8>, (i32, String)> {
    let fail = |e: MpiError| (e.class, e.message);
    for &(a, l) in &req.blocks {
        if !w.holds(a, l) {
            return Err((
                MPI_ERR_RMA_RANGE,
                format!(
                    "bytes {a:#x}..{:#x} are not in this process's window memory",
                    a.saturating_add(l)
                ),
            ));
        }
    }
    let span = req.span() as usize;
    let me = w.remote.me;
    match req.kind {
        Kind::Put => {
            check_len(req.data.len(), span)?;
            scatter(&req.blocks, &req.data);
            Ok(Vec::new())
        }
        Kind::Get => Ok(gather(&req.blocks, span)),
        Kind::Accumulate { reduce, fetch } => w
            .atomically(me, || {
                let mut cur = gather(&req.blocks, span);
                let old = if fetch { cur.clone() } else { Vec::new() };
                if reduce.op != MPI_NO_OP {
                    if req.data.len() != span {
                        return err(
                            MPI_ERR_TYPE,
                            format!(
                                "{} bytes of data for {span} bytes of target",
                                req.data.len()
                            ),
                        );
                    }
                    combine(reduce, &req.data, &mut cur)?;
                    scatter(&req.blocks, &cur);
                }
                Ok(old)
            })
            .map_err(fail),
        Kind::CompareAndSwap => {
            check_len(req.data.len(), 2 * span)?;
            let (new, compare) = req.data.split_at(span);
            w.atomically(me, || {
                let cur = gather(&req.blocks, span);
                if cur == compare {
                    scatter(&req.blocks, new);
                }
                Ok(cur)
            })
            .map_err(fail)
        }
    }
}

fn check_len(got: usize, want: usize) -> Result<(), (i32, String)> {
    if got != want {
        return Err((
            MPI_ERR_TYPE,
            format!("{got} bytes of data for {want} bytes of target: the type signatures differ"),
        ));
    }
    Ok(())
}

fn combine(r: Reduce, input: &[u8], inout: &mut [u8]) -> MpiResult<()> {
    match r.op {
        MPI_REPLACE => inout.copy_from_slice(input),
        MPI_NO_OP => {}
        op if r.ty != MPI_DATATYPE_NULL => {
            let ty = derived::resolve(r.ty, true)?;
            crate::ops::reduction(op, r.ty, &ty)?.apply(input, inout);
        }
        op => crate::ops::elementwise(op, MPI_DATATYPE_NULL, r.elem)?.apply(input, inout),
    }
    Ok(())
}

fn gather(blocks: &[(u64, u64)], span: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(span);
    for &(a, l) in blocks {
        // SAFETY: `apply` checked every block lies in this process's window memory.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(a as *const u8, l as usize) });
    }
    out
}

fn scatter(blocks: &[(u64, u64)], data: &[u8]) {
    let mut at = 0;
    for &(a, l) in blocks {
        let l = l as usize;
        // SAFETY: `apply` checked every block lies in this process's window memory, and the
        // caller that `data` holds the blocks' bytes; MPI makes conflicting accesses the
        // program's error, not a data race of ours to prevent.
        unsafe { std::ptr::copy(data[at..at + l].as_ptr(), a as *mut u8, l) };
        at += l;
    }
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
        turns.idle();
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
            Ok(counted && r.received >= expect.get() && r.waiting.is_empty())
        })
    });
    if waited.is_err() && !counted {
        // The reduce-scatter may still write them.
        std::mem::forget((sent, expect));
    }
    waited?;
    failure(win)
}

/// The error of a passive-target call on window rank `t` of another node.
pub(super) fn far_lock(t: usize) -> MpiError {
    MpiError::new(
        MPI_ERR_UNSUPPORTED_OPERATION,
        format!(
            "window rank {t} runs on another node, and ibdyn moves one-sided data across nodes \
             only in active-target epochs (MPI_Win_fence, or MPI_Win_post/start/complete/wait), \
             where the target takes part; use those, or make the window on \
             MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)'s communicator"
        ),
    )
}
