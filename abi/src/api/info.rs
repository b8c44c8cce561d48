//! Info objects: Info_create, set, get_string, get_valuelen, get_nkeys, get_nthkey, delete,
//! dup, free; MPI_INFO_ENV describes how this process started.

use super::{out, read};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::infos::{self, Info};
use crate::state::{with_state, State};
use crate::{call, export};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

/// The keys of MPI_INFO_ENV (`maxprocs` once MPI is initialised).
fn env_info(s: Option<&State>) -> Info {
    let mut v: Info = Vec::new();
    let args: Vec<String> = std::env::args().collect();
    if let Some(c) = args.first() {
        v.push(("command".into(), c.clone()));
    }
    if args.len() > 1 {
        v.push(("argv".into(), args[1..].join(" ")));
    }
    if let Some(w) = s.and_then(|s| s.comm(MPI_COMM_WORLD).ok()) {
        v.push(("maxprocs".into(), w.comm.raw().size().to_string()));
    }
    if let Ok(d) = std::env::current_dir() {
        v.push(("wdir".into(), d.display().to_string()));
    }
    v.push((
        "thread_level".into(),
        crate::threads::name(crate::threads::level()).into(),
    ));
    v
}

/// What MPI_INFO_ENV holds now.
fn env() -> Info {
    with_state(|s| Ok(env_info(Some(s)))).unwrap_or_else(|_| env_info(None))
}

/// Runs `f` on info object `h` (MPI_INFO_ENV read-only).
fn with_info<R>(h: Handle, f: impl FnOnce(&Info) -> MpiResult<R>) -> MpiResult<R> {
    if h == MPI_INFO_ENV {
        return f(&env());
    }
    f(&infos::get(h)?)
}

/// A C string argument.
///
/// # Safety
/// `p` is NULL or a C string.
pub unsafe fn text(p: *const c_char, what: &str) -> MpiResult<String> {
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Copies `v` into the caller's buffer of `cap` bytes (with the NUL), truncated.
///
/// # Safety
/// `buf` holds `cap` bytes.
unsafe fn copy_out(buf: *mut c_char, cap: usize, v: &str) {
    if cap == 0 || buf.is_null() {
        return;
    }
    let n = v.len().min(cap - 1);
    // SAFETY: the caller's buffer of `cap` > n bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(v.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
}

unsafe fn info_create(info: *mut Handle) -> c_int {
    call("MPI_Info_create", MPI_COMM_SELF, || {
        let h = infos::add(Vec::new())?;
        // SAFETY: the caller's output argument.
        unsafe { out(info, h, "info") }
    })
}

unsafe fn info_set(info: Handle, key: *const c_char, value: *const c_char) -> c_int {
    call("MPI_Info_set", MPI_COMM_SELF, || {
        // SAFETY: the caller's C strings.
        let (k, v) = unsafe { (text(key, "key")?, text(value, "value")?) };
        if k.len() >= MPI_MAX_INFO_KEY || k.is_empty() {
            return err(
                MPI_ERR_INFO_KEY,
                format!("key {k:?} is empty or longer than MPI_MAX_INFO_KEY"),
            );
        }
        if v.len() >= MPI_MAX_INFO_VAL {
            return err(
                MPI_ERR_INFO_VALUE,
                format!("the value of {k:?} is longer than MPI_MAX_INFO_VAL"),
            );
        }
        infos::with_mut(info, |i| {
            match i.iter_mut().find(|e| e.0 == k) {
                Some(e) => e.1 = v,
                None => i.push((k, v)),
            }
            Ok(())
        })
    })
}

unsafe fn info_delete(info: Handle, key: *const c_char) -> c_int {
    call("MPI_Info_delete", MPI_COMM_SELF, || {
        // SAFETY: the caller's C string.
        let k = unsafe { text(key, "key") }?;
        infos::with_mut(info, |i| {
            let Some(at) = i.iter().position(|e| e.0 == k) else {
                return err(
                    MPI_ERR_INFO_NOKEY,
                    format!("key {k:?} is not in the info object"),
                );
            };
            i.remove(at);
            Ok(())
        })
    })
}

unsafe fn info_get_string(
    info: Handle,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    call("MPI_Info_get_string", MPI_COMM_SELF, || {
        // SAFETY: the caller's C string and in/out length.
        let (k, cap) = unsafe { (text(key, "key")?, read(buflen, "buflen")?) };
        let found = with_info(info, |i| {
            Ok(i.iter().find(|e| e.0 == k).map(|e| e.1.clone()))
        })?;
        // SAFETY: the caller's buffers: `value` holds `buflen` bytes.
        unsafe {
            if let Some(v) = &found {
                copy_out(value, usize::try_from(cap).unwrap_or(0), v);
                out(buflen, v.len() as c_int + 1, "buflen")?;
            }
            out(flag, c_int::from(found.is_some()), "flag")
        }
    })
}

unsafe fn info_get(
    info: Handle,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    let mut len = valuelen.saturating_add(1);
    // SAFETY: passed through (MPI_Info_get's valuelen excludes the NUL).
    unsafe { info_get_string(info, key, &mut len, value, flag) }
}

unsafe fn info_get_valuelen(
    info: Handle,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    call("MPI_Info_get_valuelen", MPI_COMM_SELF, || {
        // SAFETY: the caller's C string.
        let k = unsafe { text(key, "key") }?;
        let found = with_info(info, |i| Ok(i.iter().find(|e| e.0 == k).map(|e| e.1.len())))?;
        // SAFETY: the caller's output arguments.
        unsafe {
            if let Some(n) = found {
                out(valuelen, n as c_int, "valuelen")?;
            }
            out(flag, c_int::from(found.is_some()), "flag")
        }
    })
}

unsafe fn info_get_nkeys(info: Handle, nkeys: *mut c_int) -> c_int {
    call("MPI_Info_get_nkeys", MPI_COMM_SELF, || {
        let n = with_info(info, |i| Ok(i.len() as c_int))?;
        // SAFETY: the caller's output argument.
        unsafe { out(nkeys, n, "nkeys") }
    })
}

unsafe fn info_get_nthkey(info: Handle, n: c_int, key: *mut c_char) -> c_int {
    call("MPI_Info_get_nthkey", MPI_COMM_SELF, || {
        let k = with_info(info, |i| {
            usize::try_from(n)
                .ok()
                .and_then(|n| i.get(n))
                .map(|e| e.0.clone())
                .ok_or_else(|| {
                    crate::error::MpiError::new(
                        MPI_ERR_ARG,
                        format!("n = {n} is not below the number of keys, {}", i.len()),
                    )
                })
        })?;
        // SAFETY: MPI sizes the buffer MPI_MAX_INFO_KEY.
        unsafe { copy_out(key, MPI_MAX_INFO_KEY, &k) };
        Ok(())
    })
}

unsafe fn info_dup(info: Handle, newinfo: *mut Handle) -> c_int {
    call("MPI_Info_dup", MPI_COMM_SELF, || {
        let copy = with_info(info, |i| Ok(i.clone()))?;
        let h = infos::add(copy)?;
        // SAFETY: the caller's output argument.
        unsafe { out(newinfo, h, "newinfo") }
    })
}

unsafe fn info_free(info: *mut Handle) -> c_int {
    call("MPI_Info_free", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let h = unsafe { read(info, "info") }?;
        infos::free(h)?;
        // SAFETY: as above.
        unsafe { out(info, MPI_INFO_NULL, "info") }
    })
}

