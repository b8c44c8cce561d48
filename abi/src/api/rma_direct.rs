//! One-sided operations on memory this process maps by load and store (the memory of
//! MPI_Win_allocate and MPI_Win_allocate_shared, and its own): the common cases done
//! straight on it, without the general path's buffers and type-map walks. Each returns
//! None when the call needs the general path (`super::rma`), which also reports every
//! error: a derived datatype, memory reached by cross-memory attach, a dynamic window,
//! MPI_PROC_NULL, or anything wrong.

use super::rma::{race_window, Args};
use crate::consts::*;
use crate::derived;
use crate::error::MpiResult;
use crate::window::{self, Window};
use std::ffi::c_void;
use std::os::raw::c_int;

/// Where `len` bytes at `disp` of window rank `target` are in this process, and the rank,
/// when this process maps that memory and may access it now.
fn mapped(w: &Window, target: c_int, disp: isize, len: usize) -> Option<(usize, *mut u8)> {
    let t = usize::try_from(target)
        .ok()
        .filter(|&t| t < w.peers.len())?;
    if !w.may_access(t) || w.flavor == MPI_WIN_FLAVOR_DYNAMIC {
        return None;
    }
    let p = &w.peers[t];
    let off = (disp as i64).checked_mul(p.disp_unit)?;
    let end = off.checked_add(len as i64)?;
    if off < 0 || end > p.size {
        return None;
    }
    Some((t, (w.local[t]? + off as usize) as *mut u8))
}

/// Runs `f` on the address of `size` bytes at a `mapped` target under the target's mutex
/// (a read-modify-write: an accumulate, a fetch-and-op, a compare-and-swap).
fn in_place(
    win: Handle,
    target: c_int,
    disp: isize,
    size: usize,
    f: impl FnOnce(*mut u8),
) -> Option<MpiResult<()>> {
    window::with(win, |w| {
        Ok(mapped(w, target, disp, size).map(|(t, at)| {
            w.atomically(t, || {
                f(at);
                Ok(())
            })
        }))
    })
    .ok()
    .flatten()
}

/// MPI_Put and MPI_Get of predefined datatypes at a `mapped` target: one copy. None: the
/// general path.
pub(super) fn direct(
    (buf, count, datatype): (*const c_void, i64, Handle),
    target: c_int,
    disp: isize,
    (tcount, ttype): (i64, Handle),
    win: Handle,
    to_target: bool,
) -> Option<MpiResult<()>> {
    let size = |h| predefined(h).map(|t| t.size as i64);
    let len = count.checked_mul(size(datatype)?)?;
    if count < 0 || tcount.checked_mul(size(ttype)?)? != len || buf.is_null() {
        return None;
    }
    let len = len as usize;
    window::with(win, |w| {
        Ok(mapped(w, target, disp, len).map(|(_, at)| {
            // SAFETY: `mapped` checked `len` bytes at `at` lie in the target's window memory;
            // the caller's buffer holds `len` bytes of its predefined type. `copy`: MPI
            // forbids the buffer to be this very window memory, but not other window memory.
            unsafe {
                if to_target {
                    std::ptr::copy(buf.cast::<u8>(), at, len);
                } else {
                    std::ptr::copy(at, buf.cast::<u8>().cast_mut(), len);
                }
            }
            Ok(())
        }))
    })
    .ok()
    .flatten()
}

/// What a predefined datatype is (None for a derived one, no datatype, or a pair type with
/// padding, whose elements are not their bytes one after the other).
fn predefined(datatype: Handle) -> Option<crate::datatype::TypeInfo> {
    derived::is_predefined(datatype)
        .then(|| crate::datatype::lookup(datatype).ok())
        .flatten()
        .filter(|t| t.extent == t.size)
}

/// A predefined datatype of at most 16 bytes (every type MPI allows in the calls below).
fn small_predefined(datatype: Handle) -> Option<crate::datatype::TypeInfo> {
    predefined(datatype).filter(|t| (1..=16).contains(&t.size))
}

/// MPI_Accumulate, MPI_Get_accumulate and MPI_Fetch_and_op by `in_place`: up to 64 bytes
/// of one predefined datatype at origin, result and target, and a predefined operation.
/// None: the general path.
pub(super) fn accumulate_in_place(
    (obuf, ocount, otype): Args,
    result: Option<(*mut c_void, i64, Handle)>,
    target: c_int,
    disp: isize,
    (tcount, ttype): (i64, Handle),
    op: Handle,
    win: Handle,
) -> Option<MpiResult<()>> {
    const MAX: usize = 64;
    let ty = small_predefined(ttype)?;
    let n = usize::try_from(tcount).ok()?.checked_mul(ty.size)?;
    let same = |(c, h): (i64, Handle)| c == tcount && h == ttype;
    if n == 0 || n > MAX || (op != MPI_NO_OP && (!same((ocount, otype)) || obuf.is_null())) {
        return None;
    }
    if result.is_some_and(|(b, c, h)| !same((c, h)) || b.is_null()) {
        return None;
    }
    let reduce = match op {
        MPI_NO_OP | MPI_REPLACE => None,
        op => Some(crate::ops::elementwise(op, ttype, ty.elem).ok()?),
    };
    let mut input = [0u8; MAX];
    if op != MPI_NO_OP {
        // SAFETY: `n` bytes of the caller's origin buffer (its count and type are the
        // target's).
        unsafe { std::ptr::copy_nonoverlapping(obuf.cast::<u8>(), input.as_mut_ptr(), n) };
    }
    in_place(win, target, disp, n, |at| {
        let mut cur = [0u8; MAX];
        // SAFETY: `in_place` checked `n` bytes at `at` lie in the target's mapped window
        // memory; the result buffer holds `n` bytes (MPI: disjoint from the window).
        unsafe {
            std::ptr::copy_nonoverlapping(at, cur.as_mut_ptr(), n);
            if let Some((b, _, _)) = result {
                std::ptr::copy_nonoverlapping(cur.as_ptr(), b.cast::<u8>(), n);
            }
        }
        race_window();
        if op == MPI_NO_OP {
            return;
        }
        match &reduce {
            Some(r) => r.apply(&input[..n], &mut cur[..n]),
            None => cur[..n].copy_from_slice(&input[..n]),
        }
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(cur.as_ptr(), at, n) };
    })
}

/// MPI_Compare_and_swap by `in_place` (None: the general path).
pub(super) fn compare_and_swap_in_place(
    (origin, compare, result): (*const c_void, *const c_void, *mut c_void),
    datatype: Handle,
    target: c_int,
    disp: isize,
    win: Handle,
) -> Option<MpiResult<()>> {
    let n = small_predefined(datatype)?.size;
    if origin.is_null() || compare.is_null() || result.is_null() {
        return None;
    }
    let (mut new, mut old) = ([0u8; 16], [0u8; 16]);
    // SAFETY: one element of `datatype` at each of the caller's addresses.
    unsafe {
        std::ptr::copy_nonoverlapping(origin.cast::<u8>(), new.as_mut_ptr(), n);
        std::ptr::copy_nonoverlapping(compare.cast::<u8>(), old.as_mut_ptr(), n);
    }
    in_place(win, target, disp, n, |at| {
        let mut cur = [0u8; 16];
        // SAFETY: as in `fetch_and_op_in_place`.
        unsafe {
            std::ptr::copy_nonoverlapping(at, cur.as_mut_ptr(), n);
            std::ptr::copy_nonoverlapping(cur.as_ptr(), result.cast::<u8>(), n);
            if cur[..n] == old[..n] {
                std::ptr::copy_nonoverlapping(new.as_ptr(), at, n);
            }
        }
    })
}
