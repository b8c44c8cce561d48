//! MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on MPI_LONG_DOUBLE (and derived types made of it
//! alone): x86-64's x87 extended format, each step rounded as C's `long double` arithmetic
//! rounds it (`x87`). The other predefined operations are not defined on floating types.

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

#[cfg(not(target_arch = "x86_64"))]
fn long_double_op(_op: Handle) -> MpiResult<Op> {
    err(
        MPI_ERR_OP,
        "long double arithmetic is implemented for x86-64's x87 format only",
    )
}
