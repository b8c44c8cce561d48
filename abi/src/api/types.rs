//! Datatype constructors and queries: contiguous, vector, hvector, indexed, hindexed,
//! indexed_block, struct, resized, dup, commit, free, size, extent, true extent, names,
//! Get_address.

use super::envelope::{self as env, list, record};
use super::{out, out_string};
use crate::consts::*;
use crate::derived::{self, Part, Ty};
use crate::error::{err, MpiResult};
use crate::{call, export};
use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int};

fn count_of(n: c_int, what: &str) -> MpiResult<usize> {
    usize::try_from(n).or_else(|_| err(MPI_ERR_COUNT, format!("{what} {n} is negative")))
}

/// `n` entries of the caller's array `p`.
///
/// # Safety
/// `p` holds `n` entries (or `n` is 0).
unsafe fn array<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Builds a type from `parts` and stores its handle in `newtype`.
fn make(
    name: &'static str,
    newtype: *mut Handle,
    f: impl FnOnce() -> MpiResult<Vec<Part>>,
    is_struct: bool,
) -> c_int {
    call(name, MPI_COMM_SELF, || {
        let h = derived::build(&f()?, is_struct)?;
        // SAFETY: the caller's output argument.
        unsafe { out(newtype, h, "newtype") }
    })
}

fn old(h: Handle) -> MpiResult<Ty> {
    derived::resolve(h, false)
}

pub(super) unsafe fn type_contiguous(count: c_int, oldtype: Handle, newtype: *mut Handle) -> c_int {
    // SAFETY: passed through.
    unsafe { contiguous("MPI_Type_contiguous", count.into(), oldtype, newtype) }
}

/// MPI_Type_contiguous_c: counts beyond an `int`, as the large-count form allows.
unsafe fn type_contiguous_c(count: i64, oldtype: Handle, newtype: *mut Handle) -> c_int {
    // SAFETY: passed through.
    unsafe { contiguous("MPI_Type_contiguous_c", count, oldtype, newtype) }
}

unsafe fn contiguous(
    name: &'static str,
    count: i64,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    record(
        make(
            name,
            newtype,
            || {
                let Ok(count) = usize::try_from(count) else {
                    return err(MPI_ERR_COUNT, format!("count {count} is negative"));
                };
                Ok(vec![Part {
                    disp: 0,
                    count,
                    ty: old(oldtype)?,
                }])
            },
            false,
        ),
        newtype,
        || {
            Ok((
                env::MPI_COMBINER_CONTIGUOUS,
                vec![count],
                vec![],
                vec![oldtype],
            ))
        },
    )
}

/// Blocks of `blocklength` elements every `stride` bytes.
fn strided(
    count: c_int,
    blocklength: c_int,
    stride: isize,
    oldtype: Handle,
) -> MpiResult<Vec<Part>> {
    let (n, bl, ty) = (
        count_of(count, "count")?,
        count_of(blocklength, "blocklength")?,
        old(oldtype)?,
    );
    Ok((0..n)
        .map(|i| Part {
            disp: i as isize * stride,
            count: bl,
            ty: ty.clone(),
        })
        .collect())
}

pub(super) unsafe fn type_vector(
    count: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    record(
        make(
            "MPI_Type_vector",
            newtype,
            || {
                let ext = old(oldtype)?.extent;
                strided(count, blocklength, stride as isize * ext, oldtype)
            },
            false,
        ),
        newtype,
        || {
            Ok((
                env::MPI_COMBINER_VECTOR,
                vec![count.into(), blocklength.into(), stride.into()],
                vec![],
                vec![oldtype],
            ))
        },
    )
}

pub(super) unsafe fn type_create_hvector(
    count: c_int,
    blocklength: c_int,
    stride: isize,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    record(
        make(
            "MPI_Type_create_hvector",
            newtype,
            || strided(count, blocklength, stride, oldtype),
            false,
        ),
        newtype,
        || {
            Ok((
                env::MPI_COMBINER_HVECTOR,
                vec![count.into(), blocklength.into()],
                vec![stride],
                vec![oldtype],
            ))
        },
    )
}

