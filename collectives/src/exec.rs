//! Runs a schedule: posts each round's receives and sends, completes them (blocking or by
//! polling), checks every received size, then runs the round's local steps.

use crate::error::{CollError, Result};
use crate::op::Op;
use crate::p2p::{P2pRequest, PointToPoint};
use crate::patience::Patience;
use crate::schedule::{Buf, Local, Region, Schedule};
use crate::scratch::Scratch;
use std::marker::PhantomData;

struct Pending<R> {
    req: Option<R>,
    /// For a receive: (expected bytes, peer).
    expect: Option<(usize, usize)>,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum State {
    Running,
    Done,
    Failed,
}

/// A collective in progress (ibarrier, ibcast, iallreduce, and every blocking collective
/// underneath). It borrows the caller's buffers until it completes or is dropped; dropping
/// it early waits for (or cancels) the transfers in flight.
#[must_use = "a collective request must be waited for or tested to completion"]
pub struct CollRequest<'b, C: PointToPoint + 'b> {
    // Declared first so it drops first: the requests borrow the buffers below.
    pending: Vec<Pending<C::Request<'b>>>,
    comm: &'b C,
    sched: Schedule,
    /// Index of the round whose transfers are posted (or next to run).
    round: usize,
    posted: bool,
    state: State,
    tag: i32,
    op: Option<Op>,
    send_ptr: *const u8,
    recv_ptr: *mut u8,
    /// Heap block addressed only through `scratch_ptr` once the request exists.
    scratch: Scratch,
    scratch_ptr: *mut u8,
    /// The first block of the wrong size: the schedule still runs to its end, so that no
    /// peer is left waiting for a transfer of this rank, and then fails with it.
    size_error: Option<CollError>,
    _bufs: PhantomData<(&'b [u8], &'b mut [u8])>,
}

impl<'b, C: PointToPoint + 'b> CollRequest<'b, C> {
    /// Starts `sched` (peers already communicator ranks) and posts its first round.
    pub(crate) fn start(
        comm: &'b C,
        sched: Schedule,
        tag: i32,
        op: Option<Op>,
        send: &'b [u8],
        recv: &'b mut [u8],
    ) -> Result<Self> {
        sched.validate(send.len(), recv.len())?;
        // Zeroing megabytes of scratch costs as much as a copy; skip it when the schedule
        // writes before it reads (checked only where the zeroing would cost more).
        let mut scratch = if sched.scratch_len >= 16384 && sched.writes_scratch_first() {
            Scratch::for_output(sched.scratch_len)
        } else {
            Scratch::zeroed(sched.scratch_len)
        };
        let scratch_ptr = scratch.as_mut_ptr();
        let mut req = CollRequest {
            pending: Vec::new(),
            comm,
            sched,
            round: 0,
            posted: false,
            state: State::Running,
            tag,
            op,
            send_ptr: send.as_ptr(),
            recv_ptr: recv.as_mut_ptr(),
            scratch,
            scratch_ptr,
            size_error: None,
            _bufs: PhantomData,
        };
        req.advance(false)?;
        Ok(req)
    }

    /// Makes what progress it can without blocking; true once the collective is complete.
    pub fn test(&mut self) -> Result<bool> {
        self.advance(false)
    }

    /// Blocks until the collective completes.
    pub fn wait(mut self) -> Result<()> {
        self.advance(true).map(|_| ())
    }

    fn advance(&mut self, block: bool) -> Result<bool> {
        match self.state {
            State::Done => return Ok(true),
            State::Failed => {
                return Err(CollError::Failed(
                    "an earlier step returned an error".into(),
                ))
            }
            State::Running => {}
        }
        match self.step(block) {
            Ok(done) => Ok(done),
            Err(e) => {
                self.state = State::Failed;
                self.pending.clear();
                Err(e)
            }
        }
    }

    fn step(&mut self, block: bool) -> Result<bool> {
        loop {
            if self.posted {
                if !self.complete(block)? {
                    return Ok(false);
                }
                self.run_local()?;
                self.posted = false;
                self.round += 1;
            }
            if self.round == self.sched.rounds.len() {
                if let Some(e) = self.size_error.take() {
                    return Err(e);
                }
                self.state = State::Done;
                return Ok(true);
            }
            self.post()?;
            self.posted = true;
        }
    }

    /// Completes the posted transfers (all of them when blocking); true when none is left.
    /// A blocking completion polls for a while first (`Patience`).
    fn complete(&mut self, block: bool) -> Result<bool> {
        if block {
            let mut patience = Patience::new();
            while !self.complete_some(false)? {
                if !patience.idle() {
                    return self.complete_some(true);
                }
            }
            return Ok(true);
        }
        self.complete_some(false)
    }

