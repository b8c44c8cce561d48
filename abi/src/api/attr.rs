//! Communicator names and attributes: Comm_set_name/get_name, Comm_create_keyval,
//! free_keyval, set_attr, get_attr (with the predefined TAG_UB, HOST, IO, WTIME_IS_GLOBAL,
//! APPNUM, LASTUSEDCODE, UNIVERSE_SIZE), delete_attr; attribute copies on MPI_Comm_dup.

use super::{out, out_string, read};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::{CopyFn, DeleteFn, Keyval};
use crate::state::{with_state, State};
use crate::{call, export};
use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int};

unsafe fn comm_set_name(comm: Handle, name: *const c_char) -> c_int {
    call("MPI_Comm_set_name", comm, || {
        if name.is_null() {
            return err(MPI_ERR_ARG, "comm_name is NULL");
        }
        // SAFETY: the caller's C string.
        let n = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        with_state(|s| {
            s.comm_mut(comm)?.name = n;
            Ok(())
        })
    })
}

unsafe fn comm_get_name(comm: Handle, name: *mut c_char, len: *mut c_int) -> c_int {
    call("MPI_Comm_get_name", comm, || {
        // The null handle has a name too, as in other implementations.
        let n = if comm == MPI_COMM_NULL {
            "MPI_COMM_NULL".to_string()
        } else {
            with_state(|s| Ok(s.comm(comm)?.name.clone()))?
        };
        // SAFETY: MPI sizes the buffer MPI_MAX_OBJECT_NAME.
        unsafe { out_string(name, MPI_MAX_OBJECT_NAME, len, &n) }
    })
}

/// A new attribute key of any object kind (MPI_Comm_create_keyval, MPI_Type_create_keyval).
pub(super) unsafe fn create_keyval(
    name: &str,
    copy: usize,
    delete: Option<DeleteFn>,
    keyval: *mut c_int,
    extra: usize,
) -> c_int {
    call(name, MPI_COMM_SELF, || {
        let k = with_state(|s| {
            Ok(s.objects.add_keyval(Keyval {
                copy,
                delete,
                extra,
            }))
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(keyval, k, "keyval") }
    })
}

/// Frees an attribute key of any object kind.
pub(super) unsafe fn free_keyval(name: &str, keyval: *mut c_int) -> c_int {
    call(name, MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let k = unsafe { read(keyval, "keyval") }?;
        with_state(|s| s.objects.free_keyval(k))?;
        // SAFETY: as above.
        unsafe { out(keyval, MPI_KEYVAL_INVALID, "keyval") }
    })
}

unsafe fn comm_create_keyval(
    copy: usize,
    delete: Option<DeleteFn>,
    keyval: *mut c_int,
    extra: usize,
) -> c_int {
    // SAFETY: passed through.
    unsafe { create_keyval("MPI_Comm_create_keyval", copy, delete, keyval, extra) }
}

unsafe fn comm_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: passed through.
    unsafe { free_keyval("MPI_Comm_free_keyval", keyval) }
}

/// Calls the delete function of attribute `k` (value `v`) of `comm`. User code may call MPI
/// functions, so this runs outside the state.
pub(super) fn call_delete(comm: Handle, k: c_int, v: usize, kv: Keyval) -> MpiResult<()> {
    if let Some(f) = kv.delete {
        // SAFETY: the user's delete function with the arguments MPI specifies.
        let rc = unsafe { f(comm, k, v, kv.extra) };
        if rc != MPI_SUCCESS {
            return err(
                rc,
                format!("the delete function of attribute key {k} returned {rc}"),
            );
        }
    }
    Ok(())
}

/// Removes attribute `k` of communicator `comm`, calling its delete function. Whether it was set.
fn delete(comm: Handle, k: c_int) -> MpiResult<bool> {
    let taken = with_state(|s| {
        let kv = s.objects.keyval(k)?;
        let e = s.comm_mut(comm)?;
        let Some(i) = e.attrs.iter().position(|a| a.0 == k) else {
            return Ok(None);
        };
        let v = e.attrs.remove(i).1;
        s.objects.detach(k);
        Ok(Some((v, kv)))
    })?;
    match taken {
        Some((v, kv)) => call_delete(comm, k, v, kv).map(|_| true),
        None => Ok(false),
    }
}

