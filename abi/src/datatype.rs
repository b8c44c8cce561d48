//! The predefined datatypes: their size and, for the numeric ones, the element type the
//! built-in reductions work on. Look-up is one `match` on the handle value (a jump table).

use crate::consts::*;
use crate::error::{err, MpiResult};
use ibdyn_collectives::ElemType;
use std::mem::size_of;
use std::os::raw::{c_int, c_long, c_longlong, c_short};

#[derive(Copy, Clone, Debug)]
pub struct TypeInfo {
    /// Size in bytes: the data of one element, without padding.
    pub size: usize,
    /// Extent in bytes: the size, except for the value-index pairs whose C struct has
    /// padding (MPI_DOUBLE_INT is 12 bytes of data in 16).
    pub extent: usize,
    /// The element type of built-in reductions, for the numeric C types.
    pub elem: Option<ElemType>,
}

const fn t(size: usize, elem: Option<ElemType>) -> MpiResult<TypeInfo> {
    Ok(TypeInfo {
        size,
        extent: size,
        elem,
    })
}

/// A value-index pair with padding: `size` bytes of data in a struct of `extent`.
const fn padded(size: usize, extent: usize) -> MpiResult<TypeInfo> {
    Ok(TypeInfo {
        size,
        extent,
        elem: None,
    })
}

const fn signed(size: usize) -> Option<ElemType> {
    match size {
        1 => Some(ElemType::I8),
        2 => Some(ElemType::I16),
        4 => Some(ElemType::I32),
        8 => Some(ElemType::I64),
        _ => None,
    }
}

const fn unsigned(size: usize) -> Option<ElemType> {
    match size {
        1 => Some(ElemType::U8),
        2 => Some(ElemType::U16),
        4 => Some(ElemType::U32),
        8 => Some(ElemType::U64),
        _ => None,
    }
}

/// The predefined datatype `h`, or MPI_ERR_TYPE.
pub fn lookup(h: Handle) -> MpiResult<TypeInfo> {
    use ElemType::*;
    const AINT: usize = size_of::<isize>();
    const LONG: usize = size_of::<c_long>();
    const LONG_DOUBLE: usize = 16;
    match h {
        0x201 => t(AINT, signed(AINT)),                 // MPI_AINT
        0x202 | 0x203 => t(8, Some(I64)),               // MPI_COUNT, MPI_OFFSET
        0x207 => t(1, None),                            // MPI_PACKED
        0x208 => t(size_of::<c_short>(), signed(2)),    // MPI_SHORT
        0x209 => t(size_of::<c_int>(), signed(4)),      // MPI_INT
        0x20a => t(LONG, signed(LONG)),                 // MPI_LONG
        0x20b => t(size_of::<c_longlong>(), signed(8)), // MPI_LONG_LONG
        0x20c => t(2, unsigned(2)),                     // MPI_UNSIGNED_SHORT
        0x20d => t(4, unsigned(4)),                     // MPI_UNSIGNED
        0x20e => t(LONG, unsigned(LONG)),               // MPI_UNSIGNED_LONG
        0x20f => t(8, unsigned(8)),                     // MPI_UNSIGNED_LONG_LONG
        0x210 => t(4, Some(F32)),                       // MPI_FLOAT
        0x212 | 0x213 => t(8, None),                    // float complex
        0x214 => t(8, Some(F64)),                       // MPI_DOUBLE
        0x216 | 0x217 => t(16, None),                   // double complex
        0x218 | 0x219 => t(4, signed(4)),               // MPI_LOGICAL, MPI_INTEGER
        0x21a => t(4, Some(F32)),                       // MPI_REAL
        0x21b => t(8, None),                            // MPI_COMPLEX
        0x21c => t(8, Some(F64)),                       // MPI_DOUBLE_PRECISION
        0x21d => t(16, None),                           // MPI_DOUBLE_COMPLEX
        0x21e => t(1, None),                            // MPI_CHARACTER
        0x220 => t(LONG_DOUBLE, None),                  // MPI_LONG_DOUBLE
        0x224 | 0x225 => t(2 * LONG_DOUBLE, None),      // long double complex
        0x228 => t(8, None),                            // MPI_FLOAT_INT
        0x229 => padded(12, 16),                        // MPI_DOUBLE_INT
        0x22a => padded(LONG + 4, 2 * LONG),            // MPI_LONG_INT
        0x22b => t(8, None),                            // MPI_2INT
        0x22c => padded(6, 8),                          // MPI_SHORT_INT
        0x22d => padded(LONG_DOUBLE + 4, 32),           // MPI_LONG_DOUBLE_INT
        0x230 => t(8, None),                            // MPI_2REAL
        0x231 => t(16, None),                           // MPI_2DOUBLE_PRECISION
        0x232 => t(8, None),                            // MPI_2INTEGER
        0x238 | 0x239 => t(1, Some(U8)),                // C and C++ bool
        0x23c => t(4, signed(4)),                       // MPI_WCHAR (wchar_t)
        0x240 | 0x243 | 0x244 => t(1, Some(I8)),        // int8_t, char, signed char
        0x241 | 0x245 | 0x247 => t(1, Some(U8)),        // uint8_t, unsigned char, byte
        0x248 => t(2, Some(I16)),                       // MPI_INT16_T
        0x249 => t(2, Some(U16)),                       // MPI_UINT16_T
        0x250 => t(4, Some(I32)),                       // MPI_INT32_T
        0x251 => t(4, Some(U32)),                       // MPI_UINT32_T
        0x258 => t(8, Some(I64)),                       // MPI_INT64_T
        0x259 => t(8, Some(U64)),                       // MPI_UINT64_T
        0x2c0 | 0x2c1 => t(1, Some(I8)),                // LOGICAL1, INTEGER1
        0x2c8 | 0x2c9 => t(2, Some(I16)),               // LOGICAL2, INTEGER2
        0x2ca => t(2, None),                            // MPI_REAL2
        0x2d0 | 0x2d1 => t(4, Some(I32)),               // LOGICAL4, INTEGER4
        0x2d2 => t(4, Some(F32)),                       // MPI_REAL4
        0x2d3 => t(4, None),                            // MPI_COMPLEX4
        0x2d8 | 0x2d9 => t(8, Some(I64)),               // LOGICAL8, INTEGER8
        0x2da => t(8, Some(F64)),                       // MPI_REAL8
        0x2db => t(8, None),                            // MPI_COMPLEX8
        0x2e0..=0x2e3 => t(16, None),                   // 16-byte kinds
        0x2eb => t(32, None),                           // MPI_COMPLEX32
        0x200 => err(MPI_ERR_TYPE, "MPI_DATATYPE_NULL is not a datatype"),
        h => err(
            MPI_ERR_TYPE,
            format!("{h:#x} is not a datatype (only the predefined datatypes exist so far)"),
        ),
    }
}

