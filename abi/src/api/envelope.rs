//! MPI_Type_get_envelope and MPI_Type_get_contents (and their `_c` forms): every type
//! constructor records its combiner and arguments (`record`, into `derived::Recipe`), which
//! these return; the old types come back as new handles (predefined ones as themselves).

use super::out;
use crate::consts::*;
use crate::derived::{self, Recipe};
use crate::error::{err, MpiResult};
use crate::{call, export};
use std::os::raw::c_int;

pub const MPI_COMBINER_NAMED: c_int = 101;
pub const MPI_COMBINER_DUP: c_int = 102;
pub const MPI_COMBINER_CONTIGUOUS: c_int = 103;
pub const MPI_COMBINER_VECTOR: c_int = 104;
pub const MPI_COMBINER_HVECTOR: c_int = 105;
pub const MPI_COMBINER_INDEXED: c_int = 106;
pub const MPI_COMBINER_HINDEXED: c_int = 107;
pub const MPI_COMBINER_INDEXED_BLOCK: c_int = 108;
pub const MPI_COMBINER_HINDEXED_BLOCK: c_int = 109;
pub const MPI_COMBINER_STRUCT: c_int = 110;
pub const MPI_COMBINER_SUBARRAY: c_int = 111;
pub const MPI_COMBINER_DARRAY: c_int = 112;
pub const MPI_COMBINER_RESIZED: c_int = 116;

/// What a constructor records: combiner, integers, addresses, old types.
pub type Args = (c_int, Vec<i64>, Vec<isize>, Vec<Handle>);

/// After constructor call `rc` made `*newtype`, records how (`args` reads the caller's
/// arguments again; they were valid for the call). Returns `rc`.
pub fn record(rc: c_int, newtype: *mut Handle, args: impl FnOnce() -> MpiResult<Args>) -> c_int {
    if rc != MPI_SUCCESS || newtype.is_null() {
        return rc;
    }
    // SAFETY: the constructor has just written the new handle there.
    let h = unsafe { newtype.read() };
    if let Ok((combiner, ints, addrs, handles)) = args() {
        let types = handles
            .into_iter()
            .filter_map(|t| derived::resolve(t, false).ok().map(|ty| (t, ty)))
            .collect();
        derived::set_recipe(
            h,
            Recipe {
                combiner,
                ints,
                addrs,
                types,
            },
        );
    }
    rc
}

/// `n` entries of the caller's array, widened.
///
/// # Safety
/// `p` holds `n` entries (it was checked by the constructor).
pub unsafe fn list<T: Copy + Into<i64>>(p: *const T, n: c_int) -> Vec<i64> {
    if p.is_null() || n <= 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(p, n as usize) }
        .iter()
        .map(|&v| v.into())
        .collect()
}

/// Whether the recipe's integers are large counts: a contiguous type of more than an `int`
/// of elements (MPI_Type_contiguous_c is the one constructor that takes them).
fn large(r: &Recipe) -> bool {
    r.combiner == MPI_COMBINER_CONTIGUOUS && r.ints.iter().any(|&v| c_int::try_from(v).is_err())
}

/// The counts of MPI_Type_get_envelope: integers, addresses, large counts, datatypes,
/// combiner. The `int` form refuses a type with large counts.
fn envelope(ty: Handle, wide: bool) -> MpiResult<(usize, usize, usize, usize, c_int)> {
    Ok(match derived::recipe(ty)? {
        None => (0, 0, 0, 0, MPI_COMBINER_NAMED),
        Some(r) if large(&r) && !wide => {
            return err(
                MPI_ERR_VALUE_TOO_LARGE,
                "the type's count does not fit an int: use MPI_Type_get_envelope_c",
            )
        }
        Some(r) if large(&r) => (0, r.addrs.len(), r.ints.len(), r.types.len(), r.combiner),
        Some(r) => (r.ints.len(), r.addrs.len(), 0, r.types.len(), r.combiner),
    })
}

unsafe fn type_get_envelope(
    ty: Handle,
    ni: *mut c_int,
    na: *mut c_int,
    nd: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    call("MPI_Type_get_envelope", MPI_COMM_SELF, || {
        let (i, a, _, d, c) = envelope(ty, false)?;
        // SAFETY: the caller's output arguments.
        unsafe {
            out(ni, i as c_int, "num_integers")?;
            out(na, a as c_int, "num_addresses")?;
            out(nd, d as c_int, "num_datatypes")?;
            out(combiner, c, "combiner")
        }
    })
}

unsafe fn type_get_envelope_c(
    ty: Handle,
    ni: *mut i64,
    na: *mut i64,
    nl: *mut i64,
    nd: *mut i64,
    combiner: *mut c_int,
) -> c_int {
    call("MPI_Type_get_envelope_c", MPI_COMM_SELF, || {
        let (i, a, l, d, c) = envelope(ty, true)?;
        // SAFETY: the caller's output arguments.
        unsafe {
            out(ni, i as i64, "num_integers")?;
            out(na, a as i64, "num_addresses")?;
            out(nl, l as i64, "num_large_counts")?;
            out(nd, d as i64, "num_datatypes")?;
            out(combiner, c, "combiner")
        }
    })
}