/// Blocks of `lens[i]` elements at `disps[i]` units (of `unit` bytes).
///
/// # Safety
/// The arrays hold `count` entries.
unsafe fn indexed_parts<D: Copy + Into<i64>>(
    count: c_int,
    lens: *const c_int,
    disps: *const D,
    unit: Option<()>,
    oldtype: Handle,
) -> MpiResult<Vec<Part>> {
    let n = count_of(count, "count")?;
    let ty = old(oldtype)?;
    // SAFETY: the caller's arrays of `count` entries.
    let (lens, disps) = unsafe {
        (
            array(lens, n, "array_of_blocklengths")?,
            array(disps, n, "array_of_displacements")?,
        )
    };
    let scale = if unit.is_some() { ty.extent } else { 1 };
    lens.iter()
        .zip(disps)
        .map(|(&l, &d)| {
            Ok(Part {
                disp: d.into() as isize * scale,
                count: count_of(l, "blocklength")?,
                ty: ty.clone(),
            })
        })
        .collect()
}

pub(super) unsafe fn type_indexed(
    count: c_int,
    lens: *const c_int,
    disps: *const c_int,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    // SAFETY: the caller's arrays.
    record(
        make(
            "MPI_Type_indexed",
            newtype,
            || unsafe { indexed_parts(count, lens, disps, Some(()), oldtype) },
            false,
        ),
        newtype,
        || {
            // SAFETY: the arrays the constructor has just read.
            let (l, d) = unsafe { (list(lens, count), list(disps, count)) };
            Ok((
                env::MPI_COMBINER_INDEXED,
                [vec![count.into()], l, d].concat(),
                vec![],
                vec![oldtype],
            ))
        },
    )
}

pub(super) unsafe fn type_create_hindexed(
    count: c_int,
    lens: *const c_int,
    disps: *const isize,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    record(
        make(
            "MPI_Type_create_hindexed",
            newtype,
            || {
                // SAFETY: the caller's arrays; MPI_Aint is 64-bit here.
                let disps = disps.cast::<i64>();
                unsafe { indexed_parts(count, lens, disps, None, oldtype) }
            },
            false,
        ),
        newtype,
        || {
            // SAFETY: the arrays the constructor has just read.
            let (l, d) = unsafe { (list(lens, count), list(disps.cast::<i64>(), count)) };
            let d = d.into_iter().map(|x| x as isize).collect();
            Ok((
                env::MPI_COMBINER_HINDEXED,
                [vec![count.into()], l].concat(),
                d,
                vec![oldtype],
            ))
        },
    )
}

pub(super) unsafe fn type_create_indexed_block(
    count: c_int,
    blocklength: c_int,
    disps: *const c_int,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    record(
        make(
            "MPI_Type_create_indexed_block",
            newtype,
            || {
                let n = count_of(count, "count")?;
                let lens = vec![blocklength; n];
                // SAFETY: the caller's array; `lens` has `count` entries.
                unsafe { indexed_parts(count, lens.as_ptr(), disps, Some(()), oldtype) }
            },
            false,
        ),
        newtype,
        || {
            // SAFETY: the array the constructor has just read.
            let d = unsafe { list(disps, count) };
            Ok((
                env::MPI_COMBINER_INDEXED_BLOCK,
                [vec![count.into(), blocklength.into()], d].concat(),
                vec![],
                vec![oldtype],
            ))
        },
    )
}

pub(super) unsafe fn type_create_hindexed_block(
    count: c_int,
    blocklength: c_int,
    disps: *const isize,
    oldtype: Handle,
    newtype: *mut Handle,
) -> c_int {
    record(
        make(
            "MPI_Type_create_hindexed_block",
            newtype,
            || {
                let n = count_of(count, "count")?;
                let lens = vec![blocklength; n];
                // SAFETY: as above; MPI_Aint is 64-bit here.
                unsafe { indexed_parts(count, lens.as_ptr(), disps.cast::<i64>(), None, oldtype) }
            },
            false,
        ),
        newtype,
        || {
            // SAFETY: the array the constructor has just read.
            let d = unsafe { list(disps.cast::<i64>(), count) };
            let d = d.into_iter().map(|x| x as isize).collect();
            Ok((
                env::MPI_COMBINER_HINDEXED_BLOCK,
                vec![count.into(), blocklength.into()],
                d,
                vec![oldtype],
            ))
        },
    )
}

