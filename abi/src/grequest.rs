//! Generalized requests (MPI_Grequest_start): an operation the program carries out itself,
//! often in a thread of its own, and marks complete with MPI_Grequest_complete. The
//! request's completion state is shared with a process-wide registry, so the completing
//! call needs nothing of the MPI thread's state and may come from any thread.

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::status::MpiStatus;
use std::collections::HashMap;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

pub type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MpiStatus) -> c_int;
pub type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
pub type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// The program's callbacks and their `extra_state`.
#[derive(Clone, Copy)]
pub struct Callbacks {
    pub query: Option<QueryFn>,
    pub free: Option<FreeFn>,
    pub cancel: Option<CancelFn>,
    pub extra: usize,
}

impl Callbacks {
    fn call_free(&self) -> MpiResult<()> {
        let Some(f) = self.free else { return Ok(()) };
        // SAFETY: the program's free function with its own extra_state.
        match unsafe { f(self.extra as *mut c_void) } {
            MPI_SUCCESS => Ok(()),
            rc => err(
                rc,
                format!("the generalized request's free_fn returned {rc}"),
            ),
        }
    }
}

#[derive(Default)]
struct Shared {
    done: bool,
    /// The callbacks of a request freed (MPI_Request_free) before it completed: its
    /// free_fn runs at MPI_Grequest_complete.
    orphan: Option<Callbacks>,
}

fn registry() -> MutexGuard<'static, HashMap<Handle, Arc<Mutex<Shared>>>> {
    static R: OnceLock<Mutex<HashMap<Handle, Arc<Mutex<Shared>>>>> = OnceLock::new();
    // A panic while holding the lock cannot leave the map inconsistent (single inserts and
    // removes), so a poisoned lock is used as it is.
    R.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn lock(s: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// The request side of a generalized request (held by the request table's entry).
pub struct Greq {
    cb: Callbacks,
    shared: Arc<Mutex<Shared>>,
    handle: Handle,
    freed: bool,
}

impl Greq {
    pub fn new(cb: Callbacks) -> Greq {
        Greq {
            cb,
            shared: Arc::default(),
            handle: MPI_REQUEST_NULL,
            freed: false,
        }
    }

    /// Makes the request reachable by MPI_Grequest_complete under handle `h`.
    pub fn register(&mut self, h: Handle) {
        self.handle = h;
        registry().insert(h, self.shared.clone());
    }

    pub fn is_done(&self) -> bool {
        lock(&self.shared).done
    }

    /// Waits for MPI_Grequest_complete, which only the program can call: as long as it
    /// takes (the standard's MPI_Wait), backing off from spinning to short sleeps.
    pub fn wait_done(&self) {
        let mut idle = 0u32;
        while !self.is_done() {
            idle += 1;
            match idle {
                0..=64 => std::hint::spin_loop(),
                65..=256 => std::thread::yield_now(),
                _ => std::thread::sleep(std::time::Duration::from_micros(200)),
            }
        }
    }

    /// The status the program's query_fn gives.
    pub fn query(&self) -> MpiResult<MpiStatus> {
        let mut st = MpiStatus {
            source: MPI_UNDEFINED,
            tag: MPI_UNDEFINED,
            error: MPI_SUCCESS,
            internal: [0; 5],
        };
        if let Some(q) = self.cb.query {
            // SAFETY: the program's query function with its extra_state and a status of ours.
            let rc = unsafe { q(self.cb.extra as *mut c_void, &mut st) };
            if rc != MPI_SUCCESS {
                return err(
                    rc,
                    format!("the generalized request's query_fn returned {rc}"),
                );
            }
        }
        Ok(st)
    }

    /// Completion seen by MPI_Wait/Test: the status from query_fn, then free_fn.
    pub fn finish(&mut self) -> MpiResult<MpiStatus> {
        let st = self.query();
        self.freed = true;
        let freed = self.cb.call_free();
        let st = st?;
        freed.map(|_| st)
    }

    /// MPI_Cancel: the program's cancel_fn, told whether the operation has completed.
    pub fn cancel(&self) -> MpiResult<()> {
        let Some(c) = self.cb.cancel else {
            return Ok(());
        };
        let complete = c_int::from(self.is_done());
        // SAFETY: the program's cancel function with its extra_state.
        match unsafe { c(self.cb.extra as *mut c_void, complete) } {
            MPI_SUCCESS => Ok(()),
            rc => err(
                rc,
                format!("the generalized request's cancel_fn returned {rc}"),
            ),
        }
    }
}

impl Drop for Greq {
    fn drop(&mut self) {
        if self.freed {
            registry().remove(&self.handle);
            return;
        }
        // Freed by MPI_Request_free: free_fn runs now if the operation has completed,
        // otherwise at MPI_Grequest_complete. The lock orders this against that call.
        let mut s = lock(&self.shared);
        if s.done {
            drop(s);
            registry().remove(&self.handle);
            // MPI_Request_free has returned; the error has nowhere to go but stderr.
            if let Err(e) = self.cb.call_free() {
                eprintln!(
                    "ibdyn MPI: MPI_Request_free of a generalized request: {}",
                    e.message
                );
            }
        } else {
            s.orphan = Some(self.cb);
        }
    }
}

/// MPI_Grequest_complete of request `h`, from any thread.
pub fn complete(h: Handle) -> MpiResult<()> {
    let Some(shared) = registry().get(&h).cloned() else {
        return err(
            MPI_ERR_REQUEST,
            format!("{h:#x} is not a generalized request that is still in flight"),
        );
    };
    let orphan = {
        let mut s = lock(&shared);
        if s.done {
            return err(
                MPI_ERR_REQUEST,
                "MPI_Grequest_complete was called twice for this request",
            );
        }
        s.done = true;
        s.orphan.take()
    };
    if let Some(cb) = orphan {
        registry().remove(&h);
        cb.call_free()?;
    }
    Ok(())
}
