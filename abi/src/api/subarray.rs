//! MPI_Type_create_subarray (and `_c`): a block of an n-dimensional array of `oldtype`, in C
//! or Fortran order. The type map is the rows of the block (one run of `subsizes` of the
//! fastest dimension each) at their offsets in the full array; lb 0 and the full array's
//! extent, so consecutive elements are consecutive full arrays, as the standard defines it.

use super::envelope::list;
use super::out;
use crate::consts::*;
use crate::derived::{self, Part, Ty};
use crate::error::{err, MpiResult};
use crate::{call, export};
use std::os::raw::c_int;

const MPI_ORDER_C: c_int = 12;
const MPI_ORDER_FORTRAN: c_int = 15;

/// The parts (runs of `oldtype` elements) of a subarray, dimensions slowest first; the full
/// array's element count.
fn rows(sizes: &[i64], subsizes: &[i64], starts: &[i64], old: &Ty) -> MpiResult<(Vec<Part>, i64)> {
    let extent = old.extent;
    for d in 0..sizes.len() {
        let (n, s, at) = (sizes[d], subsizes[d], starts[d]);
        if n < 1 || s < 1 || at < 0 || at + s > n {
            return err(
                MPI_ERR_ARG,
                format!("dimension {d}: size {n}, subsize {s}, start {at}: need 1 <= subsize, 0 <= start, start + subsize <= size"),
            );
        }
    }
    let nd = sizes.len();
    // Elements between consecutive indices of each dimension.
    let mut stride = vec![1i64; nd];
    for d in (0..nd.saturating_sub(1)).rev() {
        stride[d] = stride[d + 1].saturating_mul(sizes[d + 1]);
    }
    let total = sizes.iter().try_fold(1i64, |a, &n| a.checked_mul(n));
    let Some(total) = total.filter(|&t| t <= isize::MAX as i64 / extent.max(1) as i64) else {
        return err(
            MPI_ERR_ARG,
            "the full array is larger than memory can address",
        );
    };
    let (run, outer) = (subsizes[nd - 1], &subsizes[..nd - 1]);
    let mut parts = Vec::new();
    let mut idx = vec![0i64; nd.saturating_sub(1)];
    loop {
        let mut at = starts[nd - 1];
        for d in 0..nd - 1 {
            at += (starts[d] + idx[d]) * stride[d];
        }
        parts.push(Part {
            disp: at as isize * extent,
            count: run as usize,
            ty: old.clone(),
        });
        // The next index of the outer dimensions, fastest last.
        let mut d = outer.len();
        loop {
            if d == 0 {
                return Ok((parts, total));
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < outer[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// The type of `parts` of an array of `total` elements of `old`: lb 0 and the whole array's
/// extent, so consecutive elements are consecutive arrays (subarray and darray types).
pub(super) fn whole_array(parts: &[Part], total: i64, old: &Ty) -> MpiResult<Handle> {
    let inner = derived::build(parts, false)?;
    let h = derived::resized(
        &derived::resolve(inner, false)?,
        0,
        total as isize * old.extent,
    );
    derived::free(inner)?;
    Ok(h)
}

#[allow(clippy::too_many_arguments)]
fn subarray(
    name: &'static str,
    sizes: Vec<i64>,
    subsizes: Vec<i64>,
    starts: Vec<i64>,
    order: c_int,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    let n = vec![sizes.len() as i64];
    let args = [
        n,
        sizes.clone(),
        subsizes.clone(),
        starts.clone(),
        vec![i64::from(order)],
    ]
    .concat();
    let rc = call(name, MPI_COMM_SELF, || {
        if sizes.is_empty() || subsizes.len() != sizes.len() || starts.len() != sizes.len() {
            return err(
                MPI_ERR_ARG,
                "ndims must be positive and the three arrays non-NULL, ndims entries each",
            );
        }
        let (mut sizes, mut subsizes, mut starts) = (sizes, subsizes, starts);
        match order {
            MPI_ORDER_C => {}
            // Fortran order: the first dimension is the fastest.
            MPI_ORDER_FORTRAN => {
                sizes.reverse();
                subsizes.reverse();
                starts.reverse();
            }
            o => {
                return err(
                    MPI_ERR_ARG,
                    format!("order {o} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"),
                )
            }
        }
        let old = derived::resolve(oldtype, false)?;
        let (parts, total) = rows(&sizes, &subsizes, &starts, &old)?;
        let h = whole_array(&parts, total, &old)?;
        // SAFETY: the caller's output argument.
        unsafe { out(newtype, h, "newtype") }
    });
    let combiner = super::envelope::MPI_COMBINER_SUBARRAY;
    super::envelope::record(rc, newtype, || Ok((combiner, args, vec![], vec![oldtype])))
}

/// The exported forms: `int` or `MPI_Count` arrays.
macro_rules! subarray_forms {
    ($($f:ident $name:literal $t:ty;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f(
            ndims: c_int,
            sizes: *const $t,
            subsizes: *const $t,
            starts: *const $t,
            order: c_int,
            oldtype: Handle,
            newtype: *mut Handle,
        ) -> c_int {
            // SAFETY: the caller's arrays of ndims entries.
            let (a, b, c) = unsafe { (list(sizes, ndims), list(subsizes, ndims), list(starts, ndims)) };
            subarray($name, a, b, c, order, oldtype, newtype)
        }
    )*};
}

subarray_forms! {
    type_create_subarray "MPI_Type_create_subarray" c_int;
    type_create_subarray_c "MPI_Type_create_subarray_c" i64;
}

export!(MPI_Type_create_subarray, PMPI_Type_create_subarray, type_create_subarray,
    (ndims: c_int, array_of_sizes: *const c_int, array_of_subsizes: *const c_int,
     array_of_starts: *const c_int, order: c_int, oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_subarray_c, PMPI_Type_create_subarray_c, type_create_subarray_c,
    (ndims: c_int, array_of_sizes: *const i64, array_of_subsizes: *const i64,
     array_of_starts: *const i64, order: c_int, oldtype: Handle, newtype: *mut Handle) -> c_int);