/// Deletes every attribute of `comm` (MPI_Comm_free, MPI_Comm_disconnect, MPI_Finalize for
/// MPI_COMM_SELF), newest first.
pub fn delete_all(comm: Handle) -> MpiResult<()> {
    let taken = with_state(|s| {
        let attrs = std::mem::take(&mut s.comm_mut(comm)?.attrs);
        Ok(attrs
            .into_iter()
            .map(|(k, v)| {
                let kv = s.objects.keyval(k).ok();
                s.objects.detach(k);
                (k, v, kv)
            })
            .collect::<Vec<_>>())
    })?;
    for (k, v, kv) in taken.into_iter().rev() {
        if let Some(kv) = kv {
            call_delete(comm, k, v, kv)?;
        }
    }
    Ok(())
}

/// Copies the attributes of `old` to `new` through their copy functions (MPI_Comm_dup).
pub fn copy_all(old: Handle, new: Handle) -> MpiResult<()> {
    let attrs = with_state(|s| {
        let a = s.comm(old)?.attrs.clone();
        Ok(a.into_iter()
            .map(|(k, v)| (k, v, s.objects.keyval(k).ok()))
            .collect::<Vec<_>>())
    })?;
    let copied = copy_values(old, attrs)?;
    with_state(|s| {
        for &(k, _) in &copied {
            s.objects.attach(k);
        }
        s.comm_mut(new)?.attrs.extend(copied);
        Ok(())
    })
}

/// Runs the copy functions of `attrs` (key, value, key's functions) of object `old`: the
/// (key, value) pairs the new object gets. Runs outside the state (user code).
pub(super) fn copy_values(
    old: Handle,
    attrs: Vec<(c_int, usize, Option<Keyval>)>,
) -> MpiResult<Vec<(c_int, usize)>> {
    let mut copied = Vec::new();
    for (k, v, kv) in attrs {
        let Some(kv) = kv else { continue };
        match kv.copy {
            0 => {}
            1 => copied.push((k, v)),
            f => {
                // SAFETY: a copy function the user registered (its address, not 0 or 1).
                let f: CopyFn = unsafe { std::mem::transmute::<usize, CopyFn>(f) };
                let (mut out_v, mut flag) = (0usize, 0);
                // SAFETY: the user's copy function with the arguments MPI specifies.
                let rc = unsafe { f(old, k, kv.extra, v, &mut out_v, &mut flag) };
                if rc != MPI_SUCCESS {
                    return err(
                        rc,
                        format!("the copy function of attribute key {k} returned {rc}"),
                    );
                }
                if flag != 0 {
                    copied.push((k, out_v));
                }
            }
        }
    }
    Ok(copied)
}

unsafe fn comm_set_attr(comm: Handle, keyval: c_int, value: usize) -> c_int {
    // SAFETY: passed through.
    unsafe { set_attr("MPI_Comm_set_attr", comm, keyval, value) }
}

/// MPI_Comm_set_attr, and its deprecated name MPI_Attr_put.
pub(super) unsafe fn set_attr(name: &str, comm: Handle, keyval: c_int, value: usize) -> c_int {
    call(name, comm, || {
        if is_predefined(keyval) {
            return err(
                MPI_ERR_KEYVAL,
                format!("attribute {keyval} is predefined and cannot be set"),
            );
        }
        with_state(|s| s.objects.live_keyval(keyval))?;
        // A value set before is deleted first (its delete function runs).
        delete(comm, keyval)?;
        with_state(|s| {
            s.comm_mut(comm)?.attrs.push((keyval, value));
            s.objects.attach(keyval);
            Ok(())
        })
    })
}

unsafe fn comm_delete_attr(comm: Handle, keyval: c_int) -> c_int {
    delete_attr("MPI_Comm_delete_attr", comm, keyval)
}

/// MPI_Comm_delete_attr, and its deprecated name MPI_Attr_delete.
pub(super) fn delete_attr(name: &str, comm: Handle, keyval: c_int) -> c_int {
    call(name, comm, || delete(comm, keyval).map(|_| ()))
}

