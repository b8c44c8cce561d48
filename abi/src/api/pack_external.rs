//! MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size (and `_c`): the portable
//! "external32" representation of any datatype: the basic elements of the type map in order,
//! each big-endian, with `long` and `unsigned long` in 4 bytes and `wchar_t` in 2 (as MPICH
//! writes them), complex numbers as two big-endian halves and `long double` as IEEE 754
//! binary128 (16 bytes; converted from the x87 80-bit format on x86). A derived type is packed
//! through its type signature (`Ty::for_each_basic`): its native packed bytes (`Ty::pack`)
//! are converted element by element; a value-index pair as its value then its index, without
//! the padding between them. The 2- and 16-byte real kinds are refused by name
//! (MPI_ERR_TYPE).

use super::{out, read};
use crate::consts::*;
use crate::derived::{self, Ty};
use crate::error::{err, MpiError, MpiResult};
use crate::{call, datatype, export};
use std::borrow::Cow;
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
    /// Each unit is a `long double`, converted to or from binary128.
    long_double: bool,
}

fn ext32(h: Handle) -> MpiResult<Ext> {
    let n = datatype::lookup(h)?.size;
    let e = |ext, unit, signed| {
        Ok(Ext {
            native: n,
            ext,
            unit,
            signed,
            long_double: false,
        })
    };
    match h {
        0x20a => e(4, 4, true),  // MPI_LONG
        0x20e => e(4, 4, false), // MPI_UNSIGNED_LONG
        0x23c => e(2, 2, false), // MPI_WCHAR
        0x212 | 0x213 | 0x216 | 0x217 | 0x21b | 0x21d | 0x2d3 | 0x2db => e(n, n / 2, false), // complex
        // MPI_LONG_DOUBLE and the long double complex types: binary128 halves.
        0x220 | 0x224 | 0x225 => Ok(Ext {
            native: n,
            ext: n,
            unit: 16,
            signed: false,
            long_double: true,
        }),
        0x2ca | 0x2e0..=0x2e3 | 0x2eb => err(
            MPI_ERR_TYPE,
            format!(
                "{}: ibdyn has no external32 conversion for 16-byte or 2-byte real kinds",
                datatype::name(h)
            ),
        ),
        _ => e(n, n, false),
    }
}

/// A value-index pair type (MPI_DOUBLE_INT, MPI_2INT, ...): its value type and its index
/// type (packing took the native padding out already, so each part is its own size).
fn pair(h: Handle) -> Option<(Handle, Handle)> {
    const SHORT: Handle = 0x208;
    const LONG: Handle = 0x20a;
    const FLOAT: Handle = 0x210;
    const DOUBLE: Handle = 0x214;
    const INTEGER: Handle = 0x219;
    const REAL: Handle = 0x21a;
    const DOUBLE_PRECISION: Handle = 0x21c;
    const LONG_DOUBLE: Handle = 0x220;
    Some(match h {
        0x228 => (FLOAT, MPI_INT),
        0x229 => (DOUBLE, MPI_INT),
        0x22a => (LONG, MPI_INT),
        0x22b => (MPI_INT, MPI_INT),
        0x22c => (SHORT, MPI_INT),
        0x22d => (LONG_DOUBLE, MPI_INT),
        0x230 => (REAL, REAL),
        0x231 => (DOUBLE_PRECISION, DOUBLE_PRECISION),
        0x232 => (INTEGER, INTEGER),
        _ => return None,
    })
}

/// The external32 elements of `n` consecutive elements of predefined type `b`: runs of
/// elements converted alike (a pair type's parts alternate).
fn elements(b: Handle, n: usize, runs: &mut Vec<(Ext, usize)>) -> MpiResult<()> {
    let mut push = |x: Ext, m: usize| match runs.last_mut() {
        Some((y, k)) if *y == x => *k += m,
        _ => runs.push((x, m)),
    };
    let Some((value, index)) = pair(b) else {
        push(ext32(b)?, n);
        return Ok(());
    };
    let (value, index) = (ext32(value)?, ext32(index)?);
    for _ in 0..n {
        push(value, 1);
        push(index, 1);
    }
    Ok(())
}

