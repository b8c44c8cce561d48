//! Non-blocking requests. A request borrows its buffer for `'a`, so the buffer can be neither
//! read nor freed while data may still move into or out of it.

use crate::engine::Engine;
use crate::error::{CommError, Result};
use crate::reqs::Status;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;

/// An outstanding send or receive (MPI_Request).
#[must_use = "a request must be waited for or tested to completion"]
pub struct Request<'a> {
    eng: Rc<RefCell<Engine>>,
    /// None once the result has been collected (or for a request that was complete at once).
    id: Option<u64>,
    ready: Option<Status>,
    _buf: PhantomData<&'a mut [u8]>,
}

impl<'a> Request<'a> {
    pub(crate) fn new(eng: Rc<RefCell<Engine>>, id: u64) -> Request<'a> {
        Request {
            eng,
            id: Some(id),
            ready: None,
            _buf: PhantomData,
        }
    }

    /// A request that completed immediately (e.g. to or from `PROC_NULL`).
    pub(crate) fn completed(eng: Rc<RefCell<Engine>>, status: Status) -> Request<'a> {
        Request {
            eng,
            id: None,
            ready: Some(status),
            _buf: PhantomData,
        }
    }

    /// Blocks until the operation completes.
    pub fn wait(mut self) -> Result<Status> {
        self.wait_mut()
    }

    fn wait_mut(&mut self) -> Result<Status> {
        match self.id {
            Some(_) if crate::turns::taken() => {
                let st = crate::turns::wait_taking_turns(|| self.test())?;
                self.ready = None;
                Ok(st)
            }
            Some(id) => {
                self.id = None;
                self.eng.borrow_mut().wait(id)
            }
            None => self.ready.take().ok_or_else(already_collected),
        }
    }

    /// Completes the request if it can without blocking.
    pub fn test(&mut self) -> Result<Option<Status>> {
        let Some(id) = self.id else {
            return Ok(Some(self.ready.ok_or_else(already_collected)?));
        };
        let mut eng = self.eng.borrow_mut();
        eng.progress()?;
        match eng.take_done(id) {
            Some(r) => {
                self.id = None;
                let s = r?;
                self.ready = Some(s);
                Ok(Some(s))
            }
            None => Ok(None),
        }
    }

    /// MPI_Cancel: a receive that no message has matched is withdrawn; a send that no
    /// receive has matched is withdrawn from its receiver, once that one answers. The request
    /// still has to be completed; it then ends with `CommError::Cancelled` if the operation
    /// was withdrawn, or as usual (a receive already matched gets its whole message).
    pub fn cancel(&mut self) {
        if let Some(id) = self.id {
            self.eng.borrow_mut().cancel_op(id);
        }
    }

    fn is_done(&self) -> bool {
        match self.id {
            Some(id) => self.eng.borrow_mut().is_done(id),
            None => true,
        }
    }
}

fn already_collected() -> CommError {
    CommError::InvalidArgument("the request's result was already collected".into())
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let mut eng = self.eng.borrow_mut();
        if !eng.cancel(id) {
            // Data is moving into or out of the borrowed buffer: it must finish before the
            // borrow ends. Dead peers end this wait with an error.
            if let Err(e) = eng.wait(id) {
                tracing::debug!("a dropped request ended with: {e}");
            }
        }
    }
}

/// Waits for every request; returns their statuses in order, or the first error after all ended.
pub fn wait_all(reqs: Vec<Request<'_>>) -> Result<Vec<Status>> {
    let mut out = Vec::with_capacity(reqs.len());
    let mut first_err = None;
    for r in reqs {
        match r.wait() {
            Ok(s) => out.push(s),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Waits until one request completes; removes it from `reqs` and returns its index and status.
pub fn wait_any(reqs: &mut Vec<Request<'_>>) -> Result<(usize, Status)> {
    if reqs.is_empty() {
        return Err(CommError::InvalidArgument("wait_any on no requests".into()));
    }
    let eng = reqs[0].eng.clone();
    let i = if crate::turns::taken() {
        crate::turns::wait_taking_turns(|| {
            eng.borrow_mut().progress()?;
            Ok(reqs.iter().position(Request::is_done))
        })?
    } else {
        let mut found = None;
        eng.borrow_mut().wait_until(|e| {
            found = reqs
                .iter()
                .position(|r| r.id.is_none_or(|id| e.is_done(id)));
            found.is_some()
        })?;
        found.expect("wait_until returns when one is done")
    };
    debug_assert!(reqs[i].is_done());
    let mut r = reqs.remove(i);
    Ok((i, r.wait_mut()?))
}
