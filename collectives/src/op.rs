//! Reduction operations: built-in ones chosen by an element type tag, and user-defined ones.

use crate::error::{CollError, Result};
use std::fmt;
use std::sync::Arc;

/// The numeric element types built-in reductions work on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl ElemType {
    pub fn size(self) -> usize {
        match self {
            ElemType::U8 | ElemType::I8 => 1,
            ElemType::U16 | ElemType::I16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ElemType::U8 => "u8",
            ElemType::U16 => "u16",
            ElemType::U32 => "u32",
            ElemType::U64 => "u64",
            ElemType::I8 => "i8",
            ElemType::I16 => "i16",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    fn is_float(self) -> bool {
        matches!(self, ElemType::F32 | ElemType::F64)
    }
}

/// Built-in reductions (MPI_SUM ... MPI_BXOR). Integer sums and products wrap.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinOp {
    Sum,
    Prod,
    Min,
    Max,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    BitAnd,
    BitOr,
    BitXor,
}

impl BuiltinOp {
    pub fn name(self) -> &'static str {
        match self {
            BuiltinOp::Sum => "sum",
            BuiltinOp::Prod => "prod",
            BuiltinOp::Min => "min",
            BuiltinOp::Max => "max",
            BuiltinOp::LogicalAnd => "logical and",
            BuiltinOp::LogicalOr => "logical or",
            BuiltinOp::LogicalXor => "logical xor",
            BuiltinOp::BitAnd => "bitwise and",
            BuiltinOp::BitOr => "bitwise or",
            BuiltinOp::BitXor => "bitwise xor",
        }
    }

    fn integer_only(self) -> bool {
        !matches!(
            self,
            BuiltinOp::Sum | BuiltinOp::Prod | BuiltinOp::Min | BuiltinOp::Max
        )
    }
}

/// A user function on bytes: `inout = input ∘ inout`, element-wise, where `input` comes from
/// lower ranks (MPI's convention).
type ByteFn = dyn Fn(&[u8], &mut [u8]) + Send + Sync;

#[derive(Clone)]
enum OpKind {
    Builtin(BuiltinOp, ElemType),
    User(Arc<ByteFn>),
}

/// A reduction operation on elements of a fixed size.
#[derive(Clone)]
pub struct Op {
    kind: OpKind,
    elem_size: usize,
    commutative: bool,
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            OpKind::Builtin(op, ty) => write!(f, "Op({} on {})", op.name(), ty.name()),
            OpKind::User(_) => write!(
                f,
                "Op(user, {} B elements, commutative: {})",
                self.elem_size, self.commutative
            ),
        }
    }
}

impl Op {
    /// A built-in reduction on `ty`; logical and bitwise ones exist on integers only.
    pub fn builtin(op: BuiltinOp, ty: ElemType) -> Result<Op> {
        if op.integer_only() && ty.is_float() {
            return Err(CollError::OpNotDefined {
                op: op.name(),
                ty: ty.name(),
            });
        }
        Ok(Op {
            kind: OpKind::Builtin(op, ty),
            elem_size: ty.size(),
            commutative: true,
        })
    }

    /// A user-defined operation on raw elements of `elem_size` bytes. `f(input, inout)` sets
    /// `inout = input ∘ inout` element by element; both slices hold whole elements.
    pub fn user_bytes<F>(elem_size: usize, commutative: bool, f: F) -> Result<Op>
    where
        F: Fn(&[u8], &mut [u8]) + Send + Sync + 'static,
    {
        if elem_size == 0 {
            return Err(CollError::arg("user op", "element size 0"));
        }
        Ok(Op {
            kind: OpKind::User(Arc::new(f)),
            elem_size,
            commutative,
        })
    }

    /// A user-defined operation on typed slices: `f(input, inout)` sets `inout = input ∘ inout`.
    pub fn user<T, F>(commutative: bool, f: F) -> Op
    where
        T: crate::typed::Element,
        F: Fn(&[T], &mut [T]) + Send + Sync + 'static,
    {
        let size = std::mem::size_of::<T>();
        let g = move |a: &[u8], b: &mut [u8]| {
            // Received blocks need not be aligned for T: work on aligned copies.
            let ta: Vec<T> = a.chunks_exact(size).map(T::read).collect();
            let mut tb: Vec<T> = b.chunks_exact(size).map(T::read).collect();
            f(&ta, &mut tb);
            for (x, c) in tb.into_iter().zip(b.chunks_exact_mut(size)) {
                x.write(c);
            }
        };
        Op {
            kind: OpKind::User(Arc::new(g)),
            elem_size: size,
            commutative,
        }
    }

