//! Packing into a user's buffer: MPI_Pack, MPI_Unpack, MPI_Pack_size and their `_c` forms.
//! The packed form is the type map's bytes in order, as communication sends them, so a
//! buffer packed here can be sent as MPI_PACKED and received into the original type, and
//! the other way round.

use super::buffers::byte_len;
use super::{out, read};
use crate::consts::*;
use crate::derived::{self, Ty};
use crate::error::{err, MpiResult};
use crate::state::with_state;
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;

fn valid_comm(comm: Handle) -> MpiResult<()> {
    with_state(|s| s.comm(comm).map(|_| ()))
}

/// The byte range [position, position + len) of a user's buffer of `size` bytes, or an error
/// saying what does not fit.
pub(super) fn window(position: i64, len: usize, size: i64, what: &str) -> MpiResult<usize> {
    let (Ok(pos), Ok(size)) = (usize::try_from(position), usize::try_from(size)) else {
        return err(
            MPI_ERR_ARG,
            format!("position {position} and size {size} must not be negative"),
        );
    };
    match pos.checked_add(len) {
        Some(end) if end <= size => Ok(pos),
        _ => err(
            MPI_ERR_TRUNCATE,
            format!("{what}: {len} bytes from position {pos} do not fit a buffer of {size} bytes"),
        ),
    }
}

/// Packs `count` elements of `ty` at `inbuf` into `outbuf` (of `outsize` bytes) at
/// `position`; returns the new position.
///
/// # Safety
/// `inbuf` holds the elements; `outbuf` is writable for `outsize` bytes.
unsafe fn pack_into(
    inbuf: *const c_void,
    count: i64,
    ty: &Ty,
    outbuf: *mut c_void,
    outsize: i64,
    position: i64,
) -> MpiResult<i64> {
    let len = byte_len(count, ty)?;
    let pos = window(position, len, outsize, "packing")?;
    if len == 0 {
        return Ok(position);
    }
    if outbuf.is_null() {
        return err(MPI_ERR_BUFFER, "outbuf is NULL");
    }
    if ty.contiguous() && inbuf.is_null() {
        return err(MPI_ERR_BUFFER, format!("inbuf is NULL for {len} bytes"));
    }
    // SAFETY: the caller's contract: `outbuf` holds `outsize` >= pos + len bytes.
    let dest = unsafe { std::slice::from_raw_parts_mut(outbuf.cast::<u8>().add(pos), len) };
    if ty.contiguous() {
        // SAFETY: `len` readable bytes at `inbuf` (the caller's contract); MPI forbids the
        // two buffers to overlap.
        unsafe { std::ptr::copy_nonoverlapping(inbuf.cast::<u8>(), dest.as_mut_ptr(), len) };
    } else {
        // SAFETY: the type map of `count` elements at `inbuf` is readable (MPI_BOTTOM is
        // address 0 plus absolute displacements).
        unsafe { ty.pack(inbuf.cast(), count as usize, dest) };
    }
    Ok(position + len as i64)
}

/// Unpacks `count` elements of `ty` from `inbuf` (of `insize` bytes) at `position` into
/// `outbuf`; returns the new position.
///
/// # Safety
/// `inbuf` is readable for `insize` bytes; `outbuf` holds the elements, writable.
unsafe fn unpack_from(
    inbuf: *const c_void,
    insize: i64,
    position: i64,
    outbuf: *mut c_void,
    count: i64,
    ty: &Ty,
) -> MpiResult<i64> {
    let len = byte_len(count, ty)?;
    let pos = window(position, len, insize, "unpacking")?;
    if len == 0 {
        return Ok(position);
    }
    if inbuf.is_null() {
        return err(MPI_ERR_BUFFER, "inbuf is NULL");
    }
    if ty.contiguous() && outbuf.is_null() {
        return err(MPI_ERR_BUFFER, format!("outbuf is NULL for {len} bytes"));
    }
    // SAFETY: the caller's contract: `inbuf` holds `insize` >= pos + len bytes.
    let src = unsafe { std::slice::from_raw_parts(inbuf.cast::<u8>().add(pos), len) };
    if ty.contiguous() {
        // SAFETY: `len` writable bytes at `outbuf`; the buffers do not overlap (MPI's rule).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), outbuf.cast::<u8>(), len) };
    } else {
        // SAFETY: the type map of the elements at `outbuf` is writable.
        unsafe { ty.unpack(src, outbuf.cast()) };
    }
    Ok(position + len as i64)
}

