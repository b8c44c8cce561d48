//! Reduction operations: the predefined ones (arithmetic, logical, bitwise on the numeric
//! types; MINLOC/MAXLOC on the value-index pairs) and user functions of MPI_Op_create.

use crate::consts::*;
use crate::derived::Ty;
use crate::error::{err, MpiError, MpiResult};
use crate::op_layout::Layout;
use crate::table::Table;
use ibdyn_collectives::{BuiltinOp, ElemType, Op};
use std::cell::RefCell;
use std::os::raw::c_int;

/// User operation handles are this plus the table index.
const OP_BASE: Handle = 0x4000_0000;

/// `void fn(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype)`.
pub type UserFn = unsafe extern "C" fn(*mut u8, *mut u8, *mut c_int, *mut Handle);
/// The same with an `MPI_Count *len` (MPI_Op_create_c).
pub type UserFnC = unsafe extern "C" fn(*mut u8, *mut u8, *mut i64, *mut Handle);

/// MPICH's `_x` form (MPIX_Op_create_x): the count and datatype by value and the
/// program's extra state.
pub type UserFnX = unsafe extern "C" fn(*mut u8, *mut u8, i64, Handle, *mut std::ffi::c_void);

/// A user function of either width, or MPICH's `_x` form.
#[derive(Clone, Copy)]
pub enum UserFunc {
    Int(UserFn),
    Count(UserFnC),
    X { f: UserFnX, extra: usize },
}

#[derive(Clone, Copy)]
struct UserOp {
    f: UserFunc,
    commute: bool,
}

/// An `_x` operation's destructor and extra state.
type Destructor = (crate::user_errhandler::DestructorFn, usize);

ibdyn_owner::process_local! {
    static OPS: RefCell<Table<UserOp>> = RefCell::new(Table::new());
    /// Destructors of `_x` operations, run when MPI ends (`clear`): a freed operation may
    /// still be in use by a non-blocking reduction until then.
    static DESTRUCTORS: RefCell<Vec<Destructor>> = RefCell::new(Vec::new());
}

pub fn create(f: UserFunc, commute: bool) -> Handle {
    OPS.with(|t| OP_BASE + t.borrow_mut().insert(UserOp { f, commute }))
}

/// An `_x` operation whose `destructor` runs on its extra state when MPI ends.
pub fn create_x(f: UserFunc, commute: bool, destructor: Destructor) -> Handle {
    DESTRUCTORS.with(|d| d.borrow_mut().push(destructor));
    create(f, commute)
}

pub fn free(h: Handle) -> MpiResult<()> {
    let gone = h
        .checked_sub(OP_BASE)
        .and_then(|i| OPS.with(|t| t.borrow_mut().remove(i)));
    match gone {
        Some(_) => Ok(()),
        None => err(
            MPI_ERR_OP,
            format!("{h:#x} is not a user operation (predefined operations cannot be freed)"),
        ),
    }
}

/// Whether operation `h` is commutative.
pub fn commutative(h: Handle) -> MpiResult<bool> {
    if h < OP_BASE {
        return Ok(true);
    }
    user(h).map(|u| u.commute)
}

fn user(h: Handle) -> MpiResult<UserOp> {
    OPS.with(|t| t.borrow().get(h - OP_BASE).copied())
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_OP,
                format!("operation {h:#x} has been freed (or never existed)"),
            )
        })
}

/// MINLOC/MAXLOC on a (value, int index) pair: keeps the smaller (larger) value, and on a
/// tie the smaller index.
fn loc_op(ty: Handle, max: bool) -> MpiResult<Op> {
    macro_rules! pair {
        ($v:ty, $idx_at:expr, $size:expr) => {
            pair!($v, i32, $idx_at, $size)
        };
        ($v:ty, $i:ty, $idx_at:expr, $size:expr) => {{
            let f = move |a: &[u8], b: &mut [u8]| {
                for (x, y) in a.chunks_exact($size).zip(b.chunks_exact_mut($size)) {
                    let val = |c: &[u8]| {
                        <$v>::from_ne_bytes(
                            c[..std::mem::size_of::<$v>()]
                                .try_into()
                                .expect("value bytes"),
                        )
                    };
                    let idx = |c: &[u8]| {
                        <$i>::from_ne_bytes(
                            c[$idx_at..$idx_at + std::mem::size_of::<$i>()]
                                .try_into()
                                .expect("index bytes"),
                        )
                    };
                    let (xv, yv) = (val(x), val(y));
                    let better = if max { xv > yv } else { xv < yv };
                    if better || (xv == yv && idx(x) < idx(y)) {
                        y.copy_from_slice(x);
                    }
                }
            };
            Ok(Op::user_bytes($size, true, f)?)
        }};
    }
    // Reductions see packed elements: the value, then the index, without padding.
    match ty {
        0x228 => pair!(f32, 4, 8),   // MPI_FLOAT_INT
        0x229 => pair!(f64, 8, 12),  // MPI_DOUBLE_INT
        0x22a => pair!(i64, 8, 12),  // MPI_LONG_INT
        0x22b => pair!(i32, 4, 8),   // MPI_2INT
        0x22c => pair!(i16, 2, 6),   // MPI_SHORT_INT
        0x22d => crate::long_double_ops::loc(max), // MPI_LONG_DOUBLE_INT
        // Fortran's pairs: the index has the value's type.
        0x230 => pair!(f32, f32, 4, 8),  // MPI_2REAL
        0x231 => pair!(f64, f64, 8, 16), // MPI_2DOUBLE_PRECISION
        0x232 => pair!(i32, 4, 8),       // MPI_2INTEGER
        _ => err(MPI_ERR_OP, format!("MPI_MINLOC/MPI_MAXLOC need a value-index pair type (MPI_2INT, MPI_DOUBLE_INT, ...), not {ty:#x}")),
    }
}

