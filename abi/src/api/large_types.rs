//! More `_c` (large-count) forms over their `int` implementations: `(I)Reduce_scatter_c`,
//! `(I)Alltoallw_c` (byte displacements up to 2^31-1 there) and
//! the type constructors `Type_vector_c`, `Type_create_hvector_c`, `Type_indexed_c`,
//! `Type_create_hindexed_c`, `Type_create_indexed_block_c`, `Type_create_hindexed_block_c`,
//! `Type_create_struct_c`, `Type_create_resized_c`. Counts beyond an `int` are MPI_ERR_COUNT
//! naming the function; byte displacements and extents take the full `MPI_Count` range.

use super::coll::exports as coll;
use super::types;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::state::with_state;
use crate::{call, export};
use std::ffi::c_void;
use std::os::raw::c_int;

fn narrow(name: &str, what: &str, v: i64) -> MpiResult<c_int> {
    c_int::try_from(v).map_err(|_| {
        MpiError::new(
            MPI_ERR_COUNT,
            format!(
                "{name}: {what} {v} does not fit an int (ibdyn's {name} takes counts up to 2^31-1)"
            ),
        )
    })
}

/// `n` entries of the caller's array `p`.
///
/// # Safety
/// `p` is NULL or points to `n` readable entries.
unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// `n` entries of `p`, each narrowed to an `int`.
///
/// # Safety
/// As `slice`.
unsafe fn narrowed(name: &str, p: *const i64, n: usize, what: &str) -> MpiResult<Vec<c_int>> {
    // SAFETY: passed on.
    unsafe { slice(p, n, what) }?
        .iter()
        .map(|&v| narrow(name, what, v))
        .collect()
}

fn len_of(count: i64) -> MpiResult<usize> {
    usize::try_from(count)
        .map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("count {count} is negative")))
}

/// Runs `f` for the `int` form once the arguments are narrowed; an argument error goes to
/// `comm`'s handler under `name`.
fn with_narrowed(name: &str, comm: Handle, f: impl FnOnce() -> MpiResult<c_int>) -> c_int {
    match f() {
        Ok(rc) => rc,
        Err(e) => call(name, comm, || Err(e)),
    }
}

/// `(I)Alltoallw_c` through the `int` form: counts and displacements narrowed, the type
/// arrays passed through. `request`: null for the blocking form.
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw_c_impl(
    name: &str,
    sb: *const c_void,
    (scs, sds, sts): (*const i64, *const isize, *const Handle),
    rb: *mut c_void,
    (rcs, rds, rts): (*const i64, *const isize, *const Handle),
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    with_narrowed(name, comm, || {
        let n = super::coll::array_len(comm)?;
        // A NULL array stays NULL (the send arrays of MPI_IN_PLACE are not read; elsewhere the
        // `int` form reports it).
        let copy = |p: *const i64, what| -> MpiResult<Option<Vec<c_int>>> {
            if p.is_null() {
                return Ok(None);
            }
            // SAFETY: MPI's rule: one entry per process of the (remote) group.
            unsafe { narrowed(name, p, n, what) }.map(Some)
        };
        let (sc, sd) = (copy(scs, "sendcounts")?, copy(sds.cast(), "sdispls")?);
        let (rc, rd) = (copy(rcs, "recvcounts")?, copy(rds.cast(), "rdispls")?);
        let ptr = |v: &Option<Vec<c_int>>| v.as_ref().map_or(std::ptr::null(), |v| v.as_ptr());
        // The narrowed copies are read during the call only.
        let (sc, sd, rc, rd) = (ptr(&sc), ptr(&sd), ptr(&rc), ptr(&rd));
        // SAFETY: the caller's buffers and type arrays; the copies hold n entries.
        Ok(unsafe { coll::ialltoallw(sb, sc, sd, sts, rb, rc, rd, rts, comm, request) })
    })
}

/// The blocking and non-blocking `Alltoallw_c` (the latter with a request).
macro_rules! alltoallw_c_forms {
    ($($f:ident $name:literal ($($extra:ident : $et:ty),*) => $req:expr;)*) => {$(
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $f(
            sb: *const c_void,
            scs: *const i64,
            sds: *const isize,
            sts: *const Handle,
            rb: *mut c_void,
            rcs: *const i64,
            rds: *const isize,
            rts: *const Handle,
            comm: Handle
            $(, $extra: $et)*
        ) -> c_int {
            // SAFETY: passed on.
            unsafe { alltoallw_c_impl($name, sb, (scs, sds, sts), rb, (rcs, rds, rts), comm, $req) }
        }
    )*};
}

alltoallw_c_forms! {
    alltoallw_c "MPI_Alltoallw_c" () => std::ptr::null_mut();
    ialltoallw_c "MPI_Ialltoallw_c" (request: *mut Handle) => request;
}

