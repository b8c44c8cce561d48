//! MPI_Alloc_mem and MPI_Free_mem. Every buffer can be sent from or received into, and
//! registration for the fabric happens per transfer, so the memory is plain heap memory;
//! the info hints are checked and not used.

use super::out;
use crate::consts::*;
use crate::error::err;
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;

unsafe fn alloc_mem(size: isize, info: Handle, baseptr: *mut *mut c_void) -> c_int {
    call("MPI_Alloc_mem", MPI_COMM_SELF, || {
        let Ok(n) = usize::try_from(size) else {
            return err(
                MPI_ERR_SIZE,
                format!("MPI_Alloc_mem: size {size} is negative"),
            );
        };
        super::info::entries(info)?;
        // A zero-byte request still gets a unique pointer MPI_Free_mem can take back.
        // SAFETY: malloc has no preconditions.
        let p = unsafe { libc::malloc(n.max(1)) };
        if p.is_null() {
            return err(
                MPI_ERR_NO_MEM,
                format!("MPI_Alloc_mem: {n} bytes could not be allocated"),
            );
        }
        // SAFETY: the caller's output argument (a pointer to the pointer to set).
        unsafe { out(baseptr, p, "baseptr") }
    })
}

unsafe fn free_mem(base: *mut c_void) -> c_int {
    call("MPI_Free_mem", MPI_COMM_SELF, || {
        // SAFETY: `base` came from MPI_Alloc_mem (malloc), or is NULL, which free ignores.
        unsafe { libc::free(base) };
        Ok(())
    })
}

export!(MPI_Alloc_mem, PMPI_Alloc_mem, alloc_mem,
    (size: isize, info: Handle, baseptr: *mut *mut c_void) -> c_int);
export!(MPI_Free_mem, PMPI_Free_mem, free_mem, (base: *mut c_void) -> c_int);
