//! Cartesian topologies: MPI_Cart_create, _get, _rank, _coords, _shift, _sub, _map and
//! MPI_Cartdim_get. A Cartesian communicator is a split of the old one (ranks in order:
//! `reorder` is allowed to keep them) with the grid kept beside it (`crate::cart`).

use super::out;
use crate::cart::{Cart, CartError};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::state::{with_state, State};
use crate::topology::Topology;
use crate::{call, export};
use ibdyn::traits::*;
use ibdyn::IntraCommunicator;
use std::os::raw::c_int;

impl From<CartError> for MpiError {
    fn from(e: CartError) -> MpiError {
        match e {
            CartError::Dims(m) => MpiError::new(MPI_ERR_DIMS, m),
            CartError::Coords(m) => MpiError::new(MPI_ERR_ARG, m),
        }
    }
}

/// `n` ints from the caller's array `p`.
///
/// # Safety
/// `p` is valid for `n` reads when `n > 0`.
unsafe fn ints(p: *const c_int, n: c_int, what: &str) -> MpiResult<Vec<c_int>> {
    let Ok(n) = usize::try_from(n) else {
        return err(MPI_ERR_ARG, format!("{what}: negative length {n}"));
    };
    // SAFETY: passed on.
    unsafe { super::read_array(p, n, what) }
}