/// The blocking and non-blocking `Reduce_scatter_c` (the latter with a request).
macro_rules! reduce_scatter_c_forms {
    ($($f:ident $name:literal ($($extra:ident : $et:ty),*) => $req:expr;)*) => {$(
        pub(crate) unsafe fn $f(
            sendbuf: *const c_void,
            recvbuf: *mut c_void,
            recvcounts: *const i64,
            datatype: Handle,
            op: Handle,
            comm: Handle
            $(, $extra: $et)*
        ) -> c_int {
            let bufs = (sendbuf, recvbuf, recvcounts);
            // SAFETY: passed on.
            unsafe { ireduce_scatter_c_impl($name, bufs, datatype, op, comm, $req) }
        }
    )*};
}

reduce_scatter_c_forms! {
    reduce_scatter_c "MPI_Reduce_scatter_c" () => std::ptr::null_mut();
    ireduce_scatter_c "MPI_Ireduce_scatter_c" (request: *mut Handle) => request;
}

/// `(I)Reduce_scatter_c` through the `int` form, the counts narrowed (read during the call).
///
/// # Safety
/// The caller's buffers and one count per process of the group.
unsafe fn ireduce_scatter_c_impl(
    name: &str,
    (sendbuf, recvbuf, recvcounts): (*const c_void, *mut c_void, *const i64),
    datatype: Handle,
    op: Handle,
    comm: Handle,
    request: *mut Handle,
) -> c_int {
    with_narrowed(name, comm, || {
        let n = with_state(|s| Ok(s.comm(comm)?.comm.raw().size() as usize))?;
        // SAFETY: MPI's rule: one count per process of the group.
        let counts = unsafe { narrowed(name, recvcounts, n, "recvcounts") }?;
        // SAFETY: the caller's arguments; the counts are read during the call.
        Ok(unsafe {
            coll::ireduce_scatter(
                sendbuf,
                recvbuf,
                counts.as_ptr(),
                datatype,
                op,
                comm,
                request,
            )
        })
    })
}

/// The count, block lengths (narrowed) and byte displacements of a `_c` constructor.
///
/// # Safety
/// The arrays hold `count` entries.
unsafe fn lengths_and_bytes(
    name: &str,
    count: i64,
    lens: *const i64,
    disps: *const i64,
) -> MpiResult<(c_int, Vec<c_int>, Vec<isize>)> {
    let (c, n) = (narrow(name, "count", count)?, len_of(count)?);
    // SAFETY: the caller's contract.
    let l = unsafe { narrowed(name, lens, n, "array_of_blocklengths") }?;
    // SAFETY: as above.
    let d = unsafe { slice(disps, n, "array_of_displacements") }?;
    Ok((c, l, d.iter().map(|&x| x as isize).collect()))
}

/// `Type_(create_h)indexed_c`: displacements in elements (narrowed) or in bytes.
///
/// # Safety
/// The arrays hold `count` entries.
unsafe fn indexed_c(
    name: &str,
    (count, lens, disps): (i64, *const i64, *const i64),
    old: Handle,
    new: *mut Handle,
    bytes: bool,
) -> c_int {
    with_narrowed(name, MPI_COMM_SELF, || {
        // SAFETY: the caller's arrays of `count` entries.
        let (c, l, d) = unsafe { lengths_and_bytes(name, count, lens, disps) }?;
        Ok(if bytes {
            // SAFETY: the copies hold `count` entries; the output is the caller's.
            unsafe { types::type_create_hindexed(c, l.as_ptr(), d.as_ptr(), old, new) }
        } else {
            let d = d
                .iter()
                .map(|&x| narrow(name, "displacement", x as i64))
                .collect::<MpiResult<Vec<_>>>()?;
            // SAFETY: as above.
            unsafe { types::type_indexed(c, l.as_ptr(), d.as_ptr(), old, new) }
        })
    })
}

macro_rules! indexed_forms {
    ($($f:ident $name:literal bytes = $bytes:expr;)*) => {$(
        unsafe fn $f(count: i64, lens: *const i64, disps: *const i64, old: Handle, new: *mut Handle) -> c_int {
            // SAFETY: passed on.
            unsafe { indexed_c($name, (count, lens, disps), old, new, $bytes) }
        }
    )*};
}

indexed_forms! {
    type_indexed_c "MPI_Type_indexed_c" bytes = false;
    type_create_hindexed_c "MPI_Type_create_hindexed_c" bytes = true;
}

/// `Type_create_(h)indexed_block_c`: displacements in elements (narrowed) or in bytes.
///
/// # Safety
/// `disps` holds `count` entries.
unsafe fn block_c(
    name: &str,
    (count, bl, disps): (i64, i64, *const i64),
    old: Handle,
    new: *mut Handle,
    bytes: bool,
) -> c_int {
    with_narrowed(name, MPI_COMM_SELF, || {
        let (c, b) = (
            narrow(name, "count", count)?,
            narrow(name, "blocklength", bl)?,
        );
        let n = len_of(count)?;
        let what = "array_of_displacements";
        Ok(if bytes {
            // SAFETY: the caller's array of `count` entries.
            let d: Vec<isize> = unsafe { slice(disps, n, what) }?
                .iter()
                .map(|&x| x as isize)
                .collect();
            // SAFETY: the copy holds `count` entries; the output is the caller's.
            unsafe { types::type_create_hindexed_block(c, b, d.as_ptr(), old, new) }
        } else {
            // SAFETY: the caller's array of `count` entries.
            let d = unsafe { narrowed(name, disps, n, what) }?;
            // SAFETY: the copy holds `count` entries; the output is the caller's.
            unsafe { types::type_create_indexed_block(c, b, d.as_ptr(), old, new) }
        })
    })
}