pub(super) unsafe fn type_create_struct(
    count: c_int,
    lens: *const c_int,
    disps: *const isize,
    types: *const Handle,
    newtype: *mut Handle,
) -> c_int {
    record(
        make(
            "MPI_Type_create_struct",
            newtype,
            || {
                let n = count_of(count, "count")?;
                // SAFETY: the caller's arrays of `count` entries.
                let (lens, disps, types) = unsafe {
                    (
                        array(lens, n, "array_of_blocklengths")?,
                        array(disps, n, "array_of_displacements")?,
                        array(types, n, "array_of_types")?,
                    )
                };
                (0..n)
                    .map(|i| {
                        Ok(Part {
                            disp: disps[i],
                            count: count_of(lens[i], "blocklength")?,
                            ty: old(types[i])?,
                        })
                    })
                    .collect()
            },
            true,
        ),
        newtype,
        || {
            // SAFETY: the arrays the constructor has just read.
            let (l, d) = unsafe { (list(lens, count), list(disps.cast::<i64>(), count)) };
            let t = if count > 0 && !types.is_null() {
                // SAFETY: as above.
                unsafe { std::slice::from_raw_parts(types, count as usize) }.to_vec()
            } else {
                Vec::new()
            };
            let d = d.into_iter().map(|x| x as isize).collect();
            Ok((
                env::MPI_COMBINER_STRUCT,
                [vec![count.into()], l].concat(),
                d,
                t,
            ))
        },
    )
}

pub(super) unsafe fn type_create_resized(
    oldtype: Handle,
    lb: isize,
    extent: isize,
    newtype: *mut Handle,
) -> c_int {
    let rc = call("MPI_Type_create_resized", MPI_COMM_SELF, || {
        let h = derived::resized(&old(oldtype)?, lb, extent);
        // SAFETY: the caller's output argument.
        unsafe { out(newtype, h, "newtype") }
    });
    record(rc, newtype, || {
        Ok((
            env::MPI_COMBINER_RESIZED,
            vec![],
            vec![lb, extent],
            vec![oldtype],
        ))
    })
}

unsafe fn type_dup(oldtype: Handle, newtype: *mut Handle) -> c_int {
    let rc = call("MPI_Type_dup", MPI_COMM_SELF, || {
        let t = old(oldtype)?;
        let h = derived::resized(&t, t.lb, t.extent);
        derived::commit(h)?;
        super::type_attr::copy_all(oldtype, h)?;
        // SAFETY: the caller's output argument.
        unsafe { out(newtype, h, "newtype") }
    });
    record(rc, newtype, || {
        Ok((env::MPI_COMBINER_DUP, vec![], vec![], vec![oldtype]))
    })
}

unsafe fn type_commit(datatype: *mut Handle) -> c_int {
    call("MPI_Type_commit", MPI_COMM_SELF, || {
        // SAFETY: the caller's argument.
        derived::commit(unsafe { super::read(datatype, "datatype") }?)
    })
}

unsafe fn type_free(datatype: *mut Handle) -> c_int {
    call("MPI_Type_free", MPI_COMM_SELF, || {
        // SAFETY: the caller's in/out argument.
        let h = unsafe { super::read(datatype, "datatype") }?;
        derived::free(h)?;
        super::type_attr::delete_all(h)?;
        // SAFETY: as above.
        unsafe { out(datatype, MPI_DATATYPE_NULL, "datatype") }
    })
}