/// Writes `v` into the caller's array `p` of `max` entries.
///
/// # Safety
/// `p` is valid for `max` writes when `v` is not empty.
unsafe fn put(p: *mut c_int, max: c_int, v: &[c_int], what: &str) -> MpiResult<()> {
    if v.is_empty() {
        return Ok(());
    }
    if (max as i64) < v.len() as i64 {
        return err(
            MPI_ERR_ARG,
            format!(
                "{what}: room for {max} entries, the grid has {} dimensions",
                v.len()
            ),
        );
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: non-null and valid for at least v.len() writes (checked against max).
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
    Ok(())
}

/// The grid of Cartesian communicator `comm`.
fn grid(s: &State, comm: Handle) -> MpiResult<Cart> {
    match &s.comm(comm)?.topo {
        Some(Topology::Cart(g)) => Ok(g.clone()),
        _ => Err(()),
    }
    .map_err(|()| {
        MpiError::new(
            MPI_ERR_TOPOLOGY,
            format!(
                "communicator {comm:#x} has no Cartesian topology (make one with MPI_Cart_create)"
            ),
        )
    })
}

fn my_rank(s: &State, comm: Handle) -> MpiResult<c_int> {
    Ok(s.comm(comm)?.comm.raw().rank())
}

unsafe fn cart_create(
    comm_old: Handle,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: *mut Handle,
) -> c_int {
    call("MPI_Cart_create", comm_old, || {
        // SAFETY: the caller's arrays of ndims entries.
        let (d, p) = unsafe { (ints(dims, ndims, "dims")?, ints(periods, ndims, "periods")?) };
        let cart = Cart::new(d, p.iter().map(|&x| x != 0).collect())?;
        let fits = |intra: &IntraCommunicator| {
            if cart.size() > intra.size() {
                return err(
                    MPI_ERR_DIMS,
                    format!(
                        "the grid needs {} processes, the communicator has {}",
                        cart.size(),
                        intra.size()
                    ),
                );
            }
            Ok(cart.size())
        };
        let topo = Topology::Cart(cart.clone());
        let h = super::graph::attach(comm_old, "MPI_Cart_create", fits, topo)?;
        // SAFETY: the caller's output argument.
        unsafe { out(comm_cart, h, "comm_cart") }
    })
}

unsafe fn cartdim_get(comm: Handle, ndims: *mut c_int) -> c_int {
    call("MPI_Cartdim_get", comm, || {
        let n = with_state(|s| grid(s, comm))?.dims().len() as c_int;
        // SAFETY: the caller's output argument.
        unsafe { out(ndims, n, "ndims") }
    })
}

unsafe fn cart_get(
    comm: Handle,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    call("MPI_Cart_get", comm, || {
        let (g, me) = with_state(|s| Ok((grid(s, comm)?, my_rank(s, comm)?)))?;
        let p: Vec<c_int> = g.periods().iter().map(|&b| c_int::from(b)).collect();
        // SAFETY: the caller's arrays of maxdims entries.
        unsafe {
            put(dims, maxdims, g.dims(), "dims")?;
            put(periods, maxdims, &p, "periods")?;
            put(coords, maxdims, &g.coords(me), "coords")
        }
    })
}

unsafe fn cart_rank(comm: Handle, coords: *const c_int, rank: *mut c_int) -> c_int {
    call("MPI_Cart_rank", comm, || {
        let g = with_state(|s| grid(s, comm))?;
        // SAFETY: the caller's array of one entry per dimension.
        let c = unsafe { ints(coords, g.dims().len() as c_int, "coords") }?;
        let r = g.rank(&c)?;
        // SAFETY: the caller's output argument.
        unsafe { out(rank, r, "rank") }
    })
}

unsafe fn cart_coords(comm: Handle, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int {
    call("MPI_Cart_coords", comm, || {
        let g = with_state(|s| grid(s, comm))?;
        if !(0..g.size()).contains(&rank) {
            return err(
                MPI_ERR_RANK,
                format!("rank {rank} is not in a grid of {}", g.size()),
            );
        }
        // SAFETY: the caller's array of maxdims entries.
        unsafe { put(coords, maxdims, &g.coords(rank), "coords") }
    })
}

unsafe fn cart_shift(
    comm: Handle,
    direction: c_int,
    disp: c_int,
    rank_source: *mut c_int,
    rank_dest: *mut c_int,
) -> c_int {
    call("MPI_Cart_shift", comm, || {
        let (g, me) = with_state(|s| Ok((grid(s, comm)?, my_rank(s, comm)?)))?;
        let Some(dir) = usize::try_from(direction)
            .ok()
            .filter(|&d| d < g.dims().len())
        else {
            return err(
                MPI_ERR_ARG,
                format!(
                    "direction {direction} is not a dimension of a {}-dimensional grid",
                    g.dims().len()
                ),
            );
        };
        let (src, dst) = g.shift(me, dir, disp);
        // SAFETY: the caller's output arguments.
        unsafe {
            out(rank_source, src.unwrap_or(MPI_PROC_NULL), "rank_source")?;
            out(rank_dest, dst.unwrap_or(MPI_PROC_NULL), "rank_dest")
        }
    })
}

unsafe fn cart_sub(comm: Handle, remain_dims: *const c_int, newcomm: *mut Handle) -> c_int {
    call("MPI_Cart_sub", comm, || {
        let (g, me) = with_state(|s| {
            let e = s.comm(comm)?;
            Ok((grid(s, comm)?, e.comm.intra("MPI_Cart_sub")?.rank()))
        })?;
        // SAFETY: the caller's array of one flag per dimension.
        let keep = unsafe { ints(remain_dims, g.dims().len() as c_int, "remain_dims") }?;
        let keep: Vec<bool> = keep.iter().map(|&k| k != 0).collect();
        let (colour, key, sub) = g.sub(me, &keep);
        let h = super::comm::split_staged(comm, |_| Ok((Some(colour as u32), key)))?;
        if h == MPI_COMM_NULL {
            return err(MPI_ERR_INTERN, "a Cartesian sub-grid came back empty");
        }
        with_state(|s| {
            s.comm_mut(h)?.topo = Some(Topology::Cart(sub));
            Ok(())
        })?;
        // SAFETY: the caller's output argument.
        unsafe { out(newcomm, h, "newcomm") }
    })
}

unsafe fn cart_map(
    comm: Handle,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    call("MPI_Cart_map", comm, || {
        // SAFETY: the caller's arrays of ndims entries.
        let (d, p) = unsafe { (ints(dims, ndims, "dims")?, ints(periods, ndims, "periods")?) };
        let cart = Cart::new(d, p.iter().map(|&x| x != 0).collect())?;
        let (me, size) = with_state(|s| {
            let c = s.comm(comm)?.comm.intra("MPI_Cart_map")?;
            Ok((c.rank(), c.size()))
        })?;
        if cart.size() > size {
            return err(
                MPI_ERR_DIMS,
                format!(
                    "the grid needs {} processes, the communicator has {size}",
                    cart.size()
                ),
            );
        }
        let r = if me < cart.size() { me } else { MPI_UNDEFINED };
        // SAFETY: the caller's output argument.
        unsafe { out(newrank, r, "newrank") }
    })
}

export!(MPI_Cart_create, PMPI_Cart_create, cart_create,
    (comm_old: Handle, ndims: c_int, dims: *const c_int, periods: *const c_int, reorder: c_int,
     comm_cart: *mut Handle) -> c_int);
export!(MPI_Cartdim_get, PMPI_Cartdim_get, cartdim_get, (comm: Handle, ndims: *mut c_int) -> c_int);
export!(MPI_Cart_get, PMPI_Cart_get, cart_get,
    (comm: Handle, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) -> c_int);
export!(MPI_Cart_rank, PMPI_Cart_rank, cart_rank,
    (comm: Handle, coords: *const c_int, rank: *mut c_int) -> c_int);
export!(MPI_Cart_coords, PMPI_Cart_coords, cart_coords,
    (comm: Handle, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int);
export!(MPI_Cart_shift, PMPI_Cart_shift, cart_shift,
    (comm: Handle, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int) -> c_int);
export!(MPI_Cart_sub, PMPI_Cart_sub, cart_sub,
    (comm: Handle, remain_dims: *const c_int, newcomm: *mut Handle) -> c_int);
export!(MPI_Cart_map, PMPI_Cart_map, cart_map,
    (comm: Handle, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) -> c_int);
