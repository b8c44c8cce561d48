//! MPI_Type_create_darray (and `_c`): the part of an n-dimensional array that one process of
//! a process grid owns under a block, cyclic or no distribution per dimension (as HPF
//! defines them), in C or Fortran order. The type map lists the owned elements in the order
//! of the process's local array (each dimension's owned indices ascending, the fastest
//! dimension innermost), at their offsets in the global array; lb 0 and the global array's
//! extent, as the standard defines it.

use super::envelope::list;
use super::out;
use crate::consts::*;
use crate::derived::{self, Part};
use crate::error::{err, MpiResult};
use crate::{call, export};
use std::os::raw::c_int;

const MPI_ORDER_C: c_int = 12;
const MPI_ORDER_FORTRAN: c_int = 15;
const MPI_DISTRIBUTE_NONE: c_int = 16;
const MPI_DISTRIBUTE_BLOCK: c_int = 17;
const MPI_DISTRIBUTE_CYCLIC: c_int = 18;
const MPI_DISTRIBUTE_DFLT_DARG: c_int = 19;

/// The global indices of one dimension that the process at `coord` of `p` owns, ascending.
fn owned(d: usize, g: i64, distrib: c_int, darg: c_int, p: i64, coord: i64) -> MpiResult<Vec<i64>> {
    let bad = |why: String| err(MPI_ERR_ARG, format!("dimension {d}: {why}"));
    match distrib {
        MPI_DISTRIBUTE_NONE => {
            if p != 1 {
                return bad(format!("MPI_DISTRIBUTE_NONE needs 1 process in the grid, not {p}"));
            }
            Ok((0..g).collect())
        }
        MPI_DISTRIBUTE_BLOCK => {
            let b = match darg {
                MPI_DISTRIBUTE_DFLT_DARG => (g + p - 1) / p,
                b if b > 0 => i64::from(b),
                b => return bad(format!("block size {b} must be positive")),
            };
            if b * p < g {
                return bad(format!("{p} blocks of {b} do not cover {g} elements"));
            }
            Ok((coord * b..((coord + 1) * b).min(g)).collect())
        }
        MPI_DISTRIBUTE_CYCLIC => {
            let b = match darg {
                MPI_DISTRIBUTE_DFLT_DARG => 1,
                b if b > 0 => i64::from(b),
                b => return bad(format!("cyclic block size {b} must be positive")),
            };
            let mut v = Vec::new();
            let mut start = coord * b;
            while start < g {
                v.extend(start..(start + b).min(g));
                start += p * b;
            }
            Ok(v)
        }
        x => bad(format!(
            "distribution {x}: use MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC or MPI_DISTRIBUTE_NONE"
        )),
    }
}

