//! MPI_Type_match_size and MPI_Type_get_value_index (MPI 4.1): predefined types looked up by
//! type class and size, and the value-index pair types of MPI_MINLOC/MPI_MAXLOC.

use super::out;
use crate::consts::*;
use crate::error::err;
use crate::{call, export};
use std::os::raw::c_int;

const MPI_TYPECLASS_INTEGER: c_int = 192;
const MPI_TYPECLASS_REAL: c_int = 193;
const MPI_TYPECLASS_COMPLEX: c_int = 194;

/// The C type of `class` whose size is `size` bytes.
fn matching(class: c_int, size: c_int) -> Option<Handle> {
    Some(match (class, size) {
        (MPI_TYPECLASS_INTEGER, 1) => 0x240,  // MPI_INT8_T
        (MPI_TYPECLASS_INTEGER, 2) => 0x248,  // MPI_INT16_T
        (MPI_TYPECLASS_INTEGER, 4) => 0x250,  // MPI_INT32_T
        (MPI_TYPECLASS_INTEGER, 8) => 0x258,  // MPI_INT64_T
        (MPI_TYPECLASS_INTEGER, 16) => 0x2e1, // MPI_INTEGER16
        (MPI_TYPECLASS_REAL, 2) => 0x2ca,     // MPI_REAL2
        (MPI_TYPECLASS_REAL, 4) => 0x210,     // MPI_FLOAT
        (MPI_TYPECLASS_REAL, 8) => 0x214,     // MPI_DOUBLE
        (MPI_TYPECLASS_REAL, 16) => 0x220,    // MPI_LONG_DOUBLE
        (MPI_TYPECLASS_COMPLEX, 4) => 0x2d3,  // MPI_COMPLEX4
        (MPI_TYPECLASS_COMPLEX, 8) => 0x212,  // MPI_C_FLOAT_COMPLEX
        (MPI_TYPECLASS_COMPLEX, 16) => 0x216, // MPI_C_DOUBLE_COMPLEX
        (MPI_TYPECLASS_COMPLEX, 32) => 0x224, // MPI_C_LONG_DOUBLE_COMPLEX
        _ => return None,
    })
}

unsafe fn type_match_size(typeclass: c_int, size: c_int, datatype: *mut Handle) -> c_int {
    call("MPI_Type_match_size", MPI_COMM_SELF, || {
        let Some(t) = matching(typeclass, size) else {
            return err(
                MPI_ERR_ARG,
                format!("no predefined type of class {typeclass} has {size} bytes (classes: MPI_TYPECLASS_INTEGER, _REAL, _COMPLEX)"),
            );
        };
        // SAFETY: the caller's output argument.
        unsafe { out(datatype, t, "datatype") }
    })
}

unsafe fn type_get_value_index(value: Handle, index: Handle, pair: *mut Handle) -> c_int {
    call("MPI_Type_get_value_index", MPI_COMM_SELF, || {
        crate::derived::resolve(value, false)?;
        crate::derived::resolve(index, false)?;
        const INT: Handle = 0x209;
        let p = match (value, index) {
            (0x210, INT) => 0x228, // MPI_FLOAT_INT
            (0x214, INT) => 0x229, // MPI_DOUBLE_INT
            (0x20a, INT) => 0x22a, // MPI_LONG_INT
            (INT, INT) => 0x22b,   // MPI_2INT
            (0x208, INT) => 0x22c, // MPI_SHORT_INT
            (0x220, INT) => 0x22d, // MPI_LONG_DOUBLE_INT
            _ => MPI_DATATYPE_NULL,
        };
        // SAFETY: the caller's output argument.
        unsafe { out(pair, p, "pair_type") }
    })
}

export!(MPI_Type_match_size, PMPI_Type_match_size, type_match_size,
    (typeclass: c_int, size: c_int, datatype: *mut Handle) -> c_int);
export!(MPI_Type_get_value_index, PMPI_Type_get_value_index, type_get_value_index,
    (value_type: Handle, index_type: Handle, pair_type: *mut Handle) -> c_int);
