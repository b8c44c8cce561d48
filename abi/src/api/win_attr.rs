//! Window attributes: the predefined ones (MPI_WIN_BASE, SIZE, DISP_UNIT, CREATE_FLAVOR,
//! MODEL) and the program's own (MPI_Win_create_keyval, _free_keyval, _set_attr,
//! _get_attr, _delete_attr; deleted by MPI_Win_free). Keys share the communicators' table;
//! delete functions run outside the window (they may call MPI).

use super::attr::{call_delete, create_keyval, free_keyval};
use super::out;
use super::win::win_call;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::export;
use crate::objects::{DeleteFn, Keyval};
use crate::state::with_state;
use crate::window;
use std::os::raw::c_int;

fn keyval(k: c_int) -> MpiResult<Keyval> {
    if k == MPI_KEYVAL_INVALID {
        return err(MPI_ERR_KEYVAL, "MPI_KEYVAL_INVALID is not a keyval");
    }
    with_state(|s| s.objects.keyval(k))
}

/// Removes attribute `k` of `win`, calling its delete function. Whether it was set.
fn delete(win: Handle, k: c_int) -> MpiResult<bool> {
    let kv = keyval(k)?;
    let taken = window::with(win, |w| {
        Ok(w.attrs
            .iter()
            .position(|a| a.0 == k)
            .map(|i| w.attrs.remove(i).1))
    })?;
    match taken {
        Some(v) => {
            with_state(|s| {
                s.objects.detach(k);
                Ok(())
            })?;
            call_delete(win, k, v, kv).map(|_| true)
        }
        None => Ok(false),
    }
}

/// Deletes every attribute of `win` (MPI_Win_free), newest first.
pub(super) fn delete_all(win: Handle) -> MpiResult<()> {
    let taken = window::with(win, |w| Ok(std::mem::take(&mut w.attrs)))?;
    let keys = taken
        .iter()
        .map(|&(k, _)| keyval(k).ok())
        .collect::<Vec<_>>();
    with_state(|s| {
        taken.iter().for_each(|&(k, _)| s.objects.detach(k));
        Ok(())
    })?;
    for ((k, v), kv) in taken.into_iter().zip(keys).rev() {
        if let Some(kv) = kv {
            call_delete(win, k, v, kv)?;
        }
    }
    Ok(())
}

unsafe fn win_create_keyval(
    copy: usize,
    delete: Option<DeleteFn>,
    keyval: *mut c_int,
    extra: usize,
) -> c_int {
    // SAFETY: passed through (windows are never copied, so the copy function is not called).
    unsafe { create_keyval("MPI_Win_create_keyval", copy, delete, keyval, extra) }
}

unsafe fn win_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: passed through.
    unsafe { free_keyval("MPI_Win_free_keyval", keyval) }
}

unsafe fn win_set_attr(win: Handle, k: c_int, value: usize) -> c_int {
    win_call("MPI_Win_set_attr", win, || {
        if (MPI_WIN_BASE..=MPI_WIN_MODEL).contains(&k) {
            return err(
                MPI_ERR_KEYVAL,
                format!("attribute {k} is predefined and cannot be set"),
            );
        }
        if k == MPI_KEYVAL_INVALID {
            return err(MPI_ERR_KEYVAL, "MPI_KEYVAL_INVALID is not a keyval");
        }
        with_state(|s| s.objects.live_keyval(k))?;
        // A value set before is deleted first (its delete function runs).
        delete(win, k)?;
        window::with(win, |w| {
            w.attrs.push((k, value));
            Ok(())
        })?;
        with_state(|s| {
            s.objects.attach(k);
            Ok(())
        })
    })
}

unsafe fn win_get_attr(win: Handle, k: c_int, value: *mut usize, flag: *mut c_int) -> c_int {
    win_call("MPI_Win_get_attr", win, || {
        let predefined = (MPI_WIN_BASE..=MPI_WIN_MODEL).contains(&k);
        if !predefined {
            keyval(k)?;
        }
        let v = window::with(win, |w| {
            Ok(match k {
                MPI_WIN_BASE => Some(w.base),
                MPI_WIN_SIZE => Some(&w.size as *const isize as usize),
                MPI_WIN_DISP_UNIT => Some(&w.disp_unit as *const c_int as usize),
                MPI_WIN_CREATE_FLAVOR => Some(&w.flavor as *const c_int as usize),
                MPI_WIN_MODEL => Some(&w.model as *const c_int as usize),
                _ => w.attrs.iter().find(|a| a.0 == k).map(|a| a.1),
            })
        })?;
        // SAFETY: the caller's output arguments.
        unsafe {
            if let Some(v) = v {
                out(value, v, "attribute_val")?;
            }
            out(flag, c_int::from(v.is_some()), "flag")
        }
    })
}

unsafe fn win_delete_attr(win: Handle, k: c_int) -> c_int {
    win_call("MPI_Win_delete_attr", win, || delete(win, k).map(|_| ()))
}

export!(MPI_Win_create_keyval, PMPI_Win_create_keyval, win_create_keyval,
    (copy_fn: usize, delete_fn: Option<DeleteFn>, win_keyval: *mut c_int, extra_state: usize) -> c_int);
export!(MPI_Win_free_keyval, PMPI_Win_free_keyval, win_free_keyval, (win_keyval: *mut c_int) -> c_int);
export!(MPI_Win_set_attr, PMPI_Win_set_attr, win_set_attr,
    (win: Handle, win_keyval: c_int, attribute_val: usize) -> c_int);
export!(MPI_Win_get_attr, PMPI_Win_get_attr, win_get_attr,
    (win: Handle, win_keyval: c_int, attribute_val: *mut usize, flag: *mut c_int) -> c_int);
export!(MPI_Win_delete_attr, PMPI_Win_delete_attr, win_delete_attr,
    (win: Handle, win_keyval: c_int) -> c_int);