/// MPI_Info_create_env: a new info object holding what MPI_INFO_ENV holds.
unsafe fn info_create_env(_argc: c_int, _argv: *mut *mut c_char, info: *mut Handle) -> c_int {
    call("MPI_Info_create_env", MPI_COMM_SELF, || {
        let h = infos::add(env())?;
        // SAFETY: the caller's output argument.
        unsafe { out(info, h, "info") }
    })
}

/// MPI_Get_hw_resource_info (MPI 4.1): the hardware levels ibdyn knows, the node's shared
/// memory (what MPI_Comm_split_type's guided types accept).
unsafe fn get_hw_resource_info(info: *mut Handle) -> c_int {
    call("MPI_Get_hw_resource_info", MPI_COMM_SELF, || {
        let levels = vec![(
            "mpi_hw_resource_type".to_string(),
            "mpi_shared_memory".to_string(),
        )];
        let h = infos::add(levels)?;
        // SAFETY: the caller's output argument.
        unsafe { out(info, h, "hw_info") }
    })
}

/// The entries of info object `h` (none for MPI_INFO_NULL).
pub fn entries(h: Handle) -> MpiResult<Info> {
    if h == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    with_info(h, |i| Ok(i.clone()))
}

export!(MPI_Info_create, PMPI_Info_create, info_create, (info: *mut Handle) -> c_int);
export!(MPI_Get_hw_resource_info, PMPI_Get_hw_resource_info, get_hw_resource_info,
    (hw_info: *mut Handle) -> c_int);
export!(MPI_Info_create_env, PMPI_Info_create_env, info_create_env,
    (argc: c_int, argv: *mut *mut c_char, info: *mut Handle) -> c_int);
export!(MPI_Info_set, PMPI_Info_set, info_set,
    (info: Handle, key: *const c_char, value: *const c_char) -> c_int);
export!(MPI_Info_delete, PMPI_Info_delete, info_delete, (info: Handle, key: *const c_char) -> c_int);
export!(MPI_Info_get_string, PMPI_Info_get_string, info_get_string,
    (info: Handle, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) -> c_int);
export!(MPI_Info_get, PMPI_Info_get, info_get,
    (info: Handle, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) -> c_int);
export!(MPI_Info_get_valuelen, PMPI_Info_get_valuelen, info_get_valuelen,
    (info: Handle, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) -> c_int);
export!(MPI_Info_get_nkeys, PMPI_Info_get_nkeys, info_get_nkeys, (info: Handle, nkeys: *mut c_int) -> c_int);
export!(MPI_Info_get_nthkey, PMPI_Info_get_nthkey, info_get_nthkey,
    (info: Handle, n: c_int, key: *mut c_char) -> c_int);
export!(MPI_Info_dup, PMPI_Info_dup, info_dup, (info: Handle, newinfo: *mut Handle) -> c_int);
export!(MPI_Info_free, PMPI_Info_free, info_free, (info: *mut Handle) -> c_int);
