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
        !matches!(self, BuiltinOp::Sum | BuiltinOp::Prod | BuiltinOp::Min | BuiltinOp::Max)
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
            OpKind::User(_) => write!(f, "Op(user, {} B elements, commutative: {})", self.elem_size, self.commutative),
        }
    }
}

impl Op {
    /// A built-in reduction on `ty`; logical and bitwise ones exist on integers only.
    pub fn builtin(op: BuiltinOp, ty: ElemType) -> Result<Op> {
        if op.integer_only() && ty.is_float() {
            return Err(CollError::OpNotDefined { op: op.name(), ty: ty.name() });
        }
        Ok(Op { kind: OpKind::Builtin(op, ty), elem_size: ty.size(), commutative: true })
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
        Ok(Op { kind: OpKind::User(Arc::new(f)), elem_size, commutative })
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
        Op { kind: OpKind::User(Arc::new(g)), elem_size: size, commutative }
    }

    pub fn elem_size(&self) -> usize {
        self.elem_size
    }

    pub fn is_commutative(&self) -> bool {
        self.commutative
    }

    /// `inout = input ∘ inout`. Both hold the same whole number of elements.
    pub(crate) fn apply(&self, input: &[u8], inout: &mut [u8]) {
        debug_assert_eq!(input.len(), inout.len());
        match &self.kind {
            OpKind::User(f) => f(input, inout),
            OpKind::Builtin(op, ty) => apply_builtin(*op, *ty, input, inout),
        }
    }
}

macro_rules! int_op {
    ($t:ty, $op:expr, $a:expr, $b:expr) => {{
        let (a, b): (&[u8], &mut [u8]) = ($a, $b);
        const S: usize = std::mem::size_of::<$t>();
        let f: fn($t, $t) -> $t = match $op {
            BuiltinOp::Sum => |x, y| x.wrapping_add(y),
            BuiltinOp::Prod => |x, y| x.wrapping_mul(y),
            BuiltinOp::Min => |x, y| x.min(y),
            BuiltinOp::Max => |x, y| x.max(y),
            BuiltinOp::LogicalAnd => |x, y| ((x != 0) && (y != 0)) as $t,
            BuiltinOp::LogicalOr => |x, y| ((x != 0) || (y != 0)) as $t,
            BuiltinOp::LogicalXor => |x, y| ((x != 0) != (y != 0)) as $t,
            BuiltinOp::BitAnd => |x, y| x & y,
            BuiltinOp::BitOr => |x, y| x | y,
            BuiltinOp::BitXor => |x, y| x ^ y,
        };
        for (x, y) in a.chunks_exact(S).zip(b.chunks_exact_mut(S)) {
            let xv = <$t>::from_ne_bytes(x.try_into().expect("chunk of element size"));
            let yv = <$t>::from_ne_bytes((&*y).try_into().expect("chunk of element size"));
            y.copy_from_slice(&f(xv, yv).to_ne_bytes());
        }
    }};
}

macro_rules! float_op {
    ($t:ty, $op:expr, $a:expr, $b:expr) => {{
        let (a, b): (&[u8], &mut [u8]) = ($a, $b);
        const S: usize = std::mem::size_of::<$t>();
        let f: fn($t, $t) -> $t = match $op {
            BuiltinOp::Sum => |x, y| x + y,
            BuiltinOp::Prod => |x, y| x * y,
            BuiltinOp::Min => |x, y| if y < x { y } else { x },
            BuiltinOp::Max => |x, y| if y > x { y } else { x },
            // Rejected when the Op is built.
            _ => |_, y| y,
        };
        for (x, y) in a.chunks_exact(S).zip(b.chunks_exact_mut(S)) {
            let xv = <$t>::from_ne_bytes(x.try_into().expect("chunk of element size"));
            let yv = <$t>::from_ne_bytes((&*y).try_into().expect("chunk of element size"));
            y.copy_from_slice(&f(xv, yv).to_ne_bytes());
        }
    }};
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