    pub fn elem_size(&self) -> usize {
        self.elem_size
    }

    pub fn is_commutative(&self) -> bool {
        self.commutative
    }

    /// `inout = input ∘ inout`. Both hold the same whole number of elements.
    pub fn apply(&self, input: &[u8], inout: &mut [u8]) {
        debug_assert_eq!(input.len(), inout.len());
        match &self.kind {
            OpKind::User(f) => f(input, inout),
            OpKind::Builtin(op, ty) => apply_builtin(*op, *ty, input, inout),
        }
    }
}

/// Applies `f` element-wise: `b[i] = f(a[i], b[i])`, on typed views when both buffers are
/// aligned for `T` (the usual case), else element by element through byte copies. `f` is a
/// closure, not a function pointer, so each loop is compiled for its operation and vectorizes.
macro_rules! kernel {
    ($t:ty, $f:expr, $a:expr, $b:expr) => {{
        let (a, b): (&[u8], &mut [u8]) = ($a, $b);
        let f = $f;
        const S: usize = std::mem::size_of::<$t>();
        let al = std::mem::align_of::<$t>();
        if a.as_ptr().align_offset(al) == 0 && b.as_ptr().align_offset(al) == 0 {
            // SAFETY: $t is a primitive number (no padding, every bit pattern valid) and both
            // slices start aligned for it, so the typed views cover them exactly.
            let (ta, tb) = unsafe { (a.align_to::<$t>().1, b.align_to_mut::<$t>().1) };
            for (x, y) in ta.iter().zip(tb.iter_mut()) {
                *y = f(*x, *y);
            }
        } else {
            for (x, y) in a.chunks_exact(S).zip(b.chunks_exact_mut(S)) {
                let mut xa = [0u8; S];
                let mut ya = [0u8; S];
                xa.copy_from_slice(x);
                ya.copy_from_slice(y);
                y.copy_from_slice(
                    &f(<$t>::from_ne_bytes(xa), <$t>::from_ne_bytes(ya)).to_ne_bytes(),
                );
            }
        }
    }};
}

macro_rules! int_op {
    ($t:ty, $op:expr, $a:expr, $b:expr) => {
        match $op {
            BuiltinOp::Sum => kernel!($t, |x: $t, y: $t| x.wrapping_add(y), $a, $b),
            BuiltinOp::Prod => kernel!($t, |x: $t, y: $t| x.wrapping_mul(y), $a, $b),
            BuiltinOp::Min => kernel!($t, |x: $t, y: $t| x.min(y), $a, $b),
            BuiltinOp::Max => kernel!($t, |x: $t, y: $t| x.max(y), $a, $b),
            BuiltinOp::LogicalAnd => {
                kernel!($t, |x: $t, y: $t| ((x != 0) && (y != 0)) as $t, $a, $b)
            }
            BuiltinOp::LogicalOr => {
                kernel!($t, |x: $t, y: $t| ((x != 0) || (y != 0)) as $t, $a, $b)
            }
            BuiltinOp::LogicalXor => {
                kernel!($t, |x: $t, y: $t| ((x != 0) != (y != 0)) as $t, $a, $b)
            }
            BuiltinOp::BitAnd => kernel!($t, |x: $t, y: $t| x & y, $a, $b),
            BuiltinOp::BitOr => kernel!($t, |x: $t, y: $t| x | y, $a, $b),
            BuiltinOp::BitXor => kernel!($t, |x: $t, y: $t| x ^ y, $a, $b),
        }
    };
}

macro_rules! float_op {
    ($t:ty, $op:expr, $a:expr, $b:expr) => {
        match $op {
            BuiltinOp::Sum => kernel!($t, |x: $t, y: $t| x + y, $a, $b),
            BuiltinOp::Prod => kernel!($t, |x: $t, y: $t| x * y, $a, $b),
            BuiltinOp::Min => kernel!($t, |x: $t, y: $t| if y < x { y } else { x }, $a, $b),
            BuiltinOp::Max => kernel!($t, |x: $t, y: $t| if y > x { y } else { x }, $a, $b),
            // Rejected when the Op is built.
            _ => {}
        }
    };
}

