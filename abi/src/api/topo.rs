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
    let rest = nnodes / fixed;
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
    let divisors = divisors(rest);
    let mut best = Vec::new();
    let mut cur = Vec::new();
    search_factors(&divisors, rest, free.len(), rest, &mut cur, &mut best);
    for (&i, &n) in free.iter().zip(&best) {
        dims[i] = n as c_int;
    }
    Ok(())
}

/// Whether factorization `a` (non-increasing) is more balanced than `b`: a smaller spread
/// between largest and smallest, then a larger smallest, then lexicographically smaller;
/// this is the order that reproduces MPICH's answers.
fn better(a: &[i64], b: &[i64]) -> bool {
    let key = |t: &[i64]| (t[0] - t[t.len() - 1], -t[t.len() - 1]);
    (key(a), a) < (key(b), b)
}

/// All divisors of `n` (positive), ascending.
fn divisors(n: i64) -> Vec<i64> {
    let small: Vec<i64> = (1..=n)
        .take_while(|d| d * d <= n)
        .filter(|d| n % d == 0)
        .collect();
    let mut all: Vec<i64> = small
        .iter()
        .copied()
        .chain(small.iter().rev().map(|d| n / d))
        .collect();
    all.dedup();
    all
}

/// Largest `f` with `f^k <= r` (k >= 1).
fn iroot_floor(r: i64, k: usize) -> i64 {
    let fits = |f: i64| {
        let mut p: i64 = 1;
        for _ in 0..k {
            p = p.saturating_mul(f);
            if p > r {
                return false;
            }
        }
        true
    };
    let mut f = (r as f64).powf(1.0 / k as f64).round() as i64 + 1;
    while f > 1 && !fits(f) {
        f -= 1;
    }
    while fits(f + 1) {
        f += 1;
    }
    f
}

/// Branch and bound over the non-increasing factorizations of `rest` into `slots`
/// factors, each at most `max`, extending `cur`; the most balanced complete one ends in
/// `best`. `divisors` holds all divisors of the whole product, ascending. (Giving each prime
/// factor to the smallest dimension is not always optimal: 72 in 2 dims gives 12x6, not 9x8.)
fn search_factors(
    divisors: &[i64],
    rest: i64,
    slots: usize,
    max: i64,
    cur: &mut Vec<i64>,
    best: &mut Vec<i64>,
) {
    if slots == 0 {
        if rest == 1 && (best.is_empty() || better(cur, best)) {
            best.clone_from(cur);
        }
        return;
    }
    // The smallest factor still to come is at most the slots-th root of rest.
    let root = iroot_floor(rest, slots);
    let lowest = if root.checked_pow(slots as u32) == Some(rest) {
        root
    } else {
        root + 1
    };
    let from = divisors.partition_point(|&d| d < lowest);
    for &f in divisors[from..].iter().take_while(|&&d| d <= max.min(rest)) {
        let first = cur.first().copied().unwrap_or(f);
        if !best.is_empty() && first - root > best[0] - best[best.len() - 1] {
            break;
        }
        if rest % f == 0 {
            cur.push(f);
            search_factors(divisors, rest / f, slots - 1, f, cur, best);
            cur.pop();
        }
    }
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
    fn dimensions_are_as_close_as_possible() {
        assert_eq!(dims(72, vec![0, 0]), [9, 8]);
        assert_eq!(dims(180, vec![0, 0]), [15, 12]);
        assert_eq!(dims(600, vec![0, 0]), [25, 24]);
        assert_eq!(dims(432, vec![0, 0, 0]), [9, 8, 6]);
        assert_eq!(dims(720, vec![0, 0, 0]), [10, 9, 8]);
        assert_eq!(dims(360, vec![0, 0, 0]), [10, 6, 6]);
        assert_eq!(dims(144, vec![0, 2, 0]), [9, 2, 8]);
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