/// A native `long double` (16 bytes) as the bits of an IEEE 754 binary128.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn ld_to_quad(b: &[u8]) -> u128 {
    x87_to_quad(b)
}

/// A binary128's bits as a native `long double` (16 bytes).
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn quad_to_ld(q: u128) -> [u8; 16] {
    quad_to_x87(q)
}

// Elsewhere (aarch64, riscv64 Linux) `long double` is a little-endian binary128 already.
#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn ld_to_quad(b: &[u8]) -> u128 {
    u128::from_le_bytes(b[..16].try_into().expect("16 bytes"))
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn quad_to_ld(q: u128) -> [u8; 16] {
    q.to_le_bytes()
}

const INT_BIT: u64 = 1 << 63;

/// The x87 80-bit extended number in the first 10 bytes of `b` (64-bit significand with an
/// explicit integer bit, then sign and 15-bit exponent) as binary128 (same bias, 112-bit
/// fraction with an implicit bit): exact, denormals and unnormals included.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "x86")),
    allow(dead_code)
)]
fn x87_to_quad(b: &[u8]) -> u128 {
    let m = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = u128::from(se >> 15) << 127;
    let e = i32::from(se & 0x7fff);
    if e == 0x7fff {
        // Infinity (no fraction below the integer bit) or NaN (its payload and quiet bit).
        return sign | 0x7fff << 112 | u128::from(m & !INT_BIT) << 49;
    }
    if m == 0 {
        return sign;
    }
    // The value is m * 2^(max(e, 1) - 16383 - 63): normalize as far as the exponent allows.
    let e = e.max(1);
    let shift = (m.leading_zeros() as i32).min(e - 1);
    let (m, e) = (m << shift, e - shift);
    if m & INT_BIT == 0 {
        // A denormal (exponent 1 - 16383 in both formats).
        return sign | u128::from(m) << 49;
    }
    sign | (e as u128) << 112 | u128::from(m & !INT_BIT) << 49
}

/// `v >> s` rounded to nearest, ties to even.
fn round_shift(v: u128, s: u32) -> u128 {
    let (q, r, half) = (v >> s, v & ((1 << s) - 1), 1u128 << (s - 1));
    if r > half || (r == half && q & 1 == 1) {
        q + 1
    } else {
        q
    }
}

/// A binary128 as an x87 80-bit extended number in 16 bytes (6 bytes of zero padding): the
/// fraction rounded to 63 bits (to nearest, ties to even), an overflow becoming infinity.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "x86")),
    allow(dead_code)
)]
fn quad_to_x87(q: u128) -> [u8; 16] {
    let sign = (q >> 127) as u16;
    let e = ((q >> 112) & 0x7fff) as u16;
    let f = q & ((1 << 112) - 1);
    let (e, m) = if e == 0x7fff {
        let m = (f >> 49) as u64;
        // A NaN whose payload is all below the kept bits stays a (quiet) NaN.
        let m = if f != 0 && m == 0 { 1 << 62 } else { m };
        (e, INT_BIT | m)
    } else if e == 0 {
        // A denormal: rounding up to 2^63 makes the smallest normal number.
        let m = round_shift(f, 49) as u64;
        (u16::from(m & INT_BIT != 0), m)
    } else {
        let m = round_shift(f | 1 << 112, 49);
        if m >> 64 != 0 {
            (e + 1, INT_BIT) // e + 1 == 0x7fff: infinity
        } else {
            (e, m as u64)
        }
    };
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&m.to_le_bytes());
    out[8..10].copy_from_slice(&(sign << 15 | e).to_le_bytes());
    out
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
    if x.long_double {
        for (o, i) in out.chunks_exact_mut(16).zip(native.chunks_exact(16)) {
            o.copy_from_slice(&ld_to_quad(i).to_be_bytes());
        }
        return;
    }
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
    if x.long_double {
        for (n, e) in native.chunks_exact_mut(16).zip(ext.chunks_exact(16)) {
            n.copy_from_slice(&quad_to_ld(u128::from_be_bytes(
                e.try_into().expect("16 bytes"),
            )));
        }
        return;
    }
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

