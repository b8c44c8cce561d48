//! A non-blocking collective in flight, on either kind of communicator.

use crate::communicator::EngineComm;
use crate::Result;
use ibdyn_collectives::{CollRequest, Collectives, InterCollectives, InterRequest};
use std::rc::Rc;

/// A non-blocking collective in flight (MPI_Request of MPI_Ibarrier, MPI_Iallreduce, ...).
/// It holds the communicator's collective state, so it stays valid however the
/// communicator handle is used meanwhile.
#[must_use = "a collective request must be waited for"]
pub struct CollectiveRequest<'b> {
    inner: Inflight<'b>,
    /// This rank's arguments were refused: the request runs an empty stand-in (so the other
    /// ranks are not left waiting) and then reports this error.
    refused: Option<crate::CommError>,
}

// Field order matters: each request borrows the state behind its Rc and drops first.
enum Inflight<'b> {
    Intra {
        req: CollRequest<'b, EngineComm>,
        _state: Rc<Collectives<EngineComm>>,
    },
    Inter {
        req: InterRequest<'b, EngineComm>,
        _state: Rc<InterCollectives<EngineComm>>,
    },
}

impl CollectiveRequest<'_> {
    /// True once complete; an error once complete if it failed (MPI_Test).
    pub fn test(&mut self) -> Result<bool> {
        let done = match &mut self.inner {
            Inflight::Intra { req, .. } => req.test(),
            Inflight::Inter { req, .. } => req.test(),
        };
        match (self.refused.take(), done) {
            (Some(e), Ok(true) | Err(_)) => Err(e),
            (refused, done) => {
                self.refused = refused;
                Ok(done?)
            }
        }
    }

    /// Blocks until complete (MPI_Wait).
    pub fn wait(self) -> Result<()> {
        let done = match self.inner {
            Inflight::Intra { req, .. } => req.wait(),
            Inflight::Inter { req, .. } => req.wait(),
        };
        match self.refused {
            Some(e) => Err(e),
            None => Ok(done?),
        }
    }

    /// The request of an empty stand-in run for arguments refused with `e`.
    /// If even the stand-in cannot start, the refusal is the error to report.
    pub(crate) fn refused(started: Result<Self>, e: crate::CommError) -> Result<Self> {
        match started {
            Ok(mut req) => {
                req.refused = Some(e);
                Ok(req)
            }
            Err(_) => Err(e),
        }
    }
}

/// Starts a non-blocking collective `f` on intracommunicator collective state `state`.
pub(crate) fn start_intra<'b>(
    state: Rc<Collectives<EngineComm>>,
    f: impl FnOnce(
        &'b Collectives<EngineComm>,
    ) -> ibdyn_collectives::Result<CollRequest<'b, EngineComm>>,
) -> Result<CollectiveRequest<'b>> {
    // SAFETY: `c` lives inside the Rc allocation `state`, which the returned request keeps
    // alive (and drops after the borrowing request); Rc contents never move.
    let c: &'b Collectives<EngineComm> = unsafe { &*Rc::as_ptr(&state) };
    let req = f(c)?;
    Ok(CollectiveRequest {
        inner: Inflight::Intra { req, _state: state },
        refused: None,
    })
}

/// As `start_intra`, on intercommunicator collective state.
pub(crate) fn start_inter<'b>(
    state: Rc<InterCollectives<EngineComm>>,
    f: impl FnOnce(
        &'b InterCollectives<EngineComm>,
    ) -> ibdyn_collectives::Result<InterRequest<'b, EngineComm>>,
) -> Result<CollectiveRequest<'b>> {
    // SAFETY: as in `start_intra`: the request keeps the Rc allocation alive and drops first.
    let c: &'b InterCollectives<EngineComm> = unsafe { &*Rc::as_ptr(&state) };
    let req = f(c)?;
    Ok(CollectiveRequest {
        inner: Inflight::Inter { req, _state: state },
        refused: None,
    })
}