/// The runs of owned elements (offset in elements, length), in local-array order, with
/// dimensions slowest first; the global element count.
#[allow(clippy::too_many_arguments)]
fn runs(
    size: c_int,
    rank: c_int,
    gsizes: &[i64],
    distribs: &[i64],
    dargs: &[i64],
    psizes: &[i64],
    fortran: bool,
) -> MpiResult<(Vec<(i64, i64)>, i64)> {
    let nd = gsizes.len();
    if psizes.iter().product::<i64>() != i64::from(size) {
        return err(
            MPI_ERR_ARG,
            format!("the process grid {psizes:?} does not hold size {size} processes"),
        );
    }
    if rank < 0 || rank >= size {
        return err(MPI_ERR_RANK, format!("rank {rank} is not in 0..{size}"));
    }
    if gsizes.iter().any(|&g| g < 1) || psizes.iter().any(|&p| p < 1) {
        return err(
            MPI_ERR_ARG,
            "global sizes and process grid sizes must be positive",
        );
    }
    // The process grid is row-major whatever the array's order.
    let mut coords = vec![0i64; nd];
    let mut r = i64::from(rank);
    for d in (0..nd).rev() {
        coords[d] = r % psizes[d];
        r /= psizes[d];
    }
    let mut own = Vec::with_capacity(nd);
    for d in 0..nd {
        own.push(owned(
            d,
            gsizes[d],
            distribs[d] as c_int,
            dargs[d] as c_int,
            psizes[d],
            coords[d],
        )?);
    }
    // In Fortran order the first dimension is the fastest: reverse to reuse C's walk.
    let mut g = gsizes.to_vec();
    if fortran {
        g.reverse();
        own.reverse();
    }
    let mut stride = vec![1i64; nd];
    for d in (0..nd.saturating_sub(1)).rev() {
        stride[d] = stride[d + 1].saturating_mul(g[d + 1]);
    }
    let total = g.iter().try_fold(1i64, |a, &n| a.checked_mul(n));
    let Some(total) = total else {
        return err(
            MPI_ERR_ARG,
            "the global array is larger than memory can address",
        );
    };
    let mut out: Vec<(i64, i64)> = Vec::new();
    if own.iter().any(|o| o.is_empty()) {
        return Ok((out, total));
    }
    let mut idx = vec![0usize; nd];
    loop {
        let at: i64 = (0..nd).map(|d| own[d][idx[d]] * stride[d]).sum();
        match out.last_mut() {
            Some(last) if last.0 + last.1 == at => last.1 += 1,
            _ => out.push((at, 1)),
        }
        let mut d = nd;
        loop {
            if d == 0 {
                return Ok((out, total));
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < own[d].len() {
                break;
            }
            idx[d] = 0;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn darray(
    name: &'static str,
    size: c_int,
    rank: c_int,
    gsizes: Vec<i64>,
    distribs: Vec<i64>,
    dargs: Vec<i64>,
    psizes: Vec<i64>,
    order: c_int,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    let nd = gsizes.len();
    let args = [
        vec![i64::from(size), i64::from(rank), nd as i64],
        gsizes.clone(),
        distribs.clone(),
        dargs.clone(),
        psizes.clone(),
        vec![i64::from(order)],
    ]
    .concat();
    let rc = call(name, MPI_COMM_SELF, || {
        if nd == 0 || [&distribs, &dargs, &psizes].iter().any(|v| v.len() != nd) {
            return err(
                MPI_ERR_ARG,
                "ndims must be positive and the four arrays non-NULL, ndims entries each",
            );
        }
        let fortran = match order {
            MPI_ORDER_C => false,
            MPI_ORDER_FORTRAN => true,
            o => {
                return err(
                    MPI_ERR_ARG,
                    format!("order {o} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"),
                )
            }
        };
        let old = derived::resolve(oldtype, false)?;
        let (runs, total) = runs(size, rank, &gsizes, &distribs, &dargs, &psizes, fortran)?;
        let parts: Vec<Part> = runs
            .iter()
            .map(|&(at, n)| Part {
                disp: at as isize * old.extent,
                count: n as usize,
                ty: old.clone(),
            })
            .collect();
        let h = super::subarray::whole_array(&parts, total, &old)?;
        // SAFETY: the caller's output argument.
        unsafe { out(newtype, h, "newtype") }
    });
    let combiner = super::envelope::MPI_COMBINER_DARRAY;
    super::envelope::record(rc, newtype, || Ok((combiner, args, vec![], vec![oldtype])))
}

/// The exported forms: `int` or `MPI_Count` global sizes.
macro_rules! darray_forms {
    ($($f:ident $name:literal $t:ty;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        unsafe fn $f(
            size: c_int,
            rank: c_int,
            ndims: c_int,
            gsizes: *const $t,
            distribs: *const c_int,
            dargs: *const c_int,
            psizes: *const c_int,
            order: c_int,
            oldtype: Handle,
            newtype: *mut Handle,
        ) -> c_int {
            // SAFETY: the caller's arrays of ndims entries.
            let (g, d, a, p) = unsafe {
                (list(gsizes, ndims), list(distribs, ndims), list(dargs, ndims), list(psizes, ndims))
            };
            darray($name, size, rank, g, d, a, p, order, oldtype, newtype)
        }
    )*};
}

darray_forms! {
    type_create_darray "MPI_Type_create_darray" c_int;
    type_create_darray_c "MPI_Type_create_darray_c" i64;
}

export!(MPI_Type_create_darray, PMPI_Type_create_darray, type_create_darray,
    (size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const c_int,
     array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int,
     order: c_int, oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_darray_c, PMPI_Type_create_darray_c, type_create_darray_c,
    (size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const i64,
     array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int,
     order: c_int, oldtype: Handle, newtype: *mut Handle) -> c_int);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_row_of_a_2x2_grid_owns_its_quarter() {
        let _owner = ibdyn_owner::enter();
        // 4x4 array, 2x2 grid, block-block, C order: rank 1 owns rows 0-1, columns 2-3.
        let b = i64::from(MPI_DISTRIBUTE_BLOCK);
        let d = i64::from(MPI_DISTRIBUTE_DFLT_DARG);
        let (r, total) = runs(4, 1, &[4, 4], &[b, b], &[d, d], &[2, 2], false).unwrap();
        assert_eq!(total, 16);
        assert_eq!(r, vec![(2, 2), (6, 2)]);
    }

    #[test]
    fn cyclic_and_fortran_order() {
        let _owner = ibdyn_owner::enter();
        let c = i64::from(MPI_DISTRIBUTE_CYCLIC);
        let n = i64::from(MPI_DISTRIBUTE_NONE);
        let d = i64::from(MPI_DISTRIBUTE_DFLT_DARG);
        // 1-d, 6 elements, cyclic over 2: rank 1 owns 1, 3, 5.
        let (r, _) = runs(2, 1, &[6], &[c], &[d], &[2], false).unwrap();
        assert_eq!(r, vec![(1, 1), (3, 1), (5, 1)]);
        // 2x3 Fortran array (column-major), columns cyclic over 3, rows not distributed:
        // rank 2 owns column 2, elements 4 and 5.
        let (r, _) = runs(3, 2, &[2, 3], &[n, c], &[d, d], &[1, 3], true).unwrap();
        assert_eq!(r, vec![(4, 2)]);
    }

    #[test]
    fn a_grid_that_does_not_match_size_is_refused() {
        let _owner = ibdyn_owner::enter();
        let b = i64::from(MPI_DISTRIBUTE_BLOCK);
        let d = i64::from(MPI_DISTRIBUTE_DFLT_DARG);
        assert!(runs(3, 0, &[4], &[b], &[d], &[2], false).is_err());
        assert!(runs(2, 0, &[4], &[b], &[1], &[2], false).is_err());
    }
}