/// One copy of a datatype in external32: its type signature as runs of elements converted
/// alike, and the bytes they take.
struct Layout {
    ty: Ty,
    runs: Vec<(Ext, usize)>,
    /// External32 bytes of one copy.
    ext: usize,
}

fn layout(h: Handle, for_comm: bool) -> MpiResult<Layout> {
    let ty = derived::resolve(h, for_comm)?;
    let mut runs: Vec<(Ext, usize)> = Vec::new();
    let mut failed: Option<MpiError> = None;
    ty.for_each_basic(1, &mut |b, n| {
        if failed.is_some() {
            return;
        }
        match elements(b, n, &mut runs) {
            Ok(()) => {}
            Err(mut e) => {
                if !derived::is_predefined(h) {
                    e.message = format!("datatype {h:#x} holds {}", e.message);
                }
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let ext = runs
        .iter()
        .try_fold(0usize, |s, (x, n)| x.ext.checked_mul(*n)?.checked_add(s))
        .ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the external32 size overflows"))?;
    debug_assert_eq!(
        runs.iter().map(|(x, n)| x.native * n).sum::<usize>(),
        ty.size
    );
    Ok(Layout { ty, runs, ext })
}

/// External32 bytes of `count` copies.
fn ext_len(l: &Layout, count: usize) -> MpiResult<usize> {
    count
        .checked_mul(l.ext)
        .ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the external32 size overflows"))
}

/// Converts `count` copies between their native packed bytes and external32, element by
/// element in type-map order: `f(ext, native bytes, external32 bytes)`.
fn convert(l: &Layout, count: usize, mut f: impl FnMut(Ext, usize, usize)) {
    let (mut at_native, mut at_ext) = (0, 0);
    for _ in 0..count {
        for &(x, n) in &l.runs {
            for _ in 0..n {
                f(x, at_native, at_ext);
                at_native += x.native;
                at_ext += x.ext;
            }
        }
    }
}

/// The checks of a packing or unpacking call of `count` elements of `ty` at `pos` of a
/// packed buffer of `size` bytes: the element layout, the count and the position. Returns
/// the layout, the count, the position and the external32 and native byte lengths.
fn plan(
    rep: *const c_char,
    ty: Handle,
    count: i64,
    pos: i64,
    size: i64,
    buffers: [*const c_void; 2],
    what: &str,
) -> MpiResult<(Layout, usize, usize, usize, usize)> {
    check_rep(rep)?;
    let l = layout(ty, true)?;
    let Ok(n) = usize::try_from(count) else {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    };
    let ext = ext_len(&l, n)?;
    let p = super::pack::window(pos, ext, size, what)?;
    let native = n
        .checked_mul(l.ty.size)
        .ok_or_else(|| MpiError::new(MPI_ERR_COUNT, "the native size overflows"))?;
    if ext > 0 && buffers.iter().any(|b| b.is_null()) {
        return err(MPI_ERR_BUFFER, "a buffer is NULL");
    }
    Ok((l, n, p, ext, native))
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
    let (l, n, p, ext, native) = plan(
        rep,
        ty,
        count,
        pos,
        outsize,
        [inbuf, outbuf.cast_const()],
        "packing",
    )?;
    if ext == 0 {
        return Ok(pos);
    }
    // SAFETY: the caller's buffers: `count` elements in, `outsize` bytes out (checked by
    // `plan` to hold `ext` bytes from `p`).
    let dst = unsafe { std::slice::from_raw_parts_mut(outbuf.cast::<u8>().add(p), ext) };
    let src: Cow<[u8]> = if l.ty.contiguous() {
        // SAFETY: as above: the elements are `native` bytes at `inbuf`.
        Cow::Borrowed(unsafe { std::slice::from_raw_parts(inbuf.cast::<u8>(), native) })
    } else {
        let mut v = vec![0u8; native];
        // SAFETY: as above.
        unsafe { l.ty.pack(inbuf.cast(), n, &mut v) };
        Cow::Owned(v)
    };
    convert(&l, n, |x, i, o| {
        to_ext(x, &src[i..i + x.native], &mut dst[o..o + x.ext])
    });
    Ok(pos + ext as i64)
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
    let (l, n, p, ext, native) = plan(
        rep,
        ty,
        count,
        pos,
        insize,
        [inbuf, outbuf.cast_const()],
        "unpacking",
    )?;
    if ext == 0 {
        return Ok(pos);
    }
    // SAFETY: the caller's buffers: `insize` bytes in (checked by `plan` to hold `ext` bytes
    // from `p`), `count` elements out.
    let src = unsafe { std::slice::from_raw_parts(inbuf.cast::<u8>().add(p), ext) };
    if l.ty.contiguous() {
        // SAFETY: as above: the elements are `native` bytes at `outbuf`.
        let dst = unsafe { std::slice::from_raw_parts_mut(outbuf.cast::<u8>(), native) };
        convert(&l, n, |x, o, i| {
            from_ext(x, &src[i..i + x.ext], &mut dst[o..o + x.native])
        });
    } else {
        let mut v = vec![0u8; native];
        convert(&l, n, |x, o, i| {
            from_ext(x, &src[i..i + x.ext], &mut v[o..o + x.native])
        });
        // SAFETY: as above: the type map of `count` elements at `outbuf` is writable.
        unsafe { l.ty.unpack(&v, outbuf.cast()) };
    }
    Ok(pos + ext as i64)
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
    let Ok(n) = usize::try_from(count) else {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    };
    let len = ext_len(&layout(ty, false)?, n)?;
    i64::try_from(len).or_else(|_| err(MPI_ERR_COUNT, "the external32 size overflows"))
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
    fn a_value_index_pair_is_its_two_parts_without_the_padding() {
        let _owner = ibdyn_owner::enter();
        // MPI_DOUBLE_INT then MPI_SHORT_INT, packed: the value then the index (packing left
        // the native padding out).
        for (ty, value, value_ext) in [
            (
                0x229,
                (-2.5f64).to_le_bytes().to_vec(),
                (-2.5f64).to_be_bytes().to_vec(),
            ),
            (
                0x22c,
                (-3i16).to_le_bytes().to_vec(),
                (-3i16).to_be_bytes().to_vec(),
            ),
        ] {
            let l = layout(ty, false).unwrap();
            let at = value.len();
            assert_eq!(l.ty.size, at + 4);
            let mut native = vec![0xaau8; l.ty.size];
            native[..value.len()].copy_from_slice(&value);
            native[at..at + 4].copy_from_slice(&(-7i32).to_le_bytes());
            let mut out = vec![0u8; l.ext];
            convert(&l, 1, |x, i, o| {
                to_ext(x, &native[i..i + x.native], &mut out[o..o + x.ext])
            });
            assert_eq!(out, [value_ext, (-7i32).to_be_bytes().to_vec()].concat());
            let mut back = vec![0u8; l.ty.size];
            convert(&l, 1, |x, i, o| {
                from_ext(x, &out[o..o + x.ext], &mut back[i..i + x.native])
            });
            assert_eq!(back[..value.len()], value[..]);
            assert_eq!(back[at..at + 4], (-7i32).to_le_bytes());
        }
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

    fn x87(m: u64, se: u16) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&m.to_le_bytes());
        b[8..10].copy_from_slice(&se.to_le_bytes());
        b
    }

    #[test]
    fn x87_long_double_is_binary128_and_back() {
        let cases: [([u8; 16], u128); 9] = [
            (x87(0xc000_0000_0000_0000, 0x3fff), 0x3fff_8000 << 96), // 1.5
            (x87(0x8000_0000_0000_0000, 0xbfff), 0xbfff << 112),     // -1
            (x87(0, 0), 0),                                          // 0
            (x87(0, 0x8000), 1 << 127),                              // -0
            (x87(1, 0), 1 << 49),                                    // smallest denormal
            (x87(0x8000_0000_0000_0000, 1), 1 << 112),               // smallest normal
            (
                x87(u64::MAX, 0x7ffe),
                (0x7ffe << 112) | ((1u128 << 112) - (1 << 49)),
            ), // max
            (x87(0x8000_0000_0000_0000, 0xffff), 0xffff << 112),     // -infinity
            (x87(0xc000_0000_0000_0000, 0x7fff), 0x7fff_8000 << 96), // quiet NaN
        ];
        for (native, quad) in cases {
            assert_eq!(x87_to_quad(&native), quad, "{native:02x?}");
            assert_eq!(quad_to_x87(quad), native, "{quad:#x}");
        }
        // An unnormal and a pseudo-denormal come out normalized.
        assert_eq!(
            x87_to_quad(&x87(0x4000_0000_0000_0000, 0x3fff)),
            0x3ffe << 112
        );
        assert_eq!(x87_to_quad(&x87(0x8000_0000_0000_0000, 0)), 1 << 112);
        // 112 fraction bits round to 63: to nearest, ties to even, up to infinity.
        let one = 0x3fffu128 << 112;
        assert_eq!(quad_to_x87(one | 1 << 48), x87(1 << 63, 0x3fff));
        assert_eq!(quad_to_x87(one | 3 << 48), x87((1 << 63) | 2, 0x3fff));
        assert_eq!(quad_to_x87(one | 1 << 48 | 1), x87((1 << 63) | 1, 0x3fff));
        assert_eq!(
            quad_to_x87(0x7ffe_ffff_ffff_ffff_ffff_ffff_ffff_ffffu128),
            x87(1 << 63, 0x7fff)
        );
        assert_eq!(quad_to_x87((1 << 49) - 1), x87(1, 0));
        assert_eq!(
            quad_to_x87(0x7fff_0000_0000_0000_0000_0000_0000_0001u128),
            x87(0xc000_0000_0000_0000, 0x7fff)
        );
    }

    #[test]
    fn a_vector_of_shorts_packs_its_elements_big_endian() {
        let _owner = ibdyn_owner::enter();
        let short = derived::resolve(0x208, false).unwrap();
        let parts = [0, 4].map(|disp| derived::Part {
            disp,
            count: 1,
            ty: short.clone(),
        });
        let v = derived::build(&parts, false).unwrap();
        derived::commit(v).unwrap();
        let rep = c"external32".as_ptr();
        assert_eq!(ext_size(rep, 3, v).unwrap(), 12);
        let data: [i16; 4] = [0x0102, 9, 0x0304, 9];
        let mut out = [0u8; 4];
        let at = pack_ext(
            rep,
            data.as_ptr().cast(),
            1,
            v,
            out.as_mut_ptr().cast(),
            4,
            0,
        );
        assert_eq!((at.unwrap(), out), (4, [1, 2, 3, 4]));
        let mut back = [0i16; 4];
        let at = unpack_ext(
            rep,
            out.as_ptr().cast(),
            4,
            0,
            back.as_mut_ptr().cast(),
            1,
            v,
        );
        assert_eq!((at.unwrap(), back), (4, [0x0102, 0, 0x0304, 0]));
        derived::free(v).unwrap();
    }
}
