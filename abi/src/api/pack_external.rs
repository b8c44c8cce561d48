//! MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size (and `_c`): the portable
//! "external32" representation of the predefined datatypes: big-endian, with `long` and
//! `unsigned long` in 4 bytes and `wchar_t` in 2 (as MPICH writes them), complex numbers as
//! two big-endian halves. Derived datatypes, `long double` and the value-index pairs are
//! refused by name (MPI_ERR_TYPE).

use super::{out, read};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::{call, datatype, export};
use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int};

/// How one element of a predefined type looks in external32.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ext {
    native: usize,
    ext: usize,
    /// Bytes reversed together (a complex number's half).
    unit: usize,
    signed: bool,
}

fn ext32(h: Handle) -> MpiResult<Ext> {
    let n = datatype::lookup(h).map_err(|_| {
        crate::error::MpiError::new(
            MPI_ERR_TYPE,
            format!("{h:#x}: external32 packing takes predefined datatypes (a derived type: pack its elements one predefined type at a time)"),
        )
    })?.size;
    let e = |ext, unit, signed| {
        Ok(Ext {
            native: n,
            ext,
            unit,
            signed,
        })
    };
    match h {
        0x20a => e(4, 4, true),                                 // MPI_LONG
        0x20e => e(4, 4, false),                                // MPI_UNSIGNED_LONG
        0x23c => e(2, 2, false),                                // MPI_WCHAR
        0x212 | 0x213 | 0x216 | 0x217 | 0x21b | 0x21d | 0x2d3 | 0x2db => e(n, n / 2, false), // complex
        0x220 | 0x224 | 0x225 | 0x22d | 0x2ca | 0x2e0..=0x2e3 | 0x2eb => err(
            MPI_ERR_TYPE,
            format!("{}: ibdyn has no external32 conversion for long double, 16-byte or 2-byte real kinds", datatype::name(h)),
        ),
        0x228..=0x22c | 0x230..=0x232 => err(
            MPI_ERR_TYPE,
            format!("{}: pack the value-index pair's two parts separately for external32", datatype::name(h)),
        ),
        _ => e(n, n, false),
    }
}

fn check_rep(datarep: *const c_char) -> MpiResult<()> {
    if datarep.is_null() {
        return err(MPI_ERR_ARG, "datarep is NULL");
    }
    // SAFETY: the caller's C string.
    let rep = unsafe { CStr::from_ptr(datarep) }.to_string_lossy();
    if rep != "external32" {
        return err(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!("data representation {rep:?}: these functions take \"external32\""),
        );
    }
    Ok(())
}

/// Converts one native element (little-endian) to external32.
fn to_ext(x: Ext, native: &[u8], out: &mut [u8]) {
    for (o, i) in out
        .chunks_exact_mut(x.unit)
        .zip(native.chunks(x.native / (x.ext / x.unit)))
    {
        for (k, b) in o.iter_mut().enumerate() {
            *b = i[x.unit - 1 - k];
        }
    }
}

/// Converts one external32 element back (sign- or zero-extended where it is narrower).
fn from_ext(x: Ext, ext: &[u8], native: &mut [u8]) {
    let parts = x.ext / x.unit;
    let nunit = x.native / parts;
    for (n, e) in native.chunks_exact_mut(nunit).zip(ext.chunks_exact(x.unit)) {
        for k in 0..x.unit {
            n[k] = e[x.unit - 1 - k];
        }
        let fill = if x.signed && e[0] & 0x80 != 0 {
            0xff
        } else {
            0
        };
        n[x.unit..].iter_mut().for_each(|b| *b = fill);
    }
}