fn apply_builtin(op: BuiltinOp, ty: ElemType, a: &[u8], b: &mut [u8]) {
    match ty {
        ElemType::U8 => int_op!(u8, op, a, b),
        ElemType::U16 => int_op!(u16, op, a, b),
        ElemType::U32 => int_op!(u32, op, a, b),
        ElemType::U64 => int_op!(u64, op, a, b),
        ElemType::I8 => int_op!(i8, op, a, b),
        ElemType::I16 => int_op!(i16, op, a, b),
        ElemType::I32 => int_op!(i32, op, a, b),
        ElemType::I64 => int_op!(i64, op, a, b),
        ElemType::F32 => float_op!(f32, op, a, b),
        ElemType::F64 => float_op!(f64, op, a, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T: crate::typed::Element>(op: BuiltinOp, a: &[T], b: &[T]) -> Vec<T> {
        let o = Op::builtin(op, T::TYPE).unwrap();
        let mut out = b.to_vec();
        o.apply(
            crate::typed::as_bytes(a),
            crate::typed::as_bytes_mut(&mut out),
        );
        // The unaligned path gives the same answer.
        let mut ua = vec![0u8; std::mem::size_of_val(a) + 1];
        let mut ub = vec![0u8; std::mem::size_of_val(b) + 1];
        ua[1..].copy_from_slice(crate::typed::as_bytes(a));
        ub[1..].copy_from_slice(crate::typed::as_bytes(b));
        o.apply(&ua[1..], &mut ub[1..]);
        assert_eq!(&ub[1..], crate::typed::as_bytes(&out));
        out
    }

    #[test]
    fn builtin_integer_ops() {
        let (a, b) = ([0i32, 5, -3, i32::MAX], [2i32, 0, -7, 1]);
        assert_eq!(run(BuiltinOp::Sum, &a, &b), [2, 5, -10, i32::MIN]);
        assert_eq!(run(BuiltinOp::Prod, &a, &b), [0, 0, 21, i32::MAX]);
        assert_eq!(run(BuiltinOp::Min, &a, &b), [0, 0, -7, 1]);
        assert_eq!(run(BuiltinOp::Max, &a, &b), [2, 5, -3, i32::MAX]);
        assert_eq!(run(BuiltinOp::LogicalAnd, &a, &b), [0, 0, 1, 1]);
        assert_eq!(run(BuiltinOp::LogicalOr, &a, &b), [1, 1, 1, 1]);
        assert_eq!(run(BuiltinOp::LogicalXor, &a, &b), [1, 1, 0, 0]);
        assert_eq!(run(BuiltinOp::BitAnd, &[0b1100u8], &[0b1010u8]), [0b1000]);
        assert_eq!(run(BuiltinOp::BitOr, &[0b1100u16], &[0b1010u16]), [0b1110]);
        assert_eq!(run(BuiltinOp::BitXor, &[0b1100u64], &[0b1010u64]), [0b0110]);
        assert_eq!(run(BuiltinOp::Sum, &[200u8], &[100u8]), [44]);
        assert_eq!(run(BuiltinOp::Min, &[-1i8], &[1i8]), [-1]);
        assert_eq!(run(BuiltinOp::Max, &[u32::MAX], &[1u32]), [u32::MAX]);
        assert_eq!(run(BuiltinOp::Prod, &[-2i16], &[3i16]), [-6]);
        assert_eq!(run(BuiltinOp::Sum, &[-2i64], &[3i64]), [1]);
    }

    #[test]
    fn builtin_float_ops() {
        assert_eq!(
            run(BuiltinOp::Sum, &[1.5f64, -2.0], &[0.25, 2.0]),
            [1.75, 0.0]
        );
        assert_eq!(run(BuiltinOp::Prod, &[1.5f32], &[2.0]), [3.0]);
        assert_eq!(
            run(BuiltinOp::Min, &[1.5f32, -1.0], &[2.0, -3.0]),
            [1.5, -3.0]
        );
        assert_eq!(
            run(BuiltinOp::Max, &[1.5f64, -1.0], &[2.0, -3.0]),
            [2.0, -1.0]
        );
        for op in [
            BuiltinOp::LogicalAnd,
            BuiltinOp::LogicalOr,
            BuiltinOp::LogicalXor,
            BuiltinOp::BitAnd,
            BuiltinOp::BitOr,
            BuiltinOp::BitXor,
        ] {
            for ty in [ElemType::F32, ElemType::F64] {
                assert!(matches!(
                    Op::builtin(op, ty),
                    Err(CollError::OpNotDefined { .. })
                ));
            }
        }
    }
}
