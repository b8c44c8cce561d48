//! Handle conversion (MPI_X_toint / MPI_X_fromint) and address arithmetic (MPI_Aint_add,
//! MPI_Aint_diff). ibdyn's handles are small integers already (predefined ones below 4096,
//! user ones a kind's base plus a table index, below 2^31), so the conversion is the value.

use crate::consts::Handle;
use crate::export;
use std::os::raw::c_int;

unsafe fn toint(h: Handle) -> c_int {
    h as c_int
}

unsafe fn fromint(i: c_int) -> Handle {
    i as u32 as Handle
}

unsafe fn aint_add(base: isize, disp: isize) -> isize {
    base.wrapping_add(disp)
}

unsafe fn aint_diff(a: isize, b: isize) -> isize {
    a.wrapping_sub(b)
}

/// Exports the toint and fromint pair of each handle kind.
macro_rules! conversions {
    ($($to:ident $pto:ident $from:ident $pfrom:ident;)*) => {$(
        export!($to, $pto, toint, (h: Handle) -> c_int);
        export!($from, $pfrom, fromint, (i: c_int) -> Handle);
    )*};
}

conversions! {
    MPI_Comm_toint PMPI_Comm_toint MPI_Comm_fromint PMPI_Comm_fromint;
    MPI_Errhandler_toint PMPI_Errhandler_toint MPI_Errhandler_fromint PMPI_Errhandler_fromint;
    MPI_File_toint PMPI_File_toint MPI_File_fromint PMPI_File_fromint;
    MPI_Group_toint PMPI_Group_toint MPI_Group_fromint PMPI_Group_fromint;
    MPI_Info_toint PMPI_Info_toint MPI_Info_fromint PMPI_Info_fromint;
    MPI_Message_toint PMPI_Message_toint MPI_Message_fromint PMPI_Message_fromint;
    MPI_Op_toint PMPI_Op_toint MPI_Op_fromint PMPI_Op_fromint;
    MPI_Request_toint PMPI_Request_toint MPI_Request_fromint PMPI_Request_fromint;
    MPI_Session_toint PMPI_Session_toint MPI_Session_fromint PMPI_Session_fromint;
    MPI_Type_toint PMPI_Type_toint MPI_Type_fromint PMPI_Type_fromint;
    MPI_Win_toint PMPI_Win_toint MPI_Win_fromint PMPI_Win_fromint;
}

export!(MPI_Aint_add, PMPI_Aint_add, aint_add, (base: isize, disp: isize) -> isize);
export!(MPI_Aint_diff, PMPI_Aint_diff, aint_diff, (addr1: isize, addr2: isize) -> isize);
