//! MPI errors: an error class with a message, the mapping from the layers' errors, the text
//! of each class, and what an error handler does with an error.

use crate::consts::*;
use ibdyn::CommError;
use ibdyn_collectives::CollError;
use std::cell::RefCell;
use std::os::raw::c_int;

/// An MPI error: the class a C caller sees and a message saying what went wrong.
#[derive(Debug, Clone)]
pub struct MpiError {
    pub class: c_int,
    pub message: String,
    /// The envelope and received count of a receive that failed with a message in hand
    /// (a truncation), for the caller's status.
    pub status: Option<ibdyn::Status>,
}

pub type MpiResult<T> = Result<T, MpiError>;

impl MpiError {
    pub fn new(class: c_int, message: impl Into<String>) -> MpiError {
        MpiError {
            class,
            message: message.into(),
            status: None,
        }
    }
}

/// Shorthand for an error of `class` with a message.
pub fn err<T>(class: c_int, message: impl Into<String>) -> MpiResult<T> {
    Err(MpiError::new(class, message))
}

impl From<CommError> for MpiError {
    fn from(e: CommError) -> MpiError {
        let class = match &e {
            CommError::InvalidRank { .. } => MPI_ERR_RANK,
            CommError::InvalidTag(_) => MPI_ERR_TAG,
            CommError::Truncated { .. } => MPI_ERR_TRUNCATE,
            CommError::CommFreed => MPI_ERR_COMM,
            CommError::PeerDead { .. } => MPI_ERR_PROC_ABORTED,
            CommError::InvalidArgument(_) => MPI_ERR_ARG,
            // A process-set name or index the session does not have: a bad argument.
            CommError::UnknownPset { .. }
            | CommError::PsetIndex { .. }
            | CommError::MalformedPset { .. } => MPI_ERR_ARG,
            CommError::SpawnFailed { .. } => MPI_ERR_SPAWN,
            CommError::Collective(inner) => match inner.downcast_ref::<CollError>() {
                Some(c) => coll_class(c),
                None => MPI_ERR_OTHER,
            },
            _ => MPI_ERR_OTHER,
        };
        let status = match e {
            CommError::Truncated {
                sender,
                tag,
                received,
                ..
            } => Some(ibdyn::Status {
                source: sender,
                tag,
                count: received,
            }),
            _ => None,
        };
        MpiError {
            status,
            ..MpiError::new(class, e.to_string())
        }
    }
}

impl From<CollError> for MpiError {
    fn from(e: CollError) -> MpiError {
        MpiError::new(coll_class(&e), e.to_string())
    }
}

fn coll_class(e: &CollError) -> c_int {
    match e {
        CollError::Comm(inner) => match inner.downcast_ref::<CommError>() {
            Some(CommError::Truncated { .. }) => MPI_ERR_TRUNCATE,
            Some(CommError::PeerDead { .. }) => MPI_ERR_PROC_ABORTED,
            Some(CommError::CommFreed) => MPI_ERR_COMM,
            _ => MPI_ERR_OTHER,
        },
        CollError::SizeMismatch { .. } => MPI_ERR_TRUNCATE,
        CollError::InvalidArgument { .. } => MPI_ERR_ARG,
        CollError::OpNotDefined { .. } => MPI_ERR_OP,
        CollError::Schedule(_) => MPI_ERR_INTERN,
        _ => MPI_ERR_OTHER,
    }
}

/// What a communicator or session does with an error.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ErrHandler {
    /// MPI_ERRORS_ARE_FATAL: print and end the job.
    Fatal,
    /// MPI_ERRORS_ABORT: print and end the processes of the communicator (here: the job).
    Abort,
    /// MPI_ERRORS_RETURN: return the error code to the caller.
    Return,
    /// A user's function (MPI_Comm_create_errhandler and the like): called, then the error
    /// code is returned.
    User(UserHandler),
}

/// A user error handler: its handle, function, and the object an error is about (filled in
/// when the handler is looked up for an error).
#[derive(Copy, Clone)]
pub struct UserHandler {
    handle: Handle,
    func: crate::user_errhandler::Func,
    object: Handle,
}

impl UserHandler {
    pub fn new(handle: Handle, func: crate::user_errhandler::Func) -> UserHandler {
        UserHandler {
            handle,
            func,
            object: 0,
        }
    }
}