    fn complete_some(&mut self, block: bool) -> Result<bool> {
        let comm = self.comm;
        let mut all = true;
        for p in &mut self.pending {
            let Some(req) = p.req.as_mut() else { continue };
            let got = if block {
                let req = p.req.take().expect("checked above");
                req.wait().map(Some)
            } else {
                let r = req.test();
                if !matches!(r, Ok(None)) {
                    p.req = None;
                }
                r
            };
            let size_error = match (got, p.expect) {
                (Ok(None), _) => {
                    all = false;
                    None
                }
                (Ok(Some(got)), Some((expected, peer))) if got != expected => {
                    Some(CollError::SizeMismatch {
                        peer,
                        expected,
                        got,
                    })
                }
                (Ok(_), _) => None,
                (Err(e), _)
                    if matches!(e, CollError::SizeMismatch { .. }) || comm.is_truncation(&e) =>
                {
                    Some(e)
                }
                (Err(e), _) => return Err(e),
            };
            if let Some(e) = size_error {
                self.size_error.get_or_insert(e);
            }
        }
        if all {
            self.pending.clear();
        }
        Ok(all)
    }

    fn post(&mut self) -> Result<()> {
        let round = &self.sched.rounds[self.round];
        let (comm, tag) = (self.comm, self.tag);
        let mut pending = Vec::with_capacity(round.recvs.len() + round.sends.len());
        for &(peer, r) in &round.recvs {
            // SAFETY: `validate` showed the region lies in its buffer, is not the send buffer,
            // and overlaps no other region used by this round; no earlier round's transfer is
            // in flight and no local step runs until this round's transfers complete.
            let buf = unsafe { self.region_mut(r) };
            pending.push(Pending {
                req: Some(comm.irecv(buf, peer, tag)?),
                expect: Some((r.len, peer)),
            });
        }
        for &(peer, r) in &round.sends {
            // SAFETY: as above; regions sent from are only read while the round is in flight.
            let buf = unsafe { self.region(r) };
            pending.push(Pending {
                req: Some(comm.isend(buf, peer, tag)?),
                expect: None,
            });
        }
        self.pending = pending;
        Ok(())
    }

    fn run_local(&mut self) -> Result<()> {
        let steps = std::mem::take(&mut self.sched.rounds[self.round].local);
        for step in &steps {
            match *step {
                Local::Copy { src, dst } => {
                    // SAFETY: no transfer is in flight; `validate` showed both regions in bounds,
                    // of equal length and disjoint, and `dst` not in the send buffer.
                    unsafe { self.region_mut(dst).copy_from_slice(self.region(src)) };
                }
                Local::Reduce {
                    src,
                    dst,
                    src_first,
                } => {
                    let op = self
                        .op
                        .as_ref()
                        .ok_or_else(|| CollError::Schedule("reduction without an op".into()))?;
                    // SAFETY: as for Copy.
                    let (s, d) = unsafe { (self.region(src), self.region_mut(dst)) };
                    if src_first || op.is_commutative() {
                        // dst = src ∘ dst (the same as dst ∘ src when commutative).
                        op.apply(s, d);
                    } else {
                        let mut t = s.to_vec();
                        op.apply(d, &mut t);
                        d.copy_from_slice(&t);
                    }
                }
            }
        }
        self.sched.rounds[self.round].local = steps;
        Ok(())
    }

    fn base(&self, buf: Buf) -> *mut u8 {
        match buf {
            Buf::Send => self.send_ptr as *mut u8,
            Buf::Recv => self.recv_ptr,
            Buf::Scratch => self.scratch_ptr,
        }
    }

    /// # Safety
    /// `r` must be in bounds (validated) and not written by anything while the slice lives.
    unsafe fn region(&self, r: Region) -> &'b [u8] {
        if r.len == 0 {
            return &[];
        }
        // SAFETY: the caller's contract; the buffers outlive 'b (caller's buffers) or the
        // requests using the slice (scratch, dropped after `pending`).
        unsafe { std::slice::from_raw_parts(self.base(r.buf).add(r.off), r.len) }
    }

    /// # Safety
    /// `r` must be in bounds, outside the send buffer, and used by nothing else while the
    /// slice lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn region_mut(&self, r: Region) -> &'b mut [u8] {
        if r.len == 0 {
            return &mut [];
        }
        // SAFETY: the caller's contract, as in `region`.
        unsafe { std::slice::from_raw_parts_mut(self.base(r.buf).add(r.off), r.len) }
    }
}

impl<C: PointToPoint> Drop for CollRequest<'_, C> {
    fn drop(&mut self) {
        // Transfers in flight end (their own Drop waits or cancels) before the scratch goes.
        self.pending.clear();
        let _ = self.scratch.len();
    }
}
