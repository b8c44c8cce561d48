//! What the standard ABI lets a program tell MPI about Fortran (ibdyn has no Fortran
//! bindings of its own; a binding layer built on the ABI supplies them):
//! MPI_Abi_set/get_fortran_booleans (the bytes of .TRUE. and .FALSE. per LOGICAL size) and
//! MPI_Abi_set/get_fortran_info (the sizes and optional types of the Fortran compiler). Both
//! are kept for the process; each may be set once.

use super::out;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::infos::Info;
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Mutex;

/// A LOGICAL size's .TRUE. and .FALSE. bytes.
struct Booleans {
    size: usize,
    yes: Vec<u8>,
    no: Vec<u8>,
}

static BOOLEANS: Mutex<Vec<Booleans>> = Mutex::new(Vec::new());
static FORTRAN_INFO: Mutex<Option<Info>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere; the data stays consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn logical_size(n: c_int) -> MpiResult<usize> {
    match usize::try_from(n) {
        Ok(s) if s.is_power_of_two() && s <= 16 => Ok(s),
        _ => err(
            MPI_ERR_ARG,
            format!("logical_size {n} is not the size of a Fortran LOGICAL (1, 2, 4, 8 or 16)"),
        ),
    }
}

/// `n` bytes at `p`, an argument named `what`.
///
/// # Safety
/// `p` is NULL or points to `n` readable bytes.
unsafe fn bytes(p: *const c_void, n: usize, what: &str) -> MpiResult<Vec<u8>> {
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("the argument {what} is NULL"));
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }.to_vec())
}

unsafe fn set_fortran_booleans(size: c_int, yes: *mut c_void, no: *mut c_void) -> c_int {
    call("MPI_Abi_set_fortran_booleans", MPI_COMM_SELF, || {
        let n = logical_size(size)?;
        // SAFETY: the caller's LOGICALs of `n` bytes.
        let (yes, no) = unsafe {
            (
                bytes(yes, n, "logical_true")?,
                bytes(no, n, "logical_false")?,
            )
        };
        if yes == no {
            return err(
                MPI_ERR_ARG,
                "logical_true and logical_false are the same bytes",
            );
        }
        let mut all = lock(&BOOLEANS);
        match all.iter().find(|b| b.size == n) {
            Some(b) if b.yes == yes && b.no == no => Ok(()),
            Some(_) => err(
                MPI_ERR_ABI,
                format!("the values of LOGICALs of {n} bytes are set already, to others"),
            ),
            None => {
                all.push(Booleans { size: n, yes, no });
                Ok(())
            }
        }
    })
}

unsafe fn get_fortran_booleans(
    size: c_int,
    yes: *mut c_void,
    no: *mut c_void,
    is_set: *mut c_int,
) -> c_int {
    call("MPI_Abi_get_fortran_booleans", MPI_COMM_SELF, || {
        let n = logical_size(size)?;
        let all = lock(&BOOLEANS);
        let Some(b) = all.iter().find(|b| b.size == n) else {
            // SAFETY: the caller's output argument.
            return unsafe { out(is_set, 0, "is_set") };
        };
        if yes.is_null() || no.is_null() {
            return err(MPI_ERR_ARG, "logical_true or logical_false is NULL");
        }
        // SAFETY: the caller's LOGICALs of `n` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(b.yes.as_ptr(), yes.cast::<u8>(), n);
            std::ptr::copy_nonoverlapping(b.no.as_ptr(), no.cast::<u8>(), n);
            out(is_set, 1, "is_set")
        }
    })
}

unsafe fn set_fortran_info(info: Handle) -> c_int {
    call("MPI_Abi_set_fortran_info", MPI_COMM_SELF, || {
        if info == MPI_INFO_NULL {
            return err(MPI_ERR_INFO, "MPI_INFO_NULL holds no Fortran details");
        }
        let copy = crate::infos::get(info)?;
        let mut kept = lock(&FORTRAN_INFO);
        if kept.is_some() {
            return err(
                MPI_ERR_ABI,
                "the Fortran details are set already (MPI_Abi_set_fortran_info may be called once)",
            );
        }
        *kept = Some(copy);
        Ok(())
    })
}

/// A new info object with what MPI_Abi_set_fortran_info gave, or MPI_INFO_NULL.
unsafe fn get_fortran_info(info: *mut Handle) -> c_int {
    call("MPI_Abi_get_fortran_info", MPI_COMM_SELF, || {
        let kept = lock(&FORTRAN_INFO).clone();
        let h = match kept {
            Some(i) => crate::infos::add(i)?,
            None => MPI_INFO_NULL,
        };
        // SAFETY: the caller's output argument.
        unsafe { out(info, h, "info") }
    })
}

export!(MPI_Abi_set_fortran_booleans, PMPI_Abi_set_fortran_booleans, set_fortran_booleans,
    (logical_size: c_int, logical_true: *mut c_void, logical_false: *mut c_void) -> c_int);
export!(MPI_Abi_get_fortran_booleans, PMPI_Abi_get_fortran_booleans, get_fortran_booleans,
    (logical_size: c_int, logical_true: *mut c_void, logical_false: *mut c_void,
     is_set: *mut c_int) -> c_int);
export!(MPI_Abi_set_fortran_info, PMPI_Abi_set_fortran_info, set_fortran_info,
    (info: Handle) -> c_int);
export!(MPI_Abi_get_fortran_info, PMPI_Abi_get_fortran_info, get_fortran_info,
    (info: *mut Handle) -> c_int);