impl PartialEq for UserHandler {
    fn eq(&self, o: &Self) -> bool {
        self.handle == o.handle && self.object == o.object
    }
}
impl Eq for UserHandler {}

impl std::fmt::Debug for UserHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserHandler({:#x} on {:#x})", self.handle, self.object)
    }
}

impl ErrHandler {
    pub fn handle(self) -> Handle {
        match self {
            ErrHandler::Fatal => MPI_ERRORS_ARE_FATAL,
            ErrHandler::Abort => MPI_ERRORS_ABORT,
            ErrHandler::Return => MPI_ERRORS_RETURN,
            ErrHandler::User(u) => u.handle,
        }
    }

    /// This handler, for an error about `object` (the handle a user function receives).
    pub fn about(self, object: Handle) -> ErrHandler {
        match self {
            ErrHandler::User(u) => ErrHandler::User(UserHandler { object, ..u }),
            other => other,
        }
    }
}

thread_local! {
    /// The latest message of each error class, for MPI_Error_string (allocated on errors only).
    static LAST_MESSAGE: RefCell<Vec<Option<String>>> = const { RefCell::new(Vec::new()) };
}

/// Applies `handler` to `e` raised by the function `name`: returns the error code, or ends
/// the process for the fatal handlers.
pub fn raise(name: &str, e: MpiError, handler: ErrHandler) -> c_int {
    let text = format!("{name}: {} ({})", e.message, class_name(e.class));
    match handler {
        ErrHandler::Return => {
            remember(e.class, text);
            e.class
        }
        ErrHandler::User(u) => {
            remember(e.class, text);
            // SAFETY: `func` is the user's error handler function, of the C type its
            // create call gave it.
            unsafe { u.func.call(u.object, e.class) };
            e.class
        }
        ErrHandler::Fatal | ErrHandler::Abort => {
            let which = match handler {
                ErrHandler::Abort => "MPI_ERRORS_ABORT",
                _ => "MPI_ERRORS_ARE_FATAL",
            };
            eprintln!("ibdyn MPI: {text}; ending the job (the error handler is {which}; set MPI_ERRORS_RETURN to handle errors)");
            std::process::exit(e.class.clamp(1, 255));
        }
    }
}

fn remember(class: c_int, text: String) {
    let Ok(i) = usize::try_from(class) else {
        return;
    };
    let _ = LAST_MESSAGE.try_with(|m| {
        if let Ok(mut m) = m.try_borrow_mut() {
            if m.len() <= i {
                m.resize(i + 1, None);
            }
            m[i] = Some(text);
        }
    });
}

/// The text of an error code: the class's description, then the latest message of that class
/// raised in this process.
pub fn error_string(code: c_int) -> Option<String> {
    let Some(base) = class_description(code) else {
        return crate::user_errors::text_of(code);
    };
    let last = usize::try_from(code).ok().and_then(|i| {
        LAST_MESSAGE
            .try_with(|m| {
                m.try_borrow()
                    .ok()
                    .and_then(|m| m.get(i).cloned().flatten())
            })
            .ok()
            .flatten()
    });
    Some(match last {
        Some(l) => format!("{base}: {l}"),
        None => base.to_string(),
    })
}

/// Whether `class` is one of the standard's error classes.
pub fn is_predefined_class(class: c_int) -> bool {
    class_description(class).is_some()
}

/// The class of error code `code`: the library's codes are the classes themselves.
pub fn class_of(code: c_int) -> Option<c_int> {
    if is_predefined_class(code) {
        return Some(code);
    }
    crate::user_errors::class_of(code)
}

fn class_name(class: c_int) -> &'static str {
    CLASSES
        .iter()
        .find(|(c, _, _)| *c == class)
        .map_or("unknown error class", |(_, n, _)| n)
}

fn class_description(class: c_int) -> Option<&'static str> {
    CLASSES
        .iter()
        .find(|(c, _, _)| *c == class)
        .map(|(_, _, d)| *d)
}

