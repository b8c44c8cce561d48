//! MPI_Request objects: an operation in flight (point-to-point or collective), a completed
//! one, or a persistent request with its arguments. Completion delivers staged receives.

use crate::api::buffers::{RecvBuf, SendBuf, Staged};
use crate::consts::Handle;
use crate::error::MpiResult;
use crate::grequest::Greq;
use crate::partitioned::PartSend;
use crate::status::{self, MpiStatus};
use ibdyn::Status;
use ibdyn_collectives::{CollRequest, InterRequest};
use ibdyn_intercomm::Communicator as Raw;
use std::any::Any;

/// A collective request in flight, with what it borrows: the collective state (an `Rc`) and
/// the buffers it owns. `pending` is declared first so it drops first.
pub struct CollOp {
    pending: Pending,
    _keep: Box<dyn Any>,
    deliver: Deliver,
}

/// What a collective request writes to the program's memory once it completes.
pub enum Deliver {
    Nothing,
    /// The first `.1` bytes of a staged receive.
    Staged(Staged, usize),
    /// Blocks of one receive area, each to its own typed buffer (Ialltoallw): (buffer,
    /// offset in the area, length).
    Blocks {
        area: Vec<u8>,
        parts: Vec<(RecvBuf<'static>, usize, usize)>,
    },
}

impl Deliver {
    fn run(self) {
        match self {
            Deliver::Nothing => {}
            // SAFETY: MPI keeps the receive memory valid until completion.
            Deliver::Staged(s, n) => unsafe { s.finish(n) },
            Deliver::Blocks { area, parts } => {
                for (mut rb, at, len) in parts {
                    rb.bytes().copy_from_slice(&area[at..at + len]);
                    rb.finish(usize::MAX);
                }
            }
        }
    }
}

enum Pending {
    Intra(CollRequest<'static, Raw>),
    Inter(InterRequest<'static, Raw>),
    Done,
}

impl CollOp {
    /// # Safety
    /// `req` borrows only from what `keep` holds and from caller memory MPI keeps valid until
    /// completion; the 'static lifetime is that promise.
    pub unsafe fn intra(req: CollRequest<'_, Raw>, keep: Box<dyn Any>, deliver: Deliver) -> CollOp {
        // SAFETY: only the lifetime changes; see the function's contract.
        let req: CollRequest<'static, Raw> = unsafe { std::mem::transmute(req) };
        CollOp {
            pending: Pending::Intra(req),
            _keep: keep,
            deliver,
        }
    }

    /// # Safety
    /// As `intra`.
    pub unsafe fn inter(
        req: InterRequest<'_, Raw>,
        keep: Box<dyn Any>,
        deliver: Deliver,
    ) -> CollOp {
        // SAFETY: only the lifetime changes; see the function's contract.
        let req: InterRequest<'static, Raw> = unsafe { std::mem::transmute(req) };
        CollOp {
            pending: Pending::Inter(req),
            _keep: keep,
            deliver,
        }
    }

    /// Advances the operation; true once it has completed (and delivered its data).
    fn step(&mut self, block: bool) -> MpiResult<bool> {
        let done = match std::mem::replace(&mut self.pending, Pending::Done) {
            Pending::Done => true,
            Pending::Intra(q) if block => q.wait().map(|_| true)?,
            Pending::Inter(q) if block => q.wait().map(|_| true)?,
            Pending::Intra(mut q) => {
                let d = q.test()?;
                if !d {
                    self.pending = Pending::Intra(q);
                }
                d
            }
            Pending::Inter(mut q) => {
                let d = q.test()?;
                if !d {
                    self.pending = Pending::Inter(q);
                }
                d
            }
        };
        if done {
            std::mem::replace(&mut self.deliver, Deliver::Nothing).run();
        }
        Ok(done)
    }
}

/// What a request is doing.
pub enum Active {
    /// A point-to-point operation; `req` borrows `staged`/`packed`, so it is declared first.
    P2p {
        req: ibdyn::Request<'static>,
        staged: Option<Staged>,
        packed: Option<SendBuf<'static>>,
        recv: bool,
    },
    Coll(Box<CollOp>),
    /// A receive and a send that complete as one (MPI_Isendrecv); the receive's status.
    Pair(Box<Pair>),
    /// Complete already (e.g. buffered sends, operations run at once).
    Done(Status),
    /// An operation of the program's own (MPI_Grequest_start).
    Generalized(Box<Greq>),
    /// A partitioned send waiting for MPI_Pready of its partitions.
    Partitioned(Box<PartSend<crate::partitioned::Target>>),
    /// Completed with this error, which a query (MPI_Request_get_status) saw first.
    Failed(crate::error::MpiError),
}

/// How a persistent request starts its operation.
#[derive(Clone, Copy)]
pub enum Mode {
    Send,
    Ssend,
    /// Copied into the attached buffer at each start, so the request completes at once.
    Bsend,
    Recv,
}

/// The arguments of a persistent point-to-point request (MPI_Send_init, MPI_Recv_init).
#[derive(Clone, Copy)]
pub struct Persistent {
    pub mode: Mode,
    pub buf: usize,
    pub count: i64,
    pub ty: Handle,
    pub peer: i32,
    pub tag: i32,
    pub comm: Handle,
}

/// The two halves of an MPI_Isendrecv. The receive's status, once it has one, is kept
/// while the send finishes.
pub struct Pair {
    recv: ReqEntry,
    send: ReqEntry,
    received: Option<Status>,
}

impl Pair {
    pub fn new(recv: Active, send: Active) -> Pair {
        Pair {
            recv: ReqEntry::new(recv, 0),
            send: ReqEntry::new(send, 0),
            received: None,
        }
    }

    /// Advances both halves; the receive's status once both have completed.
    fn step(&mut self, block: bool) -> MpiResult<Option<Status>> {
        if self.received.is_none() {
            self.received = self.recv.step(block)?;
        }
        // A completed half steps as done (its `active` is gone).
        let sent = self.send.step(block)?.is_some();
        Ok(if sent { self.received } else { None })
    }
}

/// How a persistent collective starts: the non-blocking call with the kept arguments, which
/// stores a request and writes its handle.
pub type Restart = dyn Fn(*mut Handle) -> std::os::raw::c_int;

pub struct ReqEntry {
    /// None: an inactive persistent request.
    pub active: Option<Active>,
    /// The communicator's table index, whose error handler the request's errors go to.
    pub comm: usize,
    pub persistent: Option<Persistent>,
    /// A persistent collective's start (MPI_Bcast_init and friends).
    pub restart: Option<std::rc::Rc<Restart>>,
    pub cancelled: bool,
    /// The partitions of a partitioned request (MPI_Psend_init, MPI_Precv_init), else 0.
    pub partitions: usize,
}

impl ReqEntry {
    pub fn new(active: Active, comm: usize) -> ReqEntry {
        ReqEntry {
            active: Some(active),
            comm,
            persistent: None,
            restart: None,
            cancelled: false,
            partitions: 0,
        }
    }

    /// An inactive persistent collective of communicator `comm`.
    pub fn restartable(comm: usize, restart: std::rc::Rc<Restart>) -> ReqEntry {
        ReqEntry {
            active: None,
            comm,
            persistent: None,
            restart: Some(restart),
            cancelled: false,
            partitions: 0,
        }
    }

    /// Whether completion leaves the request in place (inactive) instead of freeing it.
    pub fn is_persistent(&self) -> bool {
        self.persistent.is_some() || self.restart.is_some()
    }

    /// Advances the request; its status once complete. A completed persistent request turns
    /// inactive (an inactive one completes at once with an empty status).
    pub fn step(&mut self, block: bool) -> MpiResult<Option<Status>> {
        let Some(active) = self.active.take() else {
            return Ok(Some(empty()));
        };
        let (st, back) = match active {
            Active::Done(st) => (Some(st), None),
            Active::Failed(e) => return Err(e),
            Active::P2p {
                mut req,
                staged,
                packed,
                recv,
            } => {
                let r = if block {
                    // `wait` consumes (and so drops) the request before the buffers go.
                    req.wait().map(Some)
                } else {
                    match req.test() {
                        Ok(None) => {
                            self.active = Some(Active::P2p {
                                req,
                                staged,
                                packed,
                                recv,
                            });
                            return Ok(None);
                        }
                        r => {
                            drop(req);
                            r
                        }
                    }
                };
                drop(packed);
                let r = match r {
                    Err(ibdyn::CommError::Cancelled) => {
                        self.cancelled = true;
                        Ok(Some(empty()))
                    }
                    r => r,
                };
                let st = r?.expect("a completed request has a status");
                if let Some(s) = staged {
                    // SAFETY: MPI keeps the receive memory valid until completion.
                    unsafe { s.finish(st.count) };
                }
                (Some(st), None)
            }
            Active::Coll(mut c) => {
                if c.step(block)? {
                    (Some(empty()), None)
                } else {
                    (None, Some(Active::Coll(c)))
                }
            }
            Active::Pair(mut p) => match p.step(block)? {
                Some(st) => (Some(st), None),
                None => (None, Some(Active::Pair(p))),
            },
            Active::Partitioned(p) => {
                if block {
                    let (left, n) = (p.left(), p.partitions());
                    self.active = Some(Active::Partitioned(p));
                    return crate::error::err(
                        crate::consts::MPI_ERR_REQUEST,
                        format!(
                            "{left} of the {n} partitions of this partitioned send are not marked \
                             ready (MPI_Pready): it cannot complete"
                        ),
                    );
                }
                (None, Some(Active::Partitioned(p)))
            }
            Active::Generalized(mut g) => {
                if !g.is_done() {
                    if !block {
                        self.active = Some(Active::Generalized(g));
                        return Ok(None);
                    }
                    g.wait_done();
                }
                let st = g.finish()?;
                self.cancelled = status::is_cancelled(&st);
                (Some(from_query(&st)), None)
            }
        };
        self.active = back;
        Ok(st)
    }
}

impl ReqEntry {
    /// Whether the operation in flight is a non-blocking collective.
    pub fn is_coll(&self) -> bool {
        matches!(self.active, Some(Active::Coll(_)))
    }

    /// Whether the operation has completed, without collecting it.
    pub fn poll(&mut self) -> MpiResult<bool> {
        Ok(self.peek()?.is_some())
    }

    /// The status of the operation once it has completed, without collecting it (None while
    /// it is in flight; an empty status for an inactive request or a collective).
    pub fn peek(&mut self) -> MpiResult<Option<Status>> {
        Ok(match &mut self.active {
            None => Some(empty()),
            Some(Active::Done(st)) => Some(*st),
            Some(Active::P2p { req, .. }) => match req.test() {
                Err(ibdyn::CommError::Cancelled) => {
                    // The send was withdrawn: it stays complete, and cancelled, until collected.
                    self.active = Some(Active::Done(empty()));
                    self.cancelled = true;
                    Some(empty())
                }
                Err(e) => {
                    // Completed with an error: the wait that collects it gets it too.
                    let e = crate::error::MpiError::from(e);
                    self.active = Some(Active::Failed(e.clone()));
                    return Err(e);
                }
                r => r?,
            },
            Some(Active::Failed(e)) => return Err(e.clone()),
            Some(Active::Coll(c)) => c.step(false)?.then(empty),
            Some(Active::Partitioned(_)) => None,
            Some(Active::Generalized(g)) => match g.is_done() {
                true => Some(from_query(&g.query()?)),
                false => None,
            },
            Some(Active::Pair(p)) => {
                if p.received.is_none() {
                    p.received = p.recv.step(false)?;
                }
                if p.send.poll()? {
                    p.received
                } else {
                    None
                }
            }
        })
    }

    /// MPI_Cancel: a receive that no message has matched is withdrawn (and completes as
    /// cancelled; one matched already receives its message); a send that no receive has
    /// matched is withdrawn from its receiver, once it answers (an eager send has completed
    /// already); collectives run on; a generalized request's cancel_fn is called.
    pub fn cancel(&mut self) -> MpiResult<()> {
        if let Some(Active::Generalized(g)) = &self.active {
            return g.cancel();
        }
        if let Some(Active::P2p { req, .. }) = &mut self.active {
            // Completes as cancelled if withdrawn (see `step`), else as usual.
            req.cancel();
        }
        Ok(())
    }
}

/// The engine's form of the status a generalized request's query_fn filled.
fn from_query(st: &MpiStatus) -> Status {
    Status {
        source: st.source,
        tag: if st.tag == crate::consts::MPI_ANY_TAG {
            ibdyn::ANY_TAG
        } else {
            st.tag
        },
        count: st.count() as usize,
    }
}

/// The status of an operation that moved nothing.
pub fn empty() -> Status {
    Status {
        source: crate::consts::MPI_ANY_SOURCE,
        tag: ibdyn::ANY_TAG,
        count: 0,
    }
}