/// The checks of a packing or unpacking call of `count` elements of `ty` at `pos` of a
/// packed buffer of `size` bytes: the element layout, the count and the position.
fn plan(
    rep: *const c_char,
    ty: Handle,
    count: i64,
    pos: i64,
    size: i64,
    buffers: [*const c_void; 2],
    what: &str,
) -> MpiResult<(Ext, usize, usize)> {
    check_rep(rep)?;
    let x = ext32(ty)?;
    let Ok(n) = usize::try_from(count) else {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    };
    let p = super::pack::window(pos, n * x.ext, size, what)?;
    if n > 0 && buffers.iter().any(|b| b.is_null()) {
        return err(MPI_ERR_BUFFER, "a buffer is NULL");
    }
    Ok((x, n, p))
}

fn pack_ext(
    rep: *const c_char,
    inbuf: *const c_void,
    count: i64,
    ty: Handle,
    outbuf: *mut c_void,
    outsize: i64,
    pos: i64,
) -> MpiResult<i64> {
    let (x, n, p) = plan(
        rep,
        ty,
        count,
        pos,
        outsize,
        [inbuf, outbuf.cast_const()],
        "packing",
    )?;
    for i in 0..n {
        // SAFETY: the caller's buffers: `count` elements in, `outsize` bytes out.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(inbuf.cast::<u8>().add(i * x.native), x.native),
                std::slice::from_raw_parts_mut(outbuf.cast::<u8>().add(p + i * x.ext), x.ext),
            )
        };
        to_ext(x, src, dst);
    }
    Ok(pos + (n * x.ext) as i64)
}

fn unpack_ext(
    rep: *const c_char,
    inbuf: *const c_void,
    insize: i64,
    pos: i64,
    outbuf: *mut c_void,
    count: i64,
    ty: Handle,
) -> MpiResult<i64> {
    let (x, n, p) = plan(
        rep,
        ty,
        count,
        pos,
        insize,
        [inbuf, outbuf.cast_const()],
        "unpacking",
    )?;
    for i in 0..n {
        // SAFETY: the caller's buffers: `insize` bytes in, `count` elements out.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(inbuf.cast::<u8>().add(p + i * x.ext), x.ext),
                std::slice::from_raw_parts_mut(outbuf.cast::<u8>().add(i * x.native), x.native),
            )
        };
        from_ext(x, src, dst);
    }
    Ok(pos + (n * x.ext) as i64)
}

