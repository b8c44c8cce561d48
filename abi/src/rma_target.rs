//! The target side of one-sided operations from origins on other nodes: a service of the
//! engine (`ibdyn_intercomm::Service`) on the window's private communicator, so the requests
//! are applied to this process's memory in whatever MPI call it is in when they arrive (a
//! receive, a collective, a synchronisation of any window), not only in calls of the window.
//! That makes passive-target epochs (MPI_Win_lock) work on such targets: the origin's
//! MPI_Win_unlock ends as soon as the target makes any MPI call that waits or tests. A lock
//! request takes the target's lock line in its node's segment, which the origins of the
//! target's node take directly; while it is held, that origin's later requests wait here.

use crate::consts::*;
use crate::derived;
use crate::error::{err, MpiError, MpiResult};
use crate::rma_wire::{Batch, Kind, Reduce, Reply, Request, BATCH_BYTES, TAG_REPLY};
use crate::window::Exposed;
use ibdyn_intercomm::{Answer, Service};
use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// The service of one window.
pub(crate) struct Target {
    exposed: Rc<Exposed>,
    /// Batches of requests received since the window was made (the fence counts them).
    received: Rc<Cell<i64>>,
    /// Origins holding this process's lock, and whether exclusively.
    holders: BTreeMap<i32, bool>,
    /// Per origin, its requests from a lock not granted yet on, in order.
    waiting: BTreeMap<i32, VecDeque<Request>>,
}

impl Target {
    pub fn new(exposed: Rc<Exposed>, received: Rc<Cell<i64>>) -> Target {
        Target {
            exposed,
            received,
            holders: BTreeMap::new(),
            waiting: BTreeMap::new(),
        }
    }

    /// Applies `reqs` from `from` in order until a lock cannot be taken (the rest then
    /// waits); the replies.
    fn run(&mut self, from: i32, mut reqs: VecDeque<Request>, out: &mut Replies) {
        while let Some(req) = reqs.pop_front() {
            let outcome = match req.kind {
                Kind::Lock { exclusive } => match self.lock(from, exclusive) {
                    Some(outcome) => outcome,
                    None => {
                        reqs.push_front(req);
                        self.waiting.insert(from, reqs);
                        return;
                    }
                },
                Kind::Unlock { exclusive } => self.unlock(from, exclusive),
                _ => apply(&self.exposed, &req),
            };
            out.push(
                from,
                Reply {
                    seq: req.seq,
                    outcome,
                },
            );
        }
    }

    /// Takes this process's lock for origin `from`; `None` while it is held otherwise.
    fn lock(&mut self, from: i32, exclusive: bool) -> Option<Outcome> {
        if self.holders.contains_key(&from) {
            return Some(sync_error("this process is locked by that origin already"));
        }
        if !self.exposed.try_lock_waiting(self.exposed.me, exclusive) {
            return None;
        }
        self.holders.insert(from, exclusive);
        Some(Ok(Vec::new()))
    }

    /// Gives back the lock origin `from` holds.
    fn unlock(&mut self, from: i32, exclusive: bool) -> Outcome {
        match self.holders.get(&from) {
            Some(&held) if held == exclusive => {
                self.holders.remove(&from);
                self.exposed.unlock(self.exposed.me, exclusive);
                Ok(Vec::new())
            }
            Some(_) => sync_error("an unlock of another lock type than the lock"),
            None => sync_error("an unlock of a lock that origin does not hold"),
        }
    }
}

/// What a request's reply carries: its data, or the error class and why.
type Outcome = Result<Vec<u8>, (i32, String)>;

fn sync_error(why: &str) -> Outcome {
    Err((MPI_ERR_RMA_SYNC, why.to_string()))
}

impl Service for Target {
    fn handle(&mut self, from: i32, body: &[u8]) -> Vec<Answer> {
        self.received.set(self.received.get() + 1);
        let mut out = Replies::default();
        let parsed =
            Batch::items(body).and_then(|items| items.into_iter().map(Request::decode).collect());
        let reqs: VecDeque<Request> = match parsed {
            Ok(reqs) => reqs,
            Err(e) => {
                // A request that does not parse has no number to answer to: number 0 fails
                // every operation of that origin on this process.
                out.push(
                    from,
                    Reply {
                        seq: 0,
                        outcome: Err((e.class, e.message)),
                    },
                );
                return out.finish();
            }
        };
        match self.waiting.get_mut(&from) {
            Some(queue) => queue.extend(reqs),
            None => self.run(from, reqs, &mut out),
        }
        out.finish()
    }

