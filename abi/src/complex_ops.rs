//! MPI_SUM and MPI_PROD on the complex datatypes (MPI 4.1 sec 6.9.2, "Complex"): C's float,
//! double and long double complex, C++'s, Fortran's COMPLEX, DOUBLE COMPLEX, COMPLEX8 and
//! COMPLEX16, and derived types made of one of them. A product is
//! (xr yr - xi yi) + (xr yi + xi yr) i, each step rounded in the parts' precision, as C's `*`
//! (MPICH's) computes it for finite values; long double's is x87 extended precision.

use crate::consts::*;
use crate::derived::Ty;
use crate::error::{err, MpiResult};
use ibdyn_collectives::{BuiltinOp, ElemType, Op};

/// The format of a complex type's two parts.
#[derive(Clone, Copy, PartialEq)]
enum Parts {
    F32,
    F64,
    /// C's long double on x86-64: x87 extended, 16 bytes each.
    X87,
    /// A complex type without arithmetic here: why.
    Unsupported(&'static str),
}

/// The parts of predefined complex type `h`, or None when `h` is not complex.
fn parts_of(h: Handle) -> Option<Parts> {
    match h {
        // C float complex, C++ float complex, COMPLEX, COMPLEX8
        0x212 | 0x213 | 0x21b | 0x2db => Some(Parts::F32),
        // C double complex, C++ double complex, DOUBLE COMPLEX, COMPLEX16
        0x216 | 0x217 | 0x21d | 0x2e3 => Some(Parts::F64),
        // C and C++ long double complex
        0x224 | 0x225 if cfg!(target_arch = "x86_64") => Some(Parts::X87),
        0x224 | 0x225 => Some(Parts::Unsupported(
            "long double complex arithmetic is implemented for x86-64's x87 format only",
        )),
        0x2d3 => Some(Parts::Unsupported(
            "MPI_COMPLEX4 (half-precision parts) has no arithmetic in ibdyn",
        )),
        0x2eb => Some(Parts::Unsupported(
            "MPI_COMPLEX32 (quadruple-precision parts) has no arithmetic in ibdyn",
        )),
        _ => None,
    }
}

/// The parts of every basic element of `ty`, when they are all of one complex type.
fn parts_of_type(ty: &Ty) -> Option<Parts> {
    if ty.elem.is_some() {
        return None;
    }
    let mut parts: Option<Option<Parts>> = None;
    ty.for_each_basic(1, &mut |h, _| {
        let p = parts_of(h);
        parts = match parts {
            None => Some(p),
            Some(q) if q == p => Some(q),
            Some(_) => Some(None),
        };
    });
    parts.flatten()
}

/// `op` on the elements of `ty` when they are complex (None when they are not).
pub fn reduction(op: Handle, ty: &Ty) -> Option<MpiResult<Op>> {
    let parts = parts_of_type(ty)?;
    let prod = match op {
        MPI_SUM => false,
        MPI_PROD => true,
        other => {
            return Some(err(
                MPI_ERR_OP,
                format!("operation {other:#x} is not defined on complex datatypes (MPI_SUM and MPI_PROD are)"),
            ))
        }
    };
    Some(match parts {
        Parts::F32 => float_op::<f32>(prod, ElemType::F32),
        Parts::F64 => float_op::<f64>(prod, ElemType::F64),
        Parts::X87 => x87_op(prod),
        Parts::Unsupported(why) => err(MPI_ERR_OP, why),
    })
}

/// A part of a float or double complex.
trait Part: Copy + std::ops::Mul<Output = Self> + std::ops::Add<Output = Self> {
    const SIZE: usize;
    fn read(b: &[u8]) -> Self;
    fn write(self, b: &mut [u8]);
    fn sub(self, other: Self) -> Self;
}

macro_rules! part {
    ($t:ty) => {
        impl Part for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn read(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b.try_into().expect("one part"))
            }
            fn write(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes())
            }
            fn sub(self, other: Self) -> Self {
                self - other
            }
        }
    };
}
part!(f32);
part!(f64);

/// Sums part by part with the built-in kernel of `elem`; products element by element.
fn float_op<T: Part>(prod: bool, elem: ElemType) -> MpiResult<Op> {
    let size = 2 * T::SIZE;
    if !prod {
        let sum = Op::builtin(BuiltinOp::Sum, elem)?;
        return Ok(Op::user_bytes(size, true, move |a, b| sum.apply(a, b))?);
    }
    let f = move |a: &[u8], b: &mut [u8]| {
        for (x, y) in a.chunks_exact(size).zip(b.chunks_exact_mut(size)) {
            let (xr, xi) = (T::read(&x[..T::SIZE]), T::read(&x[T::SIZE..]));
            let (yr, yi) = (T::read(&y[..T::SIZE]), T::read(&y[T::SIZE..]));
            (xr * yr).sub(xi * yi).write(&mut y[..T::SIZE]);
            (xr * yi + xi * yr).write(&mut y[T::SIZE..]);
        }
    };
    Ok(Op::user_bytes(size, true, f)?)
}

#[cfg(target_arch = "x86_64")]
fn x87_op(prod: bool) -> MpiResult<Op> {
    use crate::x87::{complex_add, complex_mul};
    crate::ops::per_element(if prod { complex_mul } else { complex_add })
}

#[cfg(not(target_arch = "x86_64"))]
fn x87_op(_prod: bool) -> MpiResult<Op> {
    unreachable!("x87 parts are x86-64's only")
}