/// Writes `v` into the caller's array of room `max`.
///
/// # Safety
/// `p` is valid for `max` writes.
unsafe fn fill<T: Copy>(p: *mut T, max: i64, v: &[T], what: &str) -> MpiResult<()> {
    if (max as i128) < v.len() as i128 {
        return err(
            MPI_ERR_ARG,
            format!("{what}: room for {max}, the type has {}", v.len()),
        );
    }
    if !v.is_empty() {
        if p.is_null() {
            return err(MPI_ERR_ARG, format!("{what} is NULL"));
        }
        // SAFETY: the caller's contract; v.len() <= max.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
    }
    Ok(())
}

fn contents(ty: Handle) -> MpiResult<Recipe> {
    match derived::recipe(ty)? {
        Some(r) => Ok(r),
        None => err(
            MPI_ERR_TYPE,
            "MPI_Type_get_contents of a predefined (named) type",
        ),
    }
}

/// MPI_Type_get_contents in either width: the arrays' room and the arrays.
///
/// # Safety
/// The arrays are valid for their room.
unsafe fn contents_into(
    name: &'static str,
    ty: Handle,
    room: (i64, i64, i64),
    ints: *mut c_int,
    addrs: *mut isize,
    types: *mut Handle,
    large_counts: Option<(i64, *mut i64)>,
) -> c_int {
    call(name, MPI_COMM_SELF, || {
        let r = contents(ty)?;
        if large(&r) {
            let Some((max_l, lp)) = large_counts else {
                return err(
                    MPI_ERR_VALUE_TOO_LARGE,
                    "the type's count does not fit an int: use MPI_Type_get_contents_c",
                );
            };
            let t: Vec<Handle> = r
                .types
                .iter()
                .map(|(h, t)| derived::handle_of(*h, t))
                .collect();
            // SAFETY: the caller's arrays of the given sizes.
            return unsafe {
                fill(lp, max_l, &r.ints, "array_of_large_counts")?;
                fill(addrs, room.1, &r.addrs, "array_of_addresses")?;
                fill(types, room.2, &t, "array_of_datatypes")
            };
        }
        let i: Vec<c_int> = r.ints.iter().map(|&v| v as c_int).collect();
        let t: Vec<Handle> = r
            .types
            .iter()
            .map(|(h, t)| derived::handle_of(*h, t))
            .collect();
        // SAFETY: the caller's arrays of the given sizes.
        unsafe {
            fill(ints, room.0, &i, "array_of_integers")?;
            fill(addrs, room.1, &r.addrs, "array_of_addresses")?;
            fill(types, room.2, &t, "array_of_datatypes")
        }
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn type_get_contents(
    ty: Handle,
    max_i: c_int,
    max_a: c_int,
    max_d: c_int,
    ints: *mut c_int,
    addrs: *mut isize,
    types: *mut Handle,
) -> c_int {
    let room = (max_i.into(), max_a.into(), max_d.into());
    // SAFETY: passed on.
    unsafe { contents_into("MPI_Type_get_contents", ty, room, ints, addrs, types, None) }
}

/// The `_c` form: a contiguous type's count beyond an `int` comes back as a large count.
#[allow(clippy::too_many_arguments)]
unsafe fn type_get_contents_c(
    ty: Handle,
    max_i: i64,
    max_a: i64,
    max_l: i64,
    max_d: i64,
    ints: *mut c_int,
    addrs: *mut isize,
    large: *mut i64,
    types: *mut Handle,
) -> c_int {
    let room = (max_i, max_a, max_d);
    // SAFETY: passed on.
    unsafe {
        contents_into(
            "MPI_Type_get_contents_c",
            ty,
            room,
            ints,
            addrs,
            types,
            Some((max_l, large)),
        )
    }
}

export!(MPI_Type_get_envelope, PMPI_Type_get_envelope, type_get_envelope,
    (datatype: Handle, num_integers: *mut c_int, num_addresses: *mut c_int,
     num_datatypes: *mut c_int, combiner: *mut c_int) -> c_int);
export!(MPI_Type_get_envelope_c, PMPI_Type_get_envelope_c, type_get_envelope_c,
    (datatype: Handle, num_integers: *mut i64, num_addresses: *mut i64,
     num_large_counts: *mut i64, num_datatypes: *mut i64, combiner: *mut c_int) -> c_int);
export!(MPI_Type_get_contents, PMPI_Type_get_contents, type_get_contents,
    (datatype: Handle, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int,
     array_of_integers: *mut c_int, array_of_addresses: *mut isize,
     array_of_datatypes: *mut Handle) -> c_int);
export!(MPI_Type_get_contents_c, PMPI_Type_get_contents_c, type_get_contents_c,
    (datatype: Handle, max_integers: i64, max_addresses: i64, max_large_counts: i64,
     max_datatypes: i64, array_of_integers: *mut c_int, array_of_addresses: *mut isize,
     array_of_large_counts: *mut i64, array_of_datatypes: *mut Handle) -> c_int);