    fn deferred(&self) -> bool {
        !self.waiting.is_empty()
    }

    fn retry(&mut self) -> Vec<Answer> {
        let mut out = Replies::default();
        for (from, reqs) in std::mem::take(&mut self.waiting) {
            self.run(from, reqs, &mut out);
        }
        out.finish()
    }

    /// A dead origin's lock goes, so this node's lockers and the other origins are not
    /// held out by a process that will never unlock; its waiting requests go with it.
    fn gone(&mut self, rank: i32) -> Vec<Answer> {
        self.waiting.remove(&rank);
        if let Some(exclusive) = self.holders.remove(&rank) {
            self.exposed.unlock(self.exposed.me, exclusive);
        }
        Vec::new()
    }
}

/// Replies to send, batched per origin.
#[derive(Default)]
struct Replies {
    open: BTreeMap<i32, Batch>,
    done: Vec<Answer>,
}

impl Replies {
    fn push(&mut self, to: i32, reply: Reply) {
        let b = self.open.entry(to).or_default();
        b.push(&reply.encode());
        if b.size() >= BATCH_BYTES {
            let full = self.open.remove(&to).expect("just filled");
            self.done.push(answer(to, full));
        }
    }

    fn finish(mut self) -> Vec<Answer> {
        for (to, b) in std::mem::take(&mut self.open) {
            self.done.push(answer(to, b));
        }
        self.done
    }
}

fn answer(to: i32, b: Batch) -> Answer {
    Answer {
        to,
        tag: TAG_REPLY,
        body: b.into_bytes(),
    }
}