unsafe fn type_size(datatype: Handle, size: *mut c_int) -> c_int {
    call("MPI_Type_size", MPI_COMM_SELF, || {
        let n = old(datatype)?.size;
        let n = c_int::try_from(n).unwrap_or(MPI_UNDEFINED);
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

pub(super) unsafe fn type_size_c(datatype: Handle, size: *mut i64) -> c_int {
    call("MPI_Type_size_c", MPI_COMM_SELF, || {
        let n = old(datatype)?.size as i64;
        // SAFETY: the caller's output argument.
        unsafe { out(size, n, "size") }
    })
}

pub(super) unsafe fn type_get_extent(
    datatype: Handle,
    lb: *mut isize,
    extent: *mut isize,
) -> c_int {
    call("MPI_Type_get_extent", MPI_COMM_SELF, || {
        let t = old(datatype)?;
        // SAFETY: the caller's output arguments.
        unsafe {
            out(lb, t.lb, "lb")?;
            out(extent, t.extent, "extent")
        }
    })
}

pub(super) unsafe fn type_get_true_extent(
    datatype: Handle,
    lb: *mut isize,
    extent: *mut isize,
) -> c_int {
    call("MPI_Type_get_true_extent", MPI_COMM_SELF, || {
        let (l, e) = old(datatype)?.true_bounds();
        // SAFETY: the caller's output arguments.
        unsafe {
            out(lb, l, "true_lb")?;
            out(extent, e, "true_extent")
        }
    })
}

unsafe fn type_get_name(datatype: Handle, name: *mut c_char, len: *mut c_int) -> c_int {
    call("MPI_Type_get_name", MPI_COMM_SELF, || {
        // The null handle has a name too, as in other implementations.
        let n = if datatype == MPI_DATATYPE_NULL {
            "MPI_DATATYPE_NULL".to_string()
        } else {
            derived::name(datatype)?
        };
        // SAFETY: MPI sizes the buffer MPI_MAX_OBJECT_NAME.
        unsafe { out_string(name, MPI_MAX_OBJECT_NAME, len, &n) }
    })
}

unsafe fn type_set_name(datatype: Handle, name: *const c_char) -> c_int {
    call("MPI_Type_set_name", MPI_COMM_SELF, || {
        if name.is_null() {
            return err(MPI_ERR_ARG, "type_name is NULL");
        }
        // SAFETY: the caller's C string.
        let n = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        derived::set_name(datatype, n)
    })
}

unsafe fn get_address(location: *const c_void, address: *mut isize) -> c_int {
    call("MPI_Get_address", MPI_COMM_SELF, || {
        // SAFETY: the caller's output argument.
        unsafe { out(address, location as isize, "address") }
    })
}

export!(MPI_Type_contiguous, PMPI_Type_contiguous, type_contiguous,
    (count: c_int, oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_vector, PMPI_Type_vector, type_vector,
    (count: c_int, blocklength: c_int, stride: c_int, oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_hvector, PMPI_Type_create_hvector, type_create_hvector,
    (count: c_int, blocklength: c_int, stride: isize, oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_indexed, PMPI_Type_indexed, type_indexed,
    (count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const c_int,
     oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_hindexed, PMPI_Type_create_hindexed, type_create_hindexed,
    (count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const isize,
     oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_indexed_block, PMPI_Type_create_indexed_block, type_create_indexed_block,
    (count: c_int, blocklength: c_int, array_of_displacements: *const c_int, oldtype: Handle,
     newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_hindexed_block, PMPI_Type_create_hindexed_block, type_create_hindexed_block,
    (count: c_int, blocklength: c_int, array_of_displacements: *const isize, oldtype: Handle,
     newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_struct, PMPI_Type_create_struct, type_create_struct,
    (count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const isize,
     array_of_types: *const Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_resized, PMPI_Type_create_resized, type_create_resized,
    (oldtype: Handle, lb: isize, extent: isize, newtype: *mut Handle) -> c_int);
export!(MPI_Type_dup, PMPI_Type_dup, type_dup, (oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_commit, PMPI_Type_commit, type_commit, (datatype: *mut Handle) -> c_int);
export!(MPI_Type_free, PMPI_Type_free, type_free, (datatype: *mut Handle) -> c_int);
export!(MPI_Type_contiguous_c, PMPI_Type_contiguous_c, type_contiguous_c,
    (count: i64, oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_size, PMPI_Type_size, type_size, (datatype: Handle, size: *mut c_int) -> c_int);
export!(MPI_Type_size_c, PMPI_Type_size_c, type_size_c, (datatype: Handle, size: *mut i64) -> c_int);
export!(MPI_Type_get_extent, PMPI_Type_get_extent, type_get_extent,
    (datatype: Handle, lb: *mut isize, extent: *mut isize) -> c_int);
export!(MPI_Type_get_true_extent, PMPI_Type_get_true_extent, type_get_true_extent,
    (datatype: Handle, true_lb: *mut isize, true_extent: *mut isize) -> c_int);
export!(MPI_Type_get_name, PMPI_Type_get_name, type_get_name,
    (datatype: Handle, type_name: *mut c_char, resultlen: *mut c_int) -> c_int);
export!(MPI_Type_set_name, PMPI_Type_set_name, type_set_name,
    (datatype: Handle, type_name: *const c_char) -> c_int);
export!(MPI_Get_address, PMPI_Get_address, get_address,
    (location: *const c_void, address: *mut isize) -> c_int);
