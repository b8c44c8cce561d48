//! MPI_Status accessors: Status_get/set_source, tag, error, set_cancelled,
//! set_elements(_c/_x) (the byte count of the first `count` basic elements of packed
//! copies of the datatype).

use super::out;
use crate::consts::*;
use crate::derived;
use crate::error::{err, MpiResult};
use crate::status::{self, MpiStatus};
use crate::{call, export};
use std::os::raw::c_int;

/// Runs `f` on the caller's status.
fn with_status<R>(
    name: &'static str,
    st: *mut MpiStatus,
    f: impl FnOnce(&mut MpiStatus) -> MpiResult<R>,
) -> MpiResult<R> {
    // SAFETY: the caller's status (checked for NULL).
    match unsafe { st.as_mut() } {
        Some(s) => f(s),
        None => err(MPI_ERR_ARG, format!("{name}: status is NULL")),
    }
}

/// Exports a getter of one public field.
macro_rules! getter {
    ($($m:ident $pm:ident $f:ident $field:ident $name:literal;)*) => {$(
        unsafe fn $f(st: *const MpiStatus, v: *mut c_int) -> c_int {
            call($name, MPI_COMM_SELF, || {
                let x = with_status($name, st.cast_mut(), |s| Ok(s.$field))?;
                // SAFETY: the caller's output argument.
                unsafe { out(v, x, "value") }
            })
        }
        export!($m, $pm, $f, (status: *const MpiStatus, value: *mut c_int) -> c_int);
    )*};
}

/// Exports a setter of one public field.
macro_rules! setter {
    ($($m:ident $pm:ident $f:ident $field:ident $name:literal;)*) => {$(
        unsafe fn $f(st: *mut MpiStatus, v: c_int) -> c_int {
            call($name, MPI_COMM_SELF, || with_status($name, st, |s| {
                s.$field = v;
                Ok(())
            }))
        }
        export!($m, $pm, $f, (status: *mut MpiStatus, value: c_int) -> c_int);
    )*};
}

getter! {
    MPI_Status_get_source PMPI_Status_get_source status_get_source source "MPI_Status_get_source";
    MPI_Status_get_tag PMPI_Status_get_tag status_get_tag tag "MPI_Status_get_tag";
    MPI_Status_get_error PMPI_Status_get_error status_get_error error "MPI_Status_get_error";
}

setter! {
    MPI_Status_set_source PMPI_Status_set_source status_set_source source "MPI_Status_set_source";
    MPI_Status_set_tag PMPI_Status_set_tag status_set_tag tag "MPI_Status_set_tag";
    MPI_Status_set_error PMPI_Status_set_error status_set_error error "MPI_Status_set_error";
}

unsafe fn status_set_cancelled(st: *mut MpiStatus, flag: c_int) -> c_int {
    call("MPI_Status_set_cancelled", MPI_COMM_SELF, || {
        with_status("MPI_Status_set_cancelled", st, |_| Ok(()))?;
        // SAFETY: checked non-null above.
        unsafe { status::set_cancelled(st, flag != 0) };
        Ok(())
    })
}

unsafe fn set_elements(name: &'static str, st: *mut MpiStatus, ty: Handle, count: i64) -> c_int {
    call(name, MPI_COMM_SELF, || {
        let ty = derived::resolve(ty, false)?;
        let Ok(n) = u64::try_from(count) else {
            return err(MPI_ERR_COUNT, format!("count {count} is negative"));
        };
        with_status(name, st, |s| {
            s.set_count(ty.bytes_of_elements(n) as usize);
            Ok(())
        })
    })
}

unsafe fn status_set_elements(st: *mut MpiStatus, ty: Handle, count: c_int) -> c_int {
    // SAFETY: passed through.
    unsafe { set_elements("MPI_Status_set_elements", st, ty, count.into()) }
}

unsafe fn status_set_elements_c(st: *mut MpiStatus, ty: Handle, count: i64) -> c_int {
    // SAFETY: passed through.
    unsafe { set_elements("MPI_Status_set_elements_c", st, ty, count) }
}

export!(MPI_Status_set_cancelled, PMPI_Status_set_cancelled, status_set_cancelled,
    (status: *mut MpiStatus, flag: c_int) -> c_int);
export!(MPI_Status_set_elements, PMPI_Status_set_elements, status_set_elements,
    (status: *mut MpiStatus, datatype: Handle, count: c_int) -> c_int);
export!(MPI_Status_set_elements_c, PMPI_Status_set_elements_c, status_set_elements_c,
    (status: *mut MpiStatus, datatype: Handle, count: i64) -> c_int);
export!(MPI_Status_set_elements_x, PMPI_Status_set_elements_x, status_set_elements_c,
    (status: *mut MpiStatus, datatype: Handle, count: i64) -> c_int);