/// Whether `k` is one of the predefined communicator attribute keys (MPI_TAG_UB ..
/// MPI_UNIVERSE_SIZE).
fn is_predefined(k: c_int) -> bool {
    (MPI_TAG_UB..=MPI_UNIVERSE_SIZE).contains(&k)
}

/// The value of predefined attribute `k` (an int the returned pointer points to).
fn predefined(s: &mut State, k: c_int) -> Option<usize> {
    let slot = match k {
        501 => 0, // MPI_TAG_UB
        502 => 1, // MPI_IO
        503 => 2, // MPI_HOST
        504 => 3, // MPI_WTIME_IS_GLOBAL
        505 => 4, // MPI_APPNUM
        506 => 5, // MPI_LASTUSEDCODE
        507 => 6, // MPI_UNIVERSE_SIZE
        _ => return None,
    };
    let world = s.comm(MPI_COMM_WORLD).ok()?.comm.raw().size();
    let appnum = std::env::var(ibdyn::pmi::env::APPNUM)
        .ok()
        .and_then(|a| a.parse().ok());
    // Written in place: pointers handed out earlier stay valid.
    let v = &mut s.objects.predefined;
    **v = [
        crate::status::TAG_UB,
        MPI_ANY_SOURCE,
        MPI_PROC_NULL,
        0,
        appnum.unwrap_or(0),
        crate::user_errors::last_used(),
        world,
        0,
    ];
    if slot == 4 && appnum.is_none() {
        return None;
    }
    Some(&v[slot] as *const c_int as usize)
}

unsafe fn comm_get_attr(comm: Handle, keyval: c_int, value: *mut usize, flag: *mut c_int) -> c_int {
    // SAFETY: passed through.
    unsafe { get_attr("MPI_Comm_get_attr", comm, keyval, value, flag) }
}

/// MPI_Comm_get_attr, and its deprecated name MPI_Attr_get.
pub(super) unsafe fn get_attr(
    name: &str,
    comm: Handle,
    keyval: c_int,
    value: *mut usize,
    flag: *mut c_int,
) -> c_int {
    call(name, comm, || {
        let found = with_state(|s| {
            s.comm(comm)?;
            if keyval == MPI_KEYVAL_INVALID {
                return err(MPI_ERR_KEYVAL, "MPI_KEYVAL_INVALID is not a keyval");
            }
            if is_predefined(keyval) {
                return Ok(predefined(s, keyval));
            }
            s.objects.keyval(keyval)?;
            Ok(s.comm(comm)?
                .attrs
                .iter()
                .find(|a| a.0 == keyval)
                .map(|a| a.1))
        })?;
        // SAFETY: the caller's output arguments.
        unsafe {
            if let Some(v) = found {
                out(value, v, "attribute_val")?;
            }
            out(flag, c_int::from(found.is_some()), "flag")
        }
    })
}

export!(MPI_Comm_set_name, PMPI_Comm_set_name, comm_set_name,
    (comm: Handle, comm_name: *const c_char) -> c_int);
export!(MPI_Comm_get_name, PMPI_Comm_get_name, comm_get_name,
    (comm: Handle, comm_name: *mut c_char, resultlen: *mut c_int) -> c_int);
export!(MPI_Comm_create_keyval, PMPI_Comm_create_keyval, comm_create_keyval,
    (copy_fn: usize, delete_fn: Option<DeleteFn>, comm_keyval: *mut c_int, extra_state: usize) -> c_int);
export!(MPI_Comm_free_keyval, PMPI_Comm_free_keyval, comm_free_keyval,
    (comm_keyval: *mut c_int) -> c_int);
export!(MPI_Comm_set_attr, PMPI_Comm_set_attr, comm_set_attr,
    (comm: Handle, comm_keyval: c_int, attribute_val: usize) -> c_int);
export!(MPI_Comm_get_attr, PMPI_Comm_get_attr, comm_get_attr,
    (comm: Handle, comm_keyval: c_int, attribute_val: *mut usize, flag: *mut c_int) -> c_int);
export!(MPI_Comm_delete_attr, PMPI_Comm_delete_attr, comm_delete_attr,
    (comm: Handle, comm_keyval: c_int) -> c_int);

const _: () = assert!(std::mem::size_of::<*mut c_void>() == std::mem::size_of::<usize>());