/// Basic elements in one element of predefined type `h` (MPI_Get_elements): two for the
/// pair types of MINLOC/MAXLOC, one for every other.
pub fn basic_elements(h: Handle) -> u64 {
    match h {
        0x228..=0x22d | 0x230..=0x232 => 2,
        _ => 1,
    }
}

/// The data of one element of predefined type `h` as (offset, length) blocks, when they
/// are not one block at its start: MPI_SHORT_INT's index follows two bytes of padding.
pub fn split_blocks(h: Handle) -> Option<&'static [(isize, usize)]> {
    match h {
        0x22c => Some(&[(0, 2), (4, 4)]),
        _ => None,
    }
}

/// The packed bytes of the value of a value-index pair type (MPI_Get_elements counts a pair
/// cut after its value as one element).
pub fn pair_value_len(h: Handle) -> Option<usize> {
    Some(match h {
        0x228 | 0x22b | 0x230 | 0x232 => 4,
        0x229 | 0x231 => 8,
        0x22a => size_of::<c_long>(),
        0x22c => 2,
        0x22d => 16,
        _ => return None,
    })
}

/// The alignment of predefined type `h` of `size` bytes (for the extent of struct types).
pub fn alignment(h: Handle, size: usize) -> usize {
    match h {
        0x212 | 0x213 | 0x21b | 0x2d3 | 0x228 | 0x22b | 0x22c | 0x230 | 0x232 => 4,
        0x216 | 0x217 | 0x21d | 0x2db | 0x229 | 0x22a | 0x231 => 8,
        _ => size.clamp(1, 16),
    }
}

include!(concat!(env!("OUT_DIR"), "/type_names.rs"));

/// The name of predefined datatype `h` (MPI_Type_get_name).
pub fn name(h: Handle) -> &'static str {
    TYPE_NAMES
        .iter()
        .find(|(v, _)| *v == h)
        .map_or("", |(_, n)| n)
}