unsafe fn pack_c(
    inbuf: *const c_void,
    incount: i64,
    datatype: Handle,
    outbuf: *mut c_void,
    outsize: i64,
    position: *mut i64,
    comm: Handle,
) -> c_int {
    call("MPI_Pack_c", comm, || {
        valid_comm(comm)?;
        let ty = derived::resolve(datatype, true)?;
        // SAFETY: the caller's arguments, as MPI_Pack_c specifies them.
        unsafe {
            let at = read(position, "position")?;
            let at = pack_into(inbuf, incount, &ty, outbuf, outsize, at)?;
            out(position, at, "position")
        }
    })
}

unsafe fn pack(
    inbuf: *const c_void,
    incount: c_int,
    datatype: Handle,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    comm: Handle,
) -> c_int {
    call("MPI_Pack", comm, || {
        valid_comm(comm)?;
        let ty = derived::resolve(datatype, true)?;
        // SAFETY: the caller's arguments, as MPI_Pack specifies them.
        unsafe {
            let at = read(position, "position")?.into();
            let at = pack_into(inbuf, incount.into(), &ty, outbuf, outsize.into(), at)?;
            // Within `outsize`, an int.
            out(position, at as c_int, "position")
        }
    })
}

unsafe fn unpack_c(
    inbuf: *const c_void,
    insize: i64,
    position: *mut i64,
    outbuf: *mut c_void,
    outcount: i64,
    datatype: Handle,
    comm: Handle,
) -> c_int {
    call("MPI_Unpack_c", comm, || {
        valid_comm(comm)?;
        let ty = derived::resolve(datatype, true)?;
        // SAFETY: the caller's arguments, as MPI_Unpack_c specifies them.
        unsafe {
            let at = read(position, "position")?;
            let at = unpack_from(inbuf, insize, at, outbuf, outcount, &ty)?;
            out(position, at, "position")
        }
    })
}

unsafe fn unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: Handle,
    comm: Handle,
) -> c_int {
    call("MPI_Unpack", comm, || {
        valid_comm(comm)?;
        let ty = derived::resolve(datatype, true)?;
        // SAFETY: the caller's arguments, as MPI_Unpack specifies them.
        unsafe {
            let at = read(position, "position")?.into();
            let at = unpack_from(inbuf, insize.into(), at, outbuf, outcount.into(), &ty)?;
            // Within `insize`, an int.
            out(position, at as c_int, "position")
        }
    })
}

/// The bytes MPI_Pack needs for `count` elements of `datatype`.
fn packed_len(count: i64, datatype: Handle, comm: Handle) -> MpiResult<usize> {
    valid_comm(comm)?;
    byte_len(count, &derived::resolve(datatype, false)?)
}

unsafe fn pack_size(incount: c_int, datatype: Handle, comm: Handle, size: *mut c_int) -> c_int {
    call("MPI_Pack_size", comm, || {
        let n = packed_len(incount.into(), datatype, comm)?;
        let Ok(n) = c_int::try_from(n) else {
            return err(
                MPI_ERR_COUNT,
                format!("{n} bytes do not fit an int: use MPI_Pack_size_c"),
            );
        };
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

unsafe fn pack_size_c(incount: i64, datatype: Handle, comm: Handle, size: *mut i64) -> c_int {
    call("MPI_Pack_size_c", comm, || {
        let n = packed_len(incount, datatype, comm)?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n as i64, "size") }
    })
}

export!(MPI_Pack, PMPI_Pack, pack,
    (inbuf: *const c_void, incount: c_int, datatype: Handle, outbuf: *mut c_void,
     outsize: c_int, position: *mut c_int, comm: Handle) -> c_int);
export!(MPI_Pack_c, PMPI_Pack_c, pack_c,
    (inbuf: *const c_void, incount: i64, datatype: Handle, outbuf: *mut c_void,
     outsize: i64, position: *mut i64, comm: Handle) -> c_int);
export!(MPI_Unpack, PMPI_Unpack, unpack,
    (inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void,
     outcount: c_int, datatype: Handle, comm: Handle) -> c_int);
export!(MPI_Unpack_c, PMPI_Unpack_c, unpack_c,
    (inbuf: *const c_void, insize: i64, position: *mut i64, outbuf: *mut c_void,
     outcount: i64, datatype: Handle, comm: Handle) -> c_int);
export!(MPI_Pack_size, PMPI_Pack_size, pack_size,
    (incount: c_int, datatype: Handle, comm: Handle, size: *mut c_int) -> c_int);
export!(MPI_Pack_size_c, PMPI_Pack_size_c, pack_size_c,
    (incount: i64, datatype: Handle, comm: Handle, size: *mut i64) -> c_int);