/// The reduction `op` on elements of datatype `h` (resolved as `ty`).
pub fn reduction(op: Handle, h: Handle, ty: &Ty) -> MpiResult<Op> {
    match op {
        MPI_MINLOC => loc_op(h, false),
        MPI_MAXLOC => loc_op(h, true),
        MPI_OP_NULL => err(MPI_ERR_OP, "MPI_OP_NULL is not an operation"),
        u if u >= OP_BASE => {
            let UserOp { f, commute } = user(u)?;
            let size = ty.size;
            let layout = Layout::of(ty);
            let g = move |a: &[u8], b: &mut [u8]| {
                let n = b.len() / size.max(1);
                let call = |x: *mut u8, y: *mut u8| {
                    let mut dt = h;
                    // SAFETY: the user's function gets `len` elements of the datatype in
                    // each buffer, laid out as the type describes (MPI's rule); `x` is only
                    // read by a correct function.
                    match f {
                        UserFunc::Int(f) => unsafe { f(x, y, &mut (n as c_int), &mut dt) },
                        UserFunc::Count(f) => unsafe { f(x, y, &mut (n as i64), &mut dt) },
                        UserFunc::X { f, extra } => unsafe { f(x, y, n as i64, dt, extra as _) },
                    }
                };
                match &layout {
                    // Packed elements of a contiguous type are its layout already.
                    None => call(a.as_ptr().cast_mut(), b.as_mut_ptr()),
                    Some(l) => l.call(a, b, n, call),
                }
            };
            Ok(Op::user_bytes(size, commute, g)?)
        }
        op => match crate::complex_ops::reduction(op, ty) {
            Some(complex) => complex,
            None => match crate::long_double_ops::reduction(op, ty) {
                Some(long_double) => long_double,
                None => elementwise(op, h, ty.elem),
            },
        },
    }
}

/// A commutative operation that applies `each` to every `N`-byte element (`y = x op y`).
pub fn per_element<const N: usize>(each: fn(&[u8; N], &mut [u8; N])) -> MpiResult<Op> {
    let f = move |a: &[u8], b: &mut [u8]| {
        for (x, y) in a.chunks_exact(N).zip(b.chunks_exact_mut(N)) {
            each(
                x.try_into().expect("one element"),
                y.try_into().expect("one element"),
            );
        }
    };
    Ok(Op::user_bytes(N, true, f)?)
}

/// A predefined operation that works element by element (not MINLOC/MAXLOC) on elements
/// of kind `elem` of datatype `h`.
pub fn elementwise(op: Handle, h: Handle, elem: Option<ElemType>) -> MpiResult<Op> {
    let builtin = match op {
        MPI_SUM => BuiltinOp::Sum,
        MPI_PROD => BuiltinOp::Prod,
        MPI_MIN => BuiltinOp::Min,
        MPI_MAX => BuiltinOp::Max,
        MPI_LAND => BuiltinOp::LogicalAnd,
        MPI_LOR => BuiltinOp::LogicalOr,
        MPI_LXOR => BuiltinOp::LogicalXor,
        MPI_BAND => BuiltinOp::BitAnd,
        MPI_BOR => BuiltinOp::BitOr,
        MPI_BXOR => BuiltinOp::BitXor,
        other => {
            return err(MPI_ERR_OP, format!("operation {other:#x} is not supported by ibdyn (MPI_REPLACE and MPI_NO_OP are for one-sided communication)"))
        }
    };
    let Some(elem) = elem else {
        return err(
            MPI_ERR_OP,
            format!("predefined operations are not defined on datatype {h:#x}"),
        );
    };
    Ok(Op::builtin(builtin, elem)?)
}

/// Drops every user operation (MPI has ended) and runs the `_x` ones' destructors.
pub fn clear() {
    OPS.with(|t| drop(t.borrow_mut().drain()));
    for (d, extra) in DESTRUCTORS.with(|d| std::mem::take(&mut *d.borrow_mut())) {
        // SAFETY: the program's destructor of its own extra state, called once.
        unsafe { d(extra as *mut std::ffi::c_void) };
    }
}