/// Applies `req` to this process's window memory: its answer.
fn apply(w: &Exposed, req: &Request) -> Outcome {
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
    let me = w.me;
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
        // `Target::run` takes and gives back locks itself.
        Kind::Lock { .. } | Kind::Unlock { .. } => Ok(Vec::new()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::{lock_bytes, Segment};

    /// A target over `mem` whose lock lines live in a fresh segment (two ranks' lines: this
    /// process is rank 0).
    fn target(mem: &mut [u8]) -> (Target, Rc<Exposed>) {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = format!("/dev/shm/ibdyn-target-test-{}-{n}", std::process::id());
        let seg = Segment::map(&path, lock_bytes(2), true).expect("segment");
        std::fs::remove_file(&path).expect("unlink");
        let base = mem.as_mut_ptr() as usize;
        let pids = vec![Some(std::process::id()), Some(ended_pid())];
        let exposed = Rc::new(Exposed::new(
            seg,
            0,
            MPI_WIN_FLAVOR_CREATE,
            base,
            mem.len(),
            pids,
        ));
        let t = Target::new(exposed.clone(), Rc::new(Cell::new(0)));
        (t, exposed)
    }

    /// The id of a process that has ended (a child, reaped), for rank 1 of the test window.
    fn ended_pid() -> u32 {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("run true");
        let pid = child.id();
        child.wait().expect("reap true");
        pid
    }

    fn req(seq: u64, kind: Kind, blocks: Vec<(u64, u64)>, data: Vec<u8>) -> Request {
        Request {
            seq,
            kind,
            blocks,
            data,
        }
    }

    fn batch(reqs: &[Request]) -> Vec<u8> {
        let mut b = Batch::default();
        reqs.iter().for_each(|r| b.push(&r.encode()));
        b.into_bytes()
    }

    /// The replies in `answers`, as (to, seq, outcome is ok).
    fn replies(answers: &[Answer]) -> Vec<(i32, u64, bool)> {
        let mut out = Vec::new();
        for a in answers {
            assert_eq!(a.tag, TAG_REPLY);
            for item in Batch::items(&a.body).expect("batch") {
                let r = Reply::decode(item).expect("reply");
                out.push((a.to, r.seq, r.outcome.is_ok()));
            }
        }
        out
    }

    /// The replies of `checks` holder checks' worth of retries (each check is one look in
    /// `HOLDER_CHECK_EVERY`).
    fn retried(t: &mut Target, checks: u32) -> Vec<(i32, u64, bool)> {
        (0..checks * crate::window::HOLDER_CHECK_EVERY)
            .flat_map(|_| replies(&t.retry()))
            .collect()
    }

    #[test]
    fn requests_behind_a_held_lock_wait_in_order_until_it_is_free() {
        let mut mem = vec![0u8; 16];
        let at = mem.as_ptr() as u64;
        let (mut t, exposed) = target(&mut mem);
        // A process of this node holds the target's lock.
        assert!(exposed.try_lock(0, true));
        let first = [
            req(1, Kind::Lock { exclusive: true }, vec![], vec![]),
            req(2, Kind::Put, vec![(at, 4)], vec![1, 2, 3, 4]),
        ];
        assert!(replies(&t.handle(3, &batch(&first))).is_empty());
        assert!(t.deferred());
        let second = [
            req(3, Kind::Put, vec![(at, 2)], vec![9, 9]),
            req(4, Kind::Unlock { exclusive: true }, vec![], vec![]),
        ];
        assert!(replies(&t.handle(3, &batch(&second))).is_empty());
        // Another origin's get outside any lock is answered meanwhile.
        let other = [req(7, Kind::Get, vec![(at, 4)], vec![])];
        assert_eq!(replies(&t.handle(5, &batch(&other))), vec![(5, 7, true)]);
        assert!(replies(&t.retry()).is_empty());
        assert_eq!(mem[..4], [0, 0, 0, 0]);
        exposed.unlock(0, true);
        let got = replies(&t.retry());
        assert_eq!(got, (1..=4).map(|s| (3, s, true)).collect::<Vec<_>>());
        assert_eq!(mem[..4], [9, 9, 3, 4]);
        assert!(!t.deferred());
        // The far origin gave the lock back.
        assert!(exposed.try_lock(0, true));
    }

    #[test]
    fn a_far_exclusive_lock_keeps_this_node_out_until_its_unlock() {
        let mut mem = vec![0u8; 8];
        let (mut t, exposed) = target(&mut mem);
        let lock = [req(1, Kind::Lock { exclusive: true }, vec![], vec![])];
        assert_eq!(replies(&t.handle(1, &batch(&lock))), vec![(1, 1, true)]);
        assert!(!exposed.try_lock(0, false));
        // A second origin's shared lock waits too.
        let shared = [req(1, Kind::Lock { exclusive: false }, vec![], vec![])];
        assert!(replies(&t.handle(2, &batch(&shared))).is_empty());
        let unlock = [req(2, Kind::Unlock { exclusive: true }, vec![], vec![])];
        assert_eq!(replies(&t.handle(1, &batch(&unlock))), vec![(1, 2, true)]);
        assert_eq!(replies(&t.retry()), vec![(2, 1, true)]);
        assert!(exposed.try_lock(0, false), "shared with the far holder");
    }

    #[test]
    fn a_dead_origins_lock_goes_and_the_next_waiting_origin_gets_it() {
        let mut mem = vec![0u8; 8];
        let at = mem.as_ptr() as u64;
        let (mut t, exposed) = target(&mut mem);
        let lock = [req(1, Kind::Lock { exclusive: true }, vec![], vec![])];
        assert_eq!(replies(&t.handle(1, &batch(&lock))), vec![(1, 1, true)]);
        let behind = [
            req(1, Kind::Lock { exclusive: true }, vec![], vec![]),
            req(2, Kind::Put, vec![(at, 1)], vec![7]),
        ];
        assert!(replies(&t.handle(2, &batch(&behind))).is_empty());
        // Origin 3 dies waiting: its requests go without answer.
        assert!(replies(&t.handle(3, &batch(&lock))).is_empty());
        assert!(t.gone(3).is_empty());
        assert!(t.gone(1).is_empty());
        assert_eq!(replies(&t.retry()), vec![(2, 1, true), (2, 2, true)]);
        assert_eq!(mem[0], 7);
        assert!(!t.deferred());
        assert!(!exposed.try_lock(0, false), "origin 2 holds it now");
        assert!(t.gone(2).is_empty());
        assert!(exposed.try_lock(0, true), "free once every holder is gone");
    }

    #[test]
    fn a_far_origin_gets_the_lock_of_a_holder_of_this_node_that_ended() {
        let mut mem = vec![0u8; 8];
        let (mut t, exposed) = target(&mut mem);
        // Rank 1, of this node, took the lock and ended without unlocking.
        exposed.hold_for(0, 1);
        let lock = [req(1, Kind::Lock { exclusive: false }, vec![], vec![])];
        assert!(replies(&t.handle(4, &batch(&lock))).is_empty());
        assert_eq!(retried(&mut t, 1), vec![(4, 1, true)]);
        // A holder that runs (this process, for another origin) is never taken for ended.
        let unlock = [req(2, Kind::Unlock { exclusive: false }, vec![], vec![])];
        assert_eq!(replies(&t.handle(4, &batch(&unlock))), vec![(4, 2, true)]);
        exposed.hold_for(0, 0);
        assert!(replies(&t.handle(5, &batch(&lock))).is_empty());
        assert!(retried(&mut t, 2).is_empty());
    }

    #[test]
    fn shared_holders_of_this_node_that_ended_give_the_lock_back_one_count_each() {
        let mut mem = vec![0u8; 8];
        let (mut t, exposed) = target(&mut mem);
        // Rank 1, of this node, ended holding the lock shared; this process holds it shared
        // too, for itself.
        exposed.hold_shared_for(0, 1);
        assert!(exposed.try_lock(0, false));
        exposed.mark_shared(0, true);
        let lock = [req(1, Kind::Lock { exclusive: true }, vec![], vec![])];
        assert!(replies(&t.handle(4, &batch(&lock))).is_empty());
        assert!(retried(&mut t, 2).is_empty(), "this process still holds it");
        exposed.mark_shared(0, false);
        exposed.unlock(0, false);
        assert_eq!(retried(&mut t, 1), vec![(4, 1, true)]);
        // Rank 1's count went once: the far origin's exclusive lock is the only holder.
        let unlock = [req(2, Kind::Unlock { exclusive: true }, vec![], vec![])];
        assert_eq!(replies(&t.handle(4, &batch(&unlock))), vec![(4, 2, true)]);
        assert!(exposed.try_lock(0, true), "free, the count not below zero");
    }

    #[test]
    fn an_accumulate_mutex_whose_holder_ended_is_freed_and_a_live_ones_is_kept() {
        let mut mem = vec![0u8; 8];
        let (_t, exposed) = target(&mut mem);
        exposed.hold_accumulate_for(0, 0);
        assert!(
            !exposed.free_accumulate_if_holder_ended(0),
            "this process runs"
        );
        exposed.hold_accumulate_for(0, 1);
        assert!(exposed.free_accumulate_if_holder_ended(0));
        assert_eq!(exposed.atomically(0, || Ok(7)).expect("free"), 7);
    }

    #[test]
    fn wrong_unlocks_and_unreadable_batches_are_answered_with_errors() {
        let mut mem = vec![0u8; 8];
        let (mut t, _exposed) = target(&mut mem);
        let unlock = [req(5, Kind::Unlock { exclusive: false }, vec![], vec![])];
        assert_eq!(replies(&t.handle(1, &batch(&unlock))), vec![(1, 5, false)]);
        let lock = [req(6, Kind::Lock { exclusive: false }, vec![], vec![])];
        assert_eq!(replies(&t.handle(1, &batch(&lock))), vec![(1, 6, true)]);
        let wrong = [req(7, Kind::Unlock { exclusive: true }, vec![], vec![])];
        assert_eq!(replies(&t.handle(1, &batch(&wrong))), vec![(1, 7, false)]);
        let mut cut = batch(&lock);
        cut.truncate(cut.len() - 1);
        assert_eq!(replies(&t.handle(1, &cut)), vec![(1, 0, false)]);
        let outside = [req(8, Kind::Put, vec![(1, 4)], vec![0; 4])];
        assert_eq!(replies(&t.handle(1, &batch(&outside))), vec![(1, 8, false)]);
    }
}
