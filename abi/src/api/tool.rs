//! The tool information interface (MPI_T) with nothing to expose: ibdyn has no control or
//! performance variables, categories, events or sources. MPI_T_init_thread and
//! MPI_T_finalize work (also before MPI_Init), every count is 0, a performance-variable
//! session can be made and freed, and every index, name or handle is invalid. A tool that
//! looks for variables finds none instead of failing. These functions return their codes
//! and call no error handler, as the standard says.

use super::out;
use crate::consts::*;
use crate::export;
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

const MPI_T_ERR_NOT_INITIALIZED: c_int = 1003;
const MPI_T_ERR_INVALID_INDEX: c_int = 1007;
const MPI_T_ERR_INVALID_SESSION: c_int = 1009;
const MPI_T_ERR_INVALID_HANDLE: c_int = 1010;
const MPI_T_ERR_INVALID_NAME: c_int = 1011;

/// MPI_T_init_thread calls not yet finalized.
static INITS: AtomicI64 = AtomicI64::new(0);
/// The next performance-variable session handle.
static SESSIONS: AtomicUsize = AtomicUsize::new(0x100);

fn initialized() -> bool {
    INITS.load(Ordering::Acquire) > 0
}

/// `code` once MPI_T is initialized, else MPI_T_ERR_NOT_INITIALIZED.
fn when_ready(code: c_int) -> c_int {
    if initialized() {
        code
    } else {
        MPI_T_ERR_NOT_INITIALIZED
    }
}

/// Writes `v` through the program's pointer; MPI_ERR_ARG for NULL.
fn give<T>(p: *mut T, v: T) -> c_int {
    if !initialized() {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    // SAFETY: the program's output argument (NULL is refused by `out`).
    match unsafe { out(p, v, "the output argument") } {
        Ok(()) => MPI_SUCCESS,
        Err(e) => e.class,
    }
}

unsafe fn t_init_thread(required: c_int, provided: *mut c_int) -> c_int {
    if provided.is_null() {
        return MPI_ERR_ARG;
    }
    INITS.fetch_add(1, Ordering::AcqRel);
    // Nothing here touches the runtime's state (only atomics): any level is safe.
    give(
        provided,
        required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE),
    )
}

unsafe fn t_finalize() -> c_int {
    let left = INITS.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
        (n > 0).then(|| n - 1)
    });
    match left {
        Ok(_) => MPI_SUCCESS,
        Err(_) => MPI_T_ERR_NOT_INITIALIZED,
    }
}

unsafe fn t_get_num(num: *mut c_int) -> c_int {
    give(num, 0)
}

unsafe fn t_category_changed(update_number: *mut c_int) -> c_int {
    give(update_number, 0)
}

unsafe fn t_pvar_session_create(session: *mut Handle) -> c_int {
    give(session, SESSIONS.fetch_add(1, Ordering::Relaxed))
}

