//! libibverbs, loaded when the `ib` provider is first asked for rather than by the dynamic
//! loader at every start: libibverbs and the libnl libraries it pulls in cost each process
//! about 0.3 ms of start-up (measured on the 2-core test machine), which a process that never
//! opens a device (no device on the node, or the `sock` provider chosen) need not pay.
//!
//! Only the exported entry points go through this table; the inline verbs (post, poll,
//! notify) reach the provider through the context's operations, as in C.

use crate::error::{Result, VerbsError};
use rdma_sys::*;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// The library as installed by rdma-core (the SONAME the linker would record).
const LIBRARY: &str = "libibverbs.so.1";

macro_rules! entry_points {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The entry points of libibverbs this provider calls.
        #[allow(non_snake_case)]
        pub(crate) struct Verbs {
            $(pub(crate) $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Verbs {
            /// Looks every entry point up in `lib` (a handle from dlopen).
            fn resolve(lib: *mut c_void) -> std::result::Result<Verbs, String> {
                Ok(Verbs {
                    $($name: {
                        let name = concat!(stringify!($name), "\0");
                        // SAFETY: `lib` is a live dlopen handle and `name` is NUL-terminated.
                        let p = unsafe { libc::dlsym(lib, name.as_ptr().cast()) };
                        if p.is_null() {
                            return Err(format!("{LIBRARY} has no {}", stringify!($name)));
                        }
                        // SAFETY: the symbol is the C function of that name, whose signature
                        // is the one bindgen took from verbs.h (checked by a test).
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(p)
                        }
                    },)*
                })
            }
        }

        #[cfg(test)]
        #[test]
        fn entry_points_have_the_signatures_of_verbs_h() {
            $(let _: unsafe extern "C" fn($($arg),*) $(-> $ret)? = rdma_sys::$name;)*
        }
    };
}

entry_points! {
    ibv_get_device_list: fn(*mut c_int) -> *mut *mut ibv_device;
    ibv_free_device_list: fn(*mut *mut ibv_device);
    ibv_get_device_name: fn(*mut ibv_device) -> *const c_char;
    ibv_open_device: fn(*mut ibv_device) -> *mut ibv_context;
    ibv_close_device: fn(*mut ibv_context) -> c_int;
    ibv_query_device: fn(*mut ibv_context, *mut ibv_device_attr) -> c_int;
    ibv_query_port: fn(*mut ibv_context, u8, *mut _compat_ibv_port_attr) -> c_int;
    ibv_query_gid: fn(*mut ibv_context, u8, c_int, *mut ibv_gid) -> c_int;
    ibv_alloc_pd: fn(*mut ibv_context) -> *mut ibv_pd;
    ibv_dealloc_pd: fn(*mut ibv_pd) -> c_int;
    ibv_reg_mr: fn(*mut ibv_pd, *mut c_void, usize, c_int) -> *mut ibv_mr;
    ibv_dereg_mr: fn(*mut ibv_mr) -> c_int;
    ibv_create_cq: fn(*mut ibv_context, c_int, *mut c_void, *mut ibv_comp_channel, c_int) -> *mut ibv_cq;
    ibv_destroy_cq: fn(*mut ibv_cq) -> c_int;
    ibv_create_comp_channel: fn(*mut ibv_context) -> *mut ibv_comp_channel;
    ibv_destroy_comp_channel: fn(*mut ibv_comp_channel) -> c_int;
    ibv_get_cq_event: fn(*mut ibv_comp_channel, *mut *mut ibv_cq, *mut *mut c_void) -> c_int;
    ibv_ack_cq_events: fn(*mut ibv_cq, c_uint);
    ibv_create_qp: fn(*mut ibv_pd, *mut ibv_qp_init_attr) -> *mut ibv_qp;
    ibv_modify_qp: fn(*mut ibv_qp, *mut ibv_qp_attr, c_int) -> c_int;
    ibv_destroy_qp: fn(*mut ibv_qp) -> c_int;
    ibv_create_srq: fn(*mut ibv_pd, *mut ibv_srq_init_attr) -> *mut ibv_srq;
    ibv_destroy_srq: fn(*mut ibv_srq) -> c_int;
    ibv_create_ah: fn(*mut ibv_pd, *mut ibv_ah_attr) -> *mut ibv_ah;
    ibv_destroy_ah: fn(*mut ibv_ah) -> c_int;
    ibv_wc_status_str: fn(ibv_wc_status::Type) -> *const c_char;
}

static VERBS: OnceLock<std::result::Result<Verbs, String>> = OnceLock::new();

/// Loads libibverbs (once per process) and returns its entry points.
pub(crate) fn load() -> Result<&'static Verbs> {
    VERBS
        .get_or_init(|| {
            let name = format!("{LIBRARY}\0");
            // SAFETY: dlopen with a NUL-terminated name; the handle is kept for the life of
            // the process (the table points into the library).
            let lib = unsafe { libc::dlopen(name.as_ptr().cast(), libc::RTLD_NOW) };
            if lib.is_null() {
                // SAFETY: dlerror returns NULL or a NUL-terminated message.
                let why = unsafe { libc::dlerror() };
                return Err(if why.is_null() {
                    format!("cannot load {LIBRARY}")
                } else {
                    // SAFETY: checked non-null above.
                    unsafe { std::ffi::CStr::from_ptr(why) }
                        .to_string_lossy()
                        .into_owned()
                });
            }
            Verbs::resolve(lib)
        })
        .as_ref()
        .map_err(|why| VerbsError::Verb {
            verb: "dlopen",
            detail: why.clone(),
        })
}

/// The entry points, for code that runs only on objects made after `load` succeeded.
pub(crate) fn verbs() -> &'static Verbs {
    match VERBS.get() {
        Some(Ok(v)) => v,
        _ => unreachable!("a verbs object exists only once libibverbs is loaded"),
    }
}
