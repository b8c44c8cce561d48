//! Communication buffers of `count` elements of a datatype: the caller's memory itself for a
//! contiguous type (no copy), a packed copy for any other.

use crate::consts::*;
use crate::derived::{self, Ty};
use crate::error::{err, MpiResult};
use std::ffi::c_void;

/// The byte length of `count` elements of `ty`.
pub fn byte_len(count: i64, ty: &Ty) -> MpiResult<usize> {
    let Ok(n) = usize::try_from(count) else {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    };
    match n.checked_mul(ty.size) {
        Some(len) if len <= isize::MAX as usize => Ok(len),
        _ => err(
            MPI_ERR_COUNT,
            format!(
                "count {count} of {}-byte elements overflows the address space",
                ty.size
            ),
        ),
    }
}

/// The byte length of `count` elements of `ty` at `buf`, checked as a send or a receive
/// checks its buffer: the count, and no MPI_IN_PLACE or (for a contiguous type) NULL where
/// there are bytes to move.
pub fn checked_len<T>(buf: *const T, count: i64, ty: &Ty) -> MpiResult<usize> {
    let len = byte_len(count, ty)?;
    if len > 0 && buf as usize == MPI_IN_PLACE {
        return err(MPI_ERR_BUFFER, "MPI_IN_PLACE is not a buffer here");
    }
    if len > 0 && ty.contiguous() && buf.is_null() {
        return err(MPI_ERR_BUFFER, format!("buffer is NULL for {len} bytes"));
    }
    Ok(len)
}

/// Data to send.
pub enum SendBuf<'a> {
    Direct(&'a [u8]),
    Packed(Vec<u8>),
}

impl std::ops::Deref for SendBuf<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SendBuf::Direct(b) => b,
            SendBuf::Packed(v) => v,
        }
    }
}

/// `count` elements of datatype `h` at `buf`, to send.
///
/// # Safety
/// `buf` holds `count` elements of the type that stay valid and unchanged for `'a`.
pub unsafe fn send_buf<'a>(buf: *const c_void, count: i64, h: Handle) -> MpiResult<SendBuf<'a>> {
    let ty = derived::resolve(h, true)?;
    // SAFETY: passed through.
    unsafe { send_buf_of(buf, count, &ty) }
}

/// As `send_buf`, for a resolved type.
///
/// # Safety
/// As `send_buf`.
pub unsafe fn send_buf_of<'a>(buf: *const c_void, count: i64, ty: &Ty) -> MpiResult<SendBuf<'a>> {
    let len = checked_len(buf, count, ty)?;
    if len == 0 {
        return Ok(SendBuf::Direct(&[]));
    }
    if ty.contiguous() {
        // SAFETY: the caller's contract: `len` readable bytes at `buf` for 'a.
        return Ok(SendBuf::Direct(unsafe {
            std::slice::from_raw_parts(buf.cast::<u8>(), len)
        }));
    }
    let mut v = vec![0u8; len];
    // SAFETY: the caller's contract (MPI_BOTTOM is address 0 plus absolute offsets).
    unsafe { ty.pack(buf.cast(), count as usize, &mut v) };
    Ok(SendBuf::Packed(v))
}

/// A non-contiguous receive: the bytes arrive in `temp`, then go to the type map at `base`.
pub struct Staged {
    temp: Vec<u8>,
    base: *mut u8,
    ty: Ty,
}

impl Staged {
    /// The staging bytes, for a request to receive into until it completes.
    ///
    /// # Safety
    /// The slice is used only while `self` lives and is not otherwise touched.
    pub unsafe fn bytes_static(&mut self) -> &'static mut [u8] {
        // SAFETY: the Vec's heap block does not move when the Staged moves; the caller
        // keeps the Staged alive for as long as it uses the slice.
        unsafe { std::slice::from_raw_parts_mut(self.temp.as_mut_ptr(), self.temp.len()) }
    }

    /// Writes the first `n` received bytes to the caller's memory.
    ///
    /// # Safety
    /// The caller's memory at `base` is still valid for the type map (MPI's rule).
    pub unsafe fn finish(self, n: usize) {
        let n = n.min(self.temp.len());
        // SAFETY: as above.
        unsafe { self.ty.unpack(&self.temp[..n], self.base) }
    }
}

/// Memory to receive into.
pub enum RecvBuf<'a> {
    Direct(&'a mut [u8]),
    Staged(Staged),
    /// Bytes nobody reads (a root's own block of a scatter in place).
    Scratch(Vec<u8>),
}

impl RecvBuf<'_> {
    pub fn bytes(&mut self) -> &mut [u8] {
        match self {
            RecvBuf::Direct(b) => b,
            RecvBuf::Staged(s) => &mut s.temp,
            RecvBuf::Scratch(v) => v,
        }
    }

    /// Delivers the first `n` bytes received (a no-op for direct memory).
    pub fn finish(self, n: usize) {
        if let RecvBuf::Staged(s) = self {
            // SAFETY: the buffer came from the caller for this call, still valid.
            unsafe { s.finish(n) }
        }
    }
}

/// `count` elements of datatype `h` at `buf`, to receive into.
///
/// # Safety
/// `buf` holds `count` writable elements of the type that nothing else touches for `'a`.
pub unsafe fn recv_buf<'a>(buf: *mut c_void, count: i64, h: Handle) -> MpiResult<RecvBuf<'a>> {
    let ty = derived::resolve(h, true)?;
    // SAFETY: passed through.
    unsafe { recv_buf_of(buf, count, ty, false) }
}

/// As `recv_buf`, for a resolved type; with `load`, the staging copy starts with the
/// memory's current contents (for MPI_IN_PLACE).
///
/// # Safety
/// As `recv_buf`.
pub unsafe fn recv_buf_of<'a>(
    buf: *mut c_void,
    count: i64,
    ty: Ty,
    load: bool,
) -> MpiResult<RecvBuf<'a>> {
    let len = checked_len(buf, count, &ty)?;
    if len == 0 {
        return Ok(RecvBuf::Direct(&mut []));
    }
    if ty.contiguous() {
        // SAFETY: the caller's contract: `len` writable bytes at `buf`, not aliased, for 'a.
        return Ok(RecvBuf::Direct(unsafe {
            std::slice::from_raw_parts_mut(buf.cast::<u8>(), len)
        }));
    }
    let mut temp = vec![0u8; len];
    if load {
        // SAFETY: the caller's memory, readable for the type map.
        unsafe { ty.pack(buf.cast(), count as usize, &mut temp) };
    }
    Ok(RecvBuf::Staged(Staged {
        temp,
        base: buf.cast(),
        ty,
    }))
}
