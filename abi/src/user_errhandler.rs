//! User error handlers (MPI_Comm_create_errhandler, MPI_Session_create_errhandler): a table
//! of the user's functions by handle. A communicator or session keeps a copy of the function
//! pointer (`ErrHandler::User`), so freeing the handle never leaves one dangling. The table
//! is process-wide (sessions may make handlers before any state exists) and is touched only
//! when handlers are made, freed or set, never on the hot path.

use crate::consts::*;
use crate::error::{err, ErrHandler, MpiResult, UserHandler};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Mutex;

/// User error handler handles are this plus the table index.
const ERRHANDLER_BASE: Handle = 0x7000_0000;

/// The C type of a user error handler: `void f(MPI_Comm *, int *, ...)` (or the session's).
pub type ErrFn = unsafe extern "C" fn(*mut Handle, *mut c_int, ...);
/// MPICH's `_x` form (MPIX_Comm_create_errhandler_x, ...): the object and the code by value
/// and the program's extra state.
pub type ErrFnX = unsafe extern "C" fn(Handle, c_int, *mut c_void);
/// `void destructor(void *extra_state)` of MPICH's `_x` objects.
pub type DestructorFn = unsafe extern "C" fn(*mut c_void);

/// The function of a user error handler.
#[derive(Copy, Clone)]
pub enum Func {
    Classic(ErrFn),
    X { f: ErrFnX, extra: usize },
}

impl Func {
    /// Calls the program's function for error `code` of `object`.
    ///
    /// # Safety
    /// The function is the program's, of the C type its create call gave it.
    pub unsafe fn call(self, object: Handle, code: c_int) {
        match self {
            Func::Classic(f) => {
                let (mut object, mut code) = (object, code);
                // SAFETY: the caller's promise; both pointers are valid for the call.
                unsafe { f(&mut object, &mut code) }
            }
            // SAFETY: the caller's promise; `extra` is the program's own pointer.
            Func::X { f, extra } => unsafe { f(object, code, extra as *mut c_void) },
        }
    }
}

/// Which objects a handler was made for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Comm,
    Session,
    Win,
    File,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Comm => "communicator (MPI_Comm_create_errhandler)",
            Kind::Session => "session (MPI_Session_create_errhandler)",
            Kind::Win => "window (MPI_Win_create_errhandler)",
            Kind::File => "file (MPI_File_create_errhandler)",
        }
    }
}

struct Entry {
    func: Func,
    kind: Kind,
    /// References the user holds (create and each get add one, free drops one).
    refs: u32,
    /// An `_x` handler's destructor, run once the handler is freed, when the process's MPI
    /// ends (`run_destructors`): until then objects that copied the handler may still call
    /// it with its extra state.
    destructor: Option<DestructorFn>,
}

static TABLE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn table() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    // A poisoned lock only means a panic elsewhere; the table itself stays consistent.
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A new handler of `kind` calling `func`.
pub fn create(func: Func, kind: Kind, destructor: Option<DestructorFn>) -> Handle {
    let mut t = table();
    t.push(Entry {
        func,
        kind,
        refs: 1,
        destructor,
    });
    ERRHANDLER_BASE + (t.len() - 1)
}

/// Runs the destructors of the freed `_x` handlers (the process's MPI has ended: nothing can
/// call them any more), each once.
pub fn run_destructors() {
    let due: Vec<(DestructorFn, usize)> = table()
        .iter_mut()
        .filter(|e| e.refs == 0)
        .filter_map(|e| match (e.destructor.take(), e.func) {
            (Some(d), Func::X { extra, .. }) => Some((d, extra)),
            _ => None,
        })
        .collect();
    for (d, extra) in due {
        // SAFETY: the program's destructor of its own extra state, called once.
        unsafe { d(extra as *mut c_void) };
    }
}

fn index(h: Handle) -> Option<usize> {
    h.checked_sub(ERRHANDLER_BASE)
}

/// The handler `h` names, for an object of `kind`.
pub fn resolve(h: Handle, kind: Kind) -> MpiResult<ErrHandler> {
    match h {
        MPI_ERRORS_ARE_FATAL => return Ok(ErrHandler::Fatal),
        MPI_ERRORS_ABORT => return Ok(ErrHandler::Abort),
        MPI_ERRORS_RETURN => return Ok(ErrHandler::Return),
        MPI_ERRHANDLER_NULL => {
            return err(
                MPI_ERR_ERRHANDLER,
                "MPI_ERRHANDLER_NULL is not an error handler",
            )
        }
        _ => {}
    }
    let t = table();
    match index(h).and_then(|i| t.get(i)) {
        Some(e) if e.refs > 0 && e.kind == kind => {
            Ok(ErrHandler::User(UserHandler::new(h, e.func)))
        }
        Some(e) if e.refs > 0 => err(
            MPI_ERR_ERRHANDLER,
            format!(
                "{h:#x} is an error handler for a {}, not for a {}",
                e.kind.name(),
                kind.name()
            ),
        ),
        Some(_) => err(
            MPI_ERR_ERRHANDLER,
            format!("error handler {h:#x} was freed (MPI_Errhandler_free)"),
        ),
        None => err(
            MPI_ERR_ERRHANDLER,
            format!("{h:#x} is not an error handler"),
        ),
    }
}

/// The handle of `eh` for a get call: a user handler gains a reference (MPI: the caller
/// frees what a get returns).
pub fn handle_for_get(eh: ErrHandler) -> Handle {
    let h = eh.handle();
    if let Some(i) = index(h) {
        if let Some(e) = table().get_mut(i) {
            e.refs = e.refs.saturating_add(1);
        }
    }
    h
}

/// MPI_Errhandler_free: drops the user's reference to `h`; predefined handlers stay.
pub fn free(h: Handle) -> MpiResult<()> {
    match h {
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT | MPI_ERRORS_RETURN => return Ok(()),
        _ => {}
    }
    let mut t = table();
    match index(h).and_then(|i| t.get_mut(i)) {
        Some(e) if e.refs > 0 => {
            e.refs -= 1;
            Ok(())
        }
        _ => err(
            MPI_ERR_ERRHANDLER,
            format!("{h:#x} is not an error handler (freed already?)"),
        ),
    }
}
