//! The values of the MPI 5.0 standard ABI that the library itself needs (the C header
//! `include/mpi.h` has them all; `tests/abi_constants.rs` checks the header).

#![allow(dead_code)] // the ABI's values, listed whole even where no function uses one yet

use std::os::raw::c_int;

/// A handle as C passes it: a pointer-sized integer (`struct MPI_ABI_Comm *` and friends).
pub type Handle = usize;

pub const MPI_SUCCESS: c_int = 0;
pub const MPI_ERR_BUFFER: c_int = 1;
pub const MPI_ERR_COUNT: c_int = 2;
pub const MPI_ERR_TYPE: c_int = 3;
pub const MPI_ERR_TAG: c_int = 4;
pub const MPI_ERR_COMM: c_int = 5;
pub const MPI_ERR_RANK: c_int = 6;
pub const MPI_ERR_REQUEST: c_int = 7;
pub const MPI_ERR_ROOT: c_int = 8;
pub const MPI_ERR_GROUP: c_int = 9;
pub const MPI_ERR_OP: c_int = 10;
pub const MPI_ERR_TOPOLOGY: c_int = 11;
pub const MPI_ERR_DIMS: c_int = 12;
pub const MPI_ERR_ARG: c_int = 13;
pub const MPI_ERR_NO_MEM: c_int = 39;
pub const MPI_ERR_SIZE: c_int = 52;
pub const MPI_ERR_TRUNCATE: c_int = 15;
pub const MPI_ERR_OTHER: c_int = 16;
pub const MPI_ERR_INTERN: c_int = 17;
pub const MPI_ERR_IN_STATUS: c_int = 19;
pub const MPI_ERR_PENDING: c_int = 18;
pub const MPI_ERR_INFO_KEY: c_int = 31;
pub const MPI_ERR_INFO_NOKEY: c_int = 32;
pub const MPI_ERR_INFO_VALUE: c_int = 33;
pub const MPI_ERR_INFO: c_int = 34;
pub const MPI_ERR_KEYVAL: c_int = 36;
pub const MPI_ERR_NAME: c_int = 38;
pub const MPI_ERR_PORT: c_int = 43;
pub const MPI_ERR_SERVICE: c_int = 51;
pub const MPI_ERR_UNSUPPORTED_OPERATION: c_int = 55;
pub const MPI_ERR_SPAWN: c_int = 53;
pub const MPI_ERR_PROC_ABORTED: c_int = 58;
pub const MPI_ERR_VALUE_TOO_LARGE: c_int = 59;
pub const MPI_ERR_SESSION: c_int = 60;
pub const MPI_ERR_ERRHANDLER: c_int = 61;
pub const MPI_ERR_ABI: c_int = 62;

pub const MPI_ANY_SOURCE: c_int = -1;
pub const MPI_ANY_TAG: c_int = -2;
pub const MPI_PROC_NULL: c_int = -3;
pub const MPI_ROOT: c_int = -4;
pub const MPI_UNDEFINED: c_int = -32766;

pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1024;
pub const MPI_THREAD_SERIALIZED: c_int = 2048;
pub const MPI_THREAD_MULTIPLE: c_int = 4096;

pub const MPI_MAX_ERROR_STRING: usize = 512;
pub const MPI_MAX_LIBRARY_VERSION_STRING: usize = 8192;
pub const MPI_MAX_PROCESSOR_NAME: usize = 256;

pub const MPI_COMM_NULL: Handle = 0x100;
pub const MPI_COMM_WORLD: Handle = 0x101;
pub const MPI_COMM_SELF: Handle = 0x102;
pub const MPI_INFO_NULL: Handle = 0x130;
pub const MPI_ERRHANDLER_NULL: Handle = 0x140;
pub const MPI_ERRORS_ARE_FATAL: Handle = 0x141;
pub const MPI_ERRORS_RETURN: Handle = 0x143;
pub const MPI_ERRORS_ABORT: Handle = 0x142;
pub const MPI_REQUEST_NULL: Handle = 0x180;
pub const MPI_GROUP_NULL: Handle = 0x108;
pub const MPI_GROUP_EMPTY: Handle = 0x109;
pub const MPI_SESSION_NULL: Handle = 0x120;
pub const MPI_MESSAGE_NULL: Handle = 0x128;
pub const MPI_MESSAGE_NO_PROC: Handle = 0x129;
pub const MPI_INFO_ENV: Handle = 0x131;
pub const MPI_DATATYPE_NULL: Handle = 0x200;
pub const MPI_BSEND_OVERHEAD: usize = 512;
pub const MPI_MAX_OBJECT_NAME: usize = 128;
pub const MPI_MAX_INFO_KEY: usize = 256;
pub const MPI_MAX_INFO_VAL: usize = 1024;
pub const MPI_MAX_PORT_NAME: usize = 1024;

pub const MPI_OP_NULL: Handle = 0x20;
pub const MPI_SUM: Handle = 0x21;
pub const MPI_MIN: Handle = 0x22;
pub const MPI_MAX: Handle = 0x23;
pub const MPI_PROD: Handle = 0x24;
pub const MPI_BAND: Handle = 0x28;
pub const MPI_BOR: Handle = 0x29;
pub const MPI_BXOR: Handle = 0x2a;
pub const MPI_LAND: Handle = 0x30;
pub const MPI_LOR: Handle = 0x31;
pub const MPI_LXOR: Handle = 0x32;
pub const MPI_MINLOC: Handle = 0x38;
pub const MPI_MAXLOC: Handle = 0x39;

