//! Datatype attributes: MPI_Type_create_keyval, _free_keyval, _set_attr, _get_attr,
//! _delete_attr; MPI_Type_dup copies them through their copy functions and MPI_Type_free
//! deletes them (`copy_all`, `delete_all`). Keys share the communicators' key table.

use super::attr::{call_delete, copy_values, create_keyval, free_keyval};
use super::out;
use crate::consts::*;
use crate::derived;
use crate::error::{err, MpiResult};
use crate::objects::DeleteFn;
use crate::state::with_state;
use crate::{call, export};
use std::os::raw::c_int;

/// Removes attribute `k` of `ty`, calling its delete function. Whether it was set.
fn delete(ty: Handle, k: c_int) -> MpiResult<bool> {
    let taken = with_state(|s| {
        let kv = s.objects.keyval(k)?;
        let a = &mut s.objects.type_attrs;
        let Some(i) = a.iter().position(|e| e.0 == ty && e.1 == k) else {
            return Ok(None);
        };
        let v = a.remove(i).2;
        s.objects.detach(k);
        Ok(Some((v, kv)))
    })?;
    match taken {
        Some((v, kv)) => call_delete(ty, k, v, kv).map(|_| true),
        None => Ok(false),
    }
}

/// Deletes every attribute of `ty` (MPI_Type_free), newest first. Outside MPI (a type freed
/// after MPI_Finalize) there are none.
pub fn delete_all(ty: Handle) -> MpiResult<()> {
    let Ok(taken) = with_state(|s| {
        let mut mine = Vec::new();
        s.objects.type_attrs.retain(|&(t, k, v)| {
            let keep = t != ty;
            if !keep {
                mine.push((k, v));
            }
            keep
        });
        Ok(mine
            .into_iter()
            .map(|(k, v)| {
                let kv = s.objects.keyval(k).ok();
                s.objects.detach(k);
                (k, v, kv)
            })
            .collect::<Vec<_>>())
    }) else {
        return Ok(());
    };
    for (k, v, kv) in taken.into_iter().rev() {
        if let Some(kv) = kv {
            call_delete(ty, k, v, kv)?;
        }
    }
    Ok(())
}

/// Copies the attributes of `old` to `new` through their copy functions (MPI_Type_dup).
pub fn copy_all(old: Handle, new: Handle) -> MpiResult<()> {
    let attrs = with_state(|s| {
        Ok(s.objects
            .type_attrs
            .iter()
            .filter(|e| e.0 == old)
            .map(|&(_, k, v)| (k, v, s.objects.keyval(k).ok()))
            .collect::<Vec<_>>())
    })?;
    let copied = copy_values(old, attrs)?;
    with_state(|s| {
        for (k, v) in copied {
            s.objects.attach(k);
            s.objects.type_attrs.push((new, k, v));
        }
        Ok(())
    })
}

unsafe fn type_create_keyval(
    copy: usize,
    delete: Option<DeleteFn>,
    keyval: *mut c_int,
    extra: usize,
) -> c_int {
    // SAFETY: passed through.
    unsafe { create_keyval("MPI_Type_create_keyval", copy, delete, keyval, extra) }
}

unsafe fn type_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: passed through.
    unsafe { free_keyval("MPI_Type_free_keyval", keyval) }
}

/// Checks the datatype and the key of a datatype attribute call.
fn check(ty: Handle, keyval: c_int) -> MpiResult<()> {
    derived::resolve(ty, false)?;
    if keyval == MPI_KEYVAL_INVALID {
        return err(MPI_ERR_KEYVAL, "MPI_KEYVAL_INVALID is not a keyval");
    }
    with_state(|s| s.objects.keyval(keyval).map(|_| ()))
}

unsafe fn type_set_attr(ty: Handle, keyval: c_int, value: usize) -> c_int {
    call("MPI_Type_set_attr", MPI_COMM_SELF, || {
        check(ty, keyval)?;
        with_state(|s| s.objects.live_keyval(keyval))?;
        // A value set before is deleted first (its delete function runs).
        delete(ty, keyval)?;
        with_state(|s| {
            s.objects.type_attrs.push((ty, keyval, value));
            s.objects.attach(keyval);
            Ok(())
        })
    })
}

unsafe fn type_get_attr(ty: Handle, keyval: c_int, value: *mut usize, flag: *mut c_int) -> c_int {
    call("MPI_Type_get_attr", MPI_COMM_SELF, || {
        check(ty, keyval)?;
        let found = with_state(|s| {
            Ok(s.objects
                .type_attrs
                .iter()
                .find(|e| e.0 == ty && e.1 == keyval)
                .map(|e| e.2))
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

unsafe fn type_delete_attr(ty: Handle, keyval: c_int) -> c_int {
    call("MPI_Type_delete_attr", MPI_COMM_SELF, || {
        check(ty, keyval)?;
        delete(ty, keyval).map(|_| ())
    })
}

export!(MPI_Type_create_keyval, PMPI_Type_create_keyval, type_create_keyval,
    (copy_fn: usize, delete_fn: Option<DeleteFn>, type_keyval: *mut c_int, extra_state: usize) -> c_int);
export!(MPI_Type_free_keyval, PMPI_Type_free_keyval, type_free_keyval, (type_keyval: *mut c_int) -> c_int);
export!(MPI_Type_set_attr, PMPI_Type_set_attr, type_set_attr,
    (datatype: Handle, type_keyval: c_int, attribute_val: usize) -> c_int);
export!(MPI_Type_get_attr, PMPI_Type_get_attr, type_get_attr,
    (datatype: Handle, type_keyval: c_int, attribute_val: *mut usize, flag: *mut c_int) -> c_int);
export!(MPI_Type_delete_attr, PMPI_Type_delete_attr, type_delete_attr,
    (datatype: Handle, type_keyval: c_int) -> c_int);
