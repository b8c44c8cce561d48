//! Process topologies: MPI_Topo_test (MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH for the
//! communicators of `cart.rs` and `graph.rs`, MPI_UNDEFINED otherwise) and MPI_Dims_create.
//! Libraries probe MPI_Topo_test on every communicator they wrap (mpi4py does in its
//! error-handler path), so it must answer for every valid communicator.

use super::out;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::state::with_state;
use crate::{call, export};
use std::os::raw::c_int;

unsafe fn topo_test(comm: Handle, status: *mut c_int) -> c_int {
    call("MPI_Topo_test", comm, || {
        let kind = with_state(|s| Ok(s.comm(comm)?.topo.as_ref().map(|t| t.kind())))?;
        let kind = kind.unwrap_or(MPI_UNDEFINED);
        // SAFETY: the caller's output argument.
        unsafe { out(status, kind, "status") }
    })
}

/// Fills the zero entries of `dims` so that the product of all entries is `nnodes`, the
/// filled ones as close to each other as possible and in non-increasing order.
fn balanced_dims(nnodes: i64, dims: &mut [c_int]) -> MpiResult<()> {
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return err(
            MPI_ERR_DIMS,
            format!("dims holds {d}; entries are 0 (to fill) or positive"),
        );
    }
    let fixed: i64 = dims
        .iter()
        .filter(|&&d| d > 0)
        .map(|&d| i64::from(d))
        .product();
    if nnodes % fixed != 0 {
        return err(
            MPI_ERR_DIMS,
            format!("nnodes {nnodes} is not a multiple of the product of the fixed dims ({fixed})"),
        );
    }
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    let mut rest = nnodes / fixed;
    if free.is_empty() {
        return if rest == 1 {
            Ok(())
        } else {
            err(
                MPI_ERR_DIMS,
                format!("the fixed dims multiply to {fixed}, not nnodes {nnodes}"),
            )
        };
    }
    // Prime factors, largest first, each to the currently smallest free dimension.
    let mut primes = Vec::new();
    let mut p = 2;
    while p * p <= rest {
        while rest % p == 0 {
            primes.push(p);
            rest /= p;
        }
        p += 1;
    }
    if rest > 1 {
        primes.push(rest);
    }
    let mut sizes = vec![1i64; free.len()];
    for &f in primes.iter().rev() {
        let smallest = (0..sizes.len()).min_by_key(|&i| sizes[i]).unwrap_or(0);
        sizes[smallest] *= f;
    }
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    for (&i, &n) in free.iter().zip(&sizes) {
        dims[i] = n as c_int;
    }
    Ok(())
}

unsafe fn dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    call("MPI_Dims_create", MPI_COMM_SELF, || {
        if nnodes < 1 || ndims < 0 {
            return err(
                MPI_ERR_ARG,
                format!("nnodes {nnodes} and ndims {ndims}: nnodes must be positive, ndims not negative"),
            );
        }
        if ndims == 0 {
            return if nnodes == 1 {
                Ok(())
            } else {
                err(
                    MPI_ERR_DIMS,
                    format!("no dimensions cannot hold {nnodes} processes"),
                )
            };
        }
        if dims.is_null() {
            return err(MPI_ERR_ARG, "dims is NULL");
        }
        // SAFETY: the caller's array of ndims entries (checked non-null).
        let d = unsafe { std::slice::from_raw_parts_mut(dims, ndims as usize) };
        balanced_dims(i64::from(nnodes), d)
    })
}

#[cfg(test)]
mod tests {
    use super::balanced_dims;

    fn dims(n: i64, mut d: Vec<i32>) -> Vec<i32> {
        balanced_dims(n, &mut d).unwrap();
        d
    }

    #[test]
    fn free_dimensions_are_balanced_and_non_increasing() {
        assert_eq!(dims(6, vec![0, 0]), [3, 2]);
        assert_eq!(dims(7, vec![0, 0]), [7, 1]);
        assert_eq!(dims(16, vec![0, 0]), [4, 4]);
        assert_eq!(dims(24, vec![0, 0, 0]), [4, 3, 2]);
        assert_eq!(dims(12, vec![0, 3, 0]), [2, 3, 2]);
        assert_eq!(dims(1, vec![0, 0, 0]), [1, 1, 1]);
        assert_eq!(dims(8, vec![2, 4]), [2, 4]);
    }

    #[test]
    fn impossible_requests_are_errors() {
        assert!(balanced_dims(10, &mut [3, 0]).is_err());
        assert!(balanced_dims(8, &mut [2, 2]).is_err());
        assert!(balanced_dims(4, &mut [-1, 0]).is_err());
    }
}

export!(MPI_Dims_create, PMPI_Dims_create, dims_create,
    (nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int);
export!(MPI_Topo_test, PMPI_Topo_test, topo_test, (comm: Handle, status: *mut c_int) -> c_int);