/// `MPI_IN_PLACE` as an address.
pub const MPI_IN_PLACE: usize = 1;

pub const MPI_VERSION: c_int = 5;
pub const MPI_SUBVERSION: c_int = 0;
pub const MPI_ABI_VERSION: c_int = 1;
pub const MPI_ABI_SUBVERSION: c_int = 0;

pub const MPI_IDENT: c_int = 201;
pub const MPI_CONGRUENT: c_int = 202;
pub const MPI_SIMILAR: c_int = 203;
pub const MPI_UNEQUAL: c_int = 204;
pub const MPI_CART: c_int = 211;
pub const MPI_GRAPH: c_int = 212;
pub const MPI_DIST_GRAPH: c_int = 213;
pub const MPI_COMM_TYPE_SHARED: c_int = 221;
pub const MPI_COMM_TYPE_HW_UNGUIDED: c_int = 222;
pub const MPI_COMM_TYPE_HW_GUIDED: c_int = 223;
pub const MPI_COMM_TYPE_RESOURCE_GUIDED: c_int = 224;
pub const MPI_KEYVAL_INVALID: c_int = 0;
pub const MPI_TAG_UB: c_int = 501;
pub const MPI_UNIVERSE_SIZE: c_int = 507;

// One-sided communication.
pub const MPI_WIN_NULL: Handle = 0x110;
pub const MPI_REPLACE: Handle = 0x3c;
pub const MPI_NO_OP: Handle = 0x3d;
pub const MPI_BYTE: Handle = 0x247;
pub const MPI_INT64_T: Handle = 0x258;
pub const MPI_INT: Handle = 0x209;
pub const MPI_ERR_DISP: c_int = 26;
pub const MPI_ERR_LOCKTYPE: c_int = 37;
pub const MPI_ERR_RMA_RANGE: c_int = 48;
pub const MPI_ERR_RMA_SHARED: c_int = 49;
pub const MPI_ERR_RMA_SYNC: c_int = 50;
pub const MPI_ERR_WIN: c_int = 56;
pub const MPI_ERR_RMA_FLAVOR: c_int = 57;
pub const MPI_LOCK_EXCLUSIVE: c_int = 301;
pub const MPI_LOCK_SHARED: c_int = 302;
pub const MPI_WIN_FLAVOR_CREATE: c_int = 311;
pub const MPI_WIN_FLAVOR_ALLOCATE: c_int = 312;
pub const MPI_WIN_FLAVOR_SHARED: c_int = 314;
pub const MPI_WIN_FLAVOR_DYNAMIC: c_int = 313;
pub const MPI_ERR_RMA_ATTACH: c_int = 46;
pub const MPI_WIN_UNIFIED: c_int = 321;
pub const MPI_WIN_BASE: c_int = 601;
pub const MPI_WIN_DISP_UNIT: c_int = 602;
pub const MPI_WIN_SIZE: c_int = 603;
pub const MPI_WIN_CREATE_FLAVOR: c_int = 604;
pub const MPI_WIN_MODEL: c_int = 605;
pub const MPI_MODE_NOSUCCEED: c_int = 16384;

// I/O.
pub const MPI_FILE_NULL: Handle = 0x118;
pub const MPI_ERR_ACCESS: c_int = 20;
pub const MPI_ERR_AMODE: c_int = 21;
pub const MPI_ERR_BAD_FILE: c_int = 23;
pub const MPI_ERR_FILE_EXISTS: c_int = 28;
pub const MPI_ERR_FILE: c_int = 30;
pub const MPI_ERR_IO: c_int = 35;
pub const MPI_ERR_NO_SPACE: c_int = 41;
pub const MPI_ERR_NO_SUCH_FILE: c_int = 42;
pub const MPI_ERR_READ_ONLY: c_int = 45;
pub const MPI_ERR_UNSUPPORTED_DATAREP: c_int = 54;
pub const MPI_MODE_APPEND: c_int = 1;
pub const MPI_MODE_CREATE: c_int = 2;
pub const MPI_MODE_DELETE_ON_CLOSE: c_int = 4;
pub const MPI_MODE_EXCL: c_int = 8;
pub const MPI_MODE_RDONLY: c_int = 16;
pub const MPI_MODE_RDWR: c_int = 32;
pub const MPI_MODE_SEQUENTIAL: c_int = 64;
pub const MPI_MODE_WRONLY: c_int = 256;
pub const MPI_SEEK_CUR: c_int = 401;
pub const MPI_SEEK_END: c_int = 402;
pub const MPI_SEEK_SET: c_int = 403;
pub const MPI_DISPLACEMENT_CURRENT: i64 = -1;
pub const MPI_ERR_QUOTA: c_int = 44;
pub const MPI_MAX_DATAREP_STRING: usize = 128;
pub const MPI_ERR_DUP_DATAREP: c_int = 27;
