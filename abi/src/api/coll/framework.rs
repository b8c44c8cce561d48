//! What every collective call shares: its communicator's collective state, 'static views of
//! the buffers a request keeps, and running (blocking) or storing (non-blocking) the request.

use crate::api::buffers::RecvBuf;
use crate::api::out;
use crate::consts::*;
use crate::error::MpiResult;
use crate::request::{empty, Active, CollOp, Deliver, ReqEntry};
use crate::state::State;
use ibdyn_collectives::{CollRequest, Collectives, InterCollectives, InterRequest};
use ibdyn_intercomm::Communicator as Raw;
use std::rc::Rc;

/// The collective state of a communicator.
pub enum Colls {
    Intra(Rc<Collectives<Raw>>),
    Inter(Rc<InterCollectives<Raw>>),
}

/// One collective call: its communicator and, for a non-blocking call, where its request
/// goes (null for a blocking call).
#[derive(Clone, Copy)]
pub struct Call {
    pub comm: Handle,
    pub request: *mut Handle,
}

impl Call {
    pub fn blocking(&self) -> bool {
        self.request.is_null()
    }
}

/// The collective state of `call`'s communicator with its rank, size and remote size.
pub fn colls(s: &State, call: &Call) -> MpiResult<(Colls, usize, usize, usize)> {
    let raw = s.comm(call.comm)?.comm.raw();
    let (rank, size) = (raw.rank() as usize, raw.size() as usize);
    if raw.is_inter() {
        let rs = raw.remote_size() as usize;
        Ok((
            Colls::Inter(ibdyn_collectives::inter_collectives_of(raw)?),
            rank,
            size,
            rs,
        ))
    } else {
        Ok((
            Colls::Intra(ibdyn_collectives::collectives_of(raw)?),
            rank,
            size,
            size,
        ))
    }
}

/// A 'static view of bytes a request keeps alive (see `store_intra`).
///
/// # Safety
/// The bytes stay valid and in place until the request that uses the view is gone.
pub unsafe fn fix<'a, T: ?Sized>(r: &T) -> &'a T {
    // SAFETY: the caller's contract.
    unsafe { &*(r as *const T) }
}

/// As `fix`, mutable.
///
/// # Safety
/// As `fix`; nothing else touches the bytes meanwhile.
pub unsafe fn fix_mut<'a>(r: &mut [u8]) -> &'a mut [u8] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(r.as_mut_ptr(), r.len()) }
}

/// Stores a started intracommunicator collective as a request; `keep` owns what it borrows
/// (the collective state, packed buffers), `recv` is delivered at completion.
pub fn store_intra<K: 'static>(
    s: &mut State,
    call: &Call,
    req: CollRequest<'_, Raw>,
    keep: K,
    recv: RecvBuf<'static>,
) -> MpiResult<()> {
    let (deliver, scratch) = split(recv);
    // SAFETY: `req` borrows the collective state and buffers `keep` owns and caller memory
    // MPI keeps valid until completion; CollOp drops `req` first.
    let op = unsafe { CollOp::intra(req, Box::new((keep, scratch)), deliver) };
    store(s, call, Active::Coll(Box::new(op)))
}

/// As `store_intra`, for an intercommunicator collective.
pub fn store_inter<K: 'static>(
    s: &mut State,
    call: &Call,
    req: InterRequest<'_, Raw>,
    keep: K,
    recv: RecvBuf<'static>,
) -> MpiResult<()> {
    let (deliver, scratch) = split(recv);
    // SAFETY: as in store_intra.
    let op = unsafe { CollOp::inter(req, Box::new((keep, scratch)), deliver) };
    store(s, call, Active::Coll(Box::new(op)))
}

/// Stores a started collective whose receive area `area` (which `req` writes) goes out in
/// blocks to typed buffers at completion (`Deliver::Blocks`).
pub fn store_blocks<K: 'static>(
    s: &mut State,
    call: &Call,
    req: Started<'_>,
    keep: K,
    area: Vec<u8>,
    parts: Vec<(RecvBuf<'static>, usize, usize)>,
) -> MpiResult<()> {
    let keep = Box::new(keep);
    let deliver = Deliver::Blocks { area, parts };
    // SAFETY: as in store_intra; `area`'s heap block does not move with the Vec.
    let op = unsafe {
        match req {
            Started::Intra(q) => CollOp::intra(q, keep, deliver),
            Started::Inter(q) => CollOp::inter(q, keep, deliver),
        }
    };
    store(s, call, Active::Coll(Box::new(op)))
}

/// A started collective of either kind of communicator.
pub enum Started<'a> {
    Intra(CollRequest<'a, Raw>),
    Inter(InterRequest<'a, Raw>),
}

/// What a request keeps of its receive buffer: staging to deliver, or scratch to free.
fn split(recv: RecvBuf<'static>) -> (Deliver, Option<Vec<u8>>) {
    match recv {
        RecvBuf::Staged(st) => (Deliver::Staged(st, usize::MAX), None),
        RecvBuf::Scratch(v) => (Deliver::Nothing, Some(v)),
        RecvBuf::Direct(_) => (Deliver::Nothing, None),
    }
}

/// A non-blocking call whose operation has completed already: its request is complete.
pub fn done(s: &mut State, call: &Call) -> MpiResult<()> {
    if call.blocking() {
        return Ok(());
    }
    store(s, call, Active::Done(empty()))
}

fn store(s: &mut State, call: &Call, a: Active) -> MpiResult<()> {
    let ci = s.comm_index(call.comm)?;
    let h = s.add_req(ReqEntry::new(a, ci));
    // SAFETY: the caller's output argument.
    unsafe { out(call.request, h, "request") }
}

/// Runs a collective: blocking → `$cl.$blocking(args)` then delivers `$recv` (at
/// MPI_THREAD_MULTIPLE, or while non-blocking collectives are in flight, which its waits move
/// on, once the state is released, keeping `$keep`: `state::after_state`);
/// otherwise `$cl.$start(args)` stored as a request keeping `$keep`.
macro_rules! run {
    ($s:expr, $call:expr, $colls:ident, $kind:ident, $keep:expr, $recv:expr,
     $blocking:ident / $start:ident ($($arg:expr),* $(,)?)) => {{
        if $call.blocking() && ($crate::threads::multiple() || $crate::in_flight::maybe()) {
            let job = move || {
                let _keep = $keep;
                $colls.$blocking($($arg),*)?;
                $recv.finish(usize::MAX);
                Ok(())
            };
            // SAFETY: the job owns what it keeps and borrows the caller's buffers, valid
            // until the blocking call returns, which is after `with_state` runs the job.
            unsafe { $crate::state::after_state(Box::new(job)) };
            Ok(())
        } else if $call.blocking() {
            $colls.$blocking($($arg),*)?;
            $recv.finish(usize::MAX);
            Ok(())
        } else {
            let req = $colls.$start($($arg),*)?;
            $crate::api::coll::framework::$kind($s, &$call, req, $keep, $recv)
        }
    }};
}
pub(crate) use run;