/// (class, name, description) of every error class of the MPI 5.0 standard.
const CLASSES: &[(c_int, &str, &str)] = &[
    (0, "MPI_SUCCESS", "no error"),
    (1, "MPI_ERR_BUFFER", "invalid buffer pointer"),
    (2, "MPI_ERR_COUNT", "invalid count argument"),
    (3, "MPI_ERR_TYPE", "invalid datatype"),
    (4, "MPI_ERR_TAG", "invalid tag"),
    (5, "MPI_ERR_COMM", "invalid communicator"),
    (6, "MPI_ERR_RANK", "invalid rank"),
    (7, "MPI_ERR_REQUEST", "invalid request"),
    (8, "MPI_ERR_ROOT", "invalid root"),
    (9, "MPI_ERR_GROUP", "invalid group"),
    (10, "MPI_ERR_OP", "invalid reduction operation"),
    (11, "MPI_ERR_TOPOLOGY", "invalid topology"),
    (12, "MPI_ERR_DIMS", "invalid dimension argument"),
    (13, "MPI_ERR_ARG", "invalid argument"),
    (14, "MPI_ERR_UNKNOWN", "unknown error"),
    (15, "MPI_ERR_TRUNCATE", "message truncated on receive"),
    (16, "MPI_ERR_OTHER", "other error"),
    (17, "MPI_ERR_INTERN", "internal error"),
    (18, "MPI_ERR_PENDING", "operation pending"),
    (19, "MPI_ERR_IN_STATUS", "error code is in status"),
    (20, "MPI_ERR_ACCESS", "permission denied"),
    (21, "MPI_ERR_AMODE", "invalid file access mode"),
    (22, "MPI_ERR_ASSERT", "invalid assertion"),
    (23, "MPI_ERR_BAD_FILE", "invalid file name"),
    (24, "MPI_ERR_BASE", "invalid base address"),
    (25, "MPI_ERR_CONVERSION", "data conversion error"),
    (26, "MPI_ERR_DISP", "invalid displacement"),
    (
        27,
        "MPI_ERR_DUP_DATAREP",
        "data representation already defined",
    ),
    (28, "MPI_ERR_FILE_EXISTS", "file exists"),
    (29, "MPI_ERR_FILE_IN_USE", "file in use"),
    (30, "MPI_ERR_FILE", "invalid file handle"),
    (31, "MPI_ERR_INFO_KEY", "info key too long"),
    (32, "MPI_ERR_INFO_NOKEY", "info key not defined"),
    (33, "MPI_ERR_INFO_VALUE", "info value too long"),
    (34, "MPI_ERR_INFO", "invalid info object"),
    (35, "MPI_ERR_IO", "I/O error"),
    (36, "MPI_ERR_KEYVAL", "invalid attribute key"),
    (37, "MPI_ERR_LOCKTYPE", "invalid lock type"),
    (38, "MPI_ERR_NAME", "service name not published"),
    (39, "MPI_ERR_NO_MEM", "out of memory"),
    (40, "MPI_ERR_NOT_SAME", "arguments differ across processes"),
    (41, "MPI_ERR_NO_SPACE", "not enough space"),
    (42, "MPI_ERR_NO_SUCH_FILE", "no such file"),
    (43, "MPI_ERR_PORT", "invalid port name"),
    (44, "MPI_ERR_QUOTA", "quota exceeded"),
    (45, "MPI_ERR_READ_ONLY", "read-only file or file system"),
    (46, "MPI_ERR_RMA_ATTACH", "memory cannot be attached"),
    (
        47,
        "MPI_ERR_RMA_CONFLICT",
        "conflicting accesses to a window",
    ),
    (48, "MPI_ERR_RMA_RANGE", "target memory outside the window"),
    (49, "MPI_ERR_RMA_SHARED", "memory cannot be shared"),
    (50, "MPI_ERR_RMA_SYNC", "wrong synchronisation of RMA calls"),
    (51, "MPI_ERR_SERVICE", "invalid service name"),
    (52, "MPI_ERR_SIZE", "invalid size"),
    (53, "MPI_ERR_SPAWN", "error spawning processes"),
    (
        54,
        "MPI_ERR_UNSUPPORTED_DATAREP",
        "unsupported data representation",
    ),
    (55, "MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"),
    (56, "MPI_ERR_WIN", "invalid window"),
    (57, "MPI_ERR_RMA_FLAVOR", "wrong window flavour"),
    (58, "MPI_ERR_PROC_ABORTED", "a peer process has aborted"),
    (
        59,
        "MPI_ERR_VALUE_TOO_LARGE",
        "value too large for its output argument",
    ),
    (60, "MPI_ERR_SESSION", "invalid session"),
    (61, "MPI_ERR_ERRHANDLER", "invalid error handler"),
    (62, "MPI_ERR_ABI", "ABI mismatch"),
];
