//! MPI_Type_create_f90_integer, _real and _complex: the Fortran kind that holds a decimal
//! range `r` (and precision `p`), as a datatype whose envelope is MPI_COMBINER_F90_* with
//! the arguments given (the standard's rule), and whose data is the matching sized type
//! (MPI_INTEGER1 ... MPI_INTEGER16, MPI_REAL4/8/16, MPI_COMPLEX8/16/32).

use super::envelope::record;
use super::out;
use crate::consts::*;
use crate::derived::{self, Part};
use crate::error::{err, MpiResult};
use crate::{call, export};
use std::os::raw::c_int;

const MPI_COMBINER_F90_REAL: c_int = 113;
const MPI_COMBINER_F90_COMPLEX: c_int = 114;
const MPI_COMBINER_F90_INTEGER: c_int = 115;

/// A bound the program leaves open (MPI_UNDEFINED) asks for nothing.
fn want(v: c_int) -> i64 {
    if v == MPI_UNDEFINED {
        0
    } else {
        i64::from(v)
    }
}

/// The sized integer type with a decimal range of at least `r`.
fn integer(r: c_int) -> MpiResult<Handle> {
    Ok(match want(r) {
        i64::MIN..=2 => 0x2c1, // MPI_INTEGER1
        3..=4 => 0x2c9,        // MPI_INTEGER2
        5..=9 => 0x2d1,        // MPI_INTEGER4
        10..=18 => 0x2d9,      // MPI_INTEGER8
        19..=38 => 0x2e1,      // MPI_INTEGER16
        r => {
            return err(
                MPI_ERR_ARG,
                format!("no integer kind has a decimal range of {r}"),
            )
        }
    })
}

/// The sized real (or complex) type with precision `p` and exponent range `r`.
fn real(p: c_int, r: c_int, complex: bool) -> MpiResult<Handle> {
    let (p, r) = (want(p), want(r));
    let kinds: [(i64, i64, Handle, Handle); 3] = [
        (6, 37, 0x2d2, 0x2db),    // MPI_REAL4, MPI_COMPLEX8
        (15, 307, 0x2da, 0x2e3),  // MPI_REAL8, MPI_COMPLEX16
        (33, 4931, 0x2e2, 0x2eb), // MPI_REAL16, MPI_COMPLEX32
    ];
    match kinds.iter().find(|k| p <= k.0 && r <= k.1) {
        Some(k) => Ok(if complex { k.3 } else { k.2 }),
        None => err(
            MPI_ERR_ARG,
            format!("no real kind has precision {p} and range {r}"),
        ),
    }
}

fn make(
    name: &str,
    base: MpiResult<Handle>,
    combiner: c_int,
    ints: Vec<i64>,
    newtype: *mut Handle,
) -> c_int {
    let rc = call(name, MPI_COMM_SELF, || {
        let old = derived::resolve(base?, false)?;
        let h = derived::build(
            &[Part {
                disp: 0,
                count: 1,
                ty: old,
            }],
            false,
        )?;
        derived::commit(h)?;
        // SAFETY: the caller's output argument.
        unsafe { out(newtype, h, "newtype") }
    });
    record(rc, newtype, || Ok((combiner, ints, vec![], vec![])))
}

unsafe fn type_create_f90_integer(r: c_int, newtype: *mut Handle) -> c_int {
    make(
        "MPI_Type_create_f90_integer",
        integer(r),
        MPI_COMBINER_F90_INTEGER,
        vec![r.into()],
        newtype,
    )
}

unsafe fn type_create_f90_real(p: c_int, r: c_int, newtype: *mut Handle) -> c_int {
    let ints = vec![p.into(), r.into()];
    make(
        "MPI_Type_create_f90_real",
        real(p, r, false),
        MPI_COMBINER_F90_REAL,
        ints,
        newtype,
    )
}

unsafe fn type_create_f90_complex(p: c_int, r: c_int, newtype: *mut Handle) -> c_int {
    let ints = vec![p.into(), r.into()];
    make(
        "MPI_Type_create_f90_complex",
        real(p, r, true),
        MPI_COMBINER_F90_COMPLEX,
        ints,
        newtype,
    )
}

export!(MPI_Type_create_f90_integer, PMPI_Type_create_f90_integer, type_create_f90_integer,
    (r: c_int, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_f90_real, PMPI_Type_create_f90_real, type_create_f90_real,
    (p: c_int, r: c_int, newtype: *mut Handle) -> c_int);
export!(MPI_Type_create_f90_complex, PMPI_Type_create_f90_complex, type_create_f90_complex,
    (p: c_int, r: c_int, newtype: *mut Handle) -> c_int);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_the_smallest_that_hold_the_range() {
        let _owner = ibdyn_owner::enter();
        assert_eq!(integer(2).unwrap(), 0x2c1);
        assert_eq!(integer(4).unwrap(), 0x2c9);
        assert_eq!(integer(9).unwrap(), 0x2d1);
        assert_eq!(integer(MPI_UNDEFINED).unwrap(), 0x2c1);
        assert!(integer(40).is_err());
        assert_eq!(real(6, 30, false).unwrap(), 0x2d2);
        assert_eq!(real(15, 300, true).unwrap(), 0x2e3);
        assert!(real(40, 10, false).is_err());
    }
}
