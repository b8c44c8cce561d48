//! MPI_Status in the standard ABI's layout, and the translation of the engine's status and
//! of the ABI's wildcard values.

use crate::consts::*;
use crate::error::{err, MpiResult};
use std::os::raw::c_int;

/// The standard ABI's MPI_Status: three public fields and five words for the library. ibdyn
/// keeps the received byte count in words 0 and 1 and the cancelled flag in word 2.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MpiStatus {
    pub source: c_int,
    pub tag: c_int,
    pub error: c_int,
    pub internal: [c_int; 5],
}

const _: () = assert!(std::mem::size_of::<MpiStatus>() == 32);

impl MpiStatus {
    pub fn set_count(&mut self, bytes: usize) {
        let b = bytes as u64;
        self.internal[0] = b as u32 as c_int;
        self.internal[1] = (b >> 32) as u32 as c_int;
    }

    pub fn count(&self) -> u64 {
        (self.internal[0] as u32 as u64) | ((self.internal[1] as u32 as u64) << 32)
    }
}

/// Writes the engine's status into `out` (unless it is MPI_STATUS_IGNORE); MPI_ERROR is
/// left alone, as single-completion calls do.
///
/// # Safety
/// `out` is null or points to a writable MPI_Status.
pub unsafe fn store(out: *mut MpiStatus, st: &ibdyn::Status) {
    // SAFETY: the caller's contract: null or a valid MPI_Status.
    let Some(out) = (unsafe { out.as_mut() }) else {
        return;
    };
    out.source = st.source;
    out.tag = if st.tag == ibdyn::ANY_TAG {
        MPI_ANY_TAG
    } else {
        st.tag
    };
    out.set_count(st.count);
    out.internal[2] = 0;
}

/// Marks `out` cancelled or not (MPI_Test_cancelled reads it).
///
/// # Safety
/// As `store`.
pub unsafe fn set_cancelled(out: *mut MpiStatus, cancelled: bool) {
    // SAFETY: the caller's contract.
    if let Some(out) = unsafe { out.as_mut() } {
        out.internal[2] = c_int::from(cancelled);
    }
}

pub fn is_cancelled(st: &MpiStatus) -> bool {
    st.internal[2] != 0
}

/// The status of a receive from MPI_PROC_NULL.
pub fn proc_null() -> ibdyn::Status {
    ibdyn::Status {
        source: MPI_PROC_NULL,
        tag: ibdyn::ANY_TAG,
        count: 0,
    }
}

/// Stores the status of a receive from MPI_PROC_NULL.
///
/// # Safety
/// As `store`.
pub unsafe fn store_proc_null(out: *mut MpiStatus) {
    // SAFETY: passed through.
    unsafe { store(out, &proc_null()) }
}

/// The status of an empty completion (MPI_REQUEST_NULL, MPI_PROC_NULL).
///
/// # Safety
/// As `store`.
pub unsafe fn store_empty(out: *mut MpiStatus) {
    let st = ibdyn::Status {
        source: MPI_ANY_SOURCE,
        tag: ibdyn::ANY_TAG,
        count: 0,
    };
    // SAFETY: passed through from the caller.
    unsafe { store(out, &st) };
    // SAFETY: as above.
    if let Some(out) = unsafe { out.as_mut() } {
        out.error = MPI_SUCCESS;
    }
}

/// A source rank of the ABI (MPI_ANY_SOURCE, MPI_PROC_NULL or a rank) in the engine's terms.
pub fn source(src: c_int) -> MpiResult<i32> {
    match src {
        MPI_ANY_SOURCE => Ok(ibdyn::ANY_SOURCE),
        MPI_PROC_NULL => Ok(ibdyn::PROC_NULL),
        s if s >= 0 => Ok(s),
        s => err(MPI_ERR_RANK, format!("source rank {s} is invalid")),
    }
}

/// A destination rank of the ABI in the engine's terms.
pub fn dest(d: c_int) -> MpiResult<i32> {
    match d {
        MPI_PROC_NULL => Ok(ibdyn::PROC_NULL),
        d if d >= 0 => Ok(d),
        d => err(MPI_ERR_RANK, format!("destination rank {d} is invalid")),
    }
}

/// The largest tag a user may use (MPI_TAG_UB); the one above is the library's.
pub const TAG_UB: c_int = c_int::MAX - 1;

/// A receive tag of the ABI (MPI_ANY_TAG or a tag) in the engine's terms.
pub fn recv_tag(tag: c_int) -> MpiResult<i32> {
    match tag {
        MPI_ANY_TAG => Ok(ibdyn::ANY_TAG),
        t if (0..=TAG_UB).contains(&t) => Ok(t),
        t => err(
            MPI_ERR_TAG,
            format!("tag {t} is invalid (tags are 0..=MPI_TAG_UB, {TAG_UB}, or MPI_ANY_TAG)"),
        ),
    }
}

/// A send tag.
pub fn send_tag(tag: c_int) -> MpiResult<i32> {
    if (0..=TAG_UB).contains(&tag) {
        Ok(tag)
    } else {
        err(
            MPI_ERR_TAG,
            format!("tag {tag} is invalid for a send (tags are 0..=MPI_TAG_UB, {TAG_UB})"),
        )
    }
}