unsafe fn t_pvar_session_free(session: *mut Handle) -> c_int {
    if !initialized() {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    // SAFETY: the program's in/out argument, checked for NULL.
    match unsafe { session.as_ref() } {
        Some(&h) if h >= 0x100 && h < SESSIONS.load(Ordering::Relaxed) => give(session, 0),
        _ => MPI_T_ERR_INVALID_SESSION,
    }
}

export!(any_thread MPI_T_init_thread, PMPI_T_init_thread, t_init_thread, (required: c_int, provided: *mut c_int) -> c_int);
export!(any_thread MPI_T_finalize, PMPI_T_finalize, t_finalize, () -> c_int);
export!(any_thread MPI_T_cvar_get_num, PMPI_T_cvar_get_num, t_get_num, (num_cvar: *mut c_int) -> c_int);
export!(any_thread MPI_T_pvar_get_num, PMPI_T_pvar_get_num, t_get_num, (num_pvar: *mut c_int) -> c_int);
export!(any_thread MPI_T_category_get_num, PMPI_T_category_get_num, t_get_num, (num_cat: *mut c_int) -> c_int);
export!(any_thread MPI_T_source_get_num, PMPI_T_source_get_num, t_get_num, (num_sources: *mut c_int) -> c_int);
export!(any_thread MPI_T_event_get_num, PMPI_T_event_get_num, t_get_num, (num_events: *mut c_int) -> c_int);
export!(any_thread MPI_T_category_changed, PMPI_T_category_changed, t_category_changed, (update_number: *mut c_int) -> c_int);
export!(any_thread MPI_T_pvar_session_create, PMPI_T_pvar_session_create, t_pvar_session_create, (session: *mut Handle) -> c_int);
export!(any_thread MPI_T_pvar_session_free, PMPI_T_pvar_session_free, t_pvar_session_free, (session: *mut Handle) -> c_int);

/// The functions that find nothing: their code once MPI_T is initialized.
macro_rules! nothing {
    ($($m:ident $pm:ident $f:ident ($($a:ident: $t:ty),*) => $code:expr;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f($($a: $t),*) -> c_int {
            when_ready($code)
        }
        export!($m, $pm, $f, ($($a: $t),*) -> c_int);
    )*};
}

nothing! {
    MPI_T_category_get_categories PMPI_T_category_get_categories t_category_get_categories (_cat_index: c_int, _len: c_int, _indices: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_category_get_cvars PMPI_T_category_get_cvars t_category_get_cvars (_cat_index: c_int, _len: c_int, _indices: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_category_get_events PMPI_T_category_get_events t_category_get_events (_cat_index: c_int, _len: c_int, _indices: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_category_get_index PMPI_T_category_get_index t_category_get_index (_name: *mut c_void, _cat_index: *mut c_void) => MPI_T_ERR_INVALID_NAME;
    MPI_T_category_get_info PMPI_T_category_get_info t_category_get_info (_cat_index: c_int, _name: *mut c_void, _name_len: *mut c_void, _desc: *mut c_void, _desc_len: *mut c_void, _num_cvars: *mut c_void, _num_pvars: *mut c_void, _num_categories: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_category_get_num_events PMPI_T_category_get_num_events t_category_get_num_events (_cat_index: c_int, _num_events: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_category_get_pvars PMPI_T_category_get_pvars t_category_get_pvars (_cat_index: c_int, _len: c_int, _indices: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_cvar_get_index PMPI_T_cvar_get_index t_cvar_get_index (_name: *mut c_void, _cvar_index: *mut c_void) => MPI_T_ERR_INVALID_NAME;
    MPI_T_cvar_get_info PMPI_T_cvar_get_info t_cvar_get_info (_cvar_index: c_int, _name: *mut c_void, _name_len: *mut c_void, _verbosity: *mut c_void, _datatype: *mut c_void, _enumtype: *mut c_void, _desc: *mut c_void, _desc_len: *mut c_void, _bind: *mut c_void, _scope: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_cvar_handle_alloc PMPI_T_cvar_handle_alloc t_cvar_handle_alloc (_cvar_index: c_int, _obj_handle: *mut c_void, _handle: *mut c_void, _count: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_cvar_handle_free PMPI_T_cvar_handle_free t_cvar_handle_free (_handle: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_cvar_read PMPI_T_cvar_read t_cvar_read (_handle: Handle, _buf: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_cvar_write PMPI_T_cvar_write t_cvar_write (_handle: Handle, _buf: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_enum_get_info PMPI_T_enum_get_info t_enum_get_info (_enumtype: Handle, _num: *mut c_void, _name: *mut c_void, _name_len: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_enum_get_item PMPI_T_enum_get_item t_enum_get_item (_enumtype: Handle, _indx: c_int, _value: *mut c_void, _name: *mut c_void, _name_len: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_callback_get_info PMPI_T_event_callback_get_info t_event_callback_get_info (_event_registration: Handle, _cb_safety: c_int, _info_used: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_callback_set_info PMPI_T_event_callback_set_info t_event_callback_set_info (_event_registration: Handle, _cb_safety: c_int, _info: Handle) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_copy PMPI_T_event_copy t_event_copy (_event_instance: Handle, _buffer: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_get_index PMPI_T_event_get_index t_event_get_index (_name: *mut c_void, _event_index: *mut c_void) => MPI_T_ERR_INVALID_NAME;
    MPI_T_event_get_info PMPI_T_event_get_info t_event_get_info (_event_index: c_int, _name: *mut c_void, _name_len: *mut c_void, _verbosity: *mut c_void, _array_of_datatypes: *mut c_void, _array_of_displacements: *mut c_void, _num_elements: *mut c_void, _enumtype: *mut c_void, _info: *mut c_void, _desc: *mut c_void, _desc_len: *mut c_void, _bind: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_event_get_source PMPI_T_event_get_source t_event_get_source (_event_instance: Handle, _source_index: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_get_timestamp PMPI_T_event_get_timestamp t_event_get_timestamp (_event_instance: Handle, _event_timestamp: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_handle_alloc PMPI_T_event_handle_alloc t_event_handle_alloc (_event_index: c_int, _obj_handle: *mut c_void, _info: Handle, _event_registration: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_event_handle_free PMPI_T_event_handle_free t_event_handle_free (_event_registration: Handle, _user_data: *mut c_void, _free_cb_function: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_handle_get_info PMPI_T_event_handle_get_info t_event_handle_get_info (_event_registration: Handle, _info_used: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_handle_set_info PMPI_T_event_handle_set_info t_event_handle_set_info (_event_registration: Handle, _info: Handle) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_read PMPI_T_event_read t_event_read (_event_instance: Handle, _element_index: c_int, _buffer: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_register_callback PMPI_T_event_register_callback t_event_register_callback (_event_registration: Handle, _cb_safety: c_int, _info: Handle, _user_data: *mut c_void, _event_cb_function: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_event_set_dropped_handler PMPI_T_event_set_dropped_handler t_event_set_dropped_handler (_event_registration: Handle, _dropped_cb_function: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_pvar_get_index PMPI_T_pvar_get_index t_pvar_get_index (_name: *mut c_void, _var_class: c_int, _pvar_index: *mut c_void) => MPI_T_ERR_INVALID_NAME;
    MPI_T_pvar_get_info PMPI_T_pvar_get_info t_pvar_get_info (_pvar_index: c_int, _name: *mut c_void, _name_len: *mut c_void, _verbosity: *mut c_void, _var_class: *mut c_void, _datatype: *mut c_void, _enumtype: *mut c_void, _desc: *mut c_void, _desc_len: *mut c_void, _bind: *mut c_void, _readonly: *mut c_void, _continuous: *mut c_void, _atomic: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_pvar_handle_alloc PMPI_T_pvar_handle_alloc t_pvar_handle_alloc (_session: Handle, _pvar_index: c_int, _obj_handle: *mut c_void, _handle: *mut c_void, _count: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_pvar_handle_free PMPI_T_pvar_handle_free t_pvar_handle_free (_session: Handle, _handle: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_pvar_read PMPI_T_pvar_read t_pvar_read (_session: Handle, _handle: Handle, _buf: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_pvar_readreset PMPI_T_pvar_readreset t_pvar_readreset (_session: Handle, _handle: Handle, _buf: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_pvar_reset PMPI_T_pvar_reset t_pvar_reset (_session: Handle, _handle: Handle) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_pvar_start PMPI_T_pvar_start t_pvar_start (_session: Handle, _handle: Handle) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_pvar_stop PMPI_T_pvar_stop t_pvar_stop (_session: Handle, _handle: Handle) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_pvar_write PMPI_T_pvar_write t_pvar_write (_session: Handle, _handle: Handle, _buf: *mut c_void) => MPI_T_ERR_INVALID_HANDLE;
    MPI_T_source_get_info PMPI_T_source_get_info t_source_get_info (_source_index: c_int, _name: *mut c_void, _name_len: *mut c_void, _desc: *mut c_void, _desc_len: *mut c_void, _ordering: *mut c_void, _ticks_per_second: *mut c_void, _max_ticks: *mut c_void, _info: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
    MPI_T_source_get_timestamp PMPI_T_source_get_timestamp t_source_get_timestamp (_source_index: c_int, _timestamp: *mut c_void) => MPI_T_ERR_INVALID_INDEX;
}
