//! MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on MPI_LONG_DOUBLE (and derived types made of it
//! alone): x86-64's x87 extended format, each step rounded as C's `long double` arithmetic
//! rounds it (`x87`). The other predefined operations are not defined on floating types.
//! Also MPI_MINLOC and MPI_MAXLOC on MPI_LONG_DOUBLE_INT.

use crate::consts::*;
use crate::derived::Ty;
use crate::error::{err, MpiResult};
use ibdyn_collectives::Op;

const MPI_LONG_DOUBLE: Handle = 0x220;

/// Whether every basic element of `ty` is a `long double`.
fn all_long_double(ty: &Ty) -> bool {
    if ty.elem.is_some() {
        return false;
    }
    let mut all = true;
    let mut any = false;
    ty.for_each_basic(1, &mut |h, _| {
        any = true;
        all &= h == MPI_LONG_DOUBLE;
    });
    any && all
}

/// `op` on the elements of `ty` when they are `long double` (None when they are not).
pub fn reduction(op: Handle, ty: &Ty) -> Option<MpiResult<Op>> {
    if !all_long_double(ty) {
        return None;
    }
    Some(long_double_op(op))
}

#[cfg(target_arch = "x86_64")]
fn long_double_op(op: Handle) -> MpiResult<Op> {
    use crate::x87::{add, less, mul, REAL};
    let each: fn(&[u8; REAL], &mut [u8; REAL]) = match op {
        MPI_SUM => add,
        MPI_PROD => mul,
        MPI_MIN => |x, y| {
            if less(x, y) {
                *y = *x;
            }
        },
        MPI_MAX => |x, y| {
            if less(y, x) {
                *y = *x;
            }
        },
        other => {
            return err(
                MPI_ERR_OP,
                format!(
                    "operation {other:#x} is not defined on MPI_LONG_DOUBLE (MPI_SUM, MPI_PROD, \
                     MPI_MIN and MPI_MAX are)"
                ),
            )
        }
    };
    crate::ops::per_element(each)
}

/// MPI_LONG_DOUBLE_INT, packed: the value in the first 16 bytes, the index at 16.
const PAIR: usize = 20;

/// MPI_MINLOC (MPI_MAXLOC with `max`) on MPI_LONG_DOUBLE_INT: keeps the smaller (larger)
/// value, and of equal values the smaller index.
#[cfg(target_arch = "x86_64")]
pub fn loc(max: bool) -> MpiResult<Op> {
    use crate::x87::{less, REAL};
    let f = move |a: &[u8], b: &mut [u8]| {
        for (x, y) in a.chunks_exact(PAIR).zip(b.chunks_exact_mut(PAIR)) {
            let value = |c: &[u8]| -> [u8; REAL] { c[..REAL].try_into().expect("value bytes") };
            let index =
                |c: &[u8]| i32::from_ne_bytes(c[REAL..REAL + 4].try_into().expect("index bytes"));
            let (xv, yv) = (value(x), value(y));
            let (below, above) = (less(&xv, &yv), less(&yv, &xv));
            let equal = !below && !above && !is_nan(&xv) && !is_nan(&yv);
            if (if max { above } else { below }) || (equal && index(x) < index(y)) {
                y.copy_from_slice(x);
            }
        }
    };
    Ok(Op::user_bytes(PAIR, true, f)?)
}

/// Whether an x87 extended value is a NaN: the largest exponent with a fraction.
#[cfg(target_arch = "x86_64")]
fn is_nan(v: &[u8; crate::x87::REAL]) -> bool {
    let exponent = u16::from_le_bytes([v[8], v[9]]) & 0x7fff;
    let mantissa = u64::from_le_bytes(v[..8].try_into().expect("mantissa bytes"));
    exponent == 0x7fff && mantissa << 1 != 0
}

#[cfg(not(target_arch = "x86_64"))]
pub fn loc(_max: bool) -> MpiResult<Op> {
    long_double_op(MPI_MINLOC)
}

#[cfg(not(target_arch = "x86_64"))]
fn long_double_op(_op: Handle) -> MpiResult<Op> {
    err(
        MPI_ERR_OP,
        "long double arithmetic is implemented for x86-64's x87 format only",
    )
}