#[allow(clippy::too_many_arguments)]
unsafe fn pack_external(
    rep: *const c_char,
    inbuf: *const c_void,
    incount: c_int,
    ty: Handle,
    outbuf: *mut c_void,
    outsize: isize,
    position: *mut isize,
) -> c_int {
    call("MPI_Pack_external", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let at = unsafe { read(position, "position") }? as i64;
        let at = pack_ext(rep, inbuf, incount.into(), ty, outbuf, outsize as i64, at)?;
        // SAFETY: as above.
        unsafe { out(position, at as isize, "position") }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn pack_external_c(
    rep: *const c_char,
    inbuf: *const c_void,
    incount: i64,
    ty: Handle,
    outbuf: *mut c_void,
    outsize: i64,
    position: *mut i64,
) -> c_int {
    call("MPI_Pack_external_c", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let at = unsafe { read(position, "position") }?;
        let at = pack_ext(rep, inbuf, incount, ty, outbuf, outsize, at)?;
        // SAFETY: as above.
        unsafe { out(position, at, "position") }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn unpack_external(
    rep: *const c_char,
    inbuf: *const c_void,
    insize: isize,
    position: *mut isize,
    outbuf: *mut c_void,
    outcount: c_int,
    ty: Handle,
) -> c_int {
    call("MPI_Unpack_external", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let at = unsafe { read(position, "position") }? as i64;
        let at = unpack_ext(rep, inbuf, insize as i64, at, outbuf, outcount.into(), ty)?;
        // SAFETY: as above.
        unsafe { out(position, at as isize, "position") }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn unpack_external_c(
    rep: *const c_char,
    inbuf: *const c_void,
    insize: i64,
    position: *mut i64,
    outbuf: *mut c_void,
    outcount: i64,
    ty: Handle,
) -> c_int {
    call("MPI_Unpack_external_c", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let at = unsafe { read(position, "position") }?;
        let at = unpack_ext(rep, inbuf, insize, at, outbuf, outcount, ty)?;
        // SAFETY: as above.
        unsafe { out(position, at, "position") }
    })
}

fn ext_size(rep: *const c_char, count: i64, ty: Handle) -> MpiResult<i64> {
    check_rep(rep)?;
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    }
    Ok(count * ext32(ty)?.ext as i64)
}

unsafe fn pack_external_size(
    rep: *const c_char,
    incount: c_int,
    ty: Handle,
    size: *mut isize,
) -> c_int {
    call("MPI_Pack_external_size", MPI_COMM_SELF, || {
        let n = ext_size(rep, incount.into(), ty)?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n as isize, "size") }
    })
}

unsafe fn pack_external_size_c(
    rep: *const c_char,
    incount: i64,
    ty: Handle,
    size: *mut i64,
) -> c_int {
    call("MPI_Pack_external_size_c", MPI_COMM_SELF, || {
        let n = ext_size(rep, incount, ty)?;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

export!(MPI_Pack_external, PMPI_Pack_external, pack_external,
    (datarep: *const c_char, inbuf: *const c_void, incount: c_int, datatype: Handle,
     outbuf: *mut c_void, outsize: isize, position: *mut isize) -> c_int);
export!(MPI_Pack_external_c, PMPI_Pack_external_c, pack_external_c,
    (datarep: *const c_char, inbuf: *const c_void, incount: i64, datatype: Handle,
     outbuf: *mut c_void, outsize: i64, position: *mut i64) -> c_int);
export!(MPI_Unpack_external, PMPI_Unpack_external, unpack_external,
    (datarep: *const c_char, inbuf: *const c_void, insize: isize, position: *mut isize,
     outbuf: *mut c_void, outcount: c_int, datatype: Handle) -> c_int);
export!(MPI_Unpack_external_c, PMPI_Unpack_external_c, unpack_external_c,
    (datarep: *const c_char, inbuf: *const c_void, insize: i64, position: *mut i64,
     outbuf: *mut c_void, outcount: i64, datatype: Handle) -> c_int);
export!(MPI_Pack_external_size, PMPI_Pack_external_size, pack_external_size,
    (datarep: *const c_char, incount: c_int, datatype: Handle, size: *mut isize) -> c_int);
export!(MPI_Pack_external_size_c, PMPI_Pack_external_size_c, pack_external_size_c,
    (datarep: *const c_char, incount: i64, datatype: Handle, size: *mut i64) -> c_int);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external32_is_big_endian_and_long_is_four_bytes() {
        let _owner = ibdyn_owner::enter();
        let x = ext32(0x20a).unwrap();
        let mut out = [0u8; 4];
        to_ext(x, &(-2i64).to_le_bytes(), &mut out);
        assert_eq!(out, [0xff, 0xff, 0xff, 0xfe]);
        let mut back = [0u8; 8];
        from_ext(x, &out, &mut back);
        assert_eq!(i64::from_le_bytes(back), -2);
        let i = ext32(0x209).unwrap();
        let mut o4 = [0u8; 4];
        to_ext(i, &0x0102_0304i32.to_le_bytes(), &mut o4);
        assert_eq!(o4, [1, 2, 3, 4]);
    }

    #[test]
    fn a_complex_number_is_two_big_endian_halves() {
        let _owner = ibdyn_owner::enter();
        let c = ext32(0x212).unwrap();
        let native: Vec<u8> = [1.0f32.to_le_bytes(), 2.0f32.to_le_bytes()].concat();
        let mut out = [0u8; 8];
        to_ext(c, &native, &mut out);
        assert_eq!(&out[..4], &1.0f32.to_be_bytes());
        assert_eq!(&out[4..], &2.0f32.to_be_bytes());
        let mut back = [0u8; 8];
        from_ext(c, &out, &mut back);
        assert_eq!(back.to_vec(), native);
    }
}
