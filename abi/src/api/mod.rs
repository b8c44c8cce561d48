//! The exported MPI functions, by group, and the pointer helpers they share.

mod abi_fortran;
mod attr;
mod attr_deprecated;
mod bsend_buffers;
pub(crate) mod buffers;
mod cart;
pub(crate) mod coll;
mod comm;
mod comm_group;
mod comm_info;
mod convert;
mod darray;
mod dynamic;
mod envelope;
mod errors;
mod extensions_x;
mod f90;
mod file;
mod file_io;
mod file_two_phase;
mod graph;
mod grequest;
mod group;
mod info;
mod init;
mod inter_split;
mod isendrecv;
pub(crate) mod large;
pub(crate) mod large_types;
mod mem;
mod p2p;
mod p2p_multiple;
mod pack;
mod pack_external;
mod partitioned;
mod request;
mod request_status;
mod rma;
mod rma_remote;

pub(crate) use rma_remote::Remote;
mod rma_direct;
mod selfcall;
mod session;
mod session_dyn;
mod session_errors;
mod split_type;
mod status_fields;
mod stubs;
mod subarray;
mod tool;
mod topo;
mod type_attr;
mod type_match;
mod types;
mod user_errors;
mod win;
mod win_attr;
mod win_sync;

use crate::consts::*;
use crate::error::{err, MpiResult};
use std::os::raw::c_int;

/// Writes `v` through the output argument `p`.
///
/// # Safety
/// `p` is null (an error) or valid for a write of `T`.
unsafe fn out<T>(p: *mut T, v: T, what: &str) -> MpiResult<()> {
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("the output argument {what} is NULL"));
    }
    // SAFETY: non-null, and valid for writes by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// A copy of the caller's array of `n` entries (empty for n == 0; NULL otherwise is an error).
///
/// # Safety
/// `p` is valid for `n` reads when `n > 0`.
pub(crate) unsafe fn read_array<T: Copy>(p: *const T, n: usize, what: &str) -> MpiResult<Vec<T>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: non-null and valid for n reads by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

/// Reads the in/out argument `p`.
///
/// # Safety
/// `p` is null (an error) or valid for a read of `T`.
unsafe fn read<T: Copy>(p: *const T, what: &str) -> MpiResult<T> {
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("the argument {what} is NULL"));
    }
    // SAFETY: non-null, and valid for reads by the caller's contract.
    Ok(unsafe { p.read() })
}

/// Copies `s` into the C string buffer `buf` (NUL-terminated, at most `cap` bytes with the
/// NUL) and stores its length in `len` (unless `len` is NULL).
///
/// # Safety
/// `buf` is valid for `cap` bytes; `len` is valid for a write.
unsafe fn out_string(
    buf: *mut std::os::raw::c_char,
    cap: usize,
    len: *mut c_int,
    s: &str,
) -> MpiResult<()> {
    if buf.is_null() {
        return err(MPI_ERR_ARG, "the output string buffer is NULL");
    }
    let n = s.len().min(cap - 1);
    // SAFETY: the caller's buffer holds `cap` > n bytes; the source is `s`, n bytes long.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
        if len.is_null() {
            return Ok(());
        }
        out(len, n as c_int, "resultlen")
    }
}