macro_rules! block_forms {
    ($($f:ident $name:literal bytes = $bytes:expr;)*) => {$(
        unsafe fn $f(count: i64, bl: i64, disps: *const i64, old: Handle, new: *mut Handle) -> c_int {
            // SAFETY: passed on.
            unsafe { block_c($name, (count, bl, disps), old, new, $bytes) }
        }
    )*};
}

block_forms! {
    type_create_indexed_block_c "MPI_Type_create_indexed_block_c" bytes = false;
    type_create_hindexed_block_c "MPI_Type_create_hindexed_block_c" bytes = true;
}

unsafe fn type_vector_c(count: i64, bl: i64, stride: i64, old: Handle, new: *mut Handle) -> c_int {
    let name = "MPI_Type_vector_c";
    with_narrowed(name, MPI_COMM_SELF, || {
        let (c, b, s) = (
            narrow(name, "count", count)?,
            narrow(name, "blocklength", bl)?,
            narrow(name, "stride", stride)?,
        );
        // SAFETY: the caller's output argument, passed on.
        Ok(unsafe { types::type_vector(c, b, s, old, new) })
    })
}

unsafe fn type_create_hvector_c(
    count: i64,
    bl: i64,
    stride: i64,
    old: Handle,
    new: *mut Handle,
) -> c_int {
    let name = "MPI_Type_create_hvector_c";
    with_narrowed(name, MPI_COMM_SELF, || {
        let (c, b) = (
            narrow(name, "count", count)?,
            narrow(name, "blocklength", bl)?,
        );
        // SAFETY: as above; MPI_Count and MPI_Aint are both 64-bit here.
        Ok(unsafe { types::type_create_hvector(c, b, stride as isize, old, new) })
    })
}

unsafe fn type_create_struct_c(
    count: i64,
    lens: *const i64,
    disps: *const i64,
    tys: *const Handle,
    new: *mut Handle,
) -> c_int {
    let name = "MPI_Type_create_struct_c";
    with_narrowed(name, MPI_COMM_SELF, || {
        // SAFETY: the caller's arrays of `count` entries.
        let (c, l, d) = unsafe { lengths_and_bytes(name, count, lens, disps) }?;
        // SAFETY: the copies hold `count` entries; `tys` and the output are the caller's.
        Ok(unsafe { types::type_create_struct(c, l.as_ptr(), d.as_ptr(), tys, new) })
    })
}

unsafe fn type_create_resized_c(old: Handle, lb: i64, extent: i64, new: *mut Handle) -> c_int {
    // SAFETY: passed through; MPI_Count and MPI_Aint are both 64-bit here.
    unsafe { types::type_create_resized(old, lb as isize, extent as isize, new) }
}

export!(MPI_Reduce_scatter_c, PMPI_Reduce_scatter_c, reduce_scatter_c,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const i64, datatype: Handle,
     op: Handle, comm: Handle) -> c_int);
export!(MPI_Alltoallw_c, PMPI_Alltoallw_c, alltoallw_c,
    (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const Handle,
     recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const Handle,
     comm: Handle) -> c_int);
export!(MPI_Ialltoallw_c, PMPI_Ialltoallw_c, ialltoallw_c,
    (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const Handle,
     recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const Handle,
     comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Ireduce_scatter_c, PMPI_Ireduce_scatter_c, ireduce_scatter_c,
    (sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const i64, datatype: Handle,
     op: Handle, comm: Handle, request: *mut Handle) -> c_int);
export!(MPI_Type_create_hindexed_c, PMPI_Type_create_hindexed_c, type_create_hindexed_c,
    (count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64,
     oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_indexed_block_c, PMPI_Type_create_indexed_block_c, type_create_indexed_block_c,
    (count: i64, blocklength: i64, array_of_displacements: *const i64, oldtype: Handle,
     newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_hindexed_block_c, PMPI_Type_create_hindexed_block_c, type_create_hindexed_block_c,
    (count: i64, blocklength: i64, array_of_displacements: *const i64, oldtype: Handle,
     newtype: *mut Handle) -> c_int);
export!(MPI_Type_vector_c, PMPI_Type_vector_c, type_vector_c,
    (count: i64, blocklength: i64, stride: i64, oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_hvector_c, PMPI_Type_create_hvector_c, type_create_hvector_c,
    (count: i64, blocklength: i64, stride: i64, oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_indexed_c, PMPI_Type_indexed_c, type_indexed_c,
    (count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64,
     oldtype: Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_struct_c, PMPI_Type_create_struct_c, type_create_struct_c,
    (count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64,
     array_of_types: *const Handle, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_resized_c, PMPI_Type_create_resized_c, type_create_resized_c,
    (oldtype: Handle, lb: i64, extent: i64, newtype: *mut Handle) -> c_int);
