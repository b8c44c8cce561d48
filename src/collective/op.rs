//! Reduction operations, spelt as rsmpi spells them.

use crate::Result;
use ibdyn_collectives::{BuiltinOp, Element, Op};

/// A reduction operation: a built-in one (typed by the call) or a user-defined one (MPI_Op).
#[derive(Clone)]
pub enum Operation {
    /// A predefined operation (MPI_SUM, MPI_MAX, ...), applied to the call's element type.
    System(BuiltinOp),
    /// A user-defined operation (MPI_Op_create).
    User(Op),
}

/// The built-in operations, spelt as rsmpi spells them.
pub struct SystemOperation;

impl SystemOperation {
    /// Sum (MPI_SUM).
    pub fn sum() -> Operation {
        Operation::System(BuiltinOp::Sum)
    }
    /// Product (MPI_PROD).
    pub fn product() -> Operation {
        Operation::System(BuiltinOp::Prod)
    }
    /// Minimum (MPI_MIN).
    pub fn min() -> Operation {
        Operation::System(BuiltinOp::Min)
    }
    /// Maximum (MPI_MAX).
    pub fn max() -> Operation {
        Operation::System(BuiltinOp::Max)
    }
    /// Logical and (MPI_LAND).
    pub fn logical_and() -> Operation {
        Operation::System(BuiltinOp::LogicalAnd)
    }
    /// Logical or (MPI_LOR).
    pub fn logical_or() -> Operation {
        Operation::System(BuiltinOp::LogicalOr)
    }
    /// Logical exclusive or (MPI_LXOR).
    pub fn logical_xor() -> Operation {
        Operation::System(BuiltinOp::LogicalXor)
    }
    /// Bitwise and (MPI_BAND).
    pub fn bitwise_and() -> Operation {
        Operation::System(BuiltinOp::BitAnd)
    }
    /// Bitwise or (MPI_BOR).
    pub fn bitwise_or() -> Operation {
        Operation::System(BuiltinOp::BitOr)
    }
    /// Bitwise exclusive or (MPI_BXOR).
    pub fn bitwise_xor() -> Operation {
        Operation::System(BuiltinOp::BitXor)
    }
}

/// User-defined operations: `f(a, b)` combines `a` into `b` (b = a op b, MPI's order).
pub struct UserOperation;

impl UserOperation {
    /// A commutative user operation (MPI_Op_create with commute = true).
    pub fn commutative<T: Element, F: Fn(&[T], &mut [T]) + Send + Sync + 'static>(
        f: F,
    ) -> Operation {
        Operation::User(Op::user::<T, F>(true, f))
    }
    /// A non-commutative user operation (MPI_Op_create with commute = false): applied in
    /// rank order.
    pub fn non_commutative<T: Element, F: Fn(&[T], &mut [T]) + Send + Sync + 'static>(
        f: F,
    ) -> Operation {
        Operation::User(Op::user::<T, F>(false, f))
    }
}

impl Operation {
    /// The operation for elements of type `T` (a built-in one must support `T`).
    pub(crate) fn op_for<T: Element>(&self) -> Result<Op> {
        match self {
            Operation::System(b) => Ok(Op::builtin(*b, T::TYPE)?),
            Operation::User(o) => Ok(o.clone()),
        }
    }
}
